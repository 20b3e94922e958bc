// The Beast transport: placeholder until it lands.
#include "server_impl.h"

namespace pulse::adapters::http::internal {

absl::StatusOr<std::unique_ptr<HttplibServer::Impl>> OpenBeastTransport(HttpServerOptions, Router,
                                                                        TokenAuthenticator&,
                                                                        MetricsRegistry*) {
  return absl::UnimplementedError("the Beast transport is not built yet");
}

}  // namespace pulse::adapters::http::internal
