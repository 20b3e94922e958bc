#include "pulse/adapters/proxmox/pve_client.h"

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "pulse/adapters/http_client/url.h"
#include "pulse/adapters/proxmox/pbs_api.h"
#include "pulse/adapters/proxmox/pve_api.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox {
namespace {

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

bool AllNameChars(std::string_view text) {
  if (text.empty()) {
    return false;
  }
  for (const char c : text) {
    if (!IsNameChar(c)) {
      return false;
    }
  }
  return true;
}

// The product's message: PVE's reason line (pveproxy puts the error there) and the body's
// "errors" members; PBS's body text (its reason line is the standard phrase), printable and
// bounded.
std::string Reason(ProxmoxApi api, const http_client::Response& response) {
  if (api == ProxmoxApi::kBackupServer) {
    const std::string text = DecodePbsError(response.body);
    return text.empty() ? Printable(response.head.reason, 200) : text;
  }
  std::string out = Printable(response.head.reason, 200);
  const std::string errors = DecodeErrors(response.body);
  if (!errors.empty()) {
    absl::StrAppend(&out, out.empty() ? "" : " (", errors, out.empty() ? "" : ")");
  }
  return out;
}

// Whether a failed exchange may go on to the next endpoint: always when nothing was sent (no
// connection, no TLS, or a certificate that failed its pin), and for a read also when the
// request may have arrived (a GET changes nothing).
bool MayMoveOn(http_client::ErrorKind kind, bool idempotent) {
  switch (kind) {
    case http_client::ErrorKind::kRefused:
    case http_client::ErrorKind::kUnknownHost:
    case http_client::ErrorKind::kUnreachable:
    case http_client::ErrorKind::kTlsHandshake:
    case http_client::ErrorKind::kTlsUntrusted:
      return true;
    case http_client::ErrorKind::kTimeout:
    case http_client::ErrorKind::kConnectionLost:
    case http_client::ErrorKind::kProtocol:
      return idempotent;
    default:
      return false;
  }
}

absl::StatusOr<std::shared_ptr<const http_client::HttpClient>> OpenHttp(
    const http_client::Url& url, const PveClientOptions& options, const std::string& ca_file,
    const std::string& fingerprint) {
  http_client::ClientOptions http;
  http.base = url;
  http.base.path_prefix = "/api2/json";
  http.timeouts = options.timeouts;
  http.ca_file = ca_file;
  http.pinned_sha256 = fingerprint;
  http.max_body_bytes = kMaxPveAnswerBytes;
  http.proxy_from_environment = false;
  http.keep_alive = true;
  absl::StatusOr<std::unique_ptr<http_client::HttpClient>> client =
      http_client::HttpClient::Open(std::move(http));
  if (!client.ok()) {
    return client.status();
  }
  return std::shared_ptr<const http_client::HttpClient>(*std::move(client));
}

// A PVE node name as it may appear in a path and a resource id.
bool IsNodeName(std::string_view name) {
  return name.size() <= 64 && AllNameChars(name) &&
         absl::ascii_isalnum(static_cast<unsigned char>(name.front()));
}

}  // namespace

bool IsValidTokenId(std::string_view token_id) {
  if (token_id.size() > 128) {
    return false;
  }
  const std::size_t at = token_id.find('@');
  const std::size_t bang = token_id.find('!');
  if (at == std::string_view::npos || bang == std::string_view::npos || bang < at) {
    return false;
  }
  const std::string_view token = token_id.substr(bang + 1);
  return AllNameChars(token_id.substr(0, at)) &&
         AllNameChars(token_id.substr(at + 1, bang - at - 1)) && AllNameChars(token) &&
         absl::ascii_isalpha(static_cast<unsigned char>(token.front()));
}

