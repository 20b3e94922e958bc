// How pulse-server opens its fleet (adapters/server/src/fleet_opening.h): demo, local and a
// demo fleet file as one fleet, a sources document (a --fleet FILE or pulse.json's "fleet"
// object) as a composite, and the settings' errors.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleet_opening.h"
#include "pulse/adapters/agents/composite_fleet.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/adapters/hostagent/agent_hub.h"
#include "pulse/adapters/http/metrics_registry.h"
#include "pulse/adapters/server/server_config.h"
#include "pulse/adapters/server/server_metrics.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/testing/fake_clock.h"

namespace pulse::server {
namespace {

class FleetDir {
 public:
  FleetDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "pulse-fleet-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~FleetDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr const char* kTwoDemos =
    R"({"sources": [{"name": "lab", "kind": "demo"}, {"name": "lab2", "kind": "demo"}]})";

ServerConfig WithFleet(const std::string& fleet) {
  ServerConfig config;
  config.fleet = fleet;
  return config;
}

TEST_CASE("demo and a demo fleet file open one fleet as before", "[server][fleet]") {
  testing::FakeClock clock;
  absl::StatusOr<OpenedFleet> demo = OpenConfiguredFleet(WithFleet("demo"), clock);
  REQUIRE(demo.ok());
  CHECK(dynamic_cast<adapters::agents::DemoFleet*>(demo->fleet.get()) != nullptr);
  CHECK(demo->demo_history != nullptr);
  absl::StatusOr<OpenedFleet> file = OpenConfiguredFleet(WithFleet(PULSE_DEMO_FLEET_PATH), clock);
  REQUIRE(file.ok());
  CHECK(dynamic_cast<adapters::agents::DemoFleet*>(file->fleet.get()) != nullptr);
  const absl::Status missing =
      OpenConfiguredFleet(WithFleet("/nonexistent/fleet.json"), clock).status();
  CHECK(absl::IsNotFound(missing));
  CHECK(std::string(missing.message()).rfind("--fleet /nonexistent/fleet.json: ", 0) == 0);
}

TEST_CASE("a --fleet file of sources opens every source as one composite fleet",
          "[server][fleet]") {
  testing::FakeClock clock;
  FleetDir dir;
  absl::StatusOr<OpenedFleet> opened =
      OpenConfiguredFleet(WithFleet(dir.Write("fleet.json", kTwoDemos)), clock);
  REQUIRE(opened.ok());
  auto* composite = dynamic_cast<adapters::agents::CompositeFleet*>(opened->fleet.get());
  REQUIRE(composite != nullptr);
  CHECK(opened->demo_history == nullptr);
  CHECK(composite->GetResource("vm:101").ok());
  CHECK(composite->GetResource("vm:@lab2/101").ok());
  REQUIRE(composite->SourceStatuses().size() == 2);
  CHECK(composite->SourceStatuses()[1].name == "lab2");
  CHECK(composite->SourceStatuses()[1].up);
}

TEST_CASE("a bad sources file is refused naming the file and the source", "[server][fleet]") {
  testing::FakeClock clock;
  FleetDir dir;
  const auto refused = [&](const std::string& text) {
    const std::string file = dir.Write("bad.json", text);
    absl::StatusOr<OpenedFleet> opened = OpenConfiguredFleet(WithFleet(file), clock);
    REQUIRE_FALSE(opened.ok());
    const std::string message(opened.status().message());
    CHECK(message.rfind("--fleet " + file + ": ", 0) == 0);
    return message;
  };
  CHECK(refused(R"({"sources": [{"name": "k", "kind": "kubernetes"}]})")
            .find("unknown kind \"kubernetes\"; known kinds: demo, docker, local, proxmox-backup, "
                  "proxmox-ve") != std::string::npos);
  // docker: strict settings, and an Engine that is not there, each naming the source.
  for (const char* hostile :
       {R"({"sources": [{"name": "d", "kind": "docker", "endpoint": "tcp://10.0.0.1:2375"}]})",
        R"({"sources": [{"name": "d", "kind": "docker", "endpoint": "unix://../docker.sock"}]})",
        R"({"sources": [{"name": "d", "kind": "docker", "allow_actions": "yes"}]})",
        R"({"sources": [{"name": "d", "kind": "docker", "sample_interval_seconds": -1}]})",
        R"({"sources": [{"name": "d", "kind": "docker", "socket": "/var/run/docker.sock"}]})",
        R"({"sources": [{"name": "d", "kind": "docker", "tls_ca_file": "/ca.pem"}]})",
        R"({"sources": [{"name": "d", "kind": "docker", "endpoint": "tcp://h:2376",
                         "tls_ca_file": "ca.pem"}]})",
        R"({"sources": [{"name": "d", "kind": "docker", "endpoint": "tcp://h:2376/x",
                         "allow_plain_tcp": true}]})",
        R"({"sources": [{"name": "d", "kind": "docker", "allow_exec": "on"}]})",
        R"({"sources": [{"name": "d", "kind": "docker", "endpoint": "tcp://127.0.0.1:1",
                         "tls_ca_file": "/nonexistent/pulse-test/ca.pem"}]})",
        R"({"sources": [{"name": "d", "kind": "docker",
                         "endpoint": "unix:///nonexistent/pulse-test/docker.sock"}]})"}) {
    INFO(hostile);
    CHECK(refused(hostile).find("fleet source \"d\" (docker): ") != std::string::npos);
  }
  CHECK(refused(R"({"sources": [{"name": "a", "kind": "demo"}, {"name": "a", "kind": "demo"}]})")
            .find("fleet.sources[1].name") != std::string::npos);
  CHECK(refused(R"({"sources": [{"name": "a", "kind": "demo", "color": "red"}]})").find("color") !=
        std::string::npos);
  CHECK(refused(R"({"sources": []})").find("at least one") != std::string::npos);
  CHECK(refused(R"({"sources": [{"name": "a", "kind": "demo", "file": "/nonexistent"}]})")
            .find("fleet source \"a\" (demo)") != std::string::npos);
}

