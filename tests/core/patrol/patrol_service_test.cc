// PatrolService over the fakes: deterministic triage, the Watch pass and its ledger, stale
// reconciliation, one run per scope, and the governed auto-fix by autonomy level.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "patrol_test_support.h"

namespace pulse::testing::patrol {
namespace {

using core::AutonomyLevel;
using core::Category;
using core::PatrolRunStatus;

const std::string kWorkerExited =
    Fixture::Id("app-container:worker", Category::kReliability, "container-exited");
const std::string kBackupFailed =
    Fixture::Id("backup-job:nightly", Category::kBackup, "backup-failed");
const std::string kPoolFilling =
    Fixture::Id("storage:pve1/local-zfs", Category::kCapacity, "storage-capacity");

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

const core::PatrolRemediation* RemediationFor(const core::PatrolRunRecord& r,
                                              const std::string& finding_id) {
  for (const core::PatrolRemediation& m : r.remediations) {
    if (m.finding_id == finding_id) {
      return &m;
    }
  }
  return nullptr;
}

ScriptedTurn ProposeStartWorker() {
  return ScriptedTurn::Calls({Call("p1", "patrol_propose_action",
                                   R"({"resource_id":"app-container:worker","capability":"start",)"
                                   R"("rationale":"the worker exited with code 1"})")});
}

// Watch pass (text only), then the three investigations of the fixture's new findings in id
// order: the worker (a start proposal), the backup job and the pool (no proposal).
void ScriptAutoFixRun(ScriptedLlmProvider& provider) {
  provider.Add(ScriptedTurn::Text("Nothing beyond the deterministic findings."));
  provider.Add(ProposeStartWorker());
  provider.Add(ScriptedTurn::Text("Proposed starting the worker."));
  provider.Add(ScriptedTurn::Text("No safe fix for the backup job."));
  provider.Add(ScriptedTurn::Text("No safe fix for the pool."));
}

TEST_CASE("a deterministic-only run finds the staged faults and says why the model did not run",
          "[core][patrol]") {
  Fixture f;
  core::PatrolRunRecord r = f.Run();
  CHECK(r.status == PatrolRunStatus::kIssuesFound);
  CHECK(r.trigger == core::PatrolTrigger::kManual);
  CHECK_FALSE(r.model_pass_ran);
  CHECK(r.model_pass_skipped_reason == "no_provider_configured");
  CHECK(r.resources_checked == 6);
  CHECK(r.new_findings == 3);
  CHECK(Has(r.new_finding_ids, kWorkerExited));
  CHECK(Has(r.new_finding_ids, kBackupFailed));
  CHECK(Has(r.new_finding_ids, kPoolFilling));
  CHECK(r.findings_summary == "3 warnings");
  CHECK(r.autonomy_level == "monitor");
  REQUIRE(r.completed_at.has_value());

  // The pool's finding carries its forecast.
  absl::StatusOr<core::Finding> pool = f.findings.Get(kPoolFilling);
  REQUIRE(pool.ok());
  REQUIRE(pool->capacity_forecast.has_value());
  CHECK(pool->capacity_forecast->reading == core::ForecastReading::kFilling);
  CHECK(pool->source == "patrol-triage");

  // The record is stored and listed newest first.
  absl::StatusOr<core::PatrolRunRecord> stored = f.runs.Get(r.id);
  REQUIRE(stored.ok());
  CHECK(*stored == r);
}

TEST_CASE("a resource of a down source is skipped without an error and the record says why",
          "[core][patrol]") {
  Fixture f;
  core::FleetResource gone;
  gone.id = "app-container:@d1/web";
  gone.type = "app-container";
  gone.name = "web";
  gone.status = "unknown";
  f.fleet.PutResource(gone);
  f.fleet.SetStatusError(gone.id, absl::UnavailableError("connection refused"));
  core::FleetSourceStatus down;
  down.name = "d1";
  down.kind = "docker";
  down.error = "connection refused";
  down.resources = 1;
  f.fleet.SetSourceStatuses({down});
  core::PatrolRunRecord r = f.Run();
  CHECK(r.status == PatrolRunStatus::kIssuesFound);
  CHECK(r.error_count == 0);
  CHECK(r.resources_checked == 6);
  REQUIRE(r.fleet_sources.size() == 1);
  CHECK(r.fleet_sources[0] == down);
  // A resource whose status is known but unreadable is still an error.
  gone.status = "running";
  f.fleet.PutResource(gone);
  f.clock.Advance(absl::Minutes(15));
  CHECK(f.Run().error_count == 1);
}

TEST_CASE("re-detection is a heartbeat: a second run creates no duplicate finding",
          "[core][patrol]") {
  Fixture f;
  f.Run();
  const std::size_t active = f.Active().size();
  f.clock.Advance(absl::Minutes(15));
  core::PatrolRunRecord second = f.Run();
  CHECK(second.new_findings == 0);
  CHECK(second.existing_findings == 3);
  CHECK(f.Active().size() == active);
}

TEST_CASE("stale findings resolve by absence only for performance and capacity", "[core][patrol]") {
  Fixture f;
  f.SetFacts("vm:101", "running", {{"cpu_pct", "10.0"}, {"memory_pct", "96.0"}});
  f.Run();
  const std::string memory = Fixture::Id("vm:101", Category::kPerformance, "memory-high");
  REQUIRE(f.findings.Get(memory).ok());
  f.SetFacts("vm:101", "running", {{"cpu_pct", "10.0"}, {"memory_pct", "40.0"}});
  // The worker runs again: its reliability finding resolves only through the verifier.
  f.SetFacts("app-container:worker", "running", {});
  f.clock.Advance(absl::Minutes(15));
  core::PatrolRunRecord r = f.Run();
  CHECK(Has(r.resolved_finding_ids, memory));
  CHECK(Has(r.resolved_finding_ids, kWorkerExited));
  CHECK(f.findings.Get(memory)->resolved_at.has_value());
  // The backup job still fails: no resolve.
  CHECK_FALSE(f.findings.Get(kBackupFailed)->resolved_at.has_value());
}

TEST_CASE("one run at a time per scope, another scope may run", "[core][patrol]") {
  Fixture f;
  absl::StatusOr<core::PatrolBegin> first = f.patrol->Begin({}, core::PatrolTrigger::kScheduled);
  REQUIRE(first.ok());
  REQUIRE(first->ticket.has_value());
  absl::StatusOr<core::PatrolBegin> second = f.patrol->Begin({}, core::PatrolTrigger::kManual);
  REQUIRE(second.ok());
  CHECK_FALSE(second->ticket.has_value());
  CHECK(second->running_run_id == first->ticket->run_id);
  // The running record is visible at once.
  CHECK(f.runs.Get(first->ticket->run_id)->status == PatrolRunStatus::kRunning);

  core::PatrolScope scoped;
  scoped.resource_ids = {"vm:101"};
  absl::StatusOr<core::PatrolBegin> other = f.patrol->Begin(scoped, core::PatrolTrigger::kManual);
  REQUIRE(other.ok());
  REQUIRE(other->ticket.has_value());
  f.patrol->Execute(*other->ticket);

  const std::string id = first->ticket->run_id;
  f.patrol->Execute(*std::move(first->ticket));
  absl::StatusOr<core::PatrolBegin> again = f.patrol->Begin({}, core::PatrolTrigger::kManual);
  REQUIRE(again.ok());
  CHECK(again->ticket.has_value());
  CHECK(f.runs.Get(id)->status == PatrolRunStatus::kIssuesFound);
}

TEST_CASE("a scope that names an unknown resource is unresolved and reserves nothing",
          "[core][patrol]") {
  Fixture f;
  core::PatrolScope scope;
  scope.resource_ids = {"vm:999"};
  absl::StatusOr<core::PatrolBegin> begun = f.patrol->Begin(scope, core::PatrolTrigger::kManual);
  CHECK(absl::IsNotFound(begun.status()));
  core::PatrolScope types;
  types.resource_types = {"no-such-type"};
  CHECK(absl::IsNotFound(f.patrol->Begin(types, core::PatrolTrigger::kManual).status()));
  CHECK(f.runs.List(100)->empty());
}

TEST_CASE("a scoped run checks only its resources and never reconciles the rest",
          "[core][patrol]") {
  Fixture f;
  core::PatrolScope scope;
  scope.resource_types = {"backup-job"};
  core::PatrolRunRecord r = f.Run(scope);
  CHECK(r.resources_checked == 1);
  CHECK(r.new_finding_ids == std::vector<std::string>{kBackupFailed});
  CHECK(r.effective_scope_resource_ids == std::vector<std::string>{"backup-job:nightly"});
}

TEST_CASE("the Watch pass assesses what it was shown and runs on a declining token allowance",
          "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.provider.Add(ScriptedTurn::Calls(
                     {Call("c1", "patrol_get_findings", R"({"resource_id":"backup-job:nightly"})")})
                     .WithUsage(9000, 5500));
  f.provider.Add(ScriptedTurn::Calls({Call("c2", "patrol_assess_finding",
                                           R"({"finding_id":")" + kBackupFailed +
                                               R"(","verdict":"present",)"
                                               R"("evidence":"last_result is failed"})")})
                     .WithUsage(9500, 1100));
  f.provider.Add(ScriptedTurn::Text("The nightly backup still fails."));
  core::PatrolRunRecord r = f.Run();
  CHECK(r.status == PatrolRunStatus::kIssuesFound);
  CHECK(r.error_count == 0);
  CHECK(r.model_pass_ran);
  CHECK(r.model_pass_skipped_reason.empty());
  REQUIRE(r.assessments.size() == 1);
  CHECK(r.assessments[0].finding_id == kBackupFailed);
  CHECK(r.assessments[0].verdict == "present");
  CHECK(r.tool_call_count == 2);
  REQUIRE(r.tool_calls.size() == 2);
  CHECK(r.tool_calls[0].tool_name == "patrol_get_findings");
  CHECK(r.tool_calls[0].success);
  CHECK(r.ai_analysis == "The nightly backup still fails.");
  CHECK(r.input_tokens == 18500);
  CHECK(r.output_tokens == 6600);
  // 2,048 output tokens per turn, lowered to what is left of the 7,000 output-token allowance
  // (input tokens do not count), never below 256.
  REQUIRE(f.provider.RequestCount() == 3);
  CHECK(f.provider.Request(0).max_tokens == 2048);
  CHECK(f.provider.Request(1).max_tokens == 1500);
  CHECK(f.provider.Request(2).max_tokens == 400);
  CHECK_FALSE(f.provider.Request(2).tools.empty());
  // Monitor: no investigation, nothing planned.
  CHECK(r.remediations.empty());
  CHECK(f.fleet.dispatch_calls() == 0);
}

