// pulse_metrics over the Fleet and MetricsHistory ports: summaries, bounded series, the
// metrics history fallback, windows, non-finite samples and stable failure codes.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "handlers_test_support.h"
#include "pulse/core/json/json_time.h"

namespace pulse::testing::handlers {
namespace {

using core::GetBool;
using core::GetInt64;
using core::kToolPulseMetrics;
using core::ToJsonString;

double Num(const rapidjson::Value& object, std::string_view key) {
  const rapidjson::Value& v = Member(object, key);
  REQUIRE(v.IsNumber());
  return v.GetDouble();
}

TEST_CASE("pulse_metrics summarises one metric over the default day", "[core][handlers][metrics]") {
  Fixture f;
  rapidjson::Document r =
      f.Ok(kToolPulseMetrics, R"({"resource_id":"vm:101","metric":"cpu","summary":true})");
  CHECK(Str(r, "resource_id") == "vm:101");
  CHECK(Str(r, "range") == "24h");
  CHECK(GetBool(r, "summary") == true);
  const rapidjson::Value& metrics = Member(r, "metrics");
  REQUIRE(metrics.Size() == 1);
  const rapidjson::Value& cpu = metrics[0];
  CHECK(Str(cpu, "metric") == "cpu");
  CHECK(Str(cpu, "unit") == "percent");
  CHECK(Str(cpu, "source") == "fleet");
  CHECK(GetInt64(cpu, "points_count") == 24);
  CHECK(Str(cpu, "first_at") == core::FormatRfc3339(f.clock.Now() - absl::Hours(24)));
  CHECK(Str(cpu, "last_at") == core::FormatRfc3339(f.clock.Now() - absl::Hours(1)));
  CHECK(Num(cpu, "min") == 10.0);
  CHECK(Num(cpu, "max") == 33.0);
  CHECK(Num(cpu, "avg") == 21.5);
  CHECK(Num(cpu, "last") == 33.0);
  CHECK(core::GetMember(cpu, "points") == nullptr);
  CHECK(Member(r, "unavailable").Size() == 0);
}

TEST_CASE("pulse_metrics returns the series as time/value pairs within the window",
          "[core][handlers][metrics]") {
  Fixture f;
  rapidjson::Document r =
      f.Ok(kToolPulseMetrics, R"({"resource_id":"vm:101","metric":"disk","range":"6h"})");
  const rapidjson::Value& disk = Member(r, "metrics")[0];
  CHECK(ToJsonString(Member(disk, "points")) ==
        "[[\"" + core::FormatRfc3339(f.clock.Now() - absl::Hours(3)) + "\",94.0],[\"" +
            core::FormatRfc3339(f.clock.Now() - absl::Hours(2)) + "\",95.5],[\"" +
            core::FormatRfc3339(f.clock.Now() - absl::Hours(1)) + "\",96.0]]");

  rapidjson::Document hour =
      f.Ok(kToolPulseMetrics, R"({"resource_id":"vm:101","metric":"cpu","range":"1h"})");
  CHECK(GetInt64(Member(hour, "metrics")[0], "points_count") == 1);
}

TEST_CASE("pulse_metrics without a metric reads every known one and falls back to the history",
          "[core][handlers][metrics]") {
  Fixture f;
  // The fleet records no memory series for vm:101; the metrics history does.
  f.history.Set("vm:101", "memory",
                {{f.clock.Now() - absl::Hours(2), 70.0}, {f.clock.Now() - absl::Hours(4), 60.0}});
  rapidjson::Document r = f.Ok(kToolPulseMetrics, R"({"resource_id":"vm:101","summary":true})");
  const rapidjson::Value& metrics = Member(r, "metrics");
  REQUIRE(metrics.Size() == 3);
  CHECK(Str(metrics[0], "metric") == "cpu");
  CHECK(Str(metrics[1], "metric") == "memory");
  CHECK(Str(metrics[1], "source") == "history");
  CHECK(Num(metrics[1], "last") == 70.0);  // ordered by time, whatever the port's order
  CHECK(Num(metrics[1], "min") == 60.0);
  CHECK(Str(metrics[2], "metric") == "disk");
  CHECK(Strings(Member(r, "unavailable")) ==
        std::vector<std::string>{"net_in", "net_out", "usage"});
}

TEST_CASE("pulse_metrics ignores non-finite samples and downsamples long series",
          "[core][handlers][metrics]") {
  Fixture f;
  core::FleetMetricSeries memory;
  memory.resource_id = "vm:102";
  memory.metric = "memory";
  memory.unit = "percent";
  const absl::Time now = f.clock.Now();
  for (int i = 0; i < 450; ++i) {
    memory.points.push_back({now - absl::Minutes(2 * (450 - i)), 50.0});
  }
  memory.points.push_back({now - absl::Seconds(6), std::numeric_limits<double>::infinity()});
  memory.points.push_back({now - absl::Seconds(5), std::numeric_limits<double>::quiet_NaN()});
  f.fleet.SetMetricSeries(memory);
  core::ToolCallOutcome outcome =
      f.Call(kToolPulseMetrics, R"({"resource_id":"vm:102","metric":"memory"})");
  REQUIRE(outcome.result.Ok());
  CHECK(outcome.result.content.size() < core::kMaxToolListBytes);
  rapidjson::Document r = ParseText(outcome.result.content);
  const rapidjson::Value& series = Member(r, "metrics")[0];
  CHECK(GetInt64(series, "points_count") == 450);
  CHECK(Num(series, "max") == 50.0);
  CHECK(Num(series, "last") == 50.0);
  CHECK(Member(series, "points").Size() == core::kMaxMetricPointsPerResult);
}

TEST_CASE("pulse_metrics answers NOT_FOUND for unknown resources and unrecorded metrics",
          "[core][handlers][metrics]") {
  Fixture f;
  CHECK(f.Refused(kToolPulseMetrics, R"({"resource_id":"vm:999"})") == "NOT_FOUND");
  CHECK(f.Refused(kToolPulseMetrics, R"({"resource_id":"vm:101","metric":"network"})") ==
        "NOT_FOUND");
  CHECK(Contains(f.last_error, R"("metric":"network")"));
  CHECK(f.Refused(kToolPulseMetrics, R"({"resource_id":"vm 101"})") == "INVALID_INPUT");

  f.history.FailNext(absl::UnavailableError("history store down"));
  CHECK(f.Refused(kToolPulseMetrics, R"({"resource_id":"vm:101","metric":"memory"})") ==
        "EXECUTION_FAILED");
  f.fleet.SetError(FakeFleet::Method::kReadMetricHistory, absl::InternalError("boom"));
  CHECK(f.Refused(kToolPulseMetrics, R"({"resource_id":"vm:101","metric":"cpu"})") ==
        "EXECUTION_FAILED");
}

}  // namespace
}  // namespace pulse::testing::handlers
