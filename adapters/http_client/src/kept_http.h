// Private to adapters/http_client: the transport of a keep-alive client's GET and HEAD
// exchanges over plain HTTP to an address it needs no name lookup, TLS or proxy for (an IP
// literal or localhost; docs/architecture.md, "The HTTP client adapter"). Its own non-blocking
// sockets, kept between exchanges, and Boost.Beast's HTTP/1.1 response parser (the server's
// parser too); the same four deadlines, 10 ms cancellation tick, caps, callbacks and error
// kinds as the libcurl exchange. libcurl's set-up per exchange (a reset handle, some twenty
// options, a header list, a multi round) cost pulse-mcp about 50 us of a 230 us tool call
// (docs/performance.md, issue 29).
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/adapters/http_client/http_client.h"

namespace pulse::http_client {

// Whether no proxy from the environment can apply to a request under `options`: proxies are
// off, or the target is a unix socket, or a loopback host not asked to go through one. libcurl
// is told so (its proxy turned off), and only such a client can have a KeptHttp.
bool GoesDirect(const ClientOptions& options);

class KeptHttp {
 public:
  // The transport for `options`, or null when they are not for it: keep_alive off, https, a
  // unix socket, a proxy that may apply, or a host that needs a name lookup.
  static std::unique_ptr<KeptHttp> For(const ClientOptions& options);

  // Whether `request` goes through this transport: a GET or HEAD without a body.
  static bool Carries(const Request& request);

  ~KeptHttp();
  KeptHttp(const KeptHttp&) = delete;
  KeptHttp& operator=(const KeptHttp&) = delete;

  // HttpClient::Stream for a request Carries() accepts and CheckRequest passed.
  absl::StatusOr<StreamEnd> Stream(const Request& request, HeadFn on_head, BodyFn on_body,
                                   const std::atomic<bool>* cancelled);

 private:
  struct Address {
    sockaddr_storage storage{};
    socklen_t length = 0;
  };
  class Exchange;

  KeptHttp(const ClientOptions& options, std::vector<Address> addresses);

  int TakeIdle();        // a kept connection that still looks open, or -1
  void PutIdle(int fd);  // keeps it (at most kMaxIdle) or closes it

  const ClientOptions& options_;
  const std::vector<Address> addresses_;  // tried in order (localhost: 127.0.0.1, then ::1)
  absl::Mutex mu_;
  std::vector<int> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pulse::http_client
