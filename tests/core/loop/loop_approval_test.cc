// Approvals: pulse_control plans through ActionService; a plan that needs a decision suspends
// the run durably; Resume executes the decided plan (bound to its hash) and feeds the outcome to
// the stored call; a rejection is a non-error result that changes no FSM state.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "loop_test_support.h"
#include "pulse/core/actions/action_reconciler.h"

namespace pulse::testing::loop {
namespace {

using core::ActionState;
using core::ControlLevel;
using core::LoopEventType;
using core::MessageRole;
using core::RunEnd;
using core::SessionState;

constexpr const char* kReadVm = R"({"action":"status","resource_id":"vm:101"})";
constexpr const char* kQueryVm = R"({"action":"get","resource_id":"vm:101"})";

core::ActionActor Alice() { return core::ActionActor{core::ActorKind::kHuman, "alice"}; }

// Runs "resolve vm:101, then pulse_control restart" up to the suspension.
core::SessionRecord SuspendOnRestart(Harness& h) {
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls({Call("c1", "pulse_control", std::string(kRestartVmArgs))},
                                     "I'll plan a restart."));
  absl::StatusOr<core::RunOutcome> out = h.Run("web-01 is hung, restart it");
  REQUIRE(out.ok());
  REQUIRE(out->end == RunEnd::kAwaitingApproval);
  CHECK(out->fsm_state == SessionState::kReading);
  return h.Session();
}

void DecideOn(Harness& h, const core::SessionRecord& session, core::DecisionOutcome outcome) {
  core::DecideRequest decide;
  decide.action_id = session.suspended->action_id;
  decide.outcome = outcome;
  decide.reason = "reviewed";
  decide.plan_hash = session.suspended->plan_hash;
  decide.actor = Alice();
  absl::StatusOr<core::Refusable<core::DecideOutcome>> decided = h.actions.Decide(decide);
  REQUIRE(decided.ok());
  REQUIRE_FALSE(decided->refused());
}

TEST_CASE("a plan needing approval suspends the run with approval_needed and no dispatch",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  const core::SessionRecord session = SuspendOnRestart(h);
  CHECK(h.fleet.dispatch_calls() == 0);
  CHECK(h.provider.RequestCount() == 2);

  const std::vector<std::string> types = h.events.Types();
  REQUIRE(types.size() >= 3);
  CHECK(types[types.size() - 1] == "done");
  CHECK(types[types.size() - 2] == "approval_needed");
  CHECK(types[types.size() - 3] == "tool_end");
  const rapidjson::Document approval = FirstEvent(h.events, LoopEventType::kApprovalNeeded);
  CHECK(Str(approval, "action_id").rfind("act_", 0) == 0);
  CHECK(Str(approval, "plan_hash").rfind("sha256:", 0) == 0);
  CHECK(Str(approval, "risk") == "medium");
  CHECK(Str(approval, "capability") == "restart");
  CHECK(Str(approval, "resource_id") == "vm:101");
  CHECK(Str(approval, "tool_id") == "c1");
  const rapidjson::Value* preflight = core::GetMember(approval, "preflight");
  REQUIRE(preflight != nullptr);
  CHECK(Str(*preflight, "target") == "vm:101");
  const rapidjson::Document done = FirstEvent(h.events, LoopEventType::kDone);
  CHECK(Str(done, "outcome") == "awaiting_approval");

  // Durable: the pending call, its plan and the run's counters are in the session store.
  CHECK(session.status == core::SessionStatus::kAwaitingApproval);
  REQUIRE(session.suspended.has_value());
  CHECK(session.suspended->action_id == Str(approval, "action_id"));
  CHECK(session.suspended->plan_hash == Str(approval, "plan_hash"));
  CHECK(session.suspended->tool_call_id == "c1");
  CHECK(session.suspended->counters.turns == 2);
  const core::Message& placeholder = session.transcript[session.suspended->transcript_index];
  CHECK(placeholder.tool_call_id == "c1");
  CHECK_FALSE(placeholder.is_error);
  CHECK(placeholder.content.find("\"execution_requested\":false") != std::string::npos);
  absl::StatusOr<core::ActionRecord> stored = h.action_store.Get(session.suspended->action_id);
  REQUIRE(stored.ok());
  CHECK(stored->state == ActionState::kPendingApproval);
}

TEST_CASE("approval suspend then approve then resume then verification required", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  const core::SessionRecord suspended = SuspendOnRestart(h);
  DecideOn(h, suspended, core::DecisionOutcome::kApproved);
  h.events.Clear();

  h.provider.Add(ScriptedTurn::Text("web-01 was restarted."));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("web-01 is running again after the restart."));
  absl::StatusOr<core::RunOutcome> out = h.Resume();
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == "web-01 is running again after the restart.");
  CHECK(h.fleet.dispatch_calls() == 1);
  CHECK(h.action_store.Get(suspended.suspended->action_id)->state == ActionState::kCompleted);

  // The first request after the resume answers the stored call: no re-emission by the model.
  REQUIRE(h.provider.RequestCount() == 5);
  const core::LlmRequest resumed = h.provider.Request(2);
  std::optional<core::Message> result = ResultFor(resumed, "c1");
  REQUIRE(result.has_value());
  CHECK_FALSE(result->is_error);
  CHECK(result->content.find("\"status\":\"completed\"") != std::string::npos);
  CHECK(result->content.find("\"dispatched\":true") != std::string::npos);
  int control_calls = 0;
  for (const core::Message& m : resumed.messages) {
    for (const core::ToolCall& call : m.tool_calls) {
      control_calls += call.name == "pulse_control" ? 1 : 0;
    }
  }
  CHECK(control_calls == 1);
  // The dispatched write requires verification: the answer is refused and a user-role
  // instruction follows.
  const core::LlmRequest verify = h.provider.Request(3);
  CHECK(verify.messages.back().role == MessageRole::kUser);
  CHECK(verify.messages.back().content.find("pulse_control") != std::string::npos);
  CHECK(out->fsm_state == SessionState::kReading);

  const std::vector<std::string> types = h.events.Types();
  REQUIRE(types.size() >= 5);
  CHECK(types[0] == "session");
  CHECK(types[1] == "tool_start");
  CHECK(types[2] == "workflow_state");
  CHECK(types[3] == "tool_progress");
  CHECK(types[4] == "tool_end");
  CHECK(types.back() == "done");
  CHECK(h.Session().status == core::SessionStatus::kIdle);
  CHECK_FALSE(h.Session().suspended.has_value());
}

