// The end-to-end harness of pulse-cli: runs the real binary (PULSE_CLI_BINARY) with a clean,
// explicit environment (so a NO_COLOR or PULSE_API_TOKEN of the machine running the tests
// cannot leak in), either with plain pipes or under a pseudo-terminal (util-linux `script`),
// or in the background for tests that act while it runs (Ctrl-C). Also seeds Patrol findings
// into a data dir before the server starts, since no route creates them. Builds on the server
// harness (server_harness.h) for the server, tokens and the fake model provider's turns.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {

std::string CliBinary();

struct CliOptions {
  std::vector<std::string> env{};       // NAME=value, added to PATH, HOME and LANG
  std::optional<std::string> stdin_text{};  // piped to stdin (default: /dev/null)
  absl::Duration timeout = absl::Seconds(60);
};

// Runs pulse-cli with `args` to completion; stdout and stderr captured apart. REQUIREs that it
// ends within the timeout.
Captured RunCli(const std::vector<std::string>& args, const CliOptions& options = {});

// Runs pulse-cli under a pseudo-terminal (`script -qec`): stdin, stdout and stderr are all the
// terminal, so `out` holds both outputs interleaved, with the terminal's CRLF turned back into
// LF; `err` is empty. stdin_text is typed into the terminal.
Captured RunCliInPty(const std::vector<std::string>& args, const CliOptions& options = {});

// "--server", "http://127.0.0.1:<port>".
std::vector<std::string> ServerArgs(int port);

// PULSE_API_TOKEN=<token>.
std::string TokenEnv(const std::string& token);

// pulse-cli running in the background with stdout and stderr on pipes.
class CliProcess {
 public:
  CliProcess(const std::vector<std::string>& args, const std::vector<std::string>& env);
  ~CliProcess();  // kills and reaps it if still running
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  // Reads stdout until it contains `needle`; false after `timeout`.
  bool WaitForOutput(const std::string& needle, absl::Duration timeout = absl::Seconds(20));
  void Signal(int signal);
  // Waits for the exit (REQUIREs it within `timeout`); the exit code, -1 for a signal death.
  int Wait(absl::Duration timeout = absl::Seconds(20));
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  void Pump(int timeout_ms);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
  std::string out_;
  std::string err_;
};

struct SeedFinding {
  std::string resource_id;
  std::string severity;  // info, watch, warning, critical
  std::string title;
};

// Reports the findings straight into `data_dir`'s store (the server must not be running) and
// returns their ids in order.
std::vector<std::string> SeedFindings(const std::string& data_dir,
                                      const std::vector<SeedFinding>& findings);

// The fake provider's OpenAI-compatible turns as one scripted response.
ScriptedResponse ProviderTurn(const std::vector<std::string>& payloads);

// Server options for an Assistant backed by `provider_base_url` at `control_level`.
ServerOptions AssistantServer(const std::string& provider_base_url,
                              const std::string& control_level = "read_only");

}  // namespace pulse::testing::e2e
