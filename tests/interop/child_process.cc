#include "child_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

extern char** environ;  // NOLINT: the process environment, inherited by the child

namespace pulse::testing {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

std::string_view EnvName(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// Our environment with `extra` added; an entry of `extra` replaces ours of the same name.
std::vector<std::string> MergedEnvironment(const std::vector<std::string>& extra) {
  std::vector<std::string> merged;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& e) {
      return EnvName(e) == EnvName(text);
    });
    if (!replaced) {
      merged.emplace_back(text);
    }
  }
  merged.insert(merged.end(), extra.begin(), extra.end());
  return merged;
}

// The NULL-terminated array execve wants; it points into `strings`, which must outlive it.
std::vector<char*> CStringArray(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& s : strings) {
    pointers.push_back(s.data());
  }
  pointers.push_back(nullptr);
  return pointers;
}

void CloseQuietly(int fd) {
  if (fd >= 0) {
    close(fd);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const ChildProcessOptions& options) {
  if (options.argv.empty() || options.argv.front().empty()) {
    return absl::InvalidArgumentError("ChildProcess: empty argv");
  }
  if (options.log_path.empty()) {
    return absl::InvalidArgumentError("ChildProcess: empty log path");
  }
  // Everything the child touches is prepared before fork: between fork and exec the child of
  // a multi-threaded process may only make async-signal-safe calls.
  std::vector<std::string> argv_strings = options.argv;
  std::vector<std::string> env_strings = MergedEnvironment(options.extra_env);
  std::vector<char*> argv = CStringArray(argv_strings);
  std::vector<char*> envp = CStringArray(env_strings);

  const int log_fd = open(options.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::InternalError(
        absl::StrCat("ChildProcess: cannot open ", options.log_path, ": ", ErrnoText(errno)));
  }
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int exec_pipe[2] = {-1, -1};
  if (null_fd < 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    CloseQuietly(log_fd);
    CloseQuietly(null_fd);
    return absl::InternalError(absl::StrCat("ChildProcess: ", ErrnoText(error)));
  }

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Own process group, so Stop reaches anything the program starts; killed with us.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
      _exit(127);
    }
    dup2(null_fd, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execve(argv[0], argv.data(), envp.data());
    const int error = errno;
    // Nothing useful can be done if this write fails: the parent then sees a clean exec.
    [[maybe_unused]] const ssize_t written = write(exec_pipe[1], &error, sizeof error);
    _exit(127);
  }
  const int fork_error = errno;
  CloseQuietly(exec_pipe[1]);
  CloseQuietly(log_fd);
  CloseQuietly(null_fd);
  if (pid < 0) {
    CloseQuietly(exec_pipe[0]);
    return absl::InternalError(absl::StrCat("ChildProcess: fork: ", ErrnoText(fork_error)));
  }
  // Also set from this side, so a Stop right after Start finds the group (EACCES once the
  // child has exec'd is expected and harmless).
  setpgid(pid, pid);

  // The pipe closes at a successful exec (O_CLOEXEC); a failed exec sends its errno first.
  int exec_error = 0;
  ssize_t got = 0;
  do {
    got = read(exec_pipe[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  CloseQuietly(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_error)) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return absl::InternalError(absl::StrCat("ChildProcess: cannot execute ", options.argv.front(),
                                            ": ", ErrnoText(exec_error)));
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, options.log_path));
}

ChildProcess::~ChildProcess() { Stop(); }

void ChildProcess::SetEnded(int wait_status) {
  reaped_ = true;
  if (WIFEXITED(wait_status)) {
    ended_ = absl::StrCat("exited ", WEXITSTATUS(wait_status));
  } else if (WIFSIGNALED(wait_status)) {
    ended_ = absl::StrCat("killed by signal ", WTERMSIG(wait_status));
  } else {
    ended_ = absl::StrCat("wait status ", wait_status);
  }
}

bool ChildProcess::Running() {
  if (reaped_) {
    return false;
  }
  int status = 0;
  pid_t result = 0;
  do {
    result = waitpid(pid_, &status, WNOHANG);
  } while (result < 0 && errno == EINTR);
  if (result == 0) {
    return true;
  }
  if (result == pid_) {
    SetEnded(status);
  } else {
    reaped_ = true;  // ECHILD: someone else reaped it
    ended_ = "reaped elsewhere";
  }
  return false;
}

std::string ChildProcess::Stop(absl::Duration grace) {
  if (reaped_) {
    return ended_;
  }
  // The group id stays valid while the leader is unreaped (at worst a zombie), so this never
  // signals a stranger's group.
  kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoMilliseconds(grace);
  while (Running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!reaped_) {
    kill(-pid_, SIGKILL);
    int status = 0;
    pid_t result = 0;
    do {
      result = waitpid(pid_, &status, 0);
    } while (result < 0 && errno == EINTR);
    if (result == pid_) {
      SetEnded(status);
    } else {
      reaped_ = true;
      ended_ = "reaped elsewhere";
    }
  }
  return ended_;
}

std::string ChildProcess::LogTail(std::size_t max_bytes) const {
  std::ifstream in(log_path_, std::ios::binary | std::ios::ate);
  if (!in) {
    return "";
  }
  const std::streamoff size = in.tellg();
  const std::streamoff start =
      std::max<std::streamoff>(0, size - static_cast<std::streamoff>(max_bytes));
  in.seekg(start);
  std::string tail(static_cast<std::size_t>(size - start), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  tail.resize(static_cast<std::size_t>(in.gcount()));
  return tail;
}

}  // namespace pulse::testing
