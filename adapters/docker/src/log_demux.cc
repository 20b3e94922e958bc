#include "pulse/adapters/docker/log_demux.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json_time.h"

namespace pulse::docker {

std::string_view LogStreamName(LogStream stream) {
  switch (stream) {
    case LogStream::kStdin:
      return "stdin";
    case LogStream::kStdout:
      return "stdout";
    case LogStream::kStderr:
      return "stderr";
  }
  return "stdout";
}

LogDemuxer::LogDemuxer(LogDemuxOptions options) : options_(options) {}

absl::Status LogDemuxer::Feed(std::string_view bytes) {
  if (!broken_.ok()) {
    return broken_;
  }
  if (options_.tty) {
    Take(LogStream::kStdout, bytes);
    return absl::OkStatus();
  }
  while (!bytes.empty() && !full_) {
    if (payload_left_ > 0) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(payload_left_, bytes.size()));
      Take(payload_stream_, bytes.substr(0, n));
      bytes.remove_prefix(n);
      payload_left_ -= n;
      continue;
    }
    const std::size_t n = std::min(header_.size() - header_fill_, bytes.size());
    std::copy_n(bytes.begin(), n, header_.begin() + static_cast<std::ptrdiff_t>(header_fill_));
    header_fill_ += n;
    bytes.remove_prefix(n);
    if (header_fill_ < header_.size()) {
      break;
    }
    header_fill_ = 0;
    if (header_[0] > 2 || header_[1] != 0 || header_[2] != 0 || header_[3] != 0) {
      broken_ = absl::DataLossError(
          absl::StrCat("the container log stream is broken: a frame header names stream ",
                       static_cast<int>(header_[0]), " or has non-zero padding"));
      return broken_;
    }
    payload_stream_ = static_cast<LogStream>(header_[0]);
    payload_left_ = (std::uint64_t{header_[4]} << 24) | (std::uint64_t{header_[5]} << 16) |
                    (std::uint64_t{header_[6]} << 8) | std::uint64_t{header_[7]};
  }
  return absl::OkStatus();
}

absl::Status LogDemuxer::Finish() {
  if (!broken_.ok()) {
    return broken_;
  }
  for (const LogStream stream : {LogStream::kStdin, LogStream::kStdout, LogStream::kStderr}) {
    if (PartialOf(stream).open && !full_) {
      EndLine(stream);
    }
  }
  if (!full_ && (header_fill_ != 0 || payload_left_ != 0)) {
    return absl::DataLossError("the container log stream ended inside a frame");
  }
  return absl::OkStatus();
}

void LogDemuxer::Take(LogStream stream, std::string_view payload) {
  const std::size_t room = options_.max_bytes - bytes_taken_;
  const bool over = payload.size() > room;
  if (over) {
    payload = payload.substr(0, room);  // the rest is dropped: the byte bound is reached
  }
  while (!payload.empty() && !full_) {
    Partial& partial = PartialOf(stream);
    const std::size_t newline = payload.find('\n');
    const std::string_view piece =
        newline == std::string_view::npos ? payload : payload.substr(0, newline);
    const std::size_t keep = std::min(piece.size(), options_.max_line_bytes - partial.text.size());
    partial.text.append(piece.substr(0, keep));
    partial.truncated = partial.truncated || keep < piece.size();
    partial.open = true;
    const std::size_t used = newline == std::string_view::npos ? piece.size() : newline + 1;
    bytes_taken_ += used;
    payload.remove_prefix(used);
    if (newline != std::string_view::npos) {
      EndLine(stream);
    }
  }
  full_ = full_ || over;
}

void LogDemuxer::EndLine(LogStream stream) {
  Partial& partial = PartialOf(stream);
  LogLine line;
  line.stream = stream;
  line.truncated = partial.truncated;
  line.text = std::move(partial.text);
  if (!line.text.empty() && line.text.back() == '\r') {
    line.text.pop_back();
  }
  if (options_.timestamps) {
    const std::size_t space = line.text.find(' ');
    const std::string_view stamp = std::string_view(line.text).substr(
        0, space == std::string::npos ? line.text.size() : space);
    core::Rfc3339Limits limits;
    limits.visible_ascii_only = true;
    if (auto time = core::ParseRfc3339(stamp, limits); time.has_value()) {
      line.time = *time;
      line.text.erase(0, space == std::string::npos ? line.text.size() : space + 1);
    }
  }
  partial = Partial{};
  lines_.push_back(std::move(line));
  if (lines_.size() >= options_.max_lines) {
    full_ = true;
  }
}

}  // namespace pulse::docker
