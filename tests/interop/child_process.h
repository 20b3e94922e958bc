// ChildProcess: a helper program an interop test runs beside itself (a mock server, an MCP
// client), started with fork/exec and owned by this object. The destructor stops it (SIGTERM
// to its process group, SIGKILL after a grace period) and reaps it, so a failing REQUIRE never
// leaves a process behind; the kernel also kills it if the thread that started it dies first
// (so start it from the test's own thread). Its stdout and stderr go to one log file, read
// back for failure messages; stdin is /dev/null. Not thread-safe: one owner.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::testing {

struct ChildProcessOptions {
  std::vector<std::string> argv;       // argv[0] is the program's path: no PATH search
  std::vector<std::string> extra_env;  // "NAME=value", added to (or replacing in) ours
  std::string log_path;                // stdout and stderr, truncated at start
};

class ChildProcess {
 public:
  // The running child. InvalidArgument for an empty argv or log path; Internal when the log
  // cannot be opened, fork fails, or the program cannot be executed (with the errno text).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const ChildProcessOptions& options);

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }

  // True until the child has exited (an exited child is reaped here).
  bool Running();

  // Stops the child if it still runs (SIGTERM, then SIGKILL once `grace` passed), reaps it
  // and returns how it ended: "exited 0", "killed by signal 15". Idempotent.
  std::string Stop(absl::Duration grace = absl::Seconds(3));

  // The last `max_bytes` of the log, for failure messages ("" when it cannot be read).
  std::string LogTail(std::size_t max_bytes = 4000) const;

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}

  // Records how the child ended from a waitpid status.
  void SetEnded(int wait_status);

  pid_t pid_;
  std::string log_path_;
  bool reaped_ = false;
  std::string ended_;
};

}  // namespace pulse::testing
