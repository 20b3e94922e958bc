// The built-in catalog (builtins/builtin_catalog.h): one row per built-in with its spec, schema,
// traits and handler factory; the traits the loop reads instead of tool names; the typed
// ToolResult the handlers answer with; and the unknown-tool refusal, unchanged.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <string_view>

#include "handlers_test_support.h"
#include "pulse/core/fsm/session_fsm.h"
#include "pulse/core/tools/invocation_descriptor.h"
#include "pulse/core/tools/tool_kind.h"
#include "pulse/core/tools/tool_traits.h"

namespace pulse::testing::handlers {
namespace {

// The effects on the session FSM that calls of `spec` can have, over every class its
// descriptor yields.
std::set<core::FsmEffect> EffectsOf(const core::ToolSpec& spec) {
  std::set<core::FsmEffect> effects;
  if (spec.descriptor.static_class.has_value()) {
    effects.insert(core::EffectOf(*spec.descriptor.static_class));
  }
  for (const auto& [value, invocation] : spec.descriptor.cases) {
    effects.insert(core::EffectOf(invocation));
  }
  return effects;
}

bool Only(const std::set<core::FsmEffect>& effects, core::FsmEffect effect) {
  return effects == std::set<core::FsmEffect>{effect};
}

TEST_CASE("every built-in has one catalog row with its spec, a schema and a handler factory",
          "[core][builtins][catalog]") {
  Fixture f;
  const std::vector<core::BuiltinTool>& rows = core::BuiltinCatalog();
  REQUIRE(rows.size() == core::kBuiltinToolNames.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const core::BuiltinTool& row = rows[i];
    INFO(row.name);
    CHECK(row.name == core::kBuiltinToolNames[i]);  // catalog order
    REQUIRE(row.spec != nullptr);
    CHECK(row.spec->name == row.name);
    CHECK(*row.spec == *core::FindBuiltinTool(row.name));
    CHECK_FALSE(row.spec->input_schema_json.empty());
    CHECK(ParseText(row.spec->input_schema_json).IsObject());
    REQUIRE(row.make_handler != nullptr);
    CHECK(row.make_handler(f.Ports()) != nullptr);
    CHECK(core::FindBuiltin(row.name) == &row);
  }
}

TEST_CASE("a name that is not a built-in has no row and no handler", "[core][builtins][catalog]") {
  Fixture f;
  for (std::string_view name : {"", "pulse_run_command", "PULSE_QUERY", "pulse_query ", "svc_ops",
                                "pulse_query\n", "patrol_\xff"}) {
    INFO(name);
    CHECK(core::FindBuiltin(name) == nullptr);
    CHECK(core::MakeBuiltinToolHandler(name, f.Ports()) == nullptr);
  }
}

TEST_CASE("the traits of the built-ins agree with their effect on the session FSM",
          "[core][builtins][traits]") {
  for (const core::BuiltinTool& row : core::BuiltinCatalog()) {
    INFO(row.name);
    const core::ToolTraits& traits = row.spec->traits;
    const std::set<core::FsmEffect> effects = EffectsOf(*row.spec);
    REQUIRE_FALSE(effects.empty());
    const bool may_write = effects.count(core::FsmEffect::kWrite) > 0;
    // Only an infrastructure write dispatches, and only it may ask for an approval or report
    // its own verification; nothing else moves the FSM to VERIFYING.
    CHECK(traits.dispatches_mutation == may_write);
    if (traits.requests_approval || traits.verifies) {
      CHECK(traits.dispatches_mutation);
    }
    // The finding lifecycle writes change Pulse state, never infrastructure: no FSM effect.
    if (traits.findings == core::FindingRole::kLifecycleWrite) {
      CHECK(Only(effects, core::FsmEffect::kNone));
    }
    if (traits.findings == core::FindingRole::kReadsFindings) {
      CHECK(Only(effects, core::FsmEffect::kRead));
    }
    // A question is user input: it neither reads nor writes, and it runs alone.
    if (traits.asks_question) {
      CHECK(Only(effects, core::FsmEffect::kNone));
      CHECK(row.spec->runs_alone);
    }
    // A proposal reads like evidence but concludes the run; it never writes.
    if (traits.proposes_action) {
      CHECK_FALSE(may_write);
      CHECK(row.spec->investigation_only);
    }
  }
  CHECK(core::FindBuiltinTool(core::kToolPulseControl)->traits.requests_approval);
  CHECK(core::FindBuiltinTool(core::kToolPulseQuestion)->traits.asks_question);
  CHECK(core::FindBuiltinTool(core::kToolPatrolProposeAction)->traits.proposes_action);
}

TEST_CASE("the registry serves the catalog traits and keeps extensions and overrides out",
          "[core][builtins][traits]") {
  core::ToolRegistry registry = Builtins();
  for (const core::BuiltinTool& row : core::BuiltinCatalog()) {
    CHECK(registry.Traits(row.name) == row.spec->traits);
  }
  CHECK(registry.Traits("no_such_tool") == core::ToolTraits{});
  CHECK(registry.Traits("") == core::ToolTraits{});

  core::ToolSpec extension;
  extension.name = "svc_ops";
  extension.description = "Operate a service.";
  extension.input_schema_json = R"({"type":"object","properties":{},"additionalProperties":false})";
  extension.descriptor = core::StaticDescriptor(
      core::InvocationClass{core::ToolKind::kRead, core::MutationTarget::kNone});
  core::ToolSpec claiming = extension;
  claiming.traits.asks_question = true;
  CHECK(absl::IsInvalidArgument(registry.RegisterExtension(claiming)));
  CHECK_FALSE(registry.Contains("svc_ops"));
  REQUIRE(registry.RegisterExtension(extension).ok());
  CHECK(registry.Traits("svc_ops") == core::ToolTraits{});

  core::ToolRegistry fresh;
  core::ToolSpec question = *core::FindBuiltinTool(core::kToolPulseQuestion);
  question.traits.asks_question = false;
  CHECK(absl::IsInvalidArgument(fresh.RegisterBuiltin(question)));
  core::ToolSpec control = *core::FindBuiltinTool(core::kToolPulseControl);
  control.traits.verifies = true;
  CHECK(absl::IsInvalidArgument(fresh.RegisterBuiltin(control)));
  CHECK(fresh.Size() == 0);
}

TEST_CASE("pulse_control answers a typed result whose text says the same to the model",
          "[core][builtins][typed]") {
  Fixture f;
  const core::ToolCallOutcome planned =
      f.Call(core::kToolPulseControl,
             R"({"type":"resource","resource_id":"vm:101","capability":"restart",)"
             R"("params":{},"reason":"web-01 is hung"})");
  INFO(planned.result.content);
  REQUIRE(planned.result.Ok());
  const core::ToolResult& typed = planned.result;
  // Below autonomous nothing runs: the plan awaits a decision.
  REQUIRE(typed.dispatched.has_value());
  CHECK_FALSE(*typed.dispatched);
  REQUIRE(typed.approval.has_value());
  CHECK_FALSE(typed.action_id.empty());
  CHECK(typed.approval->action_id == typed.action_id);
  CHECK_FALSE(typed.approval->plan_hash.empty());
  CHECK_FALSE(typed.verified.has_value());
  CHECK_FALSE(typed.question.has_value());
  const rapidjson::Document text = ParseText(typed.content);
  CHECK(core::GetBool(text, "dispatched") == std::optional<bool>(false));
  const rapidjson::Value* approval = core::GetMember(text, "approval_needed");
  REQUIRE(approval != nullptr);
  CHECK(core::GetString(*approval, "action_id") == typed.approval->action_id);
  CHECK(core::GetString(*approval, "plan_hash") == typed.approval->plan_hash);
}

TEST_CASE("a read answers untyped and a refused call carries no typed field",
          "[core][builtins][typed]") {
  Fixture f;
  const core::ToolCallOutcome read =
      f.Call(core::kToolPulseRead, R"({"action":"status","resource_id":"vm:101"})");
  REQUIRE(read.result.Ok());
  CHECK_FALSE(read.result.dispatched.has_value());
  CHECK_FALSE(read.result.approval.has_value());
  CHECK(read.result.action_id.empty());
  const core::ToolCallOutcome refused =
      f.Call(core::kToolPulseControl,
             R"({"type":"resource","resource_id":"vm:999","capability":"restart","reason":"x"})");
  REQUIRE_FALSE(refused.result.Ok());
  CHECK_FALSE(refused.result.dispatched.has_value());
  CHECK_FALSE(refused.result.approval.has_value());
}

TEST_CASE("pulse_question answers its question as a typed field", "[core][builtins][typed]") {
  Fixture f;
  const core::ToolCallOutcome asked =
      f.Call(core::kToolPulseQuestion, R"({"question":"  Which VM?  ","options":["web-01"," "]})");
  INFO(asked.result.content);
  REQUIRE(asked.result.Ok());
  REQUIRE(asked.result.question.has_value());
  CHECK(*asked.result.question == asked.result.content);
  CHECK(*asked.result.question == R"({"question":"Which VM?","options":["web-01"]})");
  CHECK_FALSE(asked.result.dispatched.has_value());
}

TEST_CASE("an unknown tool is still refused NOT_FOUND before any handler",
          "[core][builtins][catalog]") {
  Fixture f;
  const rapidjson::Value no_args(rapidjson::kObjectType);
  for (std::string_view name : {"no_such_tool", "pulse_querry", "PULSE_QUERY"}) {
    INFO(name);
    const core::ToolCallOutcome outcome =
        f.executor.Execute(PolicyFor(core::kToolPulseQuery), name, no_args);
    CHECK_FALSE(outcome.dispatched);
    REQUIRE(outcome.result.error.has_value());
    CHECK(outcome.result.error->code == core::ToolErrorCode::kNotFound);
    CHECK(outcome.rule == core::PolicyRule::kUnknownTool);
    CHECK_FALSE(outcome.result.dispatched.has_value());
  }
}

}  // namespace
}  // namespace pulse::testing::handlers
