// bench_chat_load: concurrent chat sessions through the real pulse-server against a loopback
// fake model provider in this process, and the baseline: the same provider round trips made
// directly to the fake, without the server.
//
// The fake (chat_provider.h) speaks the OpenAI-compatible streaming protocol. It answers a
// request without a tool result in it with one turn of 4 parallel read tool calls (pulse_query
// get and pulse_read status on two demo VMs) and a request that carries tool results with a
// final text, so every session makes exactly two provider requests and 4 tool calls, however
// the sessions interleave. (FakeProviderServer
// serves one FIFO script for all requests; with 100 sessions in flight a fast session's second
// request took the tool turns meant for others' first requests, up to the loop's turn limit, so
// its queue cannot script concurrent sessions.) A session is done when its `done` frame
// arrives; it counts as an error unless it ended `answered`, with no `error` frame and no failed
// tool call. The baseline session is the two provider requests pulse-server sent for one
// warm-up session (their recorded bodies replayed), each streamed to its end, one after the
// other. So the ratio is what the server adds around two provider round trips: HTTP in and out,
// auth, the session store, the agentic loop, 4 tool executions against the demo fleet and the
// event stream.
//
// Rounds alternate direct and server bursts (`--rounds`, default 3) so a shared machine's load
// falls on both; every burst starts all `--sessions` (default 100) sessions at once, one client
// thread each. Reports sessions/s (sessions / wall time of the burst), p50/p99 time-to-done,
// errors, and the server's VmRSS after startup, after the warm-up and after the last burst.
// `--latency-ms MS` (default 0) makes the fake wait MS before each answer, a stand-in for model
// latency.
//
// Exit status 1 when anything could not start or any session failed; timings never fail it.
// Usage: bench_chat_load [--sessions N] [--rounds R] [--latency-ms MS]
//        (PULSE_BENCH_DIR: where the data dir goes)
//
// `bench_chat_load --serve-provider` only runs the fake provider, for cmake/soak-rss.sh: it
// prints "fake provider on <base url>" and serves until it is killed.
#include <dirent.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "chat_loop_direct.h"
#include "chat_provider.h"
#include "pipe_process.h"

namespace {

using Clock = std::chrono::steady_clock;
using pulse::bench::PipeProcess;
using pulse::bench::ReadFile;

constexpr int kWarmupSessions = 10;
using pulse::bench::ContentAwareProvider;
using pulse::bench::PostChat;
using pulse::bench::StreamedChat;
constexpr int kToolsPerTurn = pulse::bench::kChatToolsPerTurn;
constexpr const char* kCompletionsPath = pulse::bench::kChatCompletionsPath;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "bench_chat_load: %s\n", why.c_str());
  std::exit(1);
}

// ---- one session ----

struct SessionResult {
  bool ok = false;
  double ms = 0;  // request sent to `done` received (server) or second stream ended (direct)
  int tool_calls = 0;
  int tool_errors = 0;
  std::string why;
};

std::unique_ptr<httplib::Client> ClientFor(int port) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
  client->set_connection_timeout(10, 0);
  client->set_read_timeout(120, 0);
  client->set_write_timeout(10, 0);
  client->set_keep_alive(false);
  return client;
}

std::size_t Count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

SessionResult ServerSession(int port, const std::string& token, int index) {
  SessionResult result;
  auto client = ClientFor(port);
  const StreamedChat chat =
      PostChat(*client, token, absl::StrCat("Are vm:101 and vm:105 healthy? Session ", index));
  const std::string& raw = chat.raw;
  const Clock::time_point end = chat.done_at.value_or(Clock::now());
  result.ms = std::chrono::duration<double, std::milli>(end - chat.start).count();
  result.tool_calls = static_cast<int>(Count(raw, R"("type":"tool_end")"));
  result.tool_errors = static_cast<int>(Count(raw, R"("success":false)"));
  if (chat.error != httplib::Error::Success) {
    result.why = "transport: " + httplib::to_string(chat.error);
  } else if (chat.status != 200) {
    result.why = absl::StrCat("HTTP ", chat.status, ": ", raw.substr(0, 200));
  } else if (!chat.done_at.has_value()) {
    result.why = "no done frame: " + raw.substr(raw.size() > 300 ? raw.size() - 300 : 0);
  } else if (raw.find(R"("type":"error")") != std::string::npos ||
             raw.find(R"("outcome":"answered")") == std::string::npos) {
    const std::size_t at = raw.find(R"("type":"done")");
    result.why = "not answered: " + raw.substr(at, 300);
  } else {
    result.ok = true;
  }
  return result;
}

