// Internal to adapters/http: HttplibServer's implementation, shared by httplib_server.cc
// (setup, start, stop) and request_dispatch.cc (the per-request pipeline).
#pragma once

#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "elastic_thread_pool.h"
#include "pulse/adapters/http/httplib_server.h"
#include "pulse/adapters/http/sse_stream.h"
#include "request_parsing.h"
#include "stream_slots.h"

namespace pulse::adapters::http {
namespace internal {

inline constexpr std::string_view kUnmatched = "unmatched";

// httplib::Server with the two things its API lacks: a real accept backlog (it listens with
// 5, so a burst of connections waits for SYN retransmits) and closing a listener whose accept
// loop has not started yet (stop() only acts on a running server).
class ListenerServer final : public httplib::Server {
 public:
  bool RaiseBacklog(int backlog) { return ::listen(svr_sock_, backlog) == 0; }

  void CloseListener() {
    const socket_t sock = svr_sock_.exchange(INVALID_SOCKET);
    if (sock != INVALID_SOCKET) {
      ::shutdown(sock, SHUT_RDWR);
      ::close(sock);
    }
  }
};

// What one request comes to.
struct Outcome {
  HttpReply reply;
  std::string route = std::string(kUnmatched);
  bool close_connection = false;  // its body was left unread: the connection cannot be reused
  StreamSlot slot;                // a streaming route's slot, held until its stream ends
};

}  // namespace internal

class HttplibServer::Impl {
 public:
  Impl(HttpServerOptions options, Router router, TokenAuthenticator& authenticator)
      : options_(std::move(options)),
        router_(std::move(router)),
        authenticator_(authenticator),
        gauges_(std::make_shared<internal::PoolGauges>()),
        slots_(internal::StreamSlotLimits{options_.max_subscription_streams,
                                          options_.max_run_streams,
                                          options_.max_streams_per_token}) {}

  ~Impl() { Stop(); }

  absl::Status Configure(MetricsRegistry* metrics);
  absl::Status Start();
  void Stop();
  int port() const { return port_; }
  HttpServerStats Stats() const;

 private:
  enum class State { kBound, kRunning, kStopped };

  void InstallHandlers();
  HttpReply ErrorHandlerReply(int status) const;

  // ---- request_dispatch.cc ----
  void Dispatch(const httplib::Request& req, httplib::Response& res,
                const httplib::ContentReader* reader);
  internal::Outcome Decide(const httplib::Request& req, const httplib::ContentReader* reader,
                           const internal::BodyFraming& framing, bool& body_consumed);
  // Refusals that need no route: malformed framing, an over-long target, a body where none
  // may be, range requests.
  std::optional<HttpReply> CheckRequestShape(const httplib::Request& req,
                                             const httplib::ContentReader* reader,
                                             const internal::BodyFraming& framing) const;
  // Authenticates and checks the route's scope; the refusal, or nullopt with `principal` set.
  std::optional<HttpReply> Authorize(const httplib::Request& req, const BoundRoute& route,
                                     Principal& principal) const;
  // Path parameters, query and body into `request`; the refusal, or nullopt.
  std::optional<HttpReply> ReadInputs(const httplib::Request& req,
                                      const httplib::ContentReader* reader,
                                      const internal::BodyFraming& framing, const BoundRoute& route,
                                      PathParams params, HttpRequest& request,
                                      internal::Outcome& out, bool& body_consumed);
  // Reads the body into `body`; false with `error` set when it is too large or unreadable.
  bool ReadBody(const httplib::ContentReader& reader, const internal::BodyFraming& framing,
                std::string& body, HttpReply& error) const;
  // After a refusal, reads and discards a body small enough to skip, so the connection stays
  // usable; otherwise marks the connection for closing.
  void SettleUnreadBody(const httplib::Request& req, const httplib::ContentReader* reader,
                        const internal::BodyFraming& framing, internal::Outcome& outcome) const;
  // Takes the stream slot a streaming route needs; the refusal, or nullopt with out.slot set.
  std::optional<HttpReply> TakeStreamSlot(const BoundRoute& route, const Principal& principal,
                                          internal::Outcome& out);
  void Apply(internal::Outcome& outcome, httplib::Response& res);
  void AttachStream(const std::shared_ptr<SseStream>& stream, const HttpReply& reply,
                    httplib::Response& res, internal::StreamSlot slot);
  bool RegisterStream(const std::shared_ptr<SseStream>& stream);
  void UnregisterStream(const SseStream* stream);
  void Record(const std::string& method, const std::string& route, int status,
              std::chrono::steady_clock::duration elapsed, bool stream);

  const HttpServerOptions options_;
  const Router router_;
  TokenAuthenticator& authenticator_;
  const std::shared_ptr<internal::PoolGauges> gauges_;
  internal::StreamSlots slots_;
  internal::ListenerServer svr_;
  int port_ = -1;

  absl::Mutex state_mu_;
  State state_ ABSL_GUARDED_BY(state_mu_) = State::kBound;
  std::thread listener_;  // set by Start under state_mu_; joined by Stop after state_ is final

  mutable absl::Mutex streams_mu_;
  absl::CondVar streams_cv_;
  std::map<const SseStream*, std::weak_ptr<SseStream>> streams_ ABSL_GUARDED_BY(streams_mu_);
  bool stopping_ ABSL_GUARDED_BY(streams_mu_) = false;

  CounterFamily* requests_ = nullptr;
  HistogramFamily* latency_ = nullptr;
  GaugeFamily* open_streams_ = nullptr;
  GaugeFamily* workers_ = nullptr;
};

}  // namespace pulse::adapters::http
