// Patrol's safety rules at the seam (issue 20, items 2 and 3): only an investigation that
// completed hands its proposal to the action lifecycle, and the autonomy in force (level,
// Autopilot acknowledgement, remediation lock, maintenance window) is read again at admission
// and immediately before dispatch, never above the level the run started at.
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "patrol_test_support.h"

namespace pulse::testing::patrol {
namespace {

using core::AutonomyLevel;
using core::Category;
using core::FixHoldReason;
using core::ProposalDropReason;

const std::string kWorkerExited =
    Fixture::Id("app-container:worker", Category::kReliability, "container-exited");

// Forwards to the fixture's store; runs `on_get` before each Get (the lock reads of the
// admission check, of the lifecycle's lock gate and of the dispatch-time re-check).
class HookedOperatorState final : public core::OperatorStateStore {
 public:
  explicit HookedOperatorState(core::OperatorStateStore& inner) : inner_(inner) {}
  absl::StatusOr<core::OperatorState> Get(std::string_view id) override {
    if (on_get) {
      on_get();
    }
    return inner_.Get(id);
  }
  absl::StatusOr<std::vector<core::OperatorState>> GetMany(
      const std::vector<std::string>& ids) override {
    if (on_get) {
      on_get();
    }
    return inner_.GetMany(ids);
  }
  absl::Status Set(const core::OperatorState& state) override { return inner_.Set(state); }
  absl::Status Clear(std::string_view id) override { return inner_.Clear(id); }
  absl::StatusOr<std::vector<std::string>> LocalOnlyResourceIds() override {
    return inner_.LocalOnlyResourceIds();
  }
  absl::StatusOr<std::vector<core::OperatorState>> WithNotes() override {
    return inner_.WithNotes();
  }
  std::function<void()> on_get;

 private:
  core::OperatorStateStore& inner_;
};

// Forwards to the script; runs the hook registered for a call index before that call. A call
// whose cancellation flag is up by then ends as a real provider's does.
class HookedProvider final : public core::LlmProvider {
 public:
  explicit HookedProvider(ScriptedLlmProvider& script) : script_(script) {}
  absl::Status Stream(const core::LlmRequest& request,
                      absl::FunctionRef<void(const core::LlmStreamEvent&)> on_event) override {
    if (auto it = hooks.find(calls_++); it != hooks.end()) {
      it->second();
    }
    if (request.cancelled != nullptr && request.cancelled->load()) {
      return absl::CancelledError("the request was cancelled");
    }
    return script_.Stream(request, on_event);
  }
  std::map<std::size_t, std::function<void()>> hooks;

 private:
  ScriptedLlmProvider& script_;
  std::size_t calls_ = 0;
};

// The fixture's fakes, with a PatrolService and ActionServices that read the lock through
// HookedOperatorState and call the model through HookedProvider.
struct Rig {
  Fixture f;
  HookedOperatorState lock{f.operator_state};
  HookedProvider provider{f.provider};
  core::ActionService actions{f.action_store, f.fleet, lock, f.audit, f.clock};
  core::ActionService autopilot{f.action_store, f.fleet, lock, f.audit, f.clock, ElevatedCeiling()};
  std::unique_ptr<core::PatrolService> patrol;

  Rig() {
    core::PatrolServiceOptions options;
    options.autopilot_actions = &autopilot;
    patrol = std::make_unique<core::PatrolService>(
        f.fleet, f.findings, actions, lock, f.runs, f.history, f.clock, f.ids,
        core::PatrolModel{provider, f.sessions, f.runner, core::ModelRoute{}, nullptr},
        std::move(options));
  }

  void Set(AutonomyLevel level, bool acknowledged = false) {
    core::AutonomySettings s;
    s.level = level;
    if (acknowledged) {
      s.acknowledgement = core::AutopilotAcknowledgement{"ack-1", "tok_human", f.clock.Now()};
    }
    REQUIRE(patrol->SetAutonomy(s).ok());
  }

  // Runs `hook` once, at the first lock read after the plan exists: the admission check has
  // read the level by then, so the change lands between plan and dispatch.
  void AfterPlan(std::function<void()> hook) {
    lock.on_get = [this, hook = std::move(hook), fired = false]() mutable {
      if (!fired && f.action_store.size() > 0) {
        fired = true;
        hook();
      }
    };
  }