TEST_CASE("pulse.json may define the fleet as sources and a --fleet flag overrides it",
          "[server][fleet][config]") {
  FleetDir dir;
  dir.Write("pulse.json", std::string(R"({"fleet": )") + kTwoDemos + "}");
  ServerSettings flags;
  flags.data_dir = dir.path();
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(flags, std::nullopt);
  REQUIRE(config.ok());
  CHECK(config->fleet == "pulse.json");
  CHECK(config->fleet_sources.find("\"lab2\"") != std::string::npos);
  testing::FakeClock clock;
  absl::StatusOr<OpenedFleet> opened = OpenConfiguredFleet(*config, clock);
  REQUIRE(opened.ok());
  CHECK(opened->fleet->GetResource("node:@lab2/pve1").ok());

  flags.fleet = "demo";
  absl::StatusOr<ServerConfig> overridden = ResolveServerConfig(flags, std::nullopt);
  REQUIRE(overridden.ok());
  CHECK(overridden->fleet == "demo");
  CHECK(overridden->fleet_sources.empty());

  ServerSettings plain;
  plain.data_dir = dir.path();
  dir.Write("pulse.json", R"({"fleet": {"sources": [{"name": "A", "kind": "demo"}]}})");
  absl::StatusOr<ServerConfig> bad = ResolveServerConfig(plain, std::nullopt);
  REQUIRE_FALSE(bad.ok());
  CHECK(
      std::string(bad.status().message()).rfind("pulse.json \"fleet\": fleet.sources[0].name", 0) ==
      0);
  dir.Write("pulse.json", R"({"fleet": {"nodes": []}})");
  CHECK(absl::IsInvalidArgument(ResolveServerConfig(plain, std::nullopt).status()));
  dir.Write("pulse.json", R"({"fleet": ["demo"]})");
  const absl::Status array = ResolveServerConfig(plain, std::nullopt).status();
  CHECK(std::string(array.message()).find("must be a string or an object") != std::string::npos);
}

TEST_CASE("/metrics shows whether each fleet source is up and what it holds",
          "[server][fleet][metrics]") {
  adapters::http::MetricsRegistry registry;
  absl::StatusOr<std::unique_ptr<ServerMetrics>> metrics = ServerMetrics::Register(registry);
  REQUIRE(metrics.ok());
  testing::FakeClock clock;
  FleetDir dir;
  absl::StatusOr<OpenedFleet> opened =
      OpenConfiguredFleet(WithFleet(dir.Write("fleet.json", kTwoDemos)), clock);
  REQUIRE(opened.ok());
  std::vector<core::FleetSourceStatus> sources = opened->fleet->SourceStatuses();
  REQUIRE(sources.size() == 2);
  (*metrics)->RefreshFleetSources(sources);
  std::string text = registry.Render();
  CHECK(text.find(R"(pulse_fleet_source_up{source="lab",kind="demo"} 1)") != std::string::npos);
  CHECK(text.find(R"(pulse_fleet_source_up{source="lab2",kind="demo"} 1)") != std::string::npos);
  CHECK(text.find(absl::StrCat(R"(pulse_fleet_source_resources{source="lab2",kind="demo"} )",
                               sources[1].resources)) != std::string::npos);
  sources[1].up = false;
  (*metrics)->RefreshFleetSources(sources);
  text = registry.Render();
  CHECK(text.find(R"(pulse_fleet_source_up{source="lab2",kind="demo"} 0)") != std::string::npos);
  // A fleet of one source reports none.
  absl::StatusOr<OpenedFleet> demo = OpenConfiguredFleet(WithFleet("demo"), clock);
  REQUIRE(demo.ok());
  CHECK(demo->fleet->SourceStatuses().empty());
}

}  // namespace
}  // namespace pulse::server

