// What a server looks like from outside while it is attacked (tests/fault/http_attack): the
// latency of `GET /healthz` on fresh connections, one after another on a thread of its own,
// and the server process's resident memory and thread count from /proc/<pid>/status, sampled
// on another. Used by tests/fault/transport_attack_test.cc, the pulse-http-attack tool and
// (through the tool) cmake/bench-http.sh.
// Thread-safe as documented per method.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "attack.h"

namespace pulse::testing::attack {

// One GET `path` on a fresh connection (`Connection: close`), read to the server's close.
struct ProbeResult {
  int status = 0;  // 0: no complete status line (refused, reset, timed out)
  bool timed_out = false;
  Millis latency{0};  // from connect() to the close (the timeout when timed out)
};
ProbeResult ProbeOnce(const Target& target, const std::string& path, Millis timeout);

struct LatencySummary {
  std::int64_t count = 0;
  std::int64_t failures = 0;  // not 200: refused, reset, timed out, another status
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
  std::vector<std::int64_t> latencies_us;  // every sample, sorted (so summaries can be pooled)
};
// The line a `--until-eof` probe prints last, and its parser (nullopt when malformed).
std::string SamplesLine(const LatencySummary& s);
std::optional<LatencySummary> ParseSamplesLine(std::string_view line);
// Nearest-rank percentiles of `latencies_us` (microseconds); failures already included.
LatencySummary Summarize(std::vector<std::int64_t> latencies_us, std::int64_t failures);
// The summary of both sample sets together (the percentiles of the pooled samples).
LatencySummary Pool(const LatencySummary& a, const LatencySummary& b);

struct ProbeOptions {
  Target target;
  std::string path = "/healthz";
  Millis interval{50};    // between the end of one probe and the start of the next
  Millis timeout{5'000};  // a probe that takes longer counts as a failure of this latency
  // When set, the probe runs in a child process: this pulse-http-attack binary in its `probe`
  // mode (`--until-eof`: it probes until its stdin closes, then prints every sample). It then
  // shares nothing with an attacking client in this process — threads, allocator, the address
  // space's locks: with 10,000 streams read by this process an in-process probe saw a 230 ms
  // stall that a probe from another process, at the same moment, never saw.
  std::string process;
};

// Probes on a thread of its own (or in a child process: ProbeOptions::process) from Start to
// Stop. A failed probe (refused, timed out, not 200) counts in the percentiles with its
// latency, so timeouts push p99 to the timeout. A child that cannot start or report gives an
// empty summary (count 0).
class HealthProbe {
 public:
  explicit HealthProbe(ProbeOptions options) : options_(std::move(options)) {}
  ~HealthProbe() { Stop(); }
  HealthProbe(const HealthProbe&) = delete;
  HealthProbe& operator=(const HealthProbe&) = delete;

  void Start();
  // Joins the thread (waiting for a probe in flight) and returns the summary since Start.
  LatencySummary Stop();

 private:
  void StartChild();
  LatencySummary StopChild();

  ProbeOptions options_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  pid_t child_ = -1;
  int child_stdin_ = -1;   // closing it tells the child to stop
  int child_stdout_ = -1;  // its report
  absl::Mutex mu_;
  std::vector<std::int64_t> latencies_us_ ABSL_GUARDED_BY(mu_);
  std::int64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
};

// VmRSS and Threads of a process.
struct ProcStatus {
  std::int64_t rss_kb = 0;
  std::int64_t threads = 0;
  double cpu_seconds = 0;  // user + system time of every thread so far (/proc/<pid>/stat)
  Clock::time_point at{};  // when it was read
  bool ok = false;         // false when /proc/<pid>/status could not be read (the process is gone)
};
ProcStatus ReadProcStatus(pid_t pid);

struct ProcSummary {
  ProcStatus first;
  ProcStatus last;
  std::int64_t max_rss_kb = 0;
  std::int64_t max_threads = 0;
  std::int64_t samples = 0;
  double cpu_seconds = 0;   // CPU time spent between the first and the last sample
  double wall_seconds = 0;  // time between them
  // The CPU time over the wall time: 1.0 is one core busy throughout (0 without two samples).
  double CpuShare() const { return wall_seconds > 0 ? cpu_seconds / wall_seconds : 0; }
};
// Both sampling periods as one: the first's first status, the second's last, the maxima, the
// CPU and wall time of both (not the gap between them).
ProcSummary Pool(const ProcSummary& a, const ProcSummary& b);

// Samples a process every `interval` on a thread of its own from Start to Stop. When
// `guard_rss_kb` > 0, guard() turns true once VmRSS passed it (to stop an attack before it
// takes the machine down).
class ProcSampler {
 public:
  ProcSampler(pid_t pid, Millis interval = Millis(200), std::int64_t guard_rss_kb = 0)
      : pid_(pid), interval_(interval), guard_rss_kb_(guard_rss_kb) {}
  ~ProcSampler() { Stop(); }
  ProcSampler(const ProcSampler&) = delete;
  ProcSampler& operator=(const ProcSampler&) = delete;

  void Start();
  ProcSummary Stop();
  // Thread-safe.
  const std::atomic<bool>& guard() const { return guard_; }

 private:
  void Sample();

  pid_t pid_;
  Millis interval_;
  std::int64_t guard_rss_kb_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> guard_{false};
  std::thread thread_;
  absl::Mutex mu_;
  ProcSummary summary_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::testing::attack
