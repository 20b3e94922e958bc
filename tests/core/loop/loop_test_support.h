// Shared fixtures for the agentic-loop tests: a registry of the built-ins plus one test
// extension (svc_ops: op=status reads, op=restart writes infrastructure), fake handlers that log
// their calls, a harness wiring AgenticLoop to the scripted provider and the in-memory fakes
// (ActionService included, for the approval scenarios), and request/transcript readers.
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../actions/action_test_support.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/builtins/pulse_control_handler.h"
#include "pulse/core/builtins/question_handler.h"
#include "pulse/core/errors/tool_error.h"
#include "pulse/core/json/json.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/policy/invocation_policy.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/tools/tool_names.h"
#include "pulse/core/tools/tool_registry.h"
#include "pulse/testing/counting_task_runner.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_operator_state_store.h"
#include "pulse/testing/in_memory_session_store.h"
#include "pulse/testing/inline_task_runner.h"
#include "pulse/testing/recording_event_sink.h"
#include "pulse/testing/scripted_llm_provider.h"
#include "pulse/testing/sequential_id_source.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::testing::loop {

inline constexpr std::string_view kSvcOps = "svc_ops";

// A discriminator extension: op=status reads, op=restart writes infrastructure.
inline core::ToolSpec SvcOpsSpec() {
  core::ToolSpec spec;
  spec.name = std::string(kSvcOps);
  spec.description = "Operates a service on the test fleet.";
  spec.input_schema_json = R"({
    "type": "object",
    "properties": {
      "op": {"type": "string", "enum": ["status", "restart"]},
      "target": {"type": "string", "minLength": 1, "maxLength": 64}
    },
    "required": ["op", "target"],
    "additionalProperties": false
  })";
  spec.descriptor = core::DiscriminatorDescriptor(
      "op", {{"status", {core::ToolKind::kRead, core::MutationTarget::kNone}},
             {"restart", {core::ToolKind::kWrite, core::MutationTarget::kInfrastructure}}});
  return spec;
}

inline core::ToolRegistry LoopRegistry() {
  absl::StatusOr<core::ToolRegistry> registry = core::ToolRegistry::WithBuiltins();
  REQUIRE(registry.ok());
  REQUIRE(registry->RegisterExtension(SvcOpsSpec()).ok());
  return std::move(registry).value();
}

inline std::string Compact(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Which handler ran, with which arguments, in execution order. Thread-safe.
class CallLog {
 public:
  void Record(std::string tool, std::string args) {
    absl::MutexLock lock(&mu_);
    calls_.emplace_back(std::move(tool), std::move(args));
  }
  int Count(std::string_view tool) const {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (const auto& [name, args] : calls_) {
      n += name == tool ? 1 : 0;
    }
    return n;
  }
  int Total() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(calls_.size());
  }
  std::vector<std::string> Order() const {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& [name, args] : calls_) {
      out.push_back(name);
    }
    return out;
  }
  std::vector<std::pair<std::string, std::string>> Calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::pair<std::string, std::string>> calls_ ABSL_GUARDED_BY(mu_);
};

// Logs the call, then answers with `fn(args)`. Thread-safe if `fn` is.
class FakeHandler final : public core::ToolHandler {
 public:
  using Fn = std::function<core::ToolResult(const rapidjson::Value&)>;
  FakeHandler(std::string name, Fn fn, CallLog& log)
      : name_(std::move(name)), fn_(std::move(fn)), log_(log) {}
  core::ToolResult Run(const rapidjson::Value& args, const core::ToolContext&) override {
    log_.Record(name_, Compact(args));
    return fn_(args);
  }

 private:
  std::string name_;
  Fn fn_;
  CallLog& log_;
};

inline FakeHandler::Fn Returns(std::string content) {
  return [content = std::move(content)](const rapidjson::Value&) {
    return core::ToolResult::Success(content);
  };
}

