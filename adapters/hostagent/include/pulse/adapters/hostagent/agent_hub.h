// AgentHub: the server's side of the host agents (docs/agent.md). It binds agent tokens to hosts
// (through the durable HostAgentStore), accepts reports, holds each host's command stream, sends
// commands and waits for their results, and answers what the `agents` fleet source reads: every
// known host with its last report, its state and its metric samples.
//
// A host is `connected` while its command stream is open and its reports are fresh, `pending`
// while bound but never reported, and `stale` once no report arrived within the stale window
// (AgentHubOptions::stale_after, else 3 × the host's own report interval + 10 s) — including every
// host known from before this process started, until it reports again. Nothing is ever deleted.
//
// Commands: a command waits in its host's queue until answered or past its deadline; it is sent
// when queued (if the host is connected) and again whenever the host reconnects, so an agent that
// restarts mid-command sees it again and answers it from its state file (never running it twice).
// A dispatch's attempt id is an idempotency key here too: a second RunCommand for an attempt that
// has an answer returns that answer, and one still waiting joins the first.
// Thread-safety: every method may be called from any thread; one mutex guards the state, and a
// waiting RunCommand holds no lock. Sinks are called under that mutex and must never block.
// Lifetime: borrows the store and options.clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/hostagent/wire.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/host_agent_store.h"

namespace pulse::adapters::hostagent {

struct AgentHubOptions {
  const core::Clock* clock = nullptr;  // borrowed; nullptr: the system clock
  // Fixed stale window; zero: 3 × the host's report interval + 10 s.
  absl::Duration stale_after = absl::ZeroDuration();
  absl::Duration dispatch_timeout = absl::Seconds(60);
  absl::Duration exec_timeout = absl::Seconds(20);
  absl::Duration report_timeout = absl::Seconds(20);
  int heartbeat_seconds = 15;
  std::size_t max_queued_per_host = 32;  // more waiting commands: ResourceExhausted
  std::size_t max_hosts = 10000;         // more bindings: ResourceExhausted
  std::size_t max_metric_points = 360;   // per resource and metric
  std::string server_version;
};

enum class HostState { kConnected, kDisconnected, kStale, kPending };
// Wire: connected, disconnected, stale, pending.
std::string_view ToString(HostState state);

// One host as the hub sees it now.
struct HostView {
  std::string host;
  std::string token_id;
  std::string agent_version;
  HostState state = HostState::kPending;
  bool connected = false;                    // its command stream is open
  bool fresh = false;                        // reported within the window in this process
  std::optional<absl::Time> last_seen;       // a report, a result or the stream opening
  std::optional<absl::Time> last_report_at;  // durable: survives restarts
  std::optional<absl::Time> connected_since;
  std::uint64_t report_seq = 0;
  std::shared_ptr<const Report> report;  // the last report, null before one
};

// Where a host's commands go: the server wraps its event stream in one.
class CommandSink {
 public:
  virtual ~CommandSink() = default;
  // Queues one event frame without blocking; false when the stream no longer takes frames.
  virtual bool Send(std::string_view event, std::string_view data) = 0;
  // False once the client went away or the stream ended.
  [[nodiscard]] virtual bool open() const = 0;
  // A newer stream of the same host replaced this one: end it.
  virtual void End() = 0;
};

// Answers whether the token with this id still authenticates (not revoked, not expired): a host
// bound to a dead token may be bound again by a new one.
using TokenLiveness = std::function<bool(std::string_view token_id)>;

struct ReportAck {
  std::uint64_t report_seq = 0;
  int next_report_seconds = 30;
};

class AgentHub {
 public:
  // Loads the registry (every host with its last report). Unavailable when the store cannot be
  // read; a stored report that no longer decodes is skipped (the host stays listed, pending).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AgentHub>> Open(core::HostAgentStore& store,
                                                                      AgentHubOptions options = {});
  ~AgentHub();
  AgentHub(const AgentHub&) = delete;
  AgentHub& operator=(const AgentHub&) = delete;

  // ---- the agents' side (the /api/agents/* routes) ---------------------------------------

