// The parts of pulse-server that the binary-driven tests cannot reach in isolation: the
// configuration rules, the agent event bus, the store observers that feed it (including
// finding.created, which no HTTP route can cause in this build: only Patrol creates
// findings), the run metrics and the run registry.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "pulse/adapters/http/metrics_registry.h"
#include "pulse/adapters/server/agent_event_bus.h"
#include "pulse/adapters/server/chat_runs.h"
#include "pulse/adapters/server/event_publisher.h"
#include "pulse/adapters/server/observed_stores.h"
#include "pulse/adapters/server/server_config.h"
#include "pulse/adapters/server/server_metrics.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/fake_fleet.h"
#include "pulse/testing/in_memory_action_store.h"
#include "pulse/testing/in_memory_audit_log.h"
#include "pulse/testing/in_memory_finding_store.h"
#include "pulse/testing/in_memory_metrics_history.h"
#include "pulse/testing/in_memory_operator_state_store.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;

// Everything queued on `stream` so far (one Next; the heartbeat must be longer than the test).
std::string Drain(http::SseStream& stream) {
  std::string out;
  CHECK(stream.Next(out) == http::SseStream::Pull::kWrite);
  return out;
}

std::size_t Count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

class TempDir : public pulse::testing::TempDir {
 public:
  TempDir() : pulse::testing::TempDir("pulse-parts") {}
};

