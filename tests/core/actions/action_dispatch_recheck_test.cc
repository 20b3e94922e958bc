// ExecuteRequest::recheck (gate 11b): the executor's own authority, read again after every
// other gate and immediately before admission into executing. A withdrawn authority refuses
// the dispatch, persists nothing (the plan stays for a human) and is audited.
#include <catch2/catch.hpp>
#include <string>

#include "action_test_support.h"

namespace pulse::core {
namespace {

using namespace testing::actions;  // NOLINT: test fixtures

ActionRecord OwnReload(Harness& h) {
  return MustPlan(
      h, Request("reload", R"({"unit":"nginx.service"})", Agent("patrol"), "service:pve1/nginx"));
}

TEST_CASE("a withdrawn dispatch authority refuses before executing and leaves the plan",
          "[core][actions][recheck]") {
  Harness h;
  const ActionRecord own = OwnReload(h);
  int asked = 0;
  ExecuteRequest request = Execution(own, Agent("patrol"));
  request.recheck = [&](const ActionRecord& current) -> absl::StatusOr<std::optional<std::string>> {
    ++asked;
    CHECK(current.id() == own.id());
    CHECK(current.state == ActionState::kPlanned);  // asked before the CAS into executing
    return std::optional<std::string>("autonomy_lowered: the level in force is approval");
  };
  const ActionRefusal r = MustRefuse(h.service.Execute(request));
  CHECK(asked == 1);
  CHECK(r.code == AgentErrorCode::kActionExecutionForbidden);
  CHECK(StartsWith(r.message, kDispatchAuthorityWithdrawnPrefix));
  CHECK(r.message.find("autonomy_lowered") != std::string::npos);
  CHECK(h.fleet.dispatch_calls() == 0);
  CHECK(StoredRecord(h, own.id()).state == ActionState::kPlanned);  // a human may still act
  CHECK(h.audit.Find(own.id(), "refused").size() == 1);
  CHECK(h.audit.Find(own.id(), "dispatch_started").empty());
  // Without the recheck (a human executing it), the same plan runs once.
  CHECK(MustExecute(h, Execution(own, Human("alice"))).record.state == ActionState::kCompleted);
  CHECK(h.fleet.executions() == 1);
}

TEST_CASE("an authority that cannot be read again fails the dispatch closed",
          "[core][actions][recheck]") {
  Harness h;
  const ActionRecord own = OwnReload(h);
  ExecuteRequest request = Execution(own, Agent("patrol"));
  request.recheck = [](const ActionRecord&) -> absl::StatusOr<std::optional<std::string>> {
    return absl::UnavailableError("settings store down");
  };
  const ActionRefusal r = MustRefuse(h.service.Execute(request));
  CHECK(r.code == AgentErrorCode::kActionExecutionForbidden);
  CHECK(StartsWith(r.message, kDispatchAuthorityWithdrawnPrefix));
  CHECK(r.message.find("settings store down") != std::string::npos);
  CHECK(h.fleet.dispatch_calls() == 0);
  CHECK(StoredRecord(h, own.id()).state == ActionState::kPlanned);
}

TEST_CASE("an authority still in force dispatches once, and earlier gates answer first",
          "[core][actions][recheck]") {
  Harness h;
  const ActionRecord own = OwnReload(h);
  int asked = 0;
  DispatchRecheck admit = [&](const ActionRecord&) -> absl::StatusOr<std::optional<std::string>> {
    ++asked;
    return std::optional<std::string>();
  };
  ExecuteRequest request = Execution(own, Agent("patrol"));
  request.recheck = admit;
  CHECK(MustExecute(h, request).record.state == ActionState::kCompleted);
  CHECK(asked == 1);
  CHECK(h.fleet.executions() == 1);
  // A replay of the terminal action is answered before the recheck: never asked again.
  CHECK(MustExecute(h, request).replayed);
  CHECK(asked == 1);
  // A plan that still needs a decision is refused by its own gate, not the recheck.
  const ActionRecord pending =
      MustPlan(h, Request("restart", R"({"mode":"graceful"})", Agent("patrol"), "vm:101", "req-2"));
  ExecuteRequest needs_approval = Execution(pending, Agent("patrol"));
  needs_approval.recheck = admit;
  CHECK(MustRefuse(h.service.Execute(needs_approval)).code == AgentErrorCode::kActionNotApproved);
  CHECK(asked == 1);
  CHECK(h.fleet.executions() == 1);
}

}  // namespace
}  // namespace pulse::core
