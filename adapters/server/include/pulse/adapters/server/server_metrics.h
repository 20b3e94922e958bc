// The server's own Prometheus families, beside the HTTP adapter's request counters and
// latencies: tool calls by tool, kind and outcome; safety-gate (FSM) blocks; provider tokens;
// Assistant runs by outcome; governed actions by state (transitions as they commit, and the
// in-flight states as a gauge refreshed at each scrape); agent events published. Labels come
// only from closed sets or the server's own configuration (tool names from the registry, the
// configured route), never from request text.
// Thread-safe (the registry's families are); RunMetrics is one run's tracker (one thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/adapters/http/metrics_registry.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/model/fleet_source.h"
#include "pulse/core/model/loop_event.h"
#include "pulse/core/ports/action_store.h"

namespace pulse::server {

class ServerMetrics {
 public:
  // Registers the families. AlreadyExists when the registry has them already.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ServerMetrics>> Register(
      adapters::http::MetricsRegistry& registry);

  // One tool call ended: `kind` its workflow kind, `outcome` "ok" or the lower-case tool
  // error code (fsm_blocked, policy_blocked, ...).
  void ToolCall(std::string_view tool, std::string_view kind, std::string_view outcome);
  // One run ended (`done`): its outcome and the tokens it used on `route`.
  void RunDone(std::string_view outcome, std::string_view route, std::int64_t input_tokens,
               std::int64_t output_tokens);
  // An action entered `state` (created in it, or by a committed transition).
  void ActionEntered(core::ActionState state);
  void EventPublished(std::string_view kind);
  // Sets the in-flight action gauge (planned, pending_approval, approved, executing) from the
  // store; at most kActionScanLimit per state are counted. Store errors leave it unchanged.
  void RefreshActionGauge(core::ActionStore& store);
  // Sets the SQLite read-pool gauges (read connections open, their bound) from `stats` and
  // advances the fallback counter to stats.writer_fallbacks (reads that ran on the writer
  // because a read connection could not be opened).
  void RefreshReadPool(const adapters::storage::SqliteReadPoolStats& stats);
  // Sets pulse_fleet_source_up and pulse_fleet_source_resources per source (none for a fleet
  // of one source).
  void RefreshFleetSources(const std::vector<core::FleetSourceStatus>& sources);
  // Sets pulse_assistant_run_pool{state}: runs working and queued now, worker threads alive,
  // and the two bounds (max_workers, max_queue) (chat_runs.h).
  void RefreshRunPool(std::size_t working, std::size_t queued, std::size_t workers,
                      std::size_t max_workers, std::size_t max_queue);
  // A run was refused because the run queue was full.
  void RunRefused();

 private:
  ServerMetrics() = default;

  adapters::http::CounterFamily* tool_calls_ = nullptr;
  adapters::http::CounterFamily* fsm_blocks_ = nullptr;
  adapters::http::CounterFamily* provider_tokens_ = nullptr;
  adapters::http::CounterFamily* runs_ = nullptr;
  adapters::http::CounterFamily* action_transitions_ = nullptr;
  adapters::http::GaugeFamily* actions_in_flight_ = nullptr;
  adapters::http::CounterFamily* events_ = nullptr;
  adapters::http::GaugeFamily* read_connections_ = nullptr;
  adapters::http::CounterFamily* reader_fallbacks_ = nullptr;
  adapters::http::GaugeFamily* fleet_source_up_ = nullptr;
  adapters::http::GaugeFamily* fleet_source_resources_ = nullptr;
  adapters::http::GaugeFamily* run_pool_ = nullptr;
  adapters::http::CounterFamily* runs_refused_ = nullptr;
  absl::Mutex fallbacks_mu_;
  std::int64_t fallbacks_seen_ ABSL_GUARDED_BY(fallbacks_mu_) = 0;
};

// Follows the events of one run and reports its tool calls and its end to ServerMetrics. The
// kind of a call comes from the one classifier (ClassifyToolCall) over the arguments of its
// tool_start; the outcome from its tool_end.
// A resumed run's `done` counts the suspended run's tokens too: pass those as the baseline so
// they are not counted twice.
struct TokenBaseline {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
};

class RunMetrics {
 public:
  explicit RunMetrics(ServerMetrics& metrics, TokenBaseline baseline = {})
      : metrics_(metrics), baseline_(baseline) {}
  void Observe(const core::LoopEvent& event);

 private:
  ServerMetrics& metrics_;
  const TokenBaseline baseline_;
  std::map<std::string, std::string> kinds_;  // tool call id -> kind
};

}  // namespace pulse::server
