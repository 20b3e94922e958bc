#include "pulse/core/fsm/session_fsm.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace pulse::core {
namespace {

// A kind outside the enum is treated as a write: whatever it is, it may change something.
ToolKind Normalize(ToolKind kind) {
  switch (kind) {
    case ToolKind::kResolve:
    case ToolKind::kRead:
    case ToolKind::kUserInput:
      return kind;
    case ToolKind::kWrite:
      break;
  }
  return ToolKind::kWrite;
}

FsmBlockedError Blocked(SessionState state, std::string_view tool, ToolKind kind,
                        std::string_view reason, bool recoverable) {
  return FsmBlockedError{state, std::string(tool), kind, std::string(reason), recoverable};
}

// An entry is live until it is strictly older than the TTL.
bool IsLive(const PendingRecovery& entry, absl::Time now) {
  return entry.created_at >= now - kPendingRecoveryTtl;
}

std::optional<std::int64_t> ToNanos(const std::optional<absl::Time>& t) {
  if (!t.has_value()) {
    return std::nullopt;
  }
  return absl::ToUnixNanos(*t);
}

std::optional<absl::Time> FromNanos(const std::optional<std::int64_t>& nanos) {
  if (!nanos.has_value()) {
    return std::nullopt;
  }
  return absl::FromUnixNanos(*nanos);
}

absl::Status ValidateSnapshot(const SessionSnapshot& s, std::optional<SessionState> state) {
  if (!state.has_value()) {
    return absl::InvalidArgumentError(fmt::format("session snapshot: unknown state '{}'", s.state));
  }
  if (*state == SessionState::kWriting) {
    // No transition enters WRITING, which the reference lets write freely: a stored WRITING
    // was not produced by this engine, so it is not trusted.
    return absl::InvalidArgumentError("session snapshot: state WRITING is never persisted");
  }
  if (s.consecutive_verify_blocks < 0) {
    return absl::InvalidArgumentError("session snapshot: negative consecutive_verify_blocks");
  }
  if (s.read_after_write && *state != SessionState::kVerifying) {
    return absl::InvalidArgumentError(
        "session snapshot: read_after_write is only meaningful in VERIFYING");
  }
  if (*state == SessionState::kVerifying && !s.wrote_this_episode) {
    return absl::InvalidArgumentError("session snapshot: VERIFYING without a write");
  }
  if (s.wrote_this_episode && !s.last_write_at_unix_nanos.has_value()) {
    return absl::InvalidArgumentError("session snapshot: a write without a write time");
  }
  return absl::OkStatus();
}

}  // namespace

std::string FsmBlockedError::Message() const {
  if (tool.empty()) {
    return fmt::format("FSM blocked in state {}: {}", ToString(state), reason);
  }
  return fmt::format("FSM blocked tool '{}' ({}) in state {}: {}", tool, ToString(kind),
                     ToString(state), reason);
}

ToolError FsmBlockedError::ToToolError() const {
  ToolError error;
  error.code = ToolErrorCode::kFsmBlocked;
  error.message = Message();
  error.blocked = true;
  error.details.emplace_back("state", std::string(ToString(state)));
  if (!tool.empty()) {
    error.details.emplace_back("tool", tool);
    error.details.emplace_back("kind", std::string(ToString(kind)));
  }
  error.details.emplace_back("reason", reason);
  error.details.emplace_back("recoverable", recoverable);
  return error;
}

FsmEffect EffectOf(InvocationClass invocation) {
  if (invocation.mutation == MutationTarget::kPulseState) {
    return FsmEffect::kNone;
  }
  if (invocation.mutation == MutationTarget::kNone) {
    switch (invocation.kind) {
      case ToolKind::kResolve:
      case ToolKind::kRead:
        return FsmEffect::kRead;
      case ToolKind::kUserInput:
        return FsmEffect::kNone;
      case ToolKind::kWrite:
        break;
    }
  }
  // An infrastructure target, a write without a target, or a value outside the enums.
  return FsmEffect::kWrite;
}

SessionFsm::SessionFsm(const Clock& clock) : clock_(&clock) {}

