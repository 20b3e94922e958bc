// The acceptance suite of the HTTP transport (issue 22): each attack runs
// against the real pulse-server for PULSE_ATTACK_SECONDS (default 60) with a /healthz probe
// and a /proc sampler beside it, alternating with the same probe measuring the idle server
// in the same test, while a second probe measures a reference server, the same binary that
// nothing attacks, at the same moments: the latency bounds set the attacked server's p99
// against the reference's (the idle p99 at that moment). tests/fault/TRANSPORT.md lists the bounds,
// the commands and the figures, from the removed cpp-httplib transport (which fails them) to
// today's. Registered with ctest only when CMake's PULSE_TRANSPORT_ATTACK_TESTS is ON; label
// `transport`, run serially.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "http_attack/attack.h"
#include "http_attack/measure.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::fault {
namespace {

using attack::AttackKind;
using attack::AttackOptions;
using attack::Measured;
using attack::MeasureOptions;
using attack::Millis;

// The acceptance bounds (issue 22).
constexpr std::int64_t kMaxGrowthKb = 64 * 1024;       // RSS over idle under an attack
constexpr double kMaxP99Ratio = 2.0;                   // /healthz p99 under attack / idle
constexpr std::int64_t kMaxStreamsRssKb = 200 * 1024;  // RSS with every stream open
constexpr double kMaxStreamsP99Ratio = 1.5;            // /healthz p99 with streams / idle
// Under ASan+UBSan (the sanitizer leg of cmake/test.sh, at 15 s per attack) the suite checks
// memory safety and every other bound, but the latency ratios are printed, not asserted: an
// unoptimised instrumented server's timing is not the product's, and the acceptance run of
// those bounds is the plain build's at 60 s (tests/fault/TRANSPORT.md).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif
constexpr bool kAssertLatency = !kSanitized;
// Threads <= 2 x cores + this. Idle with a provider the server runs 13 threads today, 5 of
// them its HTTP transport's (a listener, 4 workers), and a chat run adds one: 12 leaves the
// transport 2 x cores + 3 (tests/fault/TRANSPORT.md).
constexpr int kThreadConstant = 12;
// A connection the server has not closed this long after it opened counts as not closed: the
// 10 s head deadline plus 5 s of slack.
constexpr Millis kCloseWithin{15'000};
// The agent event stream's heartbeat interval (docs/server.md) and the lateness allowed.
constexpr Millis kHeartbeat{15'000};
constexpr Millis kHeartbeatSlack{5'000};
// Log lines allowed during an attack: a rate-limited summary, at most one per 10 s, plus 2.
constexpr std::int64_t kLogLinesPer10s = 1;
// The attack stops once the server grew this much: the test has failed by then, and the
// machine is shared.
constexpr std::int64_t kGuardGrowthKb = 1024 * 1024;
// The probe's pause between two health checks: ~100 a second, so the idle windows (10 s) give
// ~800 samples and the p99s compared rest on several samples each, not on the one or two
// slowest of a small set (at 50 ms the idle p99 was the second-slowest of ~200).
constexpr Millis kProbeInterval{10};
// The attacking client's nice value: on this machine it shares the cores with the server and the
// probe, which a remote attacker does not (AttackOptions::nice). At the default priority, on
// CI's 2-core machine, /healthz p99 went 0.98 -> 3.14 ms under the header-value attack and 0.62
// -> 1.77 ms with 10,000 streams held, with no probe failing (tests/fault/TRANSPORT.md).
// PULSE_ATTACK_NICE (0-19, default 19) sets it for a comparison run.
int AttackerNice() {
  const char* text = std::getenv("PULSE_ATTACK_NICE");
  if (text == nullptr || *text == '\0') {
    return 19;
  }
  return std::clamp(std::atoi(text), 0, 19);
}

// Whether the attacking client also runs under SCHED_IDLE (AttackOptions::sched_idle): a thread
// woken behind a nice 19 one can still wait for the kernel's 4 ms tick, one under SCHED_IDLE is
// preempted at once (tests/fault/TRANSPORT.md, "One waiter on the listening socket").
// PULSE_ATTACK_SCHED_IDLE=0 turns it off for a comparison run.
bool AttackerSchedIdle() {
  const char* text = std::getenv("PULSE_ATTACK_SCHED_IDLE");
  return text == nullptr || std::string(text) != "0";
}

// The probe runs in a process of its own, like any outside client: it shares nothing with the
// attacking client in this process (probe.h, ProbeOptions::process).
attack::ProbeOptions Probe() {
  attack::ProbeOptions probe;
  probe.interval = kProbeInterval;
  probe.process = PULSE_HTTP_ATTACK_BINARY;
  return probe;
}

std::int64_t EnvInt(const char* name, std::int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  const std::int64_t value = std::atoll(text);
  return value > 0 ? value : fallback;
}

// PULSE_ATTACK_SECONDS: how long each attack (and the stream hold) lasts.
Millis AttackLength() { return Millis(EnvInt("PULSE_ATTACK_SECONDS", 60) * 1000); }
// The idle probe and an unauthenticated attack alternate, A B A B, in up to three pairs of
// equal windows of at least 20 s (slowloris's heads expire once in each): for a 60 s attack,
// idle 20 s, attack 20 s, three times; a shorter attack runs in one pair. The p99 bound holds
// for the pooled windows of each side (Measured::PooledP99Ratio): with equal exposure both
// sides meet the machine's own stalls alike. With a 5 s idle window against a 20 s attack
// window, a 4 ms stall of the VM landed in the longer window far more often, and the ratio
// went x5 or x0.2 by chance (tests/fault/TRANSPORT.md).
int AttackRounds() {
  return static_cast<int>(std::clamp<std::int64_t>(AttackLength().count() / 20'000, 1, 3));
}
Millis IdleLength() { return AttackLength(); }

// PULSE_ATTACK_STREAMS: how many streams the streams case holds (a development knob).
int StreamCount() { return static_cast<int>(EnvInt("PULSE_ATTACK_STREAMS", 10000)); }

std::int64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : 0;
}

// The lines the server logged after byte `from`.
std::vector<std::string> LogLinesSince(const std::string& path, std::int64_t from) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(from);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
  }
  return lines;
}

int ThreadBudget() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return 2 * static_cast<int>(cores) + kThreadConstant;
}

// Runs `options` against a fresh server and checks every bound of an unauthenticated attack.
void RunUnauthenticatedAttack(AttackOptions options) {
  e2e::TempDir dir;
  attack::RaiseFileLimit(4096);
  e2e::ServerProcess server(dir.path());
  // The reference: the same server, which nothing attacks (MeasureOptions::reference_port).
  e2e::TempDir twin_dir;
  e2e::ServerProcess twin(twin_dir.path());
  const std::string log_path = dir.File("server.log");
  options.target.port = server.port();
  options.duration = AttackLength();
  options.close_within = kCloseWithin;
  // One hostile client, not on the probe's address (a per-peer cap must not refuse the probe).
  options.sources = {"127.0.1.1"};
  // A remote attacker's CPU is not the server's (AttackOptions::nice).
  options.nice = AttackerNice();
  options.sched_idle = AttackerSchedIdle();
  MeasureOptions measure;
  measure.pid = server.pid();
  measure.guard_growth_kb = kGuardGrowthKb;
  measure.rounds = AttackRounds();
  measure.idle = IdleLength();
  measure.probe_options = Probe();
  measure.reference_port = twin.port();
  // What the server logs from the attack's start on (start-up lines are not the attack's).
  std::int64_t log_from = 0;
  std::chrono::steady_clock::time_point attack_start;
  measure.during = [&](const attack::AttackProgress&) {
    log_from = FileSize(log_path);
    attack_start = std::chrono::steady_clock::now();
  };
  absl::StatusOr<Measured> run = attack::MeasureAttack(options, measure);
  REQUIRE(run.ok());
  const Measured& m = *run;
  std::this_thread::sleep_for(std::chrono::seconds(1));  // a summary line may follow the end
  const std::vector<std::string> logged = LogLinesSince(log_path, log_from);
  // From the first round's start to now (the idle windows between rounds included).
  const std::int64_t logged_seconds = std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::steady_clock::now() - attack_start)
                                          .count();
  WARN(attack::Describe(m, options) << "server log lines during the attack: " << logged.size());

  REQUIRE(server.Running());
  REQUIRE(m.attack.opened > 0);
  REQUIRE(m.idle.ok);
  CHECK(m.idle_healthz.failures == 0);
  // Memory: RSS grows less than 64 MB over its idle figure.
  CHECK(m.GrowthKb() < kMaxGrowthKb);
  CHECK_FALSE(m.attack.stopped_early);
  // Latency: /healthz p99 under attack stays under twice the idle p99: that of the same server
  // idle, probed at the same moments (the reference; kMaxP99Ratio), and nothing failed.
  CHECK(m.healthz.count > 0);
  CHECK(m.idle_healthz.count > 0);
  CHECK(m.reference.count > 0);  // a ratio over no reference sample would read 0, a pass
  CHECK(m.reference.failures == 0);
  REQUIRE_FALSE(m.round_p99_ms.empty());
  if (kAssertLatency) {
    CHECK(m.ReferenceP99Ratio() < kMaxP99Ratio);
  }
  CHECK(m.healthz.failures == 0);
  // The attacker's connections are closed by the server, and no attacking request is served.
  CHECK(m.attack.closed_by_server > 0);
  CHECK(m.attack.outlived == 0);
  CHECK(m.attack.Served() == 0);
  // Nothing is logged per attacking request beyond a rate-limited summary.
  const std::int64_t allowed = 2 + kLogLinesPer10s * logged_seconds / 10;
  INFO("first line logged: " << (logged.empty() ? "" : logged.front()));
  CHECK(static_cast<std::int64_t>(logged.size()) <= allowed);
  CHECK(server.Stop() == "exited 0");
  CHECK(twin.Stop() == "exited 0");
}

TEST_CASE("a request line that never ends is cut off without memory growth or slow health checks",
          "[transport][attack]") {
  AttackOptions options;
  options.kind = AttackKind::kRequestLine;
  options.connections = 3;
  options.bytes_per_connection = 400ull << 20;
  RunUnauthenticatedAttack(options);
}

TEST_CASE("a header value that never ends is cut off without memory growth or slow health checks",
          "[transport][attack]") {
  AttackOptions options;
  options.kind = AttackKind::kHeaderValue;
  options.connections = 3;
  options.bytes_per_connection = 400ull << 20;
  RunUnauthenticatedAttack(options);
}

TEST_CASE("millions of header lines are refused without memory growth or slow health checks",
          "[transport][attack]") {
  AttackOptions options;
  options.kind = AttackKind::kHeaderCount;
  options.connections = 1;
  options.header_lines = 3'000'000;
  RunUnauthenticatedAttack(options);
}

TEST_CASE("a thousand slowloris connections are closed and health checks stay fast",
          "[transport][attack]") {
  AttackOptions options;
  options.kind = AttackKind::kSlowloris;
  options.connections = 1000;
  options.slow_bytes = 8;
  options.slow_interval = Millis(2'000);
  RunUnauthenticatedAttack(options);
}

TEST_CASE(
    "ten thousand agent event streams hold on a few threads with heartbeats while a chat runs",
    "[transport][streams]") {
  const int streams = StreamCount();
  REQUIRE(attack::RaiseFileLimit(static_cast<std::uint64_t>(streams) + 1024) >=
          static_cast<std::uint64_t>(streams) + 256);
  e2e::TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  ScriptedResponse turn;
  turn.path = "/v1/chat/completions";
  turn.chunks = SseChunks(e2e::TextTurn("All quiet while ten thousand streams are open."));
  fake.Enqueue(turn);
  const std::string watcher = e2e::MintToken(dir.path(), "monitoring:read", "watcher");
  const std::string chatter = e2e::MintToken(dir.path(), "ai:chat", "chatter");
  const std::string n = std::to_string(streams);
  // The server inherits the raised descriptor limit. Its stream budgets must admit them all.
  const e2e::ServerOptions server_options{
      .args = {"--provider", "openai-compatible", "--provider-base-url", fake.base_url() + "/v1",
               "--model", "test-model", "--max-event-streams", n, "--max-run-streams", "8",
               "--max-streams-per-token", n}};
  e2e::ServerProcess server(dir.path(), server_options);
  // The reference: the same server, which holds no stream (MeasureOptions::reference_port).
  e2e::TempDir twin_dir;
  e2e::ServerProcess twin(twin_dir.path(), server_options);

  AttackOptions options;
  options.kind = AttackKind::kStreams;
  options.target.port = server.port();
  options.connections = streams;
  options.tokens = {watcher};
  options.duration = AttackLength();
  options.ramp_timeout = Millis(60'000);
  options.nice = AttackerNice();
  options.sched_idle = AttackerSchedIdle();
  // Many clients (agents, consoles): 100 streams per source address.
  options.sources = attack::LoopbackSources((streams + 99) / 100);
  MeasureOptions measure;
  measure.pid = server.pid();
  measure.guard_growth_kb = kGuardGrowthKb;
  measure.probe_options = Probe();
  measure.reference_port = twin.port();
  // The idle side as long as the hold, half before the streams open and half after they
  // closed (once the server has let them go), so both sides meet the machine's stalls alike.
  measure.idle = AttackLength() / 2;
  measure.idle_after = AttackLength() - measure.idle;
  measure.settle = Millis(3'000);
  e2e::ChatStream chat;
  measure.during = [&](const attack::AttackProgress&) {
    chat = e2e::PostStream(server.port(), "/api/ai/chat", chatter,
                           R"({"message":"how is the fleet?"})", absl::Seconds(30));
  };
  absl::StatusOr<Measured> run = attack::MeasureAttack(options, measure);
  REQUIRE(run.ok());
  const Measured& m = *run;
  const attack::AttackReport& r = m.attack;
  WARN(attack::Describe(m, options)
       << "streams short of one heartbeat per 15 s: " << r.StreamsShortOfHeartbeats(kHeartbeat)
       << "; thread budget " << ThreadBudget() << "; chat status " << chat.status << ", "
       << chat.events.size() << " events");

  REQUIRE(server.Running());
  REQUIRE(m.idle.ok);
  // Every stream opened, stayed open and got its heartbeats.
  CHECK(static_cast<int>(r.streams.size()) == streams);
  CHECK(r.StreamsNotReady() == 0);
  CHECK(r.StreamsEndedEarly() == 0);
  CHECK(r.StreamsShortOfHeartbeats(kHeartbeat) == 0);
  CHECK(r.MaxSilence() <= kHeartbeat + kHeartbeatSlack);
  if (options.duration >= kHeartbeat + kHeartbeatSlack) {
    CHECK(r.MinHeartbeats() >= 1);
  }
  // A few threads and bounded memory for all of them.
  CHECK(m.server.max_threads <= ThreadBudget());
  // Under ASan the idle server already holds its shadow memory and quarantine (132.9 MB idle,
  // 202.8 MB with 1,000 streams in CI's run of stop 38), so there the bound is on the growth over
  // idle; the plain build asserts the issue's absolute figure.
  if (kSanitized) {
    CHECK(m.GrowthKb() < kMaxStreamsRssKb);
  } else {
    CHECK(m.server.max_rss_kb < kMaxStreamsRssKb);
  }
  CHECK_FALSE(r.stopped_early);
  // /healthz p99 with the streams open stays within 1.5x idle: that of the same server
  // holding none, probed at the same moments (the reference).
  CHECK(m.healthz.count > 0);
  CHECK(m.healthz.failures == 0);
  CHECK(m.idle_healthz.count > 0);
  CHECK(m.idle_healthz.failures == 0);
  CHECK(m.reference.count > 0);
  CHECK(m.reference.failures == 0);
  if (kAssertLatency) {
    CHECK(m.ReferenceP99Ratio() <= kMaxStreamsP99Ratio);
  }
  // A chat started meanwhile completes.
  INFO(chat.raw.substr(0, 500));
  CHECK(chat.status == 200);
  REQUIRE_FALSE(chat.events.empty());
  CHECK(chat.events.back().type == "done");
  CHECK(server.Stop() == "exited 0");
  CHECK(twin.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::fault
