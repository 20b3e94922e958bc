// Splits a byte stream into newline-delimited lines with a hard bound on a line's length. A line
// longer than the bound is dropped while it streams in (its bytes are never kept) and reported
// once, when its newline arrives, as an oversized line; the reader then carries on with the next
// one. Memory stays below the bound plus one chunk whatever the input. Not thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pulse::adapters::mcp {

// Longest accepted line (without its newline): 4 MiB, the reference adapter's scanner buffer.
inline constexpr std::size_t kMaxLineBytes = std::size_t{4} << 20;

struct Line {
  std::string text;        // without "\n" (and without a trailing "\r"); empty when oversized
  bool oversized = false;  // the line was longer than the bound and has been dropped
};

class LineReader {
 public:
  explicit LineReader(std::size_t max_line_bytes = kMaxLineBytes)
      : max_line_bytes_(max_line_bytes) {}

  // Consumes `chunk` and appends every line it completes to `out`.
  void Feed(std::string_view chunk, std::vector<Line>& out);

  // At end of input: the unterminated last line, if any bytes of one are pending.
  std::optional<Line> Finish();

  // Bytes currently held (never more than the bound).
  std::size_t buffered() const { return pending_.size(); }

 private:
  Line Complete();

  std::size_t max_line_bytes_;
  std::string pending_;
  bool discarding_ = false;
};

}  // namespace pulse::adapters::mcp