bool IsValidFingerprint(std::string_view text) {
  const std::string hex = absl::StrReplaceAll(core::ToAbsl(text), {{":", ""}});
  if (hex.size() != 64) {
    return false;
  }
  for (const char c : hex) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

std::string EncodePathSegment(std::string_view segment) {
  std::string out;
  for (const char c : segment) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<PveClient>> PveClient::Open(const PveClientOptions& options) {
  absl::StatusOr<http_client::Url> url = http_client::ParseUrl(options.url, "url");
  if (!url.ok()) {
    return url.status();
  }
  if (!url->https || !url->path_prefix.empty()) {
    return absl::InvalidArgumentError(
        "url must be https://HOST:PORT without a path, as in https://pve1:8006");
  }
  if (!IsValidTokenId(options.token_id)) {
    return absl::InvalidArgumentError("token_id must be USER@REALM!TOKENID, as in pulse@pve!pulse");
  }
  if (options.token_secret.empty() || options.token_secret.size() > 256) {
    return absl::InvalidArgumentError("the token secret is empty or longer than 256 bytes");
  }
  for (const char c : options.token_secret) {
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError(
          "the token secret holds a character outside printable ASCII (a stray newline?)");
    }
  }
  if (!options.fingerprint.empty() && !options.ca_file.empty()) {
    return absl::InvalidArgumentError("give fingerprint or ca_file, not both");
  }
  absl::StatusOr<std::shared_ptr<const http_client::HttpClient>> http =
      OpenHttp(*url, options, options.ca_file, options.fingerprint);
  if (!http.ok()) {
    return http.status();
  }
  Endpoint first;
  first.info.url = url->Origin();
  first.host = url->host;
  first.http = *std::move(http);
  // PVE separates the token id from the secret with '=', PBS with ':'.
  std::string authorization =
      options.api == ProxmoxApi::kBackupServer
          ? absl::StrCat("PBSAPIToken=", options.token_id, ":", options.token_secret)
          : absl::StrCat("PVEAPIToken=", options.token_id, "=", options.token_secret);
  return std::unique_ptr<PveClient>(
      new PveClient(options, std::move(first), std::move(authorization), url->host, url->port));
}

PveClient::PveClient(PveClientOptions options, Endpoint first, std::string authorization,
                     std::string host, int port)
    : options_(std::move(options)),
      authorization_(std::move(authorization)),
      host_(std::move(host)),
      port_(port) {
  endpoints_.push_back(std::move(first));
}

absl::StatusOr<std::string> PveClient::Get(std::string_view path) const {
  http_client::Request request;
  request.method = "GET";
  request.target = std::string(path);
  return Call(std::move(request));
}

absl::StatusOr<std::string> PveClient::Post(std::string_view path, std::string_view form) const {
  http_client::Request request;
  request.method = "POST";
  request.target = std::string(path);
  request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  request.body = std::string(form);
  return Call(std::move(request));
}

PveClient::Outcome PveClient::Exchange(const Endpoint& endpoint,
                                       const http_client::Request& request,
                                       std::string_view what) const {
  const bool idempotent = request.method == "GET";
  const char* product =
      options_.api == ProxmoxApi::kBackupServer ? "Proxmox Backup Server " : "Proxmox VE ";
  absl::StatusOr<http_client::Response> response = endpoint.http->Send(request);
  if (!response.ok()) {
    const std::optional<http_client::ErrorKind> kind = http_client::ErrorKindOf(response.status());
    return {absl::Status(response.status().code(),
                         absl::StrCat(product, endpoint.host, ": ", response.status().message())),
            kind.has_value() && MayMoveOn(*kind, idempotent)};
  }
  const int status = response->head.status;
  if (status == 200) {
    return {std::move(response->body), false};
  }
  std::string detail = Reason(options_.api, *response);
  const std::string head = absl::StrCat(product, endpoint.host, " answered ", status, " to ",
                                        core::ToAbsl(what), detail.empty() ? "" : ": ", detail);
  switch (status) {
    case 401:
      return {absl::UnauthenticatedError(absl::StrCat(
                  head, " (the API token is unknown, revoked or its secret is wrong)")),
              false};
    case 403:
      return {absl::PermissionDeniedError(
                  absl::StrCat(head, " (the token lacks a privilege; docs/fleet.md lists them)")),
              false};
    case 400:
      // PBS answers a datastore it does not know with 400 "datastore 'x' does not exist".
      if (options_.api == ProxmoxApi::kBackupServer &&
          absl::StrContains(detail, "does not exist")) {
        return {absl::NotFoundError(head), false};
      }
      return {absl::InvalidArgumentError(head), false};
    case 501:
      return {absl::UnimplementedError(head), false};
    case 595:
    case 596:
      // The node's proxy could not reach the node the path names: another member may.
      return {absl::UnavailableError(absl::StrCat(head, " (the node's proxy failed)")), idempotent};
    default:
      break;
  }
  // PBS answers a path it does not serve with 404.
  if (status == 404) {
    return {absl::NotFoundError(head), false};
  }
  if (status == 500) {
    if (absl::StrContains(detail, "does not exist")) {
      return {absl::NotFoundError(head), false};
    }
    return {absl::FailedPreconditionError(head), false};
  }
  return {absl::UnavailableError(head), false};
}

absl::StatusOr<std::string> PveClient::Call(http_client::Request request) const {
  const std::string what = absl::StrCat(request.method, " ", Printable(request.target, 120));
  request.headers.emplace_back("Authorization", authorization_);
  request.headers.emplace_back("Accept", "application/json");
  std::vector<Endpoint> endpoints;
  std::size_t start = 0;
  {
    absl::MutexLock lock(&mu_);
    endpoints = endpoints_;
    start = current_ < endpoints.size() ? current_ : 0;
  }
  absl::Status first;
  std::vector<std::string> others;
  for (std::size_t k = 0; k < endpoints.size(); ++k) {
    const Endpoint& endpoint = endpoints[(start + k) % endpoints.size()];
    Outcome outcome = Exchange(endpoint, request, what);
    if (outcome.result.ok() || !outcome.move_on) {
      // This node answered (or may have acted): its answer stands, and calls stay with it. It is
      // looked up by URL, as the list may have changed meanwhile.
      if (k != 0) {
        absl::MutexLock lock(&mu_);
        for (std::size_t i = 0; i < endpoints_.size(); ++i) {
          if (endpoints_[i].info.url == endpoint.info.url) {
            current_ = i;
          }
        }
      }
      return std::move(outcome.result);
    }
    if (k == 0) {
      first = outcome.result.status();
    } else {
      others.push_back(
          absl::StrCat(endpoint.info.node.empty() ? endpoint.host : endpoint.info.node, ": ",
                       Printable(core::ToStd(outcome.result.status().message()), 160)));
    }
  }
  if (others.empty()) {
    return first;
  }
  const std::size_t more = others.size() > 3 ? others.size() - 3 : 0;
  others.resize(others.size() - more);
  std::string tail = absl::StrJoin(others, "; ");
  if (more > 0) {
    absl::StrAppend(&tail, "; and ", more, " more");
  }
  return absl::Status(first.code(),
                      absl::StrCat(first.message(), " (the cluster's other nodes: ", tail, ")"));
}

absl::StatusOr<PveClient::Endpoint> PveClient::OpenDiscovered(const PveEndpoint& endpoint) const {
  absl::StatusOr<http_client::Url> url = http_client::ParseUrl(endpoint.url, "endpoint");
  if (!url.ok()) {
    return url.status();
  }
  absl::StatusOr<std::shared_ptr<const http_client::HttpClient>> http =
      OpenHttp(*url, options_, "", endpoint.fingerprint);
  if (!http.ok()) {
    return http.status();
  }
  Endpoint out;
  out.info = endpoint;
  out.info.current = false;
  out.host = url->host;
  out.http = *std::move(http);
  return out;
}

void PveClient::SetEndpoints(std::string first_node, std::vector<Endpoint> discovered) {
  absl::MutexLock lock(&mu_);
  const std::string current_url = endpoints_[current_ < endpoints_.size() ? current_ : 0].info.url;
  if (!first_node.empty()) {
    endpoints_[0].info.node = std::move(first_node);
  }
  endpoints_.resize(1);
  for (Endpoint& e : discovered) {
    if (endpoints_.size() < kMaxPveEndpoints) {
      endpoints_.push_back(std::move(e));
    }
  }
  current_ = 0;
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    if (endpoints_[i].info.url == current_url) {
      current_ = i;
    }
  }
}