TEST_CASE("a spent Watch allowance ends in a tool-free final decision, not an abort",
          "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.provider.Add(
      ScriptedTurn::Calls({Call("c1", "patrol_get_findings", R"({"resource_id":"vm:101"})")})
          .WithUsage(3000, 7200));
  f.provider.Add(ScriptedTurn::Text("Nothing wrong with web-01.").WithUsage(3000, 50));
  core::PatrolRunRecord r = f.Run();
  CHECK(r.status == PatrolRunStatus::kIssuesFound);
  CHECK(r.error_count == 0);
  CHECK(r.ai_analysis == "Nothing wrong with web-01.");
  REQUIRE(f.provider.RequestCount() == 2);
  CHECK(f.provider.Request(1).tools.empty());
  CHECK(f.provider.Request(1).max_tokens == core::kMinDecisionTokens);
}

TEST_CASE("a Watch pass that leaves a presented finding without a verdict records an error",
          "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.SetFacts("vm:101", "running", {{"cpu_pct", "10.0"}, {"memory_pct", "96.0"}});
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "patrol_get_findings", R"({"resource_id":"backup-job:nightly"})")}));
  f.provider.Add(ScriptedTurn::Text("All fine."));
  core::PatrolRunRecord first = f.Run();
  CHECK(first.status == PatrolRunStatus::kError);
  CHECK(first.error_summary.find("missing verdicts") != std::string::npos);
  CHECK(first.error_detail.find(kBackupFailed) != std::string::npos);
  // An error run is never an all-clear: nothing is reconciled even once memory recovers.
  f.SetFacts("vm:101", "running", {{"cpu_pct", "10.0"}, {"memory_pct", "40.0"}});
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "patrol_get_findings", R"({"resource_id":"backup-job:nightly"})")}));
  f.provider.Add(ScriptedTurn::Text("All fine."));
  core::PatrolRunRecord second = f.Run();
  CHECK(second.status == PatrolRunStatus::kError);
  CHECK(second.resolved_finding_ids.empty());
  const std::string memory = Fixture::Id("vm:101", Category::kPerformance, "memory-high");
  CHECK_FALSE(f.findings.Get(memory)->resolved_at.has_value());
}

