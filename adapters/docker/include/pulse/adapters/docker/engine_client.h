// EngineClient: the Docker Engine API over the shared HTTP client (adapters/http_client), on a
// unix socket ("unix:///var/run/docker.sock") or plain TCP ("tcp://host:2375"). Connect asks
// /version and speaks min(daemon's newest, kMaxApiVersion) on every later request; a daemon
// older than API 1.41 (Docker 20.10) is refused. Every answer is parsed strictly and bounded
// (engine_types.h). Failures are statuses with a human message and a distinct EngineErrorKind
// (EngineErrorKindOf), so an operator is told whether the socket is missing, not theirs, the
// container gone or the daemon broken (docs/docker.md, "Errors"). Thread-safe: immutable after
// Connect; every call is its own exchange.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/docker/engine_types.h"
#include "pulse/adapters/docker/log_demux.h"
#include "pulse/adapters/http_client/http_client.h"

namespace pulse::docker {

enum class EngineErrorKind {
  kSocketMissing,     // no socket at the unix path (Docker not installed or not running)
  kPermissionDenied,  // the socket exists but this user may not open it
  kUnreachable,       // nothing answers at the endpoint, or the connection broke
  kTimeout,           // the call's deadline passed
  kApiTooOld,         // the daemon speaks an Engine API older than 1.41
  kNotFound,          // 404: no such container (removed, or never existed)
  kConflict,          // 409: the daemon refuses in the container's present state
  kDaemonError,       // 500 or another unexpected status
  kMalformed,         // the answer is not what the Engine API defines (or exceeds a bound)
  kInvalidArgument,   // the request itself is malformed (endpoint, container id, query)
};

// "socket_missing", "permission_denied", ...
std::string_view EngineErrorKindName(EngineErrorKind kind);
// The kind of a status EngineClient returned; nullopt for any other status.
std::optional<EngineErrorKind> EngineErrorKindOf(const absl::Status& status);

struct EngineOptions {
  std::string endpoint = "unix:///var/run/docker.sock";  // unix:///path or tcp://host:port
  // tcp:// only (docs/docker.md, "Endpoints and versions"). With any of the three set the
  // connection is TLS: the daemon's certificate must chain to tls_ca_file ("" = the system
  // store) and tls_cert_file / tls_key_file (PEM, both or neither) are presented, as a daemon
  // run with --tlsverify demands. Plain TCP (no TLS: anyone who reaches the port controls the
  // daemon) is refused unless allow_plain_tcp.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  bool allow_plain_tcp = false;
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration call_timeout = absl::Seconds(30);  // every call but lifecycle and events
  std::size_t max_answer_bytes = std::size_t{16} << 20;
};

struct LogQuery {
  bool stdout_stream = true;
  bool stderr_stream = true;
  bool timestamps = true;
  std::size_t tail = 200;           // the last lines asked of the daemon (0: all)
  std::optional<absl::Time> since;  // only lines at or after
  LogDemuxOptions bounds;           // tty and timestamps are set from the container and query
};

struct LogResult {
  std::vector<LogLine> lines;
  bool truncated = false;  // a bound cut the output short
};

struct EventQuery {
  absl::Time since = absl::InfinitePast();  // InfinitePast: from now
  absl::Time until;                         // required: the stream closes then
  std::vector<std::pair<std::string, std::string>>
      filters;  // ("type","container"), ("event","die")
  std::size_t max_events = 1000;
  std::size_t max_line_bytes = 64 * 1024;
};

struct EventBatch {
  std::vector<EngineEvent> events;
  bool truncated = false;  // max_events was reached before `until`
};

// A command run in a running container through the exec API (POST /containers/{id}/exec, then
// /exec/{id}/start, then GET /exec/{id}/json): no TTY, no stdin, stdout and stderr attached
// and demultiplexed, the container's own user and working directory.
struct ExecRequest {
  std::vector<std::string> argv;                // program first, never through a shell
  absl::Duration deadline = absl::Seconds(30);  // the whole exchange: create, start, inspect
  std::size_t max_output_bytes = 64 * 1024;     // stdout and stderr together
};

struct ExecResult {
  std::optional<int> exit_code;  // nullopt: still running when the output bound stopped reading
  std::string stdout_text;
  std::string stderr_text;
  bool truncated = false;  // the output bound was reached (the rest was not read)
};

// What a lifecycle call found.
enum class LifecycleOutcome {
  kDone,            // the daemon did it (204)
  kAlreadyInState,  // nothing to do: already started / already stopped (304)
};

class EngineClient final {
 public:
  // Validates the endpoint, asks /version and negotiates the API version. Errors as
  // EngineErrorKind (kApiTooOld for a daemon older than 1.41).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<EngineClient>> Connect(
      EngineOptions options, const std::atomic<bool>* cancelled = nullptr);

