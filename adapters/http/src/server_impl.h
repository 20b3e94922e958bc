// Internal to adapters/http: HttpServer::Impl, the interface of the transport behind
// HttpServer (http_server.cc), and the function that opens the one transport, Boost.Beast
// (beast_transport.cc). The transport serves through the RequestPipeline
// (request_pipeline.h).
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/http/http_server.h"

namespace pulse::adapters::http {

class HttpServer::Impl {
 public:
  virtual ~Impl() = default;
  virtual absl::Status Start() = 0;
  virtual void Stop() = 0;
  virtual int port() const = 0;
  virtual HttpServerStats Stats() const = 0;
};

namespace internal {

// The Beast transport (beast_transport.cc): checks its bounds, binds, and returns the
// transport ready to Start.
absl::StatusOr<std::unique_ptr<HttpServer::Impl>> OpenBeastTransport(
    HttpServerOptions options, Router router, TokenAuthenticator& authenticator,
    MetricsRegistry* metrics);

}  // namespace internal
}  // namespace pulse::adapters::http
