#include "pulse/core/model/action_transition.h"

#include <catch2/catch.hpp>
#include <set>
#include <utility>

namespace pulse::core {
namespace {

using S = ActionState;

TEST_CASE("the lifecycle graph holds exactly the documented edges", "[core][actions]") {
  const std::set<std::pair<S, S>> expected = {
      {S::kPlanned, S::kExecuting},        {S::kPlanned, S::kExpired},
      {S::kPlanned, S::kFailed},           {S::kPendingApproval, S::kPendingApproval},
      {S::kPendingApproval, S::kApproved}, {S::kPendingApproval, S::kRejected},
      {S::kPendingApproval, S::kExpired},  {S::kApproved, S::kExecuting},
      {S::kApproved, S::kExpired},         {S::kApproved, S::kFailed},
      {S::kExecuting, S::kCompleted},      {S::kExecuting, S::kFailed},
  };
  for (S from : AllActionStates()) {
    for (S to : AllActionStates()) {
      INFO(ToString(from) << " -> " << ToString(to));
      CHECK(IsLegalActionTransition(from, to) == (expected.count({from, to}) == 1));
    }
  }
}

TEST_CASE("terminal states have no way out and only live plans expire", "[core][actions]") {
  for (S s : AllActionStates()) {
    bool has_exit = false;
    for (S to : AllActionStates()) {
      has_exit = has_exit || IsLegalActionTransition(s, to);
    }
    CHECK(IsTerminal(s) == !has_exit);
    CHECK(CanExpire(s) == IsLegalActionTransition(s, S::kExpired));
  }
}

TEST_CASE("state wire names round-trip and unknown names are refused", "[core][actions]") {
  CHECK(AllActionStates().size() == 8);
  for (S s : AllActionStates()) {
    CHECK(ParseActionState(ToString(s)) == s);
  }
  CHECK(ToString(S::kPendingApproval) == "pending_approval");
  CHECK_FALSE(ParseActionState("Pending_Approval").has_value());
  CHECK_FALSE(ParseActionState(" planned").has_value());
  CHECK_FALSE(ParseActionState("").has_value());
}

TEST_CASE("a CAS conflict round-trips through the Aborted payload", "[core][actions]") {
  for (S s : AllActionStates()) {
    for (bool identity : {false, true}) {
      const ActionCasConflict conflict{s, 7, identity};
      const absl::Status status = MakeActionCasConflict(conflict, "lost");
      CHECK(absl::IsAborted(status));
      CHECK(status.message() == "lost");
      CHECK(GetActionCasConflict(status) == std::optional(conflict));
    }
  }
  CHECK_FALSE(GetActionCasConflict(absl::AbortedError("plain")).has_value());
  CHECK_FALSE(GetActionCasConflict(absl::OkStatus()).has_value());
  absl::Status forged = absl::UnavailableError("x");
  forged.SetPayload(kActionCasConflictPayload, absl::Cord("state=planned;revision=1;identity=0"));
  CHECK_FALSE(GetActionCasConflict(forged).has_value());
  absl::Status garbage = absl::AbortedError("x");
  garbage.SetPayload(kActionCasConflictPayload, absl::Cord("state=nope;revision=x"));
  CHECK_FALSE(GetActionCasConflict(garbage).has_value());
}

}  // namespace
}  // namespace pulse::core
