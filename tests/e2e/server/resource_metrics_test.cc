// GET /api/resources/{resourceId}/metrics against the real binary and the demo fleet's recorded
// history: the series in time order and thinned to a chart's worth, the forecast Patrol's
// findings carry, its line, and refusals of every malformed query.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

absl::Time At(const rapidjson::Value& point) {
  absl::Time t;
  std::string error;
  REQUIRE(absl::ParseTime(absl::RFC3339_full, Str(point, "at"), &t, &error));
  return t;
}

TEST_CASE("a resource's metrics come in time order with their forecast and its line",
          "[e2e][metrics]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "monitoring:read");
  ServerProcess server(dir.path());
  const std::string path = "/api/resources/storage%3Apve1%2Flocal-zfs/metrics";
  const Reply week = Send(server.port(), "GET", path + "?metric=usage", token);
  REQUIRE(week.status == 200);
  const rapidjson::Document body = Json(week.body);
  CHECK(Str(body, "resource_id") == "storage:pve1/local-zfs");
  CHECK(Str(body, "metric") == "usage");
  const rapidjson::Value& samples = body["samples"];
  REQUIRE(samples.Size() >= 5);
  CHECK(body["recorded"].GetInt64() == static_cast<std::int64_t>(samples.Size()));
  absl::Time start;
  absl::Time end;
  std::string error;
  REQUIRE(absl::ParseTime(absl::RFC3339_full, Str(body, "start"), &start, &error));
  REQUIRE(absl::ParseTime(absl::RFC3339_full, Str(body, "end"), &end, &error));
  CHECK(end - start == absl::Hours(168));  // the default window
  for (rapidjson::SizeType i = 0; i < samples.Size(); ++i) {
    CHECK(At(samples[i]) >= start);
    CHECK(At(samples[i]) <= end);
    CHECK(samples[i]["value"].GetDouble() >= 0);
    CHECK(samples[i]["value"].GetDouble() <= 100);
    if (i > 0) {
      CHECK(At(samples[i - 1]) <= At(samples[i]));
    }
  }
  const rapidjson::Value& forecast = body["forecast"];
  CHECK(Str(forecast, "reading") != "no_history");
  CHECK(forecast["sample_count"].GetInt64() == static_cast<std::int64_t>(samples.Size()));
  const double current = forecast["current_pct"].GetDouble();
  const double slope = forecast["daily_change"].GetDouble();
  // The line starts at the newest reading and follows the fitted slope.
  const rapidjson::Value& line = body["line"];
  REQUIRE(line.Size() == 2);
  CHECK(At(line[0]) == At(samples[samples.Size() - 1]));
  CHECK(line[0]["value"].GetDouble() == Approx(current));
  const double days = absl::ToDoubleHours(At(line[1]) - At(line[0])) / 24;
  CHECK(days > 0);
  CHECK(line[1]["value"].GetDouble() ==
        Approx(std::clamp(current + slope * days, 0.0, 100.0)).margin(1e-6));
  if (forecast.HasMember("days_to_full") && forecast["days_to_full"].GetInt64() <= 365) {
    CHECK(days == Approx(forecast["days_to_full"].GetInt64()));
    CHECK(line[1]["value"].GetDouble() == Approx(100).margin(1.0));
  }

  // A longer window than the chart has room for is averaged into at most 500 points.
  const Reply quarter = Send(server.port(), "GET", path + "?metric=usage&hours=2160", token);
  REQUIRE(quarter.status == 200);
  const rapidjson::Document long_body = Json(quarter.body);
  CHECK(long_body["samples"].Size() <= 500);
  CHECK(long_body["recorded"].GetInt64() >= long_body["samples"].GetArray().Size());
  INFO("recorded " << long_body["recorded"].GetInt64());
  if (long_body["recorded"].GetInt64() > 500) {
    CHECK(long_body["samples"].Size() < long_body["recorded"].GetInt64());
  }

  // Without a metric: a storage's usage, anything else's memory.
  const Reply by_default = Send(server.port(), "GET", path, token);
  REQUIRE(by_default.status == 200);
  CHECK(Str(Json(by_default.body), "metric") == "usage");
  const Reply vm = Send(server.port(), "GET", "/api/resources/vm%3A101/metrics?hours=24", token);
  REQUIRE(vm.status == 200);
  CHECK(Str(Json(vm.body), "metric") == "memory");

  // A resource without that series: an honest empty answer, no line.
  const Reply none =
      Send(server.port(), "GET", "/api/resources/vm%3A101/metrics?metric=usage", token);
  REQUIRE(none.status == 200);
  const rapidjson::Document empty = Json(none.body);
  CHECK(empty["samples"].Size() == 0);
  CHECK(Str(empty["forecast"], "reading") == "no_history");
  CHECK(empty["line"].Size() == 0);
}

TEST_CASE("malformed metrics queries are refused with their code", "[e2e][metrics][hostile]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "monitoring:read");
  ServerProcess server(dir.path());
  const std::string base = "/api/resources/storage%3Apve1%2Flocal-zfs/metrics";
  for (const std::string& query :
       {std::string("?metric="), std::string("?metric=Usage"), std::string("?metric=usage%00"),
        std::string("?metric=../../etc"), std::string("?metric=") + std::string(65, 'a'),
        std::string("?metric=usage&hours=0"), std::string("?metric=usage&hours=2161"),
        std::string("?metric=usage&hours=-5"), std::string("?metric=usage&hours=1e3"),
        std::string("?metric=usage&metric=disk"), std::string("?metric=usage&extra=1")}) {
    INFO(query);
    const Reply reply = Send(server.port(), "GET", base + query, token);
    CHECK(reply.status == 400);
    CHECK(ErrorCode(reply.body) == "invalid_request");
  }
  const Reply unknown =
      Send(server.port(), "GET", "/api/resources/vm%3A999999/metrics?metric=usage", token);
  CHECK(unknown.status == 404);
  CHECK(ErrorCode(unknown.body) == "resource_not_found");
  const Reply no_token = Send(server.port(), "GET", base + "?metric=usage");
  CHECK(no_token.status == 401);
  const std::string agent = MintToken(dir.path(), "actions:plan", "planner");
  const Reply no_scope = Send(server.port(), "GET", base + "?metric=usage", agent);
  CHECK(no_scope.status == 403);
  CHECK(ErrorCode(no_scope.body) == "missing_scope");
}

}  // namespace
}  // namespace pulse::testing::e2e
