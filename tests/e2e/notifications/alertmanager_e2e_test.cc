// Alert intake end to end (docs/alerts.md): the real pulse-server and a real Prometheus
// Alertmanager (Debian's prometheus-alertmanager 0.25), configured by the test to send its
// webhook to POST /api/ai/investigate-alert with a Bearer token (http_config.authorization).
// Alerts are fired and resolved through Alertmanager's own API (/api/v2/alerts), so the intake
// is tested against the real client's payloads, grouping and resolve notifications; the route's
// authorization and hostile bodies are tested directly.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "child_process.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_time.h"
#include "server_harness.h"

namespace pulse::testing::e2e::alertmanager {  // its own: the e2e helpers are unity-built
namespace {

// A port nobody listens on now (bound to 0, read, closed): Alertmanager takes a fixed port.
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class Alertmanager {
 public:
  // Sends every alert, alone in its group, to pulse-server within about a second.
  Alertmanager(const std::string& dir, int pulse_port, const std::string& token)
      : port_(FreePort()) {
    const std::string config = dir + "/alertmanager.yml";
    std::ofstream(config) << absl::StrCat(R"(route:
  receiver: pulse
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: pulse
    webhook_configs:
      - url: http://127.0.0.1:)",
                                          pulse_port, R"(/api/ai/investigate-alert
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: )",
                                          token, "\n");
    ChildProcessOptions child;
    child.argv = {PULSE_ALERTMANAGER,
                  "--config.file=" + config,
                  "--storage.path=" + dir + "/alertmanager-data",
                  absl::StrCat("--web.listen-address=127.0.0.1:", port_),
                  "--cluster.listen-address=",
                  "--log.level=debug"};
    child.log_path = dir + "/alertmanager.log";
    absl::StatusOr<std::unique_ptr<ChildProcess>> started = ChildProcess::Start(child);
    REQUIRE(started.ok());
    process_ = *std::move(started);
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (Send(port_, "GET", "/-/ready").status != 200) {
      INFO(process_->LogTail());
      REQUIRE(process_->Running());
      REQUIRE(absl::Now() < deadline);
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  // POSTs alerts to Alertmanager's API (firing without endsAt, resolved with an endsAt now).
  void Post(const std::string& alerts_json) {
    const Reply reply = Send(port_, "POST", "/api/v2/alerts", "", alerts_json,
                             {{"Content-Type", "application/json"}});
    INFO(reply.body);
    REQUIRE(reply.status == 200);
  }
  std::string Log() const { return process_->LogTail(8000); }

 private:
  int port_;
  std::unique_ptr<ChildProcess> process_;
};

// The server log's alert intake lines.
std::vector<std::string> IntakeLines(const ServerProcess& server) {
  std::vector<std::string> out;
  const std::string log = server.Log();
  std::size_t at = 0;
  while ((at = log.find("alert intake (", at)) != std::string::npos) {
    const std::size_t end = log.find('\n', at);
    out.push_back(log.substr(at, end - at));
    at = end;
  }
  return out;
}

bool WaitForLines(const ServerProcess& server, std::size_t n, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (IntakeLines(server).size() < n) {
    if (absl::Now() > deadline) {
      return false;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return true;
}

rapidjson::Document Findings(int port, const std::string& token) {
  const Reply reply = Send(port, "GET", "/api/ai/patrol/findings", token);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  return Json(reply.body);
}

// The active findings an Alertmanager alert raised on `resource`, as compact JSON objects.
std::vector<std::string> AlertFindings(int port, const std::string& token,
                                       const std::string& resource) {
  rapidjson::Document doc = Findings(port, token);
  REQUIRE(doc.IsArray());
  std::vector<std::string> out;
  for (const rapidjson::Value& f : doc.GetArray()) {
    if (Str(f, "resource_id") == resource && Str(f, "source") == "alertmanager") {
      out.push_back(core::ToJsonString(f));
    }
  }
  return out;
}

TEST_CASE("alerts fired through a real Alertmanager become findings and scoped Patrol runs",
          "[e2e][alerts][alertmanager]") {
  TempDir dir;
  const std::string operator_token = MintToken(dir.path(), "ai:execute", "operator");
  const std::string am_token = MintToken(dir.path(), "ai:execute", "alertmanager", "service");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();
  Alertmanager am(dir.path(), port, am_token);

  // One alert that names its resource, one that cannot be mapped (two containers are "web"
  // nowhere, but no resource is "nope"), each alone in its group.
  am.Post(R"([{"labels": {"alertname": "ContainerDown", "pulse_resource": "app-container:web",
                "severity": "critical"},
              "annotations": {"summary": "web is down", "runbook_url": "https://rb/web"}},
             {"labels": {"alertname": "Mystery", "container": "nope"}}])");
  INFO(am.Log());
  REQUIRE(WaitForLines(server, 2, absl::Seconds(30)));
  absl::SleepFor(absl::Milliseconds(500));
  std::string lines;
  for (const std::string& line : IntakeLines(server)) {
    lines += line + "\n";
  }
  INFO(lines);
  CHECK(lines.find("receiver pulse") != std::string::npos);
  CHECK(lines.find("1 alert(s) (0 resolved), 1 mapped") != std::string::npos);
  CHECK(lines.find("0 mapped, 1 unmapped") != std::string::npos);
  CHECK(lines.find("; Patrol run ") != std::string::npos);

  const std::vector<std::string> found = AlertFindings(port, operator_token, "app-container:web");
  REQUIRE(found.size() == 1);
  INFO(found[0]);
  rapidjson::Document f = Json(found[0]);
  CHECK(Str(f, "title") == "web is down");
  CHECK(Str(f, "severity") == "critical");
  CHECK(Str(f, "recommendation") == "Follow the runbook: https://rb/web");
  CHECK(Str(f, "evidence").find("pulse_resource=app-container:web") != std::string::npos);
  const std::string id = Str(f, "id");
  // The Patrol run the alert started: scoped to the resource, trigger alert.
  const Reply runs = Send(port, "GET", "/api/ai/patrol/runs", operator_token);
  REQUIRE(runs.status == 200);
  rapidjson::Document run_list = Json(runs.body);
  const rapidjson::Value& run_array = run_list.IsArray() ? run_list : run_list["items"];
  bool alert_run = false;
  for (const rapidjson::Value& r : run_array.GetArray()) {
    alert_run = alert_run || Str(r, "trigger_reason") == "alert";
  }
  CHECK(alert_run);

  // Resolved through Alertmanager: it sends the resolve notification; without a verifier for the
  // alert the finding stays active (an alert resolving is evidence, not proof).
  const std::string now = core::FormatRfc3339(absl::Now());
  am.Post(absl::StrCat(R"([{"labels": {"alertname": "ContainerDown",
                "pulse_resource": "app-container:web", "severity": "critical"},
              "annotations": {"summary": "web is down", "runbook_url": "https://rb/web"},
              "endsAt": ")",
                       now, R"("}])"));
  REQUIRE(WaitForLines(server, 3, absl::Seconds(30)));
  CHECK(IntakeLines(server).back().find("1 alert(s) (1 resolved), 1 mapped") != std::string::npos);
  const std::vector<std::string> after = AlertFindings(port, operator_token, "app-container:web");
  REQUIRE(after.size() == 1);
  CHECK(Str(Json(after[0]), "id") == id);  // still active: kept for its verifier
  CHECK(server.Log().find(am_token) == std::string::npos);
}