TEST_CASE("approval rejected then resume gives a non-error result and no FSM change",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  const core::SessionRecord suspended = SuspendOnRestart(h);
  const core::SessionSnapshot fsm_before = suspended.fsm;
  DecideOn(h, suspended, core::DecisionOutcome::kRejected);

  h.provider.Add(ScriptedTurn::Text("The restart was rejected; nothing changed."));
  absl::StatusOr<core::RunOutcome> out = h.Resume();
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(h.fleet.dispatch_calls() == 0);
  REQUIRE(h.provider.RequestCount() == 3);  // answered at once: no verification round
  std::optional<core::Message> result = ResultFor(h.provider.Request(2), "c1");
  REQUIRE(result.has_value());
  CHECK_FALSE(result->is_error);
  CHECK(result->content.find("\"status\":\"rejected\"") != std::string::npos);
  CHECK(result->content.find("\"dispatched\":false") != std::string::npos);
  CHECK_FALSE(core::ExtractToolErrorCode(result->content).has_value());
  const core::SessionSnapshot fsm_after = h.Session().fsm;
  CHECK(fsm_after.state == fsm_before.state);
  CHECK(fsm_after.wrote_this_episode == fsm_before.wrote_this_episode);
  CHECK(fsm_after.last_write_tool == fsm_before.last_write_tool);
  CHECK(out->fsm_state == SessionState::kReading);
}

