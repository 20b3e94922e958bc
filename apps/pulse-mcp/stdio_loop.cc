#include "stdio_loop.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <string>
#include <string_view>

namespace pulse::apps::mcp {

bool OutputLines::Write(std::string_view bytes) {
  absl::MutexLock lock(&mu_);
  if (failed_) {
    return false;
  }
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      failed_ = true;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

int RunStdioLoop(adapters::mcp::McpSession& session, int in_fd, int out_fd) {
  OutputLines out(out_fd);
  return RunStdioLoop(session, in_fd, out, nullptr);
}

int RunStdioLoop(adapters::mcp::McpSession& session, int in_fd, OutputLines& out,
                 const std::function<void()>& after_feed) {
  std::array<char, 64 * 1024> buffer{};
  while (true) {
    const ssize_t n = ::read(in_fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;  // end of input, or stdin is unreadable: either way the client is gone
    }
    const std::string replies =
        session.Feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    if (!replies.empty() && !out.Write(replies)) {
      return 1;
    }
    if (after_feed) {
      after_feed();
    }
  }
  const std::string last = session.Finish();
  return last.empty() || out.Write(last) ? 0 : 1;
}

}  // namespace pulse::apps::mcp
