// LoopAssembly (loop/loop_assembly.h) is the one wiring of registry + executor + handlers + loop
// for chat, Patrol's Watch and Patrol's investigation. These tests pin what each flavour was
// before the three copies became one: the tools bound (the old lists, written out), what the
// executor advertises under the flavour's authority (compared with an executor bound the old
// way), the fixed Patrol authority, the decorator, the requester, and hostile options.
#include "pulse/core/loop/loop_assembly.h"

#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "handlers/handlers_test_support.h"
#include "pulse/testing/in_memory_session_store.h"
#include "pulse/testing/inline_task_runner.h"
#include "pulse/testing/recording_event_sink.h"
#include "pulse/testing/scripted_llm_provider.h"

namespace pulse::testing::handlers {
namespace {

using core::LoopFlavour;

// What the three wiring sites bound before LoopAssembly: server_app.cc every built-in,
// patrol_tools.cc's BindWatchTools and BindInvestigationTools these.
const std::vector<std::string> kOldChatTools = {"pulse_query",
                                                "pulse_read",
                                                "pulse_metrics",
                                                "pulse_control",
                                                "pulse_question",
                                                "patrol_get_findings",
                                                "patrol_report_finding",
                                                "patrol_assess_finding",
                                                "patrol_resolve_finding",
                                                "patrol_action_capabilities",
                                                "patrol_propose_action"};
const std::vector<std::string> kOldWatchTools = {"pulse_query",           "pulse_read",
                                                 "pulse_metrics",         "patrol_get_findings",
                                                 "patrol_report_finding", "patrol_assess_finding",
                                                 "patrol_resolve_finding"};
const std::vector<std::string> kOldInvestigationTools = {
    "pulse_query", "pulse_read", "pulse_metrics", "patrol_action_capabilities",
    "patrol_propose_action"};

constexpr LoopFlavour kFlavours[] = {LoopFlavour::kChat, LoopFlavour::kPatrolWatch,
                                     LoopFlavour::kPatrolInvestigation};

const std::vector<std::string>& OldTools(LoopFlavour flavour) {
  switch (flavour) {
    case LoopFlavour::kChat:
      return kOldChatTools;
    case LoopFlavour::kPatrolWatch:
      return kOldWatchTools;
    case LoopFlavour::kPatrolInvestigation:
      break;
  }
  return kOldInvestigationTools;
}

// The handler fixture's ports plus what the loop borrows.
struct AssemblyFixture : Fixture {
  core::LoopPorts Ports() {
    return core::LoopPorts{provider, runner, clock,    sessions, actions,
                           ids,      fleet,  findings, &history};
  }
  std::unique_ptr<core::LoopAssembly> Assemble(core::LoopAssemblyOptions options) {
    absl::StatusOr<std::unique_ptr<core::LoopAssembly>> assembled =
        core::LoopAssembly::Assemble(Ports(), std::move(options));
    INFO(assembled.status().ToString());
    REQUIRE(assembled.ok());
    return *std::move(assembled);
  }
  std::unique_ptr<core::LoopAssembly> Assemble(LoopFlavour flavour) {
    core::LoopAssemblyOptions options;
    options.flavour = flavour;
    return Assemble(std::move(options));
  }