TEST_CASE("resuming before a decision is refused and the run stays suspended", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  SuspendOnRestart(h);
  h.events.Clear();
  absl::StatusOr<core::RunOutcome> out = h.Resume();
  CHECK(absl::IsFailedPrecondition(out.status()));
  CHECK(h.provider.RequestCount() == 2);
  CHECK(h.fleet.dispatch_calls() == 0);
  CHECK(h.events.Types() == std::vector<std::string>{"session", "error", "done"});
  const rapidjson::Document error = FirstEvent(h.events, LoopEventType::kError);
  CHECK(Str(error, "reason") == "approval_pending");
  const core::SessionRecord session = h.Session();
  CHECK(session.status == core::SessionStatus::kAwaitingApproval);
  CHECK(session.suspended.has_value());
}

TEST_CASE("a resume whose caller lost the authority executes nothing", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  const core::SessionRecord suspended = SuspendOnRestart(h);
  DecideOn(h, suspended, core::DecisionOutcome::kApproved);
  h.provider.Add(ScriptedTurn::Text("I could not execute the restart."));
  absl::StatusOr<core::RunOutcome> out = h.Resume("ses_test", Policy(ControlLevel::kReadOnly));
  REQUIRE(out.ok());
  CHECK(h.fleet.dispatch_calls() == 0);
  CHECK(CodeFor(h.provider.Request(2), "c1") == "POLICY_BLOCKED");
  CHECK(out->fsm_state == SessionState::kReading);
}

TEST_CASE("resuming a session with nothing suspended is refused", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Text("hello"));
  REQUIRE(h.Run("hi").ok());
  CHECK(absl::IsFailedPrecondition(h.Resume().status()));
  CHECK(absl::IsNotFound(h.Resume("ses_unknown").status()));
}

TEST_CASE("a new message supersedes a suspension without executing the plan", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  const core::SessionRecord suspended = SuspendOnRestart(h);
  h.provider.Add(ScriptedTurn::Text("Understood, I will not restart it."));
  REQUIRE(h.Run("never mind").ok());
  const core::SessionRecord session = h.Session();
  CHECK_FALSE(session.suspended.has_value());
  CHECK(session.transcript[suspended.suspended->transcript_index].content.find("superseded") !=
        std::string::npos);
  CHECK(absl::IsFailedPrecondition(h.Resume().status()));
  CHECK(h.fleet.dispatch_calls() == 0);
  CHECK(h.action_store.Get(suspended.suspended->action_id)->state == ActionState::kPendingApproval);
}

TEST_CASE("an autonomous run executes an approval-free plan at once and must verify it",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  const core::InvocationPolicy policy = Policy(ControlLevel::kAutonomous);
  h.provider.Add(ScriptedTurn::Calls(
      {Call("q1", "pulse_query", R"({"action":"get","resource_id":"service:pve1/nginx"})")}));
  h.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "pulse_control",
            R"({"type":"resource","resource_id":"service:pve1/nginx","capability":"reload",)"
            R"("reason":"config changed"})")}));
  h.provider.Add(ScriptedTurn::Text("Reloaded nginx."));
  h.provider.Add(ScriptedTurn::Calls(
      {Call("r1", "pulse_read", R"({"action":"status","resource_id":"service:pve1/nginx"})")}));
  h.provider.Add(ScriptedTurn::Text("nginx reloaded and active."));
  absl::StatusOr<core::RunOutcome> out = h.Run("reload nginx", policy);
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(h.fleet.dispatch_calls() == 1);
  CHECK(h.events.Count(LoopEventType::kApprovalNeeded) == 0);
  CHECK(h.provider.Request(3).messages.back().role == MessageRole::kUser);
  std::optional<core::Message> result = ResultFor(h.provider.Request(2), "c1");
  REQUIRE(result.has_value());
  CHECK(result->content.find("\"dispatched\":true") != std::string::npos);
}

// Runs "resolve nginx, then pulse_control reload" (approval-free by the capability's own rule)
// under the default controlled policy, up to the suspension.
core::SessionRecord SuspendOnReload(Harness& h) {
  h.provider.Add(ScriptedTurn::Calls(
      {Call("q1", "pulse_query", R"({"action":"get","resource_id":"service:pve1/nginx"})")}));
  h.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "pulse_control",
            R"({"type":"resource","resource_id":"service:pve1/nginx","capability":"reload",)"
            R"("reason":"config changed"})")}));
  absl::StatusOr<core::RunOutcome> out = h.Run("reload nginx");
  REQUIRE(out.ok());
  REQUIRE(out->end == RunEnd::kAwaitingApproval);
  return h.Session();
}

