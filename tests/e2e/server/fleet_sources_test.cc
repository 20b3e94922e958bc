// pulse-server over a fleet of several sources (docs/fleet.md): a --fleet FILE of sources opens
// them as one fleet, fleet-context and /metrics show each source, colliding ids are namespaced,
// and a bad sources file stops the start with a message naming the file and the source.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

TEST_CASE("pulse-server serves a fleet of two sources with their state", "[e2e][server][fleet]") {
  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources": [{"name": "lab", "kind": "demo"},
                                          {"name": "lab2", "kind": "demo"}]})";
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  ServerProcess server(dir.path(), ServerOptions{{"--fleet", fleet}});
  const Reply context = Send(server.port(), "GET", "/api/agent/fleet-context", reader);
  REQUIRE(context.status == 200);
  const rapidjson::Document doc = Json(context.body);
  REQUIRE(doc.HasMember("sources"));
  // The host agents' source joins every fleet (docs/agent.md), after the configured ones.
  REQUIRE(doc["sources"].Size() == 3);
  CHECK(Str(doc["sources"][0], "name") == "lab");
  CHECK(Str(doc["sources"][1], "name") == "lab2");
  CHECK(Str(doc["sources"][1], "state") == "up");
  CHECK(Str(doc["sources"][2], "name") == "agents");
  CHECK(Str(doc["sources"][2], "kind") == "agents");
  std::vector<std::string> ids;
  for (const auto& r : doc["resources"].GetArray()) {
    ids.push_back(Str(r, "canonicalId"));
  }
  CHECK(std::find(ids.begin(), ids.end(), "vm:101") != ids.end());
  CHECK(std::find(ids.begin(), ids.end(), "vm:@lab2/101") != ids.end());
  const Reply resource =
      Send(server.port(), "GET", "/api/agent/resource-context/vm%3A%40lab2%2F101", reader);
  CHECK(resource.status == 200);
  CHECK(Str(Json(resource.body), "canonicalId") == "vm:@lab2/101");
  const Reply metrics = Send(server.port(), "GET", "/metrics", reader);
  REQUIRE(metrics.status == 200);
  CHECK(metrics.body.find(R"(pulse_fleet_source_up{source="lab2",kind="demo"} 1)") !=
        std::string::npos);
}

TEST_CASE("a bad sources file stops pulse-server naming the file and the source",
          "[e2e][server][fleet]") {
  TempDir dir;
  const std::string fleet = dir.File("fleet.json");
  std::ofstream(fleet) << R"({"sources": [{"name": "d1", "kind": "dockre"}]})";
  const Captured run = RunCommand(
      {ServerBinary(), "--data-dir", dir.path(), "--listen", "127.0.0.1:0", "--fleet", fleet});
  CHECK(run.exit_code == 1);
  CHECK(run.err.find(fleet) != std::string::npos);
  CHECK(run.err.find("fleet source \"d1\": unknown kind \"dockre\"") != std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
