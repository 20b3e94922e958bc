// PveClient: HTTPS calls to one Proxmox VE API endpoint (https://HOST:8006, /api2/json) with an
// API token (`Authorization: PVEAPIToken=USER@REALM!TOKENID=SECRET`), over the shared HTTP
// client (adapters/http_client); with ProxmoxApi::kBackupServer, to a Proxmox Backup Server
// (https://HOST:8007, `Authorization: PBSAPIToken=USER@REALM!TOKENID:SECRET`), whose refusals
// carry their message in the body rather than the reason line (DecodePbsError). TLS is verified
// against a CA file or a pinned SHA-256 certificate fingerprint (self-signed clusters are the
// norm), or the system store when neither is given; a certificate that fails verification ends the
// handshake, so no request carrying the token is ever sent to it. Answers other than 200 become
// statuses whose message carries PVE's reason line (printable, bounded) and never the token:
//   401 Unauthenticated (the token is unknown, revoked or its secret wrong), 403
//   PermissionDenied (a privilege is missing), 400 InvalidArgument (with the "errors" members),
//   500 "... does not exist" NotFound, other 500 FailedPrecondition, 501 Unimplemented,
//   595/596 Unavailable (the node's proxy failed), anything else Unavailable; transport
//   failures keep the http_client codes (FailedPrecondition for an untrusted certificate).
// Thread-safe: immutable after Open.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/http_client/http_client.h"

namespace pulse::proxmox {

// Which Proxmox product answers: the token header and the names in messages follow it.
enum class ProxmoxApi { kVirtualEnvironment, kBackupServer };

struct PveClientOptions {
  ProxmoxApi api = ProxmoxApi::kVirtualEnvironment;
  std::string url;           // https://pve1:8006 (no path)
  std::string token_id;      // USER@REALM!TOKENID
  std::string token_secret;  // the token's secret (a UUID)
  std::string fingerprint;   // SHA-256 of the node's certificate, AB:CD:... (64 hex digits)
  std::string ca_file;       // PEM the certificate must chain to
  http_client::Timeouts timeouts;
};

// True for USER@REALM!TOKENID as PVE allows them (user and realm of [A-Za-z0-9._-], a token id
// of [A-Za-z][A-Za-z0-9._-]*, at most 128 bytes).
bool IsValidTokenId(std::string_view token_id);

// True for a SHA-256 certificate fingerprint: 64 hex digits, ':' separators optional.
bool IsValidFingerprint(std::string_view text);

class PveClient final {
 public:
  // InvalidArgument for a URL that is not https://HOST[:PORT] without a path, a malformed token
  // id, an empty secret or one with characters outside printable ASCII, both a fingerprint and
  // a CA file, a malformed fingerprint or an unreadable CA file.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PveClient>> Open(
      const PveClientOptions& options);

  // GET /api2/json<path>; the body of a 200 answer.
  [[nodiscard]] absl::StatusOr<std::string> Get(std::string_view path) const;
  // POST /api2/json<path> with a form body (application/x-www-form-urlencoded).
  [[nodiscard]] absl::StatusOr<std::string> Post(std::string_view path,
                                                 std::string_view form) const;

  const std::string& host() const { return host_; }

 private:
  PveClient(std::unique_ptr<http_client::HttpClient> http, ProxmoxApi api,
            std::string authorization, std::string host)
      : http_(std::move(http)),
        api_(api),
        authorization_(std::move(authorization)),
        host_(std::move(host)) {}
  [[nodiscard]] absl::StatusOr<std::string> Call(http_client::Request request) const;

  std::unique_ptr<http_client::HttpClient> http_;
  ProxmoxApi api_;
  std::string authorization_;
  std::string host_;
};

// `segment` percent-encoded for one path segment (every byte but A-Z a-z 0-9 - . _ ~).
std::string EncodePathSegment(std::string_view segment);

}  // namespace pulse::proxmox