TEST_CASE("listen addresses are host:port and nothing else", "[server][config]") {
  absl::StatusOr<ListenAddress> v4 = ParseListenAddress("127.0.0.1:7655");
  REQUIRE(v4.ok());
  CHECK(v4->host == "127.0.0.1");
  CHECK(v4->port == 7655);
  absl::StatusOr<ListenAddress> v6 = ParseListenAddress("[::1]:0");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK(v6->ToString() == "[::1]:0");
  CHECK(ParseListenAddress("localhost:80").ok());
  for (const char* bad : {"127.0.0.1", ":80", "host:", "host:65536", "host:-1", "host:80x",
                          "ho st:80", "[::1]80", "[]:80", "a;b:80", "[::1:80"}) {
    INFO(bad);
    CHECK(ParseListenAddress(bad).status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("pulse.json takes the flag settings as strings and refuses anything else",
          "[server][config]") {
  absl::StatusOr<ServerSettings> ok = ParseConfigFile(
      R"({"listen":"0.0.0.0:8080","fleet":"local","provider":"ollama","provider_base_url":)"
      R"("http://gpu:11434","model":"qwen3:8b","control_level":"controlled"})");
  REQUIRE(ok.ok());
  CHECK(ok->listen == "0.0.0.0:8080");
  CHECK(ok->provider_base_url == "http://gpu:11434");
  CHECK_FALSE(ok->data_dir.has_value());
  const auto refused = [](const char* json) {
    absl::StatusOr<ServerSettings> out = ParseConfigFile(json);
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(out.status().message());
  };
  CHECK(refused(R"({"lisen":"x"})").find("unknown key \"lisen\"") != std::string::npos);
  CHECK(refused(R"({"data_dir":"/tmp"})").find("--data-dir") != std::string::npos);
  const std::string key = refused(R"({"api_key":"sk-123"})");
  CHECK(key.find("PULSE_PROVIDER_API_KEY") != std::string::npos);
  CHECK(key.find("sk-123") == std::string::npos);
  CHECK(refused(R"({"fleet":1})").find("must be a string") != std::string::npos);
  CHECK(refused(R"({"fleet":"a","fleet":"b"})").find("more than once") != std::string::npos);
  CHECK(refused(R"(["listen"])").find("one JSON object") != std::string::npos);
  CHECK(refused("{").find("not valid JSON") != std::string::npos);
}

TEST_CASE("flags override pulse.json, which overrides the defaults", "[server][config]") {
  TempDir dir;
  {
    std::ofstream(dir.path() + "/pulse.json")
        << R"({"fleet":"local","control_level":"autonomous","listen":"127.0.0.1:9000"})";
  }
  ServerSettings flags;
  flags.data_dir = dir.path();
  flags.control_level = "controlled";
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(flags, std::string("key"));
  REQUIRE(config.ok());
  CHECK(config->fleet == "local");
  CHECK(config->listen.port == 9000);
  CHECK(config->control_level == core::ControlLevel::kControlled);
  CHECK(config->api_key == "key");
  CHECK_FALSE(config->assistant_configured());

  ServerSettings defaults;
  defaults.data_dir = dir.path() + "/missing";
  absl::StatusOr<ServerConfig> plain = ResolveServerConfig(defaults, std::nullopt);
  REQUIRE(plain.ok());
  CHECK(plain->listen.ToString() == "127.0.0.1:7655");
  CHECK(plain->fleet == "demo");
  CHECK(plain->control_level == core::ControlLevel::kReadOnly);

  ServerSettings typo = defaults;
  typo.control_level = "AUTONOMOUS";
  CHECK_FALSE(ResolveServerConfig(typo, std::nullopt).ok());
  ServerSettings model_only = defaults;
  model_only.model = "gpt-4o";
  CHECK(std::string(ResolveServerConfig(model_only, std::nullopt).status().message())
            .find("needs a provider") != std::string::npos);
  { std::ofstream(dir.path() + "/pulse.json") << R"({"listen":"nowhere"})"; }
  absl::StatusOr<ServerConfig> bad_file = ResolveServerConfig(flags, std::nullopt);
  REQUIRE_FALSE(bad_file.ok());
  CHECK(std::string(bad_file.status().message()).find("pulse.json \"listen\"") !=
        std::string::npos);
}

TEST_CASE("the provider locality is auto by default and taken exactly from a flag or pulse.json",
          "[server][config]") {
  using adapters::providers::LocalitySetting;
  TempDir dir;
  ServerSettings flags;
  flags.data_dir = dir.path();
  flags.provider = "openai-compatible";
  CHECK(ResolveServerConfig(flags, std::nullopt)->provider_locality == LocalitySetting::kAuto);
  { std::ofstream(dir.path() + "/pulse.json") << R"({"provider_locality":"remote"})"; }
  CHECK(ResolveServerConfig(flags, std::nullopt)->provider_locality == LocalitySetting::kRemote);
  ServerSettings local = flags;
  local.provider_locality = "local";
  CHECK(ResolveServerConfig(local, std::nullopt)->provider_locality == LocalitySetting::kLocal);
  { std::ofstream(dir.path() + "/pulse.json") << R"({"provider_locality":"trusted"})"; }
  absl::StatusOr<ServerConfig> bad = ResolveServerConfig(flags, std::nullopt);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("pulse.json \"provider_locality\" must be") !=
        std::string::npos);
  std::remove((dir.path() + "/pulse.json").c_str());
  ServerSettings no_provider;
  no_provider.data_dir = dir.path();
  no_provider.provider_locality = "remote";
  CHECK(std::string(ResolveServerConfig(no_provider, std::nullopt).status().message())
            .find("--provider-locality needs a provider") != std::string::npos);
}

TEST_CASE("the Patrol interval is 15 minutes by default, 0 for manual, and needs units",
          "[server][config]") {
  CHECK(*ParsePatrolInterval("15m") == absl::Minutes(15));
  CHECK(*ParsePatrolInterval("1h30m") == absl::Minutes(90));
  CHECK(*ParsePatrolInterval("0") == absl::ZeroDuration());
  for (const char* bad : {"", "15", "-5m", "0s", "200h", "soon", "1.5", "15m "}) {
    INFO(bad);
    CHECK_FALSE(ParsePatrolInterval(bad).ok());
  }
  TempDir dir;
  ServerSettings defaults;
  defaults.data_dir = dir.path();
  CHECK(ResolveServerConfig(defaults, std::nullopt)->patrol_interval == absl::Minutes(15));
  { std::ofstream(dir.path() + "/pulse.json") << R"({"patrol_interval":"0"})"; }
  CHECK(ResolveServerConfig(defaults, std::nullopt)->patrol_interval == absl::ZeroDuration());
  ServerSettings flag = defaults;
  flag.patrol_interval = "5m";
  CHECK(ResolveServerConfig(flag, std::nullopt)->patrol_interval == absl::Minutes(5));
  { std::ofstream(dir.path() + "/pulse.json") << R"({"patrol_interval":"often"})"; }
  absl::StatusOr<ServerConfig> bad = ResolveServerConfig(defaults, std::nullopt);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("pulse.json \"patrol_interval\"") !=
        std::string::npos);
}

TEST_CASE("stream budgets and the per-token cap come from flags or pulse.json, bounded",
          "[server][config]") {
  TempDir dir;
  ServerSettings defaults;
  defaults.data_dir = dir.path();
  absl::StatusOr<ServerConfig> plain = ResolveServerConfig(defaults, std::nullopt);
  REQUIRE(plain.ok());
  CHECK(plain->max_event_streams == kDefaultMaxEventStreams);
  CHECK(plain->max_run_streams == kDefaultMaxRunStreams);
  CHECK(plain->max_streams_per_token == kDefaultMaxStreamsPerToken);
  {
    std::ofstream(dir.path() + "/pulse.json")
        << R"({"max_streams_per_token":8,"max_run_streams":"16"})";
  }
  absl::StatusOr<ServerConfig> file = ResolveServerConfig(defaults, std::nullopt);
  REQUIRE(file.ok());
  CHECK(file->max_streams_per_token == 8);
  CHECK(file->max_run_streams == 16);
  ServerSettings flag = defaults;
  flag.max_streams_per_token = "3";
  CHECK(ResolveServerConfig(flag, std::nullopt)->max_streams_per_token == 3);
  for (const char* bad : {"0", "-1", "1e3", "", " 4", "20001", "4.0", "99999999"}) {
    INFO(bad);
    ServerSettings wrong = defaults;
    wrong.max_event_streams = bad;
    absl::StatusOr<ServerConfig> refused = ResolveServerConfig(wrong, std::nullopt);
    REQUIRE_FALSE(refused.ok());
    CHECK(std::string(refused.status().message()).find("--max-event-streams") != std::string::npos);
  }
  ServerSettings too_many = defaults;
  too_many.max_event_streams = "15000";
  too_many.max_run_streams = "6000";
  CHECK_FALSE(ResolveServerConfig(too_many, std::nullopt).ok());
  { std::ofstream(dir.path() + "/pulse.json") << R"({"max_streams_per_token":-2})"; }
  absl::StatusOr<ServerConfig> negative = ResolveServerConfig(defaults, std::nullopt);
  REQUIRE_FALSE(negative.ok());
  CHECK(std::string(negative.status().message()).find("pulse.json") != std::string::npos);
}

TEST_CASE("the stream budgets may reach 20000 together and no more", "[server][config]") {
  TempDir dir;
  ServerSettings wide;
  wide.data_dir = dir.path();
  wide.max_event_streams = "15000";
  wide.max_run_streams = "5000";
  absl::StatusOr<ServerConfig> lifted = ResolveServerConfig(wide, std::nullopt);
  REQUIRE(lifted.ok());
  CHECK(lifted->max_event_streams == 15000);
  CHECK(lifted->max_run_streams == 5000);
  ServerSettings over = wide;
  over.max_run_streams = "5001";
  absl::StatusOr<ServerConfig> refused = ResolveServerConfig(over, std::nullopt);
  REQUIRE_FALSE(refused.ok());
  CHECK(std::string(refused.status().message()).find("must not exceed 20000") != std::string::npos);
}

TEST_CASE("the event bus sends stream.connected first and events with increasing ids",
          "[server][events]") {
  testing::FakeClock clock;
  AgentEventBus bus(clock, {absl::Hours(1), 64, nullptr});
  std::shared_ptr<http::SseStream> full = bus.Subscribe(false);
  std::shared_ptr<http::SseStream> redacted = bus.Subscribe(true);
  CHECK(bus.Publish(kEventApprovalPending, R"({"command":"restart"})",
                    R"({"commandRedacted":true})") == 1);
  CHECK(bus.Publish(kEventActionCompleted, R"({"state":"completed"})",
                    R"({"state":"completed"})") == 2);
  const std::string a = Drain(*full);
  CHECK(a.rfind("event: stream.connected\ndata: {\"kind\":\"stream.connected\",\"id\":0,", 0) == 0);
  CHECK(a.find("event: approval.pending\nid: 1\ndata: ") != std::string::npos);
  CHECK(a.find("\"payload\":{\"command\":\"restart\"}") != std::string::npos);
  CHECK(a.find("event: action.completed\nid: 2\n") != std::string::npos);
  CHECK(a.find("event: action.completed") > a.find("event: approval.pending"));
  const std::string b = Drain(*redacted);
  CHECK(b.find("restart") == std::string::npos);
  CHECK(b.find("\"commandRedacted\":true") != std::string::npos);
  CHECK(bus.subscribers() == 2);

  bus.Close();
  std::string rest;
  CHECK(full->Next(rest) == http::SseStream::Pull::kEnd);
  CHECK(bus.Subscribe(false) == nullptr);
}

TEST_CASE("a slow subscriber loses events beyond its buffer and the publisher never waits",
          "[server][events]") {
  testing::FakeClock clock;
  AgentEventBus bus(clock, {absl::Hours(1), 64, nullptr});
  std::shared_ptr<http::SseStream> slow = bus.Subscribe(false);
  for (int i = 0; i < 200; ++i) {
    bus.Publish(kEventActionCompleted, "{}", "{}");
  }
  CHECK(slow->dropped() == 200 - 63);  // stream.connected took one of the 64 places
  const std::string frames = Drain(*slow);
  CHECK(Count(frames, "event: action.completed") == 63);
  CHECK(frames.find("id: 63\n") != std::string::npos);
  CHECK_FALSE(slow->cancelled());
  CHECK(bus.published() == 200);
}

struct ObservedWorld {
  testing::FakeClock clock;
  testing::FakeFleet fleet;
  testing::InMemoryActionStore action_store;
  testing::InMemoryFindingStore finding_store;
  testing::InMemoryOperatorStateStore operator_state;
  testing::InMemoryAuditLog audit;
  testing::FakeFindingVerifier verifier;
  testing::InMemoryMetricsHistory history;
  AgentEventBus bus{clock, {absl::Hours(1), 64, nullptr}};
  AgentEventPublisher publisher{bus, fleet, clock};
  ObservedActionStore actions{
      action_store, [this](const ActionChange& change) { publisher.OnActionChange(change); }};
  ObservedFindingStore findings_store{
      finding_store, [this](const core::Finding& f) { publisher.OnFindingCreated(f); }};
  core::ActionService service{actions, fleet, operator_state, audit, clock};
  core::FindingsService findings{findings_store, clock, verifier, history};

  ObservedWorld() {
    core::FleetResource vm;
    vm.id = "vm:101";
    vm.type = "vm";
    vm.name = "web-01";
    vm.status = "running";
    core::Capability restart;
    restart.name = "restart";
    restart.description = "Restart the guest";
    restart.minimum_approval = core::ApprovalLevel::kAdmin;
    core::CapabilityParam token;
    token.name = "token";
    token.type = core::ParamType::kString;
    token.sensitive = true;
    core::CapabilityParam mode;
    mode.name = "mode";
    mode.type = core::ParamType::kString;
    restart.params = {mode, token};
    fleet.PutResource(vm, {restart});
  }
};

TEST_CASE("store observers publish approval.pending, action.completed and finding.created",
          "[server][events]") {
  ObservedWorld w;
  std::shared_ptr<http::SseStream> stream = w.bus.Subscribe(false);
  const core::ActionActor bob{core::ActorKind::kHuman, "bob"};
  core::ActionRequest request;
  request.request_id = "r-1";
  request.resource_id = "vm:101";
  request.capability_name = "restart";
  request.params_json = R"({"mode":"soft","token":"s3cr3t"})";
  request.reason = "hung";
  request.actor = bob;
  absl::StatusOr<core::Refusable<core::PlanOutcome>> planned = w.service.Plan(request);
  REQUIRE(planned.ok());
  REQUIRE_FALSE(planned->refused());
  const std::string id = planned->value().record.id();
  // The same plan again is idempotent: no second event.
  REQUIRE(w.service.Plan(request).ok());
  std::string frames = Drain(*stream);
  CHECK(Count(frames, "event: approval.pending") == 1);
  CHECK(frames.find(R"("command":"restart {\"mode\":\"soft\",\"token\":\"[redacted]\"}")") !=
        std::string::npos);
  CHECK(frames.find("s3cr3t") == std::string::npos);
  CHECK(frames.find("\"targetName\":\"web-01\"") != std::string::npos);

  core::DecideRequest decide{id, core::DecisionOutcome::kApproved, "ok", std::nullopt,
                             core::ActionActor{core::ActorKind::kHuman, "alice"}};
  REQUIRE(w.service.Decide(decide).ok());
  core::ExecuteRequest execute{
      id, "go", std::nullopt, core::ActionActor{core::ActorKind::kHuman, "alice"}, {}};
  absl::StatusOr<core::Refusable<core::ExecuteOutcome>> executed = w.service.Execute(execute);
  REQUIRE(executed.ok());
  REQUIRE_FALSE(executed->refused());
  frames = Drain(*stream);
  CHECK(Count(frames, "event: approval.pending") == 0);
  CHECK(Count(frames, "event: action.completed") == 1);
  CHECK(frames.find("\"state\":\"completed\",\"success\":true") != std::string::npos);
  CHECK(frames.find("\"verification\":{\"ran\":true,\"success\":true") != std::string::npos);

  core::FindingReport report;
  report.resource_id = "vm:101";
  report.resource_name = "web-01";
  report.category = core::Category::kReliability;
  report.severity = core::Severity::kCritical;
  report.title = "web-01 keeps crashing";
  report.description = "The guest rebooted 5 times in an hour.";
  report.recommendation = "Check the kernel log.";
  report.evidence = "uptime resets";
  REQUIRE(w.findings.Report(report).ok());
  REQUIRE(w.findings.Report(report).ok());  // a heartbeat: not new
  frames = Drain(*stream);
  CHECK(Count(frames, "event: finding.created") == 1);
  CHECK(frames.find(R"("severity":"critical","title":"web-01 keeps crashing")") !=
        std::string::npos);
}

TEST_CASE("run metrics label calls by kind and outcome from closed sets only",
          "[server][metrics]") {
  http::MetricsRegistry registry;
  absl::StatusOr<std::unique_ptr<ServerMetrics>> metrics = ServerMetrics::Register(registry);
  REQUIRE(metrics.ok());
  RunMetrics run(**metrics, TokenBaseline{100, 10});
  using core::LoopEventType;
  run.Observe(
      {LoopEventType::kToolStart,
       R"({"id":"1","name":"pulse_read","input":"{\"action\":\"status\",\"resource_id\":\"vm:1\"}"})"});
  run.Observe(
      {LoopEventType::kToolEnd, R"({"id":"1","name":"pulse_read","output":"{}","success":true})"});
  run.Observe({LoopEventType::kToolStart, R"({"id":"2","name":"pulse_control","input":"{}"})"});
  run.Observe(
      {LoopEventType::kToolEnd,
       R"({"id":"2","name":"pulse_control","output":"{\"error\":{\"code\":\"FSM_BLOCKED\",\"message\":\"no\"}}","success":false})"});
  run.Observe({LoopEventType::kToolStart, R"({"id":"3","name":"rm -rf","input":"{}"})"});
  run.Observe(
      {LoopEventType::kToolEnd,
       R"({"id":"3","name":"rm -rf","output":"{\"error\":{\"code\":\"WHATEVER\"}}","success":false})"});
  run.Observe(
      {LoopEventType::kDone,
       R"({"outcome":"answered","route":"openai:gpt-4o","input_tokens":150,"output_tokens":30})"});
  const std::string text = registry.Render();
  CHECK(text.find(R"(pulse_tool_calls_total{tool="pulse_read",kind="read",outcome="ok"} 1)") !=
        std::string::npos);
  CHECK(
      text.find(
          R"(pulse_tool_calls_total{tool="pulse_control",kind="write",outcome="fsm_blocked"} 1)") !=
      std::string::npos);
  CHECK(text.find(R"(pulse_fsm_blocks_total{tool="pulse_control"} 1)") != std::string::npos);
  CHECK(text.find(R"(pulse_tool_calls_total{tool="unknown",kind="write",outcome="error"} 1)") !=
        std::string::npos);
  CHECK(text.find("rm -rf") == std::string::npos);
  CHECK(text.find(R"(pulse_provider_tokens_total{route="openai:gpt-4o",direction="input"} 50)") !=
        std::string::npos);
  CHECK(text.find(R"(pulse_assistant_runs_total{outcome="answered"} 1)") != std::string::npos);
}

TEST_CASE("a run is cancelled by abort, by its client going away, and by shutdown",
          "[server][runs]") {
  ChatRuns runs;
  const auto waiting_body = [](ChatRun& run) {
    while (!run.cancelled()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  auto aborted = http::SseStream::Create();
  REQUIRE(runs.Start(aborted, "ses_a", waiting_body).ok());
  CHECK(runs.IsRunning("ses_a"));
  CHECK_FALSE(runs.Abort("ses_other"));
  CHECK(runs.Abort("ses_a"));
  for (int i = 0; i < 200 && runs.IsRunning("ses_a"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK_FALSE(runs.IsRunning("ses_a"));

  auto gone = http::SseStream::Create();
  REQUIRE(runs.Start(gone, "",
                     [](ChatRun& run) {
                       run.set_session_id("ses_b");
                       while (!run.cancelled()) {
                         std::this_thread::sleep_for(std::chrono::milliseconds(5));
                       }
                     })
              .ok());
  gone->Abort();  // the connection noticed the client left
  for (int i = 0; i < 200 && runs.active() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(runs.active() == 0);

  auto last = http::SseStream::Create();
  REQUIRE(runs.Start(last, "ses_c", waiting_body).ok());
  CHECK(runs.Shutdown(absl::Seconds(5)));
  CHECK(runs.active() == 0);
  CHECK(runs.Start(http::SseStream::Create(), "ses_d", waiting_body).code() ==
        absl::StatusCode::kUnavailable);
  std::string frames;
  CHECK(last->Next(frames) == http::SseStream::Pull::kEnd);  // closed when its run ended
}

}  // namespace
}  // namespace pulse::server