  const EngineVersion& version() const { return version_; }
  ApiVersion api() const { return api_; }

  // GET /_ping: ok while the daemon answers.
  absl::Status Ping() const;
  // The daemon host (GET /info).
  absl::StatusOr<EngineInfo> Info() const;
  // Every container (running or not) when `all`.
  absl::StatusOr<std::vector<ContainerSummary>> ListContainers(bool all = true) const;
  absl::StatusOr<ContainerDetails> Inspect(std::string_view id) const;
  // One sample (stream=false: the daemon waits for a second reading to compute CPU %).
  absl::StatusOr<ContainerStats> Stats(std::string_view id) const;
  // Inspects the container (for its TTY), then reads its logs, demultiplexed and bounded. A
  // broken frame is kMalformed, with nothing returned.
  absl::StatusOr<LogResult> Logs(std::string_view id, const LogQuery& query) const;
  // Lifecycle with a deadline for the whole call; `grace` is the daemon's stop timeout (SIGTERM,
  // then SIGKILL), which must fit in the deadline.
  absl::StatusOr<LifecycleOutcome> Start(std::string_view id, absl::Duration deadline) const;
  absl::StatusOr<LifecycleOutcome> Stop(std::string_view id, absl::Duration grace,
                                        absl::Duration deadline) const;
  absl::StatusOr<LifecycleOutcome> Restart(std::string_view id, absl::Duration grace,
                                           absl::Duration deadline) const;
  // The events of [since, until] matching the filters, bounded; returns when the daemon closes
  // the stream at `until` or max_events arrived.
  absl::StatusOr<EventBatch> Events(const EventQuery& query) const;

  // Runs `request.argv` in the running container `id` (engine_exec.cc). A command that exits
  // non-zero is a result; a stopped container is kConflict, a missing one kNotFound, a deadline
  // that passes kTimeout (the process may go on in the container: the Engine cannot kill an
  // exec), a broken stream frame kMalformed.
  absl::StatusOr<ExecResult> Exec(std::string_view id, const ExecRequest& request) const;

  // A raw exchange on the negotiated version ("/containers/json"): for tests and fixtures.
  absl::StatusOr<http_client::Response> Call(const http_client::Request& request,
                                             absl::Duration timeout) const;

  ~EngineClient();
  EngineClient(const EngineClient&) = delete;
  EngineClient& operator=(const EngineClient&) = delete;

 private:
  EngineClient(EngineOptions options, std::string socket_path,
               std::unique_ptr<http_client::HttpClient> http);
  absl::Status TransportError(const absl::Status& status) const;
  absl::StatusOr<LifecycleOutcome> Lifecycle(std::string_view id, std::string_view verb,
                                             const std::string& query,
                                             absl::Duration deadline) const;

  const EngineOptions options_;
  const std::string socket_path_;  // "" for TCP
  const std::unique_ptr<http_client::HttpClient> http_;
  EngineVersion version_;
  ApiVersion api_;
};

// The status an Engine answer's HTTP status means for `what` ("container web1"): ok for 2xx
// and 304, otherwise an EngineErrorKind status naming the daemon's message.
absl::Status StatusFromAnswer(int http_status, std::string_view body, std::string_view what);
// An EngineClient status of `kind` (EngineErrorKindOf answers it).
absl::Status MakeEngineError(EngineErrorKind kind, std::string_view message);

// Ok for a container id or name the Engine can have ([A-Za-z0-9][A-Za-z0-9_.-]*, at most 128).
absl::Status ValidateContainerRef(std::string_view id);

}  // namespace pulse::docker