// One provider request streamed to the end; false unless it answered 200 with a [DONE].
bool ProviderRoundTrip(int port, const std::string& body, std::string& why) {
  auto client = ClientFor(port);
  httplib::Request req;
  req.method = "POST";
  req.path = kCompletionsPath;
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  req.body = body;
  std::string raw;
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    raw.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  client->send(req, res, error);
  if (error != httplib::Error::Success || res.status != 200 ||
      raw.find("[DONE]") == std::string::npos) {
    why = absl::StrCat("provider round trip: ", httplib::to_string(error), " HTTP ", res.status);
    return false;
  }
  return true;
}

// The same session as ServerSession, by calling the agentic loop in this process.
SessionResult LoopSession(pulse::bench::DirectChatLoop& loop, int index) {
  SessionResult result;
  const Clock::time_point start = Clock::now();
  const pulse::bench::LoopSessionResult run =
      loop.RunSession(absl::StrCat("Are vm:101 and vm:105 healthy? Session ", index));
  result.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  result.ok = run.answered;
  result.tool_calls = run.tool_calls;
  result.tool_errors = run.tool_errors;
  result.why = run.why;
  return result;
}

SessionResult DirectSession(int port, const std::string& first, const std::string& second) {
  SessionResult result;
  const Clock::time_point start = Clock::now();
  result.ok =
      ProviderRoundTrip(port, first, result.why) && ProviderRoundTrip(port, second, result.why);
  result.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return result;
}

struct Burst {
  std::vector<SessionResult> sessions;
  double wall_ms = 0;
};

template <typename Fn>
Burst RunBurst(int sessions, Fn session) {
  Burst burst;
  burst.sessions.resize(static_cast<std::size_t>(sessions));
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  threads.reserve(burst.sessions.size());
  for (int i = 0; i < sessions; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load()) {
        std::this_thread::yield();
      }
      burst.sessions[static_cast<std::size_t>(i)] = session(i);
    });
  }
  while (ready.load() < sessions) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const Clock::time_point start = Clock::now();
  go.store(true);
  for (std::thread& t : threads) {
    t.join();
  }
  burst.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return burst;
}

// ---- figures ----

struct Figures {
  double sessions_per_s = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  int errors = 0;
  int sessions = 0;
  int tool_calls = 0;
  int tool_errors = 0;
  int exactly_four = 0;
};

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

Figures Summarize(const std::vector<Burst>& bursts) {
  Figures f;
  std::vector<double> ms;
  double wall_ms = 0;
  for (const Burst& b : bursts) {
    wall_ms += b.wall_ms;
    for (const SessionResult& s : b.sessions) {
      ms.push_back(s.ms);
      ++f.sessions;
      f.errors += s.ok ? 0 : 1;
      f.tool_calls += s.tool_calls;
      f.tool_errors += s.tool_errors;
      f.exactly_four += s.tool_calls == kToolsPerTurn ? 1 : 0;
    }
  }
  f.sessions_per_s = wall_ms > 0 ? 1000.0 * f.sessions / wall_ms : 0;
  f.p50_ms = Percentile(ms, 0.50);
  f.p99_ms = Percentile(ms, 0.99);
  return f;
}

void PrintFirstError(const char* what, const Burst& burst) {
  for (const SessionResult& s : burst.sessions) {
    if (!s.ok) {
      std::fprintf(stderr, "bench_chat_load: %s session failed: %s\n", what, s.why.c_str());
      return;
    }
  }
}

// ---- pulse-server ----

