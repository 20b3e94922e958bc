// Runs one program from an argument vector with fork/execve — never through a shell — with a
// clean environment, stdin from /dev/null, stdout and stderr captured together up to a bound,
// and a deadline after which the child is killed. Safe to call from any thread (the child only
// makes async-signal-safe calls before execve).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::adapters::agents::internal {

struct ProcessResult {
  int exit_code = -1;      // the exit status; 128 + signal when killed by one
  bool timed_out = false;  // killed at the deadline
  std::string output;      // stdout and stderr, interleaved
  bool truncated = false;  // output beyond the bound was discarded
};

// The absolute path of `name` in /usr/sbin, /usr/bin, /sbin or /bin (never $PATH); nullopt
// when it is not an executable file there or `name` is not a bare name.
std::optional<std::string> FindProgram(std::string_view name);

// argv[0] must be an absolute path. Unavailable when the process cannot be started.
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         absl::Duration timeout, std::size_t max_output);

// Runs a bare program name found by FindProgram (64 KiB of output unless told otherwise).
// Unavailable when it is not installed or cannot be started.
absl::StatusOr<ProcessResult> RunInstalledProgram(const std::vector<std::string>& argv,
                                                  absl::Duration timeout,
                                                  std::size_t max_output = 64 * 1024);

}  // namespace pulse::adapters::agents::internal
