#include "pulse/core/actions/action_types.h"

#include <array>

#include "json_reader.h"

namespace pulse::core {
namespace {

using action_internal::EnumName;
using action_internal::NameOf;
using action_internal::ValueOf;
using S = ActionState;

constexpr std::array<EnumName<ActionState>, 8> kStates = {{
    {S::kPlanned, "planned"},
    {S::kPendingApproval, "pending_approval"},
    {S::kApproved, "approved"},
    {S::kRejected, "rejected"},
    {S::kExpired, "expired"},
    {S::kExecuting, "executing"},
    {S::kCompleted, "completed"},
    {S::kFailed, "failed"},
}};

constexpr std::array<EnumName<ActorKind>, 3> kActorKinds = {{
    {ActorKind::kHuman, "human"},
    {ActorKind::kAgent, "agent"},
    {ActorKind::kPolicy, "policy"},
}};

constexpr std::array<EnumName<DecisionOutcome>, 2> kOutcomes = {{
    {DecisionOutcome::kApproved, "approved"},
    {DecisionOutcome::kRejected, "rejected"},
}};

constexpr std::array<EnumName<ExecutionStatus>, 4> kExecutionStatuses = {{
    {ExecutionStatus::kNotRun, "not_run"},
    {ExecutionStatus::kSucceeded, "succeeded"},
    {ExecutionStatus::kFailed, "failed"},
    {ExecutionStatus::kInconclusive, "inconclusive"},
}};

constexpr std::array<EnumName<VerificationStatus>, 4> kVerificationStatuses = {{
    {VerificationStatus::kNotAttempted, "not_attempted"},
    {VerificationStatus::kConfirmed, "confirmed"},
    {VerificationStatus::kContradicted, "contradicted"},
    {VerificationStatus::kInconclusive, "inconclusive"},
}};

constexpr std::array<EnumName<EvidenceClass>, 3> kEvidenceClasses = {{
    {EvidenceClass::kNone, "none"},
    {EvidenceClass::kAgentAttested, "agent_attested"},
    {EvidenceClass::kIndependent, "independent"},
}};

constexpr std::array<EnumName<LifecycleEventKind>, 2> kEventKinds = {{
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

std::string_view ToString(ActionState state) { return NameOf(kStates, state); }
std::optional<ActionState> ParseActionState(std::string_view text) {
  return ValueOf(kStates, text);
}

const std::vector<ActionState>& AllActionStates() {
  static const std::vector<ActionState> states = [] {
    std::vector<ActionState> out;
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

std::string_view ToString(ActorKind kind) { return NameOf(kActorKinds, kind); }
std::optional<ActorKind> ParseActorKind(std::string_view text) {
  return ValueOf(kActorKinds, text);
}
std::string_view ToString(DecisionOutcome outcome) { return NameOf(kOutcomes, outcome); }
std::optional<DecisionOutcome> ParseDecisionOutcome(std::string_view text) {
  return ValueOf(kOutcomes, text);
}
std::string_view ToString(ExecutionStatus status) { return NameOf(kExecutionStatuses, status); }
std::optional<ExecutionStatus> ParseExecutionStatus(std::string_view text) {
  return ValueOf(kExecutionStatuses, text);
}
std::string_view ToString(VerificationStatus status) {
  return NameOf(kVerificationStatuses, status);
}
std::optional<VerificationStatus> ParseVerificationStatus(std::string_view text) {
  return ValueOf(kVerificationStatuses, text);
}
std::string_view ToString(EvidenceClass value) { return NameOf(kEvidenceClasses, value); }
std::optional<EvidenceClass> ParseEvidenceClass(std::string_view text) {
  return ValueOf(kEvidenceClasses, text);
}
std::string_view ToString(LifecycleEventKind kind) { return NameOf(kEventKinds, kind); }
std::optional<LifecycleEventKind> ParseLifecycleEventKind(std::string_view text) {
  return ValueOf(kEventKinds, text);
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

}  // namespace pulse::core