// The pid of the process whose command line holds `needle` (the unique data dir), or 0.
pid_t FindPid(const std::string& needle) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) {
    return 0;
  }
  pid_t found = 0;
  while (dirent* entry = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) {
      continue;
    }
    std::string cmdline = ReadFile(absl::StrCat("/proc/", pid, "/cmdline"));
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos &&
        cmdline.find("--listen") != std::string::npos) {
      found = pid;
      break;
    }
  }
  closedir(proc);
  return found;
}

// VmRSS of `pid` in KiB, or -1.
long RssKib(pid_t pid) {
  std::istringstream status(ReadFile(absl::StrCat("/proc/", pid, "/status")));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::strtol(line.c_str() + 6, nullptr, 10);
    }
  }
  return -1;
}

// CPU time (user + system) `pid` has used so far, in ms, or -1.
double CpuMs(pid_t pid) {
  const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const std::size_t close = stat.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) {
    return -1;
  }
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  double utime = -1;
  double stime = -1;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state
    if (i == 14) {
      utime = std::strtod(field.c_str(), nullptr);
    } else if (i == 15) {
      stime = std::strtod(field.c_str(), nullptr);
      break;
    }
  }
  const long ticks = sysconf(_SC_CLK_TCK);
  return utime < 0 || stime < 0 || ticks <= 0 ? -1 : 1000.0 * (utime + stime) / ticks;
}

std::string MintToken(const std::string& dir) {
  std::string error;
  std::optional<std::string> token =
      pulse::bench::MintServerToken(PULSE_SERVER_BINARY, dir, "*", &error);
  if (!token.has_value()) {
    Die(error);
  }
  return *token;
}

double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

void PrintRow(const char* name, const Figures& f) {
  std::printf("| %-34s | %10.1f | %9.1f | %9.1f | %8d | %6d |\n", name, f.sessions_per_s, f.p50_ms,
              f.p99_ms, f.sessions, f.errors);
}

