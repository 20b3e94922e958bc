#include "pulse/adapters/agents/local_host_fleet.h"

#include <catch2/catch.hpp>
#include <string>

#include "pulse/core/model/resource_id.h"

namespace pulse::adapters::agents {
namespace {

std::unique_ptr<LocalHostFleet> OpenLocal(LocalHostFleetOptions options = {}) {
  absl::StatusOr<std::unique_ptr<LocalHostFleet>> fleet = LocalHostFleet::Open(std::move(options));
  if (!fleet.ok()) {
    FAIL("the local host cannot be probed: " << fleet.status().ToString());
  }
  return std::move(*fleet);
}

std::vector<core::FleetResource> All(LocalHostFleet& fleet) {
  core::FleetResourceQuery q;
  q.limit = core::kFleetMaxResults;
  absl::StatusOr<std::vector<core::FleetResource>> list = fleet.ListResources(q);
  REQUIRE(list.ok());
  return *list;
}

TEST_CASE("local host readings are sane on this machine", "[adapters][agents][local]") {
  auto fleet = OpenLocal();
  CHECK(core::IsCanonicalResourceId(fleet->node_id()));
  absl::StatusOr<core::FleetStatus> node = fleet->GetStatus(fleet->node_id());
  REQUIRE(node.ok());
  CHECK(node->status == "online");
  CHECK(std::stoll(node->facts.at("memory_total_mb")) > 0);
  const double memory = std::stod(node->facts.at("memory_pct"));
  CHECK(memory > 0);
  CHECK(memory <= 100);
  const double cpu = std::stod(node->facts.at("cpu_pct"));
  CHECK(cpu >= 0);
  CHECK(cpu <= 100);
  REQUIRE(node->facts.count("load1") == 1);
  CHECK(std::stod(node->facts.at("load1")) >= 0);
  CHECK(std::stoll(node->facts.at("process_count")) > 0);
  CHECK_FALSE(node->facts.at("top_cpu").empty());
  const std::vector<LocalProcess> top = fleet->TopProcesses(5);
  REQUIRE_FALSE(top.empty());
  CHECK(top.size() <= 5);
  CHECK(top[0].pid > 0);
  CHECK_FALSE(top[0].command.empty());

  // The root filesystem is a storage resource with a plausible usage.
  const core::FleetResource* root = nullptr;
  const std::vector<core::FleetResource> all = All(*fleet);
  for (const core::FleetResource& r : all) {
    CHECK(core::IsCanonicalResourceId(r.id));
    if (r.type == "storage" && r.attributes.count("mountpoint") == 1 &&
        r.attributes.at("mountpoint") == "/") {
      root = &r;
    }
  }
  REQUIRE(root != nullptr);
  CHECK(root->parent_id == fleet->node_id());
  absl::StatusOr<core::FleetStatus> disk = fleet->GetStatus(root->id);
  REQUIRE(disk.ok());
  const double used = std::stod(disk->facts.at("usage_pct"));
  CHECK(used >= 0);
  CHECK(used <= 100);
  CHECK(std::stoull(disk->facts.at("size_bytes")) > 0);
  // No pseudo filesystem is reported.
  for (const core::FleetResource& r : all) {
    if (r.type == "storage") {
      CHECK(r.technology != "proc");
      CHECK(r.technology != "sysfs");
      CHECK(r.technology != "tmpfs");
    }
  }
}

TEST_CASE("local host metrics are sampled and configs are readable", "[adapters][agents][local]") {
  LocalHostFleetOptions options;
  options.sample_interval = absl::ZeroDuration();
  auto fleet = OpenLocal(options);
  REQUIRE(fleet->GetStatus(fleet->node_id()).ok());
  core::FleetMetricQuery q;
  q.metric = "memory";
  q.start = absl::Now() - absl::Hours(1);
  q.end = absl::Now() + absl::Hours(1);
  absl::StatusOr<core::FleetMetricSeries> memory = fleet->ReadMetricHistory(fleet->node_id(), q);
  REQUIRE(memory.ok());
  REQUIRE(memory->points.size() >= 2);
  CHECK(memory->points.back().value > 0);
  q.metric = "nonsense";
  CHECK(absl::IsNotFound(fleet->ReadMetricHistory(fleet->node_id(), q).status()));
  absl::StatusOr<core::FleetConfig> config = fleet->ReadConfig(fleet->node_id());
  REQUIRE(config.ok());
  CHECK(config->content.find("memory_mb") != std::string::npos);
  CHECK(absl::IsNotFound(fleet->GetResource("node:not-this-one").status()));
}

TEST_CASE("the local host is read-only unless local actions are allowed",
          "[adapters][agents][local]") {
  auto fleet = OpenLocal();
  for (const core::FleetResource& r : All(*fleet)) {
    absl::StatusOr<std::vector<core::Capability>> caps = fleet->ListCapabilities(r.id);
    REQUIRE(caps.ok());
    CHECK(caps->empty());
  }
  core::DispatchRequest d;
  d.attempt_id = "a.dispatch.1";
  d.resource_id = fleet->node_id();
  d.capability_name = "restart";
  absl::StatusOr<core::DispatchReceipt> receipt = fleet->Dispatch(d);
  CHECK(absl::IsFailedPrecondition(receipt.status()));
  CHECK(std::string(receipt.status().message()).find("disabled") != std::string::npos);

  LocalHostFleetOptions bad;
  bad.allow_local_actions = true;
  bad.action_allowlist = {"nginx; rm -rf /"};
  CHECK(absl::IsInvalidArgument(LocalHostFleet::Open(bad).status()));
}

TEST_CASE("local exec runs only classifier-approved commands, without a shell",
          "[adapters][agents][local]") {
  auto fleet = OpenLocal();
  absl::StatusOr<core::ExecOutput> out = fleet->RunReadOnlyCommand(fleet->node_id(), "uname -s");
  REQUIRE(out.ok());
  CHECK(out->exit_code == 0);
  CHECK(out->output == "Linux\n");
  CHECK_FALSE(out->simulated);
  out = fleet->RunReadOnlyCommand(fleet->node_id(), "cat /proc/loadavg");
  REQUIRE(out.ok());
  CHECK(out->exit_code == 0);
  CHECK_FALSE(out->output.empty());
  out = fleet->RunReadOnlyCommand(fleet->node_id(), "timeout 5 cat /proc/meminfo");
  REQUIRE(out.ok());
  CHECK(out->output.find("MemTotal") != std::string::npos);
  for (std::string_view command :
       {"rm -rf /tmp/x", "sh -c id", "cat /etc/shadow", "ls; id", "cat /proc/self/environ"}) {
    INFO(command);
    CHECK(absl::IsPermissionDenied(fleet->RunReadOnlyCommand(fleet->node_id(), command).status()));
  }
  // A /proc link may not lead a reader out of the readable roots (local_host_exec_test.cc has
  // the links the executor resolves itself).
  absl::Status escaped =
      fleet->RunReadOnlyCommand(fleet->node_id(), "cat /proc/self/root/usr/bin/env").status();
  CHECK(absl::IsPermissionDenied(escaped));
  CHECK(std::string(escaped.message()).find("sensitive_path") != std::string::npos);
  CHECK(absl::IsNotFound(fleet->RunReadOnlyCommand("node:elsewhere", "uptime").status()));

  LocalHostFleetOptions no_exec;
  no_exec.allow_exec = false;
  auto closed = OpenLocal(no_exec);
  CHECK(absl::IsPermissionDenied(closed->RunReadOnlyCommand(closed->node_id(), "uptime").status()));
}

TEST_CASE("local exec is the Fleet port's command path for every local resource",
          "[adapters][agents][local]") {
  auto local = OpenLocal();
  core::Fleet& fleet = *local;  // the path the pulse_read handler takes
  absl::StatusOr<core::ExecOutput> out = fleet.RunReadOnlyCommand(local->node_id(), "uname -s");
  REQUIRE(out.ok());
  CHECK(out->output == "Linux\n");
  // Any resource of this host runs its commands on the node (here its root filesystem).
  core::FleetResourceQuery storage;
  storage.type = "storage";
  absl::StatusOr<std::vector<core::FleetResource>> filesystems = fleet.ListResources(storage);
  REQUIRE(filesystems.ok());
  REQUIRE_FALSE(filesystems->empty());
  out = fleet.RunReadOnlyCommand(filesystems->front().id, "uname -s");
  REQUIRE(out.ok());
  CHECK(out->output == "Linux\n");
  CHECK(absl::IsPermissionDenied(fleet.RunReadOnlyCommand(local->node_id(), "id; id").status()));
  CHECK(absl::IsNotFound(fleet.RunReadOnlyCommand("vm:101", "uptime").status()));
}

TEST_CASE("local references resolve the host name and mountpoints", "[adapters][agents][local]") {
  auto fleet = OpenLocal();
  absl::StatusOr<core::FleetResource> node = fleet->GetResource(fleet->node_id());
  REQUIRE(node.ok());
  absl::StatusOr<std::string> id = fleet->ResolveReference(node->name);
  REQUIRE(id.ok());
  CHECK(*id == fleet->node_id());
  id = fleet->ResolveReference("/");
  REQUIRE(id.ok());
  CHECK(id->rfind("storage:", 0) == 0);
  CHECK(absl::IsNotFound(fleet->ResolveReference("no-such-thing-here").status()));
}

}  // namespace
}  // namespace pulse::adapters::agents
