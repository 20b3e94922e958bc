// bench_chat_threads: what a burst of concurrent chats costs pulse-server in threads and memory,
// this build against another pulse-server binary (the baseline, e.g. main's), in alternating
// runs A B A B in one process so a shared machine's load falls on both.
//
// Each run starts the binary on a fresh data dir (loopback, demo fleet, the chat load's
// content-aware fake provider from chat_provider.h: a turn of 4 read tool calls, then a final
// text, each answer after --latency-ms), finishes one warm-up chat, reads the idle thread count
// (/proc/<pid>/task) and VmRSS, then starts --sessions chats at once (one client thread each)
// and samples both every 5 ms until every chat ended. It reports per run: chats answered, peak
// threads, peak VmRSS, p50/p99 time to `done` and the burst's wall time; then the candidate /
// baseline ratios of the means over the rounds. Both servers get the same flags (stream budgets
// raised so no chat is refused: --max-event-streams 100 --max-run-streams 700
// --max-streams-per-token 800); `--candidate-arg X` (repeatable) adds X to the candidate's.
//
// Usage: bench_chat_threads --baseline PATH [--sessions N (600)] [--rounds R (2)]
//        [--latency-ms MS (250)] [--candidate-arg ARG]...   (PULSE_BENCH_DIR: data dirs)
// The baseline may also come from PULSE_BENCH_BASELINE_SERVER; without one (as cmake/bench.sh
// runs every bench_* program) it prints that it skipped and exits 0.
// Exit status 1 when a server did not start or a chat of the candidate failed.
#include <dirent.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "chat_provider.h"
#include "pipe_process.h"

namespace {

using Clock = std::chrono::steady_clock;
using pulse::bench::PipeProcess;
using pulse::bench::PostChat;
using pulse::bench::ReadFile;
using pulse::bench::StreamedChat;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "bench_chat_threads: %s\n", why.c_str());
  std::exit(1);
}

int Threads(pid_t pid) {
  DIR* dir = opendir(absl::StrCat("/proc/", pid, "/task").c_str());
  if (dir == nullptr) {
    return -1;
  }
  int n = 0;
  while (dirent* entry = readdir(dir)) {
    n += entry->d_name[0] == '.' ? 0 : 1;
  }
  closedir(dir);
  return n;
}

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

// One chat streamed to its end: milliseconds to `done`, or nullopt unless it ended `answered`.
std::optional<double> Chat(int port, const std::string& token, int index) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(30, 0);
  client.set_read_timeout(300, 0);
  client.set_keep_alive(false);
  const StreamedChat chat =
      PostChat(client, token, absl::StrCat("Are vm:101 and vm:105 healthy? Chat ", index));
  if (chat.error != httplib::Error::Success || chat.status != 200 || !chat.done_at.has_value() ||
      chat.raw.find(R"("outcome":"answered")") == std::string::npos) {
    return std::nullopt;
  }
  return std::chrono::duration<double, std::milli>(*chat.done_at - chat.start).count();
}

struct Run {
  int answered = 0;
  int idle_threads = 0;
  int peak_threads = 0;
  long idle_rss_kib = 0;
  long peak_rss_kib = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double wall_ms = 0;
};

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

