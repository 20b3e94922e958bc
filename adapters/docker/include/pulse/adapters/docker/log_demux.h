// LogDemuxer: turns the body of GET /containers/{id}/logs into lines, fed in pieces of any size
// as they arrive. Without a TTY the Engine multiplexes stdout and stderr in frames, each led by
// an 8-byte header: the stream (0 stdin, 1 stdout, 2 stderr), three zero bytes, and the payload
// length as a big-endian uint32 (docs/docker.md, "Logs"). With a TTY the body is raw stdout.
// Bounded: at most `max_lines` lines and `max_bytes` payload bytes are kept, and a line longer
// than `max_line_bytes` is cut (LogLine::truncated). A header with an unknown stream or non-zero
// padding is a broken stream: an error, after which the demuxer accepts nothing more. With
// timestamps, each line's leading RFC 3339 stamp (as `timestamps=1` adds it) is split off.
// Not thread-safe; one per stream.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace pulse::docker {

enum class LogStream { kStdin, kStdout, kStderr };

// "stdin", "stdout", "stderr".
std::string_view LogStreamName(LogStream stream);

struct LogLine {
  LogStream stream = LogStream::kStdout;
  std::optional<absl::Time> time;  // when timestamps were asked for and the stamp parsed
  std::string text;                // without the stamp and the trailing newline
  bool truncated = false;          // the line was longer than max_line_bytes
};

struct LogDemuxOptions {
  bool tty = false;         // the container has a TTY: the body is raw, not framed
  bool timestamps = false;  // each line starts with an RFC 3339 stamp and a space
  std::size_t max_lines = 1000;
  std::size_t max_line_bytes = 16 * 1024;
  std::size_t max_bytes = std::size_t{1} << 20;  // payload bytes taken in, all lines together
};

class LogDemuxer {
 public:
  explicit LogDemuxer(LogDemuxOptions options);

  // Takes the next piece of the body. Ok while the stream is well formed (also once a bound is
  // reached: then further bytes are ignored and Full() is true). DataLoss for a broken frame
  // header; every later call returns the same error.
  absl::Status Feed(std::string_view bytes);
  // The body ended: completes the last unterminated line of each stream. DataLoss when the
  // body ended inside a frame header or payload (the lines so far are kept).
  absl::Status Finish();

  // True once max_lines or max_bytes was reached (the caller may stop reading).
  bool Full() const { return full_; }
  const std::vector<LogLine>& lines() const { return lines_; }
  std::vector<LogLine> TakeLines() { return std::move(lines_); }

 private:
  struct Partial {
    std::string text;
    bool truncated = false;
    bool open = false;
  };
  void Take(LogStream stream, std::string_view payload);
  void EndLine(LogStream stream);
  Partial& PartialOf(LogStream stream) { return partial_[static_cast<std::size_t>(stream)]; }

  const LogDemuxOptions options_;
  std::vector<LogLine> lines_;
  std::array<Partial, 3> partial_;
  std::array<std::uint8_t, 8> header_{};
  std::size_t header_fill_ = 0;
  std::uint64_t payload_left_ = 0;
  LogStream payload_stream_ = LogStream::kStdout;
  std::size_t bytes_taken_ = 0;
  bool full_ = false;
  absl::Status broken_;
};

}  // namespace pulse::docker
