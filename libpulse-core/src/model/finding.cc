#include "pulse/core/model/finding.h"

#include <iterator>
#include <utility>

namespace pulse::core {
namespace {

bool OneOf(LoopState to, std::initializer_list<LoopState> allowed) {
  for (LoopState s : allowed) {
    if (s == to) {
      return true;
    }
  }
  return false;
}

std::optional<LoopState> StateForOutcome(InvestigationOutcome outcome) {
  switch (outcome) {
    case InvestigationOutcome::kFixQueued:
      return LoopState::kRemediationPlanned;
    case InvestigationOutcome::kFixExecuted:
      return LoopState::kRemediating;
    case InvestigationOutcome::kFixFailed:
    case InvestigationOutcome::kFixVerificationFailed:
      return LoopState::kRemediationFailed;
    case InvestigationOutcome::kFixRejected:
    case InvestigationOutcome::kFixVerificationUnknown:
    case InvestigationOutcome::kFixNotAdmitted:
    case InvestigationOutcome::kNeedsAttention:
    case InvestigationOutcome::kCannotFix:
      return LoopState::kNeedsAttention;
    case InvestigationOutcome::kTimedOut:
      return LoopState::kTimedOut;
    case InvestigationOutcome::kResolved:
    case InvestigationOutcome::kFixVerified:
      break;
  }
  return std::nullopt;
}

}  // namespace

bool IsSnoozed(const Finding& finding, absl::Time now) {
  return finding.snoozed_until.has_value() && now < *finding.snoozed_until;
}

bool IsActive(const Finding& finding, absl::Time now) {
  return !finding.resolved_at.has_value() && !IsSnoozed(finding, now) && !finding.suppressed &&
         !finding.dismissed_reason.has_value();
}

LoopState DeriveLoopState(const Finding& finding, absl::Time now) {
  if (finding.suppressed) {
    return LoopState::kSuppressed;
  }
  if (finding.resolved_at.has_value() ||
      finding.investigation_outcome == InvestigationOutcome::kFixVerified) {
    return LoopState::kResolved;
  }
  if (IsSnoozed(finding, now)) {
    return LoopState::kSnoozed;
  }
  if (finding.dismissed_reason.has_value()) {
    return LoopState::kDismissed;
  }
  if (finding.investigation_status == InvestigationStatus::kRunning) {
    return LoopState::kInvestigating;
  }
  if (finding.investigation_status == InvestigationStatus::kNeedsAttention) {
    return LoopState::kNeedsAttention;
  }
  if (finding.investigation_outcome.has_value()) {
    if (std::optional<LoopState> state = StateForOutcome(*finding.investigation_outcome)) {
      return *state;
    }
  }
  return LoopState::kDetected;
}

bool IsLoopTransitionAllowed(LoopState from, LoopState to) {
  if (from == to) {
    return true;
  }
  switch (from) {
    case LoopState::kResolved:
    case LoopState::kSuppressed:
      return OneOf(to, {LoopState::kDetected});
    case LoopState::kDismissed:
      return OneOf(to, {LoopState::kDetected, LoopState::kSuppressed, LoopState::kResolved});
    case LoopState::kSnoozed:
      return OneOf(to, {LoopState::kDetected, LoopState::kResolved, LoopState::kSuppressed,
                        LoopState::kDismissed});
    case LoopState::kDetected:
    case LoopState::kInvestigating:
    case LoopState::kRemediationPlanned:
    case LoopState::kRemediating:
    case LoopState::kRemediationFailed:
    case LoopState::kNeedsAttention:
    case LoopState::kTimedOut:
      return true;
  }
  return false;  // a source outside the enum: refuse
}

void AppendLifecycleEvent(Finding& finding, LifecycleEvent event) {
  finding.lifecycle.push_back(std::move(event));
  if (finding.lifecycle.size() > kMaxLifecycleEvents) {
    const auto excess = static_cast<std::ptrdiff_t>(finding.lifecycle.size() - kMaxLifecycleEvents);
    finding.lifecycle.erase(finding.lifecycle.begin(), finding.lifecycle.begin() + excess);
  }
}

const LifecycleEvent* LatestEvent(const Finding& finding, LifecycleEventType type) {
  for (auto it = finding.lifecycle.rbegin(); it != finding.lifecycle.rend(); ++it) {
    if (it->type == type) {
      return &*it;
    }
  }
  return nullptr;
}

bool IsRuntimeFinding(const Finding& finding) {
  return finding.resource_id == kRuntimeFindingResourceId && finding.key == kRuntimeFindingKey;
}

}  // namespace pulse::core
