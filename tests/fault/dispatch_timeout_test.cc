// Fleet dispatch timeouts against the real SQLite storage: the action service over
// OpenSqliteStorage and a test fleet whose dispatch hangs (a hook that blocks) and then
// reports an unknown outcome, or fails with DeadlineExceeded as an adapter's own timeout does.
// The action must end in one terminal state with execution `inconclusive`, a caller arriving
// while the dispatch hangs (through this service or a second process's connection to the same
// file) is refused without dispatching, and retrying execute replays the stored disposition.
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "action_test_support.h"
#include "fault_support.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/actions/action_service.h"

namespace pulse::testing::fault {
namespace {

using core::ActionRecord;
using core::ActionState;
using core::ExecuteOutcome;
using core::ExecutionStatus;
using core::Refusable;
using namespace testing::actions;  // NOLINT: test fixtures

// One engine process over the data dir's SQLite file.
struct Engine {
  explicit Engine(const std::string& data_dir, FakeFleet& fleet, FakeClock& clock) {
    auto opened = adapters::storage::OpenSqliteStorage(data_dir);
    REQUIRE(opened.ok());
    storage = *std::move(opened);
    service = std::make_unique<core::ActionService>(
        *storage->actions, fleet, *storage->operator_state, *storage->audit, clock);
  }
  std::unique_ptr<adapters::storage::SqliteStorage> storage;
  std::unique_ptr<core::ActionService> service;
};

struct World {
  World() {
    fleet.PutResource(Node(), {});
    fleet.PutResource(Vm101(), VmCatalogue());
    fleet.AddRelationship({"vm:101", "node:pve1", "runs_on"});
  }
  ActionRecord ApprovedRestart(Engine& engine) {
    auto planned =
        engine.service->Plan(Request("restart", R"({"mode":"graceful"})", Agent("assistant")));
    REQUIRE(planned.ok());
    REQUIRE_FALSE(planned->refused());
    auto decided = engine.service->Decide(Approve(planned->value().record, Human("alice")));
    REQUIRE(decided.ok());
    REQUIRE_FALSE(decided->refused());
    return decided->value().record;
  }

  e2e::TempDir dir;
  FakeClock clock;
  FakeFleet fleet;
};

void RequireReplayedFailure(Engine& engine, const ActionRecord& action) {
  absl::StatusOr<Refusable<ExecuteOutcome>> again =
      engine.service->Execute(Execution(action, Human("alice")));
  REQUIRE(again.ok());
  REQUIRE_FALSE(again->refused());
  CHECK(again->value().replayed);
  CHECK_FALSE(again->value().dispatched);
  CHECK(again->value().record.state == ActionState::kFailed);
}

TEST_CASE("a fleet dispatch that hangs then times out settles once as inconclusive",
          "[fault][dispatch]") {
  World w;
  Engine engine(w.dir.path(), w.fleet, w.clock);
  Engine other_process(w.dir.path(), w.fleet, w.clock);
  const ActionRecord action = w.ApprovedRestart(engine);

  // The agent never answers; after its deadline the adapter reports an unknown outcome.
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  w.fleet.SetDispatchHook([&entered, released](const core::DispatchRequest&) {
    entered.set_value();
    released.wait();
  });
  core::DispatchReceipt timed_out;
  timed_out.status = ExecutionStatus::kInconclusive;
  timed_out.reason_code = "agent_timeout";
  timed_out.summary = "the agent did not answer within 30s";
  timed_out.executor_id = "agent:pve1";
  timed_out.executor_trust_domain = "pve1";
  w.fleet.SetDispatchReceipt(timed_out);
  core::PostconditionObservation unknown;
  unknown.status = core::VerificationStatus::kInconclusive;
  unknown.observer_id = "observer:control-plane";
  unknown.observer_trust_domain = "control-plane";
  unknown.summary = "the change is still in flight";
  w.fleet.SetObservation(unknown);

  absl::StatusOr<Refusable<ExecuteOutcome>> first;
  std::thread running([&] { first = engine.service->Execute(Execution(action, Human("alice"))); });
  entered.get_future().wait();
  // While it hangs, every other caller is refused and nothing else is dispatched.
  for (Engine* caller : {&engine, &other_process}) {
    absl::StatusOr<Refusable<ExecuteOutcome>> meanwhile =
        caller->service->Execute(Execution(action, Human("bob")));
    REQUIRE(meanwhile.ok());
    REQUIRE(meanwhile->refused());
    CHECK(meanwhile->refusal().code == core::AgentErrorCode::kActionAlreadyExecuting);
  }
  CHECK(w.fleet.dispatch_calls() == 1);
  release.set_value();
  running.join();

  REQUIRE(first.ok());
  REQUIRE_FALSE(first->refused());
  const ActionRecord& settled = first->value().record;
  CHECK(settled.state == ActionState::kFailed);
  REQUIRE(settled.result.has_value());
  CHECK(settled.result->execution.status == ExecutionStatus::kInconclusive);
  CHECK(settled.result->verification.status == core::VerificationStatus::kInconclusive);

  // Retrying, through either connection, replays the stored disposition.
  RequireReplayedFailure(engine, action);
  RequireReplayedFailure(other_process, action);
  CHECK(w.fleet.dispatch_calls() == 1);
  CheckRanOnce(w.dir.path(), action.id(), "failed", "inconclusive");
  CHECK(CountRows(w.dir.path(),
                  "SELECT count(*) FROM audit_log WHERE event = 'refused' AND code = "
                  "'action_already_executing' AND subject_id = '" +
                      action.id() + "'") == 2);
}

TEST_CASE("a fleet dispatch that fails with a deadline is inconclusive and never retried",
          "[fault][dispatch]") {
  World w;
  Engine engine(w.dir.path(), w.fleet, w.clock);
  const ActionRecord action = w.ApprovedRestart(engine);
  w.fleet.SetError(FakeFleet::Method::kDispatch,
                   absl::DeadlineExceededError("dispatch to agent:pve1 timed out after 30s"));
  absl::StatusOr<Refusable<ExecuteOutcome>> first =
      engine.service->Execute(Execution(action, Human("alice")));
  REQUIRE(first.ok());
  REQUIRE_FALSE(first->refused());
  CHECK(first->value().dispatched);
  const ActionRecord& settled = first->value().record;
  CHECK(settled.state == ActionState::kFailed);
  REQUIRE(settled.result.has_value());
  CHECK(settled.result->execution.status == ExecutionStatus::kInconclusive);
  CHECK(settled.result->execution.reason_code == "executor_outcome_unknown");
  // The outcome is unknown, so the observer was asked rather than the dispatch repeated.
  CHECK(w.fleet.observe_calls() == 1);

  // The agent is back: retrying still never dispatches, also after a restart of the engine.
  w.fleet.ClearError(FakeFleet::Method::kDispatch);
  RequireReplayedFailure(engine, action);
  Engine restarted(w.dir.path(), w.fleet, w.clock);
  RequireReplayedFailure(restarted, action);
  CHECK(w.fleet.dispatch_calls() == 1);
  CheckRanOnce(w.dir.path(), action.id(), "failed", "inconclusive");
  CHECK(IntegrityCheck(w.dir.path()) == "ok");
}

}  // namespace
}  // namespace pulse::testing::fault
