#include "pulse/adapters/docker/docker_source.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::docker {
namespace {

constexpr core::JsonLimits kSourceLimits{64 * 1024, 4};
constexpr std::size_t kMaxSocketPathBytes = 100;

constexpr std::size_t kMaxTcpEndpointBytes = 300;  // tcp:// + a DNS name of 253 + :port
constexpr std::size_t kMaxTlsPathBytes = 4096;

bool Printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
}

absl::Status CheckUnixEndpoint(std::string_view path) {
  if (path.empty() || path.front() != '/' || path.size() > kMaxSocketPathBytes ||
      !Printable(path) || path.find("/../") != std::string_view::npos ||
      absl::EndsWith(core::ToAbsl(path), "/..") || path.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("source.endpoint must name a socket by an absolute path of at most ",
                     kMaxSocketPathBytes, " printable bytes without spaces or \"..\""));
  }
  return absl::OkStatus();
}

// A DNS name (labels of letters, digits and '-', not starting or ending with '-'), a dotted
// IPv4 address, or a bracketed IPv6 address ([::1]).
bool ValidHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    const std::string_view inner = host.substr(1, host.size() - 2);
    return !inner.empty() && inner.size() <= 45 && inner.find(':') != std::string_view::npos &&
           std::all_of(inner.begin(), inner.end(), [](char c) {
             return absl::ascii_isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
           });
  }
  if (host.empty() || host.size() > 253) {
    return false;
  }
  for (const absl::string_view label : absl::StrSplit(core::ToAbsl(host), '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-' ||
        !std::all_of(label.begin(), label.end(), [](char c) {
          return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-';
        })) {
      return false;
    }
  }
  return true;
}

// tcp://host:port and nothing else: no user, path, query or fragment, a port of 1..65535.
absl::Status CheckTcpEndpoint(std::string_view rest) {
  const std::size_t colon = rest.rfind(':');
  const std::string_view host = colon == std::string_view::npos ? rest : rest.substr(0, colon);
  const std::string_view port =
      colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  int port_number = 0;
  const bool port_ok =
      !port.empty() && port.size() <= 5 && port.front() != '0' &&
      std::all_of(port.begin(), port.end(),
                  [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }) &&
      absl::SimpleAtoi(core::ToAbsl(port), &port_number) && port_number >= 1 &&
      port_number <= 65535;
  if (!port_ok || !ValidHost(host)) {
    return absl::InvalidArgumentError(
        "source.endpoint must be tcp://HOST:PORT (a DNS name, an IPv4 address or a bracketed "
        "IPv6 address, and a port of 1..65535; no user, path or query), as in "
        "tcp://docker.example:2376");
  }
  return absl::OkStatus();
}

absl::Status CheckEndpoint(const std::string& endpoint) {
  constexpr std::string_view kUnix = "unix://";
  constexpr std::string_view kTcp = "tcp://";
  const std::string_view text = endpoint;
  if (text.rfind(kUnix, 0) == 0) {
    return CheckUnixEndpoint(text.substr(kUnix.size()));
  }
  if (text.rfind(kTcp, 0) == 0) {
    return CheckTcpEndpoint(text.substr(kTcp.size()));
  }
  return absl::InvalidArgumentError(
      "source.endpoint must be unix:// and an absolute socket path, as in "
      "unix:///var/run/docker.sock, or tcp://HOST:PORT with TLS client certificates");
}

// A TLS file setting: an absolute path of printable bytes (the file itself is checked when the
// Engine is opened, naming the setting: engine_client.cc).
void ReadTlsFile(core::JsonObjectReader& reader, std::string_view key, std::string& out) {
  std::optional<std::string> path = reader.String(key, {kMaxTlsPathBytes});
  if (!path.has_value()) {
    return;
  }
  if (path->empty() || path->front() != '/' || !Printable(*path) || path->back() == '/') {
    reader.Fail(key, "must be an absolute path of printable bytes without spaces");
    return;
  }
  out = *std::move(path);
}

