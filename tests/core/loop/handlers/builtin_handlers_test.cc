// BindBuiltinToolHandlers wires every built-in tool in one call, and the real handlers carry an
// agentic loop end to end: a scripted model searches the fleet, reads logs and reports a
// finding, and what it was shown is real, bounded and redacted.
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "handlers_test_support.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/testing/in_memory_session_store.h"
#include "pulse/testing/inline_task_runner.h"
#include "pulse/testing/recording_event_sink.h"
#include "pulse/testing/scripted_llm_provider.h"

namespace pulse::testing::handlers {
namespace {

TEST_CASE("BindBuiltinToolHandlers binds every built-in tool of the registry",
          "[core][handlers][bind]") {
  Fixture f;  // binds in its constructor
  for (std::string_view name : core::kBuiltinToolNames) {
    INFO(name);
    CHECK(f.executor.IsBound(name));
  }
  // Everything the interactive profile may call is offered: nothing is left unbound.
  CHECK(f.executor.Project(PolicyFor(core::kToolPulseQuery)).size() ==
        core::ProjectTools(PolicyFor(core::kToolPulseQuery), f.registry).size());
}

TEST_CASE("BindBuiltinToolHandlers refuses to bind over an existing handler",
          "[core][handlers][bind]") {
  Fixture f;
  const absl::Status again = core::BindBuiltinToolHandlers(f.executor, f.Ports());
  CHECK(absl::IsAlreadyExists(again));
}

TEST_CASE("BindBuiltinToolHandlers binds only the built-ins a registry holds",
          "[core][handlers][bind]") {
  Fixture f;
  core::ToolRegistry partial;
  REQUIRE(partial.RegisterBuiltin(*core::FindBuiltinTool(core::kToolPulseRead)).ok());
  REQUIRE(partial.RegisterBuiltin(*core::FindBuiltinTool(core::kToolPatrolGetFindings)).ok());
  core::ToolExecutor executor(partial);
  REQUIRE(core::BindBuiltinToolHandlers(executor, f.Ports()).ok());
  CHECK(executor.IsBound(core::kToolPulseRead));
  CHECK(executor.IsBound(core::kToolPatrolGetFindings));
  CHECK_FALSE(executor.IsBound(core::kToolPulseQuery));
}

std::optional<core::Message> ResultFor(const core::LlmRequest& request, std::string_view call_id) {
  for (const core::Message& m : request.messages) {
    if (m.role == core::MessageRole::kTool && m.tool_call_id == call_id) {
      return m;
    }
  }
  return std::nullopt;
}

TEST_CASE("a scripted patrol queries the fleet, reads logs and reports a finding end to end",
          "[core][handlers][loop]") {
  Fixture f;
  ScriptedLlmProvider provider;
  provider.Add(ScriptedTurn::Calls(
      {Call("c1", "pulse_query", R"({"action":"search","query":"web"})")}, "Looking for web-01."));
  provider.Add(ScriptedTurn::Calls(
      {Call("c2", "pulse_read", R"({"action":"logs","resource_id":"vm:101","lines":20})"),
       Call("c3", "pulse_read", R"({"action":"exec","resource_id":"vm:101","command":"df -h"})")}));
  provider.Add(ScriptedTurn::Calls(
      {Call("c4", "patrol_report_finding",
            R"({"resource_id":"vm:101","category":"capacity","severity":"critical",)"
            R"("title":"Root filesystem full on web-01","key":"disk-full",)"
            R"("description":"/ is 96% full and the app fails to write.",)"
            R"("evidence":"df -h: /dev/sda1 96%; logs: No space left on device",)"
            R"("recommendation":"Free space on / or grow the disk."})")}));
  provider.Add(ScriptedTurn::Text("web-01 is out of disk space; reported as a critical finding."));

  InMemorySessionStore sessions;
  InlineTaskRunner runner;
  RecordingEventSink events;
  core::AgenticLoop loop(provider, f.registry, f.executor, runner, f.clock, sessions, f.actions,
                         f.ids);
  core::RunRequest request{.session_id = "ses_patrol",
                           .user_message = "Patrol the fleet.",
                           .policy = PolicyFor(core::kToolPatrolReportFinding),
                           .cancelled = nullptr};
  absl::StatusOr<core::RunOutcome> outcome = loop.Run(request, events);
  REQUIRE(outcome.ok());
  CHECK(outcome->end == core::RunEnd::kAnswered);
  CHECK(outcome->final_text == "web-01 is out of disk space; reported as a critical finding.");
  REQUIRE(provider.RequestCount() == 4);

  // What the model saw came from the fleet, through the real handlers.
  std::optional<core::Message> search = ResultFor(provider.Request(1), "c1");
  REQUIRE(search.has_value());
  CHECK_FALSE(search->is_error);
  CHECK(Contains(search->content, R"("id":"vm:101")"));
  std::optional<core::Message> logs = ResultFor(provider.Request(2), "c2");
  REQUIRE(logs.has_value());
  CHECK(Contains(logs->content, "No space left on device"));
  CHECK_FALSE(Contains(logs->content, kSecret));
  std::optional<core::Message> df = ResultFor(provider.Request(2), "c3");
  REQUIRE(df.has_value());
  CHECK(Contains(df->content, "96%"));
  std::optional<core::Message> report = ResultFor(provider.Request(3), "c4");
  REQUIRE(report.has_value());
  CHECK_FALSE(report->is_error);
  // The loop may frame a result for the provider (outbound context policy): read its JSON.
  rapidjson::Document reported = ParseText(report->content.substr(report->content.find('{')));
  CHECK(Str(reported, "disposition") == "created");

  // The finding is in the store, keyed and named from the fleet.
  absl::StatusOr<core::StoredFinding> stored = f.finding_store.Get(Str(reported, "finding_id"));
  REQUIRE(stored.ok());
  CHECK(stored->finding.resource_id == "vm:101");
  CHECK(stored->finding.resource_name == "web-01");
  CHECK(stored->finding.severity == core::Severity::kCritical);
  CHECK(stored->finding.key == "disk-full");
  CHECK(f.fleet.exec_calls() == std::vector<std::string>{"vm:101#df -h"});
  CHECK(f.fleet.dispatch_calls() == 0);
}

}  // namespace
}  // namespace pulse::testing::handlers
