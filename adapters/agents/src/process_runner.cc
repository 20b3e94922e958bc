#include "process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/time/clock.h"

namespace pulse::adapters::agents::internal {
namespace {

using Fd = UniqueFd;

constexpr std::size_t kMaxPassedFds = 64;

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return -1;
}

int MillisUntil(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) {
    return 0;
  }
  return static_cast<int>(std::min<std::int64_t>(absl::ToInt64Milliseconds(left) + 1, 60'000));
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void UniqueFd::Reset() {
  if (fd_ >= 0) {
    close(fd_);
  }
  fd_ = -1;
}

std::string PassedFdPath(std::size_t i) { return "/proc/self/fd/" + std::to_string(3 + i); }

absl::StatusOr<CheckedFile> OpenCheckedFile(std::string_view operand,
                                            bool (*allowed)(std::string_view canonical)) {
  const std::string shown(operand);
  // The child runs in "/": that is where a relative operand starts.
  const std::string framed = !operand.empty() && operand[0] == '/' ? shown : "/" + shown;
  std::array<char, PATH_MAX> resolved{};
  if (realpath(framed.c_str(), resolved.data()) == nullptr) {
    return absl::PermissionDeniedError("sensitive_path: " + shown + " cannot be resolved (" +
                                       std::strerror(errno) +
                                       "); a file that cannot be resolved is not read");
  }
  CheckedFile file;
  file.path = resolved.data();
  if (!allowed(file.path)) {
    return absl::PermissionDeniedError("sensitive_path: " + shown + " resolves to " + file.path +
                                       ", outside the readable roots");
  }
  // Walk the canonical path without following any link: it has none, unless one was swapped
  // in since realpath, and then the open fails.
  Fd dir(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::size_t start = 1;
  while (dir.get() >= 0) {
    const std::size_t slash = file.path.find('/', start);
    const std::string part = file.path.substr(start, slash - start);
    if (slash == std::string::npos) {
      file.fd = Fd(openat(dir.get(), part.c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
      break;
    }
    dir = Fd(openat(dir.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    start = slash + 1;
  }
  struct stat st {};
  if (file.fd.get() < 0 || fstat(file.fd.get(), &st) != 0) {
    return absl::PermissionDeniedError("sensitive_path: " + shown + " (" + file.path +
                                       ") cannot be opened without following a link (" +
                                       std::strerror(errno) + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::PermissionDeniedError("sensitive_path: " + shown + " (" + file.path +
                                       ") is not a regular file");
  }
  return file;
}

std::optional<std::string> FindProgram(std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos) {
    return std::nullopt;
  }
  for (std::string_view dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    std::string path = std::string(dir) + "/" + std::string(name);
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0) {
      return path;
    }
  }
  return std::nullopt;
}

absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         absl::Duration timeout, std::size_t max_output,
                                         const std::vector<int>& pass_fds) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    return absl::InvalidArgumentError("the program must be given by its absolute path");
  }
  if (pass_fds.size() > kMaxPassedFds) {
    return absl::InvalidArgumentError("too many descriptors for one child");
  }
  // Copies above every target number (3 .. 3 + n - 1), so placing one never closes another.
  std::vector<Fd> passed;
  for (const int fd : pass_fds) {
    passed.emplace_back(fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(3 + pass_fds.size())));
    if (passed.back().get() < 0) {
      return absl::UnavailableError("cannot pass a descriptor to the child");
    }
  }
  std::array<int, kMaxPassedFds> passed_numbers{};
  for (std::size_t i = 0; i < passed.size(); ++i) {
    passed_numbers[i] = passed[i].get();
  }
  const std::size_t passed_count = passed.size();
  // Everything the child needs is prepared before fork: after it, only async-signal-safe
  // calls are allowed (the server is multi-threaded).
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  static constexpr std::array<const char*, 6> kEnv = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                                      "LC_ALL=C",
                                                      "TZ=UTC",
                                                      "SYSTEMD_PAGER=",
                                                      "SYSTEMD_COLORS=0",
                                                      nullptr};
  char* const* envp = const_cast<char* const*>(kEnv.data());

  std::array<int, 2> pipe_fds{};
  if (pipe2(pipe_fds.data(), O_CLOEXEC) != 0) {
    return absl::UnavailableError("cannot create a pipe");
  }
  Fd read_end(pipe_fds[0]);
  Fd write_end(pipe_fds[1]);
  Fd dev_null(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (dev_null.get() < 0) {
    return absl::UnavailableError("cannot open /dev/null");
  }
  const pid_t pid = fork();
  if (pid < 0) {
    return absl::UnavailableError("fork failed");
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    if (dup2(dev_null.get(), STDIN_FILENO) < 0 || dup2(write_end.get(), STDOUT_FILENO) < 0 ||
        dup2(write_end.get(), STDERR_FILENO) < 0) {
      _exit(126);
    }
    for (std::size_t i = 0; i < passed_count; ++i) {
      // dup2 clears close-on-exec on the copy.
      if (dup2(passed_numbers[i], static_cast<int>(3 + i)) < 0) {
        _exit(126);
      }
    }
    // Descriptors the server opened without CLOEXEC.
    syscall(SYS_close_range, static_cast<unsigned>(3 + passed_count), ~0U, 0U);
    if (chdir("/") != 0) {
      _exit(126);
    }
    execve(args[0], args.data(), envp);
    _exit(127);
  }
  write_end.Reset();
  ProcessResult result;
  const absl::Time deadline = absl::Now() + timeout;
  std::array<char, 4096> buffer{};
  bool open_pipe = true;
  while (open_pipe) {
    pollfd p{read_end.get(), POLLIN, 0};
    const int ready = poll(&p, 1, MillisUntil(deadline));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      result.timed_out = true;
      break;
    }
    const ssize_t n = read(read_end.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      open_pipe = false;
      break;
    }
    const std::size_t room = max_output - std::min(max_output, result.output.size());
    result.output.append(buffer.data(), std::min(room, static_cast<std::size_t>(n)));
    if (static_cast<std::size_t>(n) > room) {
      result.truncated = true;  // keep draining so the child is not blocked on a full pipe
    }
  }
  if (result.timed_out) {
    kill(pid, SIGKILL);
  }
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, result.timed_out ? 0 : WNOHANG);
    if (done == pid) {
      break;
    }
    if (done < 0) {
      if (errno == EINTR) {
        continue;
      }
      return absl::UnavailableError("waitpid failed");
    }
    // The child closed its output but has not exited yet.
    if (absl::Now() >= deadline) {
      result.timed_out = true;
      kill(pid, SIGKILL);
      continue;  // the next waitpid blocks until it is gone
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  result.exit_code = ExitCodeOf(status);
  return result;
}

absl::StatusOr<ProcessResult> RunInstalledProgram(const std::vector<std::string>& argv,
                                                  absl::Duration timeout, std::size_t max_output) {
  std::optional<std::string> path = FindProgram(argv.empty() ? "" : argv[0]);
  if (!path.has_value()) {
    return absl::UnavailableError((argv.empty() ? std::string("(nothing)") : argv[0]) +
                                  " is not installed");
  }
  std::vector<std::string> full = argv;
  full[0] = *path;
  return RunProcess(full, timeout, max_output);
}

}  // namespace pulse::adapters::agents::internal
