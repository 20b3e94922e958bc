// AgentRuntime: pulse-agent's side of the connection (docs/agent.md, "Protocol"). The agent
// dials the server; the server never dials it. Run() keeps one command stream open (GET
// /api/agents/commands, an event stream: a `hello` frame, then `command` frames), posts a
// report now and every interval (POST /api/agents/report), and executes commands one at a time
// on a worker thread in the order they came, posting each result (POST /api/agents/results);
// a `report` command is answered with a fresh report in reply to it. A dropped or refused
// stream is dialled again after a jittered exponential backoff (ReconnectBackoff) that resets
// once a stream stayed up long enough. A 401 or 403 on any request is fatal: Run returns at
// once, naming the server's error code, instead of hammering the server with a refused token.
// Stopping (the flag Run polls) ends the stream, lets the running command finish and posts
// its result; queued commands are left to the server, which sends them again.
// Thread-safety: Run and PostReport from one thread at a time; the runtime's own threads are
// joined before Run returns. Lifetime: borrows the fleet, the executor and the clock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/adapters/hostagent/agent_executor.h"
#include "pulse/adapters/hostagent/wire.h"
#include "pulse/core/ports/clock.h"

namespace pulse::http_client {
class HttpClient;
}  // namespace pulse::http_client

namespace pulse::adapters::hostagent {

// The agent's routes on the server.
inline constexpr std::string_view kReportPath = "/api/agents/report";
inline constexpr std::string_view kCommandsPath = "/api/agents/commands";
inline constexpr std::string_view kResultsPath = "/api/agents/results";

enum class AgentLogLevel { kDebug, kInfo, kWarning, kError };
// One log line (no trailing newline). Called from the runtime's threads.
using AgentLogFn = std::function<void(AgentLogLevel level, std::string_view line)>;

// Reconnect delays: `initial` doubling up to `max`, each drawn within ±20 % (so a fleet of
// agents cut off together does not return together). Not thread-safe.
class ReconnectBackoff {
 public:
  ReconnectBackoff(absl::Duration initial, absl::Duration max, std::uint64_t seed)
      : initial_(initial), max_(max), next_(initial), random_(seed) {}
  // The delay before the next attempt; the one after is twice as long (at most max).
  absl::Duration Next();
  // Back to `initial` (a stream stayed up long enough).
  void Reset() { next_ = initial_; }

 private:
  absl::Duration initial_;
  absl::Duration max_;
  absl::Duration next_;
  std::mt19937_64 random_;
};

struct AgentRuntimeOptions {
  std::string server_url;  // http(s)://host:port[/prefix]
  std::string token;       // the agent token, sent as "Authorization: Bearer <token>"
  std::string agent_version;
  absl::Duration interval = absl::Seconds(30);  // between unsolicited reports (1 s .. 1 h)
  // TLS: a CA file, or the server certificate's SHA-256 fingerprint (not both).
  std::string ca_file;
  std::string pin_sha256;
  absl::Duration backoff_initial = absl::Seconds(1);
  absl::Duration backoff_max = absl::Seconds(60);
  // A stream that stayed open this long resets the backoff.
  absl::Duration backoff_reset_after = absl::Seconds(60);
  absl::Duration request_timeout = absl::Seconds(30);
  // Longest silence on the stream (the server sends a heartbeat every 15 s) before it is
  // taken for dead and dialled again.
  absl::Duration stream_idle_timeout = absl::Seconds(60);
  // Commands waiting for the worker; more are dropped (the server sends them again).
  std::size_t max_queued_commands = 64;
  AgentLogFn log;  // may be empty
};

class AgentRuntime {
 public:
  // InvalidArgument for a bad server URL (the message names --server, never the URL), an
  // interval outside 1 s .. 1 h, an empty token, or a CA file / pin HttpClient refuses.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AgentRuntime>> Open(
      AgentRuntimeOptions options, agents::LocalHostFleet& fleet, AgentExecutor& executor,
      const core::Clock& clock);

  ~AgentRuntime();
  AgentRuntime(const AgentRuntime&) = delete;
  AgentRuntime& operator=(const AgentRuntime&) = delete;

  // Posts one report of the host. OK when the server accepted it; Unauthenticated (401) or
  // PermissionDenied (403) with the server's error code in the message; InvalidArgument when
  // the server refused the report (400); Unavailable for anything else.
  [[nodiscard]] absl::Status PostReport(std::string_view in_reply_to = "");

  // Runs until `stop` becomes true (then OK, after the running command's result was posted)
  // or a fatal refusal (Unauthenticated / PermissionDenied as PostReport).
  [[nodiscard]] absl::Status Run(const std::atomic<bool>& stop);

  // Streams opened so far (each dial that got a 200 and a hello).
  std::size_t streams_opened() const { return streams_opened_.load(); }

 private:
  AgentRuntime(AgentRuntimeOptions options, agents::LocalHostFleet& fleet, AgentExecutor& executor,
               const core::Clock& clock, std::unique_ptr<http_client::HttpClient> requests,
               std::unique_ptr<http_client::HttpClient> stream);

  void Log(AgentLogLevel level, std::string_view line) const;
  // Ends Run: the stream is cancelled, the threads stop waiting.
  void Halt(absl::Status fatal = absl::OkStatus());
  bool halted() const { return halt_.load(); }
  // Sleeps up to `d`, returning early once halted.
  void SleepUnlessHalted(absl::Duration d) const;
  // One dial of the command stream, until it ends. Unauthenticated/PermissionDenied are fatal.
  absl::Status StreamOnce();
  void OnEvent(std::string_view event, std::string_view data, bool& saw_hello, bool& broken);
  void Enqueue(Command command);
  void ReporterLoop();
  void WorkerLoop();
  absl::Status PostResult(const Result& result);
  // `cancelled` may be null.
  absl::Status PostReport(std::string_view in_reply_to, const std::atomic<bool>* cancelled);
  absl::StatusOr<std::string> Post(std::string_view path, const std::string& body,
                                   const std::atomic<bool>* cancelled);

  const AgentRuntimeOptions options_;
  agents::LocalHostFleet& fleet_;
  AgentExecutor& executor_;
  const core::Clock& clock_;
  const std::unique_ptr<http_client::HttpClient> requests_;
  const std::unique_ptr<http_client::HttpClient> stream_;
  std::atomic<bool> halt_{false};
  std::atomic<std::size_t> streams_opened_{0};
  absl::Mutex mu_;
  std::deque<Command> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> pending_ids_ ABSL_GUARDED_BY(mu_);  // queued or running
  absl::Status fatal_ ABSL_GUARDED_BY(mu_);
};

// The status a 401 or 403 reply becomes: Unauthenticated / PermissionDenied naming the
// server's error code (the envelope's "error") and message. Other statuses: Unavailable.
absl::Status RefusalStatus(int http_status, std::string_view body);

}  // namespace pulse::adapters::hostagent
