// The stdio transport of pulse-mcp: reads stdin in chunks, hands them to an McpSession and
// writes each reply line to stdout as soon as it exists. Nothing else is ever written to
// stdout but whole lines through OutputLines (the notification bridge's). Returns at end of
// input (0) or when stdout is gone (1). The loop itself is single-threaded.
#pragma once

#include <functional>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "pulse/adapters/mcp/mcp_session.h"

namespace pulse::apps::mcp {

// Whole writes to one file descriptor, one at a time, so lines from two threads never
// interleave. Thread-safe.
class OutputLines {
 public:
  explicit OutputLines(int fd) : fd_(fd) {}
  // Writes all of `bytes`; false (now and for every later call) once a write failed.
  bool Write(std::string_view bytes) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const int fd_;
  absl::Mutex mu_;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
};

int RunStdioLoop(adapters::mcp::McpSession& session, int in_fd, int out_fd);
// As above, writing through `out`; `after_feed` (may be empty) is called after each chunk's
// replies were written (pulse-mcp opens the notification bridge once the session initialized).
int RunStdioLoop(adapters::mcp::McpSession& session, int in_fd, OutputLines& out,
                 const std::function<void()>& after_feed);

}  // namespace pulse::apps::mcp
