#include "pulse/core/agent/agent_query.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

namespace w = agent_wire;

constexpr std::array<WireName<ActionListView>, 2> kViewNames = {{
    {ActionListView::kPending, "pending"},
    {ActionListView::kSettled, "settled"},
}};

// The first value of `name`, or nullopt when the parameter is absent.
std::optional<std::string_view> First(const QueryParams& params, std::string_view name) {
  auto it = params.lower_bound(std::string(name));
  if (it == params.end() || it->first != name) {
    return std::nullopt;
  }
  return std::string_view(it->second);
}

// A non-empty value, or nullopt for an absent or empty parameter.
std::optional<std::string_view> NonEmpty(const QueryParams& params, std::string_view name) {
  std::optional<std::string_view> value = First(params, name);
  if (!value.has_value() || value->empty()) {
    return std::nullopt;
  }
  return value;
}

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

bool IsTrueFlag(std::optional<std::string_view> value) {
  if (!value.has_value()) {
    return false;
  }
  const std::string lower = AsciiLower(*value);
  return lower == "1" || lower == "true";
}

// Decimal digits only (no sign, no spaces), at most 9 of them so the value fits; nullopt else.
std::optional<std::size_t> ParseDigits(std::string_view text) {
  if (text.empty() || text.size() > 9) {
    return std::nullopt;
  }
  std::size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  return value;
}

// A fleet filter value worth honouring: bounded text without control characters.
std::optional<std::string> FleetFilter(const QueryParams& params, std::string_view name) {
  std::optional<std::string_view> value = NonEmpty(params, name);
  if (!value.has_value() || value->size() > kMaxFleetFilterBytes || !IsValidUtf8(*value)) {
    return std::nullopt;
  }
  for (char c : *value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      return std::nullopt;
    }
  }
  return std::string(*value);
}

// InvalidArgument "<parameter> <reason>" with the payload AgentQueryError reads back.
absl::Status InvalidParameter(AgentErrorCode code, std::string_view parameter,
                              std::string_view reason) {
  const absl::string_view p = ToAbsl(parameter);
  const absl::string_view r = ToAbsl(reason);
  absl::Status status = absl::InvalidArgumentError(absl::StrCat(p, " ", r));
  JsonWriter payload;
  payload.StartObject();
  payload.Member("code", ToString(code));
  payload.Member("parameter", parameter);
  payload.Member("reason", reason);
  payload.EndObject();
  status.SetPayload(kAgentQueryErrorPayloadUrl, absl::Cord(payload.Take()));
  return status;
}

}  // namespace

FleetContextQuery ParseFleetContextQuery(const QueryParams& params) {
  FleetContextQuery query;
  query.has_findings = IsTrueFlag(First(params, w::kQueryHasFindings));
  if (std::optional<std::string_view> severity = NonEmpty(params, w::kQuerySeverity)) {
    const std::optional<Severity> parsed = ParseSeverity(AsciiLower(*severity));
    if (parsed == Severity::kCritical || parsed == Severity::kWarning ||
        parsed == Severity::kInfo) {
      query.severity = parsed;
    }
  }
  query.technology = FleetFilter(params, w::kQueryTechnology).value_or("");
  query.resource_type = FleetFilter(params, w::kQueryResourceType).value_or("");
  return query;
}

std::string_view ToString(ActionListView view) { return WireNameOf(kViewNames, view); }

std::optional<ActionListView> ParseActionListView(std::string_view text) {
  return WireValueOf(kViewNames, text);
}

absl::StatusOr<ActionListQuery> ParseActionListQuery(const QueryParams& params) {
  ActionListQuery query;
  if (std::optional<std::string_view> view = NonEmpty(params, w::kQueryView)) {
    std::optional<ActionListView> parsed = ParseActionListView(*view);
    if (!parsed.has_value()) {
      return InvalidParameter(AgentErrorCode::kInvalidActionListView, w::kQueryView,
                              "must be pending or settled");
    }
    query.view = *parsed;
  }
  if (std::optional<std::string_view> limit = NonEmpty(params, w::kQueryLimit)) {
    std::optional<std::size_t> parsed = ParseDigits(*limit);
    if (!parsed.has_value() || *parsed < 1 || *parsed > kMaxActionListLimit) {
      return InvalidParameter(
          AgentErrorCode::kInvalidActionListLimit, w::kQueryLimit,
          absl::StrCat("must be an integer between 1 and ", kMaxActionListLimit));
    }
    query.limit = *parsed;
  }
  if (std::optional<std::string_view> cursor = NonEmpty(params, w::kQueryCursor)) {
    absl::StatusOr<ActionCursor> decoded = DecodeActionCursor(*cursor);
    if (!decoded.ok()) {
      return decoded.status();
    }
    if (decoded->view != query.view) {
      return InvalidParameter(AgentErrorCode::kInvalidActionListCursor, w::kQueryCursor,
                              "belongs to the other view");
    }
    query.after = std::move(decoded->position);
  }
  return query;
}