TEST_CASE("a partly rejected lifecycle batch earns one repair-only turn beyond the budget",
          "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  const std::string present =
      R"({"finding_id":")" + kBackupFailed + R"(","verdict":"present","evidence":"still failed"})";
  const std::string unknown =
      R"({"finding_id":"0000000000000000","verdict":"present","evidence":"x"})";
  // Turns 1-3 use tools; turn 3's batch has an accepted and a rejected assessment.
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "patrol_get_findings", R"({"resource_id":"backup-job:nightly"})")}));
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c2", "pulse_query", R"({"action":"get","resource_id":"backup-job:nightly"})")}));
  f.provider.Add(ScriptedTurn::Calls({Call("c3", "patrol_assess_finding", present),
                                      Call("c4", "patrol_assess_finding", unknown)}));
  // Turn 4 is the repair turn: only the lifecycle tools are offered.
  f.provider.Add(ScriptedTurn::Text("Nothing to repair."));
  core::PatrolRunRecord r = f.Run();
  CHECK(r.status == PatrolRunStatus::kIssuesFound);
  REQUIRE(f.provider.RequestCount() == 4);
  std::vector<std::string> offered;
  for (const core::ToolDefinition& t : f.provider.Request(3).tools) {
    offered.push_back(t.name);
  }
  std::sort(offered.begin(), offered.end());
  CHECK(offered == std::vector<std::string>{"patrol_assess_finding", "patrol_report_finding"});
  // Without a mixed batch the fourth turn is the last: it offers exactly the lifecycle tools.
  Fixture plain(/*with_model=*/true);
  plain.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "patrol_get_findings", R"({"resource_id":"backup-job:nightly"})")}));
  plain.provider.Add(ScriptedTurn::Calls(
      {Call("c2", "pulse_query", R"({"action":"get","resource_id":"backup-job:nightly"})")}));
  plain.provider.Add(ScriptedTurn::Calls({Call("c3", "patrol_assess_finding", present)}));
  plain.provider.Add(ScriptedTurn::Text("Done."));
  plain.Run();
  REQUIRE(plain.provider.RequestCount() == 4);
  offered.clear();
  for (const core::ToolDefinition& t : plain.provider.Request(3).tools) {
    offered.push_back(t.name);
  }
  std::sort(offered.begin(), offered.end());
  CHECK(offered == std::vector<std::string>{"patrol_assess_finding", "patrol_report_finding"});
}

