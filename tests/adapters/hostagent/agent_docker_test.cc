// Local containers in the agent without a daemon: the id mapping into the host's namespace, a
// report built over a raw unix-socket server speaking the Engine API (the style of
// tests/adapters/docker/engine_faults_test.cc: it stands in where a real daemon cannot be made
// to vanish and come back on cue), the executor's refusals on containers, and a bad endpoint.
// The real daemon's tests are agent_docker_daemon_test.cc (label docker).
#include "pulse/adapters/hostagent/agent_docker.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent_test_support.h"
#include "pulse/adapters/hostagent/agent_report.h"
#include "raw_server.h"

namespace pulse::adapters::hostagent {
namespace {

using pulse::testing::RawServer;
using testing::AgentRig;

std::string Answer(int status, const std::string& body) {
  return absl::StrCat("HTTP/1.1 ", status,
                      " X\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
                      "\r\nConnection: close\r\n\r\n", body);
}

// Two containers: web (running, member of Compose project shop, service front) and batch
// (exited). Answers by path prefix, on a unix socket at `path`.
class FakeEngine {
 public:
  explicit FakeEngine(const std::string& path)
      : server_(path, [this](int fd, RawServer&) {
          const std::string head = RawServer::ReadHead(fd);
          const std::size_t start = head.find(' ') + 1;
          const std::string target = head.substr(start, head.find(' ', start) - start);
          for (const auto& [prefix, answer] : answers_) {
            if (target.rfind(prefix, 0) == 0) {
              RawServer::SendAll(fd, answer);
              return;
            }
          }
          RawServer::SendAll(fd, Answer(404, R"({"message":"page not found"})"));
        }) {}

