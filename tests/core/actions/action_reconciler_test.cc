#include "pulse/core/actions/action_reconciler.h"

#include <catch2/catch.hpp>

#include "action_test_support.h"

namespace pulse::core {
namespace {

using namespace testing::actions;  // NOLINT: test fixtures

// Leaves `approved` in executing as a crashed process would: admitted, result never recorded.
void CrashDuringDispatch(Harness& h, const ActionRecord& approved) {
  h.fleet.SetDispatchHook(
      [&](const DispatchRequest&) { h.store.FailNext(absl::UnavailableError("process killed")); });
  absl::StatusOr<Refusable<ExecuteOutcome>> out =
      h.service.Execute(Execution(approved, Human("alice")));
  REQUIRE_FALSE(out.ok());
  h.fleet.SetDispatchHook(nullptr);
  REQUIRE(StoredRecord(h, approved.id()).state == ActionState::kExecuting);
}

TEST_CASE("recovery settles an interrupted execution as failed and inconclusive",
          "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  CrashDuringDispatch(h, approved);
  const ActionRecord untouched = MustPlan(h, Request("snapshot", "{}", Human("alice")));
  h.clock.Advance(absl::Minutes(1));

  absl::StatusOr<ReconcileReport> report =
      ReconcileInterruptedExecutions(h.store, h.audit, h.clock);
  REQUIRE(report.ok());
  CHECK(report->settled == std::vector<std::string>{approved.id()});
  CHECK(report->skipped == 0);
  const ActionRecord settled = StoredRecord(h, approved.id());
  CHECK(settled.state == ActionState::kFailed);
  REQUIRE(settled.result.has_value());
  CHECK(settled.result->execution.status == ExecutionStatus::kInconclusive);
  CHECK(settled.result->execution.reason_code == "execution_interrupted");
  CHECK(settled.result->verification.status == VerificationStatus::kNotAttempted);
  CHECK(StartsWith(settled.result->error_message, kExecutionInterruptedPrefix));
  CHECK(settled.result->finished_at == h.clock.Now());
  CHECK(EventStates(h, approved.id()).back() == ActionState::kFailed);
  CHECK(h.audit.Find(approved.id(), "reconciled").size() == 1);
  CHECK(StoredRecord(h, untouched.id()) == untouched);
}

TEST_CASE("a reconciled action is never dispatched again", "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  CrashDuringDispatch(h, approved);
  REQUIRE(ReconcileInterruptedExecutions(h.store, h.audit, h.clock).ok());
  absl::StatusOr<Refusable<ExecuteOutcome>> again =
      h.service.Execute(Execution(approved, Human("alice")));
  REQUIRE(again.ok());
  REQUIRE_FALSE(again->refused());
  CHECK(again->value().replayed);
  CHECK(again->value().record.state == ActionState::kFailed);
  CHECK(h.fleet.dispatch_calls() == 1);
  // Running recovery again finds nothing.
  absl::StatusOr<ReconcileReport> second =
      ReconcileInterruptedExecutions(h.store, h.audit, h.clock);
  REQUIRE(second.ok());
  CHECK(second->settled.empty());
}

TEST_CASE("recovery skips an execution that finished meanwhile", "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  CrashDuringDispatch(h, approved);
  h.store.SetBeforeTransition([&](const ActionTransition& t) {
    h.store.SetBeforeTransition(nullptr);
    ActionTransition finish = t;
    finish.new_state = ActionState::kCompleted;
    finish.result->execution.status = ExecutionStatus::kSucceeded;
    finish.events.back().state = ActionState::kCompleted;
    REQUIRE(h.store.Transition(finish).ok());
  });
  absl::StatusOr<ReconcileReport> report =
      ReconcileInterruptedExecutions(h.store, h.audit, h.clock);
  REQUIRE(report.ok());
  CHECK(report->settled.empty());
  CHECK(report->skipped == 1);
  CHECK(StoredRecord(h, approved.id()).state == ActionState::kCompleted);
}

TEST_CASE("a result that can no longer be recorded is action_not_executing", "[core][actions]") {
  Harness h;
  const ActionRecord approved = ApprovedRestart(h);
  // Recovery (wrongly run while this process is live) settles the action mid-dispatch.
  h.fleet.SetDispatchHook([&](const DispatchRequest&) {
    REQUIRE(ReconcileInterruptedExecutions(h.store, h.audit, h.clock).ok());
  });
  const ActionRefusal r = MustRefuse(h.service.Execute(Execution(approved, Human("alice"))));
  CHECK(r.code == AgentErrorCode::kActionNotExecuting);
  REQUIRE(r.record.has_value());
  CHECK(r.record->state == ActionState::kFailed);
  CHECK(StartsWith(r.record->result->error_message, kExecutionInterruptedPrefix));
  CHECK(h.fleet.executions() == 1);
}

TEST_CASE("recovery returns store errors unchanged", "[core][actions]") {
  Harness h;
  h.store.FailNext(absl::UnavailableError("db down"));
  CHECK(absl::IsUnavailable(ReconcileInterruptedExecutions(h.store, h.audit, h.clock).status()));
}

}  // namespace
}  // namespace pulse::core