// Runs until killed (SIGTERM's default action): the soak script owns this process.
[[noreturn]] void ServeProvider() {
  std::unique_ptr<ContentAwareProvider> fake =
      ContentAwareProvider::Start(std::chrono::milliseconds(0));
  if (fake == nullptr) {
    Die("the fake provider did not start");
  }
  std::printf("fake provider on %s\n", fake->base_url().c_str());
  std::fflush(stdout);
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(60));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--serve-provider") {
    ServeProvider();
  }
  int sessions = 100;
  int rounds = 3;
  int latency_ms = 0;
  std::string server_binary = PULSE_SERVER_BINARY;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--server" && i + 1 < argc) {
      server_binary = argv[++i];
    } else if ((flag == "--sessions" || flag == "--rounds" || flag == "--latency-ms") &&
               i + 1 < argc) {
      int value = 0;
      if (!absl::SimpleAtoi(argv[++i], &value) || value < (flag == "--latency-ms" ? 0 : 1)) {
        Die("bad value for " + flag);
      }
      (flag == "--sessions" ? sessions : flag == "--rounds" ? rounds : latency_ms) = value;
    } else if (flag.rfind("--benchmark", 0) == 0) {
      // Google Benchmark flags that cmake/bench.sh passes to every suite: not ours.
    } else {
      Die("usage: bench_chat_load [--sessions N] [--rounds R] [--latency-ms MS] [--server PATH]");
    }
  }

  const char* base = std::getenv("PULSE_BENCH_DIR");
  std::string templ = std::string(base != nullptr ? base : "/tmp") + "/pulse-bench-chat-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    Die("mkdtemp failed");
  }
  const std::string dir = templ;
  struct RemoveDir {
    std::string path;
    ~RemoveDir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } remove_dir{dir};

  std::unique_ptr<ContentAwareProvider> started =
      ContentAwareProvider::Start(std::chrono::milliseconds(latency_ms));
  if (started == nullptr) {
    Die("the fake provider did not start");
  }
  ContentAwareProvider& fake = *started;

  const std::string token = MintToken(dir);
  const std::string log = dir + "/server.log";
  std::unique_ptr<PipeProcess> server = PipeProcess::Start(
      {server_binary, "--data-dir", dir, "--listen", "127.0.0.1:0", "--provider",
       "openai-compatible", "--provider-base-url", fake.base_url() + "/v1", "--model", "test-model",
       "--max-run-streams", "400", "--max-streams-per-token", "800",
       // Patrol is not measured here: no scheduled run (nor its start-up run) competes.
       "--patrol-interval", "0"},
      {}, log, /*stdout_to_log=*/true);
  if (server == nullptr) {
    Die("cannot start pulse-server");
  }
  // From here on, a failure stops the server before exiting (Die skips destructors).
  const auto fail = [&server, &dir](const std::string& why) {
    server.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    Die(why);
  };
  const int port = pulse::bench::WaitForListeningPort(log, std::chrono::seconds(20));
  if (port == 0) {
    fail("pulse-server did not report its port: " + ReadFile(log));
  }
  const pid_t pid = FindPid(dir);
  const long rss_start = pid > 0 ? RssKib(pid) : -1;

  // Warm-up through the server; its recorded requests become the direct baseline's bodies.
  const Burst warm =
      RunBurst(kWarmupSessions, [&](int i) { return ServerSession(port, token, i); });
  const Figures warm_figures = Summarize({warm});
  if (warm_figures.errors != 0) {
    PrintFirstError("warm-up", warm);
    fail("the warm-up failed; server log tail: " + ReadFile(log).substr(0, 2000));
  }
  const std::string first_body = fake.first_body();
  const std::string second_body = fake.second_body();
  if (first_body.empty() || second_body.empty()) {
    fail("the warm-up did not record a first and a second provider request");
  }
  const long rss_warm = pid > 0 ? RssKib(pid) : -1;

  // The loop called in this process, on its own data dir, against the same fake; warmed up too.
  absl::StatusOr<std::unique_ptr<pulse::bench::DirectChatLoop>> opened_loop =
      pulse::bench::DirectChatLoop::Open(dir + "/loop", fake.base_url() + "/v1");
  if (!opened_loop.ok()) {
    fail("the in-process loop did not open: " + opened_loop.status().ToString());
  }
  pulse::bench::DirectChatLoop& loop = **opened_loop;
  const Burst warm_loop =
      RunBurst(kWarmupSessions, [&](int i) { return LoopSession(loop, 1000000 + i); });
  if (Summarize({warm_loop}).errors != 0) {
    PrintFirstError("loop warm-up", warm_loop);
    fail("the in-process loop's warm-up failed");
  }

  const double load_start = LoadAverage();
  const double cpu_start = pid > 0 ? CpuMs(pid) : -1;
  std::vector<Burst> direct;
  std::vector<Burst> in_process;
  std::vector<Burst> through;
  for (int round = 0; round < rounds; ++round) {
    direct.push_back(RunBurst(
        sessions, [&](int) { return DirectSession(fake.port(), first_body, second_body); }));
    in_process.push_back(RunBurst(
        sessions, [&](int i) { return LoopSession(loop, 2000000 + round * sessions + i); }));
    through.push_back(RunBurst(sessions, [&](int i) {
      return ServerSession(port, token, kWarmupSessions + round * sessions + i);
    }));
  }
  const long rss_end = pid > 0 ? RssKib(pid) : -1;
  const double cpu_end = pid > 0 ? CpuMs(pid) : -1;
  const double load_end = LoadAverage();

  const Figures d = Summarize(direct);
  const Figures l = Summarize(in_process);
  const Figures s = Summarize(through);
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  std::printf(
      "chat load: %d concurrent sessions x %d rounds, %d parallel read tool calls per turn, "
      "provider latency %d ms per turn, %u CPUs, load average %.1f (start) / %.1f (end)\n",
      sessions, rounds, kToolsPerTurn, latency_ms, std::thread::hardware_concurrency(), load_start,
      load_end);
  std::printf("provider request bodies replayed: %zu and %zu bytes\n\n", first_body.size(),
              second_body.size());
  std::printf("| %-34s | %10s | %9s | %9s | %8s | %6s |\n", "path", "sessions/s", "p50 ms",
              "p99 ms", "sessions", "errors");
  std::printf(
      "|------------------------------------|-----------:|----------:|----------:|"
      "---------:|-------:|\n");
  PrintRow("direct provider round trips (base)", d);
  PrintRow("agentic loop in-process (base)", l);
  PrintRow("through pulse-server", s);
  for (int round = 0; round < rounds; ++round) {
    const Figures rd = Summarize({direct[static_cast<std::size_t>(round)]});
    const Figures rl = Summarize({in_process[static_cast<std::size_t>(round)]});
    const Figures rs = Summarize({through[static_cast<std::size_t>(round)]});
    std::printf(
        "  round %d: direct %.1f sessions/s p50 %.1f ms | loop %.1f sessions/s p50 %.1f ms | "
        "server %.1f sessions/s p50 %.1f ms p99 %.1f ms\n",
        round + 1, rd.sessions_per_s, rd.p50_ms, rl.sessions_per_s, rl.p50_ms, rs.sessions_per_s,
        rs.p50_ms, rs.p99_ms);
  }
  std::printf(
      "\nserver / direct: sessions/s x%.3f, p50 x%.2f, p99 x%.2f; added per session: p50 %+.1f "
      "ms, p99 %+.1f ms\n"
      "tool calls through the server: %d (%d failed); sessions with exactly %d: %d of %d\n",
      ratio(s.sessions_per_s, d.sessions_per_s), ratio(s.p50_ms, d.p50_ms),
      ratio(s.p99_ms, d.p99_ms), s.p50_ms - d.p50_ms, s.p99_ms - d.p99_ms, s.tool_calls,
      s.tool_errors, kToolsPerTurn, s.exactly_four, s.sessions);
  std::printf(
      "server / in-process loop: sessions/s x%.3f, p50 x%.2f, p99 x%.2f; added per session: "
      "p50 %+.1f ms, p99 %+.1f ms\n"
      "tool calls by the in-process loop: %d (%d failed); sessions with exactly %d: %d of %d\n",
      ratio(s.sessions_per_s, l.sessions_per_s), ratio(s.p50_ms, l.p50_ms),
      ratio(s.p99_ms, l.p99_ms), s.p50_ms - l.p50_ms, s.p99_ms - l.p99_ms, l.tool_calls,
      l.tool_errors, kToolsPerTurn, l.exactly_four, l.sessions);
  if (cpu_start >= 0 && cpu_end >= 0 && s.sessions > 0) {
    // Only the server bursts reach the server; its idle work between them is small.
    std::printf(
        "server CPU (user + system) during the measured rounds: %.0f ms, %.2f ms per session\n",
        cpu_end - cpu_start, (cpu_end - cpu_start) / s.sessions);
  }
  std::printf(
      "server VmRSS: %ld KiB after startup, %ld KiB after %d warm-up sessions, %ld KiB "
      "after %d more sessions (%+ld KiB)\n",
      rss_start, rss_warm, kWarmupSessions, rss_end, s.sessions, rss_end - rss_warm);

  int failed = d.errors + l.errors + s.errors;
  if (l.tool_errors != 0 || l.exactly_four != l.sessions) {
    ++failed;
    std::fprintf(
        stderr,
        "bench_chat_load: in-process loop: %d tool calls failed; %d sessions made %d calls\n",
        l.tool_errors, l.exactly_four, kToolsPerTurn);
  }
  if (s.tool_errors != 0 || s.exactly_four != s.sessions) {
    ++failed;
    std::fprintf(stderr, "bench_chat_load: %d tool calls failed; %d sessions made %d calls\n",
                 s.tool_errors, s.exactly_four, kToolsPerTurn);
  }
  for (const Burst& b : direct) {
    PrintFirstError("direct", b);
  }
  for (const Burst& b : in_process) {
    PrintFirstError("in-process loop", b);
  }
  for (const Burst& b : through) {
    PrintFirstError("server", b);
  }
  server.reset();  // closes its stdin, then SIGTERM, then SIGKILL, and reaps it
  return failed == 0 ? 0 : 1;
}
