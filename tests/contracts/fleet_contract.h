// The Fleet contract (libpulse-core/include/pulse/core/ports/fleet.h), as one reusable Catch2
// suite for every Fleet adapter:
//
//   TEST_CASE("DemoFleet honours the Fleet contract", "[adapters][agents][contract]") {
//     pulse::testing::RunFleetContract([&] { return MakeDemoSubject(); });
//   }
//
// `make` returns a FleetContractSubject for a fresh fleet; each SECTION gets its own. What every
// Fleet must honour: canonical, unique and stable ids in id order; a parent and every edge point
// at resources that exist; unknown and hostile ids are answered NotFound or InvalidArgument,
// never OK and never a crash; queries outside the port's bounds are InvalidArgument and answers
// stay within them; every advertised capability passes ValidateCapability; a dispatch refused
// for a missing capability does not run, and a repeated attempt id returns the first receipt;
// a command the exec classifier refuses never runs; concurrent reads agree.
#pragma once

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/capability.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::testing {

struct FleetContractSubject {
  std::shared_ptr<core::Fleet> fleet;
  // A resource and a metric it records, for the metric-window checks; "" skips them.
  std::string metric_resource;
  std::string metric;
  // The time the fleet's clock reads (metric windows end here).
  absl::Time now = absl::Now();
  // A dispatch of an advertised capability that is harmless to run (attempt and action ids
  // are filled in by the suite); nullopt when the fleet offers none (a read-only fleet).
  std::optional<core::DispatchRequest> dispatch;
};

namespace fleet_contract {

inline std::vector<core::FleetResource> ListAll(core::Fleet& fleet) {
  core::FleetResourceQuery query;
  query.limit = core::kFleetMaxResults;
  absl::StatusOr<std::vector<core::FleetResource>> listed = fleet.ListResources(query);
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
  return *listed;
}

inline std::vector<std::string> Ids(const std::vector<core::FleetResource>& resources) {
  std::vector<std::string> ids;
  ids.reserve(resources.size());
  for (const core::FleetResource& r : resources) {
    ids.push_back(r.id);
  }
  return ids;
}

// Ids no fleet may answer OK: not canonical, or canonical but absurd.
inline std::vector<std::string> HostileIds() {
  return {"",
          " ",
          "node:",
          ":x",
          "NODE:pve1",
          "node:pve1 ",
          " node:pve1",
          "node:../../etc/passwd",
          "node:/etc/passwd",
          "node:a//b",
          std::string("node:a\0b", 8),
          "node:a\nb",
          "node:\xc3\xa9t\xc3\xa9",
          "node:\xff\xfe",
          "node:pve1;rm -rf /",
          "node:$(id)",
          "node:%2e%2e",
          "vm:" + std::string(4096, '9'),
          std::string(300, 'a') + ":x",
          "no-such-type:nothing-here",
          "node:contract-does-not-exist-7f3a"};
}

inline bool RefusedAsUnknown(const absl::Status& status) {
  return absl::IsNotFound(status) || absl::IsInvalidArgument(status);
}

inline core::DispatchRequest Numbered(core::DispatchRequest request, const std::string& n) {
  request.action_id = "act_contract_" + n;
  request.attempt_id = request.action_id + ".dispatch.1";
  if (request.plan_hash.empty()) {
    request.plan_hash = "sha256:contract";
  }
  return request;
}

}  // namespace fleet_contract

template <class MakeSubject>
void RunFleetContract(MakeSubject make) {
  using namespace fleet_contract;  // NOLINT: test-local helpers
  FleetContractSubject subject = make();
  REQUIRE(subject.fleet != nullptr);
  core::Fleet& fleet = *subject.fleet;

  SECTION("listed ids are canonical, unique, typed and in id order") {
    const std::vector<core::FleetResource> all = ListAll(fleet);
    REQUIRE_FALSE(all.empty());
    std::set<std::string> seen;
    for (const core::FleetResource& r : all) {
      INFO(r.id);
      const std::optional<core::CanonicalResourceId> id = core::ParseCanonicalResourceId(r.id);
      REQUIRE(id.has_value());
      CHECK(id->type == r.type);
      CHECK(seen.insert(r.id).second);
    }
    CHECK(std::is_sorted(all.begin(), all.end(),
                         [](const auto& a, const auto& b) { return a.id < b.id; }));
  }

  SECTION("parents exist and a resource read by id equals its listing") {
    const std::vector<core::FleetResource> all = ListAll(fleet);
    const std::vector<std::string> ids = Ids(all);
    const std::set<std::string> known(ids.begin(), ids.end());
    for (const core::FleetResource& r : all) {
      INFO(r.id);
      if (!r.parent_id.empty()) {
        CHECK(known.count(r.parent_id) == 1);
        CHECK(r.parent_id != r.id);
      }
      absl::StatusOr<core::FleetResource> got = fleet.GetResource(r.id);
      REQUIRE(got.ok());
      CHECK(got->id == r.id);
      CHECK(got->type == r.type);
      CHECK(got->parent_id == r.parent_id);
    }
    // Stable: a second listing names the same resources.
    CHECK(Ids(ListAll(fleet)) == ids);
  }

  SECTION("list limits and filters are honoured") {
    const std::vector<core::FleetResource> all = ListAll(fleet);
    core::FleetResourceQuery query;
    query.limit = 0;
    CHECK(absl::IsInvalidArgument(fleet.ListResources(query).status()));
    query.limit = core::kFleetMaxResults + 1;
    CHECK(absl::IsInvalidArgument(fleet.ListResources(query).status()));
    query.limit = 1;
    absl::StatusOr<std::vector<core::FleetResource>> one = fleet.ListResources(query);
    REQUIRE(one.ok());
    REQUIRE(one->size() == 1);
    CHECK(one->front().id == all.front().id);
    // A type filter is exact and case-insensitive.
    core::FleetResourceQuery typed;
    typed.limit = core::kFleetMaxResults;
    typed.type = all.front().type;
    for (char& c : typed.type) {
      c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    }
    absl::StatusOr<std::vector<core::FleetResource>> same_type = fleet.ListResources(typed);
    REQUIRE(same_type.ok());
    REQUIRE_FALSE(same_type->empty());
    for (const core::FleetResource& r : *same_type) {
      CHECK(r.type == all.front().type);
    }
    typed.type = "contract-no-such-type";
    absl::StatusOr<std::vector<core::FleetResource>> none = fleet.ListResources(typed);
    REQUIRE(none.ok());
    CHECK(none->empty());
    // Search by id text finds the resource.
    core::FleetResourceQuery search;
    search.limit = core::kFleetMaxResults;
    search.text = all.back().id;
    absl::StatusOr<std::vector<core::FleetResource>> found = fleet.ListResources(search);
    REQUIRE(found.ok());
    CHECK(std::any_of(found->begin(), found->end(),
                      [&](const core::FleetResource& r) { return r.id == all.back().id; }));
  }

  SECTION("unknown and hostile ids are refused by every read, never answered") {
    for (const std::string& id : HostileIds()) {
      INFO("id of " << id.size() << " bytes: " << id.substr(0, 40));
      CHECK(RefusedAsUnknown(fleet.GetResource(id).status()));
      CHECK(RefusedAsUnknown(fleet.GetStatus(id).status()));
      CHECK(RefusedAsUnknown(fleet.ReadLogs(id, core::FleetLogQuery{}).status()));
      CHECK(RefusedAsUnknown(fleet.ReadConfig(id).status()));
      CHECK(RefusedAsUnknown(fleet.ListCapabilities(id).status()));
      core::FleetMetricQuery mq;
      mq.metric = "cpu";
      mq.start = subject.now - absl::Hours(1);
      mq.end = subject.now;
      CHECK(RefusedAsUnknown(fleet.ReadMetricHistory(id, mq).status()));
      core::FleetTopologyQuery tq;
      tq.root_id = id;
      if (!id.empty()) {
        CHECK(RefusedAsUnknown(fleet.GetTopology(tq).status()));
      }
      core::DispatchRequest d = Numbered(core::DispatchRequest{}, "hostile");
      d.resource_id = id;
      d.capability_name = "restart";
      d.params_json = "{}";
      absl::StatusOr<core::DispatchReceipt> receipt = fleet.Dispatch(d);
      CHECK(RefusedAsUnknown(receipt.status()));
    }
  }

  SECTION("topology edges join resources that exist and bounds are honoured") {
    const std::vector<core::FleetResource> all = ListAll(fleet);
    core::FleetTopologyQuery whole;
    whole.max_resources = core::kFleetMaxResults;
    absl::StatusOr<core::FleetTopology> topology = fleet.GetTopology(whole);
    REQUIRE(topology.ok());
    std::set<std::string> included;
    for (const core::FleetResource& r : topology->resources) {
      CHECK(core::IsCanonicalResourceId(r.id));
      included.insert(r.id);
    }
    CHECK(included.size() == std::min(all.size(), core::kFleetMaxResults));
    for (const core::FleetRelationship& e : topology->relationships) {
      INFO(e.from_id << " -" << e.kind << "-> " << e.to_id);
      CHECK(included.count(e.from_id) == 1);
      CHECK(included.count(e.to_id) == 1);
      CHECK_FALSE(e.kind.empty());
    }
    core::FleetTopologyQuery bad = whole;
    bad.depth = 0;
    CHECK(absl::IsInvalidArgument(fleet.GetTopology(bad).status()));
    bad.depth = 9;
    CHECK(absl::IsInvalidArgument(fleet.GetTopology(bad).status()));
    bad = whole;
    bad.max_resources = 0;
    CHECK(absl::IsInvalidArgument(fleet.GetTopology(bad).status()));
    bad.max_resources = core::kFleetMaxResults + 1;
    CHECK(absl::IsInvalidArgument(fleet.GetTopology(bad).status()));
    core::FleetTopologyQuery rooted;
    rooted.root_id = all.front().id;
    rooted.max_resources = 1;
    absl::StatusOr<core::FleetTopology> small = fleet.GetTopology(rooted);
    REQUIRE(small.ok());
    CHECK(small->resources.size() <= 1);
  }

  SECTION("status, logs and config answer for the resource asked about, within bounds") {
    for (const core::FleetResource& r : ListAll(fleet)) {
      INFO(r.id);
      absl::StatusOr<core::FleetStatus> status = fleet.GetStatus(r.id);
      REQUIRE(status.ok());
      CHECK(status->resource_id == r.id);
      core::FleetLogQuery logs;
      logs.max_lines = 2;
      logs.max_bytes = 300;
      absl::StatusOr<core::FleetLogExcerpt> excerpt = fleet.ReadLogs(r.id, logs);
      if (excerpt.ok()) {
        CHECK(excerpt->lines.size() <= 2);
        std::size_t bytes = 0;
        for (const std::string& line : excerpt->lines) {
          bytes += line.size();
        }
        CHECK(bytes <= 300);
      } else {
        INFO(excerpt.status().ToString());
        CHECK((absl::IsNotFound(excerpt.status()) || absl::IsFailedPrecondition(excerpt.status())));
      }
      absl::StatusOr<core::FleetConfig> config = fleet.ReadConfig(r.id);
      if (config.ok()) {
        CHECK(config->content.size() <= core::kFleetMaxConfigBytes);
      }
    }
  }

  SECTION("log queries outside the caps are refused") {
    const std::string id = ListAll(fleet).front().id;
    core::FleetLogQuery q;
    q.max_lines = 0;
    CHECK(absl::IsInvalidArgument(fleet.ReadLogs(id, q).status()));
    q.max_lines = core::kFleetMaxLogLines + 1;
    CHECK(absl::IsInvalidArgument(fleet.ReadLogs(id, q).status()));
    q = core::FleetLogQuery{};
    q.max_bytes = 0;
    CHECK(absl::IsInvalidArgument(fleet.ReadLogs(id, q).status()));
    q.max_bytes = core::kFleetMaxLogBytes + 1;
    CHECK(absl::IsInvalidArgument(fleet.ReadLogs(id, q).status()));
  }

  SECTION("metric windows are validated, bounded and ascending") {
    if (subject.metric_resource.empty()) {
      SUCCEED("this fleet names no metric to check");
      return;
    }
    core::FleetMetricQuery q;
    q.metric = subject.metric;
    q.start = subject.now - absl::Hours(24 * 31);
    q.end = subject.now + absl::Seconds(1);
    q.max_points = 3;
    absl::StatusOr<core::FleetMetricSeries> series =
        fleet.ReadMetricHistory(subject.metric_resource, q);
    INFO(series.status().ToString());
    REQUIRE(series.ok());
    CHECK(series->resource_id == subject.metric_resource);
    CHECK(series->metric == subject.metric);
    CHECK(series->points.size() <= 3);
    CHECK(std::is_sorted(series->points.begin(), series->points.end(),
                         [](const auto& a, const auto& b) { return a.at < b.at; }));
    for (const core::FleetMetricPoint& p : series->points) {
      CHECK(p.at >= q.start);
      CHECK(p.at <= q.end);
    }
    core::FleetMetricQuery bad = q;
    bad.end = bad.start;
    CHECK(absl::IsInvalidArgument(fleet.ReadMetricHistory(subject.metric_resource, bad).status()));
    bad = q;
    bad.max_points = 0;
    CHECK(absl::IsInvalidArgument(fleet.ReadMetricHistory(subject.metric_resource, bad).status()));
    bad.max_points = core::kFleetMaxMetricPoints + 1;
    CHECK(absl::IsInvalidArgument(fleet.ReadMetricHistory(subject.metric_resource, bad).status()));
    bad = q;
    bad.metric = "contract-no-such-metric";
    CHECK(absl::IsNotFound(fleet.ReadMetricHistory(subject.metric_resource, bad).status()));
  }

  SECTION("every advertised capability is valid and named once") {
    for (const core::FleetResource& r : ListAll(fleet)) {
      INFO(r.id);
      absl::StatusOr<std::vector<core::Capability>> caps = fleet.ListCapabilities(r.id);
      REQUIRE(caps.ok());
      std::set<std::string> names;
      for (const core::Capability& c : *caps) {
        INFO(c.name);
        CHECK(core::ValidateCapability(c).ok());
        CHECK(names.insert(c.name).second);
      }
    }
  }

  SECTION("a capability the resource does not advertise is not dispatched") {
    const std::string id = ListAll(fleet).front().id;
    core::DispatchRequest d = Numbered(core::DispatchRequest{}, "absent");
    d.resource_id = id;
    d.capability_name = "contract-not-a-capability";
    d.params_json = "{}";
    absl::StatusOr<core::DispatchReceipt> receipt = fleet.Dispatch(d);
    INFO(receipt.status().ToString());
    if (receipt.ok()) {
      CHECK(receipt->status == core::ExecutionStatus::kNotRun);
    } else {
      CHECK((absl::IsFailedPrecondition(receipt.status()) ||
             absl::IsInvalidArgument(receipt.status()) || absl::IsNotFound(receipt.status())));
    }
  }

  SECTION("a repeated attempt id returns the first receipt") {
    if (!subject.dispatch.has_value()) {
      SUCCEED("this fleet offers no harmless dispatch");
      return;
    }
    const core::DispatchRequest d = Numbered(*subject.dispatch, "repeat");
    absl::StatusOr<core::DispatchReceipt> first = fleet.Dispatch(d);
    INFO(first.status().ToString());
    REQUIRE(first.ok());
    absl::StatusOr<core::DispatchReceipt> again = fleet.Dispatch(d);
    REQUIRE(again.ok());
    CHECK(again->status == first->status);
    CHECK(again->reason_code == first->reason_code);
    CHECK(again->summary == first->summary);
    CHECK(again->executor_id == first->executor_id);
    CHECK(again->executor_trust_domain == first->executor_trust_domain);
    // A request without an attempt id is refused before it starts.
    core::DispatchRequest anonymous = Numbered(*subject.dispatch, "anonymous");
    anonymous.attempt_id.clear();
    absl::StatusOr<core::DispatchReceipt> refused = fleet.Dispatch(anonymous);
    CHECK_FALSE((refused.ok() && refused->status != core::ExecutionStatus::kNotRun));
  }

  SECTION("a command the exec classifier refuses never runs") {
    const std::string id = ListAll(fleet).front().id;
    for (const char* command : {"rm -rf /", "sh -c 'id'", "cat /etc/shadow; reboot",
                                "systemctl restart nginx", "echo $(reboot)"}) {
      INFO(command);
      absl::StatusOr<core::ExecOutput> out = fleet.RunReadOnlyCommand(id, command);
      CHECK((absl::IsPermissionDenied(out.status()) || absl::IsUnimplemented(out.status())));
    }
  }

  SECTION("concurrent reads agree") {
    const std::vector<std::string> ids = Ids(ListAll(fleet));
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&fleet, &ids, &failures, t] {
        for (int round = 0; round < 5; ++round) {
          core::FleetResourceQuery query;
          query.limit = core::kFleetMaxResults;
          absl::StatusOr<std::vector<core::FleetResource>> listed = fleet.ListResources(query);
          if (!listed.ok() || Ids(*listed) != ids) {
            ++failures;
          }
          const std::string& id = ids[static_cast<std::size_t>(t + round) % ids.size()];
          absl::StatusOr<core::FleetResource> got = fleet.GetResource(id);
          if (!got.ok() || got->id != id) {
            ++failures;
          }
          if (!fleet.GetStatus(id).ok() || !fleet.ListCapabilities(id).ok()) {
            ++failures;
          }
          core::FleetTopologyQuery tq;
          tq.root_id = id;
          if (!fleet.GetTopology(tq).ok()) {
            ++failures;
          }
        }
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
    CHECK(failures.load() == 0);
  }
}

}  // namespace pulse::testing
