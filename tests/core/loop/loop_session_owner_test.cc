// Session ownership at the loop's seam (docs/security.md "Consent and session ownership"): a
// session is continued and resumed only for the token that created it, a Patrol-profile run
// makes a system session that no one continues, and the Patrol sessions kept are bounded.
#include <catch2/catch.hpp>
#include <string>

#include "loop_test_support.h"

namespace pulse::testing::loop {
namespace {

using core::RunEnd;

const core::SessionOwner kAlice{"tok_alice", "alice"};
const core::SessionOwner kBob{"tok_bob", "bob"};

absl::StatusOr<core::RunOutcome> RunAs(Harness& h, const core::SessionOwner& owner,
                                       std::string message, std::string session_id = "ses_test",
                                       core::InvocationPolicy policy = Policy()) {
  core::RunRequest request{std::move(session_id), std::move(message), std::move(policy), nullptr,
                           owner};
  return h.loop->Run(request, h.events);
}

absl::StatusOr<core::RunOutcome> ResumeAs(Harness& h, const core::SessionOwner& owner) {
  core::ResumeRequest request{"ses_test", Policy(),
                              core::ActionActor{core::ActorKind::kHuman, owner.token_id}, nullptr,
                              owner};
  return h.loop->Resume(request, h.events);
}

TEST_CASE("a new session belongs to the token that started it", "[core][loop][owner]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Text("hello"));
  REQUIRE(RunAs(h, kAlice, "hi").ok());
  const core::SessionRecord session = h.Session();
  CHECK(session.owner == kAlice);
  CHECK(session.kind == core::SessionKind::kChat);
}

TEST_CASE(
    "another token can neither continue nor resume a session, and the owner's pending "
    "approval survives",
    "[core][loop][owner]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls(
      {Call("q1", "pulse_query", R"({"action":"get","resource_id":"vm:101"})")}));
  h.provider.Add(ScriptedTurn::Calls({Call("c1", "pulse_control", std::string(kRestartVmArgs))}));
  absl::StatusOr<core::RunOutcome> out = RunAs(h, kAlice, "restart web-01");
  REQUIRE(out.ok());
  REQUIRE(out->end == RunEnd::kAwaitingApproval);
  const core::SessionRecord before = h.Session();

  absl::StatusOr<core::RunOutcome> hijack = RunAs(h, kBob, "never mind");
  CHECK(absl::IsNotFound(hijack.status()));
  absl::StatusOr<core::RunOutcome> resumed = ResumeAs(h, kBob);
  CHECK(absl::IsNotFound(resumed.status()));
  // An embedder's ownerless run is another caller too.
  CHECK(absl::IsNotFound(RunAs(h, core::SessionOwner{}, "hello").status()));

  const core::SessionRecord after = h.Session();
  CHECK(after.status == core::SessionStatus::kAwaitingApproval);
  CHECK(after.suspended == before.suspended);
  CHECK(after.revision == before.revision);
  CHECK(h.provider.RequestCount() == 2);
}

TEST_CASE("a Patrol-profile run makes a system session that no one continues or resumes",
          "[core][loop][owner]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Text("fleet reviewed"));
  const core::InvocationPolicy patrol =
      Policy(core::ControlLevel::kReadOnly, core::ExecutionProfile::kPatrolDetection);
  // Even an owner passed in is not recorded: Patrol sessions belong to no token.
  REQUIRE(RunAs(h, kAlice, "patrol", "ses_patrol", patrol).ok());
  const core::SessionRecord session = h.Session("ses_patrol");
  CHECK(session.kind == core::SessionKind::kPatrol);
  CHECK_FALSE(session.owner.owned());
  CHECK(absl::IsNotFound(RunAs(h, {}, "again", "ses_patrol", patrol).status()));
  CHECK(absl::IsNotFound(RunAs(h, {}, "chat", "ses_patrol").status()));
  core::ResumeRequest resume{"ses_patrol", patrol, core::ActionActor{core::ActorKind::kHuman, "x"}};
  CHECK_FALSE(h.loop->Resume(resume, h.events).ok());
  CHECK(h.provider.RequestCount() == 1);
}

TEST_CASE("only the newest Patrol sessions are kept", "[core][loop][owner]") {
  core::LoopOptions options;
  options.patrol_session_retention = 2;
  Harness h(options);
  h.BindDefaults();
  const core::InvocationPolicy patrol =
      Policy(core::ControlLevel::kReadOnly, core::ExecutionProfile::kPatrolDetection);
  h.provider.Add(ScriptedTurn::Text("hello"));
  REQUIRE(RunAs(h, kAlice, "a chat").ok());
  for (int i = 0; i < 4; ++i) {
    h.clock.Advance(absl::Seconds(1));
    h.provider.Add(ScriptedTurn::Text("fleet reviewed"));
    REQUIRE(RunAs(h, {}, "patrol", "ses_patrol" + std::to_string(i), patrol).ok());
  }
  core::SessionListQuery query;
  query.kind = core::SessionKind::kPatrol;
  absl::StatusOr<std::vector<core::SessionSummary>> kept = h.sessions.List(query);
  REQUIRE(kept.ok());
  REQUIRE(kept->size() == 2);
  CHECK((*kept)[0].id == "ses_patrol3");
  CHECK((*kept)[1].id == "ses_patrol2");
  CHECK(h.sessions.Get("ses_test").ok());  // chat sessions are never trimmed

  // TrimSessions itself: keeps the newest `keep`, never a running one.
  core::SessionRecord running = h.Session("ses_patrol2");
  running.status = core::SessionStatus::kRunning;
  REQUIRE(h.sessions.Update(running).ok());
  absl::StatusOr<std::size_t> trimmed =
      core::TrimSessions(h.sessions, core::SessionKind::kPatrol, 0);
  REQUIRE(trimmed.ok());
  CHECK(*trimmed == 1);
  CHECK(h.sessions.Get("ses_patrol2").ok());
  CHECK(absl::IsNotFound(h.sessions.Get("ses_patrol3").status()));
}

}  // namespace
}  // namespace pulse::testing::loop
