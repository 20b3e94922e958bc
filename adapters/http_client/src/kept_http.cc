// KeptHttp: GET and HEAD over kept plain-HTTP connections (src/kept_http.h). One exchange runs on
// the calling thread: take a kept connection (or connect), send the request, read the reply
// through a ReplyReader (Beast's parser; src/reply_reader.h), which hands the head and the body
// pieces on as they arrive. Every wait is a poll() bounded by the nearest deadline and, when a
// cancellation flag is watched, by the 10 ms tick (ExchangeState).
#include "src/kept_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/string_view.h"
#include "src/errors.h"
#include "src/exchange_state.h"
#include "src/reply_reader.h"

namespace pulse::http_client {
namespace {

using core::ToAbsl;

constexpr std::size_t kMaxIdle = 4;  // as the libcurl handle pool

// An owned descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }

  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset() {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }

 private:
  int fd_ = -1;
};

bool IsTransientSocketError(int error) { return error == EAGAIN || error == EWOULDBLOCK; }

// "Host: host[:port]", the way libcurl writes it (the port only when not 80).
std::string HostHeader(const Url& base) {
  const bool ipv6 = base.host.find(':') != std::string::npos;
  return absl::StrCat(ipv6 ? "[" : "", base.host, ipv6 ? "]" : "",
                      base.port == 80 ? "" : absl::StrCat(":", base.port));
}

bool HasHeader(const Request& request, std::string_view name) {
  return std::any_of(request.headers.begin(), request.headers.end(), [name](const auto& header) {
    return absl::EqualsIgnoreCase(header.first, ToAbsl(name));
  });
}

// The request as libcurl would send it for the same options: Host, User-Agent and Accept unless
// the request sets its own, then the request's headers as given.
std::string RequestBytes(const ClientOptions& options, const Request& request) {
  std::string out =
      absl::StrCat(request.method, " ", options.base.Target(request.target), " HTTP/1.1\r\n");
  if (!HasHeader(request, "Host")) {
    absl::StrAppend(&out, "Host: ", HostHeader(options.base), "\r\n");
  }
  const std::string& agent = options.user_agent;
  if (!agent.empty() && !HasHeader(request, "User-Agent") &&
      std::none_of(agent.begin(), agent.end(), [](char c) { return c == '\r' || c == '\n'; })) {
    absl::StrAppend(&out, "User-Agent: ", agent, "\r\n");
  }
  if (!HasHeader(request, "Accept")) {
    out += "Accept: */*\r\n";
  }
  for (const auto& [name, value] : request.headers) {
    absl::StrAppend(&out, name, ": ", value, "\r\n");
  }
  out += "\r\n";
  return out;
}

}  // namespace

// One exchange on a kept or new connection (ExchangeState: the deadlines, the cancellation
// flag and the callbacks).
class KeptHttp::Exchange {
 public:
  Exchange(const ClientOptions& options, HeadFn on_head, BodyFn on_body,
           const std::atomic<bool>* cancelled)
      : state_(options, on_head, on_body, cancelled) {}

  bool IsCancelled() const { return state_.IsCancelled(); }

