// Internal to src/patrol: one run's working state (PatrolService::Work) and the small helpers
// the run orchestration (patrol_service.cc) and the investigation (patrol_investigation.cc)
// share. Not part of the public API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "patrol_tools.h"
#include "pulse/core/findings/run_ledger.h"
#include "pulse/core/patrol/patrol_service.h"
#include "pulse/core/ports/event_sink.h"
#include "pulse/core/ports/patrol_observer.h"
#include "watch_evidence.h"

namespace pulse::core {

namespace patrol_internal {

inline constexpr std::size_t kMaxErrorDetailBytes = 2048;
inline constexpr std::size_t kMaxAnalysisBytes = 8192;

// A model run of Patrol has no user to stream to.
class NullSink final : public EventSink {
 public:
  void Emit(const LoopEvent&) override {}
};

// Hands a run's loop events to the PatrolObserver (borrowed, non-null) under the run's id.
class ObserverSink final : public EventSink {
 public:
  ObserverSink(PatrolObserver* observer, std::string run_id)
      : observer_(observer), run_id_(std::move(run_id)) {}
  void Emit(const LoopEvent& event) override {
    if (observer_ != nullptr) {
      observer_->OnModelEvent(run_id_, event);
    }
  }

 private:
  PatrolObserver* observer_;  // nullable: then the sink drops every event
  std::string run_id_;
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
  // What triage read of each resource in scope, for the Watch pass's evidence summary.
  std::vector<patrol_internal::ResourceEvidence> evidence;
  // This run's model (PatrolModelChoice); null: deterministic checks only.
  std::shared_ptr<const PatrolModel> model;
  // How this run's model fared (TrackModelHealth): nullopt when it did not try to use one
  // (no provider, triage failed); set when the model answered (empty reason) or could not be
  // used (the reason code, e.g. provider_unavailable or model_preflight_failed).
  std::optional<std::string> model_failure;
  std::string model_failure_detail;

  void Error(std::string text) { errors.push_back(std::move(text)); }
  bool InScope(std::string_view id) const { return scope_ids.count(id) > 0; }
};

}  // namespace pulse::core
