#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "agents_test_support.h"

namespace pulse::testing::agents {
namespace {

using adapters::agents::DemoFleet;

// The smallest file that uses every section.
constexpr std::string_view kValid = R"json({
  "schema_version": 1,
  "nodes": [{"id": "node:n1", "status": "online", "metrics": {"cpu": {"generator": {"start": 20, "samples": 24}}}}],
  "vms": [{"id": "vm:101", "vmid": 101, "node": "node:n1", "status": "running"}],
  "containers": [{"id": "app-container:web", "host": "vm:101", "image": "nginx", "status": "running"}],
  "storage": [{"id": "storage:n1/pool", "node": "node:n1", "status": "available",
               "metrics": {"usage": {"values": [10, 11, 12]}}}],
  "services": [{"id": "service:n1/nginx", "node": "node:n1", "status": "active"}],
  "backup_jobs": [{"id": "backup-job:b", "storage": "storage:n1/pool", "targets": ["vm:101"], "status": "ok"}],
  "faults": [{"resource": "vm:101", "kind": "high_memory"}]
})json";

std::string Replace(std::string_view from, std::string_view to) {
  std::string text(kValid);
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return text;
}

struct Broken {
  std::string json;
  std::string path;  // the JSON path the error must name
};

TEST_CASE("a minimal demo file with every section loads", "[adapters][agents][json]") {
  FakeClock clock;
  absl::StatusOr<std::unique_ptr<DemoFleet>> fleet =
      DemoFleet::OpenFromJson(kValid, DemoOptions(clock));
  REQUIRE(fleet.ok());
  CHECK(MustList(**fleet).size() == 6);
  CHECK(MustGet(**fleet, "service:n1/nginx").name == "nginx");
  CHECK(MustStatus(**fleet, "service:n1/nginx").facts.at("unit") == "nginx.service");
  CHECK(MustGet(**fleet, "backup-job:b").technology == "vzdump");
}