  // Connects to one of `addresses` (the next after a refusal). The error of the last one tried.
  absl::StatusOr<Fd> Connect(const std::vector<Address>& addresses) {
    const ExchangeState::Clock::time_point connect_start = ExchangeState::Clock::now();
    std::optional<int> last_error;  // of the last connect that failed
    for (const Address& address : addresses) {
      Fd fd(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (fd.get() < 0) {
        continue;  // no IPv6 here (localhost's ::1), or out of descriptors: the next address
      }
      const int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.storage),
                    address.length) == 0) {
        return fd;
      }
      if (errno != EINPROGRESS) {
        last_error = errno;
        continue;
      }
      absl::Status waited = Wait(fd.get(), POLLOUT, connect_start);
      if (!waited.ok()) {
        return waited;
      }
      int error = 0;
      socklen_t length = sizeof error;
      if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
        error = errno;
      }
      if (error == 0) {
        return fd;
      }
      last_error = error;
    }
    if (!last_error.has_value()) {
      return ClientError(ErrorKind::kProtocol, "no socket could be opened for the connection");
    }
    return ConnectFailure(*last_error);
  }

  // What one attempt on `fd` came to. kRetry: the connection was found closed before any byte of
  // a reply (a kept connection the server dropped); nothing was handed to a callback.
  enum class Result { kDone, kRetry };
  struct Outcome {
    Result result = Result::kDone;
    absl::StatusOr<StreamEnd> end = StreamEnd::kComplete;
    bool reusable = false;
  };

  Outcome Run(int fd, const std::string& request, bool head_only) {
    if (absl::Status sent = Send(fd, request); !sent.ok()) {
      // A connection that broke under the request: a kept one the server dropped meanwhile.
      const bool broke = ErrorKindOf(sent) == ErrorKind::kConnectionLost;
      return Outcome{broke ? Result::kRetry : Result::kDone, sent, false};
    }
    ReplyReader reader(state_, head_only);
    while (true) {
      if (absl::Status waited = Wait(fd, POLLIN, std::nullopt); !waited.ok()) {
        return Outcome{Result::kDone, waited, false};
      }
      auto [space, room] = reader.Space();
      const ssize_t n = ::recv(fd, space, room, 0);
      if (n < 0 && (errno == EINTR || IsTransientSocketError(errno))) {
        continue;
      }
      if (n > 0) {
        state_.Activity();
      }
      switch (n > 0 ? reader.Added(static_cast<std::size_t>(n)) : reader.End(/*reset=*/n < 0)) {
        case ReplyReader::Progress::kMore:
          continue;
        case ReplyReader::Progress::kDone:
          return Outcome{Result::kDone, StreamEnd::kComplete, reader.reusable()};
        case ReplyReader::Progress::kFailed:
          // Closed or broken before any byte: a kept connection that was already dead when the
          // request went out, unless it was a new one.
          return Outcome{reader.received() ? Result::kDone : Result::kRetry, reader.failure(),
                         false};
      }
    }
  }

 private:
  // Writes the whole request; kConnectionLost when the connection turned out broken or closed.
  absl::Status Send(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n >= 0) {
        bytes.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (errno == EINTR) {
        continue;
      }
      if (IsTransientSocketError(errno)) {
        if (absl::Status waited = Wait(fd, POLLOUT, std::nullopt); !waited.ok()) {
          return waited;
        }
        continue;
      }
      return ClientError(ErrorKind::kConnectionLost,
                         "the connection broke before a response arrived");
    }
    return absl::OkStatus();
  }

  // Waits until `fd` is ready for `events` (or hung up: the read or write that follows tells
  // how), or fails with the deadline that passed or the cancellation. `connecting_since` adds
  // the connect deadline.
  absl::Status Wait(int fd, short events,
                    std::optional<ExchangeState::Clock::time_point> connecting_since) {
    while (true) {
      if (IsCancelled()) {
        return ClientError(ErrorKind::kCancelled, "the request was cancelled");
      }
      if (std::optional<TimeoutPhase> phase = state_.Due(connecting_since); phase.has_value()) {
        return TimeoutError(*phase, state_.options().timeouts);
      }
      pollfd p{fd, events, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(state_.WaitLimit(connecting_since).count()));
      if (ready > 0) {
        return absl::OkStatus();
      }
      if (ready < 0 && errno != EINTR) {
        return ClientError(ErrorKind::kConnectionLost,
                           state_.head_done() ? "the connection broke before the response was "
                                                "complete"
                                              : "the connection broke before a response arrived");
      }
    }
  }

  ExchangeState state_;
};

bool GoesDirect(const ClientOptions& options) {
  return !options.proxy_from_environment || !options.unix_socket_path.empty() ||
         (options.base.IsLoopback() && !options.proxy_loopback);
}