TEST_CASE(
    "a controlled session's approval-free plan waits in pending_approval with the "
    "session's posture as its reason",
    "[core][loop][consent]") {
  Harness h;
  h.BindDefaults();
  const core::SessionRecord session = SuspendOnReload(h);
  CHECK(h.fleet.dispatch_calls() == 0);
  absl::StatusOr<core::ActionRecord> record = h.action_store.Get(session.suspended->action_id);
  REQUIRE(record.ok());
  CHECK(record->state == ActionState::kPendingApproval);
  CHECK(record->request.approval_posture == "control_level:controlled");
  CHECK(record->plan.message.find("control_level:controlled") != std::string::npos);
  const rapidjson::Document announced = FirstEvent(h.events, LoopEventType::kApprovalNeeded);
  CHECK(Str(announced, "state") == "pending_approval");
  CHECK(Str(announced, "approval_reason").find("control_level:controlled") != std::string::npos);

  // A human resuming the conversation is not an approval: nothing runs, the run stays
  // suspended, and automation cannot stand in either.
  for (const core::ActionActor& actor :
       {Alice(), core::ActionActor{core::ActorKind::kAgent, "assistant"}}) {
    absl::StatusOr<core::RunOutcome> resumed = h.Resume("ses_test", Policy(), actor);
    CHECK(absl::IsFailedPrecondition(resumed.status()));
    CHECK(h.fleet.dispatch_calls() == 0);
    CHECK(h.Session().status == core::SessionStatus::kAwaitingApproval);
  }
  CHECK(h.provider.RequestCount() == 2);
}

TEST_CASE("a controlled approval-free plan runs from its recorded approval",
          "[core][loop][consent]") {
  Harness h;
  h.BindDefaults();
  const core::SessionRecord session = SuspendOnReload(h);
  DecideOn(h, session, core::DecisionOutcome::kApproved);
  h.provider.Add(ScriptedTurn::Calls(
      {Call("r1", "pulse_read", R"({"action":"status","resource_id":"service:pve1/nginx"})")}));
  h.provider.Add(ScriptedTurn::Text("Reloaded and active."));
  absl::StatusOr<core::RunOutcome> out = h.Resume();
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(h.fleet.dispatch_calls() == 1);
  absl::StatusOr<core::ActionRecord> record = h.action_store.Get(session.suspended->action_id);
  REQUIRE(record.ok());
  CHECK(record->state == ActionState::kCompleted);
  REQUIRE(record->approvals.size() == 1);
  CHECK(record->approvals[0].actor == Alice());
  CHECK(record->approvals[0].plan_hash == session.suspended->plan_hash);
}

TEST_CASE("resume refuses to execute a plan that has no approval record", "[core][loop][consent]") {
  Harness h;
  h.BindDefaults();
  core::SessionRecord session = SuspendOnReload(h);
  // A suspension on an approval-free plan with no record of consent (as stored before
  // consent became an approval): planned, with no approvals.
  core::ActionRequest request;
  request.request_id = "legacy-1";
  request.resource_id = "service:pve1/nginx";
  request.capability_name = "reload";
  request.reason = "config changed";
  request.actor = core::ActionActor{core::ActorKind::kAgent, "assistant"};
  absl::StatusOr<core::Refusable<core::PlanOutcome>> planned = h.actions.Plan(request);
  REQUIRE(planned.ok());
  REQUIRE_FALSE(planned->refused());
  const core::ActionRecord& legacy = planned->value().record;
  REQUIRE(legacy.state == ActionState::kPlanned);
  session.suspended->action_id = legacy.id();
  session.suspended->plan_hash = legacy.plan.plan_hash;
  REQUIRE(h.sessions.Update(session).ok());

  h.provider.Add(ScriptedTurn::Text("Not executed: it needs an approval."));
  absl::StatusOr<core::RunOutcome> out = h.Resume();
  REQUIRE(out.ok());
  CHECK(h.fleet.dispatch_calls() == 0);
  CHECK(h.action_store.Get(legacy.id())->state == ActionState::kPlanned);
  CHECK(CodeFor(h.provider.Request(2), "c1") == "POLICY_BLOCKED");
  std::optional<core::Message> result = ResultFor(h.provider.Request(2), "c1");
  REQUIRE(result.has_value());
  CHECK(result->content.find("action_not_approved") != std::string::npos);
}