FindingListQuery ParseFindingListQuery(const QueryParams& params) {
  FindingListQuery query;
  if (std::optional<std::string_view> resource = NonEmpty(params, w::kQueryResourceId)) {
    query.resource_id = std::string(*resource);
  }
  query.include_resolved = IsTrueFlag(First(params, w::kQueryIncludeResolved));
  query.include_hidden = IsTrueFlag(First(params, w::kQueryIncludeHidden));
  if (std::optional<std::string_view> limit = NonEmpty(params, w::kQueryLimit)) {
    // Pulse parses leniently: garbage means the default, and anything above the cap is the cap.
    // A ten-digit or longer number is above the cap as well.
    const bool all_digits = limit->find_first_not_of("0123456789") == std::string_view::npos;
    if (all_digits) {
      const std::optional<std::size_t> parsed = ParseDigits(*limit);
      query.limit =
          parsed.has_value() ? std::min(*parsed, kMaxFindingListLimit) : kMaxFindingListLimit;
    }
  }
  if (std::optional<std::string_view> cursor = NonEmpty(params, w::kQueryCursor)) {
    query.cursor = std::string(*cursor);
  }
  return query;
}

namespace {

constexpr std::string_view kCursorPrefix = "f1.";
// Longest finding id a cursor may carry.
constexpr std::size_t kMaxCursorIdBytes = 512;

absl::Status BadCursor(std::string_view reason) {
  return InvalidParameter(AgentErrorCode::kInvalidFindingRequest, w::kQueryCursor, reason);
}

}  // namespace

std::string EncodeFindingCursor(const FindingPagePosition& position) {
  const std::string payload =
      absl::StrCat(ToAbsl(ToString(position.severity)), "\n",
                   absl::ToUnixNanos(position.detected_at), "\n", ToAbsl(position.id));
  return absl::StrCat(ToAbsl(kCursorPrefix), absl::WebSafeBase64Escape(payload));
}

absl::StatusOr<FindingPagePosition> DecodeFindingCursor(std::string_view cursor) {
  if (cursor.empty()) {
    return BadCursor("must not be empty");
  }
  if (cursor.size() > kMaxFindingCursorBytes) {
    return BadCursor("is too long");
  }
  if (cursor.substr(0, kCursorPrefix.size()) != kCursorPrefix) {
    return BadCursor("is not a cursor this server issued");
  }
  std::string payload;
  if (!absl::WebSafeBase64Unescape(ToAbsl(cursor.substr(kCursorPrefix.size())), &payload)) {
    return BadCursor("is not a cursor this server issued");
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(payload, absl::MaxSplits('\n', 2));
  if (parts.size() != 3) {
    return BadCursor("is not a cursor this server issued");
  }
  FindingPagePosition position;
  const std::optional<Severity> severity =
      ParseSeverity(std::string_view(parts[0].data(), parts[0].size()));
  std::int64_t ns = 0;
  if (!severity.has_value() || !absl::SimpleAtoi(parts[1], &ns) ||
      parts[1].find_first_not_of("-0123456789") != absl::string_view::npos) {
    return BadCursor("is not a cursor this server issued");
  }
  const absl::string_view id = parts[2];
  if (id.empty() || id.size() > kMaxCursorIdBytes ||
      !IsValidUtf8(std::string_view(id.data(), id.size())) ||
      std::any_of(id.begin(), id.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7F;
      })) {
    return BadCursor("is not a cursor this server issued");
  }
  position.severity = *severity;
  position.detected_at = absl::FromUnixNanos(ns);
  position.id = std::string(id);
  return position;
}

