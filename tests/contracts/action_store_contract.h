// The ActionStore contract, as one reusable Catch2 suite. Every adapter runs it unchanged:
//
//   TEST_CASE("SqliteActionStore honours the ActionStore contract", "[adapters][sqlite]") {
//     pulse::testing::RunActionStoreContract([] { return MakeSqliteStoreInTempDir(); });
//   }
//
// `make` returns a fresh, empty store as std::unique_ptr<core::ActionStore> (or any pointer-like
// owner); each SECTION gets its own. Records are built by hand so the suite depends on nothing
// but the port and the shared transition rules. Times carry sub-second parts: adapters must
// round-trip absl::Time exactly.
#pragma once

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "pulse/core/ports/action_store.h"

namespace pulse::testing {
namespace action_store_contract {

inline absl::Time T0() { return absl::FromUnixMillis(1'800'000'000'123); }

inline core::ActionActor Human(std::string id) { return {core::ActorKind::kHuman, std::move(id)}; }

// A well-formed new record; `pending` chooses pending_approval over planned.
inline core::ActionRecord NewRecord(const std::string& suffix, bool pending,
                                    absl::Time created = T0()) {
  core::ActionRecord r;
  r.request.request_id = "req-" + suffix;
  r.request.resource_id = "vm:101";
  r.request.capability_name = "restart";
  r.request.params_json = R"({"mode":"graceful","nested":{"k":[1,2.5,"ü"]}})";
  r.request.reason = "restart to apply kernel patch — äöü";
  r.request.actor = {core::ActorKind::kAgent, "assistant"};
  core::ActionPlan& p = r.plan;
  p.action_id = "act_" + suffix;
  p.request_id = r.request.request_id;
  p.resource_id = r.request.resource_id;
  p.capability_name = r.request.capability_name;
  p.params_json = r.request.params_json;
  p.allowed = true;
  p.requires_approval = pending;
  p.approval_policy = pending ? core::ApprovalLevel::kAdmin : core::ApprovalLevel::kNone;
  p.approval_requirement = {p.approval_policy, 2, true};
  p.auto_authorization = core::AutoAuthorization::kLowRisk;
  p.risk = core::ActionRisk::kHigh;
  p.predicted_blast_radius = {"vm:101", "node:pve1"};
  p.rollback_available = true;
  p.message = "Requires 2 approvals.";
  p.planned_at = created;
  p.expires_at = created + absl::Minutes(5);
  p.resource_version = "resource:sha256:0123456789abcdef01234567";
  p.policy_version = "policy:sha256:0123456789abcdef01234567";
  p.plan_hash = "sha256:" + std::string(64, suffix.empty() ? 'a' : 'b');
  p.preflight.target = "vm:101";
  p.preflight.current_state = "running";
  p.preflight.intended_change = "Restart vm:101";
  p.preflight.dry_run_summary = "none";
  p.preflight.safety_checks = {"bound to plan hash"};
  p.preflight.verification_steps = {"observe running"};
  r.created_at = created;
  r.updated_at = created;
  r.state = pending ? core::ActionState::kPendingApproval : core::ActionState::kPlanned;
  return r;
}

inline core::ActionLifecycleEvent Ev(const core::ActionRecord& r, core::ActionState state,
                                     std::string message, absl::Time at) {
  core::ActionLifecycleEvent e;
  e.action_id = r.id();
  e.at = at;
  e.state = state;
  e.kind = core::LifecycleEventKind::kTransition;
  e.message = std::move(message);
  return e;
}

inline std::vector<core::ActionLifecycleEvent> InitialEvents(const core::ActionRecord& r) {
  std::vector<core::ActionLifecycleEvent> events = {
      Ev(r, core::ActionState::kPlanned, "Action plan created.", r.created_at)};
  if (r.state == core::ActionState::kPendingApproval) {
    events.push_back(Ev(r, core::ActionState::kPendingApproval, "Needs approval.", r.created_at));
  }
  return events;
}

// A transition of `r` from its current state to `to`, with one event.
inline core::ActionTransition Move(const core::ActionRecord& r, core::ActionState to,
                                   absl::Time at) {
  core::ActionTransition t;
  t.action_id = r.id();
  t.expected_states = {r.state};
  t.expected_plan_hash = r.plan.plan_hash;
  t.expected_decision_revision = r.decision_revision;
  t.new_state = to;
  t.new_decision_revision = r.decision_revision;
  t.updated_at = at;
  t.events = {Ev(r, to, "moved", at)};
  return t;
}

inline core::ActionTransition Decide(const core::ActionRecord& r, const core::ActionActor& who,
                                     core::DecisionOutcome outcome, core::ActionState to,
                                     absl::Time at) {
  core::ActionTransition t = Move(r, to, at);
  t.expected_states = {core::ActionState::kPendingApproval};
  t.new_decision_revision = r.decision_revision + 1;
  t.appended_approval = core::ApprovalRecord{who, outcome, "looks right", at, r.plan.plan_hash};
  t.events.front().kind = core::LifecycleEventKind::kDecision;
  t.events.front().decision_revision = t.new_decision_revision;
  t.events.front().decision = outcome;
  t.events.front().actor = who;
  return t;
}

inline core::ActionExecutionResult Result(core::ExecutionStatus status, absl::Time at) {
  core::ActionExecutionResult res;
  res.execution = {status, "reason_x", "summary with \"quotes\" and\nnewline"};
  res.verification = {core::VerificationStatus::kConfirmed,
                      core::EvidenceClass::kIndependent,
                      "",
                      "observed running",
                      "observer:api",
                      at + absl::Milliseconds(7)};
  res.error_message = status == core::ExecutionStatus::kSucceeded ? "" : "execution failed: x";
  res.dispatched = true;
  res.executor_id = "agent:pve1";
  res.started_at = at - absl::Milliseconds(250);
  res.finished_at = at;
  return res;
}

template <class Store>
core::ActionRecord MustInsert(Store& store, const core::ActionRecord& r) {
  absl::StatusOr<core::ActionInsertOutcome> out = store->InsertIfAbsent(r, InitialEvents(r));
  REQUIRE(out.ok());
  REQUIRE(out->created);
  return out->record;
}

template <class Store>
core::ActionRecord MustMove(Store& store, const core::ActionTransition& t) {
  absl::StatusOr<core::ActionRecord> out = store->Transition(t);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *out;
}

template <class Store>
std::size_t EventCount(Store& store, const std::string& id) {
  absl::StatusOr<std::vector<core::ActionLifecycleEvent>> events = store->ListEvents(id);
  REQUIRE(events.ok());
  return events->size();
}

// The record and its event log are exactly as before a refused call.
template <class Store>
void RequireUnchanged(Store& store, const core::ActionRecord& before, std::size_t events) {
  absl::StatusOr<core::ActionRecord> now = store->Get(before.id());
  REQUIRE(now.ok());
  CHECK(*now == before);
  CHECK(EventCount(store, before.id()) == events);
}

// `r` (planned) refused before dispatch at `at`: failed, a settled state updated at `at`.
template <class Store>
core::ActionRecord MustSettle(Store& store, const core::ActionRecord& r, absl::Time at) {
  core::ActionTransition refuse = Move(r, core::ActionState::kFailed, at);
  refuse.result = Result(core::ExecutionStatus::kNotRun, at);
  refuse.result->dispatched = false;
  refuse.result->error_message = "plan_drift: resource vm:101 changed";
  return MustMove(store, refuse);
}

// The ids of every page of `view` read `limit` at a time, in order; `between` runs after each
// page with the number of pages read so far.
template <class Store, class Between>
std::vector<std::string> WalkPages(Store& store, core::ActionPageView view, std::size_t limit,
                                   Between between) {
  std::vector<std::string> ids;
  core::ActionPageQuery q;
  q.view = view;
  q.limit = limit;
  for (int pages = 1; pages < 1000; ++pages) {
    absl::StatusOr<std::vector<core::ActionRecord>> page = store->ListPage(q);
    REQUIRE(page.ok());
    REQUIRE(page->size() <= limit);
    for (const core::ActionRecord& r : *page) {
      ids.push_back(r.id());
    }
    if (page->size() < limit) {
      break;
    }
    q.after = core::ActionPagePositionOf(page->back(), view);
    between(pages);
  }
  return ids;
}

template <class Store>
std::vector<std::string> WalkPages(Store& store, core::ActionPageView view, std::size_t limit) {
  return WalkPages(store, view, limit, [](int) {});
}

}  // namespace action_store_contract

template <class MakeStore>
void RunActionStoreContract(MakeStore make) {
  using namespace action_store_contract;  // NOLINT: test-local helpers
  using core::ActionState;
  auto store = make();
  const absl::Time t1 = T0() + absl::Seconds(10) + absl::Nanoseconds(1);

  SECTION("insert stores the record and its initial events, numbered from 1") {
    const core::ActionRecord r = NewRecord("one", true);
    MustInsert(store, r);
    absl::StatusOr<core::ActionRecord> got = store->Get(r.id());
    REQUIRE(got.ok());
    CHECK(*got == r);
    absl::StatusOr<std::vector<core::ActionLifecycleEvent>> events = store->ListEvents(r.id());
    REQUIRE(events.ok());
    REQUIRE(events->size() == 2);
    CHECK((*events)[0].sequence == 1);
    CHECK((*events)[0].state == ActionState::kPlanned);
    CHECK((*events)[0].message == "Action plan created.");
    CHECK((*events)[1].sequence == 2);
    CHECK((*events)[1].state == ActionState::kPendingApproval);
    CHECK((*events)[1].at == r.created_at);
  }

  SECTION("re-inserting the same identity returns the stored record and appends nothing") {
    const core::ActionRecord r = NewRecord("one", false);
    MustInsert(store, r);
    const core::ActionRecord moved = MustMove(store, Move(r, ActionState::kExecuting, t1));
    absl::StatusOr<core::ActionInsertOutcome> again = store->InsertIfAbsent(r, InitialEvents(r));
    REQUIRE(again.ok());
    CHECK_FALSE(again->created);
    CHECK(again->record == moved);
    CHECK(again->record.state == ActionState::kExecuting);
    CHECK(EventCount(store, r.id()) == 2);
  }

  SECTION("the same id with another plan hash is refused and changes nothing") {
    const core::ActionRecord r = NewRecord("one", true);
    MustInsert(store, r);
    core::ActionRecord other = r;
    other.plan.plan_hash = "sha256:" + std::string(64, 'c');
    absl::StatusOr<core::ActionInsertOutcome> clash =
        store->InsertIfAbsent(other, InitialEvents(other));
    CHECK(absl::IsAlreadyExists(clash.status()));
    RequireUnchanged(store, r, 2);
  }

  SECTION("malformed new records are refused and nothing is stored") {
    core::ActionRecord executing = NewRecord("x1", false);
    executing.state = ActionState::kExecuting;
    core::ActionRecord decided = NewRecord("x2", true);
    decided.approvals.push_back(
        {Human("alice"), core::DecisionOutcome::kApproved, "", T0(), decided.plan.plan_hash});
    decided.decision_revision = 1;
    core::ActionRecord with_result = NewRecord("x3", false);
    with_result.result = Result(core::ExecutionStatus::kSucceeded, T0());
    core::ActionRecord mismatched = NewRecord("x4", false);
    mismatched.plan.resource_id = "vm:102";
    core::ActionRecord wrong_state = NewRecord("x5", false);
    wrong_state.plan.requires_approval = true;
    for (const core::ActionRecord& bad :
         {executing, decided, with_result, mismatched, wrong_state}) {
      absl::StatusOr<core::ActionInsertOutcome> out =
          store->InsertIfAbsent(bad, InitialEvents(bad));
      CHECK(absl::IsInvalidArgument(out.status()));
      CHECK(absl::IsNotFound(store->Get(bad.id()).status()));
    }
    const core::ActionRecord good = NewRecord("x6", true);
    CHECK(absl::IsInvalidArgument(store->InsertIfAbsent(good, {}).status()));
    std::vector<core::ActionLifecycleEvent> wrong_last = InitialEvents(good);
    wrong_last.pop_back();
    CHECK(absl::IsInvalidArgument(store->InsertIfAbsent(good, wrong_last).status()));
    std::vector<core::ActionLifecycleEvent> other_action = InitialEvents(good);
    other_action.front().action_id = "act_other";
    CHECK(absl::IsInvalidArgument(store->InsertIfAbsent(good, other_action).status()));
    CHECK(absl::IsNotFound(store->Get(good.id()).status()));
  }

  SECTION("unknown ids are NotFound for every read and transition") {
    const core::ActionRecord r = NewRecord("ghost", false);
    CHECK(absl::IsNotFound(store->Get(r.id()).status()));
    CHECK(absl::IsNotFound(store->ListEvents(r.id()).status()));
    CHECK(absl::IsNotFound(store->Transition(Move(r, ActionState::kExecuting, t1)).status()));
  }

  SECTION("a transition swaps only the mutable columns and appends its events") {
    const core::ActionRecord r = NewRecord("one", false);
    MustInsert(store, r);
    const core::ActionRecord moved = MustMove(store, Move(r, ActionState::kExecuting, t1));
    CHECK(moved.state == ActionState::kExecuting);
    CHECK(moved.updated_at == t1);
    CHECK(moved.request == r.request);
    CHECK(moved.plan == r.plan);
    CHECK(moved.created_at == r.created_at);
    CHECK(moved.approvals.empty());
    CHECK_FALSE(moved.result.has_value());
    absl::StatusOr<std::vector<core::ActionLifecycleEvent>> events = store->ListEvents(r.id());
    REQUIRE(events.ok());
    REQUIRE(events->size() == 2);
    CHECK(events->back().sequence == 2);
    CHECK(events->back().state == ActionState::kExecuting);
    CHECK(events->back().at == t1);
  }

  SECTION("a lost compare on state is Aborted with the current state and writes nothing") {
    const core::ActionRecord r = NewRecord("one", true);
    MustInsert(store, r);
    core::ActionTransition start = Move(r, ActionState::kExecuting, t1);
    start.expected_states = {ActionState::kApproved};
    absl::StatusOr<core::ActionRecord> lost = store->Transition(start);
    REQUIRE(absl::IsAborted(lost.status()));
    std::optional<core::ActionCasConflict> conflict = core::GetActionCasConflict(lost.status());
    REQUIRE(conflict.has_value());
    CHECK(conflict->current_state == ActionState::kPendingApproval);
    CHECK(conflict->current_decision_revision == 0);
    CHECK_FALSE(conflict->identity_mismatch);
    RequireUnchanged(store, r, 2);
  }

  SECTION("a lost compare on the plan identity is Aborted as an identity mismatch") {
    const core::ActionRecord r = NewRecord("one", false);
    MustInsert(store, r);
    core::ActionTransition start = Move(r, ActionState::kExecuting, t1);
    start.expected_plan_hash = "sha256:" + std::string(64, 'f');
    absl::StatusOr<core::ActionRecord> lost = store->Transition(start);
    std::optional<core::ActionCasConflict> conflict = core::GetActionCasConflict(lost.status());
    REQUIRE(conflict.has_value());
    CHECK(conflict->identity_mismatch);
    CHECK(conflict->current_state == ActionState::kPlanned);
    RequireUnchanged(store, r, 1);
  }

  SECTION("a lost compare on the decision revision is Aborted and writes nothing") {
    const core::ActionRecord r = NewRecord("one", true);
    MustInsert(store, r);
    const core::ActionRecord once =
        MustMove(store, Decide(r, Human("alice"), core::DecisionOutcome::kApproved,
                               ActionState::kPendingApproval, t1));
    // A second decision computed from the stale read (revision 0) must lose.
    absl::StatusOr<core::ActionRecord> stale = store->Transition(
        Decide(r, Human("bob"), core::DecisionOutcome::kApproved, ActionState::kApproved, t1));
    std::optional<core::ActionCasConflict> conflict = core::GetActionCasConflict(stale.status());
    REQUIRE(conflict.has_value());
    CHECK(conflict->current_decision_revision == 1);
    CHECK(conflict->current_state == ActionState::kPendingApproval);
    RequireUnchanged(store, once, 3);
  }

  SECTION("decisions append in order and never rewrite earlier ones") {
    const core::ActionRecord r = NewRecord("one", true);
    MustInsert(store, r);
    const core::ActionRecord first =
        MustMove(store, Decide(r, Human("alice"), core::DecisionOutcome::kApproved,
                               ActionState::kPendingApproval, t1));
    const core::ActionRecord second =
        MustMove(store, Decide(first, Human("bob"), core::DecisionOutcome::kApproved,
                               ActionState::kApproved, t1 + absl::Seconds(1)));
    REQUIRE(second.approvals.size() == 2);
    CHECK(second.approvals[0] == first.approvals[0]);
    CHECK(second.approvals[1].actor == Human("bob"));
    CHECK(second.decision_revision == 2);
    CHECK(second.state == ActionState::kApproved);
    absl::StatusOr<std::vector<core::ActionLifecycleEvent>> events = store->ListEvents(r.id());
    REQUIRE(events.ok());
    REQUIRE(events->size() == 4);
    CHECK((*events)[2].kind == core::LifecycleEventKind::kDecision);
    CHECK((*events)[2].decision_revision == std::optional<std::uint32_t>(1));
    CHECK((*events)[2].decision == std::optional(core::DecisionOutcome::kApproved));
    CHECK((*events)[2].actor == std::optional(Human("alice")));
    CHECK((*events)[3].decision_revision == std::optional<std::uint32_t>(2));
  }

  SECTION("decision appends that break the rules are refused and write nothing") {
    const core::ActionRecord r = NewRecord("one", true);
    MustInsert(store, r);
    const core::ActionRecord first =
        MustMove(store, Decide(r, Human("alice"), core::DecisionOutcome::kApproved,
                               ActionState::kPendingApproval, t1));
    core::ActionTransition skip =
        Decide(first, Human("bob"), core::DecisionOutcome::kApproved, ActionState::kApproved, t1);
    skip.new_decision_revision = first.decision_revision + 2;
    CHECK(absl::IsFailedPrecondition(store->Transition(skip).status()));
    core::ActionTransition other_plan =
        Decide(first, Human("bob"), core::DecisionOutcome::kApproved, ActionState::kApproved, t1);
    other_plan.appended_approval->plan_hash = "sha256:" + std::string(64, 'e');
    CHECK(absl::IsFailedPrecondition(store->Transition(other_plan).status()));
    core::ActionTransition twice =
        Decide(first, Human("alice"), core::DecisionOutcome::kApproved, ActionState::kApproved, t1);
    CHECK(absl::IsFailedPrecondition(store->Transition(twice).status()));
    core::ActionTransition silent_bump = Move(first, ActionState::kPendingApproval, t1);
    silent_bump.new_decision_revision = first.decision_revision + 1;
    CHECK(absl::IsFailedPrecondition(store->Transition(silent_bump).status()));
    RequireUnchanged(store, first, 3);
  }

  SECTION("malformed transitions are refused before the compare and write nothing") {
    const core::ActionRecord r = NewRecord("one", false);
    MustInsert(store, r);
    std::vector<core::ActionTransition> bad;
    core::ActionTransition no_states = Move(r, ActionState::kExecuting, t1);
    no_states.expected_states.clear();
    bad.push_back(no_states);
    core::ActionTransition no_hash = Move(r, ActionState::kExecuting, t1);
    no_hash.expected_plan_hash.clear();
    bad.push_back(no_hash);
    core::ActionTransition illegal = Move(r, ActionState::kApproved, t1);  // planned -> approved
    bad.push_back(illegal);
    core::ActionTransition no_events = Move(r, ActionState::kExecuting, t1);
    no_events.events.clear();
    bad.push_back(no_events);
    core::ActionTransition wrong_last = Move(r, ActionState::kExecuting, t1);
    wrong_last.events.back().state = ActionState::kPlanned;
    bad.push_back(wrong_last);
    core::ActionTransition foreign = Move(r, ActionState::kExecuting, t1);
    foreign.events.back().action_id = "act_other";
    bad.push_back(foreign);
    core::ActionTransition result_early = Move(r, ActionState::kExecuting, t1);
    result_early.result = Result(core::ExecutionStatus::kSucceeded, t1);
    bad.push_back(result_early);
    core::ActionTransition refusal_without_result = Move(r, ActionState::kFailed, t1);
    bad.push_back(refusal_without_result);
    core::ActionTransition approval_on_start = Move(r, ActionState::kExecuting, t1);
    approval_on_start.appended_approval = core::ApprovalRecord{
        Human("alice"), core::DecisionOutcome::kApproved, "", t1, r.plan.plan_hash};
    bad.push_back(approval_on_start);
    for (const core::ActionTransition& t : bad) {
      CHECK(absl::IsInvalidArgument(store->Transition(t).status()));
    }
    RequireUnchanged(store, r, 1);
  }

  SECTION("the result is written once with the terminal state and terminal states are final") {
    const core::ActionRecord r = NewRecord("one", false);
    MustInsert(store, r);
    const core::ActionRecord running = MustMove(store, Move(r, ActionState::kExecuting, t1));
    core::ActionTransition failed_completion = Move(running, ActionState::kCompleted, t1);
    failed_completion.result = Result(core::ExecutionStatus::kFailed, t1);
    CHECK(absl::IsInvalidArgument(store->Transition(failed_completion).status()));
    core::ActionTransition done = Move(running, ActionState::kCompleted, t1 + absl::Seconds(2));
    done.result = Result(core::ExecutionStatus::kSucceeded, t1 + absl::Seconds(2));
    const core::ActionRecord completed = MustMove(store, done);
    CHECK(completed.result == done.result);
    // Every way back out of a terminal state is refused.
    for (ActionState to : core::AllActionStates()) {
      core::ActionTransition again = Move(running, to, t1 + absl::Seconds(3));
      if (to == ActionState::kCompleted || to == ActionState::kFailed) {
        again.result = Result(core::ExecutionStatus::kSucceeded, t1);
      }
      absl::StatusOr<core::ActionRecord> out = store->Transition(again);
      CHECK_FALSE(out.ok());
    }
    RequireUnchanged(store, completed, 3);
  }

  SECTION("a failed refusal before dispatch records its result from planned or approved") {
    const core::ActionRecord planned = NewRecord("p", false);
    MustInsert(store, planned);
    core::ActionTransition refuse = Move(planned, ActionState::kFailed, t1);
    refuse.result = Result(core::ExecutionStatus::kNotRun, t1);
    refuse.result->dispatched = false;
    refuse.result->error_message = "plan_drift: resource vm:101 changed";
    const core::ActionRecord failed = MustMove(store, refuse);
    CHECK(failed.state == ActionState::kFailed);
    REQUIRE(failed.result.has_value());
    CHECK(failed.result->error_message.rfind("plan_drift:", 0) == 0);
  }

  SECTION("concurrent identical transitions: exactly one wins, one event is appended") {
    const core::ActionRecord r = NewRecord("race", false);
    MustInsert(store, r);
    constexpr int kThreads = 8;
    std::atomic<int> wins{0};
    std::atomic<int> conflicts{0};
    std::atomic<int> others{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&] {
        absl::StatusOr<core::ActionRecord> out =
            store->Transition(Move(r, ActionState::kExecuting, t1));
        if (out.ok()) {
          ++wins;
        } else if (core::GetActionCasConflict(out.status()).has_value()) {
          ++conflicts;
        } else {
          ++others;
        }
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
    CHECK(wins.load() == 1);
    CHECK(conflicts.load() == kThreads - 1);
    CHECK(others.load() == 0);
    CHECK(EventCount(store, r.id()) == 2);
  }

  SECTION("ListByState filters by state, orders by creation then id, and honours the limit") {
    const core::ActionRecord b = NewRecord("b", true, T0() + absl::Seconds(2));
    const core::ActionRecord a = NewRecord("a", true, T0() + absl::Seconds(2));
    const core::ActionRecord old = NewRecord("old", false, T0());
    const core::ActionRecord run = NewRecord("run", false, T0() + absl::Seconds(1));
    MustInsert(store, b);
    MustInsert(store, a);
    MustInsert(store, old);
    MustInsert(store, run);
    MustMove(store, Move(run, ActionState::kExecuting, t1));
    absl::StatusOr<std::vector<core::ActionRecord>> live =
        store->ListByState({ActionState::kPlanned, ActionState::kPendingApproval}, 10);
    REQUIRE(live.ok());
    REQUIRE(live->size() == 3);
    CHECK((*live)[0].id() == old.id());
    CHECK((*live)[1].id() == a.id());
    CHECK((*live)[2].id() == b.id());
    // The limit holds across the states (the oldest first, whichever state), and a state named
    // twice lists its records once.
    absl::StatusOr<std::vector<core::ActionRecord>> two = store->ListByState(
        {ActionState::kPendingApproval, ActionState::kPlanned, ActionState::kPendingApproval}, 2);
    REQUIRE(two.ok());
    REQUIRE(two->size() == 2);
    CHECK((*two)[0].id() == old.id());
    CHECK((*two)[1].id() == a.id());
    absl::StatusOr<std::vector<core::ActionRecord>> one =
        store->ListByState({ActionState::kPendingApproval}, 1);
    REQUIRE(one.ok());
    REQUIRE(one->size() == 1);
    CHECK(one->front().id() == a.id());
    absl::StatusOr<std::vector<core::ActionRecord>> executing =
        store->ListByState({ActionState::kExecuting}, 10);
    REQUIRE(executing.ok());
    REQUIRE(executing->size() == 1);
    CHECK(executing->front().state == ActionState::kExecuting);
    CHECK(absl::IsInvalidArgument(store->ListByState({ActionState::kPlanned}, 0).status()));
    CHECK(absl::IsInvalidArgument(store->ListByState({ActionState::kPlanned}, 1001).status()));
  }

  SECTION("ListPage orders each view totally and its keyset pages join to the whole view") {
    // In flight, oldest created first with ties by id: old, a, b (a and b created together),
    // run (executing). Settled, most recently updated first with ties by id: s3, s1 and s2
    // (settled together), rej.
    const absl::Time t = T0();
    const core::ActionRecord b = MustInsert(store, NewRecord("b", true, t + absl::Seconds(2)));
    const core::ActionRecord a = MustInsert(store, NewRecord("a", true, t + absl::Seconds(2)));
    MustInsert(store, NewRecord("old", false, t));
    const core::ActionRecord run = MustInsert(store, NewRecord("run", false, t + absl::Seconds(3)));
    MustMove(store, Move(run, ActionState::kExecuting, t1));
    const core::ActionRecord s1 = MustInsert(store, NewRecord("s1", false, t));
    const core::ActionRecord s2 = MustInsert(store, NewRecord("s2", false, t + absl::Seconds(9)));
    const core::ActionRecord s3 = MustInsert(store, NewRecord("s3", false, t + absl::Seconds(1)));
    MustSettle(store, s2, t + absl::Minutes(2));
    MustSettle(store, s1, t + absl::Minutes(2));
    MustSettle(store, s3, t + absl::Minutes(3) + absl::Nanoseconds(5));
    const core::ActionRecord rej = MustInsert(store, NewRecord("rej", true, t));
    MustMove(store, Decide(rej, Human("alice"), core::DecisionOutcome::kRejected,
                           ActionState::kRejected, t + absl::Minutes(1)));
    const std::vector<std::string> in_flight = {"act_old", "act_a", "act_b", "act_run"};
    const std::vector<std::string> settled = {"act_s3", "act_s1", "act_s2", "act_rej"};
    for (std::size_t limit : {1, 2, 3, 4, 5, 1000}) {
      INFO("limit " << limit);
      CHECK(WalkPages(store, core::ActionPageView::kInFlight, limit) == in_flight);
      CHECK(WalkPages(store, core::ActionPageView::kSettled, limit) == settled);
    }
    core::ActionPageQuery past;
    past.view = core::ActionPageView::kSettled;
    past.after = core::ActionPagePosition{t, "z"};
    absl::StatusOr<std::vector<core::ActionRecord>> none = store->ListPage(past);
    REQUIRE(none.ok());
    CHECK(none->empty());
    core::ActionPageQuery bad;
    bad.limit = 0;
    CHECK(absl::IsInvalidArgument(store->ListPage(bad).status()));
    bad.limit = 1001;
    CHECK(absl::IsInvalidArgument(store->ListPage(bad).status()));
  }

  SECTION("ListPage walks repeat and skip nothing that stays in the view while others change") {
    // 12 in-flight actions, one per second; a walk of 3 per page that, between pages, plans a new
    // action (later than all), settles one already listed and one not listed yet.
    std::vector<core::ActionRecord> made;
    for (int i = 0; i < 12; ++i) {
      made.push_back(MustInsert(
          store, NewRecord("w" + std::to_string(10 + i), false, T0() + absl::Seconds(i))));
    }
    std::vector<std::string> settled_ids;
    int next = 0;
    const std::vector<std::string> walked =
        WalkPages(store, core::ActionPageView::kInFlight, 3, [&](int pages) {
          const absl::Time at = T0() + absl::Hours(1) + absl::Seconds(pages);
          MustInsert(store, NewRecord("n" + std::to_string(next++), false,
                                      T0() + absl::Minutes(30) + absl::Seconds(pages)));
          const std::size_t listed = static_cast<std::size_t>(pages) * 3 - 1;  // last on page
          const std::size_t ahead = listed + 2;  // the page after next
          MustSettle(store, made[listed], at);
          settled_ids.push_back(made[listed].id());
          if (ahead < made.size()) {
            MustSettle(store, made[ahead], at + absl::Milliseconds(1));
            settled_ids.push_back(made[ahead].id());
          }
        });
    std::vector<std::string> sorted = walked;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // none twice
    for (const core::ActionRecord& r : made) {
      const bool left =
          std::find(settled_ids.begin(), settled_ids.end(), r.id()) != settled_ids.end();
      const bool seen = std::find(walked.begin(), walked.end(), r.id()) != walked.end();
      INFO(r.id());
      if (!left) {
        CHECK(seen);  // stayed in flight throughout: listed exactly once
      }
    }
    // Every action the walk planned after its start comes after the start's last one: listed.
    for (int i = 0; i < next; ++i) {
      CHECK(std::find(walked.begin(), walked.end(), "act_n" + std::to_string(i)) != walked.end());
    }
    // The settled view lists exactly the actions settled, newest first.
    std::vector<std::string> expect_settled(settled_ids.rbegin(), settled_ids.rend());
    CHECK(WalkPages(store, core::ActionPageView::kSettled, 2) == expect_settled);
  }
}

}  // namespace pulse::testing