// The transport settings agree with the endpoint: TLS files and allow_plain_tcp only for
// tcp://, a client certificate with its key, and a tcp:// endpoint uses TLS unless the operator
// accepted plain TCP.
absl::Status CheckTransport(const EngineOptions& engine) {
  const bool tcp = engine.endpoint.rfind("tcp://", 0) == 0;
  const bool tls =
      !engine.tls_ca_file.empty() || !engine.tls_cert_file.empty() || !engine.tls_key_file.empty();
  if (!tcp && tls) {
    return absl::InvalidArgumentError(
        "source.tls_ca_file, tls_cert_file and tls_key_file apply to a tcp:// endpoint only, not "
        "to a unix socket");
  }
  if (!tcp && engine.allow_plain_tcp) {
    return absl::InvalidArgumentError(
        "source.allow_plain_tcp applies to a tcp:// endpoint only, not to a unix socket");
  }
  if (engine.tls_cert_file.empty() != engine.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        engine.tls_cert_file.empty()
            ? "source.tls_key_file is set without tls_cert_file: set both or neither"
            : "source.tls_cert_file is set without tls_key_file: set both or neither");
  }
  if (tcp && tls && engine.allow_plain_tcp) {
    return absl::InvalidArgumentError(
        "source.allow_plain_tcp contradicts the TLS settings: drop one of them");
  }
  if (tcp && !tls && !engine.allow_plain_tcp) {
    return absl::InvalidArgumentError(
        "source.endpoint is tcp:// without TLS, which is refused: anyone who reaches the port "
        "controls the daemon. Set tls_ca_file, tls_cert_file and tls_key_file (the daemon runs "
        "with --tlsverify), or \"allow_plain_tcp\": true to accept the risk");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DockerFleetOptions> ParseDockerSource(std::string_view source_json,
                                                     DockerFleetOptions base) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(source_json, kSourceLimits);
  if (!doc.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("source: not valid JSON: ", doc.status().message()));
  }
  core::JsonObjectReader reader(*doc, "source");
  PULSE_RETURN_IF_ERROR(reader.ExpectMembers(
      {"name", "kind", "endpoint", "allow_actions", "sample_interval_seconds", "max_staleness_ms",
       "action_deadline_seconds", "stop_grace_seconds", "allow_exec", "exec_deadline_seconds",
       "tls_ca_file", "tls_cert_file", "tls_key_file", "allow_plain_tcp"}));
  DockerFleetOptions options = std::move(base);
  const std::optional<std::string> endpoint = reader.String("endpoint", {kMaxTcpEndpointBytes});
  if (const std::optional<bool> allow = reader.Bool("allow_actions")) {
    options.allow_actions = *allow;
  }
  // 0 turns the background sampler off (stats are then read on demand).
  if (const auto interval = reader.Int("sample_interval_seconds", 0, 3600)) {
    options.sample_interval = absl::Seconds(*interval);
  }
  if (const auto staleness = reader.Int("max_staleness_ms", 0, 60'000)) {
    options.max_staleness = absl::Milliseconds(*staleness);
  }
  if (const auto deadline = reader.Int("action_deadline_seconds", 1, 600)) {
    options.action_deadline = absl::Seconds(*deadline);
  }
  if (const auto grace = reader.Int("stop_grace_seconds", 0, 300)) {
    options.stop_grace = absl::Seconds(*grace);
  }
  if (const std::optional<bool> exec = reader.Bool("allow_exec")) {
    options.allow_exec = *exec;
  }
  if (const auto deadline = reader.Int("exec_deadline_seconds", 1, 300)) {
    options.exec_deadline = absl::Seconds(*deadline);
  }
  ReadTlsFile(reader, "tls_ca_file", options.engine.tls_ca_file);
  ReadTlsFile(reader, "tls_cert_file", options.engine.tls_cert_file);
  ReadTlsFile(reader, "tls_key_file", options.engine.tls_key_file);
  if (const std::optional<bool> plain = reader.Bool("allow_plain_tcp")) {
    options.engine.allow_plain_tcp = *plain;
  }
  PULSE_RETURN_IF_ERROR(reader.Finish());
  if (endpoint.has_value()) {
    PULSE_RETURN_IF_ERROR(CheckEndpoint(*endpoint));
    options.engine.endpoint = *endpoint;
  }
  PULSE_RETURN_IF_ERROR(CheckTransport(options.engine));
  return options;
}

}  // namespace pulse::docker
