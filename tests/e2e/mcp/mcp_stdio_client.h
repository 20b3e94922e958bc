// A minimal MCP client for the end-to-end tests: runs pulse-mcp with pipes on its stdin and
// stdout (stderr to a log file), writes JSON-RPC lines and reads reply lines with a deadline.
// The destructor closes stdin, waits briefly for the exit, then SIGKILLs and reaps, so a
// failing REQUIRE leaves no process behind. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace pulse::testing::e2e {

class McpStdioClient {
 public:
  // Starts `argv` (argv[0] a path) with `extra_env` ("NAME=value") added. REQUIREs the start.
  McpStdioClient(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                 const std::string& stderr_path);
  ~McpStdioClient();
  McpStdioClient(const McpStdioClient&) = delete;
  McpStdioClient& operator=(const McpStdioClient&) = delete;

  // Writes `bytes` as they are (add the newline yourself). False when the pipe is closed.
  bool Write(const std::string& bytes);
  // The next stdout line without its newline; nullopt at EOF or after `timeout`.
  std::optional<std::string> ReadLine(absl::Duration timeout = absl::Seconds(20));
  // Closes stdin and waits for the exit status (-1 if it did not exit normally in `timeout`).
  int CloseAndWait(absl::Duration timeout = absl::Seconds(10));

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1;   // the child's stdin
  int out_fd_ = -1;  // the child's stdout
  std::string buffer_;
  bool reaped_ = false;
  int status_ = -1;
};

}  // namespace pulse::testing::e2e
