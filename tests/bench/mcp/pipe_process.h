// A child process for the MCP benchmark, without a test framework: started with fork/exec,
// stdin and stdout as pipes to this process (or stdout into the log too), stderr appended to a
// log file. Lines are written and read with a deadline. The destructor closes stdin, gives the
// child a moment to exit, then sends SIGTERM, then SIGKILL, and reaps it. Not thread-safe: one
// owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pulse::bench {

class PipeProcess {
 public:
  // `argv[0]` is a path (no PATH search); `extra_env` ("NAME=value") is added to ours. nullptr
  // with the reason on stderr when the pipes or the fork fail.
  // With `stdout_to_log`, stdout goes to the log as well (for a server nobody reads from).
  static std::unique_ptr<PipeProcess> Start(const std::vector<std::string>& argv,
                                            const std::vector<std::string>& extra_env,
                                            const std::string& log_path,
                                            bool stdout_to_log = false);
  ~PipeProcess();
  PipeProcess(const PipeProcess&) = delete;
  PipeProcess& operator=(const PipeProcess&) = delete;

  // Writes all of `bytes`; false when the child's stdin is closed.
  bool Write(const std::string& bytes);
  // The next stdout line without its newline; nullopt at EOF or after `timeout`.
  std::optional<std::string> ReadLine(std::chrono::milliseconds timeout);
  // Closes stdin and waits up to `timeout` for the exit; the exit status, or -1.
  int CloseAndWait(std::chrono::milliseconds timeout);
  pid_t pid() const { return pid_; }

 private:
  PipeProcess(pid_t pid, int in_fd, int out_fd) : pid_(pid), in_fd_(in_fd), out_fd_(out_fd) {}

  pid_t pid_;
  int in_fd_;
  int out_fd_;
  std::string buffer_;
  bool reaped_ = false;
  int status_ = -1;
};

// The whole file, or "" when it cannot be read.
std::string ReadFile(const std::string& path);

// Runs `server_binary token create --data-dir DIR --name bench --scopes SCOPES` (its stderr in
// DIR/token.log) and returns the printed token; nullopt with the reason in `error` when it
// fails or prints nothing within 20 s.
std::optional<std::string> MintServerToken(const std::string& server_binary, const std::string& dir,
                                           const std::string& scopes, std::string* error,
                                           const std::string& kind = "human");

// The port from pulse-server's "listening on 127.0.0.1:PORT" line in `log`, polled every
// 20 ms; 0 when none appears within `timeout`.
int WaitForListeningPort(const std::string& log, std::chrono::milliseconds timeout);

}  // namespace pulse::bench