TEST_CASE("a second verdict on one finding in one run is refused", "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  const std::string assess =
      R"({"finding_id":")" + kBackupFailed + R"(","verdict":"present","evidence":"still failed"})";
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "patrol_get_findings", R"({"resource_id":"backup-job:nightly"})")}));
  f.provider.Add(ScriptedTurn::Calls({Call("c2", "patrol_assess_finding", assess)}));
  f.provider.Add(ScriptedTurn::Calls({Call(
      "c3", "patrol_assess_finding",
      R"({"finding_id":")" + kBackupFailed + R"(","verdict":"uncertain","evidence":"hm"})")}));
  f.provider.Add(ScriptedTurn::Text("Done."));
  core::PatrolRunRecord r = f.Run();
  REQUIRE(r.tool_calls.size() == 3);
  CHECK_FALSE(r.tool_calls[2].success);
  CHECK(r.tool_calls[2].output.find("POLICY_BLOCKED") != std::string::npos);
  REQUIRE(r.assessments.size() == 1);
  CHECK(r.assessments[0].verdict == "present");
}

TEST_CASE("assisted auto-fixes a low_risk capability and records the independent verification",
          "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.SetAutonomy(AutonomyLevel::kAssisted);
  ScriptAutoFixRun(f.provider);
  core::PatrolRunRecord r = f.Run();
  CHECK(r.autonomy_level == "assisted");
  const core::PatrolRemediation* m = RemediationFor(r, kWorkerExited);
  REQUIRE(m != nullptr);
  CHECK(m->outcome == "fix_verified");
  CHECK(m->action_state == "completed");
  CHECK(m->execution == "succeeded");
  CHECK(m->verification == "confirmed");
  CHECK(f.fleet.executions() == 1);
  REQUIRE(f.fleet.dispatched().size() == 1);
  CHECK(f.fleet.dispatched()[0].capability_name == "start");
  CHECK(f.fleet.observe_calls() == 1);
  CHECK(RemediationFor(r, kBackupFailed)->outcome == "no_proposal");
  // The findings carry their investigation's outcome.
  absl::StatusOr<core::Finding> worker = f.findings.Get(kWorkerExited);
  REQUIRE(worker.ok());
  CHECK(worker->investigation_status == core::InvestigationStatus::kCompleted);
  CHECK(worker->investigation_outcome == core::InvestigationOutcome::kFixVerified);
  CHECK(worker->fix_action_id == m->action_id);
  CHECK(worker->investigation_attempts == 1);
  CHECK_FALSE(worker->investigation_session_id.empty());
  CHECK(f.findings.Get(kBackupFailed)->investigation_outcome ==
        core::InvestigationOutcome::kNeedsAttention);

  // The next run does not investigate again, so nothing is dispatched twice.
  f.provider.Add(ScriptedTurn::Text("No change."));
  f.clock.Advance(absl::Minutes(15));
  core::PatrolRunRecord next = f.Run();
  CHECK(next.remediations.empty());
  CHECK(f.fleet.executions() == 1);
}

