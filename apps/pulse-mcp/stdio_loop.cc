#include "stdio_loop.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <string>
#include <string_view>

namespace pulse::apps::mcp {
namespace {

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

int RunStdioLoop(adapters::mcp::McpSession& session, int in_fd, int out_fd) {
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
    if (!WriteAll(out_fd, replies)) {
      return 1;
    }
  }
  return WriteAll(out_fd, session.Finish()) ? 0 : 1;
}

}  // namespace pulse::apps::mcp
