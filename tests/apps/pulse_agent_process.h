// Shared by pulse-agent's process tests (pulse_agent_test.cc, pulse_agent_docker_test.cc): one
// pulse-agent process with its output in files, and a work directory with a token file, an
// allow.json and the stand-in systemctl.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "pulse/testing/temp_dir.h"

extern char** environ;

namespace pulse::adapters::hostagent::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void WriteFile(const std::string& path, const std::string& text, mode_t mode = 0600) {
  {
    std::ofstream out(path, std::ios::trunc | std::ios::binary);
    out << text;
  }
  REQUIRE(chmod(path.c_str(), mode) == 0);
}

// One pulse-agent process: stdout and stderr go to files of the work directory.
class Agent {
 public:
  Agent(const pulse::testing::TempDir& dir, std::vector<std::string> args,
        std::vector<std::string> env = {})
      : stdout_path_(dir.File("stdout-" + std::to_string(++count_))),
        stderr_path_(dir.File("stderr-" + std::to_string(count_))) {
    args.insert(args.begin(), PULSE_AGENT_BINARY);
    std::vector<char*> argv;
    for (std::string& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::vector<std::string> environment = {"PATH=/usr/bin:/bin"};
    environment.insert(environment.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (std::string& e : environment) {
      envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, stdout_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(spawned == 0);
  }
  ~Agent() {
    if (pid_ > 0 && !exit_.has_value()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // The exit status, waiting up to `timeout`; nullopt while it still runs.
  std::optional<int> Wait(absl::Duration timeout = absl::Seconds(20)) {
    const absl::Time until = absl::Now() + timeout;
    while (!exit_.has_value()) {
      int status = 0;
      const pid_t done = waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        exit_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (absl::Now() >= until) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return exit_;
  }
  void Signal(int sig) const { kill(pid_, sig); }
  std::string out() const { return ReadFile(stdout_path_); }
  std::string err() const { return ReadFile(stderr_path_); }

 private:
  static inline int count_ = 0;
  std::string stdout_path_;
  std::string stderr_path_;
  pid_t pid_ = -1;
  std::optional<int> exit_;
};

// A work directory with a token file (mode 600), an allow.json and a stand-in systemctl with
// nginx running.
struct Work {
  pulse::testing::TempDir dir{"pulse-agent-app"};
  std::string token_file = dir.File("token");
  std::string allow = dir.File("allow.json");
  std::string systemctl = dir.File("bin/fake-systemctl");
  explicit Work(const std::string& token) {
    WriteFile(token_file, token + "\n");
    WriteFile(allow, R"({"capabilities": ["restart"], "services": ["nginx"]})");
    std::filesystem::create_directories(dir.File("bin/units"));
    std::filesystem::copy_file(PULSE_FAKE_SYSTEMCTL, systemctl);
    std::filesystem::permissions(systemctl, std::filesystem::perms::owner_all);
    WriteFile(dir.File("bin/units/nginx.service.state"), "active\n");
  }
  std::vector<std::string> Args(const std::string& server) const {
    return {"--server",    server, "--token-file", token_file,
            "--allowlist", allow,  "--state-dir",  dir.File("state"),
            "--hostname",  "web1", "--interval",   "1s"};
  }
  std::string Hook() const { return "PULSE_AGENT_TEST_SYSTEMCTL=" + systemctl; }
};

}  // namespace pulse::adapters::hostagent::testing
