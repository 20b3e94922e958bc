#include "probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "http_wire.h"
#include "pulse/core/string_view.h"

namespace pulse::testing::attack {
namespace {

// Waits for `events` on `fd` until `deadline`; false on timeout.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now()).count();
    if (left <= 0) {
      return false;
    }
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n > 0) {
      return true;
    }
    if (n < 0 && errno != EINTR) {
      return false;
    }
  }
}

ProbeResult Probe(const Target& target, const std::string& path, Millis timeout) {
  ProbeResult result;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + timeout;
  const auto finish = [&](bool timed_out) {
    result.timed_out = timed_out;
    result.latency = timed_out ? timeout : std::chrono::duration_cast<Millis>(Clock::now() - start);
    return result;
  };
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(target.port));
  if (::inet_pton(AF_INET, target.host.c_str(), &addr.sin_addr) != 1) {
    return finish(false);
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return finish(false);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) {
      return finish(false);
    }
    if (!WaitFor(fd, POLLOUT, deadline)) {
      return finish(true);
    }
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      return finish(false);
    }
  }
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", target.host, ":",
                                           target.port, "\r\nConnection: close\r\n\r\n");
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!WaitFor(fd, POLLOUT, deadline)) {
        return finish(true);
      }
    } else {
      return finish(false);
    }
  }
  std::string answer;
  char buf[4096];
  while (true) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      if (answer.size() < 64) {
        answer.append(buf, static_cast<std::size_t>(n));
      }
      continue;
    }
    if (n == 0) {
      break;
    }
    if (errno == EAGAIN || errno == EINTR) {
      if (!WaitFor(fd, POLLIN, deadline)) {
        return finish(true);
      }
      continue;
    }
    break;  // reset
  }
  result.status = StatusOf(answer);
  return finish(false);
}

}  // namespace

ProbeResult ProbeOnce(const Target& target, const std::string& path, Millis timeout) {
  return Probe(target, path, timeout);
}

LatencySummary Summarize(std::vector<std::int64_t> latencies_us, std::int64_t failures) {
  LatencySummary s;
  s.count = static_cast<std::int64_t>(latencies_us.size());
  s.failures = failures;
  if (latencies_us.empty()) {
    return s;
  }
  std::sort(latencies_us.begin(), latencies_us.end());
  const auto rank = [&](double q) {
    // Nearest rank: the smallest value with at least q of the samples at or below it.
    const auto n = latencies_us.size();
    std::size_t k = static_cast<std::size_t>(q * static_cast<double>(n) + 0.999999);
    k = std::clamp<std::size_t>(k, 1, n);
    return static_cast<double>(latencies_us[k - 1]) / 1000.0;
  };
  s.p50_ms = rank(0.50);
  s.p99_ms = rank(0.99);
  s.max_ms = static_cast<double>(latencies_us.back()) / 1000.0;
  s.latencies_us = std::move(latencies_us);
  return s;
}

LatencySummary Pool(const LatencySummary& a, const LatencySummary& b) {
  std::vector<std::int64_t> all = a.latencies_us;
  all.insert(all.end(), b.latencies_us.begin(), b.latencies_us.end());
  return Summarize(std::move(all), a.failures + b.failures);
}

ProcSummary Pool(const ProcSummary& a, const ProcSummary& b) {
  if (a.samples == 0) {
    return b;
  }
  if (b.samples == 0) {
    return a;
  }
  ProcSummary pooled;
  pooled.first = a.first;
  pooled.last = b.last;
  pooled.max_rss_kb = std::max(a.max_rss_kb, b.max_rss_kb);
  pooled.max_threads = std::max(a.max_threads, b.max_threads);
  pooled.samples = a.samples + b.samples;
  pooled.cpu_seconds = a.cpu_seconds + b.cpu_seconds;
  pooled.wall_seconds = a.wall_seconds + b.wall_seconds;
  return pooled;
}

std::string SamplesLine(const LatencySummary& s) {
  return absl::StrCat("probe-samples failures=", s.failures,
                      " us=", absl::StrJoin(s.latencies_us, ","));
}

std::optional<LatencySummary> ParseSamplesLine(std::string_view line) {
  absl::string_view rest = core::ToAbsl(line);
  std::int64_t failures = 0;
  if (!absl::ConsumePrefix(&rest, "probe-samples failures=")) {
    return std::nullopt;
  }
  const std::size_t space = rest.find(' ');
  if (space == absl::string_view::npos || !absl::SimpleAtoi(rest.substr(0, space), &failures) ||
      failures < 0) {
    return std::nullopt;
  }
  rest.remove_prefix(space + 1);
  if (!absl::ConsumePrefix(&rest, "us=")) {
    return std::nullopt;
  }
  std::vector<std::int64_t> us;
  for (absl::string_view item : absl::StrSplit(rest, ',', absl::SkipEmpty())) {
    std::int64_t v = 0;
    if (!absl::SimpleAtoi(item, &v) || v < 0) {
      return std::nullopt;
    }
    us.push_back(v);
  }
  if (failures > static_cast<std::int64_t>(us.size())) {
    return std::nullopt;
  }
  return Summarize(std::move(us), failures);
}

