#include "cli_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/status/statusor.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/adapters/system/system_clock.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/fake_provider_server.h"

namespace pulse::testing::e2e {
namespace {

std::vector<std::string> BaseEnv(const std::vector<std::string>& extra) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp",
                                  "LANG=C.UTF-8"};
  env.insert(env.end(), extra.begin(), extra.end());
  // No contexts file of the machine (HOME=/tmp) leaks in: a test that wants one sets its own.
  if (std::none_of(extra.begin(), extra.end(),
                   [](const std::string& e) { return e.rfind("XDG_CONFIG_HOME=", 0) == 0; })) {
    env.push_back("XDG_CONFIG_HOME=/nonexistent/pulse-cli-e2e");
  }
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Single-quotes `arg` for sh.
std::string ShellQuote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

std::string Unterminal(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      continue;
    }
    out.push_back(text[i]);
  }
  return out;
}

core::Severity SeverityOf(const std::string& name) {
  if (name == "critical") {
    return core::Severity::kCritical;
  }
  if (name == "watch") {
    return core::Severity::kWatch;
  }
  if (name == "info") {
    return core::Severity::kInfo;
  }
  return core::Severity::kWarning;
}

Captured Run(const std::vector<std::string>& argv, const std::vector<std::string>& env_extra,
             const CliOptions& options) {
  TempDir dir;
  const std::string out_path = dir.File("out");
  const std::string err_path = dir.File("err");
  std::vector<std::string> args = argv;
  std::vector<std::string> env = BaseEnv(env_extra);
  std::vector<char*> arg_ptrs = Pointers(args);
  std::vector<char*> env_ptrs = Pointers(env);
  const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(out_fd >= 0);
  REQUIRE(err_fd >= 0);
  int in_pipe[2] = {-1, -1};
  if (options.stdin_text.has_value()) {
    REQUIRE(::pipe2(in_pipe, O_CLOEXEC) == 0);
  }
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (options.stdin_text.has_value()) {
      ::dup2(in_pipe[0], 0);
    } else {
      const int null_fd = ::open("/dev/null", O_RDONLY);
      ::dup2(null_fd, 0);
    }
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::execve(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  if (options.stdin_text.has_value()) {
    ::close(in_pipe[0]);
    const std::string& text = *options.stdin_text;
    // Small texts fit the pipe buffer; a child that never reads must not block the test.
    static_cast<void>(::write(in_pipe[1], text.data(), text.size()));
    ::close(in_pipe[1]);
  }
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(options.timeout);
  int status = 0;
  bool exited = false;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  Captured captured;
  captured.exit_code = exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  captured.out = ReadAll(out_path);
  captured.err = ReadAll(err_path);
  INFO("command timed out: " << argv.back() << "\nstdout: " << captured.out
                             << "\nstderr: " << captured.err);
  REQUIRE(exited);
  return captured;
}

}  // namespace

std::string CliBinary() { return PULSE_CLI_BINARY; }

std::vector<std::string> ServerArgs(int port) {
  return {"--server", "http://127.0.0.1:" + std::to_string(port)};
}

std::string TokenEnv(const std::string& token) { return "PULSE_API_TOKEN=" + token; }

Captured RunCli(const std::vector<std::string>& args, const CliOptions& options) {
  std::vector<std::string> argv = {CliBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, options.env, options);
}

Captured RunCliInPty(const std::vector<std::string>& args, const CliOptions& options) {
  std::string command = ShellQuote(CliBinary());
  for (const std::string& a : args) {
    command += " " + ShellQuote(a);
  }
  std::vector<std::string> env = {"TERM=xterm-256color"};
  env.insert(env.end(), options.env.begin(), options.env.end());
  Captured c = Run({"/usr/bin/script", "-qec", command, "/dev/null"}, env, options);
  c.out = Unterminal(c.out);
  return c;
}

CliProcess::CliProcess(const std::vector<std::string>& args,
                       const std::vector<std::string>& env_extra) {
  std::vector<std::string> argv = {CliBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = BaseEnv(env_extra);
  std::vector<char*> arg_ptrs = Pointers(argv);
  std::vector<char*> env_ptrs = Pointers(env);
  int out_pipe[2];
  int err_pipe[2];
  REQUIRE(::pipe2(out_pipe, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);
  pid_ = ::fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execve(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
}

CliProcess::~CliProcess() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (out_fd_ >= 0) {
    ::close(out_fd_);
  }
  if (err_fd_ >= 0) {
    ::close(err_fd_);
  }
}

void CliProcess::Pump(int timeout_ms) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (out_fd_ < 0 && err_fd_ < 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return;
  }
  if (::poll(fds, 2, timeout_ms) <= 0) {
    return;
  }
  char buffer[4096];
  for (int i = 0; i < 2; ++i) {
    if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        (i == 0 ? out_ : err_).append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0) {
        int& fd = i == 0 ? out_fd_ : err_fd_;
        ::close(fd);
        fd = -1;  // poll ignores it from now on
      }
    }
  }
}

bool CliProcess::WaitForOutput(const std::string& needle, absl::Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  while (out_.find(needle) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    Pump(50);
  }
  return true;
}

void CliProcess::Signal(int signal) { ::kill(pid_, signal); }

int CliProcess::Wait(absl::Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  int status = 0;
  while (!reaped_) {
    Pump(20);
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      break;
    }
  }
  INFO("stdout: " << out_ << "\nstderr: " << err_);
  REQUIRE(reaped_);
  // Drain what is left in the pipes.
  for (int i = 0; i < 20; ++i) {
    Pump(5);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> SeedFindings(const std::string& data_dir,
                                      const std::vector<SeedFinding>& findings) {
  auto storage = adapters::storage::OpenSqliteStorage(data_dir);
  REQUIRE(storage.ok());
  adapters::system::SystemClock clock;
  FakeFindingVerifier verifier;
  core::FindingsService service(*(*storage)->findings, clock, verifier, *(*storage)->metrics);
  std::vector<std::string> ids;
  int n = 0;
  for (const SeedFinding& f : findings) {
    core::FindingReport report;
    report.resource_id = f.resource_id;
    report.category = core::Category::kPerformance;
    report.severity = SeverityOf(f.severity);
    report.key = "cli-e2e-" + std::to_string(n++);
    report.title = f.title;
    report.description = "Seeded by the pulse-cli end-to-end tests.";
    report.recommendation = "Look at it.";
    report.evidence = "memory_pct 96";
    absl::StatusOr<core::ReportOutcome> out = service.Report(report);
    REQUIRE(out.ok());
    ids.push_back(out->finding_id);
  }
  return ids;
}

ScriptedResponse ProviderTurn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

ServerOptions AssistantServer(const std::string& provider_base_url,
                              const std::string& control_level) {
  return ServerOptions{.args = {"--provider", "openai-compatible", "--provider-base-url",
                                provider_base_url + "/v1", "--model", "test-model",
                                "--control-level", control_level}};
}

}  // namespace pulse::testing::e2e