inline core::InvocationPolicy Policy(
    core::ControlLevel level = core::ControlLevel::kControlled,
    core::ExecutionProfile profile = core::ExecutionProfile::kInteractive,
    core::ScopeSet scopes = core::ScopeSet::All()) {
  core::PolicyInputs inputs;
  inputs.scopes = std::move(scopes);
  inputs.configured_max = level;
  inputs.profile = profile;
  return core::InvocationPolicy::Create(inputs);
}

// ---- the fleet the approval scenarios act on --------------------------------------------

inline core::Capability RestartCapability() {
  core::Capability c;
  c.name = "restart";
  c.description = "Restart the guest";
  c.minimum_approval = core::ApprovalLevel::kAdmin;
  c.risk = core::ActionRisk::kMedium;
  c.params = {{"mode", core::ParamType::kString, false, {"graceful", "force"}, "", false, "how"}};
  return c;
}

inline core::Capability ReloadCapability() {
  core::Capability c;
  c.name = "reload";
  c.description = "Reload the service configuration";
  c.minimum_approval = core::ApprovalLevel::kNone;
  c.auto_authorization = core::AutoAuthorization::kLowRisk;
  c.risk = core::ActionRisk::kLow;
  return c;
}

// The resources are the action tests' fixtures; the capabilities are the loop's own (looser
// params, so scripted calls stay short).
inline void SeedFleet(FakeFleet& fleet) {
  fleet.PutResource(actions::Node(), {});
  fleet.PutResource(actions::Vm101(), {RestartCapability()});
  fleet.PutResource(actions::Nginx(), {ReloadCapability()});
  fleet.AddRelationship({"vm:101", "node:pve1", "runs_on"});
  fleet.AddRelationship({"service:pve1/nginx", "node:pve1", "runs_on"});
}

inline constexpr std::string_view kRestartVmArgs =
    R"({"type":"resource","resource_id":"vm:101","capability":"restart",)"
    R"("params":{"mode":"graceful"},"reason":"web-01 is hung"})";

enum class RunnerKind { kInline, kCounting };

struct Harness {
  explicit Harness(core::LoopOptions options = {}, RunnerKind runner_kind = RunnerKind::kInline)
      : actions(action_store, fleet, operator_state, audit, clock),
        registry(LoopRegistry()),
        executor(registry) {
    SeedFleet(fleet);
    core::TaskRunner& runner = runner_kind == RunnerKind::kInline
                                   ? static_cast<core::TaskRunner&>(inline_runner)
                                   : static_cast<core::TaskRunner&>(counting_runner);
    loop = std::make_unique<core::AgenticLoop>(provider, registry, executor, runner, clock,
                                               sessions, actions, ids, std::move(options));
  }

  // Binds a FakeHandler to `tool`.
  void Bind(std::string_view tool, FakeHandler::Fn fn) {
    REQUIRE(
        executor.Bind(tool, std::make_unique<FakeHandler>(std::string(tool), std::move(fn), log))
            .ok());
  }
  // Fake handlers for the read tools and svc_ops, the real question and pulse_control
  // handlers; tools named in `except` stay unbound so a test can bind its own.
  void BindDefaults(std::set<std::string, std::less<>> except = {}) {
    const std::vector<std::pair<std::string_view, std::string>> fakes = {
        {core::kToolPulseQuery, R"({"resource_id":"vm:101","status":"running"})"},
        {core::kToolPulseRead, R"({"resource_id":"vm:101","state":"running"})"},
        {core::kToolPulseMetrics, R"({"resource_id":"vm:101","cpu":0.4})"},
        {core::kToolPatrolGetFindings, R"({"findings":[]})"},
        {core::kToolPatrolReportFinding, R"({"ok":true})"},
        {core::kToolPatrolAssessFinding, R"({"ok":true})"},
        {core::kToolPatrolResolveFinding, R"({"ok":true})"},
        {core::kToolPatrolActionCapabilities, R"({"capabilities":[]})"},
        {core::kToolPatrolProposeAction, R"({"ok":true})"},
        {kSvcOps, R"({"target":"web","status":"restarted"})"},
    };
    for (const auto& [tool, content] : fakes) {
      if (except.count(tool) == 0) {
        Bind(tool, Returns(content));
      }
    }
    if (except.count(core::kToolPulseQuestion) == 0) {
      REQUIRE(executor.Bind(core::kToolPulseQuestion, std::make_unique<core::QuestionToolHandler>())
                  .ok());
    }
    if (except.count(core::kToolPulseControl) == 0) {
      REQUIRE(executor
                  .Bind(core::kToolPulseControl,
                        std::make_unique<core::PulseControlHandler>(
                            actions, ids, core::ActionActor{core::ActorKind::kAgent, "assistant"}))
                  .ok());
    }
  }

