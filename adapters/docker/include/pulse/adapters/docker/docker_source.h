// The settings of a fleet source of kind "docker" (docs/fleet.md, "docker"), read strictly from
// the source's JSON object as written in a sources document:
//   {"name": "docker1", "kind": "docker", "endpoint": "unix:///var/run/docker.sock",
//    "allow_actions": false, "sample_interval_seconds": 15, "max_staleness_ms": 2000,
//    "action_deadline_seconds": 60, "stop_grace_seconds": 10, "allow_exec": false,
//    "exec_deadline_seconds": 30}
// and for a remote daemon "endpoint": "tcp://HOST:PORT" with "tls_ca_file", "tls_cert_file",
// "tls_key_file" (absolute paths; the daemon runs with --tlsverify) or "allow_plain_tcp": true.
// Every member but name and kind is optional; anything else is refused. Pure; thread-safe.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/docker/docker_fleet.h"

namespace pulse::docker {

// `base` with the source's settings applied. InvalidArgument naming the member for an unknown
// or repeated member, a wrong type, a number out of range, an endpoint that is neither
// unix:// and an absolute path of printable characters (at most 100 bytes, no "..") nor
// tcp://HOST:PORT, a TLS file that is not an absolute path, TLS settings on a unix socket, a
// client certificate without its key (or the reverse), and tcp:// without TLS unless
// allow_plain_tcp. Whether the TLS files exist is checked when the Engine is opened.
[[nodiscard]] absl::StatusOr<DockerFleetOptions> ParseDockerSource(std::string_view source_json,
                                                                   DockerFleetOptions base = {});

}  // namespace pulse::docker
