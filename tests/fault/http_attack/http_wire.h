// Incremental readers of what an HTTP/1.1 server sends back, for the attack and probe tools in
// tests/fault/http_attack: the response head (status and the framing headers), a chunked body
// and Server-Sent-Events frames. Each is fed bytes exactly as recv() returned them, split at
// any point, and keeps only a bounded amount of state, so ten thousand of them fit in one
// process. Nothing here does I/O. Not thread-safe: one reader per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pulse::testing::attack {

// The status line and headers of a response, up to and including the blank line.
class ResponseHeadReader {
 public:
  enum class State { kReading, kDone, kMalformed };

  // Consumes bytes of the head; returns how many of `bytes` belonged to it (the rest is body).
  std::size_t Feed(std::string_view bytes);

  State state() const { return state_; }
  int status() const { return status_; }  // 0 until a status line was read
  bool chunked() const { return chunked_; }
  // Content-Length, or -1 when absent.
  std::int64_t content_length() const { return content_length_; }

  // A head longer than this is malformed (a server under test never sends one).
  static constexpr std::size_t kMaxHeadBytes = 64 * 1024;

 private:
  void ParseLine(std::string_view line);

  State state_ = State::kReading;
  std::string line_;
  std::size_t head_bytes_ = 0;
  bool seen_status_ = false;
  int status_ = 0;
  bool chunked_ = false;
  std::int64_t content_length_ = -1;
};

// The payload of a `Transfer-Encoding: chunked` body. Chunk extensions and trailers are
// skipped; a size line that is not hex, or missing CRLF after a chunk, is malformed.
class ChunkedDecoder {
 public:
  enum class State { kSize, kData, kDataEnd, kTrailer, kDone, kMalformed };

  // Decodes `bytes`, appending the payload to `out`; returns how many bytes were consumed
  // (fewer than given only once done or malformed).
  std::size_t Feed(std::string_view bytes, std::string& out);

  State state() const { return state_; }

 private:
  State state_ = State::kSize;
  std::string line_;  // the size or trailer line so far (bounded)
  std::uint64_t remaining_ = 0;
  bool saw_cr_ = false;
};

// One complete SSE frame (a block of lines ended by a blank line).
struct SseFrame {
  std::string event;    // the `event:` field ("" when absent, i.e. "message")
  std::string comment;  // the first comment line without ":" and one leading space
  bool has_data = false;
  bool has_id = false;

  // A heartbeat either way the server sends one: `event: heartbeat` (the agent event stream)
  // or a `: heartbeat` comment frame (chat streams).
  bool heartbeat() const {
    return event == "heartbeat" || (event.empty() && comment == "heartbeat");
  }
};

// Splits an SSE body into frames. Lines end in LF, CRLF or CR (a CRLF split between two
// reads is one line end); a blank line ends a frame; a frame with no field and no comment
// (consecutive blank lines) is not reported. Field values longer than kMaxValue are cut.
class SseFrameReader {
 public:
  // Feeds `bytes`; calls on_frame(const SseFrame&) for each frame completed by them and
  // returns how many frames that was.
  template <typename OnFrame>
  int Feed(std::string_view bytes, OnFrame&& on_frame) {
    int frames = 0;
    for (char c : bytes) {
      if (skip_lf_) {
        skip_lf_ = false;
        if (c == '\n') {
          continue;
        }
      }
      if (c == '\r' || c == '\n') {
        skip_lf_ = c == '\r';
        if (EndLine()) {
          on_frame(static_cast<const SseFrame&>(frame_));
          ++frames;
          frame_ = SseFrame{};
          any_line_ = false;
        }
        continue;
      }
      if (line_.size() < kMaxLine) {
        line_ += c;
      }
    }
    return frames;
  }

  static constexpr std::size_t kMaxLine = 512;

 private:
  // Ends the current line; true when it was the blank line ending a non-empty frame.
  bool EndLine();

  SseFrame frame_;
  std::string line_;
  bool any_line_ = false;
  bool skip_lf_ = false;
};

// The status code of a response that starts with `bytes` ("HTTP/1.1 431 ..."), or 0.
int StatusOf(std::string_view bytes);

}  // namespace pulse::testing::attack