  // A scoped run over the worker: the Watch pass, then its investigation proposing `start`
  // and then `rest` (by default one final text turn).
  core::PatrolRemediation RunWorker(std::vector<ScriptedTurn> rest = {}) {
    f.provider.Add(ScriptedTurn::Text("The worker exited."));
    f.provider.Add(
        ScriptedTurn::Calls({Call("p1", "patrol_propose_action",
                                  R"({"resource_id":"app-container:worker","capability":"start",)"
                                  R"("rationale":"the worker exited with code 1"})")}));
    if (rest.empty()) {
      rest.push_back(ScriptedTurn::Text("Proposed a start."));
    }
    for (ScriptedTurn& turn : rest) {
      f.provider.Add(std::move(turn));
    }
    core::PatrolScope scope;
    scope.resource_ids = {"app-container:worker"};
    absl::StatusOr<core::PatrolRunRecord> r = patrol->Run(scope, core::PatrolTrigger::kManual);
    REQUIRE(r.ok());
    for (const core::PatrolRemediation& m : r->remediations) {
      if (m.finding_id == kWorkerExited) {
        return m;
      }
    }
    FAIL("no remediation for the worker");
    return {};
  }

  std::size_t Withdrawn() {
    std::size_t n = 0;
    for (const core::AuditEntry& e : f.audit.entries()) {
      n += e.message.find("dispatch_authority_withdrawn") != std::string::npos ? 1 : 0;
    }
    return n;
  }
};

TEST_CASE("a proposal from an investigation that did not complete is dropped with its reason",
          "[core][patrol][safety]") {
  struct Case {
    const char* name;
    std::function<void(Rig&)> arrange;
    std::vector<ScriptedTurn> rest;
    ProposalDropReason reason;
  };
  // The same refused call twice: the loop's repeated-denial bound stops the run.
  const core::ToolCall denied = Call("c9", "pulse_control",
                                     R"({"type":"resource","resource_id":"app-container:worker",)"
                                     R"("capability":"start","reason":"now"})");
  std::vector<Case> cases;
  cases.push_back({"provider error",
                   [](Rig&) {},
                   {ScriptedTurn::Error(absl::InvalidArgumentError("context too long"))},
                   ProposalDropReason::kProviderError});
  cases.push_back({"budget stop",
                   [](Rig&) {},
                   {ScriptedTurn::Calls({denied}), ScriptedTurn::Calls({denied})},
                   ProposalDropReason::kBudgetStop});
  cases.push_back({"shutdown",
                   [](Rig& rig) { rig.provider.hooks[2] = [&rig] { rig.patrol->Cancel(); }; },
                   {},
                   ProposalDropReason::kCancelled});
  for (Case& c : cases) {
    INFO(c.name);
    Rig rig;
    rig.Set(AutonomyLevel::kAssisted);  // would execute the low_risk start
    c.arrange(rig);
    const core::PatrolRemediation m = rig.RunWorker(std::move(c.rest));
    CHECK(m.outcome == "proposal_dropped");
    CHECK(m.proposal_dropped_reason == c.reason);
    CHECK_FALSE(m.hold_reason.has_value());
    CHECK(m.action_id.empty());
    CHECK(rig.f.action_store.size() == 0);
    CHECK(rig.f.fleet.dispatch_calls() == 0);
    CHECK(rig.f.findings.Get(kWorkerExited)->investigation_status ==
          core::InvestigationStatus::kFailed);
  }
}

TEST_CASE("a completed investigation still hands its proposal on", "[core][patrol][safety]") {
  Rig rig;
  rig.Set(AutonomyLevel::kAssisted);
  const core::PatrolRemediation m = rig.RunWorker();
  CHECK(m.outcome == "fix_verified");
  CHECK_FALSE(m.proposal_dropped_reason.has_value());
  CHECK_FALSE(m.hold_reason.has_value());
  CHECK(rig.f.fleet.executions() == 1);
}

TEST_CASE("lowering the level between plan and dispatch stops the dispatch",
          "[core][patrol][safety]") {
  Rig rig;
  rig.Set(AutonomyLevel::kAssisted);
  rig.AfterPlan([&rig] { rig.Set(AutonomyLevel::kApproval); });
  const core::PatrolRemediation m = rig.RunWorker();
  CHECK(m.outcome == "fix_queued");
  CHECK(m.hold_reason == FixHoldReason::kAutonomyLowered);
  CHECK(m.note.find("approval") != std::string::npos);
  CHECK(m.action_state == "planned");
  REQUIRE_FALSE(m.action_id.empty());
  CHECK(rig.f.fleet.dispatch_calls() == 0);
  CHECK(rig.f.action_store.Get(m.action_id)->state == core::ActionState::kPlanned);
  CHECK(rig.Withdrawn() == 1);  // the lifecycle audited the refused dispatch
  CHECK(rig.f.findings.Get(kWorkerExited)->investigation_outcome ==
        core::InvestigationOutcome::kFixQueued);
}

TEST_CASE("revoking Autopilot between plan and dispatch stops the fix", "[core][patrol][safety]") {
  Rig rig;
  rig.Set(AutonomyLevel::kFull, /*acknowledged=*/true);
  rig.AfterPlan([&rig] { rig.Set(AutonomyLevel::kFull, /*acknowledged=*/false); });
  const core::PatrolRemediation m = rig.RunWorker();
  CHECK(m.outcome == "fix_queued");
  CHECK(m.hold_reason == FixHoldReason::kAutopilotRevoked);
  CHECK(rig.f.fleet.dispatch_calls() == 0);
  CHECK(rig.Withdrawn() == 1);
}

TEST_CASE("a maintenance window opened between plan and dispatch stops the dispatch",
          "[core][patrol][safety]") {
  Rig rig;
  rig.Set(AutonomyLevel::kAssisted);
  rig.AfterPlan([&rig] {
    core::OperatorState window;
    window.resource_id = "app-container:worker";
    window.maintenance_start_at = rig.f.clock.Now() - absl::Minutes(1);
    window.maintenance_end_at = rig.f.clock.Now() + absl::Hours(1);
    window.set_at = rig.f.clock.Now();
    window.set_by = "tok_human";
    REQUIRE(rig.f.operator_state.Set(window).ok());
  });
  const core::PatrolRemediation m = rig.RunWorker();
  CHECK(m.outcome == "fix_queued");
  CHECK(m.hold_reason == FixHoldReason::kMaintenanceWindow);
  CHECK(rig.f.fleet.dispatch_calls() == 0);
}

TEST_CASE(
    "the level is read again at admission: lowered it holds or drops, raised it never "
    "adds authority",
    "[core][patrol][safety]") {
  SECTION("lowered to approval while the investigation runs: planned and held") {
    Rig rig;
    rig.Set(AutonomyLevel::kAssisted);
    rig.provider.hooks[2] = [&rig] { rig.Set(AutonomyLevel::kApproval); };
    const core::PatrolRemediation m = rig.RunWorker();
    CHECK(m.outcome == "fix_queued");
    CHECK(m.hold_reason == FixHoldReason::kAutonomyLowered);
    CHECK(rig.f.fleet.dispatch_calls() == 0);
    CHECK(rig.Withdrawn() == 0);  // held at admission, Execute was never asked
  }
  SECTION("lowered to monitor: the proposal is dropped, nothing planned") {
    Rig rig;
    rig.Set(AutonomyLevel::kAssisted);
    rig.provider.hooks[2] = [&rig] { rig.Set(AutonomyLevel::kMonitor); };
    const core::PatrolRemediation m = rig.RunWorker();
    CHECK(m.outcome == "proposal_dropped");
    CHECK(m.proposal_dropped_reason == ProposalDropReason::kAutonomyLowered);
    CHECK(rig.f.action_store.size() == 0);
  }
  SECTION("raised to assisted during an approval run: still waits for a human") {
    Rig rig;
    rig.Set(AutonomyLevel::kApproval);
    rig.provider.hooks[2] = [&rig] { rig.Set(AutonomyLevel::kAssisted); };
    const core::PatrolRemediation m = rig.RunWorker();
    CHECK(m.outcome == "fix_queued");
    CHECK(m.hold_reason == FixHoldReason::kNotAutoExecutable);
    CHECK(rig.f.fleet.dispatch_calls() == 0);
  }
}

TEST_CASE("drop and hold reasons survive the run record's JSON form, unknown ones are refused",
          "[core][patrol][safety]") {
  core::PatrolRunRecord r;
  r.id = "patrol-1";
  r.started_at = absl::FromUnixSeconds(1'700'000'000);
  r.status = core::PatrolRunStatus::kIssuesFound;
  core::PatrolRemediation dropped;
  dropped.finding_id = "f-1";
  dropped.outcome = "proposal_dropped";
  dropped.proposal_dropped_reason = ProposalDropReason::kBudgetStop;
  core::PatrolRemediation held;
  held.finding_id = "f-2";
  held.outcome = "fix_queued";
  held.hold_reason = FixHoldReason::kAutopilotRevoked;
  r.remediations = {dropped, held};
  const std::string json = core::PatrolRunToJson(r);
  CHECK(json.find(R"("proposal_dropped_reason":"budget_stop")") != std::string::npos);
  CHECK(json.find(R"("hold_reason":"autopilot_revoked")") != std::string::npos);
  absl::StatusOr<core::PatrolRunRecord> back = core::PatrolRunFromJson(json);
  REQUIRE(back.ok());
  CHECK(*back == r);
  std::string bad = json;
  bad.replace(bad.find("budget_stop"), 11, "budget_stoq");
  CHECK(absl::IsInvalidArgument(core::PatrolRunFromJson(bad).status()));
  for (int i = 0; i < 8; ++i) {
    const auto reason = static_cast<FixHoldReason>(i);
    CHECK(core::ParseFixHoldReason(core::ToString(reason)) == reason);
  }
  for (int i = 0; i < 7; ++i) {
    const auto reason = static_cast<ProposalDropReason>(i);
    CHECK(core::ParseProposalDropReason(core::ToString(reason)) == reason);
  }
}

}  // namespace
}  // namespace pulse::testing::patrol
