// HttpServer: checks the options and opens the transport (beast_transport.cc) behind the
// HttpServer::Impl interface (server_impl.h).
#include "pulse/adapters/http/http_server.h"

#include <utility>

#include "pulse/core/status_macros.h"
#include "server_impl.h"

namespace pulse::adapters::http {

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Open(HttpServerOptions options,
                                                             Router router,
                                                             TokenAuthenticator& authenticator,
                                                             MetricsRegistry* metrics) {
  if (options.max_subscription_streams == 0 || options.max_run_streams == 0 ||
      options.max_host_agent_streams == 0 || options.max_streams_per_token == 0 ||
      options.max_body_bytes == 0 || options.max_target_bytes < 16 || options.listen_backlog <= 0 ||
      options.write_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "inconsistent server options: need positive stream budgets and per-token cap, a "
        "positive body limit, backlog and write timeout, and max_target_bytes >= 16");
  }
  if (options.require_complete_router) {
    PULSE_RETURN_IF_ERROR(router.CheckComplete());
  }
  PULSE_ASSIGN_OR_RETURN(
      std::unique_ptr<Impl> impl,
      internal::OpenBeastTransport(std::move(options), std::move(router), authenticator, metrics));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  if (impl_ != nullptr) {
    impl_->Stop();
  }
}

int HttpServer::port() const { return impl_->port(); }

absl::Status HttpServer::Start() { return impl_->Start(); }

void HttpServer::Stop() { impl_->Stop(); }

HttpServerStats HttpServer::stats() const { return impl_->Stats(); }

}  // namespace pulse::adapters::http
