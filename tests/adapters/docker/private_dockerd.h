// PrivateDockerd: a real Docker daemon of the test's own, for tests, end-to-end runs and
// benchmarks (docs/docker.md, "Testing against a real daemon"). Start() runs `dockerd` with no
// network plumbing (--iptables=false --bridge=none --ip-forward=false --ip-masq=false) and
// private --data-root, --exec-root, --pidfile and unix socket under a fresh temp directory;
// dockerd then starts its own containerd under the exec root (its own containerd namespace,
// too, in case a system containerd is found), so it never touches a system Docker. It waits for
// /_ping, then imports a tiny image (kImage) from a rootfs tar holding only the static busybox,
// so nothing is pulled. Containers run with --network none. The destructor removes every
// container, stops the daemon (SIGTERM, then SIGKILL after 20 s, its containerd too), unmounts
// what it left and deletes the temp directory; any process still running from that directory
// (a containerd or shim of a killed daemon, or a container rooted there) is killed first.
// Thread-compatible: one owner.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/docker/engine_client.h"

namespace pulse::docker::testing {

inline constexpr char kImage[] = "pulse-test:busybox";

struct RunSpec {
  std::string name;              // "" lets the daemon name it
  std::vector<std::string> cmd;  // run by the busybox image ("sh", "-c", "...")
  std::map<std::string, std::string> labels;
  std::string restart_policy;  // "", "always", "on-failure", "unless-stopped"
  int max_retries = 0;         // for on-failure
  bool tty = false;
  std::vector<std::string> healthcheck;  // CMD-SHELL test; empty: none
  absl::Duration health_interval = absl::Seconds(1);
  bool start = true;
  std::int64_t memory_limit_bytes = 0;  // HostConfig.Memory (and MemorySwap); 0: none
};

// A spec that runs `cmd` (named `name` unless empty) and nothing else.
inline RunSpec Command(std::vector<std::string> cmd, std::string name = "") {
  RunSpec spec;
  spec.cmd = std::move(cmd);
  spec.name = std::move(name);
  return spec;
}

class PrivateDockerd final {
 public:
  // Unavailable with the reason when no daemon can start here (no dockerd binary, not root,
  // the daemon exits or never answers: the log's tail is in the message). Any other error
  // (the image import failed) is a real failure.
  // `extra_args` are appended to dockerd's command line (e.g. a TLS tcp listener).
  static absl::StatusOr<std::unique_ptr<PrivateDockerd>> Start(
      const std::vector<std::string>& extra_args = {});
  // One daemon per process, started on first use and stopped at exit; nullptr and `why_not`
  // when Start failed with Unavailable.
  static PrivateDockerd* Shared(std::string* why_not);

  ~PrivateDockerd();
  PrivateDockerd(const PrivateDockerd&) = delete;
  PrivateDockerd& operator=(const PrivateDockerd&) = delete;

  const std::string& socket_path() const { return socket_path_; }
  std::string endpoint() const { return "unix://" + socket_path_; }
  const std::string& dir() const { return dir_; }
  absl::Duration startup_time() const { return startup_time_; }
  // A client of the daemon (connected at Start).
  const EngineClient& client() const { return *client_; }

  // Creates (and by default starts) a container of kImage with --network none; its id.
  absl::StatusOr<std::string> Run(const RunSpec& spec);
  // docker rm -f.
  absl::Status Remove(const std::string& id);
  // Stops the daemon now (fault tests); the destructor then only cleans up.
  void StopDaemon();
  // Kills the daemon with SIGKILL, as a crash would (its containerd and containers live on
  // until the destructor sweeps them).
  void KillDaemon();

 private:
  PrivateDockerd() = default;
  absl::Status Launch(const std::vector<std::string>& extra_args);
  absl::Status ImportImage();

  std::string dir_;
  std::string socket_path_;
  pid_t pid_ = -1;
  absl::Duration startup_time_;
  std::unique_ptr<EngineClient> client_;
};

}  // namespace pulse::docker::testing
