// The JSON form of a SessionRecord: the persisted record of a SessionStore adapter. The encoder
// never fails and always emits valid UTF-8 (an ill-formed byte becomes U+FFFD, so such a record
// does not round-trip; stores compare the decoded value and refuse it). NUL and control
// characters are data and survive as escapes. The decoder treats its input as hostile: it is
// bounded (size, depth, counts, string lengths) and strict (unknown or duplicate members, wrong
// types, unknown enum strings and bad times are InvalidArgument). Pure; thread-compatible.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/model/session_record.h"

namespace pulse::core {

// Largest encoded record SessionRecordFromJson accepts, and its nesting limit.
inline constexpr std::size_t kMaxSessionRecordJsonBytes = 8 << 20;
inline constexpr std::size_t kMaxSessionRecordJsonDepth = 8;
// Item limits of the decoder.
inline constexpr std::size_t kMaxSessionTranscriptMessages = 10000;
inline constexpr std::size_t kMaxSessionToolCallsPerMessage = 256;
inline constexpr std::size_t kMaxSessionFacts = 10000;
inline constexpr std::size_t kMaxSessionDeniedFingerprints = 1000;
inline constexpr std::size_t kMaxSessionToolsRun = 1000;

// {id, revision, status, transcript: [{role, content?, tool_calls?: [{id, name, arguments?,
// provider_state?}], tool_call_id?, tool_name?, is_error}], fsm: {state, wrote_this_episode,
// read_after_write, consecutive_verify_blocks, last_write_tool?, last_write_at_unix_nanos?,
// last_read_tool?, last_read_at_unix_nanos?}, facts: [{key, value?, tool_call_id?, turn}],
// suspended?: {tool_call_id, tool_name, arguments?, action_id, plan_hash, transcript_index,
// suspended_at, counters: {turns, provider_calls, input_tokens, output_tokens, tool_calls,
// tool_errors, evidence_calls, consecutive_error_turns, tools_run: {name: count}, cost_usd?,
// cost_unknown?}, denied_fingerprints}, usage?: [{turn, route?, input_tokens, output_tokens,
// cost_usd?, budget_applicable}], usage_totals?: {provider_calls, input_tokens, output_tokens,
// priced_cost_usd, unpriced_calls}, created_at, updated_at}. Empty optional strings are
// omitted, and so are an empty usage list and all-zero totals; records written before usage
// accounting (no usage, usage_totals or counter costs) or before provider_state (at most
// kMaxProviderStateBytes) decode with those empty. Money is a finite, non-negative number;
// times are RFC 3339 UTC.
[[nodiscard]] std::string SessionRecordToJson(const SessionRecord& record);

// The record `json` encodes. InvalidArgument when it is malformed, over the limits above, or
// breaks the shape above. It does not run ValidateSessionRecord (stores do, on write).
[[nodiscard]] absl::StatusOr<SessionRecord> SessionRecordFromJson(std::string_view json);

}  // namespace pulse::core