absl::StatusOr<SessionFsm> SessionFsm::Restore(const Clock& clock, SessionSnapshot snapshot) {
  const std::optional<SessionState> state = ParseSessionState(snapshot.state);
  if (absl::Status status = ValidateSnapshot(snapshot, state); !status.ok()) {
    return status;
  }
  SessionFsm fsm(clock);
  fsm.state_ = *state;
  fsm.wrote_this_episode_ = snapshot.wrote_this_episode;
  fsm.read_after_write_ = snapshot.read_after_write;
  fsm.consecutive_verify_blocks_ = snapshot.consecutive_verify_blocks;
  fsm.last_write_tool_ = std::move(snapshot.last_write_tool);
  fsm.last_write_at_ = FromNanos(snapshot.last_write_at_unix_nanos);
  fsm.last_read_tool_ = std::move(snapshot.last_read_tool);
  fsm.last_read_at_ = FromNanos(snapshot.last_read_at_unix_nanos);
  return fsm;
}

SessionSnapshot SessionFsm::Snapshot() const {
  SessionSnapshot snapshot;
  snapshot.state = std::string(ToString(state_));
  snapshot.wrote_this_episode = wrote_this_episode_;
  snapshot.read_after_write = read_after_write_;
  snapshot.consecutive_verify_blocks = consecutive_verify_blocks_;
  snapshot.last_write_tool = last_write_tool_;
  snapshot.last_write_at_unix_nanos = ToNanos(last_write_at_);
  snapshot.last_read_tool = last_read_tool_;
  snapshot.last_read_at_unix_nanos = ToNanos(last_read_at_);
  return snapshot;
}

std::optional<FsmBlockedError> SessionFsm::GateWrite(SessionState state, std::string_view tool) {
  switch (state) {
    case SessionState::kReading:
      return std::nullopt;
    case SessionState::kResolving:
      return Blocked(state, tool, ToolKind::kWrite, kFsmReasonNoValidatedTarget, true);
    case SessionState::kVerifying:
      ++consecutive_verify_blocks_;
      return Blocked(state, tool, ToolKind::kWrite, kFsmReasonWriteUnverified, true);
    case SessionState::kWriting:
      break;
  }
  // WRITING (never entered) or a value outside the enum: the reference allows every write
  // here; we refuse, and no read can lift it (only Reset or a restored snapshot).
  return Blocked(state, tool, ToolKind::kWrite, kFsmReasonNoValidatedTarget, false);
}

std::optional<FsmBlockedError> SessionFsm::CanExecuteTool(ToolKind kind, std::string_view tool) {
  if (Normalize(kind) != ToolKind::kWrite) {
    return std::nullopt;  // Information gathering is never blocked, in any state.
  }
  return GateWrite(state_, tool);
}

void SessionFsm::RecordRead(std::string_view tool, bool is_evidence) {
  if (state_ == SessionState::kResolving) {
    state_ = SessionState::kReading;
  }
  last_read_tool_ = std::string(tool);
  last_read_at_ = clock_->Now();
  if (is_evidence && state_ == SessionState::kVerifying) {
    read_after_write_ = true;
    consecutive_verify_blocks_ = 0;
  }
}

void SessionFsm::OnToolSuccess(ToolKind kind, std::string_view tool) {
  switch (Normalize(kind)) {
    case ToolKind::kResolve:
    case ToolKind::kRead:
      RecordRead(tool, /*is_evidence=*/true);
      return;
    case ToolKind::kWrite:
      state_ = SessionState::kVerifying;
      wrote_this_episode_ = true;
      read_after_write_ = false;
      last_write_tool_ = std::string(tool);
      last_write_at_ = clock_->Now();
      return;
    case ToolKind::kUserInput:
      return;  // Asking the user is neither discovery nor verification.
  }
}

std::optional<FsmBlockedError> SessionFsm::CanFinalAnswer() const {
  switch (state_) {
    case SessionState::kResolving:
    case SessionState::kReading:
      return std::nullopt;
    case SessionState::kVerifying:
      if (read_after_write_) {
        return std::nullopt;
      }
      return Blocked(state_, "", ToolKind::kResolve, kFsmReasonAnswerUnverified, true);
    case SessionState::kWriting:
      break;
  }
  // Fail closed: no claim about a change may be made from a state we cannot vouch for.
  return Blocked(state_, "", ToolKind::kResolve, kFsmReasonAnswerUnverified, false);
}

