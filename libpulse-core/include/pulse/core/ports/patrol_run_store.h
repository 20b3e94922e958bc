// PatrolRunStore: durable Patrol run history, the Patrol autonomy settings and its
// utilization thresholds (model/patrol_thresholds.h). A record is
// written when a run starts (status running) and replaced when it ends; only the newest
// kPatrolRunHistoryLimit records are kept (older ones are pruned on write).
// Thread-safety: implementations must be safe to call from any thread; every call is atomic.
// Codes: NotFound (unknown run id; no settings saved yet), InvalidArgument (an empty run id, a
// limit of 0), Unavailable or Internal (the backing store failed; nothing written).
// Real implementation: adapters/storage (SqlitePatrolRunStore); tests use
// pulse::testing::InMemoryPatrolRunStore. Every implementation must pass
// tests/contracts/patrol_run_store_contract.h.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/core/model/autonomy.h"
#include "pulse/core/model/patrol_run.h"
#include "pulse/core/model/patrol_thresholds.h"

namespace pulse::core {

class PatrolRunStore {
 public:
  virtual ~PatrolRunStore() = default;

  // Inserts or replaces the record with record.id, then prunes all but the newest
  // kPatrolRunHistoryLimit (by started_at, then id). InvalidArgument for an empty id.
  [[nodiscard]] virtual absl::Status Put(const PatrolRunRecord& record) = 0;

  // The record with this id. NotFound when there is none (or it was pruned).
  [[nodiscard]] virtual absl::StatusOr<PatrolRunRecord> Get(std::string_view id) const = 0;

  // At most `limit` records (1..kPatrolRunHistoryLimit), newest first (started_at descending,
  // then id descending). InvalidArgument for a limit outside the range.
  [[nodiscard]] virtual absl::StatusOr<std::vector<PatrolRunRecord>> List(
      std::size_t limit) const = 0;

  // The saved autonomy settings. NotFound when none were ever saved (callers use defaults).
  [[nodiscard]] virtual absl::StatusOr<AutonomySettings> LoadAutonomy() const = 0;
  // Replaces the saved autonomy settings.
  [[nodiscard]] virtual absl::Status SaveAutonomy(const AutonomySettings& settings) = 0;

  // The saved thresholds. NotFound when none were ever saved (callers use the defaults).
  [[nodiscard]] virtual absl::StatusOr<PatrolThresholdSettings> LoadThresholds() const = 0;
  // Replaces the saved thresholds (validated by the caller: PatrolThresholdsFromJson's rules).
  [[nodiscard]] virtual absl::Status SaveThresholds(const PatrolThresholdSettings& settings) = 0;
};

}  // namespace pulse::core
