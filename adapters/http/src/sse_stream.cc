#include "pulse/adapters/http/sse_stream.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::http {
namespace {

constexpr std::size_t kMaxEventNameBytes = 64;

bool IsEventNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

void AppendDataLines(std::string& out, std::string_view data) {
  std::size_t start = 0;
  while (true) {
    const std::size_t end = data.find_first_of("\r\n", start);
    const std::string_view line =
        data.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    absl::StrAppend(&out, "data: ", core::ToAbsl(line), "\n");
    if (end == std::string_view::npos) {
      break;
    }
    start = end + 1;
    if (data[end] == '\r' && start < data.size() && data[start] == '\n') {
      ++start;  // CRLF is one break
    }
  }
  out.push_back('\n');
}

absl::Duration AtLeastOneMs(absl::Duration d) { return std::max(d, absl::Milliseconds(1)); }

}  // namespace

std::string FormatSseData(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 8);
  AppendDataLines(out, data);
  return out;
}

std::optional<std::string> FormatSseEvent(std::string_view event, std::string_view data,
                                          std::optional<std::uint64_t> id) {
  if (event.empty() || event.size() > kMaxEventNameBytes ||
      !std::all_of(event.begin(), event.end(), IsEventNameChar)) {
    return std::nullopt;
  }
  std::string out = absl::StrCat("event: ", core::ToAbsl(event), "\n");
  if (id.has_value()) {
    absl::StrAppend(&out, "id: ", *id, "\n");
  }
  AppendDataLines(out, data);
  return out;
}

std::string FormatSseComment(std::string_view text) {
  std::string clean(text);
  std::replace_if(
      clean.begin(), clean.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
  return absl::StrCat(": ", clean, "\n\n");
}

std::string FormatSseRecord(std::uint64_t id, std::string_view data) {
  std::string out = absl::StrCat("id: ", id, "\n");
  AppendDataLines(out, data);
  return out;
}

std::shared_ptr<SseStream> SseStream::Create(SseOptions options) {
  return std::shared_ptr<SseStream>(new SseStream(std::move(options)));
}

SseStream::SseStream(SseOptions options)
    : options_(std::move(options)), cancel_flag_(std::make_shared<std::atomic<bool>>(false)) {}

bool SseStream::Send(std::string_view data) { return Enqueue(FormatSseData(data)); }

bool SseStream::SendEvent(std::string_view event, std::string_view data,
                          std::optional<std::uint64_t> id) {
  std::optional<std::string> frame = FormatSseEvent(event, data, id);
  if (!frame.has_value()) {
    return false;
  }
  return Enqueue(*std::move(frame));
}

bool SseStream::SendFrame(std::string frame) { return Enqueue(std::move(frame)); }

bool SseStream::Enqueue(std::string frame) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_ || stopping_ || aborted_ || finished_) {
      return false;
    }
    if (frames_.size() >= options_.max_queued_frames) {
      if (options_.overflow == SseOverflow::kDropNewest) {
        ++dropped_;
        return false;
      }
      aborted_ = true;
      RaiseCancel();
    } else {
      frames_.push_back(std::move(frame));
    }
  }
  Notify();
  return !cancelled();
}

void SseStream::Close() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  Notify();
}

bool SseStream::cancelled() const { return cancel_flag_->load(std::memory_order_acquire); }

bool SseStream::WaitForCancel(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + AtLeastOneMs(timeout);
  while (!cancelled() && !cv_.WaitWithDeadline(&mu_, deadline)) {
  }
  return cancelled();
}

bool SseStream::finished() const {
  absl::MutexLock lock(&mu_);
  return finished_;
}

std::uint64_t SseStream::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

std::optional<SseStream::Pull> SseStream::PendingLocked(std::string& out) {
  if (aborted_) {
    return Pull::kAbort;
  }
  if (!frames_.empty()) {
    for (std::string& frame : frames_) {
      out.append(frame);
    }
    frames_.clear();
    return Pull::kWrite;
  }
  if (closed_ || stopping_) {
    return Pull::kEnd;
  }
  return std::nullopt;
}

SseStream::Pull SseStream::Next(std::string& out) {
  out.clear();
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + AtLeastOneMs(options_.heartbeat);
  while (true) {
    if (std::optional<Pull> pending = PendingLocked(out)) {
      return *pending;
    }
    if (cv_.WaitWithDeadline(&mu_, deadline)) {  // true: the deadline passed
      if (aborted_ || !frames_.empty() || closed_ || stopping_) {
        continue;  // the state changed at the deadline; report it instead
      }
      out = HeartbeatFrame();
      return Pull::kWrite;
    }
  }
}

std::optional<SseStream::Pull> SseStream::TryNext(std::string& out) {
  out.clear();
  absl::MutexLock lock(&mu_);
  return PendingLocked(out);
}

std::string SseStream::HeartbeatFrame() const {
  return options_.heartbeat_frame ? options_.heartbeat_frame()
                                  : FormatSseComment(options_.heartbeat_comment);
}

void SseStream::SetWakeup(std::function<void()> wake) {
  std::shared_ptr<const std::function<void()>> now;
  {
    absl::MutexLock lock(&mu_);
    if (wake) {
      wake_ = std::make_shared<const std::function<void()>>(std::move(wake));
    } else {
      wake_.reset();
    }
    if (wake_ != nullptr && (aborted_ || !frames_.empty() || closed_ || stopping_)) {
      now = wake_;
    }
  }
  if (now != nullptr) {
    (*now)();
  }
}

void SseStream::Notify() {
  cv_.SignalAll();
  std::shared_ptr<const std::function<void()>> wake;
  {
    absl::MutexLock lock(&mu_);
    wake = wake_;
  }
  if (wake != nullptr) {
    (*wake)();
  }
}

void SseStream::Abort() {
  {
    absl::MutexLock lock(&mu_);
    aborted_ = true;
    RaiseCancel();
  }
  Notify();
}

void SseStream::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    RaiseCancel();
  }
  Notify();
}

void SseStream::MarkFinished(bool clean) {
  {
    absl::MutexLock lock(&mu_);
    finished_ = true;
    // A stream the producer did not close ended under it: tell the producer.
    if (!clean || !closed_) {
      aborted_ = true;
      RaiseCancel();
    }
    frames_.clear();
  }
  Notify();
}

void SseStream::RaiseCancel() { cancel_flag_->store(true, std::memory_order_release); }

}  // namespace pulse::adapters::http