TEST_CASE("an automatic fix whose outcome cannot be stored is reported unrecorded, never retried",
          "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.SetAutonomy(AutonomyLevel::kAssisted);
  ScriptAutoFixRun(f.provider);
  // The fleet takes the change; the store then fails the write that records its outcome.
  f.fleet.SetDispatchHook([&f](const core::DispatchRequest&) {
    f.action_store.FailNext(absl::UnavailableError("disk I/O error"));
  });
  core::PatrolRunRecord r = f.Run();
  const core::PatrolRemediation* m = RemediationFor(r, kWorkerExited);
  REQUIRE(m != nullptr);
  CHECK(m->outcome == "fix_unrecorded");
  CHECK(m->execution == "inconclusive");
  CHECK(m->verification == "inconclusive");
  CHECK(f.fleet.executions() == 1);
  CHECK(f.findings.Get(kWorkerExited)->investigation_outcome ==
        core::InvestigationOutcome::kFixVerificationUnknown);

  // Nothing dispatches the change again on the next run.
  f.fleet.SetDispatchHook(nullptr);
  f.provider.Add(ScriptedTurn::Text("No change."));
  f.clock.Advance(absl::Minutes(15));
  core::PatrolRunRecord next = f.Run();
  CHECK(next.remediations.empty());
  CHECK(f.fleet.executions() == 1);
}

TEST_CASE("assisted leaves an elevated capability pending for a human", "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.SetAutonomy(AutonomyLevel::kAssisted);
  core::PatrolScope scope;
  scope.resource_ids = {"vm:101"};
  f.SetFacts("vm:101", "running", {{"cpu_pct", "10.0"}, {"memory_pct", "96.0"}});
  f.provider.Add(ScriptedTurn::Text("Memory is high."));
  f.provider.Add(ScriptedTurn::Calls({Call("p1", "patrol_propose_action",
                                           R"({"resource_id":"vm:101","capability":"restart",)"
                                           R"("rationale":"memory pressure"})")}));
  f.provider.Add(ScriptedTurn::Text("Proposed a restart."));
  core::PatrolRunRecord r = f.Run(scope);
  const std::string memory = Fixture::Id("vm:101", Category::kPerformance, "memory-high");
  const core::PatrolRemediation* m = RemediationFor(r, memory);
  REQUIRE(m != nullptr);
  CHECK(m->outcome == "fix_queued");
  CHECK(m->action_state == "pending_approval");
  CHECK_FALSE(m->action_id.empty());
  CHECK(f.fleet.dispatch_calls() == 0);
}

TEST_CASE("assisted never auto-fixes a resource with a remediation lock", "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.SetAutonomy(AutonomyLevel::kAssisted);
  core::OperatorState lock;
  lock.resource_id = "app-container:worker";
  lock.never_auto_remediate = true;
  lock.set_at = f.clock.Now();
  lock.set_by = "tok_human";
  REQUIRE(f.operator_state.Set(lock).ok());
  ScriptAutoFixRun(f.provider);
  core::PatrolRunRecord r = f.Run();
  const core::PatrolRemediation* m = RemediationFor(r, kWorkerExited);
  REQUIRE(m != nullptr);
  CHECK(m->outcome == "fix_queued");
  CHECK(m->note.find("never_auto_remediate") != std::string::npos);
  CHECK(f.fleet.dispatch_calls() == 0);
  CHECK(f.findings.Get(kWorkerExited)->investigation_outcome ==
        core::InvestigationOutcome::kFixQueued);
}

TEST_CASE("monitor never investigates nor dispatches", "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.provider.Add(ScriptedTurn::Text("Three findings."));
  core::PatrolRunRecord r = f.Run();
  CHECK(r.remediations.empty());
  CHECK(f.provider.RequestCount() == 1);
  CHECK(f.fleet.dispatch_calls() == 0);
}