void SessionFsm::CompleteVerification() {
  if (state_ == SessionState::kVerifying && read_after_write_) {
    state_ = SessionState::kReading;
    read_after_write_ = false;
    consecutive_verify_blocks_ = 0;
  }
}

void SessionFsm::Reset() {
  state_ = SessionState::kResolving;
  wrote_this_episode_ = false;
  read_after_write_ = false;
  consecutive_verify_blocks_ = 0;
  last_write_tool_.clear();
  last_write_at_.reset();
  last_read_tool_.clear();
  last_read_at_.reset();
}

void SessionFsm::ResetKeepProgress() {
  if (state_ == SessionState::kVerifying) {
    state_ = SessionState::kReading;
  }
  wrote_this_episode_ = false;
  read_after_write_ = false;
  consecutive_verify_blocks_ = 0;
}

std::optional<FsmBlockedError> SessionFsm::CanExecute(InvocationClass invocation,
                                                      std::string_view tool) {
  switch (EffectOf(invocation)) {
    case FsmEffect::kNone:
      return std::nullopt;
    case FsmEffect::kWrite:
      return CanExecuteTool(ToolKind::kWrite, tool);
    case FsmEffect::kRead:
      return CanExecuteTool(invocation.kind, tool);
  }
  return CanExecuteTool(ToolKind::kWrite, tool);
}

void SessionFsm::OnToolSucceeded(InvocationClass invocation, std::string_view tool,
                                 bool mutation_dispatched) {
  switch (EffectOf(invocation)) {
    case FsmEffect::kNone:
      return;
    case FsmEffect::kWrite:
      if (mutation_dispatched) {
        OnToolSuccess(ToolKind::kWrite, tool);
      }
      return;
    case FsmEffect::kRead:
      OnToolSuccess(invocation.kind, tool);
      CompleteVerification();
      return;
  }
}

void SessionFsm::OnSelfVerified() {
  OnToolSuccess(ToolKind::kRead, "self_verify");
  CompleteVerification();
}

void SessionFsm::OnTargetEstablished() {
  if (state_ == SessionState::kResolving) {
    state_ = SessionState::kReading;
  }
}

void SessionFsm::PruneExpiredRecoveries(absl::Time now) {
  std::erase_if(pending_recoveries_,
                [now](const PendingRecovery& entry) { return !IsLive(entry, now); });
}

std::string SessionFsm::TrackPendingRecovery(std::string_view error_code, std::string_view tool) {
  const absl::Time now = clock_->Now();
  PruneExpiredRecoveries(now);
  const std::string base = fmt::format("{}-{}", tool, absl::ToUnixNanos(now));
  const auto is_taken = [this](const std::string& id) {
    return std::any_of(pending_recoveries_.begin(), pending_recoveries_.end(),
                       [&id](const PendingRecovery& entry) { return entry.recovery_id == id; });
  };
  std::string id = base;
  for (int suffix = 2; is_taken(id); ++suffix) {
    id = fmt::format("{}-{}", base, suffix);
  }
  pending_recoveries_.push_back(
      PendingRecovery{id, std::string(error_code), std::string(tool), now, /*attempts=*/1});
  return id;
}

std::optional<PendingRecovery> SessionFsm::CheckRecoverySuccess(std::string_view tool) {
  PruneExpiredRecoveries(clock_->Now());
  const auto it = std::find_if(pending_recoveries_.begin(), pending_recoveries_.end(),
                               [tool](const PendingRecovery& entry) { return entry.tool == tool; });
  if (it == pending_recoveries_.end()) {
    return std::nullopt;
  }
  PendingRecovery found = std::move(*it);
  pending_recoveries_.erase(it);
  return found;
}

std::vector<PendingRecovery> SessionFsm::PendingRecoveries() const {
  const absl::Time now = clock_->Now();
  std::vector<PendingRecovery> live;
  std::copy_if(pending_recoveries_.begin(), pending_recoveries_.end(), std::back_inserter(live),
               [now](const PendingRecovery& entry) { return IsLive(entry, now); });
  return live;
}

std::size_t SessionFsm::PendingRecoveryCount() const {
  const absl::Time now = clock_->Now();
  return static_cast<std::size_t>(
      std::count_if(pending_recoveries_.begin(), pending_recoveries_.end(),
                    [now](const PendingRecovery& entry) { return IsLive(entry, now); }));
}

}  // namespace pulse::core
