// pulse-agent end to end (docs/agent.md): a real pulse-server and real pulse-agent processes on
// loopback, each agent with its own state dir, a --hostname override and the fake-systemctl
// stand-in (PULSE_AGENT_TEST_SYSTEMCTL) in a directory of its own, so its units' states and the
// restart counter are plain files the test reads. The fleet shows the hosts; an operator's
// restart goes through the lifecycle to one agent and is verified from a fresh report; the
// faults of the issue: an agent killed mid-command, the server restarted under connected agents,
// a stolen token, a command beyond the agent's allowlist.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "catch2/catch.hpp"
#include "child_process.h"
#include "pulse/core/findings/finding_identity.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

std::string AgentBinary() { return PULSE_AGENT_BINARY; }
std::string CliBinary() { return PULSE_CLI_BINARY; }
std::string FakeSystemctl() { return PULSE_FAKE_SYSTEMCTL; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::size_t Lines(const std::string& path) {
  const std::string text = ReadFile(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// One agent host: its directory (the stand-in and its units, the token, the allowlist, the
// state dir) and, while running, its process.
class AgentHost {
 public:
  AgentHost(const TempDir& dir, std::string host, const std::string& token,
            const std::string& allow_json)
      : host_(std::move(host)), root_(dir.File(host_)) {
    std::filesystem::create_directories(root_ + "/units");
    std::filesystem::create_directories(root_ + "/state");
    std::filesystem::copy_file(FakeSystemctl(), root_ + "/systemctl");
    std::filesystem::permissions(root_ + "/systemctl", std::filesystem::perms::owner_all);
    for (const char* unit : {"pulse-demo-web", "pulse-demo-db"}) {
      std::ofstream(root_ + "/units/" + unit + ".service.state") << "active\n";
    }
    std::ofstream(root_ + "/token") << token << "\n";
    ::chmod((root_ + "/token").c_str(), 0600);
    std::ofstream(root_ + "/allow.json") << allow_json;
  }

  const std::string& host() const { return host_; }
  std::string TokenFile() const { return root_ + "/token"; }
  std::string Restarts(const std::string& unit) const {
    return root_ + "/units/" + unit + ".service.restarts";
  }
  std::string UnitState(const std::string& unit) const {
    std::string s = ReadFile(root_ + "/units/" + unit + ".service.state");
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
      s.pop_back();
    }
    return s;
  }
  void SetUnitState(const std::string& unit, const std::string& state) const {
    std::ofstream(root_ + "/units/" + unit + ".service.state") << state << "\n";
  }
  void SlowRestarts(int seconds) const {
    std::ofstream(root_ + "/restart-sleep") << seconds << "\n";
  }

  std::vector<std::string> Argv(int port, const std::string& hostname) const {
    return {AgentBinary(),      "--server",     absl::StrCat("http://127.0.0.1:", port),
            "--token-file",     TokenFile(),    "--state-dir",
            root_ + "/state",   "--hostname",   hostname,
            "--allowlist",      root_ + "/allow.json", "--interval", "1s"};
  }
  std::vector<std::string> Env() const {
    return {"PULSE_AGENT_TEST_SYSTEMCTL=" + root_ + "/systemctl"};
  }

  void Start(int port) { StartAs(port, host_); }
  void StartAs(int port, const std::string& hostname) {
    ChildProcessOptions options;
    options.argv = Argv(port, hostname);
    options.extra_env = Env();
    options.log_path = root_ + "/agent-" + std::to_string(++starts_) + ".log";
    absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(options);
    REQUIRE(child.ok());
    process_ = *std::move(child);
  }
  void Kill() {
    REQUIRE(process_ != nullptr);
    ::kill(process_->pid(), SIGKILL);
    process_->Stop(absl::Seconds(1));
  }
  std::string Stop() { return process_ == nullptr ? "" : process_->Stop(absl::Seconds(10)); }
  bool Running() { return process_ != nullptr && process_->Running(); }
  std::string Log() const { return process_ == nullptr ? "" : process_->LogTail(8000); }
  // Every log this host's agents wrote, oldest process first.
  std::string AllLogs() const {
    std::string out;
    for (int i = 1; i <= starts_; ++i) {
      out += ReadFile(root_ + "/agent-" + std::to_string(i) + ".log");
    }
    return out;
  }

 private:
  std::string host_;
  std::string root_;
  int starts_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

constexpr char kAllowWeb[] =
    R"({"capabilities":["restart","start","stop"],"services":["pulse-demo-web"],"exec":true})";

// The sources file: the demo fleet and the agents, whose actions the server allows on every unit
// (so only the agents' allowlists stop what they must), with a short stale window.
std::string Sources() {
  return R"({"sources":[{"name":"lab","kind":"demo"},)"
         R"({"name":"agents","kind":"agents","allow_actions":true,"action_allowlist":["*"],)"
         R"("stale_after_seconds":4}]})";
}

// Waits until `predicate` holds (polling every 100 ms) or `timeout` passes.
template <class Predicate>
bool WaitUntil(Predicate predicate, absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (predicate()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return predicate();
}

// The state list_agents shows for `host` ("" when not listed).
std::string StateOf(int port, const std::string& token, const std::string& host) {
  const Reply reply = Send(port, "GET", "/api/agents", token);
  if (reply.status != 200) {
    return "";
  }
  const rapidjson::Document doc = Json(reply.body);
  for (const auto& agent : doc["agents"].GetArray()) {
    if (Str(agent, "host") == host) {
      return Str(agent, "state");
    }
  }
  return "";
}

struct Lab {
  TempDir dir;
  std::string fleet = dir.File("fleet.json");
  std::string reader;
  std::string alice;
  std::string bob;
  std::vector<std::unique_ptr<AgentHost>> hosts;

  explicit Lab(int n) {
    std::ofstream(fleet) << Sources();
    reader = MintToken(dir.path(), "monitoring:read", "reader");
    alice = MintToken(dir.path(), "actions:plan,monitoring:read", "alice");
    bob = MintToken(dir.path(), "actions:approve,actions:execute,monitoring:read,ai:execute",
                    "bob");
    for (int i = 1; i <= n; ++i) {
      const std::string host = absl::StrCat("e2e-host", i);
      const std::string token = MintToken(dir.path(), "agent:report,agent:exec", host, "agent");
      hosts.push_back(std::make_unique<AgentHost>(dir, host, token, kAllowWeb));
    }
  }
  ServerOptions Options(const std::string& listen = "127.0.0.1:0") const {
    ServerOptions options{{"--fleet", fleet, "--patrol-interval", "0"}};
    options.listen = listen;
    return options;
  }
};

// Plans, approves and executes `capability` on `resource`; returns the action's detail.
rapidjson::Document RunAction(const Lab& lab, int port, const std::string& resource,
                              const std::string& capability, const std::string& request_id) {
  const Reply planned =
      Send(port, "POST", "/api/actions/plan", lab.alice,
           absl::StrCat(R"({"requestId":")", request_id, R"(","resourceId":")", resource,
                        R"(","capabilityName":")", capability,
                        R"(","params":{},"reason":"e2e agent","requestedBy":"e2e"})"));
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  const std::string id = Str(Json(planned.body), "actionId");
  const Reply approved = Send(port, "POST", "/api/actions/" + id + "/decision", lab.bob,
                              R"({"outcome":"approved","reason":"e2e agent"})");
  INFO(approved.body);
  REQUIRE(approved.status == 200);
  const Reply executed = Send(port, "POST", "/api/actions/" + id + "/execute", lab.bob, "{}");
  INFO(executed.body);
  const Reply detail = Send(port, "GET", "/api/actions/" + id, lab.bob);
  INFO(detail.body);
  REQUIRE(detail.status == 200);
  return Json(detail.body);
}

TEST_CASE("three agents join the fleet and an operator restarts a service through one of them",
          "[e2e][agent]") {
  Lab lab(3);
  ServerProcess server(lab.dir.path(), lab.Options());
  const int port = server.port();
  for (auto& h : lab.hosts) {
    h->Start(port);
  }
  for (auto& h : lab.hosts) {
    INFO(h->Log());
    REQUIRE(WaitUntil([&] { return StateOf(port, lab.reader, h->host()) == "connected"; }));
  }
  // The fleet shows three more nodes, each with its filesystems and its units.
  const Reply context = Send(port, "GET", "/api/agent/fleet-context", lab.reader);
  REQUIRE(context.status == 200);
  for (auto& h : lab.hosts) {
    CHECK(context.body.find("node:" + h->host()) != std::string::npos);
    const Reply storage =
        Send(port, "GET", "/api/agent/resource-context/storage:" + h->host() + "%2Frootfs",
             lab.reader);
    INFO(storage.body);
    CHECK(storage.status == 200);
    const Reply unit = Send(
        port, "GET", "/api/agent/resource-context/service:" + h->host() + "%2Fpulse-demo-web",
        lab.reader);
    CHECK(unit.status == 200);
  }

  // What Patrol reads of an agent host: the filesystems' usage, the units' states. A unit that
  // failed on the second host is a finding after a run over the whole fleet.
  const Reply rootfs =
      Send(port, "GET", "/api/agent/resource-context/storage:" + lab.hosts[0]->host() + "%2Frootfs",
           lab.reader);
  CHECK(rootfs.body.find("usage_pct") != std::string::npos);
  lab.hosts[1]->SetUnitState("pulse-demo-db", "failed");
  const std::string failed_unit = "service:" + lab.hosts[1]->host() + "/pulse-demo-db";
  REQUIRE(WaitUntil([&] {
    const Reply unit = Send(port, "GET", "/api/agent/resource-context/service:" +
                                             lab.hosts[1]->host() + "%2Fpulse-demo-db",
                            lab.reader);
    return unit.body.find(R"("status":"failed")") != std::string::npos;
  }));
  const Reply run = Send(port, "POST", "/api/ai/patrol/run", lab.bob);
  INFO(run.body);
  REQUIRE(run.status == 200);
  const std::string run_id = Str(Json(run.body), "run_id");
  REQUIRE(WaitUntil([&] {
    return Str(Json(Send(port, "GET", "/api/ai/patrol/runs/" + run_id, lab.bob).body), "status") !=
           "running";
  }));
  const std::string finding =
      core::FindingIdFor(failed_unit, core::Category::kReliability, "service-failed");
  const Reply findings = Send(port, "GET", "/api/ai/patrol/findings", lab.bob);
  INFO(findings.body);
  CHECK(findings.body.find(finding) != std::string::npos);

  // The restart: planned, approved, executed once by the agent, confirmed from a fresh report.
  AgentHost& web = *lab.hosts[0];
  const rapidjson::Document done =
      RunAction(lab, port, "service:" + web.host() + "/pulse-demo-web", "restart", "e2e-agent-1");
  CHECK(Str(done["audit"], "state") == "completed");
  CHECK(Str(done["audit"]["result"]["verification"], "status") == "confirmed");
  CHECK(Str(done["audit"]["result"]["verification"], "evidenceClass") == "agent_attested");
  CHECK(Lines(web.Restarts("pulse-demo-web")) == 1);
  CHECK(Lines(lab.hosts[1]->Restarts("pulse-demo-web")) == 0);

  // A unit the server allows but the agent's allowlist does not: refused by the agent, and the
  // action records the agent's reason; the unit is untouched.
  const rapidjson::Document refused =
      RunAction(lab, port, "service:" + web.host() + "/pulse-demo-db", "restart", "e2e-agent-2");
  CHECK(Str(refused["audit"]["result"]["execution"], "status") == "not_run");
  CHECK(refused["audit"]["result"]["execution"].HasMember("reasonCode"));
  CHECK(Str(refused["audit"]["result"]["execution"], "reasonCode") == "agent_allowlist");
  CHECK(Lines(web.Restarts("pulse-demo-db")) == 0);

  // An agent that stops reporting turns stale; its resources stay, status unknown.
  lab.hosts[2]->Stop();
  REQUIRE(WaitUntil([&] { return StateOf(port, lab.reader, lab.hosts[2]->host()) == "stale"; }));
  const Reply node =
      Send(port, "GET", "/api/agent/resource-context/node:" + lab.hosts[2]->host(), lab.reader);
  CHECK(node.status == 200);
  CHECK(node.body.find(R"("status":"unknown")") != std::string::npos);
  for (auto& h : lab.hosts) {
    h->Stop();
  }
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("an agent killed mid-command runs it once: the action ends inconclusive",
          "[e2e][agent]") {
  Lab lab(1);
  ServerProcess server(lab.dir.path(), lab.Options());
  const int port = server.port();
  AgentHost& web = *lab.hosts[0];
  web.SlowRestarts(3);
  web.Start(port);
  REQUIRE(WaitUntil([&] { return StateOf(port, lab.reader, web.host()) == "connected"; }));

  std::optional<rapidjson::Document> detail;
  std::thread operator_thread([&] {
    detail = RunAction(lab, port, "service:" + web.host() + "/pulse-demo-web", "restart", "e2e-k");
  });
  // The restart has begun on the host: kill the agent in the middle of it, start it again.
  REQUIRE(WaitUntil([&] { return Lines(web.Restarts("pulse-demo-web")) >= 1; }));
  web.Kill();
  web.Start(port);
  operator_thread.join();
  INFO(web.AllLogs());
  REQUIRE(detail.has_value());
  CHECK(Str((*detail)["audit"], "state") != "completed");
  CHECK(Str((*detail)["audit"]["result"]["execution"], "status") == "inconclusive");
  // Never twice, even after the slow restart had time to finish and the agent reconnected.
  std::this_thread::sleep_for(std::chrono::seconds(4));
  CHECK(Lines(web.Restarts("pulse-demo-web")) == 1);
  web.Stop();
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("agents reconnect to a restarted server without duplicating their hosts",
          "[e2e][agent]") {
  Lab lab(2);
  int port = 0;
  {
    ServerProcess server(lab.dir.path(), lab.Options());
    port = server.port();
    for (auto& h : lab.hosts) {
      h->Start(port);
    }
    for (auto& h : lab.hosts) {
      REQUIRE(WaitUntil([&] { return StateOf(port, lab.reader, h->host()) == "connected"; }));
    }
    CHECK(server.Stop() == "exited 0");
  }
  ServerProcess again(lab.dir.path(), lab.Options(absl::StrCat("127.0.0.1:", port)));
  // Known from the registry at once, before any agent is back.
  const Reply listed = Send(port, "GET", "/api/agents", lab.reader);
  REQUIRE(listed.status == 200);
  CHECK(Json(listed.body)["agents"].Size() == 2);
  for (auto& h : lab.hosts) {
    INFO(h->Log());
    REQUIRE(WaitUntil([&] { return StateOf(port, lab.reader, h->host()) == "connected"; },
                      absl::Seconds(40)));
  }
  const Reply after = Send(port, "GET", "/api/agents", lab.reader);
  CHECK(Json(after.body)["agents"].Size() == 2);
  const Reply nodes = Send(port, "GET", "/api/agent/fleet-context", lab.reader);
  for (auto& h : lab.hosts) {
    const std::string id = "\"node:" + h->host() + "\"";
    const std::size_t first = nodes.body.find(id);
    CHECK(first != std::string::npos);
  }
  for (auto& h : lab.hosts) {
    h->Stop();
  }
  CHECK(again.Stop() == "exited 0");
}

TEST_CASE("a stolen agent token cannot act as a second host", "[e2e][agent]") {
  Lab lab(1);
  ServerProcess server(lab.dir.path(), lab.Options());
  const int port = server.port();
  AgentHost& web = *lab.hosts[0];
  web.Start(port);
  REQUIRE(WaitUntil([&] { return StateOf(port, lab.reader, web.host()) == "connected"; }));
  // The same token file, another host name: the agent is refused and exits 1, naming the code.
  const Captured thief = RunCommand([&] {
    std::vector<std::string> argv = web.Argv(port, "e2e-intruder");
    argv[6] = lab.dir.File("intruder-state");  // --state-dir: the thief's own machine
    argv.emplace_back("--once");
    return argv;
  }());
  INFO(thief.err);
  CHECK(thief.exit_code == 1);
  CHECK((thief.err + thief.out).find("agent_host_mismatch") != std::string::npos);
  CHECK(StateOf(port, lab.reader, "e2e-intruder").empty());
  // And straight over HTTP, a report for another host with that token changes nothing.
  const std::string token = [&] {
    std::string t = ReadFile(web.TokenFile());
    t.pop_back();
    return t;
  }();
  const Reply forged = Send(
      port, "POST", "/api/agents/report", "",
      R"({"protocol":1,"host":"e2e-intruder","agent_version":"x","sent_at":"2026-12-03T00:00:00Z",)"
      R"("interval_seconds":30,"resources":[]})",
      {{"Authorization", "Bearer " + token}});
  CHECK(forged.status == 403);
  CHECK(ErrorCode(forged.body) == "agent_host_mismatch");
  // A human token may not use the agents' routes at all, whatever its scopes.
  const std::string human = MintToken(lab.dir.path(), "agent:report,agent:exec", "human-agent");
  const Reply refused = Send(port, "GET", "/api/agents/commands?host=" + web.host(), human);
  CHECK(refused.status == 403);
  CHECK(ErrorCode(refused.body) == "agent_token_required");
  web.Stop();
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("the walkthrough of docs/agent.md attaches a second machine", "[e2e][agent]") {
  // Steps 1 to 5 of "Attach a second machine", with a temporary directory for /etc/pulse-agent.
  TempDir dir;
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  ServerProcess server(dir.path(), ServerOptions{{"--patrol-interval", "0"}});
  const int port = server.port();
  const std::string url = absl::StrCat("http://127.0.0.1:", port);

  // 1. The token, bound to web2 at creation: the host is listed, pending, before any agent ran.
  const Captured minted =
      RunCommand({ServerBinary(), "token", "create", "--data-dir", dir.path(), "--name",
                  "web2-agent", "--kind", "agent", "--scopes", "agent:report,agent:exec",
                  "--host", "web2"});
  INFO(minted.err);
  REQUIRE(minted.exit_code == 0);
  CHECK(WaitUntil([&] { return StateOf(port, reader, "web2") == "pending"; }));

  // 2. Installed with mode 0600 (a token others can read is refused: exit 2, naming chmod 600).
  const std::string etc = dir.File("etc-pulse-agent");
  std::filesystem::create_directories(etc);
  const std::string token_file = etc + "/token";
  std::ofstream(token_file) << minted.out;
  ::chmod(token_file.c_str(), 0644);
  const std::string state = dir.File("state");
  const std::vector<std::string> once = {AgentBinary(), "--server",    url,     "--token-file",
                                         token_file,    "--state-dir", state,   "--hostname",
                                         "web2",        "--allowlist", etc + "/allow.json",
                                         "--once"};
  const Captured open_file = RunCommand(once);
  CHECK(open_file.exit_code == 2);
  CHECK(open_file.err.find("chmod 600") != std::string::npos);
  ::chmod(token_file.c_str(), 0600);

  // 3. One report, then exit 0.
  const Captured checked = RunCommand(once);
  INFO(checked.err);
  CHECK(checked.exit_code == 0);
  CHECK(StateOf(port, reader, "web2") == "disconnected");

  // 4. Running as it would as a service: connected.
  ChildProcessOptions options;
  options.argv = std::vector<std::string>(once.begin(), once.end() - 1);
  options.log_path = dir.File("agent.log");
  absl::StatusOr<std::unique_ptr<ChildProcess>> agent = ChildProcess::Start(options);
  REQUIRE(agent.ok());
  REQUIRE(WaitUntil([&] { return StateOf(port, reader, "web2") == "connected"; }));

  // 5. Seen from anywhere: pulse-cli agents and the fleet's nodes.
  ::setenv("PULSE_API_TOKEN", reader.c_str(), 1);
  const Captured agents = RunCommand({CliBinary(), "--server", url, "agents"});
  INFO(agents.err);
  CHECK(agents.exit_code == 0);
  CHECK(agents.out.find("web2") != std::string::npos);
  CHECK(agents.out.find("connected") != std::string::npos);
  const Captured nodes = RunCommand({CliBinary(), "--server", url, "fleet", "--type", "node"});
  CHECK(nodes.exit_code == 0);
  CHECK(nodes.out.find("node:web2") != std::string::npos);
  ::unsetenv("PULSE_API_TOKEN");
  CHECK((*agent)->Stop(absl::Seconds(10)) == "exited 0");
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
