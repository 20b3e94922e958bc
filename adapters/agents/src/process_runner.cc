#include "process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "absl/status/status.h"
#include "absl/time/clock.h"

namespace pulse::adapters::agents::internal {
namespace {

// Closes a descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) {
      close(fd_);
    }
    fd_ = -1;
  }

 private:
  int fd_;
};

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
                                         absl::Duration timeout, std::size_t max_output) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    return absl::InvalidArgumentError("the program must be given by its absolute path");
  }
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
    syscall(SYS_close_range, 3U, ~0U, 0U);  // descriptors the server opened without CLOEXEC
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