absl::StatusOr<PveClient::FollowResult> PveClient::Follow() {
  // Which endpoint answers is the one calls went to last: the member marked local is its node.
  absl::StatusOr<std::string> body = Get("/cluster/status");
  if (!body.ok()) {
    return body.status();
  }
  absl::StatusOr<std::vector<PveClusterMember>> members = DecodeClusterStatus(*body);
  if (!members.ok()) {
    return members.status();
  }
  std::vector<Endpoint> known;
  std::size_t answered = 0;
  {
    absl::MutexLock lock(&mu_);
    known = endpoints_;
    answered = current_ < known.size() ? current_ : 0;
  }
  std::string first_node = known[0].info.node;
  for (const PveClusterMember& m : *members) {
    if (m.local && answered == 0) {
      first_node = m.name;
    }
  }
  FollowResult result;
  std::vector<Endpoint> discovered;
  for (const PveClusterMember& m : *members) {
    if (m.name == first_node || !IsNodeName(m.name)) {
      continue;
    }
    const Endpoint* existing = nullptr;
    for (std::size_t i = 1; i < known.size(); ++i) {
      if (known[i].info.node == m.name) {
        existing = &known[i];
      }
    }
    const auto keep_or_skip = [&](const std::string& why) {
      if (existing != nullptr) {
        discovered.push_back(*existing);
      }
      result.skipped.push_back(absl::StrCat(m.name, ": ", why));
    };
    if (m.ip.empty()) {
      keep_or_skip("the cluster lists no address for it");
      continue;
    }
    if (!m.online) {
      keep_or_skip("offline");
      continue;
    }
    http_client::Url url;
    url.https = true;
    url.host = m.ip;
    url.port = port_;
    PveEndpoint endpoint;
    endpoint.url = url.Origin();
    endpoint.node = m.name;
    if (endpoint.url == known[0].info.url) {
      continue;  // the configured URL is this member's address
    }
    absl::StatusOr<std::string> info =
        Get(absl::StrCat("/nodes/", EncodePathSegment(m.name), "/certificates/info"));
    absl::StatusOr<std::vector<PveCertificate>> certificates =
        info.ok() ? DecodeCertificateInfo(*info)
                  : absl::StatusOr<std::vector<PveCertificate>>(info.status());
    if (!certificates.ok()) {
      keep_or_skip(absl::StrCat("its certificate cannot be read: ",
                                Printable(core::ToStd(certificates.status().message()), 200)));
      continue;
    }
    const PveCertificate* presented = ProxyCertificate(*certificates);
    if (presented == nullptr) {
      keep_or_skip("it lists no pve-ssl.pem or pveproxy-ssl.pem certificate");
      continue;
    }
    endpoint.fingerprint = presented->fingerprint;
    if (existing != nullptr && existing->info.url == endpoint.url &&
        existing->info.fingerprint == endpoint.fingerprint) {
      discovered.push_back(*existing);  // unchanged: keep its connections
      continue;
    }
    absl::StatusOr<Endpoint> opened = OpenDiscovered(endpoint);
    if (!opened.ok()) {
      keep_or_skip(Printable(core::ToStd(opened.status().message()), 200));
      continue;
    }
    discovered.push_back(*std::move(opened));
  }
  SetEndpoints(first_node, std::move(discovered));
  result.endpoints = Endpoints();
  return result;
}

void PveClient::AdoptEndpoints(const std::vector<PveEndpoint>& endpoints) {
  if (endpoints.empty()) {
    return;
  }
  std::vector<Endpoint> known;
  {
    absl::MutexLock lock(&mu_);
    known = endpoints_;
  }
  std::vector<Endpoint> discovered;
  for (std::size_t i = 1; i < endpoints.size(); ++i) {
    const PveEndpoint& e = endpoints[i];
    bool reused = false;
    for (std::size_t j = 1; j < known.size() && !reused; ++j) {
      if (known[j].info.url == e.url && known[j].info.fingerprint == e.fingerprint) {
        discovered.push_back(known[j]);
        reused = true;
      }
    }
    if (!reused) {
      if (absl::StatusOr<Endpoint> opened = OpenDiscovered(e); opened.ok()) {
        discovered.push_back(*std::move(opened));
      }
    }
  }
  SetEndpoints(endpoints.front().node, std::move(discovered));
}

std::vector<PveEndpoint> PveClient::Endpoints() const {
  absl::MutexLock lock(&mu_);
  std::vector<PveEndpoint> out;
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    out.push_back(endpoints_[i].info);
    out.back().current = i == current_;
  }
  return out;
}

}  // namespace pulse::proxmox
