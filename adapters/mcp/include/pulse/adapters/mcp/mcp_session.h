// One stdio session: bytes from stdin in, reply lines for stdout out. Joins the bounded line
// reader to the server, so an oversized, truncated or malformed message costs one error reply
// and never the loop. Not thread-safe; borrows the server.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "pulse/adapters/mcp/line_reader.h"
#include "pulse/adapters/mcp/mcp_server.h"

namespace pulse::adapters::mcp {

class McpSession {
 public:
  explicit McpSession(McpServer& server, std::size_t max_line_bytes = kMaxLineBytes)
      : server_(server), reader_(max_line_bytes) {}

  // Consumes a chunk of input; returns the replies to the lines it completed, each ending
  // in "\n" (empty when there are none).
  std::string Feed(std::string_view chunk);

  // At end of input: the reply to an unterminated last line, if any.
  std::string Finish();

  std::size_t buffered() const { return reader_.buffered(); }

 private:
  void Answer(const Line& line, std::string& out);

  McpServer& server_;
  LineReader reader_;
};

}  // namespace pulse::adapters::mcp
