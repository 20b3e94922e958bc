#include "measure.h"

#include <algorithm>
#include <future>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pulse::testing::attack {
namespace {

double Seconds(Millis d) { return static_cast<double>(d.count()) / 1000.0; }
double Mb(std::int64_t kb) { return static_cast<double>(kb) / 1024.0; }

// "12.3 MB" or "4.5 kB".
std::string Bytes(std::uint64_t n) {
  return n >= (1u << 20) ? absl::StrFormat("%.1f MB", static_cast<double>(n) / 1048576.0)
                         : absl::StrFormat("%.1f kB", static_cast<double>(n) / 1024.0);
}

std::string LatencyLine(const char* what, const LatencySummary& s) {
  return absl::StrFormat("%s: %d probes, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d failed\n", what,
                         s.count, s.p50_ms, s.p99_ms, s.max_ms, s.failures);
}

std::string LatencyJson(const LatencySummary& s) {
  return absl::StrFormat(R"({"count":%d,"failures":%d,"p50Ms":%.3f,"p99Ms":%.3f,"maxMs":%.3f})",
                         s.count, s.failures, s.p50_ms, s.p99_ms, s.max_ms);
}

}  // namespace

namespace {

// One attack window with the probe and the process sampler beside it.
struct Round {
  absl::StatusOr<AttackReport> report;
  LatencySummary healthz;
  LatencySummary reference;
  ProcSummary server;
};

// The probe of the reference server (MeasureOptions::reference_port), if there is one.
std::unique_ptr<HealthProbe> StartReference(const MeasureOptions& options,
                                            const ProbeOptions& probe_options) {
  if (!options.probe || options.reference_port <= 0) {
    return nullptr;
  }
  ProbeOptions reference = probe_options;
  reference.target.port = options.reference_port;
  auto probe = std::make_unique<HealthProbe>(reference);
  probe->Start();
  return probe;
}

LatencySummary StopReference(const std::unique_ptr<HealthProbe>& probe) {
  return probe != nullptr ? probe->Stop() : LatencySummary();
}

struct IdleWindow {
  LatencySummary healthz;
  LatencySummary reference;
};

IdleWindow ProbeIdle(const MeasureOptions& options, const ProbeOptions& probe_options,
                     Millis length) {
  HealthProbe idle(probe_options);
  idle.Start();
  const std::unique_ptr<HealthProbe> reference = StartReference(options, probe_options);
  std::this_thread::sleep_for(length);
  IdleWindow window;
  window.healthz = idle.Stop();
  window.reference = StopReference(reference);
  return window;
}

Round RunRound(const AttackOptions& run_options, const MeasureOptions& options,
               const ProbeOptions& probe_options, std::int64_t guard, bool call_during) {
  Round round;
  std::unique_ptr<ProcSampler> sampler;
  AttackOptions run = run_options;
  if (options.pid > 0) {
    sampler = std::make_unique<ProcSampler>(options.pid, options.sample_interval, guard);
    sampler->Start();
    if (run.stop == nullptr) {
      run.stop = &sampler->guard();
    }
  }
  AttackProgress progress;
  std::future<absl::StatusOr<AttackReport>> report =
      std::async(std::launch::async, [&] { return RunAttack(run, &progress); });
  // The probe (and `during`) start once the attack is under way: at once, or for streams
  // once they are held.
  const bool wait_for_hold = run.kind == AttackKind::kStreams;
  while (wait_for_hold && !progress.holding.load() &&
         report.wait_for(std::chrono::milliseconds(20)) == std::future_status::timeout) {
  }
  std::unique_ptr<HealthProbe> probe;
  if (options.probe) {
    probe = std::make_unique<HealthProbe>(probe_options);
    probe->Start();
  }
  const std::unique_ptr<HealthProbe> reference = StartReference(options, probe_options);
  std::thread during;
  if (call_during && options.during) {
    during = std::thread([&] { options.during(progress); });
  }
  round.report = report.get();
  if (during.joinable()) {
    during.join();
  }
  if (probe != nullptr) {
    round.healthz = probe->Stop();
  }
  round.reference = StopReference(reference);
  if (sampler != nullptr) {
    round.server = sampler->Stop();
  }
  return round;
}

}  // namespace

