// What the Docker Engine API answers, as values, and the strict parsers of its JSON (bounded by
// the core's JSON limits: oversized, too deep, malformed or wrongly typed answers are DataLoss
// errors, never crashes). The formulas for CPU %, memory and block I/O are the Engine API's own
// (docs/docker.md, "Stats"). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::docker {

// An Engine API version "1.41" as numbers.
struct ApiVersion {
  int major = 1;
  int minor = 41;
  friend bool operator==(const ApiVersion&, const ApiVersion&) = default;
  friend bool operator<(const ApiVersion& a, const ApiVersion& b) {
    return a.major != b.major ? a.major < b.major : a.minor < b.minor;
  }
  friend bool operator>(const ApiVersion& a, const ApiVersion& b) { return b < a; }
  friend bool operator<=(const ApiVersion& a, const ApiVersion& b) { return !(b < a); }
  friend bool operator>=(const ApiVersion& a, const ApiVersion& b) { return !(a < b); }
  std::string ToString() const;
};
// "1.41" -> {1, 41}; InvalidArgument for anything else.
absl::StatusOr<ApiVersion> ParseApiVersion(std::string_view text);

inline constexpr ApiVersion kMinApiVersion{1, 41};  // Docker Engine 20.10
inline constexpr ApiVersion kMaxApiVersion{1, 47};  // the newest this client speaks

struct EngineVersion {
  std::string version;  // "20.10.24+dfsg1"
  ApiVersion api;       // the daemon's newest API
  ApiVersion min_api;   // the daemon's oldest API
  std::string os;       // "linux"
  std::string arch;     // "amd64"
  std::string kernel;   // "6.1.0-13-amd64"
};

// GET /info: the daemon host.
struct EngineInfo {
  std::string name;  // the host name
  std::string operating_system;
  std::string server_version;
  std::int64_t cpus = 0;
  std::int64_t memory_bytes = 0;
};

using Labels = std::map<std::string, std::string>;

struct ContainerSummary {
  std::string id;
  std::string name;   // the first name, without the leading '/'
  std::string image;  // as the container was created ("pulse-test:busybox")
  std::string image_id;
  std::string state;   // created, running, paused, restarting, removing, exited, dead
  std::string status;  // "Up 2 minutes", "Exited (1) 3 seconds ago"
  absl::Time created = absl::InfinitePast();
  Labels labels;
};

struct ContainerDetails {
  std::string id;
  std::string name;      // without the leading '/'
  std::string image;     // Config.Image
  std::string image_id;  // Image
  std::string state;     // State.Status
  bool running = false;
  bool restarting = false;
  bool oom_killed = false;
  bool tty = false;
  std::int64_t exit_code = 0;
  std::int64_t pid = 0;
  std::optional<absl::Time> started_at;   // nullopt: never started
  std::optional<absl::Time> finished_at;  // nullopt: never finished
  std::string health;  // State.Health.Status: starting, healthy, unhealthy; "" without a check
  std::int64_t restart_count = 0;
  std::string restart_policy;     // HostConfig.RestartPolicy.Name ("", no, always, on-failure, ...)
  std::int64_t memory_limit = 0;  // HostConfig.Memory in bytes; 0: no limit
  absl::Time created = absl::InfinitePast();
  Labels labels;  // Config.Labels
};

struct ContainerStats {
  absl::Time read = absl::InfinitePast();
  // (cpu delta / system delta) * online cpus * 100; nullopt without a previous sample.
  std::optional<double> cpu_percent;
  std::int64_t online_cpus = 0;
  std::uint64_t memory_used = 0;   // usage minus the page cache (inactive file pages)
  std::uint64_t memory_limit = 0;  // 0: unknown
  std::optional<double> memory_percent;
  std::uint64_t net_rx_bytes = 0;  // over all interfaces
  std::uint64_t net_tx_bytes = 0;
  std::uint64_t block_read_bytes = 0;
  std::uint64_t block_write_bytes = 0;
  std::uint64_t pids = 0;
};

struct EngineEvent {
  std::string type;    // container, image, network, volume, daemon, ...
  std::string action;  // die, oom, health_status: healthy, restart, start, stop, ...
  std::string actor_id;
  Labels attributes;  // Actor.Attributes (name, image, exitCode, container labels)
  absl::Time time = absl::InfinitePast();
};

// Each parser takes one answer's body. DataLoss names what was wrong (never repeats the body).
absl::StatusOr<EngineVersion> ParseVersionJson(std::string_view body);
absl::StatusOr<EngineInfo> ParseInfoJson(std::string_view body);
absl::StatusOr<std::vector<ContainerSummary>> ParseContainerListJson(std::string_view body);
absl::StatusOr<ContainerDetails> ParseContainerJson(std::string_view body);
absl::StatusOr<ContainerStats> ParseStatsJson(std::string_view body);
absl::StatusOr<EngineEvent> ParseEventJson(std::string_view line);
// The "message" of an error answer, or "" when the body is not one (at most 512 bytes kept).
std::string ParseErrorMessage(std::string_view body);

}  // namespace pulse::docker