TEST_CASE("demo file errors are InvalidArgument naming the JSON path", "[adapters][agents][json]") {
  const std::vector<Broken> cases = {
      {Replace(R"("schema_version": 1,)", R"("schema_version": 1, "extra": true,)"), "$:"},
      {Replace(R"("schema_version": 1)", R"("schema_version": 2)"), "$.schema_version"},
      {Replace(R"("schema_version": 1,)", ""), "$.schema_version"},
      {Replace(R"("vmid": 101,)", R"("vmid": 101, "vmidd": 1,)"),
       "$.vms[0]: unknown field 'vmidd'"},
      {Replace(R"("id": "vm:101")", R"("id": "vm:abc")"), "$.vms[0].id"},
      {Replace(R"("id": "vm:101")", R"("id": "vm:102")"), "$.vms[0].id"},
      {Replace(R"("id": "node:n1")", R"("id": "vm:1")"), "$.nodes[0].id"},
      {Replace(R"("id": "node:n1")", R"("id": "node:")"), "$.nodes[0].id"},
      {Replace(R"("id": "node:n1")", R"("id": "node:n 1")"), "$.nodes[0].id"},
      {Replace(R"("node": "node:n1", "status": "running")",
               R"("node": "node:n9", "status": "running")"),
       "$.vms[0].node"},
      {Replace(R"("host": "vm:101")", R"("host": "app-container:web")"), "$.containers[0].host"},
      {Replace(R"("vmid": 101, "node": "node:n1", "status": "running")",
               R"("vmid": 101, "node": "node:n1", "status": "paused")"),
       "$.vms[0].status"},
      {Replace(R"("id": "service:n1/nginx")", R"("id": "service:n2/nginx")"), "$.services[0].id"},
      {Replace(R"("id": "storage:n1/pool")", R"("id": "storage:pool")"), "$.storage[0].id"},
      {Replace(R"("targets": ["vm:101"])", R"("targets": ["vm:999"])"),
       "$.backup_jobs[0].targets[0]"},
      {Replace(R"("targets": ["vm:101"])", R"("targets": [])"), "$.backup_jobs[0].targets"},
      {Replace(R"("storage": "storage:n1/pool")", R"("storage": "node:n1")"),
       "$.backup_jobs[0].storage"},
      {Replace(R"({"start": 20, "samples": 24})", R"({"start": 20, "samples": 24, "slope": 1})"),
       "$.nodes[0].metrics.cpu.generator: unknown field 'slope'"},
      {Replace(R"({"start": 20, "samples": 24})", R"({"start": 20, "samples": 0})"),
       "$.nodes[0].metrics.cpu.generator.samples"},
      {Replace(R"({"start": 20, "samples": 24})", R"({"start": 20, "samples": 24, "noise": -1})"),
       "$.nodes[0].metrics.cpu.generator"},
      {Replace(R"({"generator": {"start": 20, "samples": 24}})",
               R"({"generator": {"start": 20, "samples": 24}, "values": [1]})"),
       "$.nodes[0].metrics.cpu"},
      {Replace(R"("values": [10, 11, 12])", R"("values": [10, "x", 12])"),
       "$.storage[0].metrics.usage.values[1]"},
      {Replace(R"("metrics": {"cpu")", R"("metrics": {"up")"), "$.nodes[0].metrics.up"},
      {Replace(R"("metrics": {"cpu")", R"("metrics": {"CPU")"), "$.nodes[0].metrics"},
      {Replace(R"({"resource": "vm:101", "kind": "high_memory"})",
               R"({"resource": "vm:999", "kind": "high_memory"})"),
       "$.faults[0].resource"},
      {Replace(R"({"resource": "vm:101", "kind": "high_memory"})",
               R"({"resource": "vm:101", "kind": "crash_loop"})"),
       "$.faults[0].kind"},
      {Replace(R"({"resource": "vm:101", "kind": "high_memory"})",
               R"({"resource": "vm:101", "kind": "meltdown"})"),
       "$.faults[0].kind"},
      {Replace(
           R"({"resource": "vm:101", "kind": "high_memory"})",
           R"({"resource": "vm:101", "kind": "high_memory"}, {"resource": "vm:101", "kind": "high_memory"})"),
       "$.faults[1]"},
      {Replace(
           R"("vms": [)",
           R"("vms": [{"id": "vm:101", "vmid": 101, "node": "node:n1", "status": "running"}, )"),
       "$.vms[1].id: duplicate id"},
      {Replace(R"("status": "online")", R"("status": "online", "logs": ["ok", 7])"),
       "$.nodes[0].logs[1]"},
      {Replace(R"("status": "online")", R"("status": "online", "attributes": {"a": 1})"),
       "$.nodes[0].attributes"},
      {Replace(R"("nodes": [)", R"("nodes": 5, "x": [)"), "$.nodes"},
      {"[1, 2]", "$:"},
      {"{\"schema_version\": 1, \"nodes\": [}", "$:"},
      {Replace(R"("status": "active")", R"("status": "active", "unit": "nginx")"),
       "$.services[0].unit"},
  };
  FakeClock clock;
  for (const Broken& b : cases) {
    absl::StatusOr<std::unique_ptr<DemoFleet>> fleet =
        DemoFleet::OpenFromJson(b.json, DemoOptions(clock));
    INFO("expected " << b.path << ", got " << fleet.status().ToString());
    REQUIRE_FALSE(fleet.ok());
    CHECK(absl::IsInvalidArgument(fleet.status()));
    CHECK(std::string(fleet.status().message()).find(b.path) != std::string::npos);
  }
}

TEST_CASE("the demo file is opened from disk or reported missing", "[adapters][agents][json]") {
  FakeClock clock;
  CHECK(absl::IsNotFound(DemoFleet::Open("/nonexistent/demo.json", DemoOptions(clock)).status()));
  const std::vector<std::string> paths = DemoFleet::DefaultPaths();
  REQUIRE(paths.size() == 2);
  CHECK(paths[0] == PULSE_DEMO_FLEET_PATH);
  CHECK(paths[1].find("share/pulse/demo-fleet.json") != std::string::npos);
  absl::StatusOr<std::unique_ptr<DemoFleet>> fleet = DemoFleet::OpenDefault(DemoOptions(clock));
  REQUIRE(fleet.ok());
  CHECK(MustList(**fleet).size() > 40);
}

}  // namespace
}  // namespace pulse::testing::agents
