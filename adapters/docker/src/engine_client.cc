#include "pulse/adapters/docker/engine_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/string_view.h"

namespace pulse::docker {
namespace {

constexpr char kKindPayload[] = "type.pulse/docker.error_kind";

constexpr std::array<core::WireName<EngineErrorKind>, 10> kKindNames = {{
    {EngineErrorKind::kSocketMissing, "socket_missing"},
    {EngineErrorKind::kPermissionDenied, "permission_denied"},
    {EngineErrorKind::kUnreachable, "unreachable"},
    {EngineErrorKind::kTimeout, "timeout"},
    {EngineErrorKind::kApiTooOld, "api_too_old"},
    {EngineErrorKind::kNotFound, "not_found"},
    {EngineErrorKind::kConflict, "conflict"},
    {EngineErrorKind::kDaemonError, "daemon_error"},
    {EngineErrorKind::kMalformed, "malformed"},
    {EngineErrorKind::kInvalidArgument, "invalid_argument"},
}};

absl::StatusCode CodeOf(EngineErrorKind kind) {
  switch (kind) {
    case EngineErrorKind::kSocketMissing:
    case EngineErrorKind::kUnreachable:
      return absl::StatusCode::kUnavailable;
    case EngineErrorKind::kPermissionDenied:
      return absl::StatusCode::kPermissionDenied;
    case EngineErrorKind::kTimeout:
      return absl::StatusCode::kDeadlineExceeded;
    case EngineErrorKind::kApiTooOld:
    case EngineErrorKind::kConflict:
      return absl::StatusCode::kFailedPrecondition;
    case EngineErrorKind::kNotFound:
      return absl::StatusCode::kNotFound;
    case EngineErrorKind::kDaemonError:
      return absl::StatusCode::kInternal;
    case EngineErrorKind::kMalformed:
      return absl::StatusCode::kDataLoss;
    case EngineErrorKind::kInvalidArgument:
      return absl::StatusCode::kInvalidArgument;
  }
  return absl::StatusCode::kUnknown;
}

absl::Status EngineError(EngineErrorKind kind, absl::string_view message) {
  absl::Status status(CodeOf(kind), message);
  status.SetPayload(kKindPayload, absl::Cord(core::ToAbsl(EngineErrorKindName(kind))));
  return status;
}

// A DataLoss from the parsers becomes kMalformed; anything else passes unchanged.
absl::Status Malformed(const absl::Status& status) {
  if (status.ok() || EngineErrorKindOf(status).has_value()) {
    return status;
  }
  return EngineError(EngineErrorKind::kMalformed, status.message());
}

// Percent-encodes a query value.
std::string QueryEscape(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// How a connect() to the socket fails right now: 0 when it connects.
int ProbeSocket(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return ENAMETOOLONG;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return errno;
  }
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

std::string SecondsText(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Seconds(d < absl::ZeroDuration() ? absl::ZeroDuration() : d));
}

// Seconds since the epoch with nine fractional digits, as the events query takes them.
std::string UnixText(absl::Time t) {
  const std::int64_t nanos = absl::ToUnixNanos(t);
  return absl::StrFormat("%d.%09d", nanos / 1000000000, nanos % 1000000000);
}

bool UsesTls(const EngineOptions& o) {
  return !o.tls_ca_file.empty() || !o.tls_cert_file.empty() || !o.tls_key_file.empty();
}

// The TLS settings of an endpoint: only for tcp://, files that exist and can be read, a client
// certificate with its key, and no plain TCP unless the operator allowed it.
absl::Status CheckTransportSecurity(const EngineOptions& o, bool unix_socket) {
  if (unix_socket) {
    return UsesTls(o) ? EngineError(EngineErrorKind::kInvalidArgument,
                                    "tls_ca_file, tls_cert_file and tls_key_file apply to tcp:// "
                                    "endpoints only, not to a unix socket")
                      : absl::OkStatus();
  }
  if (!UsesTls(o)) {
    return o.allow_plain_tcp
               ? absl::OkStatus()
               : EngineError(
                     EngineErrorKind::kInvalidArgument,
                     "a tcp:// Docker endpoint without TLS is refused: anyone who reaches the "
                     "port controls the daemon. Set tls_ca_file, tls_cert_file and tls_key_file "
                     "(the daemon runs with --tlsverify), or allow_plain_tcp to accept the risk");
  }
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return EngineError(EngineErrorKind::kInvalidArgument,
                       o.tls_cert_file.empty()
                           ? "tls_key_file is set without tls_cert_file: set both or neither"
                           : "tls_cert_file is set without tls_key_file: set both or neither");
  }
  const std::pair<const char*, const std::string*> files[] = {{"tls_ca_file", &o.tls_ca_file},
                                                              {"tls_cert_file", &o.tls_cert_file},
                                                              {"tls_key_file", &o.tls_key_file}};
  for (const auto& [setting, path] : files) {
    if (path->empty()) {
      continue;
    }
    if (::access(path->c_str(), R_OK) != 0) {
      const int err = errno;
      return EngineError(
          EngineErrorKind::kInvalidArgument,
          absl::StrCat(setting, " ", *path, err == ENOENT ? " does not exist" : " cannot be read",
                       " (", std::strerror(err), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view EngineErrorKindName(EngineErrorKind kind) {
  return core::WireNameOf(kKindNames, kind);
}

std::optional<EngineErrorKind> EngineErrorKindOf(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kKindPayload);
  if (!payload.has_value()) {
    return std::nullopt;
  }
  return core::WireValueOf(kKindNames, std::string(*payload));
}

absl::Status ValidateContainerRef(std::string_view id) {
  bool ok = !id.empty() && id.size() <= 128;
  for (std::size_t i = 0; ok && i < id.size(); ++i) {
    const char c = id[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    ok = alnum || (i > 0 && (c == '_' || c == '.' || c == '-'));
  }
  return ok ? absl::OkStatus()
            : EngineError(EngineErrorKind::kInvalidArgument,
                          "a container id or name is 1 to 128 letters, digits, '_', '.' or '-', "
                          "starting with a letter or digit");
}

absl::Status StatusFromAnswer(int http_status, std::string_view body, std::string_view what) {
  if ((http_status >= 200 && http_status < 300) || http_status == 304) {
    return absl::OkStatus();
  }
  const absl::string_view what_a = core::ToAbsl(what);
  std::string message = ParseErrorMessage(body);
  const std::string said = message.empty() ? "" : absl::StrCat(": ", message);
  switch (http_status) {
    case 400:
      return EngineError(EngineErrorKind::kInvalidArgument,
                         absl::StrCat("the Docker Engine refused the request for ", what_a, said));
    case 404:
      return EngineError(EngineErrorKind::kNotFound,
                         absl::StrCat(what_a, " does not exist (removed?)", said));
    case 409:
      return EngineError(EngineErrorKind::kConflict,
                         absl::StrCat("the Docker Engine refused ", what_a, " in its state", said));
    default:
      return EngineError(
          EngineErrorKind::kDaemonError,
          absl::StrCat("the Docker Engine failed on ", what_a, " (HTTP ", http_status, ")", said));
  }
}

EngineClient::EngineClient(EngineOptions options, std::string socket_path,
                           std::unique_ptr<http_client::HttpClient> http)
    : options_(std::move(options)), socket_path_(std::move(socket_path)), http_(std::move(http)) {}

EngineClient::~EngineClient() = default;

absl::StatusOr<std::unique_ptr<EngineClient>> EngineClient::Connect(
    EngineOptions options, const std::atomic<bool>* cancelled) {
  std::string_view endpoint = options.endpoint;
  std::string socket_path;
  std::string base;
  if (endpoint.rfind("unix://", 0) == 0) {
    socket_path = std::string(endpoint.substr(7));
    if (socket_path.empty() || socket_path.front() != '/' || socket_path.size() > 100) {
      return EngineError(EngineErrorKind::kInvalidArgument,
                         "a unix endpoint is unix:// and an absolute socket path (at most 100 "
                         "bytes), as in unix:///var/run/docker.sock");
    }
    base = "http://localhost";
  } else if (endpoint.rfind("tcp://", 0) == 0) {
    base =
        absl::StrCat(UsesTls(options) ? "https://" : "http://", core::ToAbsl(endpoint.substr(6)));
  } else {
    return EngineError(EngineErrorKind::kInvalidArgument,
                       "a Docker endpoint starts with unix:// or tcp://");
  }
  if (absl::Status s = CheckTransportSecurity(options, !socket_path.empty()); !s.ok()) {
    return s;
  }
  http_client::ClientOptions http_options;
  http_options.ca_file = options.tls_ca_file;
  http_options.client_cert_file = options.tls_cert_file;
  http_options.client_key_file = options.tls_key_file;
  http_options.unix_socket_path = socket_path;
  http_options.timeouts.connect = options.connect_timeout;
  http_options.timeouts.response_header = options.call_timeout;
  http_options.timeouts.idle = options.call_timeout;
  http_options.timeouts.total = options.call_timeout;
  http_options.max_body_bytes = options.max_answer_bytes;
  http_options.proxy_from_environment = socket_path.empty();
  auto http = http_client::HttpClient::Open(base, std::move(http_options), "Docker endpoint");
  if (!http.ok()) {
    return EngineError(EngineErrorKind::kInvalidArgument, http.status().message());
  }
  std::unique_ptr<EngineClient> client(
      new EngineClient(std::move(options), std::move(socket_path), *std::move(http)));
  // /version is unversioned: it tells which versions the daemon speaks.
  http_client::Request request;
  request.target = "/version";
  auto answer = client->http_->Send(request, cancelled);
  if (!answer.ok()) {
    return client->TransportError(answer.status());
  }
  if (absl::Status s = StatusFromAnswer(answer->head.status, answer->body, "the version query");
      !s.ok()) {
    return s;
  }
  auto version = ParseVersionJson(answer->body);
  if (!version.ok()) {
    return Malformed(version.status());
  }
  if (version->api < kMinApiVersion) {
    return EngineError(
        EngineErrorKind::kApiTooOld,
        absl::StrCat("the Docker Engine speaks API ", version->api.ToString(), ", older than ",
                     kMinApiVersion.ToString(),
                     ", the oldest Pulse supports: upgrade Docker to 20.10 or later"));
  }
  if (version->min_api > kMaxApiVersion) {
    return EngineError(
        EngineErrorKind::kApiTooOld,
        absl::StrCat("the Docker Engine no longer speaks API ", kMaxApiVersion.ToString(),
                     " (its oldest is ", version->min_api.ToString(), "): upgrade Pulse"));
  }
  client->version_ = *version;
  client->api_ = std::min(version->api, kMaxApiVersion);
  return client;
}

absl::Status EngineClient::TransportError(const absl::Status& status) const {
  const auto kind = http_client::ErrorKindOf(status);
  if (kind == http_client::ErrorKind::kTimeout || kind == http_client::ErrorKind::kCancelled) {
    return EngineError(
        EngineErrorKind::kTimeout,
        absl::StrCat("the Docker Engine did not answer in time: ", status.message()));
  }
  if (kind == http_client::ErrorKind::kTooLarge) {
    return EngineError(EngineErrorKind::kMalformed,
                       absl::StrCat("the Docker Engine's answer is too large: ", status.message()));
  }
  if (!socket_path_.empty()) {
    const int err = ProbeSocket(socket_path_);
    if (err == ENOENT || err == ENOTDIR) {
      return EngineError(EngineErrorKind::kSocketMissing,
                         absl::StrCat("no Docker socket at ", socket_path_,
                                      ": is Docker installed and running (dockerd)?"));
    }
    if (err == EACCES || err == EPERM) {
      return EngineError(
          EngineErrorKind::kPermissionDenied,
          absl::StrCat("permission denied on the Docker socket ", socket_path_,
                       ": add the user running Pulse to the socket's group (usually `docker`: "
                       "usermod -aG docker USER, then log in again), or change the socket's "
                       "mode or owner"));
    }
    if (err == ECONNREFUSED) {
      return EngineError(EngineErrorKind::kUnreachable,
                         absl::StrCat("nothing listens on the Docker socket ", socket_path_,
                                      ": dockerd is not running (a stale socket)"));
    }
  }
  return EngineError(EngineErrorKind::kUnreachable,
                     absl::StrCat("the Docker Engine cannot be reached: ", status.message()));
}

absl::StatusOr<http_client::Response> EngineClient::Call(const http_client::Request& request,
                                                         absl::Duration timeout) const {
  http_client::Request versioned = request;
  versioned.target = absl::StrCat("/v", api_.ToString(), request.target);
  absl::StatusOr<http_client::Response> answer;
  if (timeout == options_.call_timeout) {
    answer = http_->Send(versioned);
  } else {
    http_client::ClientOptions http_options = http_->options();
    http_options.timeouts.response_header = timeout;
    http_options.timeouts.idle = timeout;
    http_options.timeouts.total = timeout;
    auto http = http_client::HttpClient::Open(std::move(http_options));
    if (!http.ok()) {
      return EngineError(EngineErrorKind::kInvalidArgument, http.status().message());
    }
    answer = (*http)->Send(versioned);
  }
  if (!answer.ok()) {
    return TransportError(answer.status());
  }
  return answer;
}

absl::Status EngineClient::Ping() const {
  http_client::Request request;
  request.target = "/_ping";
  auto answer = Call(request, options_.call_timeout);
  if (!answer.ok()) {
    return answer.status();
  }
  return StatusFromAnswer(answer->head.status, answer->body, "ping");
}

absl::StatusOr<EngineInfo> EngineClient::Info() const {
  http_client::Request request;
  request.target = "/info";
  auto answer = Call(request, options_.call_timeout);
  if (!answer.ok()) {
    return answer.status();
  }
  if (auto s = StatusFromAnswer(answer->head.status, answer->body, "the daemon info"); !s.ok()) {
    return s;
  }
  auto info = ParseInfoJson(answer->body);
  if (!info.ok()) {
    return Malformed(info.status());
  }
  return info;
}

absl::StatusOr<std::vector<ContainerSummary>> EngineClient::ListContainers(bool all) const {
  http_client::Request request;
  request.target = all ? "/containers/json?all=1" : "/containers/json";
  auto answer = Call(request, options_.call_timeout);
  if (!answer.ok()) {
    return answer.status();
  }
  if (auto s = StatusFromAnswer(answer->head.status, answer->body, "the container list"); !s.ok()) {
    return s;
  }
  auto list = ParseContainerListJson(answer->body);
  if (!list.ok()) {
    return Malformed(list.status());
  }
  return list;
}

absl::StatusOr<ContainerDetails> EngineClient::Inspect(std::string_view id) const {
  if (auto s = ValidateContainerRef(id); !s.ok()) {
    return s;
  }
  http_client::Request request;
  request.target = absl::StrCat("/containers/", core::ToAbsl(id), "/json");
  auto answer = Call(request, options_.call_timeout);
  if (!answer.ok()) {
    return answer.status();
  }
  const std::string what = absl::StrCat("container ", core::ToAbsl(id));
  if (auto s = StatusFromAnswer(answer->head.status, answer->body, what); !s.ok()) {
    return s;
  }
  auto details = ParseContainerJson(answer->body);
  if (!details.ok()) {
    return Malformed(details.status());
  }
  return details;
}

absl::StatusOr<ContainerStats> EngineClient::Stats(std::string_view id) const {
  if (auto s = ValidateContainerRef(id); !s.ok()) {
    return s;
  }
  http_client::Request request;
  request.target = absl::StrCat("/containers/", core::ToAbsl(id), "/stats?stream=false");
  auto answer = Call(request, options_.call_timeout);
  if (!answer.ok()) {
    return answer.status();
  }
  const std::string what = absl::StrCat("container ", core::ToAbsl(id));
  if (auto s = StatusFromAnswer(answer->head.status, answer->body, what); !s.ok()) {
    return s;
  }
  auto stats = ParseStatsJson(answer->body);
  if (!stats.ok()) {
    return Malformed(stats.status());
  }
  return stats;
}

absl::StatusOr<LogResult> EngineClient::Logs(std::string_view id, const LogQuery& query) const {
  auto details = Inspect(id);
  if (!details.ok()) {
    return details.status();
  }
  std::string target = absl::StrCat(
      "/containers/", core::ToAbsl(id), "/logs?stdout=", query.stdout_stream ? 1 : 0,
      "&stderr=", query.stderr_stream ? 1 : 0, "&timestamps=", query.timestamps ? 1 : 0);
  if (query.tail > 0) {
    absl::StrAppend(&target, "&tail=", query.tail);
  }
  if (query.since.has_value()) {
    absl::StrAppend(&target, "&since=", absl::ToUnixSeconds(*query.since));
  }
  LogDemuxOptions bounds = query.bounds;
  bounds.tty = details->tty;
  bounds.timestamps = query.timestamps;
  LogDemuxer demuxer(bounds);
  http_client::Request request;
  request.target = absl::StrCat("/v", api_.ToString(), target);
  int status = 0;
  std::string error_body;
  absl::Status demux_error;
  auto end = http_->Stream(
      request,
      [&](const http_client::ResponseHead& head) {
        status = head.status;
        return true;
      },
      [&](std::string_view bytes) {
        if (status != 200) {
          error_body.append(
              bytes.substr(0, 64 * 1024 - std::min(error_body.size(), std::size_t{64 * 1024})));
          return true;
        }
        demux_error = demuxer.Feed(bytes);
        return demux_error.ok() && !demuxer.Full();
      });
  if (!end.ok()) {
    return TransportError(end.status());
  }
  const std::string what = absl::StrCat("container ", core::ToAbsl(id));
  if (auto s = StatusFromAnswer(status, error_body, what); !s.ok()) {
    return s;
  }
  if (demux_error.ok() && *end == http_client::StreamEnd::kComplete) {
    demux_error = demuxer.Finish();
  }
  if (!demux_error.ok()) {
    return EngineError(EngineErrorKind::kMalformed, demux_error.message());
  }
  LogResult result;
  result.truncated = demuxer.Full();
  result.lines = demuxer.TakeLines();
  return result;
}

absl::StatusOr<LifecycleOutcome> EngineClient::Lifecycle(std::string_view id, std::string_view verb,
                                                         const std::string& query,
                                                         absl::Duration deadline) const {
  if (auto s = ValidateContainerRef(id); !s.ok()) {
    return s;
  }
  if (deadline <= absl::ZeroDuration()) {
    return EngineError(EngineErrorKind::kInvalidArgument, "a lifecycle deadline must be positive");
  }
  http_client::Request request;
  request.method = "POST";
  request.target = absl::StrCat("/containers/", core::ToAbsl(id), "/", core::ToAbsl(verb), query);
  request.body = "";
  auto answer = Call(request, deadline);
  if (!answer.ok()) {
    return answer.status();
  }
  const std::string what = absl::StrCat(core::ToAbsl(verb), " of container ", core::ToAbsl(id));
  if (auto s = StatusFromAnswer(answer->head.status, answer->body, what); !s.ok()) {
    return s;
  }
  return answer->head.status == 304 ? LifecycleOutcome::kAlreadyInState : LifecycleOutcome::kDone;
}

absl::StatusOr<LifecycleOutcome> EngineClient::Start(std::string_view id,
                                                     absl::Duration deadline) const {
  return Lifecycle(id, "start", "", deadline);
}

absl::StatusOr<LifecycleOutcome> EngineClient::Stop(std::string_view id, absl::Duration grace,
                                                    absl::Duration deadline) const {
  if (grace >= deadline) {
    return EngineError(EngineErrorKind::kInvalidArgument,
                       "the stop grace period must be shorter than the deadline");
  }
  return Lifecycle(id, "stop", absl::StrCat("?t=", SecondsText(grace)), deadline);
}

absl::StatusOr<LifecycleOutcome> EngineClient::Restart(std::string_view id, absl::Duration grace,
                                                       absl::Duration deadline) const {
  if (grace >= deadline) {
    return EngineError(EngineErrorKind::kInvalidArgument,
                       "the restart grace period must be shorter than the deadline");
  }
  return Lifecycle(id, "restart", absl::StrCat("?t=", SecondsText(grace)), deadline);
}

absl::StatusOr<EventBatch> EngineClient::Events(const EventQuery& query) const {
  if (query.until == absl::InfinitePast() || query.until == absl::InfiniteFuture() ||
      query.until == absl::Time()) {
    return EngineError(EngineErrorKind::kInvalidArgument,
                       "an event query needs an `until` so the stream ends");
  }
  // filters={"type":["container"],"event":["die","oom"]}
  std::map<std::string, std::vector<std::string>> grouped;
  for (const auto& [key, value] : query.filters) {
    grouped[key].push_back(value);
  }
  core::JsonWriter writer;
  writer.StartObject();
  for (const auto& [key, values] : grouped) {
    writer.Key(key);
    writer.StringArray(values);
  }
  writer.EndObject();
  const std::string filters = writer.Take();
  std::string target = absl::StrCat("/v", api_.ToString(), "/events?until=", UnixText(query.until));
  // Without `since` the daemon would replay its buffer of past events.
  const absl::Time since = query.since == absl::InfinitePast() ? absl::Now() : query.since;
  absl::StrAppend(&target, "&since=", UnixText(since));
  if (!grouped.empty()) {
    absl::StrAppend(&target, "&filters=", QueryEscape(filters));
  }
  http_client::ClientOptions http_options = http_->options();
  const absl::Duration wait =
      std::max(absl::ZeroDuration(), query.until - absl::Now()) + options_.call_timeout;
  http_options.timeouts.response_header = wait;
  http_options.timeouts.idle = wait;
  http_options.timeouts.total = wait;
  auto http = http_client::HttpClient::Open(std::move(http_options));
  if (!http.ok()) {
    return EngineError(EngineErrorKind::kInvalidArgument, http.status().message());
  }
  http_client::Request request;
  request.target = target;
  int status = 0;
  std::string pending;
  std::string error_body;
  EventBatch batch;
  absl::Status parse_error;
  auto take_line = [&](std::string_view line) {
    if (line.empty()) {
      return true;
    }
    auto event = ParseEventJson(line);
    if (!event.ok()) {
      parse_error = event.status();
      return false;
    }
    batch.events.push_back(*std::move(event));
    if (batch.events.size() >= query.max_events) {
      batch.truncated = true;
      return false;
    }
    return true;
  };
  auto end = (*http)->Stream(
      request,
      [&](const http_client::ResponseHead& head) {
        status = head.status;
        return true;
      },
      [&](std::string_view bytes) {
        if (status != 200) {
          if (error_body.size() < 64 * 1024) {
            error_body.append(bytes.substr(0, 64 * 1024 - error_body.size()));
          }
          return true;
        }
        while (!bytes.empty()) {
          const std::size_t newline = bytes.find('\n');
          pending.append(bytes.substr(0, newline));
          if (pending.size() > query.max_line_bytes) {
            parse_error = absl::DataLossError("a Docker event is longer than the bound");
            return false;
          }
          if (newline == std::string_view::npos) {
            break;
          }
          bytes.remove_prefix(newline + 1);
          if (!take_line(pending)) {
            return false;
          }
          pending.clear();
        }
        return true;
      });
  if (!end.ok()) {
    return TransportError(end.status());
  }
  if (auto s = StatusFromAnswer(status, error_body, "the event stream"); !s.ok()) {
    return s;
  }
  if (parse_error.ok() && !batch.truncated && !pending.empty()) {
    take_line(pending);
  }
  if (!parse_error.ok()) {
    return EngineError(EngineErrorKind::kMalformed, parse_error.message());
  }
  return batch;
}

absl::Status MakeEngineError(EngineErrorKind kind, std::string_view message) {
  return EngineError(kind, core::ToAbsl(message));
}

}  // namespace pulse::docker
