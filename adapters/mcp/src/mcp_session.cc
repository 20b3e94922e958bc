#include "pulse/adapters/mcp/mcp_session.h"

#include <utility>
#include <vector>

namespace pulse::adapters::mcp {

void McpSession::Answer(const Line& line, std::string& out) {
  std::optional<std::string> reply = line.oversized
                                         ? std::optional<std::string>(server_.OversizedLineReply())
                                         : server_.HandleLine(line.text);
  if (reply.has_value()) {
    if (out.empty()) {
      out = *std::move(reply);  // the usual case, one reply per read: no copy of a large reply
    } else {
      out.append(*reply);
    }
    out.push_back('\n');
  }
}

std::string McpSession::Feed(std::string_view chunk) {
  std::vector<Line> lines;
  reader_.Feed(chunk, lines);
  std::string out;
  for (const Line& line : lines) {
    Answer(line, out);
  }
  return out;
}

std::string McpSession::Finish() {
  std::string out;
  if (std::optional<Line> last = reader_.Finish(); last.has_value()) {
    Answer(*last, out);
  }
  return out;
}

}  // namespace pulse::adapters::mcp
