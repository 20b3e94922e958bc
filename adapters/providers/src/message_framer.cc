#include "pulse/adapters/providers/message_framer.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/model/llm_types.h"

namespace pulse::adapters::providers {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

absl::Status OversizeError(std::size_t max_bytes) {
  return core::IncompleteStreamError(
      absl::StrCat("the provider stream sent a message over the ", max_bytes, "-byte limit"));
}

bool IsBlank(std::string_view text) {
  for (char c : text) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

}  // namespace

// ---- SSE ------------------------------------------------------------------------------------

absl::Status SseParser::Oversize() {
  error_ = OversizeError(max_bytes_);
  return error_;
}

absl::Status SseParser::Feed(std::string_view bytes, MessageFn on_message) {
  if (stopped_ || !error_.ok()) {
    return error_;
  }
  while (!bytes.empty()) {
    if (after_cr_) {
      after_cr_ = false;
      if (bytes.front() == '\n') {
        bytes.remove_prefix(1);
        continue;
      }
    }
    const std::size_t end = bytes.find_first_of("\r\n");
    if (end == std::string_view::npos) {
      if (line_.size() + bytes.size() > max_bytes_) {
        return Oversize();
      }
      line_.append(bytes);
      break;
    }
    if (line_.size() + end > max_bytes_) {
      return Oversize();
    }
    std::string_view line = bytes.substr(0, end);
    if (!line_.empty()) {
      line_.append(line);
      line = line_;
    }
    after_cr_ = bytes[end] == '\r';
    bytes.remove_prefix(end + 1);
    const bool go_on = OnLine(line, on_message);
    line_.clear();
    if (!error_.ok()) {
      return error_;
    }
    if (!go_on) {
      stopped_ = true;
      break;
    }
  }
  return absl::OkStatus();
}

bool SseParser::OnLine(std::string_view line, MessageFn on_message) {
  if (at_start_) {
    at_start_ = false;
    if (line.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
      line.remove_prefix(kByteOrderMark.size());
    }
  }
  if (line.empty()) {  // dispatch
    if (data_.empty()) {
      event_.clear();
      return true;
    }
    data_.pop_back();  // the '\n' after the last data line
    const bool go_on = on_message(event_, data_);
    data_.clear();
    event_.clear();
    return go_on;
  }
  if (line.front() == ':') {
    return true;  // comment (keep-alives such as ": ping")
  }
  const std::size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value =
      colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') {
    value.remove_prefix(1);
  }
  if (field == "data") {
    if (data_.size() + value.size() + 1 > max_bytes_) {
      error_ = OversizeError(max_bytes_);
      return false;
    }
    data_.append(value);
    data_.push_back('\n');
  } else if (field == "event") {
    event_.assign(value);
  }
  // `id`, `retry` and unknown fields mean nothing to a one-shot provider stream.
  return true;
}

absl::Status SseParser::Finish(MessageFn /*on_message*/) {
  // An unterminated message is dropped: only a blank line completes a message.
  return error_;
}

// ---- NDJSON ---------------------------------------------------------------------------------

absl::Status NdjsonSplitter::Feed(std::string_view bytes, MessageFn on_message) {
  if (stopped_ || !error_.ok()) {
    return error_;
  }
  while (!bytes.empty()) {
    const std::size_t end = bytes.find('\n');
    const std::size_t take = end == std::string_view::npos ? bytes.size() : end;
    if (line_.size() + take > max_bytes_ + 1) {  // +1: a CR before the LF is not content
      error_ = OversizeError(max_bytes_);
      return error_;
    }
    if (end == std::string_view::npos) {
      line_.append(bytes);
      break;
    }
    std::string_view line = bytes.substr(0, end);
    if (!line_.empty()) {
      line_.append(line);
      line = line_;
    }
    bytes.remove_prefix(end + 1);
    const bool go_on = OnLine(line, on_message);
    line_.clear();
    if (!error_.ok()) {
      return error_;
    }
    if (!go_on) {
      stopped_ = true;
      break;
    }
  }
  return absl::OkStatus();
}

bool NdjsonSplitter::OnLine(std::string_view line, MessageFn on_message) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  if (line.size() > max_bytes_) {
    error_ = OversizeError(max_bytes_);
    return false;
  }
  if (IsBlank(line)) {
    return true;
  }
  return on_message("", line);
}

absl::Status NdjsonSplitter::Finish(MessageFn on_message) {
  if (stopped_ || !error_.ok()) {
    return error_;
  }
  if (!line_.empty()) {
    std::string last = std::move(line_);
    line_.clear();
    if (!OnLine(last, on_message)) {
      stopped_ = true;
    }
  }
  return error_;
}

std::unique_ptr<MessageFramer> NewMessageFramer(Framing framing, std::size_t max_message_bytes) {
  if (framing == Framing::kNdjson) {
    return std::make_unique<NdjsonSplitter>(max_message_bytes);
  }
  return std::make_unique<SseParser>(max_message_bytes);
}

}  // namespace pulse::adapters::providers
