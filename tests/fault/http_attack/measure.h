// One measured attack (tests/fault/http_attack): the server's idle figures first (a /healthz
// probe for `idle`, then its VmRSS and thread count), then the attack with the probe and the
// process sampler running beside it. With `rounds` > 1 the idle probe and the attack alternate
// (idle A, attack B, A, B, ...), each window 1/rounds of its total, and the windows of each
// side are pooled: a busy moment of a shared machine cannot land on one side only. For the streams
// attack the probe runs only while the streams are held (not while ten thousand connections are
// being opened). With `reference_port` set, a second probe measures an unattacked server at
// the same moments in every window. Shared by tests/fault/transport_attack_test.cc and the
// pulse-http-attack tool. Not thread-safe: MeasureAttack blocks its thread; `during` runs on a
// thread of its own.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "attack.h"
#include "probe.h"

namespace pulse::testing::attack {

struct MeasureOptions {
  pid_t pid = 0;         // the server's process; 0: no memory or thread figures
  Millis idle{10'000};   // the idle probe before the attack (0: none), over all rounds
  int rounds = 1;        // idle/attack alternations; the attack's duration is split likewise
  Millis settle{1'000};  // after an attack round, before the next idle window
  // An idle probe after the last round (after `settle`), pooled with the idle windows: the
  // idle side then brackets the attack in time (the streams case: half before, half after).
  Millis idle_after{0};
  bool probe = true;
  ProbeOptions probe_options;  // target defaults to the attack's
  // The port of a second server like the attacked one that nothing attacks (0: none). The same
  // probe runs against it beside the probe of the attacked server, in every window, so the
  // attacked server's p99 can be set against an idle server's measured at the same moments
  // (Measured::ReferenceP99Ratio): on a shared VM the machine's own slow periods last tens of
  // seconds, longer than a window, and land on whichever side of an alternation they fall in.
  int reference_port = 0;
  Millis sample_interval{200};
  // Stop the attack once the server's VmRSS grew this much over its idle figure (0: never),
  // so a server without bounds cannot take the machine down.
  std::int64_t guard_growth_kb = 0;
  // Called once on a thread of its own when the attack is under way (streams: held; the first
  // round), with the live counters; the attack waits for it before it reports.
  std::function<void(const AttackProgress&)> during;
};

struct Measured {
  int rounds = 0;                 // the idle/attack alternations run
  LatencySummary idle_healthz;    // every idle window
  ProcStatus idle;                // after the first idle window, before the first attack round
  AttackReport attack;            // every round's, absorbed
  LatencySummary healthz;         // during the attack rounds (streams: the hold)
  ProcSummary server;             // during the attack rounds
  LatencySummary reference_idle;  // the reference server (reference_port) in the idle windows
  LatencySummary reference;       // the reference server while the other is attacked
  // Each round's /healthz p99, idle and under attack (the pair measured back to back).
  std::vector<std::pair<double, double>> round_p99_ms;
  std::int64_t GrowthKb() const { return server.max_rss_kb - idle.rss_kb; }
  // The median over the rounds of (attacked p99 / idle p99): a busy moment of the machine
  // spoils one pair, not the figure (0 when no round had both probes).
  double MedianRoundP99Ratio() const;
  // The attacked windows' pooled p99 over the idle windows' pooled p99 (0 without both). With
  // idle and attacked windows of equal total length, alternating, both sides are exposed alike
  // to the machine's own stalls, which on a shared VM are ~4 ms and come in bursts: a p99 of
  // sub-millisecond probes is one of them or not depending on how long a window ran.
  double PooledP99Ratio() const;
  // The attacked server's p99 over the reference server's in the same attack windows (0
  // without both): what the attack did to the server, apart from what the machine did to both.
  double ReferenceP99Ratio() const;
  // The same in the idle windows: two idle servers, so about 1 (0 without both).
  double IdleReferenceP99Ratio() const;
};

absl::StatusOr<Measured> MeasureAttack(const AttackOptions& attack, const MeasureOptions& options);

// A human summary, one fact per line, and the same figures as one JSON object.
std::string Describe(const Measured& m, const AttackOptions& attack);
std::string ToJson(const Measured& m, const AttackOptions& attack);

}  // namespace pulse::testing::attack
