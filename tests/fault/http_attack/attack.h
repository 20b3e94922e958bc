// Hostile HTTP clients against a running server, from one process: plain POSIX sockets,
// non-blocking, on one epoll loop, so one thread holds ten thousand connections (raise the
// descriptor limit first: RaiseFileLimit). The attacks are those of issue 22
// (tests/fault/TRANSPORT.md):
//   kRequestLine   N connections send "GET /aaaa..." and never a line end;
//   kHeaderValue   N connections send a request line, then one header value without end;
//   kHeaderCount   N connections send millions of small header lines, then the blank line;
//   kSlowloris     C connections send a request head a few bytes every couple of seconds;
//   kStreams       N authenticated `GET /api/agent/events` streams held open, counting every
//                  stream's frames and heartbeats.
// Every connection's fate is recorded: closed by the server (EOF or reset, with the status of
// whatever the server answered first) or still open at the end, and how long it lived. A
// connection the server closes is replaced after `reconnect_delay` (except streams), so the
// pressure lasts for the whole run. Used by tests/fault/transport_attack_test.cc and the
// pulse-http-attack tool (docs/performance.md, "HTTP transport attacks").
// Not thread-safe: RunAttack blocks its thread; AttackProgress may be read from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::testing::attack {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

// An IPv4 server address.
struct Target {
  std::string host = "127.0.0.1";
  int port = 0;
};

// "http://HOST:PORT[/...]" or "HOST:PORT" (HOST an IPv4 literal or "localhost").
absl::StatusOr<Target> ParseTarget(std::string_view url);

// Raises the soft RLIMIT_NOFILE to `wanted` (capped at the hard limit); the limit now in force.
std::uint64_t RaiseFileLimit(std::uint64_t wanted);

// `count` loopback source addresses 127.0.1.1, 127.0.1.2, ... (then 127.0.2.1, ...), so a
// server's per-peer cap sees many peers; the probe stays on 127.0.0.1.
std::vector<std::string> LoopbackSources(int count);

enum class AttackKind { kRequestLine, kHeaderValue, kHeaderCount, kSlowloris, kStreams };

// "request-line", "header-value", "header-count", "slowloris", "streams".
std::string_view AttackName(AttackKind kind);
absl::StatusOr<AttackKind> ParseAttackKind(std::string_view name);

struct AttackOptions {
  AttackKind kind = AttackKind::kSlowloris;
  Target target;
  int connections = 1;
  // How long the attack lasts; for kStreams, how long the streams are held once all of them
  // answered (or the ramp timed out).
  Millis duration{60'000};
  // kRequestLine, kHeaderValue: bytes each connection pushes before it stops writing.
  std::uint64_t bytes_per_connection = 400ull << 20;
  // kHeaderCount: header lines ("X-Hd: 1\r\n", 9 bytes each) per request.
  std::uint64_t header_lines = 3'000'000;
  // kSlowloris: `slow_bytes` every `slow_interval`, on every connection.
  int slow_bytes = 8;
  Millis slow_interval{2'000};
  // kStreams: the request path and the tokens (X-API-Token), used round-robin.
  std::string stream_path = "/api/agent/events";
  std::vector<std::string> tokens;
  // kStreams: the longest the opening of every stream may take before the hold starts.
  Millis ramp_timeout{60'000};
  // Source addresses to bind, used round-robin ("" or empty: the kernel's choice).
  std::vector<std::string> sources;
  // A connection the server closed is replaced after this long (not for kStreams).
  Millis reconnect_delay{1'000};
  // A connection open longer than this counts as `outlived` (the server did not close it).
  Millis close_within{15'000};
  // Connections being opened at once (connect() in flight); bounds the SYN burst.
  int max_connecting = 64;
  Millis connect_timeout{5'000};
  // When set and true, the attack stops early (e.g. the server's memory passed a guard).
  const std::atomic<bool>* stop = nullptr;
  // The attacking thread's nice value (0 leaves it as it is). A remote attacker spends its own
  // CPU; on one machine the attacking client takes the cores the server and its probe need.
  // At 19 it runs on what they leave, while the server's own work for the attack (reads,
  // parsing, timers, refusals) still competes with the probe at full priority: that work is
  // what the acceptance suite measures (tests/fault/TRANSPORT.md).
  int nice = 0;
  // Runs the attacking thread under SCHED_IDLE (after `nice`, which it then overrides): any
  // thread of normal priority that wakes on its core preempts it at once. A nice value only
  // weights the share: on Linux 6.x (EEVDF, HZ=250, no kernel preemption) a task woken while a
  // nice 19 one runs can wait for the next tick, 4 ms, and on CI those waits were the 1 % tail
  // of the probe's latency (tests/fault/TRANSPORT.md, "The CI failure of 2026-12-02, again").
  bool sched_idle = false;
};

// Live counters, readable from another thread while RunAttack runs.
struct AttackProgress {
  std::atomic<std::int64_t> open{0};              // connections established and not closed
  std::atomic<std::int64_t> streams_ready{0};     // kStreams: 200 and the first frame read
  std::atomic<std::int64_t> streams_answered{0};  // kStreams: any status, or a close
  std::atomic<bool> holding{false};               // kStreams: the hold phase started
};

// One kStreams stream, from the request to the end of the run.
struct StreamRecord {
  int status = 0;            // 0: no answer
  bool ready = false;        // 200 and a first frame
  bool ended_early = false;  // the server closed it (after or before answering)
  std::int64_t frames = 0;
  std::int64_t heartbeats = 0;
  Millis held{0};         // from its first frame to its close or the end of the run
  Millis max_silence{0};  // the longest gap between frames, including the last one to the end
};

struct AttackReport {
  AttackKind kind = AttackKind::kSlowloris;
  Millis elapsed{0};
  bool stopped_early = false;  // AttackOptions::stop fired
  std::int64_t opened = 0;     // connections established
  std::int64_t connect_failed = 0;
  std::int64_t closed_by_server = 0;  // EOF or reset seen
  std::int64_t open_at_end = 0;
  std::int64_t outlived = 0;  // open longer than close_within (closed late or still open)
  Millis longest_open{0};     // the longest any connection lived
  std::map<int, std::int64_t> statuses;  // status code of the server's first answer -> count
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  // kStreams only.
  Millis ramp{0};  // from the first connect to the last stream's answer
  std::vector<StreamRecord> streams;

  // Answers with a 2xx status (an attacking request that was served).
  std::int64_t Served() const;
  // kStreams: streams that did not become ready, that ended early, the fewest heartbeats of a
  // ready stream, the longest silence of any ready stream.
  std::int64_t StreamsNotReady() const;
  std::int64_t StreamsEndedEarly() const;
  std::int64_t MinHeartbeats() const;
  Millis MaxSilence() const;
  // kStreams: ready streams with fewer heartbeats than one per `interval` of their hold, minus
  // one (the first heartbeat comes an interval after the stream opened; a late one is allowed).
  std::int64_t StreamsShortOfHeartbeats(Millis interval) const;
  // "status:count,..." ("none" when the server never answered).
  std::string StatusSummary() const;
  // Adds a later run of the same attack (MeasureOptions::rounds): counts and bytes summed,
  // the longest open and stopped_early over both, streams appended.
  void Absorb(const AttackReport& later);
};

// Runs the attack until its duration passed (or options.stop fired); fails only when the
// options are unusable (no port, streams without a token, a bad source address).
absl::StatusOr<AttackReport> RunAttack(const AttackOptions& options,
                                       AttackProgress* progress = nullptr);

}  // namespace pulse::testing::attack
