// Where a provider's requests go: inside the local trust boundary (a model server on this
// machine or the operator's private network, which may see the full context) or outside it
// (anything else, which only ever sees sanitized context: secrets redacted, localOnly resources
// withheld). Decided from the destination — the host of the resolved base URL — never from the
// provider's name, and never by resolving DNS. Local hosts: `localhost` itself and IP literals
// in canonical form in the loopback (127.0.0.0/8, ::1), private (10/8, 172.16/12, 192.168/16,
// fc00::/7) and link-local (169.254/16, fe80::/10) ranges; an IPv4-mapped IPv6 address
// (::ffff:a.b.c.d) is decided by its IPv4 address. Everything else is remote: every other
// name (127.0.0.1.evil.com, localhost., foo.localhost, a LAN host name), and every IPv4 form a
// resolver might read differently (0x7f000001, 2130706433, 0177.0.0.1, 127.1, 010.0.0.1).
// When in doubt, remote. (A unix-socket endpoint would be local, but BaseUrl has no form for
// one today.) A hosted provider (one whose registry route is not local_model_server) is remote
// whatever its base URL says: a loopback URL in front of it is a proxy to the hosted API.
// The operator may override the decision explicitly (LocalitySetting). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/providers/provider_registry.h"

namespace pulse::adapters::providers {

enum class Locality { kLocal, kRemote };
// Wire: local, remote.
std::string_view ToString(Locality locality);

// What the operator configured: decide from the URL (the default), or declare the endpoint.
enum class LocalitySetting { kAuto, kLocal, kRemote };
// Wire: auto, local, remote (exact, lower case); nullopt for anything else.
std::optional<LocalitySetting> ParseLocalitySetting(std::string_view text);
std::string_view ToString(LocalitySetting setting);

struct HostLocality {
  Locality locality = Locality::kRemote;
  // Why, naming the class of host but not the host: "a loopback address", "a host name other
  // than localhost (names are not resolved to decide)".
  std::string reason;
};

// The locality of `host` as BaseUrl holds it (a lower-cased name, an IPv4 literal, or an IPv6
// literal without brackets). Never fails: anything not provably local is remote.
HostLocality ClassifyHost(std::string_view host);

struct Destination {
  Locality locality = Locality::kRemote;
  LocalitySetting setting = LocalitySetting::kAuto;
  std::string reason;  // one sentence fragment for logs and GET /api/ai/models; no URL, no key
};

// The destination of `entry` at `host` under `setting`. InvalidArgument when `setting` is
// kLocal but the provider is a hosted API at its registry default base URL (a third party
// cannot be declared local; point the base URL at your own server first).
[[nodiscard]] absl::StatusOr<Destination> DecideDestination(const ProviderEntry& entry,
                                                            std::string_view host,
                                                            bool custom_base_url,
                                                            LocalitySetting setting);

}  // namespace pulse::adapters::providers
