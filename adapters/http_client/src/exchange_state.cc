#include "src/exchange_state.h"

#include <algorithm>
#include <cstdint>

#include "absl/time/time.h"

namespace pulse::http_client {
namespace {

constexpr absl::Duration kPollTick = absl::Milliseconds(10);

}  // namespace

ExchangeState::ExchangeState(const ClientOptions& options, HeadFn on_head, BodyFn on_body,
                             const std::atomic<bool>* cancelled)
    : options_(options),
      on_head_(on_head),
      on_body_(on_body),
      cancelled_(cancelled),
      start_(Clock::now()),
      last_activity_(start_) {}

std::optional<TimeoutPhase> ExchangeState::Due(
    std::optional<Clock::time_point> connecting_since) const {
  const Clock::time_point now = Clock::now();
  const Timeouts& t = options_.timeouts;
  const absl::Duration elapsed = absl::FromChrono(now - start_);
  if (elapsed >= t.total) {
    return TimeoutPhase::kTotal;
  }
  if (!head_done_) {
    if (elapsed >= t.response_header) {
      return TimeoutPhase::kResponseHeader;
    }
  } else if (absl::FromChrono(now - last_activity_) >= t.idle) {
    return TimeoutPhase::kIdle;
  }
  if (connecting_since.has_value() && absl::FromChrono(now - *connecting_since) >= t.connect) {
    return TimeoutPhase::kConnect;
  }
  return std::nullopt;
}

std::chrono::milliseconds ExchangeState::WaitLimit(
    std::optional<Clock::time_point> connecting_since) const {
  const Clock::time_point now = Clock::now();
  const Timeouts& t = options_.timeouts;
  const absl::Duration elapsed = absl::FromChrono(now - start_);
  absl::Duration wait = cancelled_ != nullptr ? kPollTick : absl::Seconds(1);
  wait = std::min(wait, t.total - elapsed);
  if (!head_done_) {
    wait = std::min(wait, t.response_header - elapsed);
  } else {
    wait = std::min(wait, t.idle - absl::FromChrono(now - last_activity_));
  }
  if (connecting_since.has_value()) {
    wait = std::min(wait, t.connect - absl::FromChrono(now - *connecting_since));
  }
  // Rounded up: a wait rounded down to 0 ms would spin until the deadline.
  const std::int64_t millis = absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1)));
  return std::chrono::milliseconds(std::clamp<std::int64_t>(millis, 1, 1000));
}

Abort ExchangeState::Head(const ResponseHead& head) {
  head_done_ = true;
  Activity();
  if (IsCancelled()) {
    return Abort::kCancelled;
  }
  return on_head_(head) ? Abort::kNone : Abort::kStopped;
}

Abort ExchangeState::Body(std::string_view bytes) {
  Activity();
  if (IsCancelled()) {
    return Abort::kCancelled;
  }
  if (options_.max_body_bytes != 0 && body_bytes_ + bytes.size() > options_.max_body_bytes) {
    return Abort::kTooLarge;
  }
  body_bytes_ += bytes.size();
  return on_body_(bytes) ? Abort::kNone : Abort::kStopped;
}

}  // namespace pulse::http_client
