#include "mcp_stdio_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "absl/time/clock.h"

namespace pulse::testing::e2e {

McpStdioClient::McpStdioClient(const std::vector<std::string>& argv,
                               const std::vector<std::string>& extra_env,
                               const std::string& stderr_path) {
  REQUIRE(!argv.empty());
  int in_pipe[2];
  int out_pipe[2];
  REQUIRE(::pipe2(in_pipe, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(out_pipe, O_CLOEXEC) == 0);
  const int err_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(err_fd >= 0);
  // Everything the child needs is prepared before fork: only async-signal-safe calls after it.
  std::vector<char*> args;
  for (const std::string& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    env_strings.emplace_back(*e);
  }
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> env;
  for (std::string& e : env_strings) {
    env.push_back(e.data());
  }
  env.push_back(nullptr);
  pid_ = ::fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_fd);
  in_fd_ = in_pipe[1];
  out_fd_ = out_pipe[0];
}

McpStdioClient::~McpStdioClient() {
  if (!reaped_ && pid_ > 0) {
    if (CloseAndWait(absl::Seconds(3)) == -1 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  if (out_fd_ >= 0) {
    ::close(out_fd_);
  }
}

bool McpStdioClient::Write(const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(in_fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> McpStdioClient::ReadLine(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (const std::size_t newline = buffer_.find('\n'); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return std::nullopt;
    }
    pollfd p{out_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      return std::nullopt;
    }
    char chunk[65536];
    const ssize_t n = ::read(out_fd_, chunk, sizeof(chunk));
    if (n <= 0) {
      return std::nullopt;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

int McpStdioClient::CloseAndWait(absl::Duration timeout) {
  if (in_fd_ >= 0) {
    ::close(in_fd_);
    in_fd_ = -1;
  }
  if (reaped_) {
    return status_;
  }
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    int raw = 0;
    const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
      return status_;
    }
    ::usleep(20 * 1000);
  }
  return -1;
}

}  // namespace pulse::testing::e2e
