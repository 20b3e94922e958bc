// What a session persists between runs (docs/storage.md SessionStore): the transcript, the
// safety FSM's snapshot, the facts extracted from tool results, and — while a run is
// suspended on an approval — the suspended tool call with the run's budget counters, so a
// resume continues the same bounded run without asking the model to re-emit the call.
// Plain values: copyable, comparable; the validators are pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/core/model/session_state.h"
#include "pulse/core/model/usage.h"

namespace pulse::core {

inline constexpr std::size_t kMaxSessionIdBytes = 128;

enum class SessionStatus {
  kIdle,              // no run in progress
  kRunning,           // a run holds the session (claimed by compare-and-swap)
  kAwaitingApproval,  // a run is suspended on an action decision; `suspended` is set
  kAwaitingInput,     // the last run asked the user a question; the next message answers it
};
// Wire: idle, running, awaiting_approval, awaiting_input.
std::string_view ToString(SessionStatus status);
std::optional<SessionStatus> ParseSessionStatus(std::string_view text);

// What a session is for. A chat session belongs to the API token that started it; a Patrol
// session is a system session (a Patrol run's model pass or investigation): it belongs to no
// token, is never continued or resumed, and only the newest kDefaultPatrolSessionRetention
// are kept.
enum class SessionKind { kChat, kPatrol };
// Wire: chat, patrol.
std::string_view ToString(SessionKind kind);
std::optional<SessionKind> ParseSessionKind(std::string_view text);

inline constexpr std::size_t kDefaultPatrolSessionRetention = 50;
inline constexpr std::size_t kMaxSessionOwnerBytes = 128;

// Who a session belongs to: the API token that created it (its public id, never the secret,
// and its operator-chosen name at that time). An empty token_id: no one (a Patrol session, or
// a chat session stored before ownership was recorded, which only an admin may read).
struct SessionOwner {
  std::string token_id;    // 1..128 of [A-Za-z0-9_-], or empty
  std::string token_name;  // at most 128 bytes; empty when token_id is
  bool owned() const { return !token_id.empty(); }

  friend bool operator==(const SessionOwner&, const SessionOwner&) = default;
};

// One structured fact extracted from a tool result (state, exit code, health, error code).
struct KnowledgeFact {
  std::string key;           // e.g. "vm:101:status"
  std::string value;         // at most kMaxFactValueBytes
  std::string tool_call_id;  // the call it came from
  int turn = 0;              // the run turn that observed it

  friend bool operator==(const KnowledgeFact&, const KnowledgeFact&) = default;
};

// The counters every run budget is measured against. A resumed run continues them.
struct RunCounters {
  int turns = 0;           // provider turns (retries and the summary call excluded)
  int provider_calls = 0;  // every provider request: retries and the summary call included
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  int tool_calls = 0;      // calls the model emitted
  int tool_errors = 0;     // results that were errors
  int evidence_calls = 0;  // investigation profile: evidence attempts
  int consecutive_error_turns = 0;
  std::map<std::string, int> tools_run;  // executed calls per tool (fallback summary)
  // The run's money cost: the sum of its calls' known costs, and whether any call's cost was
  // unknown (then cost_usd is only a lower bound and the run reports its cost as unknown).
  double cost_usd = 0;
  bool cost_unknown = false;

  friend bool operator==(const RunCounters&, const RunCounters&) = default;
};

// A pulse_control call whose action plan awaits a decision. Its tool result in the transcript
// (at transcript_index) holds the plan until Resume replaces it with the outcome.
struct SuspendedCall {
  std::string tool_call_id;
  std::string tool_name;
  std::string arguments_json;
  std::string action_id;
  std::string plan_hash;
  std::size_t transcript_index = 0;
  absl::Time suspended_at;
  RunCounters counters;
  // Fingerprints ("sha256:" digests of name + canonical arguments, never the arguments) of
  // calls denied earlier in the run, so a resumed run still stops a repeated denied call on its
  // second attempt.
  std::vector<std::string> denied_fingerprints;

  friend bool operator==(const SuspendedCall&, const SuspendedCall&) = default;
};

struct SessionRecord {
  std::string id;
  std::int64_t revision = 0;  // assigned by the store: 1 on create, +1 per update
  SessionStatus status = SessionStatus::kIdle;
  // Fixed when the session is created; Update keeps the stored values (like created_at).
  SessionKind kind = SessionKind::kChat;
  SessionOwner owner;
  std::vector<Message> transcript;  // no system prompt: it is rebuilt for every run
  SessionSnapshot fsm;
  std::vector<KnowledgeFact> facts;
  std::optional<SuspendedCall> suspended;
  // One entry per provider call, oldest first, at most kMaxSessionUsageEntries (the oldest go
  // first); usage_totals counts every call the session ever made.
  std::vector<TurnUsage> usage;
  UsageTotals usage_totals;
  absl::Time created_at;
  absl::Time updated_at;

  friend bool operator==(const SessionRecord&, const SessionRecord&) = default;
};

// A listing row.
struct SessionSummary {
  std::string id;
  SessionStatus status = SessionStatus::kIdle;
  std::size_t message_count = 0;
  absl::Time updated_at;
  SessionKind kind = SessionKind::kChat;
  std::string owner_token_id;  // empty when owned by no one

  friend bool operator==(const SessionSummary&, const SessionSummary&) = default;
};

// Where a page of the session list ended: the last listed session's updated_at and id.
struct SessionPagePosition {
  absl::Time updated_at;
  std::string id;

  friend bool operator==(const SessionPagePosition&, const SessionPagePosition&) = default;
};

// What SessionStore::List returns: summaries matching every filter that is set.
struct SessionListQuery {
  std::size_t limit = 100;                    // 1..kMaxSessionListLimit
  std::optional<SessionKind> kind;            // unset: every kind
  std::optional<std::string> owner_token_id;  // unset: any owner; "": owned by no one
  // Only sessions strictly after this position in the list order (most recently updated first,
  // ties by id): the next page of a keyset walk. Unset: from the newest.
  std::optional<SessionPagePosition> after;
};

// OK when `id` is 1..kMaxSessionIdBytes of [A-Za-z0-9_-]; InvalidArgument otherwise (so an id
// is always safe as a file name, URL segment or SQL key).
[[nodiscard]] absl::Status ValidateSessionId(std::string_view id);

// OK unless `message` is a refused_claim entry that is not plain text: it must have content and
// no tool calls, tool call id, tool name or error flag (InvalidArgument).
[[nodiscard]] absl::Status ValidateRefusedClaim(const Message& message);

// The invariants every store enforces on write, InvalidArgument naming the first broken one:
// a valid id; every refused_claim entry plain text (ValidateRefusedClaim); `suspended` set
// exactly when the status is awaiting_approval; a suspended call names a tool message of the
// transcript answering its call id; fact keys non-empty; an owner token id that is a valid id
// (empty allowed) with a clean name of at most 128 bytes (empty when the id is); a Patrol
// session owned by no one.
[[nodiscard]] absl::Status ValidateSessionRecord(const SessionRecord& record);

}  // namespace pulse::core
