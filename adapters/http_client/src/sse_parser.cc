#include "pulse/adapters/http_client/sse_parser.h"

namespace pulse::http_client {

bool SseParser::Feed(std::string_view bytes, const std::function<void(const SseEvent&)>& on_event) {
  if (overflowed_) {
    return false;
  }
  for (char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') {
        continue;  // the LF of a CRLF
      }
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      ProcessLine(on_event);
      line_.clear();
      continue;
    }
    line_.push_back(c);
    if (line_.size() + data_.size() > max_event_bytes_) {
      overflowed_ = true;
      line_.clear();
      data_.clear();
      return false;
    }
  }
  return true;
}

void SseParser::ProcessLine(const std::function<void(const SseEvent&)>& on_event) {
  if (line_.empty()) {
    if (has_data_) {
      SseEvent event{std::move(event_), id_, std::move(data_)};
      event_.clear();
      data_.clear();
      has_data_ = false;
      on_event(event);
    } else {
      event_.clear();
    }
    return;
  }
  if (line_.front() == ':') {
    return;  // comment (heartbeat)
  }
  const std::size_t colon = line_.find(':');
  const std::string_view whole(line_);
  const std::string_view field = whole.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : whole.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') {
    value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) {
      data_.push_back('\n');
    }
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_ = std::string(value);
  } else if (field == "id") {
    id_ = std::string(value);
  }
}

}  // namespace pulse::http_client