 private:
  const std::map<std::string, std::string> answers_ = {
      {"/version",
       Answer(200, R"({"Version":"24.0.7","ApiVersion":"1.43","MinAPIVersion":"1.12"})")},
      {"/v1.43/info", Answer(200, R"({"Name":"dock1","OperatingSystem":"Test OS",
          "ServerVersion":"24.0.7","NCPU":2,"MemTotal":2000000000})")},
      {"/v1.43/containers/json", Answer(200, R"([
          {"Id":"aaaa1111","Names":["/web"],"Image":"nginx","ImageID":"sha256:1","State":"running",
           "Status":"Up 5 minutes","Created":1700000000,
           "Labels":{"com.docker.compose.project":"shop","com.docker.compose.service":"front"}},
          {"Id":"bbbb2222","Names":["/batch"],"Image":"busybox","ImageID":"sha256:2",
           "State":"exited","Status":"Exited (1) 1 minute ago","Created":1700000000,"Labels":{}}])")},
      {"/v1.43/containers/aaaa1111/json", Answer(200, R"({"Id":"aaaa1111","Name":"/web",
          "Image":"sha256:1","RestartCount":0,"Created":"2026-12-01T10:00:00Z",
          "State":{"Status":"running","Running":true,"Restarting":false,"OOMKilled":false,
                   "ExitCode":0,"Pid":42,"StartedAt":"2026-12-01T10:00:01Z",
                   "FinishedAt":"0001-01-01T00:00:00Z"},
          "Config":{"Image":"nginx","Tty":false,"Labels":{"com.docker.compose.project":"shop",
                    "com.docker.compose.service":"front"}},
          "HostConfig":{"Memory":0,"RestartPolicy":{"Name":"no"}}})")},
      {"/v1.43/containers/bbbb2222/json", Answer(200, R"({"Id":"bbbb2222","Name":"/batch",
          "Image":"sha256:2","RestartCount":0,"Created":"2026-12-01T10:00:00Z",
          "State":{"Status":"exited","Running":false,"Restarting":false,"OOMKilled":false,
                   "ExitCode":1,"Pid":0,"StartedAt":"2026-12-01T10:00:01Z",
                   "FinishedAt":"2026-12-01T10:01:00Z"},
          "Config":{"Image":"busybox","Tty":false,"Labels":{}},
          "HostConfig":{"Memory":0,"RestartPolicy":{"Name":"no"}}})")},
      // cpu: (300-100)/(2000-1000) * 2 CPUs * 100 = 40 %; memory 500 of 1000 bytes = 50 %.
      {"/v1.43/containers/aaaa1111/stats", Answer(200, R"({"read":"2026-12-01T10:05:00Z",
          "cpu_stats":{"cpu_usage":{"total_usage":300},"system_cpu_usage":2000,"online_cpus":2},
          "precpu_stats":{"cpu_usage":{"total_usage":100},"system_cpu_usage":1000},
          "memory_stats":{"usage":500,"limit":1000}})")},
  };
  RawServer server_;
};

Report BuildReport(AgentRig& rig) {
  ReportContext context;
  context.agent_version = "test";
  context.now = rig.clock.Now();
  absl::StatusOr<Report> report = BuildHostReport(*rig.fleet, *rig.executor, context);
  REQUIRE(report.ok());
  // Whatever the agent builds, the server's decoder accepts.
  absl::StatusOr<Report> decoded = DecodeReport(EncodeReport(*report));
  REQUIRE(decoded.ok());
  return *decoded;
}

const core::FleetResource* Find(const Report& report, std::string_view id) {
  for (const core::FleetResource& r : report.resources) {
    if (r.id == id) {
      return &r;
    }
  }
  return nullptr;
}

bool HasContainers(const Report& report) {
  for (const core::FleetResource& r : report.resources) {
    if (r.type == "app-container") {
      return true;
    }
  }
  return false;
}

TEST_CASE("Docker ids map into the host's namespace and back", "[adapters][hostagent][docker]") {
  CHECK(DockerIdToHost("app-container:web", "web1") == "app-container:web1/web");
  CHECK(DockerIdToHost("compose-service:shop/front", "web1") == "compose-service:web1/shop/front");
  CHECK(DockerIdToHost("node:dock1", "web1") == "docker-engine:web1/dock1");
  CHECK(DockerIdToHost("not an id", "web1").empty());
  CHECK(DockerIdToHost("app-container:" + std::string(240, 'a'), "web1").empty());  // too long
  for (const char* id :
       {"app-container:web", "compose-project:shop", "compose-service:shop/front", "node:dock1"}) {
    INFO(id);
    CHECK(ResourceBelongsToHost(DockerIdToHost(id, "web1"), "web1"));
    CHECK(HostIdToDocker(DockerIdToHost(id, "web1"), "web1") == std::optional<std::string>(id));
  }
  // The host's own resources, another host's containers and garbage are not Docker ids.
  CHECK_FALSE(HostIdToDocker("node:web1", "web1").has_value());
  CHECK_FALSE(HostIdToDocker("service:web1/nginx", "web1").has_value());
  CHECK_FALSE(HostIdToDocker("app-container:web2/web", "web1").has_value());
  CHECK_FALSE(HostIdToDocker("app-container:web", "web1").has_value());
  CHECK_FALSE(HostIdToDocker("app-container:web1/", "web1").has_value());
}

TEST_CASE("a bad --docker-endpoint is refused with a stable code",
          "[adapters][hostagent][docker]") {
  for (const char* endpoint : {"tcp://10.0.0.1:2375", "unix://relative/path", "unix:///a/../b",
                               "unix:///a\"b", "", "none", "/var/run/docker.sock"}) {
    INFO(endpoint);
    AgentDockerOptions options;
    options.host = "web1";
    options.endpoint = endpoint;
    absl::StatusOr<std::unique_ptr<AgentDocker>> docker = AgentDocker::Create(options);
    REQUIRE_FALSE(docker.ok());
    CHECK(absl::IsInvalidArgument(docker.status()));
    CHECK(absl::StartsWith(docker.status().message(), "docker_endpoint_invalid: "));
  }
}

TEST_CASE("the report carries the local containers in the host's namespace",
          "[adapters][hostagent][docker]") {
  AgentRig rig;
  const std::string socket = rig.dir.File("docker.sock");
  FakeEngine engine(socket);
  rig.UseDocker("unix://" + socket);
  const Report report = BuildReport(rig);

  // Every resource is the host's; the engine hangs under node:web1.
  for (const core::FleetResource& r : report.resources) {
    INFO(r.id);
    CHECK(ResourceBelongsToHost(r.id, "web1"));
  }
  const core::FleetResource* engine_node = Find(report, "docker-engine:web1/dock1");
  REQUIRE(engine_node != nullptr);
  CHECK(engine_node->type == "docker-engine");
  CHECK(engine_node->parent_id == "node:web1");
  const core::FleetResource* web = Find(report, "app-container:web1/web");
  REQUIRE(web != nullptr);
  CHECK(web->parent_id == "docker-engine:web1/dock1");
  CHECK(web->status == "running");
  CHECK(web->attributes.at("container_id") == "aaaa1111");
  const core::FleetResource* batch = Find(report, "app-container:web1/batch");
  REQUIRE(batch != nullptr);
  CHECK(batch->status == "exited");
  REQUIRE(Find(report, "compose-project:web1/shop") != nullptr);
  const core::FleetResource* front = Find(report, "compose-service:web1/shop/front");
  REQUIRE(front != nullptr);
  CHECK(front->parent_id == "compose-project:web1/shop");
  // The host's own resources are still there.
  CHECK(Find(report, "node:web1") != nullptr);
  CHECK(Find(report, "service:web1/nginx") != nullptr);

  std::set<std::string> edges;
  for (const core::FleetRelationship& e : report.relationships) {
    edges.insert(absl::StrCat(e.from_id, " ", e.kind, " ", e.to_id));
  }
  CHECK(edges.count("docker-engine:web1/dock1 runs_on node:web1") == 1);
  CHECK(edges.count("app-container:web1/web runs_on docker-engine:web1/dock1") == 1);
  CHECK(edges.count("app-container:web1/web member_of compose-service:web1/shop/front") == 1);
  CHECK(edges.count("compose-service:web1/shop/front member_of compose-project:web1/shop") == 1);

  std::map<std::string, ReportStatus> statuses;
  for (const ReportStatus& s : report.statuses) {
    statuses[s.resource_id] = s;
  }
  REQUIRE(statuses.count("app-container:web1/web") == 1);
  CHECK(statuses["app-container:web1/web"].status == "running");
  REQUIRE(statuses.count("app-container:web1/batch") == 1);
  CHECK(statuses["app-container:web1/batch"].status == "exited");
  std::map<std::string, double> metrics;
  for (const ReportMetric& m : report.metrics) {
    metrics[m.resource_id + " " + m.metric] = m.value;
  }
  CHECK(metrics["app-container:web1/web cpu"] == Approx(40.0));
  CHECK(metrics["app-container:web1/web memory"] == Approx(50.0));
  CHECK(metrics["app-container:web1/web memory_used"] == Approx(500.0));

  // "docker" is false in this allow.json: no container offers anything.
  for (const ReportCapabilities& c : report.capabilities) {
    CHECK(c.resource_id.rfind("app-container:", 0) != 0);
  }
  AgentRig acting(R"({"capabilities": ["restart", "stop"], "services": [], "docker": true})");
  acting.UseDocker("unix://" + socket);
  const Report offered = BuildReport(acting);
  std::map<std::string, std::vector<std::string>> caps;
  for (const ReportCapabilities& c : offered.capabilities) {
    caps[c.resource_id] = c.names;
  }
  // web runs: restart and stop; batch exited: start, which allow.json does not list.
  CHECK(caps["app-container:web1/web"] == std::vector<std::string>{"restart", "stop"});
  CHECK(caps.count("app-container:web1/batch") == 0);
}

TEST_CASE("a Docker daemon that goes away drops the containers, not the report",
          "[adapters][hostagent][docker]") {
  AgentRig rig;
  const std::string socket = rig.dir.File("docker.sock");
  rig.UseDocker("unix://" + socket);
  // No daemon yet: the host alone, one line logged however many reports go out.
  Report report = BuildReport(rig);
  CHECK(Find(report, "node:web1") != nullptr);
  CHECK_FALSE(HasContainers(report));
  report = BuildReport(rig);
  CHECK_FALSE(HasContainers(report));
  REQUIRE(rig.docker_log.size() == 1);
  CHECK(absl::StartsWith(rig.docker_log[0], "down: "));
  {
    FakeEngine engine(socket);  // the daemon starts after the agent
    report = BuildReport(rig);
    CHECK(Find(report, "app-container:web1/web") != nullptr);
    report = BuildReport(rig);
    CHECK(Find(report, "app-container:web1/web") != nullptr);
    REQUIRE(rig.docker_log.size() == 2);
    CHECK(absl::StartsWith(rig.docker_log[1], "up: "));
  }
  // It stops: the next reports leave the containers out and keep the host.
  report = BuildReport(rig);
  CHECK(Find(report, "node:web1") != nullptr);
  CHECK(Find(report, "service:web1/nginx") != nullptr);
  CHECK_FALSE(HasContainers(report));
  report = BuildReport(rig);
  CHECK_FALSE(HasContainers(report));
  REQUIRE(rig.docker_log.size() == 3);
  CHECK(absl::StartsWith(rig.docker_log[2], "down: "));
  {
    FakeEngine again(socket);
    report = BuildReport(rig);
    CHECK(Find(report, "app-container:web1/web") != nullptr);
    CHECK(rig.docker_log.size() == 4);
  }
}

TEST_CASE("the agent refuses container commands its allowlist and its daemon do not admit",
          "[adapters][hostagent][docker][executor]") {
  AgentRig rig;  // "docker" is false
  const std::string socket = rig.dir.File("docker.sock");
  FakeEngine engine(socket);
  rig.UseDocker("unix://" + socket);
  Result refused = rig.executor->Execute(
      rig.Dispatch("cmd_00000000000000d1", "act_d1", "app-container:web1/web", "restart"));
  CHECK(refused.status == core::ExecutionStatus::kNotRun);
  CHECK(refused.reason_code == "agent_allowlist");
  refused =
      rig.executor->Execute(rig.Exec("cmd_00000000000000d2", "app-container:web1/web", "uptime"));
  CHECK(refused.status == core::ExecutionStatus::kNotRun);
  CHECK(refused.reason_code == "agent_allowlist");

  AgentRig acting(R"({"capabilities": ["restart"], "services": [], "docker": true})");
  acting.UseDocker("unix://" + socket);
  struct Case {
    Command command;
    std::string reason;
  };
  for (const Case& c : std::vector<Case>{
           {acting.Dispatch("cmd_00000000000000d3", "act_d3", "app-container:web1/gone", "restart"),
            "unknown_resource"},
           {acting.Dispatch("cmd_00000000000000d4", "act_d4", "app-container:web2/web", "restart"),
            "wrong_host"},
           {acting.Dispatch("cmd_00000000000000d5", "act_d5", "app-container:web1/web", "stop"),
            "agent_allowlist"},
           {acting.Dispatch("cmd_00000000000000d6", "act_d6", "compose-project:web1/shop",
                            "restart"),
            "unknown_capability"},
           {acting.Dispatch("cmd_00000000000000d7", "act_d7", "docker-engine:web1/dock1",
                            "restart"),
            "unknown_capability"},
           {acting.Exec("cmd_00000000000000d8", "app-container:web1/web", "rm -rf /"),
            "agent_classifier"},
       }) {
    INFO(c.command.command_id << " " << c.reason);
    const Result result = acting.executor->Execute(c.command);
    CHECK(result.status == core::ExecutionStatus::kNotRun);
    CHECK(result.reason_code == c.reason);
    CHECK_FALSE(result.summary.empty());
  }
  CHECK(acting.state->size() == 0);  // nothing was claimed

  // Without a daemon (or with --docker-endpoint none) a container is not a resource here.
  AgentRig absent(R"({"capabilities": ["restart"], "services": [], "docker": true})");
  absent.UseDocker("unix://" + absent.dir.File("no-daemon.sock"));
  CHECK(absent.executor
            ->Execute(absent.Dispatch("cmd_00000000000000d9", "act_d9", "app-container:web1/web",
                                      "restart"))
            .reason_code == "unknown_resource");
  AgentRig none(R"({"capabilities": ["restart"], "services": [], "docker": true})");
  CHECK(none.executor
            ->Execute(none.Dispatch("cmd_00000000000000da", "act_da", "app-container:web1/web",
                                    "restart"))
            .reason_code == "unknown_resource");
  CHECK(absent.state->size() == 0);
  CHECK(none.state->size() == 0);
}

}  // namespace
}  // namespace pulse::adapters::hostagent
