// pulse-http-attack: runs one attack of issue 22 against a running server, with a /healthz
// probe beside it and, given --pid, the server's memory and threads, and prints the figures
// (a summary, then one JSON line). The figures never fail the tool: exit 0 after a run, 1 when
// the attack could not run, 2 on a usage error. docs/performance.md, "HTTP transport attacks",
// shows how to use it; tests/fault/transport_attack_test.cc asserts on the same figures.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "attack.h"
#include "measure.h"

namespace pulse::testing::attack {
namespace {

constexpr char kUsage[] =
    "usage: pulse-http-attack --attack KIND --url http://HOST:PORT [options]\n"
    "  KIND: request-line, header-value, header-count, slowloris, streams, or probe (the\n"
    "        /healthz probe alone)\n"
    "  --seconds S            length of the attack (streams: of the hold)       [60]\n"
    "  --connections N        request-line/header-value 3, header-count 1, slowloris 1000,\n"
    "                         streams 10000\n"
    "  --bytes N              request-line/header-value: bytes per connection   [419430400]\n"
    "  --headers N            header-count: header lines per request            [3000000]\n"
    "  --slow-bytes N         slowloris: bytes per send                         [8]\n"
    "  --slow-interval-ms MS  slowloris: time between sends                     [2000]\n"
    "  --token T              streams: X-API-Token (repeat to spread streams over tokens)\n"
    "  --path P               streams: the stream's path             [/api/agent/events]\n"
    "  --sources N            bind the attack to N addresses 127.0.1.x (0: any) [0]\n"
    "  --reconnect-ms MS      replace a connection the server closed after MS   [1000]\n"
    "  --close-within-ms MS   a connection open longer counts as not closed     [15000]\n"
    "  --heartbeat-ms MS      streams: the server's heartbeat interval          [15000]\n"
    "  --pid PID              the server's process: RSS and threads from /proc  [none]\n"
    "  --guard-rss-mb MB      stop once the server's RSS grew this much         [2048]\n"
    "  --idle-seconds S       /healthz probe before the attack (0: none)        [10]\n"
    "  --probe-interval-ms MS time between /healthz probes                      [50]\n"
    "  --probe-timeout-ms MS  a slower probe counts as failed                   [5000]\n"
    "  --nice N               the attacking thread's nice value, 0-19           [0]\n"
    "  --sched-idle 1         run the attacking thread under SCHED_IDLE         [0]\n"
    "  --until-eof 1          probe: run until stdin closes (not --seconds), then print\n"
    "                         every sample on a last line `probe-samples failures=F us=...`\n";

int Usage(const std::string& why) {
  std::fprintf(stderr, "pulse-http-attack: %s\n%s", why.c_str(), kUsage);
  return 2;
}

bool Millis64(const char* text, Millis& out) {
  std::int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < 0) {
    return false;
  }
  out = Millis(v);
  return true;
}

int Main(int argc, char** argv) {
  std::string kind_name;
  std::string url;
  std::int64_t seconds = 60;
  int connections = 0;
  int sources = 0;
  int pid = 0;
  std::int64_t guard_mb = 2048;
  std::int64_t idle_seconds = 10;
  int until_eof = 0;
  Millis heartbeat{15'000};
  AttackOptions attack;
  MeasureOptions measure;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      return Usage(absl::StrCat(flag, " needs a value"));
    }
    const char* v = argv[++i];
    bool ok = true;
    if (flag == "--attack") {
      kind_name = v;
    } else if (flag == "--url") {
      url = v;
    } else if (flag == "--seconds") {
      ok = absl::SimpleAtoi(v, &seconds) && seconds > 0;
    } else if (flag == "--connections") {
      ok = absl::SimpleAtoi(v, &connections) && connections > 0;
    } else if (flag == "--bytes") {
      ok = absl::SimpleAtoi(v, &attack.bytes_per_connection);
    } else if (flag == "--headers") {
      ok = absl::SimpleAtoi(v, &attack.header_lines);
    } else if (flag == "--slow-bytes") {
      ok = absl::SimpleAtoi(v, &attack.slow_bytes) && attack.slow_bytes > 0;
    } else if (flag == "--slow-interval-ms") {
      ok = Millis64(v, attack.slow_interval) && attack.slow_interval.count() > 0;
    } else if (flag == "--token") {
      attack.tokens.emplace_back(v);
    } else if (flag == "--path") {
      attack.stream_path = v;
    } else if (flag == "--sources") {
      ok = absl::SimpleAtoi(v, &sources) && sources >= 0 && sources <= 254 * 254;
    } else if (flag == "--reconnect-ms") {
      ok = Millis64(v, attack.reconnect_delay);
    } else if (flag == "--close-within-ms") {
      ok = Millis64(v, attack.close_within);
    } else if (flag == "--heartbeat-ms") {
      ok = Millis64(v, heartbeat) && heartbeat.count() > 0;
    } else if (flag == "--pid") {
      ok = absl::SimpleAtoi(v, &pid) && pid > 0;
    } else if (flag == "--guard-rss-mb") {
      ok = absl::SimpleAtoi(v, &guard_mb) && guard_mb >= 0;
    } else if (flag == "--idle-seconds") {
      ok = absl::SimpleAtoi(v, &idle_seconds) && idle_seconds >= 0;
    } else if (flag == "--probe-interval-ms") {
      ok = Millis64(v, measure.probe_options.interval);
    } else if (flag == "--until-eof") {
      ok = absl::SimpleAtoi(v, &until_eof) && (until_eof == 0 || until_eof == 1);
    } else if (flag == "--nice") {
      ok = absl::SimpleAtoi(v, &attack.nice) && attack.nice >= 0 && attack.nice <= 19;
    } else if (flag == "--sched-idle") {
      int on = 0;
      ok = absl::SimpleAtoi(v, &on) && (on == 0 || on == 1);
      attack.sched_idle = on == 1;
    } else if (flag == "--probe-timeout-ms") {
      ok = Millis64(v, measure.probe_options.timeout) && measure.probe_options.timeout.count() > 0;
    } else {
      return Usage(absl::StrCat("unknown flag ", flag));
    }
    if (!ok) {
      return Usage(absl::StrCat("bad value for ", flag, ": '", v, "'"));
    }
  }
  absl::StatusOr<Target> target = ParseTarget(url);
  if (!target.ok()) {
    return Usage(std::string(target.status().message()));
  }
  attack.target = *target;
  measure.pid = pid;
  measure.idle = Millis(idle_seconds * 1000);
  measure.guard_growth_kb = guard_mb * 1024;
  if (sources > 0) {
    attack.sources = LoopbackSources(sources);
  }
  if (kind_name == "probe") {
    ProbeOptions probe_options = measure.probe_options;
    probe_options.target = *target;
    HealthProbe probe(probe_options);
    probe.Start();
    if (until_eof == 1) {
      char buf[256];
      while (true) {
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof(buf));
        if (n == 0 || (n < 0 && errno != EINTR)) {
          break;  // stdin closed: the parent wants the report
        }
      }
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(seconds));
    }
    const LatencySummary s = probe.Stop();
    std::printf("healthz: %lld probes, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %lld failed\n",
                static_cast<long long>(s.count), s.p50_ms, s.p99_ms, s.max_ms,
                static_cast<long long>(s.failures));
    std::printf(
        "{\"healthz\":{\"count\":%lld,\"failures\":%lld,\"p50Ms\":%.3f,\"p99Ms\":%.3f,"
        "\"maxMs\":%.3f}}\n",
        static_cast<long long>(s.count), static_cast<long long>(s.failures), s.p50_ms, s.p99_ms,
        s.max_ms);
    if (until_eof == 1) {
      std::printf("%s\n", SamplesLine(s).c_str());
    }
    return 0;
  }
  absl::StatusOr<AttackKind> kind = ParseAttackKind(kind_name);
  if (!kind.ok()) {
    return Usage(std::string(kind.status().message()));
  }
  attack.kind = *kind;
  attack.duration = Millis(seconds * 1000);
  if (connections == 0) {
    switch (attack.kind) {
      case AttackKind::kRequestLine:
      case AttackKind::kHeaderValue:
        connections = 3;
        break;
      case AttackKind::kHeaderCount:
        connections = 1;
        break;
      case AttackKind::kSlowloris:
        connections = 1000;
        break;
      case AttackKind::kStreams:
        connections = 10000;
        break;
    }
  }
  attack.connections = connections;
  const std::uint64_t limit = RaiseFileLimit(static_cast<std::uint64_t>(connections) + 256);
  if (limit < static_cast<std::uint64_t>(connections) + 64) {
    std::fprintf(stderr, "pulse-http-attack: the descriptor limit is %llu; raise ulimit -n\n",
                 static_cast<unsigned long long>(limit));
    return 1;
  }
  absl::StatusOr<Measured> m = MeasureAttack(attack, measure);
  if (!m.ok()) {
    std::fprintf(stderr, "pulse-http-attack: %s\n", std::string(m.status().message()).c_str());
    return 1;
  }
  std::string text = Describe(*m, attack);
  if (attack.kind == AttackKind::kStreams) {
    absl::StrAppend(&text, "streams short of one heartbeat per ", heartbeat.count() / 1000,
                    " s: ", m->attack.StreamsShortOfHeartbeats(heartbeat), "\n");
  }
  std::fputs(text.c_str(), stdout);
  std::printf("%s\n", ToJson(*m, attack).c_str());
  return 0;
}

}  // namespace
}  // namespace pulse::testing::attack

int main(int argc, char** argv) { return pulse::testing::attack::Main(argc, argv); }
