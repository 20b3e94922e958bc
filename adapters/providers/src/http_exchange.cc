#include "pulse/adapters/providers/http_exchange.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "httplib.h"

namespace pulse::adapters::providers {
namespace {

using SteadyClock = std::chrono::steady_clock;

// How often the watchdog looks at the cancellation flag and the deadlines.
constexpr std::chrono::milliseconds kWatchdogTick(10);

std::int64_t Nanos(absl::Duration d) { return absl::ToInt64Nanoseconds(d); }

std::chrono::microseconds Micros(absl::Duration d) {
  return std::chrono::microseconds(std::max<std::int64_t>(absl::ToInt64Microseconds(d), 1000));
}

bool IsSet(const std::atomic<bool>* flag) {
  return flag != nullptr && flag->load(std::memory_order_acquire);
}

// Watches one exchange from its own thread. Once a deadline passes or the flag is set it
// records why and shuts the client's socket down, again on every tick until the exchange
// returns (a stop before the socket exists does nothing).
class Watchdog {
 public:
  Watchdog(httplib::ClientImpl& client, const HttpTimeouts& timeouts,
           const std::atomic<bool>* cancelled)
      : client_(client), timeouts_(timeouts), cancelled_(cancelled), start_(SteadyClock::now()) {
    thread_ = std::thread([this] { Run(); });
  }

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  ~Watchdog() {
    {
      absl::MutexLock lock(&mu_);
      done_ = true;  // wakes Run's Await
    }
    thread_.join();
  }

  // Called on the receiving thread.
  void HeadArrived() {
    Touch();
    head_arrived_.store(true, std::memory_order_release);
  }
  void Touch() { last_activity_ns_.store(Elapsed(), std::memory_order_release); }

  // Why the watchdog fired, or nullopt.
  std::optional<HttpEnd> Fired() const {
    const int value = fired_.load(std::memory_order_acquire);
    if (value < 0) {
      return std::nullopt;
    }
    return static_cast<HttpEnd>(value);
  }

 private:
  std::int64_t Elapsed() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - start_)
        .count();
  }

  std::optional<HttpEnd> Due() const {
    if (IsSet(cancelled_)) {
      return HttpEnd::kCancelled;
    }
    const std::int64_t now = Elapsed();
    if (now >= Nanos(timeouts_.request)) {
      return HttpEnd::kRequestTimeout;
    }
    if (!head_arrived_.load(std::memory_order_acquire)) {
      if (now >= Nanos(timeouts_.response_header)) {
        return HttpEnd::kHeaderTimeout;
      }
    } else if (now - last_activity_ns_.load(std::memory_order_acquire) >=
               Nanos(timeouts_.idle_chunk)) {
      return HttpEnd::kIdleTimeout;
    }
    return std::nullopt;
  }

  void Run() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    while (!done_) {
      if (fired_.load(std::memory_order_acquire) < 0) {
        if (std::optional<HttpEnd> due = Due(); due.has_value()) {
          fired_.store(static_cast<int>(*due), std::memory_order_release);
        }
      }
      if (fired_.load(std::memory_order_acquire) >= 0) {
        mu_.Unlock();
        client_.stop();  // may wait for a connect in progress to finish
        mu_.Lock();
      }
      mu_.AwaitWithTimeout(absl::Condition(&done_), absl::FromChrono(kWatchdogTick));
    }
  }

  httplib::ClientImpl& client_;
  const HttpTimeouts timeouts_;
  const std::atomic<bool>* cancelled_;
  const SteadyClock::time_point start_;
  std::atomic<bool> head_arrived_{false};
  std::atomic<std::int64_t> last_activity_ns_{0};
  std::atomic<int> fired_{-1};
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

std::unique_ptr<httplib::ClientImpl> NewClient(const BaseUrl& base, const HttpTimeouts& timeouts) {
  std::unique_ptr<httplib::ClientImpl> client;
  if (base.https) {
    client = std::make_unique<httplib::SSLClient>(base.host, base.port);
  } else {
    client = std::make_unique<httplib::ClientImpl>(base.host, base.port);
  }
  client->set_connection_timeout(Micros(timeouts.connect));
  // The watchdog owns the deadlines; the socket timeouts are only a backstop behind it.
  const absl::Duration backstop =
      std::max(timeouts.response_header, timeouts.idle_chunk) + absl::Seconds(1);
  client->set_read_timeout(Micros(backstop));
  client->set_write_timeout(Micros(backstop));
  client->set_keep_alive(false);
  client->set_follow_location(false);
  return client;
}

