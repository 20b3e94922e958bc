// Shared fixtures for the agents tests: the shipped demo fleet on a fake clock (changes land at
// once unless a test asks for a delay; the observer's waits advance the fake clock), and small
// readers over the Fleet port.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/testing/fake_clock.h"

namespace pulse::testing::agents {

inline adapters::agents::DemoFleetOptions DemoOptions(FakeClock& clock,
                                                      absl::Duration delay = absl::ZeroDuration()) {
  adapters::agents::DemoFleetOptions options;
  options.clock = &clock;
  options.dispatch_delay = delay;
  options.observe_timeout = absl::Seconds(30);
  options.observe_poll_interval = absl::Milliseconds(500);
  options.sleep = [&clock](absl::Duration d) { clock.Advance(d); };
  return options;
}

inline std::unique_ptr<adapters::agents::DemoFleet> OpenDemo(
    FakeClock& clock, absl::Duration delay = absl::ZeroDuration()) {
  absl::StatusOr<std::unique_ptr<adapters::agents::DemoFleet>> fleet =
      adapters::agents::DemoFleet::Open(PULSE_DEMO_FLEET_PATH, DemoOptions(clock, delay));
  if (!fleet.ok()) {
    FAIL("the shipped demo fleet does not load: " << fleet.status().ToString());
  }
  return std::move(*fleet);
}

inline core::FleetResource MustGet(core::Fleet& fleet, const std::string& id) {
  absl::StatusOr<core::FleetResource> r = fleet.GetResource(id);
  REQUIRE(r.ok());
  return *r;
}

inline core::FleetStatus MustStatus(core::Fleet& fleet, const std::string& id) {
  absl::StatusOr<core::FleetStatus> s = fleet.GetStatus(id);
  REQUIRE(s.ok());
  return *s;
}

inline std::vector<std::string> CapabilityNames(core::Fleet& fleet, const std::string& id) {
  absl::StatusOr<std::vector<core::Capability>> caps = fleet.ListCapabilities(id);
  REQUIRE(caps.ok());
  std::vector<std::string> names;
  for (const core::Capability& c : *caps) {
    names.push_back(c.name);
  }
  return names;
}

inline std::vector<core::FleetResource> MustList(core::Fleet& fleet, const std::string& type = "") {
  core::FleetResourceQuery query;
  query.type = type;
  query.limit = core::kFleetMaxResults;
  absl::StatusOr<std::vector<core::FleetResource>> list = fleet.ListResources(query);
  REQUIRE(list.ok());
  return *list;
}

inline std::vector<std::string> LogLines(core::Fleet& fleet, const std::string& id,
                                         std::size_t max_lines = 200) {
  core::FleetLogQuery query;
  query.max_lines = max_lines;
  absl::StatusOr<core::FleetLogExcerpt> logs = fleet.ReadLogs(id, query);
  REQUIRE(logs.ok());
  return logs->lines;
}

inline core::DispatchRequest Dispatch(const std::string& resource, const std::string& capability,
                                      const std::string& attempt, std::string params = "{}") {
  core::DispatchRequest d;
  d.action_id = "act_test";
  d.attempt_id = attempt;
  d.resource_id = resource;
  d.capability_name = capability;
  d.params_json = std::move(params);
  d.plan_hash = "sha256:test";
  return d;
}

inline core::PostconditionQuery Postcondition(const std::string& resource,
                                              const std::string& capability, absl::Time at) {
  core::PostconditionQuery q;
  q.action_id = "act_test";
  q.resource_id = resource;
  q.capability_name = capability;
  q.params_json = "{}";
  q.dispatched_at = at;
  return q;
}

// The newest value of one metric series over the last 31 days.
inline double LatestMetric(core::Fleet& fleet, const std::string& id, const std::string& metric,
                           absl::Time now) {
  core::FleetMetricQuery q;
  q.metric = metric;
  q.start = now - absl::Hours(24 * 31);
  q.end = now + absl::Seconds(1);
  q.max_points = core::kFleetMaxMetricPoints;
  absl::StatusOr<core::FleetMetricSeries> series = fleet.ReadMetricHistory(id, q);
  REQUIRE(series.ok());
  REQUIRE_FALSE(series->points.empty());
  return series->points.back().value;
}

}  // namespace pulse::testing::agents
