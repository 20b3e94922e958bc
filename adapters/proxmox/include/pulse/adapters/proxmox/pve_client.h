// PveClient: HTTPS calls to a Proxmox VE cluster's API (https://HOST:8006, /api2/json) with an
// API token (`Authorization: PVEAPIToken=USER@REALM!TOKENID=SECRET`), over the shared HTTP
// client (adapters/http_client); with ProxmoxApi::kBackupServer, to a Proxmox Backup Server
// (https://HOST:8007, `Authorization: PBSAPIToken=USER@REALM!TOKENID:SECRET`), whose refusals
// carry their message in the body rather than the reason line (DecodePbsError). TLS is verified
// against a CA file or a pinned SHA-256 certificate fingerprint (self-signed clusters are the
// norm), or the system store when neither is given; a certificate that fails verification ends
// the handshake, so no request carrying the token is ever sent to it. Answers other than 200
// become statuses whose message carries PVE's reason line (PBS's body text; printable, bounded)
// and never the token (PBS also: 404, and 400 "... does not exist", NotFound):
//   401 Unauthenticated (the token is unknown, revoked or its secret wrong), 403
//   PermissionDenied (a privilege is missing), 400 InvalidArgument (with the "errors" members),
//   500 "... does not exist" NotFound, other 500 FailedPrecondition, 501 Unimplemented,
//   595/596 Unavailable (the node's proxy failed), anything else Unavailable; transport
//   failures keep the http_client codes (FailedPrecondition for an untrusted certificate).
//
// Following the cluster (docs/fleet.md, "A cluster, not a node"): the configured URL is the
// first endpoint. Follow() asks the cluster for its members (/cluster/status) and, for each
// other online member, the certificate its proxy presents (/nodes/{node}/certificates/info),
// and adds https://<member ip>:<configured port> pinned to that fingerprint: the configured
// node, trusted by the operator's pin or CA, vouches for the others, and the token goes only to
// a node presenting the certificate it named. A member that left the cluster is dropped; one
// whose certificate changed is pinned again. Calls go to the endpoint that last answered and
// move on to the next one when it cannot be reached: any method when nothing was sent (refused,
// unreachable, TLS handshake or an untrusted certificate), a GET also after a timeout or a lost
// connection or a 595/596 from a node's proxy. A write that may have reached a node is never
// sent twice. When every endpoint fails, the first failure is returned with the others named.
// Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
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

// One API endpoint of the cluster.
struct PveEndpoint {
  std::string url;          // https://10.0.0.2:8006
  std::string node;         // the member it belongs to ("" until the cluster named it)
  std::string fingerprint;  // the pin of a discovered endpoint ("" for the configured one)
  bool current = false;     // calls go here first
};

// At most this many endpoints (a PVE cluster has at most a few dozen nodes).
inline constexpr std::size_t kMaxPveEndpoints = 64;

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

  // Reads the cluster's members and their certificates and updates the endpoints (above). The
  // members it could not add are in the result's `skipped` with the reason (a certificate
  // that cannot be read, a member without an address); an error only when /cluster/status
  // itself cannot be read (a single node without a cluster answers it too).
  struct FollowResult {
    std::vector<PveEndpoint> endpoints;  // every endpoint after the update, the first configured
    std::vector<std::string> skipped;    // "pve3: <why>"
  };
  [[nodiscard]] absl::StatusOr<FollowResult> Follow();
  // Replaces the discovered endpoints with `endpoints`' (the first, the configured one, is
  // kept): a second client of the same cluster follows what another one found.
  void AdoptEndpoints(const std::vector<PveEndpoint>& endpoints);
  // Every endpoint, the first the configured one; `current` marks the one calls go to first.
  std::vector<PveEndpoint> Endpoints() const;

  // The configured node's host.
  const std::string& host() const { return host_; }

 private:
  struct Endpoint {
    PveEndpoint info;
    std::string host;
    std::shared_ptr<const http_client::HttpClient> http;
  };
  // One exchange with one endpoint: the result, and whether the next endpoint may be tried.
  struct Outcome {
    absl::StatusOr<std::string> result;
    bool move_on = false;
  };
  PveClient(PveClientOptions options, Endpoint first, std::string authorization, std::string host,
            int port);
  [[nodiscard]] absl::StatusOr<std::string> Call(http_client::Request request) const;
  Outcome Exchange(const Endpoint& endpoint, const http_client::Request& request,
                   std::string_view what) const;
  absl::StatusOr<Endpoint> OpenDiscovered(const PveEndpoint& endpoint) const;
  void SetEndpoints(std::string first_node, std::vector<Endpoint> discovered)
      ABSL_LOCKS_EXCLUDED(mu_);

  const PveClientOptions options_;
  const std::string authorization_;
  const std::string host_;
  const int port_;
  mutable absl::Mutex mu_;
  std::vector<Endpoint> endpoints_ ABSL_GUARDED_BY(mu_);  // [0]: the configured URL
  mutable std::size_t current_ ABSL_GUARDED_BY(mu_) = 0;
};

// `segment` percent-encoded for one path segment (every byte but A-Z a-z 0-9 - . _ ~).
std::string EncodePathSegment(std::string_view segment);

}  // namespace pulse::proxmox
