// FleetSampleRecorder: copies the metric history that some fleet sources keep themselves (the
// Docker source's stats sampler, a Proxmox VE cluster's rrddata) into the server's stored
// metrics history, so capacity forecasts and the metrics tool see them under the fleet's ids
// and they outlive the source's bounded in-memory history (docs/fleet.md, "Metric history").
// Every `interval` it lists the fleet, and for each resource of a source of a recorded kind
// (the resource's `pulse.source` attribute, the kind from SourceStatuses) reads each of that
// kind's metrics through Fleet::ReadMetricHistory since the newest point it already copied (the
// kind's first_window back for a series it has not copied yet), and appends the newer points
// in one transaction. A fleet without such a source costs one SourceStatuses call.
// Samples older than `retention` are deleted from the stored history once an hour.
// Thread-safety: Start, Stop and RecordOnce from any thread (RecordOnce calls are serialized).
// Borrows the fleet, the history and the clock, which must outlive it (Stop joins the thread).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_metrics_history.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::server {

// What is copied from the sources of one kind.
struct RecordedKind {
  std::vector<std::string> metrics;
  absl::Duration first_window;  // how far back the first copy of a series reads
  // The source's history lives in this process and ends with it (the docker source's sampler):
  // Stop copies it once more, so the samples since the last round are kept. A source that keeps
  // its own history (a Proxmox VE cluster's rrddata) is not read on Stop: the next start reads
  // it back, and shutdown does not wait on the network.
  bool copy_on_stop = false;
};

struct FleetSampleRecorderOptions {
  // docker: cpu (percent of one CPU) and memory_pct (percent of the container's limit), the
  // last hour of the source's own samples. proxmox-ve: storage usage (percent), a day back,
  // which the source answers from PVE's rrddata, so a storage forecast has a day of history
  // from the first round (a non-storage resource answers NotFound for usage and is skipped).
  std::map<std::string, RecordedKind> kinds = {
      {"docker", {{"cpu", "memory_pct"}, absl::Hours(1), /*copy_on_stop=*/true}},
      {"proxmox-ve", {{"usage"}, absl::Hours(24), /*copy_on_stop=*/false}}};
  absl::Duration interval = absl::Seconds(15);
  // The stored history keeps this long: once per prune_interval (and on the first round) every
  // stored sample older than that is deleted, so recording never grows the store without end
  // (about 2 samples per container every 15 s). 0 keeps everything.
  absl::Duration retention = absl::Hours(24 * 30);
  absl::Duration prune_interval = absl::Hours(1);
};

class FleetSampleRecorder {
 public:
  FleetSampleRecorder(core::Fleet& fleet, adapters::storage::SqliteMetricsHistory& history,
                      const core::Clock& clock, FleetSampleRecorderOptions options = {});
  ~FleetSampleRecorder();  // Stop()
  FleetSampleRecorder(const FleetSampleRecorder&) = delete;
  FleetSampleRecorder& operator=(const FleetSampleRecorder&) = delete;

  // True when the fleet has a source of a recorded kind (only then is the thread worth it).
  bool HasRecordedSource();
  // Starts the thread (a second call does nothing).
  void Start();
  // Ends the thread and joins it: a round in progress stops before its next read and keeps what
  // it read (a remote source answers each read over the network). When the thread ran, one last
  // round then copies the kinds marked copy_on_stop (in-process histories, read without the
  // network), so their samples since the last round are kept. Idempotent; RecordOnce after Stop
  // reads nothing.
  void Stop();
  // One round now, what the thread does every interval: the number of samples appended. An
  // error only when the history refused the batch (nothing of the round is kept then).
  absl::StatusOr<std::size_t> RecordOnce();

 private:
  void Loop();
  bool Stopping();
  // One round over every recorded kind, or (`on_stop`) over the copy_on_stop kinds only, which
  // does not stop early.
  absl::StatusOr<std::size_t> Record(bool on_stop);

  core::Fleet& fleet_;
  adapters::storage::SqliteMetricsHistory& history_;
  const core::Clock& clock_;
  const FleetSampleRecorderOptions options_;
  absl::Mutex record_mu_;
  // The newest point copied, per (resource id, metric).
  std::map<std::pair<std::string, std::string>, absl::Time> copied_ ABSL_GUARDED_BY(record_mu_);
  absl::Time last_prune_ ABSL_GUARDED_BY(record_mu_) = absl::InfinitePast();
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace pulse::server
