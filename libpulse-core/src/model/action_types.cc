#include "pulse/core/model/action_types.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

using S = ActionState;

constexpr std::array<WireName<ActionState>, 8> kStates = {{
    {S::kPlanned, "planned"},
    {S::kPendingApproval, "pending_approval"},
    {S::kApproved, "approved"},
    {S::kRejected, "rejected"},
    {S::kExpired, "expired"},
    {S::kExecuting, "executing"},
    {S::kCompleted, "completed"},
    {S::kFailed, "failed"},
}};

constexpr std::array<WireName<ActorKind>, 4> kActorKinds = {{
    {ActorKind::kHuman, "human"},
    {ActorKind::kAgent, "agent"},
    {ActorKind::kPolicy, "policy"},
    {ActorKind::kService, "service"},
}};

constexpr std::array<WireName<DecisionOutcome>, 2> kOutcomes = {{
    {DecisionOutcome::kApproved, "approved"},
    {DecisionOutcome::kRejected, "rejected"},
}};

constexpr std::array<WireName<ExecutionStatus>, 4> kExecutionStatuses = {{
    {ExecutionStatus::kNotRun, "not_run"},
    {ExecutionStatus::kSucceeded, "succeeded"},
    {ExecutionStatus::kFailed, "failed"},
    {ExecutionStatus::kInconclusive, "inconclusive"},
}};

constexpr std::array<WireName<VerificationStatus>, 4> kVerificationStatuses = {{
    {VerificationStatus::kNotAttempted, "not_attempted"},
    {VerificationStatus::kConfirmed, "confirmed"},
    {VerificationStatus::kContradicted, "contradicted"},
    {VerificationStatus::kInconclusive, "inconclusive"},
}};

constexpr std::array<WireName<EvidenceClass>, 3> kEvidenceClasses = {{
    {EvidenceClass::kNone, "none"},
    {EvidenceClass::kAgentAttested, "agent_attested"},
    {EvidenceClass::kIndependent, "independent"},
}};

constexpr std::array<WireName<LifecycleEventKind>, 2> kEventKinds = {{
    {LifecycleEventKind::kTransition, "transition"},
    {LifecycleEventKind::kDecision, "decision"},
}};

// The lifecycle graph (see IsLegalActionTransition).
struct Edge {
  ActionState from;
  ActionState to;
};
constexpr std::array<Edge, 12> kEdges = {{
    {S::kPlanned, S::kExecuting},
    {S::kPlanned, S::kExpired},
    {S::kPlanned, S::kFailed},
    {S::kPendingApproval, S::kPendingApproval},
    {S::kPendingApproval, S::kApproved},
    {S::kPendingApproval, S::kRejected},
    {S::kPendingApproval, S::kExpired},
    {S::kApproved, S::kExecuting},
    {S::kApproved, S::kExpired},
    {S::kApproved, S::kFailed},
    {S::kExecuting, S::kCompleted},
    {S::kExecuting, S::kFailed},
}};

}  // namespace

std::string_view ToString(ActionState state) { return WireNameOf(kStates, state); }
std::optional<ActionState> ParseActionState(std::string_view text) {
  return WireValueOf(kStates, text);
}

const std::vector<ActionState>& AllActionStates() {
  static const std::vector<ActionState> states = [] {
    std::vector<ActionState> out;
    out.reserve(kStates.size());
    for (const auto& entry : kStates) {
      out.push_back(entry.value);
    }
    return out;
  }();
  return states;
}

bool IsTerminal(ActionState state) {
  return state == S::kRejected || state == S::kExpired || state == S::kCompleted ||
         state == S::kFailed;
}

bool CanExpire(ActionState state) {
  return state == S::kPlanned || state == S::kPendingApproval || state == S::kApproved;
}

bool IsLegalActionTransition(ActionState from, ActionState to) {
  for (const Edge& e : kEdges) {
    if (e.from == from && e.to == to) {
      return true;
    }
  }
  return false;
}

std::string_view ToString(ActorKind kind) { return WireNameOf(kActorKinds, kind); }
std::optional<ActorKind> ParseActorKind(std::string_view text) {
  return WireValueOf(kActorKinds, text);
}
std::string_view ToString(DecisionOutcome outcome) { return WireNameOf(kOutcomes, outcome); }
std::optional<DecisionOutcome> ParseDecisionOutcome(std::string_view text) {
  return WireValueOf(kOutcomes, text);
}
std::string_view ToString(ExecutionStatus status) { return WireNameOf(kExecutionStatuses, status); }
std::optional<ExecutionStatus> ParseExecutionStatus(std::string_view text) {
  return WireValueOf(kExecutionStatuses, text);
}
std::string_view ToString(VerificationStatus status) {
  return WireNameOf(kVerificationStatuses, status);
}
std::optional<VerificationStatus> ParseVerificationStatus(std::string_view text) {
  return WireValueOf(kVerificationStatuses, text);
}
std::string_view ToString(EvidenceClass value) { return WireNameOf(kEvidenceClasses, value); }
std::optional<EvidenceClass> ParseEvidenceClass(std::string_view text) {
  return WireValueOf(kEvidenceClasses, text);
}
std::string_view ToString(LifecycleEventKind kind) { return WireNameOf(kEventKinds, kind); }
std::optional<LifecycleEventKind> ParseLifecycleEventKind(std::string_view text) {
  return WireValueOf(kEventKinds, text);
}

bool IsVerifiedFix(const ActionExecutionResult& result) {
  return result.execution.status == ExecutionStatus::kSucceeded &&
         result.verification.status == VerificationStatus::kConfirmed &&
         result.verification.evidence_class == EvidenceClass::kIndependent;
}

std::string_view LegacyVerificationOutcome(const std::optional<ActionExecutionResult>& result) {
  if (!result.has_value() || result->execution.status != ExecutionStatus::kSucceeded) {
    return "unknown";
  }
  switch (result->verification.status) {
    case VerificationStatus::kConfirmed:
      return "verified";
    case VerificationStatus::kContradicted:
      return "failed";
    case VerificationStatus::kInconclusive:
      return "unverified";
    case VerificationStatus::kNotAttempted:
      return "unknown";
  }
  return "unknown";
}

std::string DispatchAttemptId(std::string_view action_id) {
  return absl::StrCat(ToAbsl(action_id), ".dispatch.1");
}

}  // namespace pulse::core
