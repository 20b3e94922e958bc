#include "pulse/adapters/proxmox/pve_client.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
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
  http_client::ClientOptions http;
  http.base = *url;
  http.base.path_prefix = "/api2/json";
  http.timeouts = options.timeouts;
  http.ca_file = options.ca_file;
  http.pinned_sha256 = options.fingerprint;
  http.max_body_bytes = kMaxPveAnswerBytes;
  http.proxy_from_environment = false;
  http.keep_alive = true;
  absl::StatusOr<std::unique_ptr<http_client::HttpClient>> client =
      http_client::HttpClient::Open(std::move(http));
  if (!client.ok()) {
    return client.status();
  }
  // PVE separates the token id from the secret with '=', PBS with ':'.
  std::string authorization =
      options.api == ProxmoxApi::kBackupServer
          ? absl::StrCat("PBSAPIToken=", options.token_id, ":", options.token_secret)
          : absl::StrCat("PVEAPIToken=", options.token_id, "=", options.token_secret);
  return std::unique_ptr<PveClient>(
      new PveClient(*std::move(client), options.api, std::move(authorization), url->host));
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

absl::StatusOr<std::string> PveClient::Call(http_client::Request request) const {
  const std::string what = absl::StrCat(request.method, " ", Printable(request.target, 120));
  const char* product =
      api_ == ProxmoxApi::kBackupServer ? "Proxmox Backup Server " : "Proxmox VE ";
  request.headers.emplace_back("Authorization", authorization_);
  request.headers.emplace_back("Accept", "application/json");
  absl::StatusOr<http_client::Response> response = http_->Send(request);
  if (!response.ok()) {
    return absl::Status(response.status().code(),
                        absl::StrCat(product, host_, ": ", response.status().message()));
  }
  const int status = response->head.status;
  if (status == 200) {
    return std::move(response->body);
  }
  std::string detail = Reason(api_, *response);
  const std::string head = absl::StrCat(product, host_, " answered ", status, " to ", what,
                                        detail.empty() ? "" : ": ", detail);
  switch (status) {
    case 401:
      return absl::UnauthenticatedError(
          absl::StrCat(head, " (the API token is unknown, revoked or its secret is wrong)"));
    case 403:
      return absl::PermissionDeniedError(
          absl::StrCat(head, " (the token lacks a privilege; docs/fleet.md lists them)"));
    case 400:
      // PBS answers a datastore it does not know with 400 "datastore 'x' does not exist".
      if (api_ == ProxmoxApi::kBackupServer && absl::StrContains(detail, "does not exist")) {
        return absl::NotFoundError(head);
      }
      return absl::InvalidArgumentError(head);
    case 501:
      return absl::UnimplementedError(head);
    case 595:
    case 596:
      return absl::UnavailableError(absl::StrCat(head, " (the node's proxy failed)"));
    default:
      break;
  }
  // PBS answers a path it does not serve with 404.
  if (status == 404) {
    return absl::NotFoundError(head);
  }
  if (status == 500) {
    if (absl::StrContains(detail, "does not exist")) {
      return absl::NotFoundError(head);
    }
    return absl::FailedPreconditionError(head);
  }
  return absl::UnavailableError(head);
}

}  // namespace pulse::proxmox
