// Query parameters of the agent-surface read routes (docs/api.md: fleet context,
// action list, findings list), decoded from the raw name/value pairs of a query string so
// the HTTP layer only hands them over. When a name repeats, its first value counts. The parsers
// keep Pulse's leniency (fleet-context filters that are not valid are ignored, the findings list
// clamps its limit, the action list refuses a bad view or limit with typed errors), but
// pulse-server checks every query against the route's declared parameters before a handler
// runs (adapters/http query_validator.h), so over HTTP a value these would ignore is refused.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/model/finding_types.h"
#include "pulse/core/model/session_record.h"
#include "pulse/core/ports/action_store.h"
#include "pulse/core/ports/finding_store.h"

namespace pulse::core {

// Decoded query pairs; the same container as httplib::Params, so a handler passes its own.
using QueryParams = std::multimap<std::string, std::string>;

// Longest technology / resourceType filter honoured; a longer one is ignored.
inline constexpr std::size_t kMaxFleetFilterBytes = 128;

// GET /api/agent/fleet-context. Every member is a filter; unset members do not filter.
struct FleetContextQuery {
  bool has_findings = false;         // only resources with at least one active finding
  std::optional<Severity> severity;  // only resources with an active finding in this bucket
  std::string technology;            // case-insensitive exact match; "" = any
  std::string resource_type;         // case-insensitive exact match; "" = any
};

// hasFindings: "true" or "1" (any case) sets it, anything else leaves it unset. severity:
// critical, warning or info in any case (other values, watch included, are ignored).
// technology, resourceType: taken as given unless empty, longer than kMaxFleetFilterBytes or
// holding control characters (ignored). Never fails.
FleetContextQuery ParseFleetContextQuery(const QueryParams& params);

// GET /api/actions?view=: pending (in flight: planned, pending_approval, approved, executing;
// oldest first, the decision queue) or settled (rejected, expired, completed, failed; newest
// first).
enum class ActionListView { kPending, kSettled };
// Wire: pending, settled.
std::string_view ToString(ActionListView view);
// Exact match; nullopt otherwise.
std::optional<ActionListView> ParseActionListView(std::string_view text);

inline constexpr std::size_t kDefaultActionListLimit = 100;
inline constexpr std::size_t kMaxActionListLimit = 500;

struct ActionListQuery {
  ActionListView view = ActionListView::kPending;
  std::size_t limit = kDefaultActionListLimit;  // 1..kMaxActionListLimit
  // Where the previous page of the same view ended (its X-Next-Cursor, decoded); unset = the
  // first page.
  std::optional<ActionPagePosition> after;
};

// view: absent or empty = pending; otherwise exactly pending|settled, else InvalidArgument
// "view must be pending or settled" (agent code invalid_action_list_view). limit: absent or
// empty = kDefaultActionListLimit; otherwise decimal digits only, 1..kMaxActionListLimit, else
// InvalidArgument "limit must be an integer between 1 and 500" (invalid_action_list_limit).
// cursor: absent or empty = the first page; otherwise DecodeActionCursor's position, which must
// be a cursor of the same view (invalid_action_list_cursor otherwise).
// AgentQueryError turns any of them into the agent envelope.
[[nodiscard]] absl::StatusOr<ActionListQuery> ParseActionListQuery(const QueryParams& params);

// The longest list cursor accepted (actions and sessions; a longer one is malformed).
inline constexpr std::size_t kMaxListCursorBytes = 1024;

// The opaque cursor that continues the action list of `view` after `position`: "a1." and the
// web-safe base64 of the view, the order key in Unix nanoseconds and the id.
std::string EncodeActionCursor(ActionListView view, const ActionPagePosition& position);

// The view and position a cursor of EncodeActionCursor names. InvalidArgument "cursor <reason>"
// with the AgentQueryError payload (code invalid_action_list_cursor, parameter cursor) for
// anything else: empty, too long, wrong prefix, not base64, wrong field count, unknown view, a
// time that is not an integer, an empty or over-long id or one holding a control character.
struct ActionCursor {
  ActionListView view = ActionListView::kPending;
  ActionPagePosition position;
};
[[nodiscard]] absl::StatusOr<ActionCursor> DecodeActionCursor(std::string_view cursor);

// The opaque cursor that continues the session list after `position`: "s1." and the web-safe
// base64 of the updated time in Unix nanoseconds and the session id.
std::string EncodeSessionCursor(const SessionPagePosition& position);

// The position a cursor of EncodeSessionCursor names. InvalidArgument "cursor <reason>" with the
// AgentQueryError payload (code invalid_request, parameter cursor) for anything else: empty, too
// long, wrong prefix, not base64, wrong field count, a time that is not an integer, or an id that
// is not a valid session id.
[[nodiscard]] absl::StatusOr<SessionPagePosition> DecodeSessionCursor(std::string_view cursor);

inline constexpr std::size_t kMaxFindingListLimit = 500;
inline constexpr std::size_t kDefaultResolvedFindingListLimit = 200;

// GET /api/ai/patrol/findings.
struct FindingListQuery {
  std::optional<std::string> resource_id;  // exact resource id
  bool include_resolved = false;           // resolved findings too, not only active ones
  bool include_hidden = false;             // snoozed, dismissed and suppressed ones too
  // 0 = the default: every match (capped at kMaxFindingListLimit) for the active list,
  // kDefaultResolvedFindingListLimit with include_resolved.
  std::size_t limit = 0;
  // The opaque cursor of a previous page (its next cursor), as sent (empty = absent, the first
  // page); decoded by DecodeFindingCursor when the list is read.
  std::optional<std::string> cursor;
};

// resource_id: used when not empty. include_resolved, include_hidden: "1" or "true" (any case).
// limit: decimal digits; above kMaxFindingListLimit it is clamped, and anything unparsable means
// the default. Never fails.
FindingListQuery ParseFindingListQuery(const QueryParams& params);

// The longest cursor accepted (a longer one is malformed).
inline constexpr std::size_t kMaxFindingCursorBytes = 1024;

// The opaque cursor that continues the findings list after `position`: "f1." and the web-safe
// base64 of the position. Clients must treat it as opaque; only DecodeFindingCursor reads it.
std::string EncodeFindingCursor(const FindingPagePosition& position);

// The position a cursor of EncodeFindingCursor names. InvalidArgument "cursor <reason>" with
// the AgentQueryError payload (code invalid_finding_request, parameter cursor) for anything
// else: empty, too long, wrong prefix, not base64, wrong field count, unknown severity, a time
// that is not an integer, an empty or over-long id or one holding a control character.
[[nodiscard]] absl::StatusOr<FindingPagePosition> DecodeFindingCursor(std::string_view cursor);

inline constexpr char kAgentQueryErrorPayloadUrl[] = "type.pulse.dev/pulse.core.AgentQueryError";

// The agent envelope of a failed ParseActionListQuery: its code, the message, and details
// {"<parameter>": "<reason>"}. nullopt for OK or for a status these parsers did not make.
std::optional<AgentError> AgentQueryError(const absl::Status& status);

}  // namespace pulse::core