TEST_CASE("Autopilot without an acknowledgement behaves as approval", "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.SetAutonomy(AutonomyLevel::kFull, /*acknowledged=*/false);
  ScriptAutoFixRun(f.provider);
  core::PatrolRunRecord r = f.Run();
  CHECK(r.autonomy_level == "approval");
  const core::PatrolRemediation* m = RemediationFor(r, kWorkerExited);
  REQUIRE(m != nullptr);
  CHECK(m->outcome == "fix_queued");
  CHECK_FALSE(m->action_id.empty());
  CHECK(f.fleet.dispatch_calls() == 0);

  Fixture acknowledged(/*with_model=*/true);
  acknowledged.SetAutonomy(AutonomyLevel::kFull, /*acknowledged=*/true);
  ScriptAutoFixRun(acknowledged.provider);
  core::PatrolRunRecord full = acknowledged.Run();
  CHECK(full.autonomy_level == "full");
  CHECK(RemediationFor(full, kWorkerExited)->outcome == "fix_verified");
}

TEST_CASE("a run an alert started plans fixes for approval even under acknowledged Autopilot",
          "[core][patrol][alerts]") {
  Fixture f(/*with_model=*/true);
  f.SetAutonomy(AutonomyLevel::kFull, /*acknowledged=*/true);
  ScriptAutoFixRun(f.provider);
  core::PatrolRunRecord r = f.Run({}, core::PatrolTrigger::kAlert);
  CHECK(r.trigger == core::PatrolTrigger::kAlert);
  CHECK(r.autonomy_level == "approval");
  const core::PatrolRemediation* m = RemediationFor(r, kWorkerExited);
  REQUIRE(m != nullptr);
  CHECK(m->outcome == "fix_queued");
  CHECK(f.fleet.dispatch_calls() == 0);
  // An event-triggered run is the fleet's own observation: the configured level holds.
  Fixture event(/*with_model=*/true);
  event.SetAutonomy(AutonomyLevel::kFull, /*acknowledged=*/true);
  ScriptAutoFixRun(event.provider);
  CHECK(event.Run({}, core::PatrolTrigger::kEvent).autonomy_level == "full");
}

// db-01 under memory pressure, with an approval-free elevated capability ("migrate") next to
// its admin-floored restart; the model proposes the migration. Returns the remediation.
core::PatrolRemediation MigrateUnder(Fixture& f) {
  f.fleet.PutResource(
      Res("vm:101", "vm", "web-01", "running", "node:pve1"),
      {Cap("restart", core::ApprovalLevel::kAdmin, core::AutoAuthorization::kElevated),
       Cap("migrate", core::ApprovalLevel::kNone, core::AutoAuthorization::kElevated)});
  f.SetFacts("vm:101", "running", {{"cpu_pct", "10.0"}, {"memory_pct", "96.0"}});
  f.provider.Add(ScriptedTurn::Text("Memory is high."));
  f.provider.Add(ScriptedTurn::Calls({Call("p1", "patrol_propose_action",
                                           R"({"resource_id":"vm:101","capability":"migrate",)"
                                           R"("rationale":"move it to a roomier node"})")}));
  f.provider.Add(ScriptedTurn::Text("Proposed a migration."));
  core::PatrolScope scope;
  scope.resource_ids = {"vm:101"};
  core::PatrolRunRecord r = f.Run(scope);
  const core::PatrolRemediation* m =
      RemediationFor(r, Fixture::Id("vm:101", Category::kPerformance, "memory-high"));
  REQUIRE(m != nullptr);
  return *m;
}

TEST_CASE(
    "an acknowledged Autopilot executes an approval-free elevated capability, assisted "
    "and a revoked Autopilot leave it for a human",
    "[core][patrol]") {
  Fixture assisted(/*with_model=*/true);
  assisted.SetAutonomy(AutonomyLevel::kAssisted);
  const core::PatrolRemediation held = MigrateUnder(assisted);
  CHECK(held.outcome == "fix_queued");
  CHECK(held.action_state == "pending_approval");
  CHECK(assisted.fleet.dispatch_calls() == 0);

  Fixture full(/*with_model=*/true);
  full.SetAutonomy(AutonomyLevel::kFull, /*acknowledged=*/true);
  const core::PatrolRemediation fixed = MigrateUnder(full);
  CHECK(fixed.outcome == "fix_verified");
  CHECK(fixed.execution == "succeeded");
  REQUIRE(full.fleet.dispatched().size() == 1);
  CHECK(full.fleet.dispatched()[0].capability_name == "migrate");

  // Revoked: the saved level stays full, the effective one is approval.
  Fixture revoked(/*with_model=*/true);
  revoked.SetAutonomy(AutonomyLevel::kFull, /*acknowledged=*/true);
  absl::StatusOr<core::AutonomySettings> after =
      revoked.patrol->UpdateAutonomy([&](const core::AutonomySettings& current)
                                         -> absl::StatusOr<std::optional<core::AutonomySettings>> {
        return core::RevokeAcknowledgement(current, "ack-1", "tok_human", "", revoked.clock.Now());
      });
  REQUIRE(after.ok());
  CHECK(after->level == AutonomyLevel::kFull);
  CHECK(core::EffectiveAutonomy(*after) == AutonomyLevel::kApproval);
  const core::PatrolRemediation approval = MigrateUnder(revoked);
  CHECK(approval.outcome == "fix_queued");
  CHECK(revoked.fleet.dispatch_calls() == 0);
}

