// Runs one program from an argument vector with fork/execve — never through a shell — with a
// clean environment, stdin from /dev/null, stdout and stderr captured together up to a bound,
// and a deadline after which the child is killed. Safe to call from any thread (the child only
// makes async-signal-safe calls before execve). Files a child may read are opened and checked
// here first (OpenCheckedFile) and handed to it as descriptors, never named again.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pulse::adapters::agents::internal {

// Owns a file descriptor (closed on destruction); movable.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  void Reset();

 private:
  int fd_;
};

// A file opened for a child: `fd` reads the regular file whose canonical path is `path`.
struct CheckedFile {
  UniqueFd fd;
  std::string path;
};

// Resolves `operand` in the frame of a child started by RunProcess (working directory "/", so
// a relative operand is taken from "/"; the same root and mounts), following every symbolic
// link, and opens it read-only when `allowed` accepts the canonical path. The file is opened
// one component at a time without following links, so a link swapped in after the check makes
// the open fail instead of leading elsewhere. PermissionDenied (message "sensitive_path: ...")
// when the operand cannot be resolved, its canonical path is refused, it changed while it was
// opened, or it is not a regular file.
absl::StatusOr<CheckedFile> OpenCheckedFile(std::string_view operand,
                                            bool (*allowed)(std::string_view canonical));

// The path under which a child started with `pass_fds` reads its i-th descriptor.
std::string PassedFdPath(std::size_t i);

struct ProcessResult {
  int exit_code = -1;      // the exit status; 128 + signal when killed by one
  bool timed_out = false;  // killed at the deadline
  std::string output;      // stdout and stderr, interleaved
  bool truncated = false;  // output beyond the bound was discarded
};

// The absolute path of `name` in /usr/sbin, /usr/bin, /sbin or /bin (never $PATH); nullopt
// when it is not an executable file there or `name` is not a bare name.
std::optional<std::string> FindProgram(std::string_view name);

// argv[0] must be an absolute path. The child inherits pass_fds[i] as descriptor 3 + i (read
// it at PassedFdPath(i)) and nothing else beyond stdin, stdout and stderr. Unavailable when the
// process cannot be started; InvalidArgument for more than 64 descriptors.
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         absl::Duration timeout, std::size_t max_output,
                                         const std::vector<int>& pass_fds = {});

// Runs a bare program name found by FindProgram (64 KiB of output unless told otherwise).
// Unavailable when it is not installed or cannot be started.
absl::StatusOr<ProcessResult> RunInstalledProgram(const std::vector<std::string>& argv,
                                                  absl::Duration timeout,
                                                  std::size_t max_output = 64 * 1024);

}  // namespace pulse::adapters::agents::internal
