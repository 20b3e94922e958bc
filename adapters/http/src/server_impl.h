// Internal to adapters/http: HttplibServer's implementations. HttplibServer::Impl is the
// interface of a transport; HttplibTransport is the cpp-httplib one, shared by
// httplib_server.cc (setup, start, stop) and request_dispatch.cc (per request); the Beast one
// is in beast_transport.cc. Both serve through the same RequestPipeline.
#pragma once

#include <httplib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "elastic_thread_pool.h"
#include "pulse/adapters/http/httplib_server.h"
#include "pulse/adapters/http/sse_stream.h"
#include "request_pipeline.h"

namespace pulse::adapters::http {

class HttplibServer::Impl {
 public:
  virtual ~Impl() = default;
  virtual absl::Status Start() = 0;
  virtual void Stop() = 0;
  virtual int port() const = 0;
  virtual HttpServerStats Stats() const = 0;
};

namespace internal {

// The Beast transport (beast_transport.cc): binds, and returns the transport ready to Start.
absl::StatusOr<std::unique_ptr<HttplibServer::Impl>> OpenBeastTransport(
    HttpServerOptions options, Router router, TokenAuthenticator& authenticator,
    MetricsRegistry* metrics);

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

class HttplibTransport final : public HttplibServer::Impl {
 public:
  HttplibTransport(HttpServerOptions options, Router router, TokenAuthenticator& authenticator)
      : options_(std::move(options)),
        pipeline_(options_, std::move(router), authenticator),
        gauges_(std::make_shared<PoolGauges>()) {}

  ~HttplibTransport() override { HttplibTransport::Stop(); }

  absl::Status Configure(MetricsRegistry* metrics);
  absl::Status Start() override;
  void Stop() override;
  int port() const override { return port_; }
  HttpServerStats Stats() const override;

 private:
  enum class State { kBound, kRunning, kStopped };

  void InstallHandlers();

  // ---- request_dispatch.cc ----
  void Dispatch(const httplib::Request& req, httplib::Response& res,
                const httplib::ContentReader* reader);
  // After a refusal, reads and discards a body small enough to skip, so the connection stays
  // usable; otherwise marks the connection for closing.
  void SettleUnreadBody(const RawRequest& raw, const httplib::ContentReader* reader,
                        const BodyFraming& framing, Outcome& outcome) const;
  void Apply(Outcome& outcome, httplib::Response& res);
  void AttachStream(const std::shared_ptr<SseStream>& stream, const HttpReply& reply,
                    httplib::Response& res, StreamSlot slot);
  void Record(const std::string& method, const std::string& route, int status,
              std::chrono::steady_clock::duration elapsed, bool stream);

  const HttpServerOptions options_;
  RequestPipeline pipeline_;
  const std::shared_ptr<PoolGauges> gauges_;
  ListenerServer svr_;
  int port_ = -1;

  absl::Mutex state_mu_;
  State state_ ABSL_GUARDED_BY(state_mu_) = State::kBound;
  std::thread listener_;  // set by Start under state_mu_; joined by Stop after state_ is final

  GaugeFamily* workers_ = nullptr;
};

}  // namespace internal
}  // namespace pulse::adapters::http
