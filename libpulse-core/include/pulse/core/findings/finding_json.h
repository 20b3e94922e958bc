// The snake_case JSON form of a Finding (docs/architecture.md "Findings"), used for HTTP responses
// and as the persisted record of a store. The encoder never fails and always emits valid UTF-8 (an
// ill-formed byte sequence becomes U+FFFD; a non-finite forecast number is omitted). The
// decoder treats its input as hostile: it is bounded (size, depth, field lengths, lifecycle
// length) and strict (unknown or duplicate members, wrong types, unknown enum strings, bad
// times are InvalidArgument). Pure functions; thread-compatible.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/finding.h"

namespace pulse::core {

// Largest encoded finding FindingFromJson accepts, and its nesting limit (the opaque
// investigation_record and objective_context objects included).
inline constexpr std::size_t kMaxFindingJsonBytes = 2 << 20;
inline constexpr std::size_t kMaxFindingJsonDepth = 16;

struct FindingJsonOptions {
  // alert_identifier is persisted but hidden from public JSON (docs/architecture.md "Findings").
  bool include_private = true;
  // When set, loop_state is derived at this instant (DeriveLoopState) instead of the stored
  // value, so a lapsed snooze reads as what it now is. Public surfaces set it.
  std::optional<absl::Time> now;
};

// Members in wire order; optional members are omitted when empty. auto_resolved,
// times_raised, suppressed and investigation_attempts are always present. Times are RFC 3339
// UTC ("2027-01-15T08:00:00Z", fractional seconds when present). capacity_forecast is
// {metric?, reading, sample_count, current_pct?, daily_change?, days_to_full} with
// days_to_full -1 when the series has no fill date (wire compatibility).
std::string FindingToJson(const Finding& finding, const FindingJsonOptions& options = {});

// A JSON array of FindingToJson objects.
std::string FindingListToJson(std::span<const Finding> findings,
                              const FindingJsonOptions& options = {});

// Decodes one finding. Required: id, severity, category, resource_id, title, detected_at,
// last_seen_at. Errors: InvalidArgument naming the offending member.
absl::StatusOr<Finding> FindingFromJson(std::string_view json);

// The forecast object alone (as embedded in a finding).
std::string CapacityForecastToJson(const CapacityForecast& forecast);
absl::StatusOr<CapacityForecast> CapacityForecastFromJson(std::string_view json);

}  // namespace pulse::core