  absl::StatusOr<core::RunOutcome> Run(std::string message,
                                       core::InvocationPolicy policy = Policy(),
                                       std::string session_id = "ses_test") {
    core::RunRequest request{std::move(session_id), std::move(message), std::move(policy)};
    return loop->Run(request, events);
  }

  absl::StatusOr<core::RunOutcome> Resume(std::string session_id = "ses_test",
                                          core::InvocationPolicy policy = Policy(),
                                          core::ActionActor actor = core::ActionActor{
                                              core::ActorKind::kHuman, "alice"}) {
    core::ResumeRequest request{std::move(session_id), std::move(policy), std::move(actor)};
    return loop->Resume(request, events);
  }

  core::SessionRecord Session(std::string_view id = "ses_test") {
    absl::StatusOr<core::SessionRecord> r = sessions.Get(id);
    REQUIRE(r.ok());
    return *r;
  }

  FakeClock clock;
  InMemoryActionStore action_store;
  FakeFleet fleet;
  InMemoryOperatorStateStore operator_state;
  InMemoryAuditLog audit;
  core::ActionService actions;
  InMemorySessionStore sessions;
  SequentialIdSource ids;
  ScriptedLlmProvider provider;
  InlineTaskRunner inline_runner;
  CountingTaskRunner counting_runner;
  RecordingEventSink events;
  CallLog log;
  core::ToolRegistry registry;
  core::ToolExecutor executor;
  std::unique_ptr<core::AgenticLoop> loop;
};

// ---- reading what the provider received --------------------------------------------------

inline std::vector<std::string> ToolNames(const core::LlmRequest& request) {
  std::vector<std::string> names;
  for (const core::ToolDefinition& t : request.tools) {
    names.push_back(t.name);
  }
  return names;
}

// The tool result answering `call_id` in `request`, or nullopt.
inline std::optional<core::Message> ResultFor(const core::LlmRequest& request,
                                              std::string_view call_id) {
  for (const core::Message& m : request.messages) {
    if (m.role == core::MessageRole::kTool && m.tool_call_id == call_id) {
      return m;
    }
  }
  return std::nullopt;
}

// The error code inside the result answering `call_id` ("" when none).
inline std::string CodeFor(const core::LlmRequest& request, std::string_view call_id) {
  std::optional<core::Message> m = ResultFor(request, call_id);
  REQUIRE(m.has_value());
  return core::ExtractToolErrorCode(m->content).value_or("");
}

inline std::vector<core::MessageRole> Roles(const core::LlmRequest& request) {
  std::vector<core::MessageRole> roles;
  for (const core::Message& m : request.messages) {
    roles.push_back(m.role);
  }
  return roles;
}

inline rapidjson::Document Parse(std::string_view text) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(text);
  INFO("parsing " << std::string(text.substr(0, 300)));
  REQUIRE(doc.ok());
  return std::move(doc).value();
}

// The payload of the first event of `type`; the test fails when there is none.
inline rapidjson::Document FirstEvent(const RecordingEventSink& events, core::LoopEventType type) {
  std::vector<rapidjson::Document> all = events.DataOf(type);
  REQUIRE_FALSE(all.empty());
  return std::move(all.front());
}

inline std::string Str(const rapidjson::Value& object, std::string_view key) {
  return std::string(core::GetString(object, key).value_or(""));
}

}  // namespace pulse::testing::loop
