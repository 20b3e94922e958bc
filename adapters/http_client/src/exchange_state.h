// Private to adapters/http_client: what every exchange keeps whichever transport carries it (the
// libcurl one in curl_http_client.cc, the kept connections in kept_http.cc): the four deadlines,
// the cancellation flag, and the caller's callbacks with the body cap counted before each piece.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include "pulse/adapters/http_client/http_client.h"
#include "src/errors.h"

namespace pulse::http_client {

// Why an exchange ended early.
enum class Abort { kNone, kStopped, kCancelled, kTooLarge };

class ExchangeState {
 public:
  using Clock = std::chrono::steady_clock;

  // The exchange starts now. `options` and `cancelled` (may be null) outlive it.
  ExchangeState(const ClientOptions& options, HeadFn on_head, BodyFn on_body,
                const std::atomic<bool>* cancelled);

  bool IsCancelled() const {
    return cancelled_ != nullptr && cancelled_->load(std::memory_order_acquire);
  }
  bool head_done() const { return head_done_; }
  const ClientOptions& options() const { return options_; }

  // The deadline that has passed, if any: the whole exchange first, then the response header
  // (until the head is in) or the idle gap (after it), then the connect when `connecting_since`
  // is set.
  std::optional<TimeoutPhase> Due(std::optional<Clock::time_point> connecting_since = {}) const;

  // How long a wait may last: until the nearest of those deadlines, at most 10 ms while a
  // cancellation flag is watched, at most a second otherwise; never less than 1 ms.
  std::chrono::milliseconds WaitLimit(std::optional<Clock::time_point> connecting_since = {}) const;

  // A byte arrived (the idle gap restarts).
  void Activity() { last_activity_ = Clock::now(); }

  // The final head, then each body piece, handed to the caller; kNone to go on, or why not
  // (cancelled, over the body cap, or the callback said stop).
  Abort Head(const ResponseHead& head);
  Abort Body(std::string_view bytes);

 private:
  const ClientOptions& options_;
  HeadFn on_head_;
  BodyFn on_body_;
  const std::atomic<bool>* cancelled_;
  const Clock::time_point start_;
  Clock::time_point last_activity_;
  bool head_done_ = false;
  std::size_t body_bytes_ = 0;
};

}  // namespace pulse::http_client