// A provider that, on one chosen call, stalls past the investigation timeout: the fake clock
// jumps, the server's once-a-second watchdog fires (EnforceInvestigationDeadlines), and the call
// ends the way a real provider's does when its cancellation flag is raised mid-request.
class StallingProvider final : public core::LlmProvider {
 public:
  StallingProvider(ScriptedLlmProvider& script, FakeClock& clock, std::size_t stall_call,
                   absl::Duration stall)
      : script_(script), clock_(clock), stall_call_(stall_call), stall_(stall) {}
  void set_patrol(core::PatrolService* patrol) { patrol_ = patrol; }
  std::size_t stopped() const { return stopped_; }
  bool saw_cancel() const { return saw_cancel_; }

  absl::Status Stream(const core::LlmRequest& request,
                      absl::FunctionRef<void(const core::LlmStreamEvent&)> on_event) override {
    if (calls_++ == stall_call_) {
      clock_.Advance(stall_);
      stopped_ += patrol_->EnforceInvestigationDeadlines();
      saw_cancel_ = request.cancelled != nullptr && request.cancelled->load();
      if (saw_cancel_) {
        return absl::CancelledError("the request was cancelled");
      }
    }
    return script_.Stream(request, on_event);
  }

 private:
  ScriptedLlmProvider& script_;
  FakeClock& clock_;
  const std::size_t stall_call_;
  const absl::Duration stall_;
  core::PatrolService* patrol_ = nullptr;
  std::size_t calls_ = 0;
  std::size_t stopped_ = 0;
  bool saw_cancel_ = false;
};

TEST_CASE(
    "an investigation that outlives its timeout is stopped, plans nothing, and the next "
    "investigation still runs",
    "[core][patrol]") {
  Fixture f;
  // Call 0 is the Watch pass, 1 the worker's first investigation turn (it proposes the start),
  // 2 its second turn: that one stalls for just over the timeout.
  StallingProvider slow(f.provider, f.clock, 2, absl::Seconds(301));
  core::PatrolServiceOptions options;
  options.autopilot_actions = &f.autopilot_actions;
  core::PatrolService patrol(
      f.fleet, f.findings, f.actions, f.operator_state, f.runs, f.history, f.clock, f.ids,
      core::PatrolModel{slow, f.sessions, f.runner, core::ModelRoute{}, nullptr},
      std::move(options));
  slow.set_patrol(&patrol);
  core::AutonomySettings settings;
  settings.level = AutonomyLevel::kAssisted;
  settings.investigation_timeout_sec = 300;
  REQUIRE(patrol.SetAutonomy(settings).ok());
  f.provider.Add(ScriptedTurn::Text("Nothing beyond the deterministic findings."));
  f.provider.Add(ProposeStartWorker());
  f.provider.Add(ScriptedTurn::Text("No safe fix for the backup job."));
  f.provider.Add(ScriptedTurn::Text("No safe fix for the pool."));
  absl::StatusOr<core::PatrolRunRecord> r = patrol.Run({}, core::PatrolTrigger::kManual);
  REQUIRE(r.ok());

  CHECK(slow.stopped() == 1);
  CHECK(slow.saw_cancel());
  const core::PatrolRemediation* worker = RemediationFor(*r, kWorkerExited);
  REQUIRE(worker != nullptr);
  CHECK(worker->outcome == "timed_out");
  CHECK(worker->note.find("300 s") != std::string::npos);
  CHECK(worker->action_id.empty());  // the captured proposal was not planned
  CHECK(f.fleet.dispatch_calls() == 0);
  CHECK(f.findings.Get(kWorkerExited)->investigation_outcome ==
        core::InvestigationOutcome::kTimedOut);
  // The timeout is per investigation: the backup job's started afresh and finished.
  REQUIRE(RemediationFor(*r, kBackupFailed) != nullptr);
  CHECK(RemediationFor(*r, kBackupFailed)->outcome == "no_proposal");
}

