// The metric history of a fleet of sources (docs/fleet.md, "Metric history"): a demo source in
// a composite keeps the demo's generated series (agents::CompositeMetricsHistory), and the
// samples docker sources take reach the server's stored history (FleetSampleRecorder) under
// the fleet's ids, each once, where a capacity forecast reads them.
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fleet_opening.h"
#include "pulse/adapters/agents/composite_metrics_history.h"
#include "pulse/adapters/server/fleet_sample_recorder.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_metrics_history.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_metrics_history.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::server {
namespace {

constexpr const char* kTwoDemos =
    R"({"sources": [{"name": "lab", "kind": "demo"}, {"name": "lab2", "kind": "demo"}]})";

core::CapacityForecast Forecast(const core::MetricsHistory& history, const std::string& target,
                                const std::string& metric, absl::Time now) {
  absl::StatusOr<std::vector<core::MetricSample>> samples =
      history.Samples(target, metric, now - absl::Hours(24 * 30), now);
  REQUIRE(samples.ok());
  return core::ComputeCapacityForecast(metric, *samples);
}

TEST_CASE("a demo source inside a composite keeps the demo's generated history for forecasts",
          "[server][fleet][history]") {
  testing::FakeClock clock;
  testing::TempDir dir("pulse-history");
  const std::string file = dir.path() + "/fleet.json";
  std::ofstream(file) << kTwoDemos;
  ServerConfig config;
  config.fleet = file;
  absl::StatusOr<OpenedFleet> opened = OpenConfiguredFleet(config, clock);
  REQUIRE(opened.ok());
  REQUIRE(opened->composite != nullptr);
  CHECK(opened->source_histories.size() == 2);
  testing::InMemoryMetricsHistory stored;
  stored.Add("vm:999", "memory", {clock.Now() - absl::Hours(1), 40});
  stored.Add("app-container:web", "usage", {clock.Now() - absl::Hours(1), 12});
  adapters::agents::CompositeMetricsHistory history(*opened->composite,
                                                    std::move(opened->source_histories), stored);
  const absl::Time now = clock.Now();

  // The filling pool (docs/demo-fleet.md) in both sources, the second under its namespaced id.
  const core::CapacityForecast first = Forecast(history, "storage:pve1/local-zfs", "usage", now);
  CHECK(first.reading == core::ForecastReading::kFilling);
  CHECK(first.sample_count > 100);
  const core::CapacityForecast second =
      Forecast(history, "storage:@lab2/pve1/local-zfs", "usage", now);
  CHECK(second.reading == core::ForecastReading::kFilling);
  CHECK(second.sample_count == first.sample_count);
  CHECK(Forecast(history, "storage:pve2/local-zfs", "usage", now).reading ==
        core::ForecastReading::kNoFillTrend);
  CHECK(Forecast(history, "vm:@lab2/105", "memory", now).sample_count > 0);

  // A resource a demo source owns answers from the demo, not the store; an id nobody owns, or
  // one that is not canonical, from the store.
  CHECK(Forecast(history, "app-container:web", "usage", now).sample_count == 0);
  CHECK(Forecast(history, "vm:999", "memory", now).sample_count == 1);
  for (const char* hostile : {"", "VM:101", "vm:../101", "vm:@lab3/101"}) {
    INFO(hostile);
    absl::StatusOr<std::vector<core::MetricSample>> samples =
        history.Samples(hostile, "memory", now - absl::Hours(1), now);
    if (samples.ok()) {
      CHECK(samples->empty());
    } else {
      CHECK(absl::IsInvalidArgument(samples.status()));
    }
  }
  CHECK(absl::IsInvalidArgument(
      history.Samples("storage:pve1/local-zfs", "", now - absl::Hours(1), now).status()));
  CHECK(absl::IsInvalidArgument(
      history.Samples("storage:pve1/local-zfs", "usage", now, now - absl::Hours(1)).status()));
}

struct RecorderWorld {
  testing::FakeClock clock;
  testing::TempDir dir{"pulse-recorder"};
  std::unique_ptr<adapters::storage::SqliteDatabase> db;
  std::unique_ptr<adapters::storage::SqliteMetricsHistory> stored;
  testing::FakeFleet fleet;

