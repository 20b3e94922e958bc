// Internal to src/patrol: the bounded evidence summary the Watch pass starts from (PAT-2/3,
// docs/patrol.md "The evidence Watch receives"). For every resource in scope: its live status
// and the change since the previous run, its metrics against the triage thresholds, its
// status facts and restart trend, what the operator declared about it, and its active findings
// with their recent lifecycle. Capped in resources and bytes, and it says so when it is cut.
// Pure values and functions, plus StatusMemory (thread-safe). Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/findings/operator_suppression.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/patrol/triage.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core::patrol_internal {

inline constexpr std::size_t kWatchEvidenceMaxResources = 40;
inline constexpr std::size_t kWatchEvidenceMaxBytes = 12 * 1024;
inline constexpr std::size_t kWatchEvidenceMaxFindings = 5;  // per resource
inline constexpr std::size_t kWatchEvidenceMaxEvents = 3;    // per finding, newest
inline constexpr std::size_t kWatchEvidenceMaxFacts = 12;    // per resource
inline constexpr std::size_t kWatchEvidenceMaxValueBytes = 80;

// One resource in scope as this run's triage saw it.
struct ResourceEvidence {
  FleetResource resource;
  std::optional<FleetStatus> status;  // nullopt: its status could not be read this run
  std::string previous_status;        // at the previous run; "" when unknown
  std::optional<std::int64_t> restarts_in_window;
  // The levels in force for it (the operator's settings, patrol_thresholds.h); the service's
  // thresholds when unset.
  std::optional<TriageThresholds> thresholds;
  // Its active findings (in id order) up to kWatchEvidenceMaxFindings, the ones the summary
  // shows; more_findings counts the rest, which it only counts.
  std::vector<Finding> findings;
  std::size_t more_findings = 0;
  std::optional<OperatorStateProjection> operator_state;  // nullopt: none declared or unread
};

struct WatchEvidenceLimits {
  std::size_t max_resources = kWatchEvidenceMaxResources;
  std::size_t max_bytes = kWatchEvidenceMaxBytes;
};

// The summary text: a header, one block per resource (those with findings, a metric at or
// over its threshold, a status change or operator state first; then the rest, each group in
// id order), and, when a cap cut it, a line saying how many resources are not shown and that
// they can be read with the tools. `withheld` local-only resources are only counted.
std::string RenderWatchEvidence(const std::vector<ResourceEvidence>& items,
                                const TriageThresholds& thresholds, absl::Time now,
                                std::size_t withheld = 0, const WatchEvidenceLimits& limits = {});

// The status each resource had when Patrol last read it, so the next run can say what changed.
// Bounded to kMaxResources entries (further resources are not remembered). Thread-safe.
class StatusMemory final {
 public:
  static constexpr std::size_t kMaxResources = 4096;

  // The status remembered for `id` ("" when none), and remembers `status` in its place.
  std::string Exchange(const std::string& id, const std::string& status);

 private:
  absl::Mutex mu_;
  std::map<std::string, std::string> statuses_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::core::patrol_internal
