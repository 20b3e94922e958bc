#include "pulse/adapters/server/fleet_sample_recorder.h"

#include <algorithm>

#include "pulse/adapters/agents/composite_fleet.h"

namespace pulse::server {

FleetSampleRecorder::FleetSampleRecorder(core::Fleet& fleet,
                                         adapters::storage::SqliteMetricsHistory& history,
                                         const core::Clock& clock,
                                         FleetSampleRecorderOptions options)
    : fleet_(fleet), history_(history), clock_(clock), options_(std::move(options)) {}

FleetSampleRecorder::~FleetSampleRecorder() { Stop(); }

bool FleetSampleRecorder::HasRecordedSource() {
  for (const core::FleetSourceStatus& source : fleet_.SourceStatuses()) {
    if (options_.kinds.count(source.kind) != 0) {
      return true;
    }
  }
  return false;
}

void FleetSampleRecorder::Start() {
  absl::MutexLock lock(&mu_);
  if (started_ || stopping_) {
    return;
  }
  started_ = true;
  thread_ = std::thread([this] { Loop(); });
}

void FleetSampleRecorder::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) {
    thread_.join();
    (void)Record(/*on_stop=*/true);  // in-process histories end with the process
  }
}

bool FleetSampleRecorder::Stopping() {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

void FleetSampleRecorder::Loop() {
  while (true) {
    (void)RecordOnce();  // a refused batch is read again next round (copied_ did not move)
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.interval)) {
      return;
    }
  }
}

absl::StatusOr<std::size_t> FleetSampleRecorder::RecordOnce() { return Record(false); }

absl::StatusOr<std::size_t> FleetSampleRecorder::Record(bool on_stop) {
  absl::MutexLock lock(&record_mu_);
  std::map<std::string, const RecordedKind*> recorded;  // by source name
  for (const core::FleetSourceStatus& source : fleet_.SourceStatuses()) {
    if (const auto kind = options_.kinds.find(source.kind);
        kind != options_.kinds.end() && (!on_stop || kind->second.copy_on_stop)) {
      recorded[source.name] = &kind->second;
    }
  }
  if (recorded.empty()) {
    return 0;
  }
  core::FleetResourceQuery all;
  all.limit = core::kFleetMaxResults;
  absl::StatusOr<std::vector<core::FleetResource>> resources = fleet_.ListResources(all);
  if (!resources.ok()) {
    return 0;  // nothing to read this round
  }
  const absl::Time now = clock_.Now();
  std::vector<adapters::storage::MetricPoint> batch;
  std::map<std::pair<std::string, std::string>, absl::Time> copied;
  bool interrupted = false;
  for (const core::FleetResource& r : *resources) {
    if (interrupted) {
      break;
    }
    const auto source = r.attributes.find(std::string(adapters::agents::kSourceAttribute));
    const auto kind = source == r.attributes.end() ? recorded.end() : recorded.find(source->second);
    if (kind == recorded.end()) {
      continue;
    }
    for (const std::string& metric : kind->second->metrics) {
      const std::pair<std::string, std::string> key(r.id, metric);
      const auto before = copied_.find(key);
      const absl::Time after =
          before == copied_.end() ? now - kind->second->first_window : before->second;
      copied[key] = after;
      if (after >= now) {
        continue;
      }
      if (!on_stop && Stopping()) {  // each read is a network round for a remote source
        interrupted = true;
        break;
      }
      core::FleetMetricQuery query;
      query.metric = metric;
      query.start = after;
      query.end = now;
      query.max_points = core::kFleetMaxMetricPoints;
      absl::StatusOr<core::FleetMetricSeries> series = fleet_.ReadMetricHistory(r.id, query);
      if (!series.ok()) {
        continue;  // a metric the resource does not record, or its source is down
      }
      for (const core::FleetMetricPoint& p : series->points) {
        if (p.at > after && p.at <= now) {
          batch.push_back({r.id, metric, core::MetricSample{p.at, p.value}});
          copied[key] = std::max(copied[key], p.at);
        }
      }
    }
  }
  if (!batch.empty()) {
    if (absl::Status appended = history_.AppendBatch(batch); !appended.ok()) {
      return appended;
    }
  }
  // Series of resources that left the fleet are forgotten, so the map stays bounded (a round cut
  // short by Stop, or Stop's own round, forgets the series it did not read: no round follows).
  copied_ = std::move(copied);
  if (options_.retention > absl::ZeroDuration() && now - last_prune_ >= options_.prune_interval) {
    // A failed prune is tried again next round; the samples it would delete are only old.
    if (history_.DeleteBefore(now - options_.retention).ok()) {
      last_prune_ = now;
    }
  }
  return batch.size();
}

}  // namespace pulse::server
