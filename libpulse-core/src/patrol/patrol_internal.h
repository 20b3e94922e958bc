// Internal to src/patrol: one run's working state (PatrolService::Work) and the small helpers
// the run orchestration (patrol_service.cc) and the investigation (patrol_investigation.cc)
// share. Not part of the public API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "patrol_tools.h"
#include "pulse/core/findings/run_ledger.h"
#include "pulse/core/patrol/patrol_service.h"
#include "pulse/core/ports/event_sink.h"

namespace pulse::core {

namespace patrol_internal {

inline constexpr std::size_t kMaxErrorDetailBytes = 2048;
inline constexpr std::size_t kMaxAnalysisBytes = 8192;

// A model run of Patrol has no user to stream to.
class NullSink final : public EventSink {
 public:
  void Emit(const LoopEvent&) override {}
};

inline std::string Bounded(std::string text, std::size_t max) {
  if (text.size() > max) {
    text.resize(max);
  }
  return text;
}

inline bool Contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

inline void AddUnique(std::vector<std::string>& list, const std::string& item) {
  if (!Contains(list, item)) {
    list.push_back(item);
  }
}

// An operator's note as one prompt line (patrol_service.cc): control characters become
// spaces; at most 512 bytes, cut at a UTF-8 character boundary and ended with "...".
std::string NoteLine(std::string_view note);

}  // namespace patrol_internal

struct PatrolService::Work {
  PatrolTicket ticket;
  PatrolRunRecord record;
  AutonomySettings settings;
  AutonomyLevel effective = AutonomyLevel::kMonitor;
  std::set<std::string, std::less<>> scope_ids;
  // What the run did with findings: seeded, reported by triage or the model, assessed — the
  // stale reconciliation's input.
  FindingRunLedger seen;
  // The Watch pass's own tools and ledger: every finding shown to the model needs the model's
  // outcome; a deterministic re-detection does not count as the model's verdict.
  patrol_internal::PatrolRunState state;
  std::vector<std::string> errors;
  // This run's model (PatrolModelChoice); null: deterministic checks only.
  std::shared_ptr<const PatrolModel> model;

  void Error(std::string text) { errors.push_back(std::move(text)); }
  bool InScope(std::string_view id) const { return scope_ids.count(id) > 0; }
};

}  // namespace pulse::core
