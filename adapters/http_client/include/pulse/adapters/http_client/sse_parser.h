// SseParser: the client side of a server-sent-event stream (the WHATWG event-stream grammar):
// bytes arrive in arbitrary pieces; lines end in LF, CR or CRLF (a CRLF split across two pieces
// included); "data:" lines of one event are joined with "\n"; "event:" and "id:" are kept;
// comment lines (": heartbeat") and unknown fields are ignored; a blank line dispatches an
// event that has data. A line or event longer than the limit makes the stream unusable (a
// hostile or broken server must not make the client buffer without bound). Shared by pulse-cli
// (the Assistant's streams) and pulse-agent (its command stream). Not thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace pulse::http_client {

struct SseEvent {
  std::string event;  // "" for an unnamed event
  std::string id;
  std::string data;
};

class SseParser {
 public:
  explicit SseParser(std::size_t max_event_bytes = 8u << 20) : max_event_bytes_(max_event_bytes) {}

  // Parses `bytes`, calling `on_event` for every event completed by them (in order). False once
  // a line or an event exceeded the limit; the parser then ignores everything after.
  bool Feed(std::string_view bytes, const std::function<void(const SseEvent&)>& on_event);

  // True when bytes of an event that never ended are held (the stream was cut mid-event).
  bool HasPartialEvent() const { return !line_.empty() || !data_.empty() || has_data_; }
  bool overflowed() const { return overflowed_; }

 private:
  void ProcessLine(const std::function<void(const SseEvent&)>& on_event);

  std::size_t max_event_bytes_;
  std::string line_;
  std::string data_;
  std::string event_;
  std::string id_;
  bool has_data_ = false;
  bool after_cr_ = false;  // the last byte was a CR: an LF right after it ends nothing
  bool overflowed_ = false;
};

}  // namespace pulse::http_client