absl::StatusOr<Measured> MeasureAttack(const AttackOptions& attack, const MeasureOptions& options) {
  Measured m;
  ProbeOptions probe_options = options.probe_options;
  if (probe_options.target.port == 0) {
    probe_options.target = attack.target;
  }
  const int rounds = std::max(1, options.rounds);
  const Millis idle_each = options.idle / rounds;
  const Millis attack_each = attack.duration / rounds;
  std::int64_t guard = 0;
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) {
      std::this_thread::sleep_for(options.settle);  // the last round's connections close
    }
    LatencySummary idle_window;
    if (options.probe && idle_each.count() > 0) {
      IdleWindow window = ProbeIdle(options, probe_options, idle_each);
      idle_window = std::move(window.healthz);
      m.idle_healthz = Pool(m.idle_healthz, idle_window);
      m.reference_idle = Pool(m.reference_idle, window.reference);
    }
    if (r == 0 && options.pid > 0) {
      m.idle = ReadProcStatus(options.pid);
      guard =
          options.guard_growth_kb > 0 && m.idle.ok ? m.idle.rss_kb + options.guard_growth_kb : 0;
    }
    AttackOptions run = attack;
    // The last round takes what the division left over.
    run.duration = r + 1 < rounds ? attack_each : attack.duration - attack_each * (rounds - 1);
    Round round = RunRound(run, options, probe_options, guard, r == 0);
    if (!round.report.ok()) {
      return round.report.status();
    }
    if (r == 0) {
      m.attack = *std::move(round.report);
    } else {
      m.attack.Absorb(*round.report);
    }
    if (idle_window.count > 0 && round.healthz.count > 0) {
      m.round_p99_ms.emplace_back(idle_window.p99_ms, round.healthz.p99_ms);
    }
    m.healthz = Pool(m.healthz, round.healthz);
    m.reference = Pool(m.reference, round.reference);
    m.server = Pool(m.server, round.server);
    m.rounds = r + 1;
    if (m.attack.stopped_early) {
      break;
    }
  }
  if (options.probe && options.idle_after.count() > 0) {
    std::this_thread::sleep_for(options.settle);  // the attack's connections close
    IdleWindow window = ProbeIdle(options, probe_options, options.idle_after);
    m.idle_healthz = Pool(m.idle_healthz, window.healthz);
    m.reference_idle = Pool(m.reference_idle, window.reference);
  }
  return m;
}

double Measured::PooledP99Ratio() const {
  return idle_healthz.p99_ms > 0 && healthz.count > 0 ? healthz.p99_ms / idle_healthz.p99_ms : 0;
}

double Measured::ReferenceP99Ratio() const {
  return reference.p99_ms > 0 && healthz.count > 0 ? healthz.p99_ms / reference.p99_ms : 0;
}

double Measured::IdleReferenceP99Ratio() const {
  return reference_idle.p99_ms > 0 && idle_healthz.count > 0
             ? idle_healthz.p99_ms / reference_idle.p99_ms
             : 0;
}

double Measured::MedianRoundP99Ratio() const {
  std::vector<double> ratios;
  for (const auto& [idle_p99, attacked_p99] : round_p99_ms) {
    if (idle_p99 > 0) {
      ratios.push_back(attacked_p99 / idle_p99);
    }
  }
  if (ratios.empty()) {
    return 0;
  }
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  return n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
}