TEST_CASE("the alert intake needs ai:execute and refuses hostile bodies, changing nothing",
          "[e2e][alerts][hostile]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "ai:execute", "operator");
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
  const int port = server.port();
  const std::string ok = R"({"alerts":[{"name":"A","resource_id":"vm:101"}]})";
  CHECK(Send(port, "POST", "/api/ai/investigate-alert", "", ok).status == 401);
  CHECK(Send(port, "POST", "/api/ai/investigate-alert", reader, ok).status == 403);
  // Alertmanager's way of sending the token.
  const Reply bearer = Send(port, "POST", "/api/ai/investigate-alert", "", ok,
                            {{"Authorization", "Bearer " + token}});
  INFO(bearer.body);
  REQUIRE(bearer.status == 200);
  rapidjson::Document answer = Json(bearer.body);
  CHECK(Str(answer, "shape") == "native");
  CHECK(Str(answer["alerts"][0], "resource_id") == "vm:101");
  CHECK(Str(answer["alerts"][0], "finding_outcome") == "created");
  CHECK(Str(answer["alerts"][0], "investigation") == "started");
  const std::string before = core::ToJsonString(Findings(port, token));

  for (const std::string& body : std::vector<std::string>{
           std::string(""), std::string("{"), std::string(R"({"alerts":[]})"),
           std::string(R"({"alerts":[{"name":"A","resource_id":"../etc"}]})"),
           std::string(R"({"version":"4","alerts":[{"status":"firing","labels":{}}]})"),
           std::string(R"({"alerts":[{"name":"A","labels":{"k":"v\r\nX: y"}}]})"),
           std::string(60000, '['),
           absl::StrCat(R"({"alerts":[)", std::string(100000, ' '), "]}")}) {
    INFO(body.substr(0, 100));
    const Reply reply = Send(port, "POST", "/api/ai/investigate-alert", token, body);
    INFO(reply.body);
    CHECK(reply.status == 400);
    CHECK(ErrorCode(reply.body) == "invalid_request");
  }
  CHECK(core::ToJsonString(Findings(port, token)) == before);
  REQUIRE(server.Running());
}

}  // namespace
}  // namespace pulse::testing::e2e::alertmanager
