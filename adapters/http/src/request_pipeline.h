// Internal to adapters/http: the transport-neutral part of serving a request, used by the
// Beast transport (beast_transport.cc): shape checks, route, authentication and scope, path
// parameters, query, body, stream slot and handler (Decide); the registry of open event
// streams and their graceful end; the request record and its metrics.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "pulse/adapters/http/http_server.h"
#include "pulse/adapters/http/sse_stream.h"
#include "request_parsing.h"
#include "stream_slots.h"

namespace pulse::adapters::http::internal {

inline constexpr std::string_view kUnmatched = "unmatched";

// What one request comes to.
struct Outcome {
  HttpReply reply;
  std::string route = std::string(kUnmatched);
  bool close_connection = false;  // its body was left unread: the connection cannot be reused
  StreamSlot slot;                // a streaming route's slot, held until its stream ends
};

// The body of one request as the transport supplies it (Beast: already read under the
// transport's limit and deadline).
class BodySource {
 public:
  virtual ~BodySource() = default;
  // The whole body into `body`, at most `limit` bytes; false with `error` set (413 when it is
  // larger, 400 when it cannot be read).
  virtual bool Read(const BodyFraming& framing, std::size_t limit, std::string& body,
                    HttpReply& error) = 0;
};

// The envelope for a refusal the transport makes before any route is known, by status
// (400, 404, 408, 413, 414, 431, 500, 503, ...); `message` replaces the default one.
HttpReply TransportRefusal(int status, std::string_view message = {});

class RequestPipeline {
 public:
  RequestPipeline(const HttpServerOptions& options, Router router,
                  TokenAuthenticator& authenticator);

  // Registers the request, stream and stream-slot metric families (nullable registry).
  [[nodiscard]] absl::Status ConfigureMetrics(MetricsRegistry* metrics);

  // Decides one request. `body` is null for a method that carries no body (GET, HEAD, ...);
  // `body_consumed` turns true once the body was read (or refused while reading).
  Outcome Decide(const RawRequest& req, BodySource* body, const BodyFraming& framing,
                 bool& body_consumed);

  // For an outcome whose reply is an event stream: registers it (true), or turns the reply
  // into the refusal (a stream from a route not declared streaming: 500; the server is
  // stopping: 503) and releases the producer (false). True for a reply without a stream too.
  bool AdmitStream(Outcome& outcome);
  void UnregisterStream(const SseStream* stream);
  // Stop: no new streams; every open one is shut down and given stop_grace to drain.
  void ShutdownStreams();
  std::size_t open_streams() const;

  void Record(const std::string& method, const std::string& route, int status,
              std::chrono::steady_clock::duration elapsed, bool stream);

  const HttpServerOptions& options() const { return options_; }
  const Router& router() const { return router_; }

 private:
  Outcome DecideRoute(const RawRequest& req, BodySource* body, const BodyFraming& framing,
                      bool& body_consumed);
  std::optional<HttpReply> CheckRequestShape(const RawRequest& req, const BodySource* body,
                                             const BodyFraming& framing) const;
  std::optional<HttpReply> Authorize(const RawRequest& req, const BoundRoute& route,
                                     Principal& principal) const;
  // The console session cookie in place of a token (console_sessions.h): the session's
  // principal, the CSRF check for a method that may change state, then the route's scope.
  std::optional<HttpReply> AuthorizeConsole(const RawRequest& req, const BoundRoute& route,
                                            const std::string& cookie, Principal& principal) const;
  std::optional<HttpReply> ReadInputs(const RawRequest& req, BodySource* body,
                                      const BodyFraming& framing, const BoundRoute& route,
                                      PathParams params, HttpRequest& request, Outcome& out,
                                      bool& body_consumed);
  std::optional<HttpReply> TakeStreamSlot(const BoundRoute& route, const Principal& principal,
                                          Outcome& out);
  bool RegisterStream(const std::shared_ptr<SseStream>& stream);

  const HttpServerOptions& options_;
  const Router router_;
  TokenAuthenticator& authenticator_;
  StreamSlots slots_;

  mutable absl::Mutex streams_mu_;
  absl::CondVar streams_cv_;
  std::map<const SseStream*, std::weak_ptr<SseStream>> streams_ ABSL_GUARDED_BY(streams_mu_);
  bool stopping_ ABSL_GUARDED_BY(streams_mu_) = false;

  CounterFamily* requests_ = nullptr;
  HistogramFamily* latency_ = nullptr;
  GaugeFamily* open_streams_ = nullptr;
};

}  // namespace pulse::adapters::http::internal
