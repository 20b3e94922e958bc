// AgentHub (adapters/hostagent/agent_hub.h) over the real SQLite registry: the binding of agent
// tokens to hosts, reports and their survival across a restart, the command queue with its
// resend on reconnect, the attempt idempotency and the deadlines. The sink stands in for the
// server's event stream (the end-to-end tests drive the real one through pulse-agent).
#include "pulse/adapters/hostagent/agent_hub.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "catch2/catch.hpp"
#include "pulse/adapters/hostagent/agents_fleet.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::adapters::hostagent {
namespace {

// Records every frame; `open` can be turned off to play a vanished agent.
class RecordingSink final : public CommandSink {
 public:
  bool Send(std::string_view event, std::string_view data) override {
    absl::MutexLock lock(&mu_);
    if (!open_) {
      return false;
    }
    frames_.emplace_back(std::string(event), std::string(data));
    return true;
  }
  bool open() const override {
    absl::MutexLock lock(&mu_);
    return open_;
  }
  void End() override {
    absl::MutexLock lock(&mu_);
    open_ = false;
    ended_ = true;
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    open_ = false;
  }
  bool ended() const {
    absl::MutexLock lock(&mu_);
    return ended_;
  }
  std::vector<Command> Commands() const {
    absl::MutexLock lock(&mu_);
    std::vector<Command> out;
    for (const auto& [event, data] : frames_) {
      if (event == "command") {
        absl::StatusOr<Command> c = DecodeCommand(data);
        REQUIRE(c.ok());
        out.push_back(*c);
      }
    }
    return out;
  }
  std::vector<std::string> Events() const {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& frame : frames_) {
      out.push_back(frame.first);
    }
    return out;
  }
  // Waits (briefly) until `n` commands arrived.
  std::vector<Command> AwaitCommands(std::size_t n) const {
    for (int i = 0; i < 500; ++i) {
      std::vector<Command> c = Commands();
      if (c.size() >= n) {
        return c;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL("the command did not arrive");
    return {};
  }

 private:
  mutable absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::pair<std::string, std::string>> frames_ ABSL_GUARDED_BY(mu_);
};

Report ReportOf(std::string host, std::string service_status = "active") {
  Report r;
  r.host = host;
  r.agent_version = "0.1.0";
  r.sent_at = absl::Now();
  r.interval_seconds = 5;
  core::FleetResource node;
  node.id = "node:" + host;
  node.type = "node";
  node.name = host;
  node.status = "online";
  core::FleetResource svc;
  svc.id = "service:" + host + "/web";
  svc.type = "service";
  svc.name = "web";
  svc.status = std::move(service_status);
  svc.parent_id = node.id;
  r.resources = {node, svc};
  r.metrics = {{node.id, "cpu", "percent", 12.5}};
  return r;
}

struct Fixture {
  testing::TempDir dir{"pulse-hub"};
  testing::FakeClock clock{absl::FromUnixSeconds(1'790'000'000)};
  std::unique_ptr<storage::SqliteStorage> storage = OpenStorage();
  std::unique_ptr<AgentHub> hub = OpenHub();
  // Tokens "revoked" in this test.
  std::vector<std::string> dead;

  std::unique_ptr<storage::SqliteStorage> OpenStorage() {
    absl::StatusOr<std::unique_ptr<storage::SqliteStorage>> s =
        storage::OpenSqliteStorage(dir.path());
    REQUIRE(s.ok());
    return *std::move(s);
  }
  std::unique_ptr<AgentHub> OpenHub(absl::Duration dispatch_timeout = absl::Seconds(5)) {
    AgentHubOptions options;
    options.clock = &clock;
    options.dispatch_timeout = dispatch_timeout;
    options.exec_timeout = absl::Seconds(5);
    options.report_timeout = absl::Seconds(5);
    absl::StatusOr<std::unique_ptr<AgentHub>> h = AgentHub::Open(*storage->host_agents, options);
    REQUIRE(h.ok());
    return *std::move(h);
  }
  TokenLiveness Live() {
    return [this](std::string_view id) {
      return std::find(dead.begin(), dead.end(), std::string(id)) == dead.end();
    };
  }
  void Report(std::string_view token, const hostagent::Report& r) {
    REQUIRE(hub->Authorize(token, r.host, Live()).ok());
    REQUIRE(hub->AcceptReport(token, r, EncodeReport(r)).ok());
  }
};

constexpr std::string_view kTokA = "tok_aaaaaaaaaaaaaaaa";
constexpr std::string_view kTokB = "tok_bbbbbbbbbbbbbbbb";

TEST_CASE("an agent token is bound to the first host it names and can never act as another") {
  Fixture f;
  REQUIRE(f.hub->Authorize(kTokA, "web1", f.Live()).ok());
  // Again for the same host: fine.
  REQUIRE(f.hub->Authorize(kTokA, "web1", f.Live()).ok());
  // The same token for a second host: refused, and the refusal names the code.
  const absl::Status stolen = f.hub->Authorize(kTokA, "db1", f.Live());
  CHECK(absl::IsPermissionDenied(stolen));
  CHECK_THAT(std::string(stolen.message()), Catch::StartsWith("agent_host_mismatch:"));
  // Another live token for the bound host: refused too.
  CHECK(absl::IsPermissionDenied(f.hub->Authorize(kTokB, "web1", f.Live())));
  // Once the first token is dead (revoked, expired), a new one may take the host over, and the
  // old one is refused even if it came back.
  f.dead.push_back(std::string(kTokA));
  REQUIRE(f.hub->Authorize(kTokB, "web1", f.Live()).ok());
  CHECK(absl::IsPermissionDenied(f.hub->Authorize(kTokA, "web1", f.Live())));
  // The binding is durable: a restarted hub refuses the stolen token the same way.
  f.hub = f.OpenHub();
  CHECK(absl::IsPermissionDenied(f.hub->Authorize(kTokB, "db1", f.Live())));
  CHECK(f.hub->Authorize(kTokB, "web1", f.Live()).ok());
  CHECK(absl::IsInvalidArgument(f.hub->Authorize("tok_cccccccccccccccc", "../x", f.Live())));
}

TEST_CASE("reports survive a restart as the host's last shape, stale until it reports again") {
  Fixture f;
  f.Report(kTokA, ReportOf("web1"));
  std::optional<HostView> v = f.hub->Host("web1");
  REQUIRE(v.has_value());
  CHECK(v->state == HostState::kDisconnected);
  CHECK(v->report_seq == 1);
  REQUIRE(v->report != nullptr);
  CHECK(v->report->resources.size() == 2);
  CHECK(f.hub->MetricPoints("node:web1", "cpu").size() == 1);

  // The window is 3 x the interval (5 s) + 10 s.
  f.clock.Advance(absl::Seconds(26));
  CHECK(f.hub->Host("web1")->state == HostState::kStale);

  f.hub = f.OpenHub();
  v = f.hub->Host("web1");
  REQUIRE(v.has_value());
  CHECK(v->state == HostState::kStale);  // known from before the restart: not fresh
  REQUIRE(v->report != nullptr);
  CHECK(v->report->resources.size() == 2);
  f.Report(kTokA, ReportOf("web1"));
  CHECK(f.hub->Hosts().size() == 1);
  CHECK(f.hub->Host("web1")->state == HostState::kDisconnected);
  CHECK(f.hub->Host("web1")->report_seq == 2);
}

TEST_CASE("the agents' fleet tells its listing generation only while no host is bound") {
  Fixture f;
  AgentsFleet fleet(*f.hub, AgentsFleetOptions{});
  // No host: the listing is empty and stays so until one binds (hosts are never deleted).
  CHECK_FALSE(f.hub->HasHosts());
  CHECK(fleet.ListingGeneration() == std::optional<std::uint64_t>(0));
  auto empty = fleet.ListResources(core::FleetResourceQuery{});
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  // A bound host that never reported is already a host: its listing changes with time alone.
  REQUIRE(f.hub->Authorize(kTokA, "web1", f.Live()).ok());
  CHECK(f.hub->HasHosts());
  CHECK_FALSE(fleet.ListingGeneration().has_value());
  f.Report(kTokA, ReportOf("web1"));
  CHECK_FALSE(fleet.ListingGeneration().has_value());
  // A hub opened over the same store sees the binding another process made.
  f.hub = f.OpenHub();
  CHECK(f.hub->HasHosts());
  CHECK(AgentsFleet(*f.hub, AgentsFleetOptions{}).ListingGeneration() == std::nullopt);
}

TEST_CASE("a dispatch goes to the connected host, waits for its result and never runs twice") {
  Fixture f;
  f.Report(kTokA, ReportOf("web1"));
  Command c;
  c.kind = CommandKind::kDispatch;
  c.action_id = "act_1";
  c.attempt_id = "act_1.dispatch.1";
  c.plan_hash = "h";
  c.resource_id = "service:web1/web";
  c.capability = "restart";
  // Nothing is sent to a host whose agent is not connected.
  CHECK(absl::IsFailedPrecondition(f.hub->RunCommand("web1", c).status()));

  auto sink = std::make_shared<RecordingSink>();
  f.hub->Attach("web1", sink);
  CHECK(f.hub->Host("web1")->state == HostState::kConnected);
  CHECK(sink->Events().front() == "hello");

  absl::StatusOr<Result> answer;
  std::thread dispatcher([&] { answer = f.hub->RunCommand("web1", c); });
  const Command sent = sink->AwaitCommands(1).front();
  CHECK(sent.kind == CommandKind::kDispatch);
  CHECK(sent.attempt_id == "act_1.dispatch.1");
  CHECK(IsCommandId(sent.command_id));
  CHECK(sent.deadline > sent.issued_at);

  Result r;
  r.host = "web1";
  r.command_id = sent.command_id;
  r.kind = CommandKind::kDispatch;
  r.action_id = "act_1";
  r.attempt_id = "act_1.dispatch.2";  // not this attempt: not believed
  r.status = core::ExecutionStatus::kSucceeded;
  CHECK_FALSE(f.hub->AcceptResult("web1", r));
  r.attempt_id = "act_1.dispatch.1";
  CHECK_FALSE(f.hub->AcceptResult("db1", r));  // another host's answer changes nothing
  CHECK(f.hub->AcceptResult("web1", r));
  dispatcher.join();
  REQUIRE(answer.ok());
  CHECK(answer->status == core::ExecutionStatus::kSucceeded);
  CHECK_FALSE(f.hub->AcceptResult("web1", r));  // finished: a late copy is not accepted

  // The same attempt again: the first answer, and nothing is sent.
  absl::StatusOr<Result> again = f.hub->RunCommand("web1", c);
  REQUIRE(again.ok());
  CHECK(again->status == core::ExecutionStatus::kSucceeded);
  CHECK(sink->Commands().size() == 1);
}

TEST_CASE(
    "an unanswered command is sent again when the agent reconnects, and the old stream ends") {
  Fixture f;
  f.Report(kTokA, ReportOf("web1"));
  auto first = std::make_shared<RecordingSink>();
  f.hub->Attach("web1", first);
  Command c;
  c.kind = CommandKind::kExec;
  c.resource_id = "node:web1";
  c.exec_command = "uptime";
  absl::StatusOr<Result> answer;
  std::thread runner([&] { answer = f.hub->RunCommand("web1", c); });
  const Command sent = first->AwaitCommands(1).front();
  // The agent dies; a new process connects.
  first->Close();
  auto second = std::make_shared<RecordingSink>();
  f.hub->Attach("web1", second);
  const std::vector<Command> resent = second->AwaitCommands(1);
  CHECK(resent.front().command_id == sent.command_id);
  auto third = std::make_shared<RecordingSink>();
  f.hub->Attach("web1", third);
  CHECK(second->ended());  // a newer stream replaces an older one
  Result r;
  r.host = "web1";
  r.command_id = sent.command_id;
  r.kind = CommandKind::kExec;
  r.status = core::ExecutionStatus::kSucceeded;
  r.exec = ExecResult{0, "up 3 days", false};
  CHECK(f.hub->AcceptResult("web1", r));
  runner.join();
  REQUIRE(answer.ok());
  CHECK(answer->exec->output == "up 3 days");
  CHECK(f.hub->waiting_count() == 0);
}

TEST_CASE("a command without an answer by its deadline ends with the outcome unknown") {
  Fixture f;
  f.hub = f.OpenHub(absl::Milliseconds(300));
  f.Report(kTokA, ReportOf("web1"));
  auto sink = std::make_shared<RecordingSink>();
  f.hub->Attach("web1", sink);
  Command c;
  c.kind = CommandKind::kDispatch;
  c.action_id = "act_2";
  c.attempt_id = "act_2.dispatch.1";
  c.plan_hash = "h";
  c.resource_id = "service:web1/web";
  c.capability = "stop";
  const absl::StatusOr<Result> answer = f.hub->RunCommand("web1", c);
  CHECK(absl::IsDeadlineExceeded(answer.status()));
  CHECK(f.hub->waiting_count() == 0);
}

TEST_CASE("a report command is answered by the report that names it") {
  Fixture f;
  f.Report(kTokA, ReportOf("web1", "active"));
  auto sink = std::make_shared<RecordingSink>();
  f.hub->Attach("web1", sink);
  absl::StatusOr<std::shared_ptr<const Report>> fresh;
  std::thread asker([&] { fresh = f.hub->RequestReport("web1"); });
  const Command sent = sink->AwaitCommands(1).front();
  CHECK(sent.kind == CommandKind::kReport);
  // A periodic report does not answer it; the reply does.
  f.Report(kTokA, ReportOf("web1", "active"));
  hostagent::Report reply = ReportOf("web1", "inactive");
  reply.in_reply_to = sent.command_id;
  f.Report(kTokA, reply);
  asker.join();
  REQUIRE(fresh.ok());
  CHECK((*fresh)->resources[1].status == "inactive");
}

}  // namespace
}  // namespace pulse::adapters::hostagent
