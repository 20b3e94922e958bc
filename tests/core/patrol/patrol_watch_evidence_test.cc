// What the Watch pass starts from and how it ends (PAT-2/3, C-LOOP-7, MAN-13), and Patrol
// respecting operator intent (C-FND-9..12, C-FND-20): PatrolService over the fakes with a
// scripted model.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "patrol_test_support.h"
#include "pulse/core/json/json_time.h"

namespace pulse::testing::patrol {
namespace {

using core::AutonomyLevel;
using core::Category;
using core::PatrolRunStatus;

const std::string kWorkerExited =
    Fixture::Id("app-container:worker", Category::kReliability, "container-exited");
const std::string kBackupFailed =
    Fixture::Id("backup-job:nightly", Category::kBackup, "backup-failed");

// The user message of the provider's first request: the Watch pass's seed.
std::string Seed(const ScriptedLlmProvider& provider) {
  const core::LlmRequest request = provider.Request(0);
  for (const core::Message& m : request.messages) {
    if (m.role == core::MessageRole::kUser) {
      return m.content;
    }
  }
  FAIL("the first request has no user message");
  return {};
}

std::vector<std::string> Offered(const core::LlmRequest& request) {
  std::vector<std::string> names;
  for (const core::ToolDefinition& t : request.tools) {
    names.push_back(t.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void Quiet(Fixture& f, const std::string& id, bool offline, std::optional<absl::Duration> window) {
  core::OperatorState s;
  s.resource_id = id;
  s.intentionally_offline = offline;
  s.monitoring_mode =
      offline ? core::MonitoringMode::kExpectedOffline : core::MonitoringMode::kNormal;
  if (window.has_value()) {
    s.maintenance_start_at = f.clock.Now() - absl::Minutes(1);
    s.maintenance_end_at = f.clock.Now() + *window;
  }
  s.set_at = f.clock.Now();
  s.set_by = "tok_operator";
  REQUIRE(f.operator_state.Set(s).ok());
}

TEST_CASE(
    "the Watch seed holds each resource's metrics against the thresholds, its changes and "
    "its findings with their lifecycle",
    "[core][patrol][watch]") {
  Fixture f(/*with_model=*/true);
  f.provider.Add(ScriptedTurn::Text("First look."));
  f.Run();
  f.SetFacts("vm:101", "running", {{"cpu_pct", "10.0"}, {"memory_pct", "96.5"}});
  f.SetFacts("service:pve1/nginx", "failed", {{"sub_state", "failed"}});
  f.provider.Add(ScriptedTurn::Text("Second look."));
  f.Run();
  REQUIRE(f.provider.RequestCount() == 2);
  const core::LlmRequest second = f.provider.Request(1);
  std::string seed;
  for (const core::Message& m : second.messages) {
    if (m.role == core::MessageRole::kUser) {
      seed = m.content;
    }
  }
  INFO(seed);
  // Every resource in scope, not only the flagged ones (PAT-2).
  for (const char* id : {"node:pve1", "vm:101", "app-container:worker", "service:pve1/nginx",
                         "storage:pve1/local-zfs", "backup-job:nightly"}) {
    CHECK(Contains(seed, std::string("- ") + id + " "));
  }
  CHECK(Contains(seed, "memory_pct 96.5 (warning >= 90, critical >= 98: WARNING)"));
  CHECK(Contains(seed, "cpu_pct 10.0 (warning >= 90, critical >= 98)"));
  CHECK(Contains(seed, "usage_pct 88.0 (warning >= 85, critical >= 95: WARNING)"));
  CHECK(Contains(seed, "exit_code=1"));
  // The state change since the previous run.
  CHECK(Contains(seed, "failed (was active at the previous run)"));
  // Existing findings with their lifecycle.
  CHECK(Contains(seed, "finding " + kWorkerExited + " [container-exited] warning reliability"));
  CHECK(Contains(seed, "lifecycle: detected "));
  CHECK_FALSE(Contains(seed, "not shown here"));
}

TEST_CASE("the Watch seed is capped and says so", "[core][patrol][watch]") {
  Fixture f(/*with_model=*/true);
  for (int i = 0; i < 60; ++i) {
    const std::string id = "vm:" + std::to_string(200 + i);
    f.fleet.PutResource(Res(id, "vm", "guest-" + std::to_string(i), "running", "node:pve1"));
    f.SetFacts(id, "running", {{"cpu_pct", "5.0"}, {"memory_pct", "30.0"}});
  }
  f.provider.Add(ScriptedTurn::Text("Looked."));
  f.Run();
  const std::string seed = Seed(f.provider);
  INFO(seed);
  CHECK(seed.size() < 14 * 1024);
  CHECK(Contains(seed, "66 resource(s) in scope"));
  CHECK(Contains(seed, "more resource(s) not shown here (the summary is capped at 40 resources"));
  // The resources with something to say come first.
  CHECK(Contains(seed, "- app-container:worker "));
  CHECK(Contains(seed, "- backup-job:nightly "));
}

TEST_CASE("the Watch seed shows a resource's first five active findings and counts the rest",
          "[core][patrol][watch]") {
  Fixture f(/*with_model=*/true);
  for (int i = 1; i <= 8; ++i) {
    core::Finding x;
    x.id = "vm101-f" + std::to_string(i);
    x.key = "operator-k" + std::to_string(i);
    x.category = Category::kReliability;
    x.severity = core::Severity::kWarning;
    x.resource_id = "vm:101";
    x.title = "stored finding " + std::to_string(i);
    x.detected_at = f.clock.Now() - absl::Hours(1);
    x.last_seen_at = x.detected_at;
    x.times_raised = 1;
    if (i == 8) {
      x.resolved_at = f.clock.Now();  // not active: neither shown nor counted
    }
    REQUIRE(f.finding_store.Put(x, 0).ok());
  }
  f.provider.Add(ScriptedTurn::Text("Looked."));
  f.Run();
  const std::string seed = Seed(f.provider);
  INFO(seed);
  for (int i = 1; i <= 5; ++i) {
    CHECK(Contains(seed, "finding vm101-f" + std::to_string(i) + " [operator-k"));
  }
  CHECK_FALSE(Contains(seed, "finding vm101-f6 "));
  CHECK_FALSE(Contains(seed, "finding vm101-f8 "));
  CHECK(Contains(seed, "    ... 2 more finding(s): read them with patrol_get_findings"));
}

TEST_CASE("a Watch model that reads on every turn but the last records its verdicts on the last",
          "[core][patrol][watch]") {
  Fixture f(/*with_model=*/true);
  const std::string present =
      R"({"finding_id":")" + kBackupFailed + R"(","verdict":"present","evidence":"still failed"})";
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "patrol_get_findings", R"({"resource_id":"backup-job:nightly"})")}));
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c2", "pulse_query", R"({"action":"get","resource_id":"backup-job:nightly"})")}));
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c3", "pulse_query", R"({"action":"get","resource_id":"node:pve1"})")}));
  f.provider.Add(ScriptedTurn::Calls({Call("c4", "patrol_assess_finding", present)}));
  f.provider.Add(ScriptedTurn::Text("The nightly backup still fails."));
  core::PatrolRunRecord r = f.Run();
  CHECK(r.status == PatrolRunStatus::kIssuesFound);
  CHECK(r.error_count == 0);
  CHECK(r.error_summary.find("missing verdicts") == std::string::npos);
  REQUIRE(r.assessments.size() == 1);
  CHECK(r.assessments[0].verdict == "present");
  REQUIRE(f.provider.RequestCount() == 5);
  // Turns 1-3 offer the reads; the last offers exactly the report and assess tools.
  CHECK(Offered(f.provider.Request(2)).size() > 2);
  const core::LlmRequest last = f.provider.Request(3);
  CHECK(Offered(last) ==
        std::vector<std::string>{"patrol_assess_finding", "patrol_report_finding"});
  // Its instruction renders the required arguments from the registered schemas (MAN-13).
  REQUIRE(!last.messages.empty());
  const std::string& instruction = last.messages.back().content;
  CHECK(Contains(instruction, "This is the final turn"));
  CHECK(Contains(instruction, "patrol_assess_finding (requires finding_id, verdict, evidence)"));
  CHECK(Contains(instruction, "patrol_report_finding (requires "));
  // After a write on the last turn, the summary call offers no tools.
  CHECK(f.provider.Request(4).tools.empty());
  CHECK(r.ai_analysis == "The nightly backup still fails.");
}

TEST_CASE(
    "a finding on an intentionally offline resource is dismissed by intent and never "
    "investigated, and wakes with its history when the intent lifts",
    "[core][patrol][operator_state]") {
  Fixture f(/*with_model=*/true);
  f.SetAutonomy(AutonomyLevel::kApproval);
  Quiet(f, "app-container:worker", true, std::nullopt);
  f.provider.Add(ScriptedTurn::Text("Quiet."));
  core::PatrolRunRecord quiet = f.Run(core::PatrolScope{{"app-container:worker"}, {}});
  CHECK(quiet.status == PatrolRunStatus::kHealthy);
  CHECK(quiet.remediations.empty());
  CHECK(quiet.new_finding_ids.empty());
  CHECK(f.provider.RequestCount() == 1);  // the Watch pass only: no investigation
  core::Finding dismissed = *f.findings.Get(kWorkerExited);
  CHECK(dismissed.dismissed_reason == core::DismissReason::kExpectedBehavior);
  CHECK(core::OperatorStateDismissCause(dismissed) == "intentionally_offline");
  CHECK(Contains(Seed(f.provider), "operator: intentionally offline"));

  REQUIRE(f.operator_state.Clear("app-container:worker").ok());
  f.provider.Add(ScriptedTurn::Text("The worker is back in scope."));
  f.provider.Add(ScriptedTurn::Text("The worker exited with code 1; a human should look."));
  core::PatrolRunRecord woke = f.Run(core::PatrolScope{{"app-container:worker"}, {}});
  CHECK(woke.new_finding_ids == std::vector<std::string>{kWorkerExited});
  REQUIRE(woke.remediations.size() == 1);
  CHECK(woke.remediations[0].outcome == "no_proposal");
  REQUIRE(f.provider.RequestCount() == 3);
  // The investigation starts from the operator context and the finding's memory (C-FND-20).
  const core::LlmRequest investigation = f.provider.Request(2);
  std::string ask;
  for (const core::Message& m : investigation.messages) {
    if (m.role == core::MessageRole::kUser) {
      ask = m.content;
    }
  }
  CHECK(Contains(ask,
                 "Operator context: intentionally offline no; never auto-remediate no; "
                 "maintenance window none."));
  CHECK(Contains(ask, "Operational memory: raised 2 time(s), regressed 0 time(s)."));
  std::vector<core::LifecycleEventType> types;
  const core::Finding awake = *f.findings.Get(kWorkerExited);
  for (const core::LifecycleEvent& e : awake.lifecycle) {
    types.push_back(e.type);
  }
  CHECK(types == std::vector<core::LifecycleEventType>{
                     core::LifecycleEventType::kDetected, core::LifecycleEventType::kDismissed,
                     core::LifecycleEventType::kSuppressionLifted,
                     core::LifecycleEventType::kInvestigationRecordUpdated});
}

TEST_CASE("a maintenance window dismisses a known finding and the first run after its end wakes it",
          "[core][patrol][operator_state]") {
  Fixture f;
  f.Run();
  REQUIRE(f.findings.Get(kWorkerExited)->dismissed_reason == std::nullopt);
  Quiet(f, "app-container:worker", false, absl::Minutes(30));
  core::PatrolRunRecord during = f.Run();
  CHECK_FALSE(std::count(during.finding_ids.begin(), during.finding_ids.end(), kWorkerExited));
  core::Finding held = *f.findings.Get(kWorkerExited);
  CHECK(core::OperatorStateDismissCause(held) == "maintenance_window");
  CHECK(held.lifecycle.back().metadata.at(core::kMetaMaintenanceEndAt) ==
        core::FormatRfc3339(f.clock.Now() + absl::Minutes(30)));
  f.clock.Advance(absl::Minutes(31));
  core::PatrolRunRecord after = f.Run();
  CHECK(std::count(after.new_finding_ids.begin(), after.new_finding_ids.end(), kWorkerExited));
  CHECK(f.findings.Get(kWorkerExited)->lifecycle.back().type ==
        core::LifecycleEventType::kSuppressionLifted);
}

}  // namespace
}  // namespace pulse::testing::patrol