  // May token `token_id` act as `host`? Binds them when neither is bound (first use), or when
  // the host's holder is no longer live. PermissionDenied whose message starts with
  // "agent_host_mismatch:" when the token belongs to another host or the host to another live
  // token; ResourceExhausted past max_hosts; Unavailable when the store fails.
  [[nodiscard]] absl::Status Authorize(std::string_view token_id, std::string_view host,
                                       const TokenLiveness& token_live);

  // Stores an accepted report (already decoded; the caller authorized report.host for
  // token_id) and wakes whoever waits for it (RequestReport).
  [[nodiscard]] absl::StatusOr<ReportAck> AcceptReport(std::string_view token_id, Report report,
                                                       std::string_view raw_json);

  // Makes `sink` the host's command stream: sends the hello frame and every unanswered
  // command, and ends the stream it replaces. A stream that ended is noticed through
  // CommandSink::open() and dropped.
  void Attach(std::string_view host, std::shared_ptr<CommandSink> sink);

  // A result from `host`: true when it answered a waiting command of that host (false for an
  // unknown, finished or another host's command, which changes nothing).
  bool AcceptResult(std::string_view host, const Result& result);

  // ---- the fleet's side ------------------------------------------------------------------

  // Every host, ordered by host name. Hosts bound since this process started by another
  // process (`pulse-server token create --host`) are picked up from the store, at most every
  // two seconds.
  std::vector<HostView> Hosts();
  // Whether any host is bound (Hosts() non-empty) without building their views.
  bool HasHosts();
  std::optional<HostView> Host(std::string_view host);
  // The host whose namespace holds `resource_id` (node:<h> or <type>:<h>/...), if known.
  std::optional<std::string> HostOf(std::string_view resource_id);

  // Sends a dispatch or exec command to `host` and waits for its result until the command's
  // deadline (set here from the options' timeouts). FailedPrecondition when the host is not
  // connected at the start (nothing was sent), DeadlineExceeded when no result came in time
  // (the outcome is unknown), ResourceExhausted when too many commands wait.
  [[nodiscard]] absl::StatusOr<Result> RunCommand(std::string_view host, Command command);

  // Asks `host` for a fresh report and waits for it (or for any report accepted after the
  // request). FailedPrecondition when not connected, DeadlineExceeded on timeout.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const Report>> RequestReport(std::string_view host);

  // Samples of one metric of one resource from the reports this process accepted, oldest first.
  std::vector<core::FleetMetricPoint> MetricPoints(std::string_view resource_id,
                                                   std::string_view metric);

  // Commands waiting for an answer, over every host.
  std::size_t waiting_count();

  // The `agents` source's stale_after_seconds setting (zero: the default rule).
  void SetStaleAfter(absl::Duration stale_after) ABSL_LOCKS_EXCLUDED(mu_);
  // The stale window of a host reporting every `interval_seconds` (the default 30).
  absl::Duration StaleWindowFor(int interval_seconds = 30) ABSL_LOCKS_EXCLUDED(mu_);

  const AgentHubOptions& options() const { return options_; }
  // The registry the hub keeps its bindings in (token create binds through it).
  core::HostAgentStore& store() { return store_; }

 private:
  struct Waiting;
  struct HostEntry;
  AgentHub(core::HostAgentStore& store, AgentHubOptions options);

  absl::Time Now() const;
  std::string NewCommandId() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration StaleWindow(const HostEntry& entry) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  HostView ViewOf(const HostEntry& entry, absl::Time now) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void SendCommand(HostEntry& entry, const Command& command) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropClosedSink(HostEntry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RefreshBindings() ABSL_LOCKS_EXCLUDED(mu_);

  core::HostAgentStore& store_;
  AgentHubOptions options_;
  std::unique_ptr<core::Clock> owned_clock_;
  const core::Clock* clock_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<HostEntry>, std::less<>> hosts_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string, std::less<>> host_by_token_ ABSL_GUARDED_BY(mu_);
  // Dispatch answers by attempt id (the newest 1,000), so a repeated attempt never runs twice.
  std::map<std::string, Result, std::less<>> answered_attempts_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> answered_order_ ABSL_GUARDED_BY(mu_);
  absl::Duration stale_after_ ABSL_GUARDED_BY(mu_);
  absl::Time bindings_read_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();  // real time
  absl::BitGen bitgen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::adapters::hostagent