std::unique_ptr<KeptHttp> KeptHttp::For(const ClientOptions& options) {
  if (!options.keep_alive || options.base.https || !options.unix_socket_path.empty() ||
      !GoesDirect(options)) {
    return nullptr;
  }
  std::vector<Address> addresses;
  // `text` as an address of `family` with the base's port; false when it is not one.
  const auto add = [&addresses, port = htons(static_cast<std::uint16_t>(options.base.port))](
                       int family, const char* text) {
    Address address;
    void* where = nullptr;
    if (family == AF_INET) {
      auto* in = reinterpret_cast<sockaddr_in*>(&address.storage);
      in->sin_port = port;
      where = &in->sin_addr;
      address.length = sizeof(sockaddr_in);
    } else {
      auto* in = reinterpret_cast<sockaddr_in6*>(&address.storage);
      in->sin6_port = port;
      where = &in->sin6_addr;
      address.length = sizeof(sockaddr_in6);
    }
    if (::inet_pton(family, text, where) != 1) {
      return false;
    }
    address.storage.ss_family = static_cast<sa_family_t>(family);
    addresses.push_back(address);
    return true;
  };
  const std::string& host = options.base.host;
  if (host == "localhost") {
    add(AF_INET, "127.0.0.1");
    add(AF_INET6, "::1");
  } else if (!add(AF_INET, host.c_str()) && !add(AF_INET6, host.c_str())) {
    return nullptr;  // a name: libcurl resolves it (with its timeout and cancellation)
  }
  return std::unique_ptr<KeptHttp>(new KeptHttp(options, std::move(addresses)));
}

bool KeptHttp::Carries(const Request& request) {
  return (request.method == "GET" || request.method == "HEAD") && !request.body.has_value();
}

KeptHttp::KeptHttp(const ClientOptions& options, std::vector<Address> addresses)
    : options_(options), addresses_(std::move(addresses)) {}

KeptHttp::~KeptHttp() {
  absl::MutexLock lock(&mu_);
  for (int fd : idle_) {
    ::close(fd);
  }
}

int KeptHttp::TakeIdle() {
  while (true) {
    int fd = -1;
    {
      absl::MutexLock lock(&mu_);
      if (idle_.empty()) {
        return -1;
      }
      fd = idle_.back();
      idle_.pop_back();
    }
    // An idle connection has nothing to read: readable means the server closed it (or sent
    // bytes nobody asked for), either way it cannot carry the next exchange.
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) == 0) {
      return fd;
    }
    ::close(fd);
  }
}

void KeptHttp::PutIdle(int fd) {
  {
    absl::MutexLock lock(&mu_);
    if (idle_.size() < kMaxIdle) {
      idle_.push_back(fd);
      return;
    }
  }
  ::close(fd);
}

absl::StatusOr<StreamEnd> KeptHttp::Stream(const Request& request, HeadFn on_head, BodyFn on_body,
                                           const std::atomic<bool>* cancelled) {
  Exchange exchange(options_, on_head, on_body, cancelled);
  const std::string bytes = RequestBytes(options_, request);
  const bool head_only = request.method == "HEAD";
  // A kept connection first; one found dead before any reply byte is replaced once by a new one.
  for (int attempt = 0;; ++attempt) {
    Fd fd(attempt == 0 ? TakeIdle() : -1);
    const bool kept = fd.get() >= 0;
    if (!kept) {
      absl::StatusOr<Fd> connected = exchange.Connect(addresses_);
      if (!connected.ok()) {
        return exchange.IsCancelled()
                   ? ClientError(ErrorKind::kCancelled, "the request was cancelled")
                   : connected.status();
      }
      fd = *std::move(connected);
    }
    Exchange::Outcome outcome = exchange.Run(fd.get(), bytes, head_only);
    if (outcome.result == Exchange::Result::kRetry && kept) {
      continue;
    }
    if (outcome.reusable) {
      PutIdle(fd.Release());
    }
    if (exchange.IsCancelled()) {
      return ClientError(ErrorKind::kCancelled, "the request was cancelled");
    }
    if (!outcome.end.ok() && outcome.end.status().code() == absl::StatusCode::kCancelled &&
        !ErrorKindOf(outcome.end.status()).has_value()) {
      return StreamEnd::kStopped;  // a callback returned false
    }
    return outcome.end;
  }
}

}  // namespace pulse::http_client
