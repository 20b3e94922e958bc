// fleetq::BuildTopology, which every fleet source's GetTopology answers with (and which
// CompositeFleet calls for each source on every listing): the whole fleet in id order up to
// max_resources with the relationships between kept resources, and a root's neighbourhood.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pulse/core/agent/fleet_queries.h"

namespace pulse::core {
namespace {

std::map<std::string, FleetResource> Fleet(const std::vector<std::string>& ids) {
  std::map<std::string, FleetResource> out;
  for (const std::string& id : ids) {
    FleetResource r;
    r.id = id;
    r.type = id.substr(0, id.find(':'));
    r.name = id;
    out.emplace(id, r);
  }
  return out;
}

std::vector<std::string> Ids(const FleetTopology& t) {
  std::vector<std::string> out;
  for (const FleetResource& r : t.resources) {
    out.push_back(r.id);
  }
  return out;
}

std::vector<std::string> Edges(const FleetTopology& t) {
  std::vector<std::string> out;
  for (const FleetRelationship& e : t.relationships) {
    out.push_back(e.from_id + ">" + e.to_id);
  }
  return out;
}

const std::vector<FleetRelationship> kEdges = {
    {"vm:101", "node:pve1", "runs_on"},      {"vm:102", "node:pve1", "runs_on"},
    {"vm:103", "node:pve2", "runs_on"},      {"vm:101", "vm:gone", "depends_on"},
    {"node:pve1", "node:pve2", "member_of"},
};

TEST_CASE("the whole topology lists every resource in id order, and truncates at the bound",
          "[core][agent][topology]") {
  const auto fleet = Fleet({"vm:103", "node:pve2", "vm:101", "node:pve1", "vm:102"});
  FleetTopologyQuery whole;
  whole.max_resources = 10;
  const FleetTopology all = fleetq::BuildTopology(fleet, kEdges, whole);
  CHECK_FALSE(all.truncated);
  CHECK(Ids(all) ==
        std::vector<std::string>{"node:pve1", "node:pve2", "vm:101", "vm:102", "vm:103"});
  // An edge to a resource the fleet does not list is left out.
  CHECK(Edges(all) == std::vector<std::string>{"vm:101>node:pve1", "vm:102>node:pve1",
                                               "vm:103>node:pve2", "node:pve1>node:pve2"});
  whole.max_resources = 5;
  CHECK_FALSE(fleetq::BuildTopology(fleet, kEdges, whole).truncated);

  whole.max_resources = 3;
  const FleetTopology three = fleetq::BuildTopology(fleet, kEdges, whole);
  CHECK(three.truncated);
  CHECK(Ids(three) == std::vector<std::string>{"node:pve1", "node:pve2", "vm:101"});
  CHECK(Edges(three) == std::vector<std::string>{"vm:101>node:pve1", "node:pve1>node:pve2"});
  whole.max_resources = 1;
  const FleetTopology one = fleetq::BuildTopology(fleet, kEdges, whole);
  CHECK(one.truncated);
  CHECK(Ids(one) == std::vector<std::string>{"node:pve1"});
  CHECK(one.relationships.empty());
  CHECK(fleetq::BuildTopology(std::map<std::string, FleetResource>{}, kEdges, whole)
            .resources.empty());
  // From a map given up, the same topology.
  whole.max_resources = 3;
  auto given_up = fleet;
  const FleetTopology moved = fleetq::BuildTopology(std::move(given_up), kEdges, whole);
  CHECK(moved.truncated);
  CHECK(Ids(moved) == Ids(three));
  CHECK(Edges(moved) == Edges(three));
  CHECK(moved.resources[0].name == "node:pve1");
}

TEST_CASE("a rooted topology keeps the root and its neighbourhood within the depth",
          "[core][agent][topology]") {
  const auto fleet = Fleet({"vm:103", "node:pve2", "vm:101", "node:pve1", "vm:102"});
  FleetTopologyQuery q;
  q.root_id = "vm:103";
  q.depth = 1;
  const FleetTopology near = fleetq::BuildTopology(fleet, kEdges, q);
  CHECK(Ids(near) == std::vector<std::string>{"node:pve2", "vm:103"});
  CHECK(Edges(near) == std::vector<std::string>{"vm:103>node:pve2"});
  q.depth = 2;
  CHECK(Ids(fleetq::BuildTopology(fleet, kEdges, q)) ==
        std::vector<std::string>{"node:pve1", "node:pve2", "vm:103"});
  // The root survives truncation even when it sorts last.
  q.max_resources = 1;
  const FleetTopology root_only = fleetq::BuildTopology(fleet, kEdges, q);
  CHECK(root_only.truncated);
  CHECK(Ids(root_only) == std::vector<std::string>{"vm:103"});
}

}  // namespace
}  // namespace pulse::core