void HealthProbe::StartChild() {
  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  if (::pipe2(in, O_CLOEXEC) != 0) {
    return;
  }
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return;
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  const std::string url =
      absl::StrCat("http://", options_.target.host, ":", options_.target.port, options_.path);
  std::vector<std::string> args = {options_.process,
                                   "--attack",
                                   "probe",
                                   "--url",
                                   url,
                                   "--probe-interval-ms",
                                   std::to_string(options_.interval.count()),
                                   "--probe-timeout-ms",
                                   std::to_string(options_.timeout.count()),
                                   "--until-eof",
                                   "1"};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, options_.process.c_str(), &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    return;
  }
  child_ = pid;
  child_stdin_ = in[1];
  child_stdout_ = out[0];
}

LatencySummary HealthProbe::StopChild() {
  if (child_ < 0) {
    return {};
  }
  ::close(child_stdin_);  // the child stops probing, prints its samples and exits
  std::string report;
  char buf[16384];
  while (true) {
    const ssize_t n = ::read(child_stdout_, buf, sizeof(buf));
    if (n > 0) {
      report.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(child_stdout_);
  int status = 0;
  ::waitpid(child_, &status, 0);
  child_ = -1;
  for (absl::string_view line : absl::StrSplit(report, '\n')) {
    if (std::optional<LatencySummary> s = ParseSamplesLine(core::ToStd(line))) {
      return *std::move(s);
    }
  }
  return {};
}

void HealthProbe::Start() {
  stop_ = false;
  if (!options_.process.empty()) {
    return StartChild();
  }
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      const Clock::time_point start = Clock::now();
      const ProbeResult r = Probe(options_.target, options_.path, options_.timeout);
      const auto us =
          r.timed_out ? std::chrono::duration_cast<std::chrono::microseconds>(options_.timeout)
                      : std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
      {
        absl::MutexLock lock(&mu_);
        latencies_us_.push_back(us.count());
        failures_ += r.status == 200 ? 0 : 1;
      }
      const Clock::time_point next = Clock::now() + options_.interval;
      while (!stop_.load() && Clock::now() < next) {
        std::this_thread::sleep_for(std::min<Clock::duration>(next - Clock::now(), Millis(10)));
      }
    }
  });
}

LatencySummary HealthProbe::Stop() {
  if (!options_.process.empty()) {
    return StopChild();
  }
  stop_ = true;
  if (thread_.joinable()) {
    thread_.join();
  }
  absl::MutexLock lock(&mu_);
  return Summarize(latencies_us_, failures_);
}

ProcStatus ReadProcStatus(pid_t pid) {
  ProcStatus status;
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  bool rss = false;
  bool threads = false;
  while (std::getline(in, line)) {
    absl::string_view view = line;
    if (absl::ConsumePrefix(&view, "VmRSS:")) {
      view = absl::StripAsciiWhitespace(view);
      absl::ConsumeSuffix(&view, "kB");
      rss = absl::SimpleAtoi(absl::StripAsciiWhitespace(view), &status.rss_kb);
    } else if (absl::ConsumePrefix(&view, "Threads:")) {
      threads = absl::SimpleAtoi(absl::StripAsciiWhitespace(view), &status.threads);
    }
  }
  status.ok = rss && threads;
  status.at = Clock::now();
  // /proc/<pid>/stat: "pid (comm) state ..." where comm may hold spaces and parentheses; utime
  // and stime are the 12th and 13th fields after the last ')'.
  std::ifstream stat_file(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat_line;
  std::getline(stat_file, stat_line);
  const std::size_t close = stat_line.rfind(')');
  if (close != std::string::npos) {
    const std::vector<absl::string_view> fields =
        absl::StrSplit(absl::string_view(stat_line).substr(close + 1), ' ', absl::SkipEmpty());
    std::int64_t utime = 0;
    std::int64_t stime = 0;
    if (fields.size() > 12 && absl::SimpleAtoi(fields[11], &utime) &&
        absl::SimpleAtoi(fields[12], &stime)) {
      status.cpu_seconds =
          static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
    }
  }
  return status;
}

void ProcSampler::Sample() {
  const ProcStatus now = ReadProcStatus(pid_);
  if (!now.ok) {
    return;
  }
  if (guard_rss_kb_ > 0 && now.rss_kb > guard_rss_kb_) {
    guard_ = true;
  }
  absl::MutexLock lock(&mu_);
  if (summary_.samples == 0) {
    summary_.first = now;
  }
  summary_.last = now;
  summary_.max_rss_kb = std::max(summary_.max_rss_kb, now.rss_kb);
  summary_.max_threads = std::max(summary_.max_threads, now.threads);
  ++summary_.samples;
}

void ProcSampler::Start() {
  stop_ = false;
  Sample();
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      const Clock::time_point next = Clock::now() + interval_;
      while (!stop_.load() && Clock::now() < next) {
        std::this_thread::sleep_for(std::min<Clock::duration>(next - Clock::now(), Millis(10)));
      }
      Sample();
    }
  });
}

ProcSummary ProcSampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) {
    thread_.join();
  }
  absl::MutexLock lock(&mu_);
  ProcSummary summary = summary_;
  if (summary.samples > 1) {
    summary.cpu_seconds = summary.last.cpu_seconds - summary.first.cpu_seconds;
    summary.wall_seconds =
        std::chrono::duration<double>(summary.last.at - summary.first.at).count();
  }
  return summary;
}

}  // namespace pulse::testing::attack