  ScriptedLlmProvider provider;
  InlineTaskRunner runner;
  InMemorySessionStore sessions;
};

std::vector<std::string> BoundBuiltins(const core::ToolExecutor& executor) {
  std::vector<std::string> bound;
  for (std::string_view name : core::kBuiltinToolNames) {
    if (executor.IsBound(name)) {
      bound.emplace_back(name);
    }
  }
  return bound;
}

// Name, schema and offered values of every advertised tool: what a provider is shown.
std::vector<std::string> Advertised(const core::ToolExecutor& executor,
                                    const core::InvocationPolicy& policy) {
  std::vector<std::string> out;
  for (const core::ProjectedTool& tool : executor.Project(policy)) {
    std::string row = tool.name + " " + tool.input_schema_json;
    for (const std::string& value : tool.offered_values) {
      row += " " + value;
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<std::string> AdvertisedNames(const core::ToolExecutor& executor,
                                         const core::InvocationPolicy& policy) {
  std::vector<std::string> out;
  for (const core::ProjectedTool& tool : executor.Project(policy)) {
    out.push_back(tool.name);
  }
  return out;
}

// The policies a chat run may carry: each scope family at each level.
std::vector<core::InvocationPolicy> ChatPolicies() {
  std::vector<core::InvocationPolicy> out;
  const core::ScopeSet scope_sets[] = {
      core::ScopeSet::All(), core::ScopeSet::Of({core::Scope::kAiChat}),
      core::ScopeSet::Of({core::Scope::kAiChat, core::Scope::kAiExecute}),
      core::ScopeSet::Of({core::Scope::kMonitoringRead})};
  for (const core::ScopeSet& scopes : scope_sets) {
    for (core::ControlLevel level : {core::ControlLevel::kReadOnly, core::ControlLevel::kControlled,
                                     core::ControlLevel::kAutonomous}) {
      core::PolicyInputs inputs;
      inputs.scopes = scopes;
      inputs.configured_max = level;
      inputs.profile = core::FlavourProfile(LoopFlavour::kChat);
      out.push_back(core::InvocationPolicy::Create(inputs));
    }
  }
  return out;
}

TEST_CASE("each loop flavour binds exactly the built-in tools its old wiring bound",
          "[core][loop][assembly]") {
  for (LoopFlavour flavour : kFlavours) {
    INFO(std::string(core::ToString(flavour)));
    AssemblyFixture f;
    std::unique_ptr<core::LoopAssembly> assembly = f.Assemble(flavour);
    CHECK(assembly->flavour() == flavour);
    CHECK(BoundBuiltins(assembly->executor()) == OldTools(flavour));
    std::vector<std::string> declared(core::FlavourTools(flavour).begin(),
                                      core::FlavourTools(flavour).end());
    CHECK(declared == OldTools(flavour));
    // The registry holds every built-in whatever the flavour: an unbound one is refused as
    // unavailable, not classified as an unknown tool.
    CHECK(assembly->registry().Size() == core::kBuiltinToolNames.size());
  }
}

TEST_CASE("each loop flavour advertises what an executor bound the old way advertises",
          "[core][loop][assembly]") {
  for (LoopFlavour flavour : kFlavours) {
    INFO(std::string(core::ToString(flavour)));
    AssemblyFixture f;
    std::unique_ptr<core::LoopAssembly> assembly = f.Assemble(flavour);
    core::ToolRegistry old_registry = Builtins();
    core::ToolExecutor old_executor(old_registry);
    core::BuiltinToolPorts ports{f.fleet, f.findings, f.actions, f.clock, f.ids};
    for (const std::string& name : OldTools(flavour)) {
      REQUIRE(old_executor.Bind(name, core::MakeBuiltinToolHandler(name, ports)).ok());
    }
    std::vector<core::InvocationPolicy> policies = ChatPolicies();
    if (std::optional<core::InvocationPolicy> fixed = core::FlavourRunPolicy(flavour)) {
      policies = {*fixed};
    }
    for (const core::InvocationPolicy& policy : policies) {
      CHECK(Advertised(assembly->executor(), policy) == Advertised(old_executor, policy));
    }
  }
}

TEST_CASE("the Patrol flavours advertise only reads, their lifecycle tools and one proposal",
          "[core][loop][assembly]") {
  AssemblyFixture f;
  std::unique_ptr<core::LoopAssembly> watch = f.Assemble(LoopFlavour::kPatrolWatch);
  CHECK(AdvertisedNames(watch->executor(), *core::FlavourRunPolicy(LoopFlavour::kPatrolWatch)) ==
        std::vector<std::string>{"pulse_query", "pulse_read", "pulse_metrics",
                                 "patrol_get_findings", "patrol_report_finding",
                                 "patrol_assess_finding"});
  std::unique_ptr<core::LoopAssembly> investigation = f.Assemble(LoopFlavour::kPatrolInvestigation);
  CHECK(AdvertisedNames(investigation->executor(),
                        *core::FlavourRunPolicy(LoopFlavour::kPatrolInvestigation)) ==
        std::vector<std::string>{"pulse_query", "pulse_read", "pulse_metrics",
                                 "patrol_action_capabilities", "patrol_propose_action"});
  // A Patrol flavour never offers the infrastructure write, even under a chat policy with every
  // scope: its handler is not bound.
  const core::InvocationPolicy everything = ChatPolicies().front();
  for (const auto* assembly : {watch.get(), investigation.get()}) {
    for (const std::string& name : AdvertisedNames(assembly->executor(), everything)) {
      CHECK(name != "pulse_control");
      CHECK(name != "pulse_question");
    }
  }
}

TEST_CASE("Patrol flavours run under a fixed read-only authority and chat under its caller's",
          "[core][loop][assembly]") {
  CHECK(core::FlavourProfile(LoopFlavour::kChat) == core::ExecutionProfile::kInteractive);
  CHECK_FALSE(core::FlavourRunPolicy(LoopFlavour::kChat).has_value());
  const std::pair<LoopFlavour, core::ExecutionProfile> patrol[] = {
      {LoopFlavour::kPatrolWatch, core::ExecutionProfile::kPatrolDetection},
      {LoopFlavour::kPatrolInvestigation, core::ExecutionProfile::kPatrolInvestigation}};
  for (const auto& [flavour, profile] : patrol) {
    INFO(std::string(core::ToString(flavour)));
    CHECK(core::FlavourProfile(flavour) == profile);
    std::optional<core::InvocationPolicy> policy = core::FlavourRunPolicy(flavour);
    REQUIRE(policy.has_value());
    CHECK(policy->Profile() == profile);
    CHECK(policy->EffectiveLevel() == core::ControlLevel::kReadOnly);
    CHECK(policy->DeniesInfrastructure());
    CHECK(policy->Scopes() == core::ScopeSet::Of({core::Scope::kMonitoringRead,
                                                  core::Scope::kAiChat, core::Scope::kAiExecute}));
  }
}

TEST_CASE("the decorator wraps every bound handler and calls reach the handler through it",
          "[core][loop][assembly]") {
  AssemblyFixture f;
  std::vector<std::string> decorated;
  auto calls = std::make_shared<std::vector<std::string>>();
  core::LoopAssemblyOptions options;
  options.flavour = LoopFlavour::kPatrolWatch;
  options.decorate = [&decorated, calls](std::string_view tool,
                                         std::unique_ptr<core::ToolHandler> inner) {
    decorated.emplace_back(tool);
    class Wrapper final : public core::ToolHandler {
     public:
      Wrapper(std::unique_ptr<core::ToolHandler> inner,
              std::shared_ptr<std::vector<std::string>> calls)
          : inner_(std::move(inner)), calls_(std::move(calls)) {}
      core::ToolResult Run(const rapidjson::Value& args,
                           const core::ToolContext& context) override {
        calls_->emplace_back(context.tool_name);
        return inner_->Run(args, context);
      }

     private:
      std::unique_ptr<core::ToolHandler> inner_;
      std::shared_ptr<std::vector<std::string>> calls_;
    };
    return std::unique_ptr<core::ToolHandler>(std::make_unique<Wrapper>(std::move(inner), calls));
  };
  std::unique_ptr<core::LoopAssembly> assembly = f.Assemble(std::move(options));
  CHECK(decorated == kOldWatchTools);

  rapidjson::Document args = ParseText(R"({"action":"get","resource_id":"vm:101"})");
  core::ToolCallOutcome outcome = assembly->executor().Execute(
      *core::FlavourRunPolicy(LoopFlavour::kPatrolWatch), "pulse_query", args);
  REQUIRE(outcome.dispatched);
  CHECK(outcome.result.Ok());
  CHECK(Contains(outcome.result.content, "web-01"));
  CHECK(*calls == std::vector<std::string>{"pulse_query"});
}

TEST_CASE("the handlers request actions as the assembly's requester", "[core][loop][assembly]") {
  AssemblyFixture f;
  core::LoopAssemblyOptions options;
  options.flavour = LoopFlavour::kChat;
  options.requester = actions::Agent("assistant-7");
  std::unique_ptr<core::LoopAssembly> assembly = f.Assemble(std::move(options));
  core::PolicyInputs inputs;
  inputs.scopes = core::ScopeSet::All();
  inputs.configured_max = core::ControlLevel::kControlled;
  inputs.profile = core::FlavourProfile(LoopFlavour::kChat);
  rapidjson::Document args =
      ParseText(R"({"type":"resource","resource_id":"vm:101","capability":"restart",)"
                R"("params":{"mode":"graceful"},"reason":"web-01 is hung"})");
  core::ToolCallOutcome outcome =
      assembly->executor().Execute(core::InvocationPolicy::Create(inputs), "pulse_control", args);
  INFO(outcome.result.content);
  REQUIRE(outcome.dispatched);
  REQUIRE(outcome.result.Ok());
  rapidjson::Document planned = ParseText(outcome.result.content);
  const std::string action_id = Str(Member(planned, "approval_needed"), "action_id");
  absl::StatusOr<core::ActionRecord> record = f.action_store.Get(action_id);
  REQUIRE(record.ok());
  CHECK(record->request.actor == actions::Agent("assistant-7"));
}

TEST_CASE("the assembled loop runs a model turn through the flavour's tools",
          "[core][loop][assembly]") {
  AssemblyFixture f;
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "pulse_query", R"({"action":"get","resource_id":"vm:101"})")}));
  f.provider.Add(ScriptedTurn::Text("web-01 is running."));
  core::LoopAssemblyOptions options;
  options.flavour = LoopFlavour::kPatrolInvestigation;
  options.loop.system_prompt = "investigate";
  std::unique_ptr<core::LoopAssembly> assembly = f.Assemble(std::move(options));
  core::RunRequest request{.session_id = "",
                           .user_message = "look at vm:101",
                           .policy = *core::FlavourRunPolicy(LoopFlavour::kPatrolInvestigation)};
  RecordingEventSink sink;
  absl::StatusOr<core::RunOutcome> outcome = assembly->loop().Run(request, sink);
  REQUIRE(outcome.ok());
  CHECK(outcome->end == core::RunEnd::kAnswered);
  CHECK(outcome->final_text == "web-01 is running.");
  // The provider was offered exactly the investigation's tools.
  std::vector<std::string> offered;
  for (const core::ToolDefinition& tool : f.provider.Request(0).tools) {
    offered.push_back(tool.name);
  }
  CHECK(offered == kOldInvestigationTools);
}

TEST_CASE("a decorator that returns no handler fails the assembly", "[core][loop][assembly]") {
  AssemblyFixture f;
  core::LoopAssemblyOptions options;
  options.flavour = LoopFlavour::kChat;
  options.decorate = [](std::string_view tool, std::unique_ptr<core::ToolHandler> inner) {
    return tool == "pulse_read" ? nullptr : std::move(inner);
  };
  absl::StatusOr<std::unique_ptr<core::LoopAssembly>> assembled =
      core::LoopAssembly::Assemble(f.Ports(), std::move(options));
  REQUIRE_FALSE(assembled.ok());
  CHECK(absl::IsInternal(assembled.status()));
  CHECK(Contains(std::string(assembled.status().message()), "pulse_read"));
}

TEST_CASE("an out-of-range flavour binds nothing and has no run authority",
          "[core][loop][assembly]") {
  const auto bogus = static_cast<LoopFlavour>(97);
  CHECK(core::ToString(bogus) == "unknown");
  CHECK(core::FlavourTools(bogus).empty());
  CHECK(core::FlavourProfile(bogus) == core::ExecutionProfile::kUnknown);
  CHECK_FALSE(core::FlavourRunPolicy(bogus).has_value());
  AssemblyFixture f;
  std::unique_ptr<core::LoopAssembly> assembly = f.Assemble(bogus);
  CHECK(BoundBuiltins(assembly->executor()).empty());
  for (const core::InvocationPolicy& policy : ChatPolicies()) {
    CHECK(assembly->executor().Project(policy).empty());
  }
}

}  // namespace
}  // namespace pulse::testing::handlers
