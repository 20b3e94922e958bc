#include "pulse/core/fsm/batch_gate.h"

#include <utility>

#include "fmt/format.h"

namespace pulse::core {

BatchGate BatchGate::Admit(SessionFsm& fsm, std::vector<BatchCall> calls) {
  BatchGate gate(fsm);
  gate.verdicts_.reserve(calls.size());
  SessionState simulated = fsm.State();
  for (const BatchCall& call : calls) {
    std::optional<FsmBlockedError> verdict;
    if (EffectOf(call.invocation) == FsmEffect::kWrite) {
      verdict = fsm.GateWrite(simulated, call.tool);
      if (!verdict.has_value()) {
        // Everything after this write runs beside it, not after it.
        simulated = SessionState::kVerifying;
        gate.admitted_write_ = true;
      }
    }
    gate.verdicts_.push_back(std::move(verdict));
  }
  gate.outcomes_.assign(calls.size(), Outcome::kNotReported);
  gate.calls_ = std::move(calls);
  return gate;
}

bool BatchGate::Allowed(std::size_t index) const {
  return index < verdicts_.size() && !verdicts_[index].has_value();
}

absl::Status BatchGate::CheckIndex(std::size_t index) const {
  if (index >= calls_.size()) {
    return absl::InvalidArgumentError(
        fmt::format("batch call {} out of range (batch of {})", index, calls_.size()));
  }
  return absl::OkStatus();
}

absl::Status BatchGate::OnSucceeded(std::size_t index, bool mutation_dispatched) {
  if (absl::Status status = CheckIndex(index); !status.ok()) {
    return status;
  }
  if (verdicts_[index].has_value()) {
    return absl::FailedPreconditionError(
        fmt::format("batch call {} was blocked by the FSM and cannot have run", index));
  }
  if (outcomes_[index] != Outcome::kNotReported) {
    return absl::FailedPreconditionError(fmt::format("batch call {} was already reported", index));
  }
  const BatchCall& call = calls_[index];
  const FsmEffect effect = EffectOf(call.invocation);
  if (effect == FsmEffect::kRead && admitted_write_) {
    fsm_->RecordRead(call.tool, /*is_evidence=*/false);
  } else {
    fsm_->OnToolSucceeded(call.invocation, call.tool, mutation_dispatched);
  }
  const bool dispatched_write = effect == FsmEffect::kWrite && mutation_dispatched;
  outcomes_[index] = dispatched_write ? Outcome::kDispatched : Outcome::kSucceeded;
  return absl::OkStatus();
}

absl::Status BatchGate::OnSelfVerified(std::size_t index) {
  if (absl::Status status = CheckIndex(index); !status.ok()) {
    return status;
  }
  if (outcomes_[index] != Outcome::kDispatched) {
    return absl::FailedPreconditionError(fmt::format(
        "batch call {} is not a dispatched infrastructure write awaiting verification", index));
  }
  fsm_->OnSelfVerified();
  outcomes_[index] = Outcome::kSelfVerified;
  return absl::OkStatus();
}

}  // namespace pulse::core
