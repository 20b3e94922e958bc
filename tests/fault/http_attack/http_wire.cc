#include "http_wire.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace pulse::testing::attack {
namespace {

constexpr std::size_t kMaxSizeLine = 1024;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

// The chunk size at the start of `line` (extensions after ';' ignored), or -1.
std::int64_t ChunkSize(std::string_view line) {
  std::uint64_t size = 0;
  std::size_t digits = 0;
  for (char c : line) {
    const int d = HexDigit(c);
    if (d < 0) {
      if (c == ';' || c == ' ' || c == '\t') {
        break;
      }
      return -1;
    }
    if (++digits > 15) {
      return -1;
    }
    size = size * 16 + static_cast<std::uint64_t>(d);
  }
  return digits == 0 ? -1 : static_cast<std::int64_t>(size);
}

}  // namespace

int StatusOf(std::string_view bytes) {
  // "HTTP/1.x NNN"
  if (bytes.size() < 12 || bytes.substr(0, 7) != "HTTP/1." || bytes[8] != ' ') {
    return 0;
  }
  int status = 0;
  for (std::size_t i = 9; i < 12; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(bytes[i]))) {
      return 0;
    }
    status = status * 10 + (bytes[i] - '0');
  }
  return status;
}

std::size_t ResponseHeadReader::Feed(std::string_view bytes) {
  std::size_t used = 0;
  while (used < bytes.size() && state_ == State::kReading) {
    const char c = bytes[used++];
    if (++head_bytes_ > kMaxHeadBytes) {
      state_ = State::kMalformed;
      break;
    }
    if (c != '\n') {
      line_ += c;
      continue;
    }
    if (!line_.empty() && line_.back() == '\r') {
      line_.pop_back();
    }
    if (line_.empty()) {
      state_ = seen_status_ ? State::kDone : State::kMalformed;
    } else {
      ParseLine(line_);
    }
    line_.clear();
  }
  return used;
}

void ResponseHeadReader::ParseLine(std::string_view line) {
  if (!seen_status_) {
    seen_status_ = true;
    status_ = StatusOf(line);
    if (status_ == 0) {
      state_ = State::kMalformed;
    }
    return;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    state_ = State::kMalformed;
    return;
  }
  const absl::string_view name(line.data(), colon);
  const absl::string_view value = absl::StripAsciiWhitespace(
      absl::string_view(line.data() + colon + 1, line.size() - colon - 1));
  if (absl::EqualsIgnoreCase(name, "transfer-encoding")) {
    chunked_ = absl::StrContains(absl::AsciiStrToLower(value), "chunked");
  } else if (absl::EqualsIgnoreCase(name, "content-length")) {
    std::int64_t length = -1;
    content_length_ = absl::SimpleAtoi(value, &length) && length >= 0 ? length : -1;
  }
}

std::size_t ChunkedDecoder::Feed(std::string_view bytes, std::string& out) {
  std::size_t used = 0;
  while (used < bytes.size()) {
    switch (state_) {
      case State::kDone:
      case State::kMalformed:
        return used;
      case State::kData: {
        const std::size_t take =
            static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, bytes.size() - used));
        out.append(bytes.data() + used, take);
        used += take;
        remaining_ -= take;
        if (remaining_ == 0) {
          state_ = State::kDataEnd;
          saw_cr_ = false;
        }
        break;
      }
      case State::kDataEnd: {
        const char c = bytes[used++];
        if (!saw_cr_ && c == '\r') {
          saw_cr_ = true;
        } else if (c == '\n') {
          state_ = State::kSize;
        } else {
          state_ = State::kMalformed;
        }
        break;
      }
      case State::kSize:
      case State::kTrailer: {
        const char c = bytes[used++];
        if (c != '\n') {
          if (line_.size() >= kMaxSizeLine) {
            state_ = State::kMalformed;
          } else {
            line_ += c;
          }
          break;
        }
        if (!line_.empty() && line_.back() == '\r') {
          line_.pop_back();
        }
        if (state_ == State::kTrailer) {
          if (line_.empty()) {
            state_ = State::kDone;
          }
          line_.clear();
          break;
        }
        const std::int64_t size = ChunkSize(line_);
        line_.clear();
        if (size < 0) {
          state_ = State::kMalformed;
        } else if (size == 0) {
          state_ = State::kTrailer;
        } else {
          remaining_ = static_cast<std::uint64_t>(size);
          state_ = State::kData;
        }
        break;
      }
    }
  }
  return used;
}

bool SseFrameReader::EndLine() {
  if (line_.empty()) {
    const bool complete = any_line_;
    line_.clear();
    return complete;
  }
  any_line_ = true;
  const std::string_view line = line_;
  if (line.front() == ':') {
    if (frame_.comment.empty()) {
      std::string_view text = line.substr(1);
      if (!text.empty() && text.front() == ' ') {
        text.remove_prefix(1);
      }
      frame_.comment = std::string(text);
    }
  } else {
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') {
      value.remove_prefix(1);
    }
    if (field == "event") {
      frame_.event = std::string(value);
    } else if (field == "data") {
      frame_.has_data = true;
    } else if (field == "id") {
      frame_.has_id = true;
    }
  }
  line_.clear();
  return false;
}

}  // namespace pulse::testing::attack
