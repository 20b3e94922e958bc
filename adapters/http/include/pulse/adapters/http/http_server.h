// HttpServer: pulse-server's HTTP front end (the Beast transport, adapters/http/src/
// beast_transport.cc; docs/server.md "The HTTP transport"). It binds host:port (port 0 picks an
// ephemeral port, reported by port()), bounds every request head, body and connection (the
// limits below; a request over one is answered 408/413/414/431/503 in the agent error envelope
// and its connection closed), and for every request: caps the target and the body, resolves
// the route (router.h), authenticates (token_authenticator.h) and checks the route's scope,
// checks path parameters and the query against the route's declared parameters
// (query_validator.h), refuses a body that is not declared application/json (415), validates
// the body against the route's schema, calls the handler, and answers every refusal with the
// agent error envelope.
//
// Concurrency: connections run on a few event loops (io_threads), handlers on a fixed pool
// (handler_threads) unless the loop answers the route itself (inline_routes, loop_routes); an idle
// keep-alive connection and an open event stream (sse_stream.h) hold no thread. Open streams draw
// from two budgets — agent event subscriptions and runs (chat, resume, answer) — so neither kind
// can starve the other (503 service_unavailable with Retry-After beyond a budget), and one token
// holds at most max_streams_per_token of them (429 too_many_streams). The slot is taken before the
// handler runs, so a refused run never starts. Stop() is graceful: open streams are asked to finish
// and drain (their producers see cancellation), then the listener closes, in-flight requests
// complete and the threads are joined.
//
// Thread-safe: Start/Stop from the owning thread; handlers run on handler (or event-loop)
// threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/http/console_sessions.h"
#include "pulse/adapters/http/metrics_registry.h"
#include "pulse/adapters/http/router.h"
#include "pulse/adapters/http/token_authenticator.h"

namespace pulse::adapters::http {

// What the request hook learns about one finished request. Never credentials, headers,
// bodies or raw paths (ids stay out of logs and label sets).
struct RequestRecord {
  std::string method;
  std::string route;  // the route name, or "unmatched"
  int status = 0;
  absl::Duration duration;  // until the reply was ready; for a stream, until it opened
  bool stream = false;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                          // 0: an ephemeral port
  std::size_t max_body_bytes = 1 << 20;  // larger bodies: 413 request_too_large
  std::size_t max_target_bytes = 2048;   // longer request targets: 414 uri_too_long
  // Each write (a reply, an event-stream chunk) within write_timeout; an idle keep-alive
  // connection closed after keep_alive_timeout, and any after keep_alive_max_requests.
  absl::Duration write_timeout = absl::Seconds(10);
  absl::Duration keep_alive_timeout = absl::Seconds(5);
  std::size_t keep_alive_max_requests = 100;
  // Budgets of open event streams (RouteSpec::stream_budget), and the cap per token over both.
  std::size_t max_subscription_streams = 384;
  std::size_t max_run_streams = 128;
  // Host agents' command streams: one per connected pulse-agent (docs/agent.md).
  std::size_t max_host_agent_streams = 4096;
  std::size_t max_streams_per_token = 32;
  int listen_backlog = 512;
  // The request line and each header line at most this long (longer: 414 for the request
  // line, 431 for a header line); at most max_header_fields fields (more: 431); the whole head
  // at most max_head_bytes (431), and complete within head_deadline of its first byte (408).
  std::size_t max_line_bytes = 8 * 1024;
  std::size_t max_header_fields = 100;
  std::size_t max_head_bytes = 32 * 1024;
  absl::Duration head_deadline = absl::Seconds(10);
  // The whole body within this long of the end of the head (408).
  absl::Duration body_deadline = absl::Seconds(10);
  // Open connections at once, and from one peer address (more: 503, then closed).
  std::size_t max_connections = 16384;
  std::size_t max_connections_per_peer = 16384;
  // Event loops (0: one per core) and threads running handlers that are not answered inline.
  std::size_t io_threads = 0;
  std::size_t handler_threads = 4;
  // Public, non-streaming routes answered on the event loop itself (no hop to a handler
  // thread): they must be cheap and never block.
  std::vector<std::string> inline_routes = {"healthz", "get_capabilities"};
  // GET routes, public or scoped, that the event loop answers itself when it can: the request
  // (authentication included) runs inside a core::NoBlockingScope, and when a call in it
  // refuses to wait (a write, such as recording a token's use; a read that would queue for a
  // pooled connection) what it produced is dropped and the request runs again on a handler
  // thread. That saves the two thread hand-offs of the pool (about half of a small read's
  // time). List only routes whose handlers read memory and the stores: a call that waits without
  // checking the scope would stall every connection on its loop (docs/server.md, "Reads answered
  // on the event loop").
  std::vector<std::string> loop_routes;
  // Inline routes whose reply never changes while the server runs: the transport keeps
  // the first 200 reply to a plain GET (no query, body, Range or credentials) as bytes and
  // answers later ones with them (the bounds, route lookup and request metrics still apply).
  std::vector<std::string> constant_routes = {"get_capabilities"};
  // How long Stop() lets open streams drain before closing the listener anyway.
  absl::Duration stop_grace = absl::Seconds(3);
  // The operator console's sessions (console_sessions.h; nullable borrow, must outlive the
  // server): when set, a request without a token header may authenticate with the session
  // cookie, and one that may change state must pass CheckConsoleCsrf.
  ConsoleSessions* console_sessions = nullptr;
  // Refuse to open while a manifest capability has no handler (Router::CheckComplete).
  bool require_complete_router = true;
  // Called once per request on a handler or event-loop thread, after the reply is decided.
  std::function<void(const RequestRecord&)> on_request;
};

struct HttpServerStats {
  std::size_t threads = 0;       // event loops + handler threads
  std::size_t busy_threads = 0;  // requests in flight
  std::size_t peak_threads = 0;  // = threads (the pools are fixed)
  std::size_t open_streams = 0;
  // loop_routes requests the event loop answered itself, and those it sent on to the handler
  // pool because a call in them refused to wait.
  std::uint64_t loop_answered = 0;
  std::uint64_t loop_refused = 0;
};

class HttpServer final {
 public:
  // Binds the listening socket. `authenticator` is borrowed and must outlive the server;
  // `metrics` (nullable borrow; must outlive the server) receives pulse_http_requests_total,
  // pulse_http_request_duration_seconds, pulse_http_open_streams, pulse_http_workers,
  // pulse_http_stream_slots{budget,state}, pulse_http_stream_refusals_total{budget,reason},
  // pulse_http_connections, pulse_http_connections_refused_total{reason},
  // pulse_http_requests_refused_total{bound} and pulse_http_deadline_expiries_total{phase}.
  // InvalidArgument for inconsistent options; FailedPrecondition when the router is
  // incomplete and require_complete_router is set; AlreadyExists when the registry already has
  // those metrics; Unavailable when the address cannot be bound.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HttpServer>> Open(
      HttpServerOptions options, Router router, TokenAuthenticator& authenticator,
      MetricsRegistry* metrics = nullptr);

  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port.
  int port() const;

  // Starts accepting on the event-loop threads. FailedPrecondition when already started or
  // stopped.
  [[nodiscard]] absl::Status Start();

  // Graceful stop (see above). Idempotent; returns once every thread has been joined.
  void Stop();

  HttpServerStats stats() const;

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pulse::adapters::http