httplib::Request NewRequest(const BaseUrl& base, const HttpRequestSpec& spec) {
  httplib::Request req;
  req.method = spec.method;
  req.path = base.Target(spec.path);
  for (const auto& [name, value] : spec.headers) {
    req.headers.emplace(name, value);
  }
  // Ask for an uncompressed body: compression would hold stream messages back.
  req.headers.emplace("Accept-Encoding", "identity");
  req.headers.emplace("User-Agent", "pulse-core");
  if (!spec.body.empty()) {
    req.headers.emplace("Content-Type", "application/json");
    req.body = spec.body;
  }
  return req;
}

HttpResponseHead HeadOf(const httplib::Response& response) {
  HttpResponseHead head;
  head.status = response.status;
  for (const auto& [name, value] : response.headers) {
    head.headers.emplace_back(name, value);
  }
  return head;
}

HttpEnd FailureEnd(httplib::Error error, bool head_arrived) {
  switch (error) {
    case httplib::Error::Connection:
    case httplib::Error::BindIPAddress:
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
      return HttpEnd::kConnectFailed;
    case httplib::Error::ConnectionTimeout:
      return HttpEnd::kConnectTimeout;
    case httplib::Error::SSLServerVerification:
      return HttpEnd::kTlsRejected;
    default:
      return head_arrived ? HttpEnd::kBrokenBody : HttpEnd::kBrokenBeforeHead;
  }
}

std::string DurationText(absl::Duration d) { return absl::FormatDuration(d); }

}  // namespace

std::optional<std::string> HttpResponseHead::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, absl::string_view(name.data(), name.size()))) {
      return value;
    }
  }
  return std::nullopt;
}

HttpEnd ExchangeHttp(const BaseUrl& base, const HttpRequestSpec& spec, const HttpTimeouts& timeouts,
                     const std::atomic<bool>* cancelled, HeadFn on_head, BodyFn on_body) {
  if (IsSet(cancelled)) {
    return HttpEnd::kCancelled;
  }
  std::unique_ptr<httplib::ClientImpl> client = NewClient(base, timeouts);
  httplib::Request req = NewRequest(base, spec);
  bool stopped = false;
  bool head_arrived = false;
  std::optional<HttpEnd> fired;
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  bool ok = false;
  {
    Watchdog watchdog(*client, timeouts, cancelled);
    // Both callbacks run on this thread, inside send().
    auto go_on = [&] { return !IsSet(cancelled) && !watchdog.Fired().has_value(); };
    req.response_handler = [&](const httplib::Response& response) {
      watchdog.HeadArrived();
      head_arrived = true;
      if (!go_on()) {
        return false;
      }
      stopped = !on_head(HeadOf(response));
      return !stopped;
    };
    req.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
      watchdog.Touch();
      if (!go_on()) {
        return false;
      }
      stopped = !on_body(std::string_view(data, size));
      return !stopped;
    };
    ok = client->send(req, res, error);
    fired = watchdog.Fired();
  }
  if (IsSet(cancelled)) {
    return HttpEnd::kCancelled;
  }
  if (fired.has_value()) {
    return *fired;
  }
  if (stopped) {
    return HttpEnd::kStopped;
  }
  if (!ok) {
    return FailureEnd(error, head_arrived);
  }
  // A response without a body (204, HEAD) never reached the head callback.
  if (!head_arrived && !on_head(HeadOf(res))) {
    return HttpEnd::kStopped;
  }
  return HttpEnd::kBodyComplete;
}

absl::Status HttpEndStatus(HttpEnd end, const HttpTimeouts& timeouts) {
  switch (end) {
    case HttpEnd::kBodyComplete:
    case HttpEnd::kStopped:
    case HttpEnd::kBrokenBody:
      return absl::OkStatus();
    case HttpEnd::kCancelled:
      return absl::CancelledError("the request was cancelled");
    case HttpEnd::kConnectFailed:
      return absl::UnavailableError("could not connect");
    case HttpEnd::kConnectTimeout:
      return absl::DeadlineExceededError(
          absl::StrCat("no connection within ", DurationText(timeouts.connect)));
    case HttpEnd::kTlsRejected:
      return absl::FailedPreconditionError("the server's TLS certificate was not trusted");
    case HttpEnd::kBrokenBeforeHead:
      return absl::UnavailableError("the connection failed before a response arrived");
    case HttpEnd::kHeaderTimeout:
      return absl::DeadlineExceededError(
          absl::StrCat("no response headers within ", DurationText(timeouts.response_header)));
    case HttpEnd::kIdleTimeout:
      return absl::DeadlineExceededError(
          absl::StrCat("the response stream was idle for ", DurationText(timeouts.idle_chunk)));
    case HttpEnd::kRequestTimeout:
      return absl::DeadlineExceededError(
          absl::StrCat("the response took longer than ", DurationText(timeouts.request)));
  }
  return absl::UnknownError("unexpected exchange outcome");
}

}  // namespace pulse::adapters::providers
