// SqliteMetricsHistory: range queries over an indexed series, exact values (NaN and
// infinities included), all-or-nothing batches and retention.
#include "pulse/adapters/storage/sqlite_metrics_history.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::MetricPoint;
using adapters::storage::SqliteMetricsHistory;

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000) + absl::Nanoseconds(17);

TEST_CASE("samples come back for exactly the series and the inclusive time range",
          "[adapters][storage][metrics]") {
  auto db = MustOpen(":memory:");
  auto history = *SqliteMetricsHistory::Open(*db);
  std::vector<MetricPoint> points;
  for (int h = 0; h < 48; ++h) {
    points.push_back({"pool-1", "usage", {kT0 + absl::Hours(h), 50.0 + h * 0.5}});
    points.push_back({"pool-1", "iops", {kT0 + absl::Hours(h), 1000.0}});
    points.push_back({"pool-2", "usage", {kT0 + absl::Hours(h), 10.0}});
  }
  REQUIRE(history->AppendBatch(points).ok());
  auto day = history->Samples("pool-1", "usage", kT0 + absl::Hours(10), kT0 + absl::Hours(20));
  REQUIRE(day.ok());
  REQUIRE(day->size() == 11);
  CHECK(day->front() == core::MetricSample{kT0 + absl::Hours(10), 55.0});
  CHECK(day->back() == core::MetricSample{kT0 + absl::Hours(20), 60.0});
  auto all = history->Samples("pool-1", "usage", absl::InfinitePast(), absl::InfiniteFuture());
  REQUIRE(all.ok());
  CHECK(all->size() == 48);
  auto unknown = history->Samples("pool-9", "usage", absl::InfinitePast(), absl::InfiniteFuture());
  REQUIRE(unknown.ok());
  CHECK(unknown->empty());
  CHECK(absl::IsInvalidArgument(history->Samples("", "usage", kT0, kT0).status()));
  CHECK(absl::IsInvalidArgument(history->Samples("pool-1", "", kT0, kT0).status()));
  CHECK(absl::IsInvalidArgument(
      history->Samples("pool-1", "usage", kT0, kT0 - absl::Nanoseconds(1)).status()));
}

TEST_CASE("values round-trip, NaN and infinities included, and duplicates are kept",
          "[adapters][storage][metrics]") {
  auto db = MustOpen(":memory:");
  auto history = *SqliteMetricsHistory::Open(*db);
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {-0.0, 1e-300, 99.999999999999,
                                      inf,  -inf,   std::numeric_limits<double>::quiet_NaN()};
  for (std::size_t i = 0; i < values.size(); ++i) {
    const absl::Time at = kT0 + absl::Seconds(static_cast<int>(i));
    REQUIRE(history->Append("vm:1", "mem", {at, values[i]}).ok());
  }
  auto got = history->Samples("vm:1", "mem", kT0, kT0 + absl::Hours(1));
  REQUIRE(got.ok());
  REQUIRE(got->size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    INFO(i);
    const double v = (*got)[i].value;
    CHECK((*got)[i].at == kT0 + absl::Seconds(static_cast<int>(i)));
    if (std::isnan(values[i])) {
      CHECK(std::isnan(v));
    } else {
      CHECK(v == values[i]);  // -0.0 reads back as 0.0 (SQLite REAL), which compares equal
    }
  }
  REQUIRE(history->Append("vm:1", "dup", {kT0, 1.0}).ok());
  REQUIRE(history->Append("vm:1", "dup", {kT0, 2.0}).ok());
  auto dups = history->Samples("vm:1", "dup", kT0, kT0);
  REQUIRE(dups.ok());
  CHECK(dups->size() == 2);
}

TEST_CASE("a batch with one bad point stores nothing", "[adapters][storage][metrics]") {
  auto db = MustOpen(":memory:");
  auto history = *SqliteMetricsHistory::Open(*db);
  std::vector<MetricPoint> points = {{"vm:1", "mem", {kT0, 1}},
                                     {"vm:1", "mem", {absl::InfiniteFuture(), 2}}};
  CHECK(absl::IsInvalidArgument(history->AppendBatch(points)));
  points.back() = {"", "mem", {kT0, 2}};
  CHECK(absl::IsInvalidArgument(history->AppendBatch(points)));
  auto got = history->Samples("vm:1", "mem", absl::InfinitePast(), absl::InfiniteFuture());
  REQUIRE(got.ok());
  CHECK(got->empty());
  CHECK(history->AppendBatch({}).ok());
}

TEST_CASE("retention deletes only older samples", "[adapters][storage][metrics]") {
  auto db = MustOpen(":memory:");
  auto history = *SqliteMetricsHistory::Open(*db);
  for (int d = 0; d < 10; ++d) {
    REQUIRE(history->Append("vm:1", "disk", {kT0 + absl::Hours(24 * d), 1.0 * d}).ok());
  }
  auto deleted = history->DeleteBefore(kT0 + absl::Hours(24 * 7));
  REQUIRE(deleted.ok());
  CHECK(*deleted == 7);
  auto left = history->Samples("vm:1", "disk", absl::InfinitePast(), absl::InfiniteFuture());
  REQUIRE(left.ok());
  REQUIRE(left->size() == 3);
  CHECK(left->front().at == kT0 + absl::Hours(24 * 7));
}

TEST_CASE("the range query reads only the covering series index", "[adapters][storage][metrics]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  MustOpen(path).reset();
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  SQLite::Statement plan(raw,
                         "EXPLAIN QUERY PLAN SELECT at_ns, value FROM metric_samples WHERE "
                         "target_id = ? AND metric = ? AND at_ns >= ? AND at_ns <= ? "
                         "ORDER BY at_ns");
  std::string details;
  while (plan.executeStep()) {
    details += plan.getColumn(3).getString() + "\n";
  }
  INFO(details);
  CHECK(details.find("USING COVERING INDEX metric_samples_by_series") != std::string::npos);
  CHECK(details.find("TEMP B-TREE") == std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::storage
