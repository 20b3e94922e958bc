#include "pulse/adapters/mcp/line_reader.h"

namespace pulse::adapters::mcp {

Line LineReader::Complete() {
  Line line;
  if (discarding_) {
    line.oversized = true;
  } else {
    line.text = std::move(pending_);
    if (!line.text.empty() && line.text.back() == '\r') {
      line.text.pop_back();
    }
  }
  pending_.clear();
  discarding_ = false;
  return line;
}

void LineReader::Feed(std::string_view chunk, std::vector<Line>& out) {
  while (!chunk.empty()) {
    const std::size_t newline = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, newline);
    if (!discarding_) {
      if (pending_.size() + piece.size() > max_line_bytes_) {
        // Too long already: drop what we hold and everything up to the newline.
        discarding_ = true;
        pending_.clear();
        pending_.shrink_to_fit();
      } else {
        pending_.append(piece);
      }
    }
    if (newline == std::string_view::npos) {
      return;
    }
    out.push_back(Complete());
    chunk.remove_prefix(newline + 1);
  }
}

std::optional<Line> LineReader::Finish() {
  if (pending_.empty() && !discarding_) {
    return std::nullopt;
  }
  return Complete();
}

}  // namespace pulse::adapters::mcp
