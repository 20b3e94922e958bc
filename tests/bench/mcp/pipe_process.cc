#include "pipe_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

extern char** environ;

namespace pulse::bench {

std::unique_ptr<PipeProcess> PipeProcess::Start(const std::vector<std::string>& argv,
                                                const std::vector<std::string>& extra_env,
                                                const std::string& log_path, bool stdout_to_log) {
  int in_pipe[2];
  int out_pipe[2];
  if (argv.empty() || ::pipe2(in_pipe, O_CLOEXEC) != 0) {
    std::perror("pipe2");
    return nullptr;
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    std::perror("pipe2");
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return nullptr;
  }
  const int err_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  // Everything the child needs is built before fork: only async-signal-safe calls after it.
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
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::dup2(stdout_to_log && err_fd >= 0 ? err_fd : out_pipe[1], STDOUT_FILENO);
    if (err_fd >= 0) {
      ::dup2(err_fd, STDERR_FILENO);
    }
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  if (err_fd >= 0) {
    ::close(err_fd);
  }
  if (pid < 0) {
    std::perror("fork");
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    return nullptr;
  }
  return std::unique_ptr<PipeProcess>(new PipeProcess(pid, in_pipe[1], out_pipe[0]));
}

PipeProcess::~PipeProcess() {
  // Each signal goes only to a child not yet reaped: its pid cannot have been reused.
  CloseAndWait(std::chrono::milliseconds(1000));
  if (!reaped_) {
    ::kill(pid_, SIGTERM);
    CloseAndWait(std::chrono::milliseconds(5000));
  }
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ::close(out_fd_);
}

bool PipeProcess::Write(const std::string& bytes) {
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

std::optional<std::string> PipeProcess::ReadLine(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (const std::size_t newline = buffer_.find('\n'); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return std::nullopt;
    }
    pollfd p{out_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()) + 1);
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

int PipeProcess::CloseAndWait(std::chrono::milliseconds timeout) {
  if (in_fd_ >= 0) {
    ::close(in_fd_);
    in_fd_ = -1;
  }
  if (reaped_) {
    return status_;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      return status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

std::optional<std::string> MintServerToken(const std::string& server_binary, const std::string& dir,
                                           const std::string& scopes, std::string* error,
                                           const std::string& kind) {
  const std::string log = dir + "/token.log";
  auto process = PipeProcess::Start({server_binary, "token", "create", "--data-dir", dir, "--name",
                                     "bench", "--scopes", scopes, "--kind", kind},
                                    {}, log);
  if (process == nullptr) {
    *error = "cannot run pulse-server token create";
    return std::nullopt;
  }
  std::optional<std::string> token = process->ReadLine(std::chrono::seconds(20));
  if (!token.has_value() || token->empty() ||
      process->CloseAndWait(std::chrono::seconds(20)) != 0) {
    *error = "token create failed: " + ReadFile(log);
    return std::nullopt;
  }
  return token;
}

int WaitForListeningPort(const std::string& log, std::chrono::milliseconds timeout) {
  const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch match;
    const std::string text = ReadFile(log);
    if (std::regex_search(text, match, listening)) {
      return std::stoi(match[1].str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

}  // namespace pulse::bench