TEST_CASE("a plan refused by the lifecycle is an error result and suspends nothing",
          "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryVm)}));
  h.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "pulse_control",
            R"({"type":"resource","resource_id":"vm:101","capability":"teleport",)"
            R"("reason":"why not"})")}));
  h.provider.Add(ScriptedTurn::Text("vm:101 has no teleport capability."));
  absl::StatusOr<core::RunOutcome> out = h.Run("teleport it");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(CodeFor(h.provider.Request(2), "c1") == "NOT_FOUND");
  CHECK(ResultFor(h.provider.Request(2), "c1")->content.find("capability_not_found") !=
        std::string::npos);
  CHECK(out->fsm_state == SessionState::kReading);
}

// ---- a dispatch whose outcome cannot be recorded ------------------------------------------

constexpr const char* kQueryNginx = R"({"action":"get","resource_id":"service:pve1/nginx"})";
constexpr const char* kReadNginx = R"({"action":"status","resource_id":"service:pve1/nginx"})";
constexpr const char* kReloadNginx =
    R"({"type":"resource","resource_id":"service:pve1/nginx","capability":"reload",)"
    R"("reason":"config changed"})";

// After Fleet::Dispatch, the finishing CAS of the action cannot commit: either the store fails
// the write (the record stays executing) or the reconciler settled the action first (the CAS is
// lost: action_not_executing).
void LoseTheResultAfterDispatch(Harness& h, bool store_error) {
  h.fleet.SetDispatchHook([&h, store_error](const core::DispatchRequest&) {
    if (store_error) {
      h.action_store.FailNext(absl::UnavailableError("database is locked"));
    } else {
      REQUIRE(core::ReconcileInterruptedExecutions(h.action_store, h.audit, h.clock).ok());
    }
  });
}

// The tool result of a dispatch that was not recorded: an error the model can branch on that
// says the change was made, and that is not offered as retryable.
void CheckUnrecordedDispatchResult(const core::Message& result, const std::string& action_id,
                                   bool store_error) {
  CHECK(result.is_error);
  const rapidjson::Document doc = Parse(result.content);
  const rapidjson::Value* error = core::GetMember(doc, "error");
  REQUIRE(error != nullptr);
  CHECK(Str(*error, "code") == "EXECUTION_FAILED");
  CHECK(core::GetBool(*error, "failed") == std::optional<bool>(true));
  CHECK_FALSE(core::GetBool(*error, "retryable").value_or(false));
  CHECK(Str(*error, "message").find("was dispatched") != std::string::npos);
  const rapidjson::Value* details = core::GetMember(*error, "details");
  REQUIRE(details != nullptr);
  CHECK(core::GetBool(*details, "dispatched") == std::optional<bool>(true));
  CHECK(Str(*details, "action_id") == action_id);
  CHECK(Str(*details, "action_error") == (store_error ? "" : "action_not_executing"));
}

bool SawVerifyingAfter(const RecordingEventSink& events, std::string_view tool) {
  for (const rapidjson::Document& d : events.DataOf(LoopEventType::kWorkflowState)) {
    if (Str(d, "phase") == "verify" && Str(d, "state") == "VERIFYING" && Str(d, "tool") == tool) {
      return true;
    }
  }
  return false;
}

