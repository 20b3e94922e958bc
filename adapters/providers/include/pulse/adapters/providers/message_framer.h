// MessageFramer: cuts a response body that arrives in arbitrary pieces into the messages a
// StreamDecoder consumes. SseParser follows the WHATWG event-stream rules (LF, CR or CRLF line
// ends, even when CR and LF arrive in different pieces; `:` comments; multi-line `data`; `event`
// names; a leading BOM); NdjsonSplitter yields one line per message. Both bound what they
// buffer: a message (or line) over `max_message_bytes` is an IncompleteStreamError (DataLoss),
// never an unbounded buffer. Thread-compatible: one framer per response.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "pulse/adapters/providers/wire_protocol.h"

namespace pulse::adapters::providers {

inline constexpr std::size_t kDefaultMaxMessageBytes = 1 << 20;  // 1 MiB

// One complete message: `event` is the SSE event name ("" when none, always "" for NDJSON),
// `data` the SSE data lines joined by '\n', or one NDJSON line without its line end. Returns
// false to stop framing: the rest of the body is then ignored.
using MessageFn = absl::FunctionRef<bool(std::string_view event, std::string_view data)>;

class MessageFramer {
 public:
  virtual ~MessageFramer() = default;

  // Consumes the next piece of the body, calling `on_message` for each message it completes.
  // IncompleteStreamError when a message outgrows the bound. After an error or a stop, further
  // calls do nothing and return the same result.
  [[nodiscard]] virtual absl::Status Feed(std::string_view bytes, MessageFn on_message) = 0;

  // The body ended. SSE: an unterminated message is dropped (as the SSE rules say). NDJSON: a
  // last line without a line end is still a message.
  [[nodiscard]] virtual absl::Status Finish(MessageFn on_message) = 0;
};

class SseParser final : public MessageFramer {
 public:
  explicit SseParser(std::size_t max_message_bytes = kDefaultMaxMessageBytes)
      : max_bytes_(max_message_bytes) {}

  [[nodiscard]] absl::Status Feed(std::string_view bytes, MessageFn on_message) override;
  [[nodiscard]] absl::Status Finish(MessageFn on_message) override;

 private:
  // One complete line (without its end); false once framing stops.
  bool OnLine(std::string_view line, MessageFn on_message);
  absl::Status Oversize();

  std::size_t max_bytes_;
  std::string line_;       // the current, unfinished line
  std::string data_;       // data lines of the current message, each followed by '\n'
  std::string event_;      // event name of the current message
  bool after_cr_ = false;  // the last byte was CR: a following LF belongs to the same line end
  bool at_start_ = true;   // nothing consumed yet (a BOM may follow)
  bool stopped_ = false;
  absl::Status error_;
};

class NdjsonSplitter final : public MessageFramer {
 public:
  explicit NdjsonSplitter(std::size_t max_message_bytes = kDefaultMaxMessageBytes)
      : max_bytes_(max_message_bytes) {}

  [[nodiscard]] absl::Status Feed(std::string_view bytes, MessageFn on_message) override;
  [[nodiscard]] absl::Status Finish(MessageFn on_message) override;

 private:
  bool OnLine(std::string_view line, MessageFn on_message);

  std::size_t max_bytes_;
  std::string line_;
  bool stopped_ = false;
  absl::Status error_;
};

// The framer for `framing`.
std::unique_ptr<MessageFramer> NewMessageFramer(Framing framing, std::size_t max_message_bytes);

}  // namespace pulse::adapters::providers