std::string Describe(const Measured& m, const AttackOptions& attack) {
  const AttackReport& r = m.attack;
  std::string out = absl::StrFormat(
      "attack %s: %.1f s%s in %d round(s), %d connections: opened %d, connect failures %d, closed "
      "by server "
      "%d, open at end %d, open longer than %.0f s: %d, longest open %.1f s, answers %s, sent "
      "%s, received %s\n",
      AttackName(r.kind), Seconds(r.elapsed), r.stopped_early ? " (stopped by the RSS guard)" : "",
      m.rounds, attack.connections, r.opened, r.connect_failed, r.closed_by_server, r.open_at_end,
      Seconds(attack.close_within), r.outlived, Seconds(r.longest_open), r.StatusSummary(),
      Bytes(r.bytes_sent), Bytes(r.bytes_received));
  if (r.kind == AttackKind::kStreams) {
    absl::StrAppendFormat(
        &out,
        "streams: %d of %d ready after %.1f s, ended early %d, heartbeats at least %d per "
        "stream, longest silence %.1f s\n",
        static_cast<std::int64_t>(r.streams.size()) - r.StreamsNotReady(), r.streams.size(),
        Seconds(r.ramp), r.StreamsEndedEarly(), r.MinHeartbeats(), Seconds(r.MaxSilence()));
  }
  if (m.idle_healthz.count > 0) {
    out += LatencyLine("healthz idle", m.idle_healthz);
  }
  if (m.healthz.count > 0) {
    out += LatencyLine("healthz under attack", m.healthz);
  }
  if (!m.round_p99_ms.empty()) {
    out += "healthz p99 per round, idle -> attacked:";
    for (const auto& [idle_p99, attacked_p99] : m.round_p99_ms) {
      absl::StrAppendFormat(&out, " %.2f -> %.2f ms;", idle_p99, attacked_p99);
    }
    absl::StrAppendFormat(&out, " median ratio x%.2f\n", m.MedianRoundP99Ratio());
  }
  if (m.idle_healthz.count > 0 && m.healthz.count > 0) {
    absl::StrAppendFormat(&out,
                          "healthz p99 pooled, idle -> attacked: %.2f -> %.2f ms; ratio x%.2f\n",
                          m.idle_healthz.p99_ms, m.healthz.p99_ms, m.PooledP99Ratio());
  }
  if (m.reference.count > 0) {
    out += LatencyLine("healthz of the reference server, idle windows", m.reference_idle);
    out += LatencyLine("healthz of the reference server, attack windows", m.reference);
    absl::StrAppendFormat(&out,
                          "healthz p99 against the reference server at the same moments: idle "
                          "%.2f vs %.2f ms (x%.2f), attacked %.2f vs %.2f ms (x%.2f)\n",
                          m.idle_healthz.p99_ms, m.reference_idle.p99_ms, m.IdleReferenceP99Ratio(),
                          m.healthz.p99_ms, m.reference.p99_ms, m.ReferenceP99Ratio());
  }
  if (m.idle.ok) {
    absl::StrAppendFormat(&out,
                          "server: idle RSS %.1f MB, %d threads; under attack max RSS %.1f MB "
                          "(+%.1f MB), max %d threads, last %d threads, CPU %.0f %% of one core\n",
                          Mb(m.idle.rss_kb), m.idle.threads, Mb(m.server.max_rss_kb),
                          Mb(m.GrowthKb()), m.server.max_threads, m.server.last.threads,
                          100.0 * m.server.CpuShare());
  }
  return out;
}

std::string ToJson(const Measured& m, const AttackOptions& attack) {
  const AttackReport& r = m.attack;
  std::string statuses;
  for (const auto& [status, count] : r.statuses) {
    absl::StrAppend(&statuses, statuses.empty() ? "" : ",", "\"", status, "\":", count);
  }
  std::string out = absl::StrFormat(
      R"({"attack":"%s","seconds":%.3f,"rounds":%d,"stoppedEarly":%s,"connections":%d,"opened":%d,)"
      R"("connectFailed":%d,"closedByServer":%d,"openAtEnd":%d,"outlived":%d,)"
      R"("longestOpenSeconds":%.3f,"statuses":{%s},"bytesSent":%d,"bytesReceived":%d)",
      AttackName(r.kind), Seconds(r.elapsed), m.rounds, r.stopped_early ? "true" : "false",
      attack.connections, r.opened, r.connect_failed, r.closed_by_server, r.open_at_end, r.outlived,
      Seconds(r.longest_open), statuses, r.bytes_sent, r.bytes_received);
  if (r.kind == AttackKind::kStreams) {
    absl::StrAppendFormat(
        &out,
        R"(,"streams":{"requested":%d,"notReady":%d,"endedEarly":%d,"minHeartbeats":%d,)"
        R"("maxSilenceSeconds":%.3f,"rampSeconds":%.3f})",
        r.streams.size(), r.StreamsNotReady(), r.StreamsEndedEarly(), r.MinHeartbeats(),
        Seconds(r.MaxSilence()), Seconds(r.ramp));
  }
  absl::StrAppend(&out, R"(,"healthzIdle":)", LatencyJson(m.idle_healthz), R"(,"healthz":)",
                  LatencyJson(m.healthz));
  if (m.reference.count > 0) {
    absl::StrAppend(&out, R"(,"referenceIdle":)", LatencyJson(m.reference_idle), R"(,"reference":)",
                    LatencyJson(m.reference));
  }
  if (m.idle.ok) {
    absl::StrAppendFormat(
        &out,
        R"(,"server":{"idleRssKb":%d,"idleThreads":%d,"maxRssKb":%d,"growthKb":%d,)"
        R"("maxThreads":%d,"cpuShare":%.3f})",
        m.idle.rss_kb, m.idle.threads, m.server.max_rss_kb, m.GrowthKb(), m.server.max_threads,
        m.server.CpuShare());
  }
  return out + "}";
}

}  // namespace pulse::testing::attack