namespace {

constexpr std::string_view kActionCursorPrefix = "a1.";
constexpr std::string_view kSessionCursorPrefix = "s1.";

// An id a list cursor may carry: 1..kMaxCursorIdBytes of valid UTF-8 without control characters.
bool IsCursorId(absl::string_view id) {
  return !id.empty() && id.size() <= kMaxCursorIdBytes &&
         IsValidUtf8(std::string_view(id.data(), id.size())) &&
         std::none_of(id.begin(), id.end(), [](char c) {
           const auto u = static_cast<unsigned char>(c);
           return u < 0x20 || u == 0x7F;
         });
}

// Signed decimal digits only (absl::SimpleAtoi alone also takes spaces and a plus sign).
bool ParseCursorNanos(absl::string_view text, std::int64_t& ns) {
  return !text.empty() && text.find_first_not_of("-0123456789") == absl::string_view::npos &&
         absl::SimpleAtoi(text, &ns);
}

// The `fields` newline-separated fields of a list cursor with `prefix`, or a reason it is not
// one: for the caller to wrap in its own code.
absl::StatusOr<std::vector<std::string>> CursorFields(std::string_view cursor,
                                                      std::string_view prefix, int fields) {
  if (cursor.empty()) {
    return absl::InvalidArgumentError("must not be empty");
  }
  if (cursor.size() > kMaxListCursorBytes) {
    return absl::InvalidArgumentError("is too long");
  }
  std::string payload;
  if (cursor.substr(0, prefix.size()) != prefix ||
      !absl::WebSafeBase64Unescape(ToAbsl(cursor.substr(prefix.size())), &payload)) {
    return absl::InvalidArgumentError("is not a cursor this server issued");
  }
  std::vector<std::string> parts = absl::StrSplit(payload, absl::MaxSplits('\n', fields - 1));
  if (static_cast<int>(parts.size()) != fields) {
    return absl::InvalidArgumentError("is not a cursor this server issued");
  }
  return parts;
}

}  // namespace

std::string EncodeActionCursor(ActionListView view, const ActionPagePosition& position) {
  const std::string payload = absl::StrCat(
      ToAbsl(ToString(view)), "\n", absl::ToUnixNanos(position.key), "\n", ToAbsl(position.id));
  return absl::StrCat(ToAbsl(kActionCursorPrefix), absl::WebSafeBase64Escape(payload));
}

absl::StatusOr<ActionCursor> DecodeActionCursor(std::string_view cursor) {
  absl::StatusOr<std::vector<std::string>> parts = CursorFields(cursor, kActionCursorPrefix, 3);
  if (!parts.ok()) {
    return InvalidParameter(AgentErrorCode::kInvalidActionListCursor, w::kQueryCursor,
                            std::string(parts.status().message()));
  }
  ActionCursor out;
  const std::optional<ActionListView> view = ParseActionListView((*parts)[0]);
  std::int64_t ns = 0;
  if (!view.has_value() || !ParseCursorNanos((*parts)[1], ns) || !IsCursorId((*parts)[2])) {
    return InvalidParameter(AgentErrorCode::kInvalidActionListCursor, w::kQueryCursor,
                            "is not a cursor this server issued");
  }
  out.view = *view;
  out.position.key = absl::FromUnixNanos(ns);
  out.position.id = std::move((*parts)[2]);
  return out;
}

std::string EncodeSessionCursor(const SessionPagePosition& position) {
  const std::string payload =
      absl::StrCat(absl::ToUnixNanos(position.updated_at), "\n", ToAbsl(position.id));
  return absl::StrCat(ToAbsl(kSessionCursorPrefix), absl::WebSafeBase64Escape(payload));
}

absl::StatusOr<SessionPagePosition> DecodeSessionCursor(std::string_view cursor) {
  absl::StatusOr<std::vector<std::string>> parts = CursorFields(cursor, kSessionCursorPrefix, 2);
  if (!parts.ok()) {
    return InvalidParameter(AgentErrorCode::kInvalidRequest, w::kQueryCursor,
                            std::string(parts.status().message()));
  }
  std::int64_t ns = 0;
  if (!ParseCursorNanos((*parts)[0], ns) || !ValidateSessionId((*parts)[1]).ok()) {
    return InvalidParameter(AgentErrorCode::kInvalidRequest, w::kQueryCursor,
                            "is not a cursor this server issued");
  }
  SessionPagePosition out;
  out.updated_at = absl::FromUnixNanos(ns);
  out.id = std::move((*parts)[1]);
  return out;
}

std::optional<AgentError> AgentQueryError(const absl::Status& status) {
  if (status.ok()) {
    return std::nullopt;
  }
  auto payload = status.GetPayload(kAgentQueryErrorPayloadUrl);  // an absl::optional
  if (!payload.has_value()) {
    return std::nullopt;
  }
  absl::StatusOr<rapidjson::Document> doc = ParseJson(std::string(*payload), JsonLimits{4096, 2});
  if (!doc.ok() || !doc->IsObject()) {
    return std::nullopt;
  }
  std::optional<std::string_view> code = GetString(*doc, "code");
  std::optional<std::string_view> parameter = GetString(*doc, "parameter");
  std::optional<std::string_view> reason = GetString(*doc, "reason");
  if (!code.has_value() || !parameter.has_value() || !reason.has_value()) {
    return std::nullopt;
  }
  std::optional<AgentErrorCode> parsed = ParseAgentErrorCode(*code);
  if (!parsed.has_value()) {
    return std::nullopt;
  }
  AgentError error;
  error.code = *parsed;
  error.message = std::string(status.message());
  error.details.emplace(std::string(*parameter), std::string(*reason));
  return error;
}

}  // namespace pulse::core