TEST_CASE("an autonomous dispatch whose outcome cannot be recorded must still be verified",
          "[core][loop]") {
  const bool store_error = GENERATE(true, false);
  INFO((store_error ? "the store fails the result write" : "the finishing CAS is lost"));
  Harness h;
  h.BindDefaults();
  LoseTheResultAfterDispatch(h, store_error);
  h.provider.Add(ScriptedTurn::Calls({Call("q1", "pulse_query", kQueryNginx)}));
  h.provider.Add(ScriptedTurn::Calls({Call("c1", "pulse_control", kReloadNginx)}));
  h.provider.Add(ScriptedTurn::Calls({Call("c2", "pulse_control", kReloadNginx)}));
  h.provider.Add(ScriptedTurn::Text("Reloaded nginx."));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadNginx)}));
  h.provider.Add(ScriptedTurn::Text("nginx reloaded and active."));
  absl::StatusOr<core::RunOutcome> out = h.Run("reload nginx", Policy(ControlLevel::kAutonomous));
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == "nginx reloaded and active.");

  // The fleet saw exactly one dispatch, and the failure says so.
  CHECK(h.fleet.dispatch_calls() == 1);
  CHECK(h.fleet.executions() == 1);
  REQUIRE(h.provider.RequestCount() == 6);
  std::optional<core::Message> c1 = ResultFor(h.provider.Request(2), "c1");
  REQUIRE(c1.has_value());
  const std::string action_id = h.fleet.dispatched().front().action_id;
  CheckUnrecordedDispatchResult(*c1, action_id, store_error);
  // The session moved to VERIFYING on that failure: the next write is blocked ...
  CHECK(SawVerifyingAfter(h.events, "pulse_control"));
  CHECK(CodeFor(h.provider.Request(3), "c2") == "FSM_BLOCKED");
  // ... and so is the answer, until a read brings evidence.
  const core::LlmRequest verify = h.provider.Request(4);
  CHECK(verify.messages.back().role == MessageRole::kUser);
  CHECK(verify.messages.back().content.find("Verification required") != std::string::npos);
  CHECK(h.events.ContentText().find("Reloaded nginx.") == std::string::npos);
  CHECK(out->fsm_state == SessionState::kReading);
  CHECK(h.Session().fsm.wrote_this_episode);

  // The recorded action itself never runs again.
  absl::StatusOr<core::ActionRecord> stored = h.action_store.Get(action_id);
  REQUIRE(stored.ok());
  CHECK(stored->state == (store_error ? ActionState::kExecuting : ActionState::kFailed));
  core::ExecuteRequest again;
  again.action_id = action_id;
  again.actor = core::ActionActor{core::ActorKind::kAgent, "assistant"};
  absl::StatusOr<core::Refusable<core::ExecuteOutcome>> retried = h.actions.Execute(again);
  REQUIRE(retried.ok());
  CHECK((retried->refused() || retried->value().replayed));
  CHECK(h.fleet.dispatch_calls() == 1);
}

TEST_CASE("a resumed execution whose outcome cannot be recorded is a dispatched write",
          "[core][loop]") {
  const bool store_error = GENERATE(true, false);
  INFO((store_error ? "the store fails the result write" : "the finishing CAS is lost"));
  Harness h;
  h.BindDefaults();
  const core::SessionRecord suspended = SuspendOnRestart(h);
  DecideOn(h, suspended, core::DecisionOutcome::kApproved);
  LoseTheResultAfterDispatch(h, store_error);
  h.provider.Add(ScriptedTurn::Text("web-01 was restarted."));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("web-01 is running again after the restart."));
  absl::StatusOr<core::RunOutcome> out = h.Resume();
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(out->final_text == "web-01 is running again after the restart.");
  CHECK(h.fleet.dispatch_calls() == 1);
  REQUIRE(h.provider.RequestCount() == 5);
  std::optional<core::Message> c1 = ResultFor(h.provider.Request(2), "c1");
  REQUIRE(c1.has_value());
  CheckUnrecordedDispatchResult(*c1, suspended.suspended->action_id, store_error);
  CHECK(SawVerifyingAfter(h.events, "pulse_control"));
  CHECK(h.provider.Request(3).messages.back().role == MessageRole::kUser);
  // Applied, not left suspended for a retry.
  CHECK_FALSE(h.Session().suspended.has_value());
  CHECK(absl::IsFailedPrecondition(h.Resume().status()));
  CHECK(h.fleet.dispatch_calls() == 1);
}

}  // namespace
}  // namespace pulse::testing::loop