Run Measure(const std::string& binary, const std::vector<std::string>& extra,
            const std::string& provider_url, int sessions) {
  const char* base = std::getenv("PULSE_BENCH_DIR");
  std::string templ = std::string(base != nullptr ? base : "/tmp") + "/pulse-bench-thr-XXXXXX";
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
  std::string error;
  const std::optional<std::string> token = pulse::bench::MintServerToken(binary, dir, "*", &error);
  if (!token.has_value()) {
    Die(error);
  }
  std::vector<std::string> argv = {binary,
                                   "--data-dir",
                                   dir,
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--provider",
                                   "openai-compatible",
                                   "--provider-base-url",
                                   provider_url,
                                   "--model",
                                   "test-model",
                                   "--max-event-streams",
                                   "100",
                                   "--max-run-streams",
                                   "700",
                                   "--max-streams-per-token",
                                   "800"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const std::string log = dir + "/server.log";
  std::unique_ptr<PipeProcess> server = PipeProcess::Start(argv, {}, log, true);
  if (server == nullptr) {
    Die("cannot start " + binary);
  }
  const int port = pulse::bench::WaitForListeningPort(log, std::chrono::seconds(20));
  if (port == 0) {
    Die(binary + " did not report its port: " + ReadFile(log));
  }
  const pid_t pid = server->pid();
  Run run;
  if (!Chat(port, *token, 0).has_value()) {
    Die(binary + ": the warm-up chat failed: " + ReadFile(log).substr(0, 2000));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  run.idle_threads = Threads(pid);
  run.idle_rss_kib = RssKib(pid);

  std::atomic<bool> sampling{true};
  std::thread sampler([&] {
    while (sampling.load()) {
      run.peak_threads = std::max(run.peak_threads, Threads(pid));
      run.peak_rss_kib = std::max(run.peak_rss_kib, RssKib(pid));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  std::vector<std::optional<double>> results(static_cast<std::size_t>(sessions));
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> clients;
  for (int i = 0; i < sessions; ++i) {
    clients.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load()) {
        std::this_thread::yield();
      }
      results[static_cast<std::size_t>(i)] = Chat(port, *token, i + 1);
    });
  }
  while (ready.load() < sessions) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const Clock::time_point start = Clock::now();
  go.store(true);
  for (std::thread& t : clients) {
    t.join();
  }
  run.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  sampling.store(false);
  sampler.join();
  std::vector<double> ms;
  for (const std::optional<double>& r : results) {
    if (r.has_value()) {
      ms.push_back(*r);
    }
  }
  run.answered = static_cast<int>(ms.size());
  run.p50_ms = Percentile(ms, 0.5);
  run.p99_ms = Percentile(ms, 0.99);
  server.reset();  // SIGTERM, then SIGKILL, and reaped
  return run;
}

void Print(const char* name, int round, const Run& r, int sessions) {
  std::printf("| %-9s | %5d | %5d/%-5d | %7d | %7d | %9.1f | %9.1f | %8.0f | %8.0f | %9.0f |\n",
              name, round, r.answered, sessions, r.idle_threads, r.peak_threads,
              static_cast<double>(r.idle_rss_kib) / 1024.0,
              static_cast<double>(r.peak_rss_kib) / 1024.0, r.p50_ms, r.p99_ms, r.wall_ms);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string baseline;
  std::vector<std::string> candidate_args;
  int sessions = 600;
  int rounds = 2;
  int latency_ms = 250;
  if (const char* env = std::getenv("PULSE_BENCH_BASELINE_SERVER")) {
    baseline = env;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--benchmark", 0) == 0) {
      continue;  // Google Benchmark flags that cmake/bench.sh passes to every suite: not ours
    }
    if (i + 1 >= argc) {
      Die("usage: bench_chat_threads --baseline PATH [--sessions N] [--rounds R] "
          "[--latency-ms MS] [--candidate-arg ARG]...");
    }
    const std::string value = argv[++i];
    int number = 0;
    if (flag == "--baseline") {
      baseline = value;
    } else if (flag == "--candidate-arg") {
      candidate_args.push_back(value);
    } else if ((flag == "--sessions" || flag == "--rounds" || flag == "--latency-ms") &&
               absl::SimpleAtoi(value, &number) && number >= (flag == "--latency-ms" ? 0 : 1) &&
               number <= 5000) {
      (flag == "--sessions" ? sessions : flag == "--rounds" ? rounds : latency_ms) = number;
    } else {
      Die("bad argument " + flag + " " + value);
    }
  }
  if (baseline.empty()) {
    std::printf(
        "bench_chat_threads: skipped: no baseline (--baseline PATH or "
        "PULSE_BENCH_BASELINE_SERVER: another pulse-server binary, e.g. main's)\n");
    return 0;
  }
  std::unique_ptr<pulse::bench::ContentAwareProvider> fake =
      pulse::bench::ContentAwareProvider::Start(std::chrono::milliseconds(latency_ms));
  if (fake == nullptr) {
    Die("the fake provider did not start");
  }
  const std::string url = fake->base_url() + "/v1";
  std::printf(
      "chat threads: %d concurrent chats per run, %d rounds A B, provider latency %d ms per "
      "turn, %u CPUs\nA (baseline) %s\nB (candidate) %s",
      sessions, rounds, latency_ms, std::thread::hardware_concurrency(), baseline.c_str(),
      PULSE_SERVER_BINARY);
  for (const std::string& a : candidate_args) {
    std::printf(" %s", a.c_str());
  }
  std::printf(
      "\n\n| server    | round | answered    | idle th | peak th | idle RSS MB | peak RSS MB | "
      "p50 ms | p99 ms | wall ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<Run> a_runs;
  std::vector<Run> b_runs;
  for (int round = 1; round <= rounds; ++round) {
    a_runs.push_back(Measure(baseline, {}, url, sessions));
    Print("A base", round, a_runs.back(), sessions);
    b_runs.push_back(Measure(PULSE_SERVER_BINARY, candidate_args, url, sessions));
    Print("B cand", round, b_runs.back(), sessions);
  }
  const auto mean = [](const std::vector<Run>& runs, auto field) {
    double sum = 0;
    for (const Run& r : runs) {
      sum += static_cast<double>(r.*field);
    }
    return runs.empty() ? 0.0 : sum / static_cast<double>(runs.size());
  };
  const auto ratio = [&](auto field) {
    const double a = mean(a_runs, field);
    return a > 0 ? mean(b_runs, field) / a : 0.0;
  };
  std::printf(
      "\nB / A (means over the rounds): peak threads x%.3f, peak RSS x%.3f, threads added by "
      "the burst x%.3f, p50 x%.2f, p99 x%.2f, wall x%.2f\n",
      ratio(&Run::peak_threads), ratio(&Run::peak_rss_kib),
      (mean(b_runs, &Run::peak_threads) - mean(b_runs, &Run::idle_threads)) /
          std::max(1.0, mean(a_runs, &Run::peak_threads) - mean(a_runs, &Run::idle_threads)),
      ratio(&Run::p50_ms), ratio(&Run::p99_ms), ratio(&Run::wall_ms));
  for (const Run& r : b_runs) {
    if (r.answered != sessions) {
      return 1;
    }
  }
  return 0;
}