  RecorderWorld() {
    absl::StatusOr<std::unique_ptr<adapters::storage::SqliteDatabase>> opened =
        adapters::storage::SqliteDatabase::Open(dir.path() + "/pulse.db");
    REQUIRE(opened.ok());
    db = *std::move(opened);
    stored = std::make_unique<adapters::storage::SqliteMetricsHistory>(*db);
    fleet.SetSourceStatuses(
        {{"d1", "docker", true, "", 2, std::nullopt}, {"lab", "demo", true, "", 1, std::nullopt}});
    Put("app-container:web", "d1");
    Put("node:dockerhost", "d1");
    Put("vm:101", "lab");
    Put("app-container:stray", "");
  }
  void Put(const std::string& id, const std::string& source) {
    core::FleetResource r;
    r.id = id;
    r.type = id.substr(0, id.find(':'));
    r.name = id;
    r.status = "running";
    if (!source.empty()) {
      r.attributes["pulse.source"] = source;
    }
    fleet.PutResource(r);
  }
  // `n` samples of `metric` ending a minute ago, one a minute, rising 1 point each.
  void Series(const std::string& id, const std::string& metric, int n) {
    core::FleetMetricSeries series;
    series.resource_id = id;
    series.metric = metric;
    series.unit = "percent";
    for (int i = 0; i < n; ++i) {
      series.points.push_back({clock.Now() - absl::Minutes(n - i), 20.0 + i});
    }
    fleet.SetMetricSeries(series);
  }
  std::size_t Stored(const std::string& id, const std::string& metric) {
    absl::StatusOr<std::vector<core::MetricSample>> samples =
        stored->Samples(id, metric, clock.Now() - absl::Hours(48), clock.Now());
    REQUIRE(samples.ok());
    return samples->size();
  }
};

TEST_CASE("the sample recorder copies a docker source's samples into the stored history once",
          "[server][fleet][history]") {
  RecorderWorld w;
  w.Series("app-container:web", "memory_pct", 30);
  w.Series("app-container:web", "cpu", 30);
  w.Series("vm:101", "memory_pct", 30);              // a demo source: not copied
  w.Series("app-container:stray", "memory_pct", 5);  // no source: not copied
  FleetSampleRecorder recorder(w.fleet, *w.stored, w.clock);
  absl::StatusOr<std::size_t> first = recorder.RecordOnce();
  REQUIRE(first.ok());
  CHECK(*first == 60);
  CHECK(w.Stored("app-container:web", "memory_pct") == 30);
  CHECK(w.Stored("app-container:web", "cpu") == 30);
  CHECK(w.Stored("vm:101", "memory_pct") == 0);
  CHECK(w.Stored("app-container:stray", "memory_pct") == 0);

  // Only newer points the next time; the forecast over the store sees the rising series.
  CHECK(*recorder.RecordOnce() == 0);
  w.clock.Advance(absl::Minutes(1));
  w.Series("app-container:web", "memory_pct", 31);  // one newer point (and the old ones again)
  CHECK(*recorder.RecordOnce() == 1);
  CHECK(w.Stored("app-container:web", "memory_pct") == 31);
  absl::StatusOr<std::vector<core::MetricSample>> samples = w.stored->Samples(
      "app-container:web", "memory_pct", w.clock.Now() - absl::Hours(2), w.clock.Now());
  REQUIRE(samples.ok());
  const core::CapacityForecast forecast = core::ComputeCapacityForecast("memory_pct", *samples);
  CHECK(forecast.reading == core::ForecastReading::kFilling);

  // A source that is down, or a read that fails, is skipped; nothing is copied twice after it.
  w.fleet.SetError(testing::FakeFleet::Method::kReadMetricHistory,
                   absl::UnavailableError("connection refused"));
  CHECK(*recorder.RecordOnce() == 0);
  CHECK(*recorder.RecordOnce() == 0);
  CHECK(w.Stored("app-container:web", "memory_pct") == 31);
}

TEST_CASE("the sample recorder copies a day of a proxmox-ve storage's usage on its first round",
          "[server][fleet][history]") {
  RecorderWorld w;
  w.fleet.SetSourceStatuses({{"pve", "proxmox-ve", true, "", 2, std::nullopt}});
  w.Put("storage:pve1/local", "pve");
  w.Put("node:pve1", "pve");
  // 48 rrddata rows at 30-minute steps over the last day, rising 1 point each, and a row older
  // than a day that the first round does not read.
  core::FleetMetricSeries usage;
  usage.resource_id = "storage:pve1/local";
  usage.metric = "usage";
  usage.unit = "percent";
  usage.points.push_back({w.clock.Now() - absl::Hours(30), 10.0});
  for (int i = 0; i < 48; ++i) {
    usage.points.push_back({w.clock.Now() - absl::Minutes(15 + 30 * (47 - i)), 20.0 + i});
  }
  w.fleet.SetMetricSeries(usage);
  w.Series("node:pve1", "cpu", 30);  // a node's cpu is not what proxmox-ve sources record
  FleetSampleRecorder recorder(w.fleet, *w.stored, w.clock);
  CHECK(recorder.HasRecordedSource());
  CHECK(*recorder.RecordOnce() == 48);
  CHECK(w.Stored("storage:pve1/local", "usage") == 48);
  CHECK(w.Stored("node:pve1", "cpu") == 0);
  absl::StatusOr<std::vector<core::MetricSample>> samples = w.stored->Samples(
      "storage:pve1/local", "usage", w.clock.Now() - absl::Hours(24 * 7), w.clock.Now());
  REQUIRE(samples.ok());
  const core::CapacityForecast forecast = core::ComputeCapacityForecast("usage", *samples);
  CHECK(forecast.reading == core::ForecastReading::kFilling);
  CHECK(*recorder.RecordOnce() == 0);

  w.fleet.SetSourceStatuses({{"lab", "demo", true, "", 1, std::nullopt}});
  CHECK_FALSE(recorder.HasRecordedSource());
}

TEST_CASE("the sample recorder deletes stored samples older than its retention, once an hour",
          "[server][fleet][history]") {
  RecorderWorld w;
  CHECK(FleetSampleRecorderOptions{}.retention == absl::Hours(24 * 30));
  FleetSampleRecorderOptions options;
  options.retention = absl::Hours(2);
  options.prune_interval = absl::Hours(1);
  // Another series' samples, 3 h and 90 min old.
  REQUIRE(w.stored->Append("vm:old", "cpu", {w.clock.Now() - absl::Hours(3), 50.0}).ok());
  REQUIRE(w.stored->Append("vm:old", "cpu", {w.clock.Now() - absl::Minutes(90), 60.0}).ok());
  w.Series("app-container:web", "memory_pct", 10);
  FleetSampleRecorder recorder(w.fleet, *w.stored, w.clock, options);
  CHECK(*recorder.RecordOnce() == 10);
  CHECK(w.Stored("vm:old", "cpu") == 1);  // the first round prunes what is over 2 h old
  CHECK(w.Stored("app-container:web", "memory_pct") == 10);

  // 45 min later the 90-min sample is over 2 h old, but the last prune was under an hour ago.
  w.clock.Advance(absl::Minutes(45));
  CHECK(recorder.RecordOnce().ok());
  CHECK(w.Stored("vm:old", "cpu") == 1);
  // 20 min more: pruned; the recorded samples, 66 to 75 min old, stay.
  w.clock.Advance(absl::Minutes(20));
  CHECK(recorder.RecordOnce().ok());
  CHECK(w.Stored("vm:old", "cpu") == 0);
  CHECK(w.Stored("app-container:web", "memory_pct") == 10);

  // Retention 0 keeps everything.
  options.retention = absl::ZeroDuration();
  REQUIRE(w.stored->Append("vm:old", "cpu", {w.clock.Now() - absl::Hours(40), 1.0}).ok());
  FleetSampleRecorder keeper(w.fleet, *w.stored, w.clock, options);
  CHECK(keeper.RecordOnce().ok());
  CHECK(w.Stored("vm:old", "cpu") == 1);
}

TEST_CASE("the sample recorder costs nothing for a fleet without docker sources and stops",
          "[server][fleet][history]") {
  RecorderWorld w;
  w.fleet.SetSourceStatuses({});
  w.Series("app-container:web", "memory_pct", 10);
  FleetSampleRecorderOptions options;
  options.interval = absl::Milliseconds(10);
  FleetSampleRecorder recorder(w.fleet, *w.stored, w.clock, options);
  CHECK(*recorder.RecordOnce() == 0);
  CHECK(w.Stored("app-container:web", "memory_pct") == 0);

  // With a docker source the thread copies on its own, and Stop ends it promptly.
  w.fleet.SetSourceStatuses({{"d1", "docker", true, "", 2, std::nullopt}});
  recorder.Start();
  for (int i = 0; i < 250 && w.Stored("app-container:web", "memory_pct") == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  CHECK(w.Stored("app-container:web", "memory_pct") == 10);
  const absl::Time before = absl::Now();
  recorder.Stop();
  recorder.Stop();
  CHECK(absl::Now() - before < absl::Seconds(2));
}

TEST_CASE("stopping the sample recorder waits for no remote source and keeps what it read",
          "[server][fleet][history]") {
  // 40 storages of a proxmox-ve source whose every read takes 100 ms (rrddata over HTTPS): a
  // round reads 40 series, 4 s. Shutdown used to finish that round and then read every series
  // once more (7.7 s of an ASan server's stop against a proxmox-ve source).
  RecorderWorld w;
  w.fleet.SetSourceStatuses({{"pve", "proxmox-ve", true, "", 2, std::nullopt}});
  constexpr int kStorages = 40;
  for (int i = 0; i < kStorages; ++i) {
    const std::string id = "storage:pve1/s" + std::to_string(i);
    w.Put(id, "pve");
    w.Series(id, "usage", 5);
  }
  std::atomic<int> reads{0};
  w.fleet.SetMetricReadHook([&reads](std::string_view /*id*/) {
    reads.fetch_add(1);
    absl::SleepFor(absl::Milliseconds(100));
  });
  FleetSampleRecorder recorder(w.fleet, *w.stored, w.clock);
  recorder.Start();
  for (int i = 0; i < 500 && reads.load() < 6; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  REQUIRE(reads.load() >= 6);
  const absl::Time before = absl::Now();
  recorder.Stop();
  const absl::Duration stopping = absl::Now() - before;
  INFO("Stop took " << absl::FormatDuration(stopping) << " after " << reads.load() << " reads");
  CHECK(stopping < absl::Seconds(2));  // the read in flight, not the rest of the round (3.4 s)
  const int at_stop = reads.load();
  CHECK(at_stop < kStorages);

  // The series read before Stop are stored (the cut-short round's batch is kept), the rest
  // not, and nothing is read after Stop.
  std::size_t stored = 0;
  for (int i = 0; i < kStorages; ++i) {
    stored += w.Stored("storage:pve1/s" + std::to_string(i), "usage");
  }
  CHECK(stored >= 5 * 5);
  CHECK(stored <= 5 * static_cast<std::size_t>(at_stop));
  CHECK(*recorder.RecordOnce() == 0);
  absl::SleepFor(absl::Milliseconds(200));
  CHECK(reads.load() == at_stop);
}

TEST_CASE("stopping the sample recorder copies a docker source's newest samples once more",
          "[server][fleet][history]") {
  // The docker source's sampler keeps its history in this process: what it sampled since the
  // last round would end with the process, so Stop copies it (in-memory reads, no network).
  RecorderWorld w;
  w.Series("app-container:web", "memory_pct", 10);
  FleetSampleRecorderOptions options;
  options.interval = absl::Hours(1);  // one round at Start, the next only at Stop
  FleetSampleRecorder recorder(w.fleet, *w.stored, w.clock, options);
  recorder.Start();
  for (int i = 0; i < 250 && w.Stored("app-container:web", "memory_pct") < 10; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  REQUIRE(w.Stored("app-container:web", "memory_pct") == 10);
  w.clock.Advance(absl::Minutes(3));
  w.Series("app-container:web", "memory_pct", 13);  // three newer samples
  recorder.Stop();
  CHECK(w.Stored("app-container:web", "memory_pct") == 13);
}

}  // namespace
}  // namespace pulse::server