TEST_CASE(
    "a model source is asked at the start of every run, with its trigger, and its refusal "
    "is the run record's reason",
    "[core][patrol]") {
  Fixture f;
  ScriptedLlmProvider second;
  std::vector<core::PatrolTrigger> asked;
  int answer = 0;  // 0: the fixture's provider; 1: none, with a reason; 2: the second provider
  core::PatrolServiceOptions options;
  options.model_source = [&](core::PatrolTrigger trigger) -> core::PatrolModelChoice {
    asked.push_back(trigger);
    if (answer == 1) {
      return {nullptr, "model_cannot_call_tools"};
    }
    return {std::make_shared<const core::PatrolModel>(
                core::PatrolModel{answer == 0 ? static_cast<core::LlmProvider&>(f.provider)
                                              : static_cast<core::LlmProvider&>(second),
                                  f.sessions, f.runner, core::ModelRoute{}, nullptr}),
            ""};
  };
  core::PatrolService patrol(f.fleet, f.findings, f.actions, f.operator_state, f.runs, f.history,
                             f.clock, f.ids, std::nullopt, std::move(options));
  CHECK(patrol.model_configured());
  f.provider.Add(ScriptedTurn::Text("Nothing beyond the deterministic findings."));
  absl::StatusOr<core::PatrolRunRecord> first = patrol.Run({}, core::PatrolTrigger::kManual);
  REQUIRE(first.ok());
  CHECK(first->model_pass_ran);
  CHECK(f.provider.RequestCount() == 1);

  answer = 1;
  absl::StatusOr<core::PatrolRunRecord> refused = patrol.Run({}, core::PatrolTrigger::kScheduled);
  REQUIRE(refused.ok());
  CHECK_FALSE(refused->model_pass_ran);
  CHECK(refused->model_pass_skipped_reason == "model_cannot_call_tools");
  CHECK(refused->resources_checked > 0);  // the deterministic checks still ran

  answer = 2;
  second.Add(ScriptedTurn::Text("Still nothing new."));
  absl::StatusOr<core::PatrolRunRecord> third = patrol.Run({}, core::PatrolTrigger::kManual);
  REQUIRE(third.ok());
  CHECK(third->model_pass_ran);
  CHECK(second.RequestCount() == 1);
  CHECK(f.provider.RequestCount() == 1);  // the first provider was not asked again
  CHECK(asked == std::vector<core::PatrolTrigger>{core::PatrolTrigger::kManual,
                                                  core::PatrolTrigger::kScheduled,
                                                  core::PatrolTrigger::kManual});
}

TEST_CASE("an investigation within its timeout is not stopped by the deadline check",
          "[core][patrol]") {
  Fixture f;
  StallingProvider slow(f.provider, f.clock, 2, absl::Seconds(299));
  core::PatrolService patrol(
      f.fleet, f.findings, f.actions, f.operator_state, f.runs, f.history, f.clock, f.ids,
      core::PatrolModel{slow, f.sessions, f.runner, core::ModelRoute{}, nullptr});
  slow.set_patrol(&patrol);
  core::AutonomySettings settings;
  settings.level = AutonomyLevel::kAssisted;
  REQUIRE(patrol.SetAutonomy(settings).ok());  // the default timeout, 300 s
  ScriptAutoFixRun(f.provider);
  absl::StatusOr<core::PatrolRunRecord> r = patrol.Run({}, core::PatrolTrigger::kManual);
  REQUIRE(r.ok());
  CHECK(slow.stopped() == 0);
  CHECK_FALSE(slow.saw_cancel());
  CHECK(RemediationFor(*r, kWorkerExited)->outcome == "fix_verified");
}

TEST_CASE("a second, different proposal invalidates the capture and nothing is planned",
          "[core][patrol]") {
  Fixture f(/*with_model=*/true);
  f.SetAutonomy(AutonomyLevel::kAssisted);
  f.provider.Add(ScriptedTurn::Text("Nothing new."));
  f.provider.Add(ProposeStartWorker());
  f.provider.Add(ScriptedTurn::Calls({Call("p2", "patrol_propose_action",
                                           R"({"resource_id":"backup-job:nightly",)"
                                           R"("capability":"run-now","rationale":"retry"})")}));
  f.provider.Add(ScriptedTurn::Text("Two ideas."));
  f.provider.Add(ScriptedTurn::Text("No fix."));
  f.provider.Add(ScriptedTurn::Text("No fix."));
  core::PatrolRunRecord r = f.Run();
  const core::PatrolRemediation* m = RemediationFor(r, kWorkerExited);
  REQUIRE(m != nullptr);
  CHECK(m->outcome == "proposal_invalid");
  CHECK(m->action_id.empty());
  CHECK(f.fleet.dispatch_calls() == 0);
}

}  // namespace
}  // namespace pulse::testing::patrol
