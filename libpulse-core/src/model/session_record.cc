#include "pulse/core/model/session_record.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<SessionStatus>, 4> kStatuses = {{
    {SessionStatus::kIdle, "idle"},
    {SessionStatus::kRunning, "running"},
    {SessionStatus::kAwaitingApproval, "awaiting_approval"},
    {SessionStatus::kAwaitingInput, "awaiting_input"},
}};

constexpr std::array<WireName<SessionKind>, 2> kKinds = {{
    {SessionKind::kChat, "chat"},
    {SessionKind::kPatrol, "patrol"},
}};

}  // namespace

std::string_view ToString(SessionStatus status) { return WireNameOf(kStatuses, status, "idle"); }
std::optional<SessionStatus> ParseSessionStatus(std::string_view text) {
  return WireValueOf(kStatuses, text);
}
std::string_view ToString(SessionKind kind) { return WireNameOf(kKinds, kind, "chat"); }
std::optional<SessionKind> ParseSessionKind(std::string_view text) {
  return WireValueOf(kKinds, text);
}

absl::Status ValidateSessionId(std::string_view id) {
  if (id.empty() || id.size() > kMaxSessionIdBytes) {
    return absl::InvalidArgumentError("session id must be 1..128 characters");
  }
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError("session id may contain only [A-Za-z0-9_-]");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRefusedClaim(const Message& message) {
  if (message.role != MessageRole::kRefusedClaim) {
    return absl::OkStatus();
  }
  if (message.content.empty()) {
    return absl::InvalidArgumentError("a refused_claim entry needs its text");
  }
  if (!message.tool_calls.empty() || !message.tool_call_id.empty() || !message.tool_name.empty() ||
      message.is_error) {
    return absl::InvalidArgumentError(
        "a refused_claim entry carries only text: no tool calls, call id, tool name or error");
  }
  return absl::OkStatus();
}

absl::Status ValidateSessionRecord(const SessionRecord& record) {
  if (absl::Status s = ValidateSessionId(record.id); !s.ok()) {
    return s;
  }
  const bool awaiting = record.status == SessionStatus::kAwaitingApproval;
  if (awaiting != record.suspended.has_value()) {
    return absl::InvalidArgumentError(
        "a suspended call is required exactly when the session awaits approval");
  }
  if (record.suspended.has_value()) {
    const SuspendedCall& call = *record.suspended;
    if (call.transcript_index >= record.transcript.size()) {
      return absl::InvalidArgumentError("the suspended call's transcript index is out of range");
    }
    const Message& result = record.transcript[call.transcript_index];
    if (result.role != MessageRole::kTool || result.tool_call_id != call.tool_call_id) {
      return absl::InvalidArgumentError(
          "the suspended call's transcript index does not name its tool result");
    }
    if (call.action_id.empty() || call.plan_hash.empty()) {
      return absl::InvalidArgumentError("the suspended call needs an action id and plan hash");
    }
  }
  for (std::size_t i = 0; i < record.transcript.size(); ++i) {
    if (absl::Status s = ValidateRefusedClaim(record.transcript[i]); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("transcript[", i, "]: ", s.message()));
    }
  }
  const SessionOwner& owner = record.owner;
  if (owner.owned()) {
    if (!ValidateSessionId(owner.token_id).ok()) {
      return absl::InvalidArgumentError("the owner token id must be 1..128 of [A-Za-z0-9_-]");
    }
    if (owner.token_name.size() > kMaxSessionOwnerBytes || !IsCleanText(owner.token_name)) {
      return absl::InvalidArgumentError("the owner token name must be clean text of <= 128 bytes");
    }
    if (record.kind == SessionKind::kPatrol) {
      return absl::InvalidArgumentError("a Patrol session belongs to no token");
    }
  } else if (!owner.token_name.empty()) {
    return absl::InvalidArgumentError("an owner token name needs an owner token id");
  }
  for (std::size_t i = 0; i < record.facts.size(); ++i) {
    if (record.facts[i].key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("fact ", i, " has an empty key"));
    }
  }
  return absl::OkStatus();
}

}  // namespace pulse::core
