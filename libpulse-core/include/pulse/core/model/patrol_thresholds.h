// Patrol's utilization thresholds as operator settings (GET/PUT /api/settings/patrol,
// docs/patrol.md "Thresholds"): a warning and a critical level for CPU, memory, disk and
// storage, with per-resource-type and per-resource overrides. The built-in defaults are the
// levels triage used before they were settings (TriageThresholds, patrol/triage.h, which also
// has EffectiveThresholds). Pure values and functions; thread-compatible.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::core {

inline constexpr std::size_t kMaxThresholdTypeOverrides = 64;
inline constexpr std::size_t kMaxThresholdResourceOverrides = 1024;

// Percentages in [0, 100] with warning < critical.
struct ThresholdLevels {
  double warning = 0;
  double critical = 0;
  friend bool operator==(const ThresholdLevels&, const ThresholdLevels&) = default;
};

// The four levelled metrics; an override names some of them (absent: the next level down).
struct ThresholdSet {
  std::optional<ThresholdLevels> cpu;
  std::optional<ThresholdLevels> memory;
  std::optional<ThresholdLevels> disk;
  std::optional<ThresholdLevels> storage;
  friend bool operator==(const ThresholdSet&, const ThresholdSet&) = default;
};

struct PatrolThresholdSettings {
  // Every metric set: the built-in defaults unless the operator changed them.
  ThresholdSet defaults = BuiltinDefaults();
  std::map<std::string, ThresholdSet> resource_types;  // by resource type ("vm", "storage")
  std::map<std::string, ThresholdSet> resources;       // by canonical resource id
  std::optional<absl::Time> updated_at;                // unset: never changed
  std::string updated_by;                              // the token id of the last change

  // cpu 90/98, memory 90/98, disk 85/95, storage 85/95 (percent).
  static ThresholdSet BuiltinDefaults();
  friend bool operator==(const PatrolThresholdSettings&, const PatrolThresholdSettings&) = default;
};

// The wire and storage JSON: { defaults: { cpu: { warning, critical }, memory, disk, storage },
// resource_types: { <type>: { <metric>: levels } }, resources: { <id>: { ... } },
// updated_at?, updated_by? }.
std::string PatrolThresholdsToJson(const PatrolThresholdSettings& settings);

// Parses and validates that JSON. `with_meta` false (a PUT body): updated_at/updated_by are
// refused, absent defaults metrics take the built-in levels, absent sections are empty.
// InvalidArgument naming the first problem: not an object, an unknown or repeated member, a
// level outside 0..100 or not a number, warning not below critical, a type that is not
// [a-z][a-z0-9-]{0,31}, a resource that is not a canonical id, an empty override, more than
// kMaxThresholdTypeOverrides types or kMaxThresholdResourceOverrides resources.
absl::StatusOr<PatrolThresholdSettings> PatrolThresholdsFromJson(std::string_view json,
                                                                 bool with_meta);

}  // namespace pulse::core