namespace pulse::server {
namespace {

// The host agents' hub over a real registry in `dir`.
std::unique_ptr<adapters::hostagent::AgentHub> OpenHub(
    const std::string& dir, std::unique_ptr<adapters::storage::SqliteStorage>& storage) {
  absl::StatusOr<std::unique_ptr<adapters::storage::SqliteStorage>> opened =
      adapters::storage::OpenSqliteStorage(dir);
  REQUIRE(opened.ok());
  storage = *std::move(opened);
  absl::StatusOr<std::unique_ptr<adapters::hostagent::AgentHub>> hub =
      adapters::hostagent::AgentHub::Open(*storage->host_agents);
  REQUIRE(hub.ok());
  return *std::move(hub);
}

std::vector<std::string> SourceNames(core::Fleet& fleet) {
  std::vector<std::string> names;
  for (const core::FleetSourceStatus& s : fleet.SourceStatuses()) {
    names.push_back(s.name + ":" + s.kind);
  }
  return names;
}

TEST_CASE("every fleet the server opens includes the host agents once", "[server][fleet]") {
  testing::FakeClock clock;
  FleetDir dir;
  std::unique_ptr<adapters::storage::SqliteStorage> storage;
  std::unique_ptr<adapters::hostagent::AgentHub> hub = OpenHub(dir.path() + "/data", storage);

  // The demo fleet becomes the first source of a composite.
  absl::StatusOr<OpenedFleet> demo = OpenConfiguredFleet(WithFleet("demo"), clock, {}, hub.get());
  REQUIRE(demo.ok());
  REQUIRE(demo->composite != nullptr);
  CHECK(SourceNames(*demo->fleet) == std::vector<std::string>{"demo:demo", "agents:agents"});
  CHECK(demo->source_histories.count("demo") == 1);  // the generated series still forecast
  CHECK(demo->fleet->GetResource("vm:101").ok());

  // A sources list gets the agents appended...
  const std::string two =
      dir.Write("two.json", R"({"sources": [{"name": "lab", "kind": "demo"}]})");
  absl::StatusOr<OpenedFleet> listed = OpenConfiguredFleet(WithFleet(two), clock, {}, hub.get());
  REQUIRE(listed.ok());
  CHECK(SourceNames(*listed->fleet) == std::vector<std::string>{"lab:demo", "agents:agents"});

  // ...under another name when `agents` is taken...
  const std::string taken =
      dir.Write("taken.json", R"({"sources": [{"name": "agents", "kind": "demo"}]})");
  absl::StatusOr<OpenedFleet> renamed = OpenConfiguredFleet(WithFleet(taken), clock, {}, hub.get());
  REQUIRE(renamed.ok());
  CHECK(SourceNames(*renamed->fleet) ==
        std::vector<std::string>{"agents:demo", "host-agents:agents"});

  // ...and not at all when the list names one itself, with its settings read strictly.
  const std::string own = dir.Write("own.json", R"({"sources": [{"name": "lab", "kind": "demo"},
                                   {"name": "hosts", "kind": "agents", "allow_actions": true,
                                    "action_allowlist": ["nginx"], "stale_after_seconds": 5}]})");
  absl::StatusOr<OpenedFleet> configured =
      OpenConfiguredFleet(WithFleet(own), clock, {}, hub.get());
  REQUIRE(configured.ok());
  CHECK(SourceNames(*configured->fleet) == std::vector<std::string>{"lab:demo", "hosts:agents"});
  CHECK(hub->StaleWindowFor() == absl::Seconds(5));
  for (const char* hostile :
       {R"({"sources": [{"name": "h", "kind": "agents", "allow_actions": "yes"}]})",
        R"({"sources": [{"name": "h", "kind": "agents", "action_allowlist": ["-rf /"]}]})",
        R"({"sources": [{"name": "h", "kind": "agents", "stale_after_seconds": 1}]})",
        R"({"sources": [{"name": "h", "kind": "agents", "token": "x"}]})"}) {
    INFO(hostile);
    const absl::StatusOr<OpenedFleet> refused =
        OpenConfiguredFleet(WithFleet(dir.Write("bad.json", hostile)), clock, {}, hub.get());
    REQUIRE_FALSE(refused.ok());
    CHECK(std::string(refused.status().message()).find("fleet source \"h\" (agents)") !=
          std::string::npos);
  }
}

}  // namespace
}  // namespace pulse::server
