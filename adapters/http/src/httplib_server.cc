// HttplibServer: setup, start and graceful stop. The per-request pipeline is in
// request_dispatch.cc.
#include "pulse/adapters/http/httplib_server.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "pulse/core/status_macros.h"
#include "server_impl.h"

namespace pulse::adapters::http {
namespace internal {
namespace {

std::pair<time_t, time_t> SecondsAndMicros(absl::Duration d) {
  const std::int64_t micros = absl::ToInt64Microseconds(d);
  return {static_cast<time_t>(micros / 1'000'000), static_cast<time_t>(micros % 1'000'000)};
}

}  // namespace

absl::Status HttplibTransport::Configure(MetricsRegistry* metrics) {
  PULSE_RETURN_IF_ERROR(pipeline_.ConfigureMetrics(metrics));
  if (metrics != nullptr) {
    PULSE_ASSIGN_OR_RETURN(workers_, metrics->AddGauge("pulse_http_workers",
                                                       "HTTP worker threads by state.", {"state"}));
  }
  const auto [read_s, read_us] = SecondsAndMicros(options_.read_timeout);
  const auto [write_s, write_us] = SecondsAndMicros(options_.write_timeout);
  svr_.set_read_timeout(read_s, read_us);
  svr_.set_write_timeout(write_s, write_us);
  svr_.set_keep_alive_timeout(
      std::max<time_t>(1, static_cast<time_t>(absl::ToInt64Seconds(options_.keep_alive_timeout))));
  svr_.set_keep_alive_max_count(std::max<std::size_t>(1, options_.keep_alive_max_requests));
  svr_.set_payload_max_length(options_.max_body_bytes);
  svr_.set_tcp_nodelay(true);
  // SO_REUSEADDR only: cpp-httplib's default sets SO_REUSEPORT, which would let a second
  // server bind the same port silently.
  svr_.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  const std::size_t min_threads = options_.min_threads;
  const std::size_t max_threads = options_.max_threads;
  const auto idle =
      std::chrono::milliseconds(absl::ToInt64Milliseconds(options_.idle_thread_timeout));
  std::shared_ptr<PoolGauges> gauges = gauges_;
  svr_.new_task_queue = [min_threads, max_threads, idle, gauges] {
    return new ElasticThreadPool(min_threads, max_threads, idle, gauges);
  };
  InstallHandlers();
  port_ = options_.port == 0
              ? svr_.bind_to_any_port(options_.host)
              : (svr_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options_.host, ":", options_.port));
  }
  if (!svr_.RaiseBacklog(options_.listen_backlog)) {
    svr_.CloseListener();
    return absl::UnavailableError("cannot set the listen backlog");
  }
  return absl::OkStatus();
}

void HttplibTransport::InstallHandlers() {
  svr_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (ExpectsContent(req.method) && req.target.size() <= options_.max_target_bytes) {
      // Bodies are read by the content-reader handlers below, after routing and auth. (The
      // target bound also bounds the regex match cpp-httplib runs on the path first.)
      return httplib::Server::HandlerResponse::Unhandled;
    }
    Dispatch(req, res, nullptr);
    return httplib::Server::HandlerResponse::Handled;
  });
  auto with_body = [this](const httplib::Request& req, httplib::Response& res,
                          const httplib::ContentReader& reader) { Dispatch(req, res, &reader); };
  // "[\s\S]*", not ".*": the path cpp-httplib matches is already decoded, and "." would not
  // match an encoded line break, sending such a request past our handler.
  const std::string any_path = "[\\s\\S]*";
  svr_.Post(any_path, with_body);
  svr_.Put(any_path, with_body);
  svr_.Patch(any_path, with_body);
  svr_.Delete(any_path, with_body);
  svr_.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                     httplib::Response& res) {
    if (!res.body.empty() || res.content_provider_) {
      return httplib::Server::HandlerResponse::Unhandled;  // our own reply
    }
    // cpp-httplib refused the request itself (malformed, too long, ...): same envelope.
    const HttpReply reply = TransportRefusal(res.status);
    res.set_content(reply.body, reply.content_type);
    Record(req.method.empty() ? "-" : req.method, std::string(kUnmatched), res.status, {}, false);
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr_.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, const std::exception_ptr&) {
        res.status = 500;
        res.set_content(
            core::MakeAgentError(core::AgentErrorCode::kInternalError, "internal error").ToJson(),
            "application/json");
      });
}

absl::Status HttplibTransport::Start() {
  absl::MutexLock lock(&state_mu_);
  if (state_ != State::kBound) {
    return absl::FailedPreconditionError("the server was started or stopped already");
  }
  state_ = State::kRunning;
  listener_ = std::thread([this] { svr_.listen_after_bind(); });
  return absl::OkStatus();
}

void HttplibTransport::Stop() {
  {
    absl::MutexLock lock(&state_mu_);
    if (state_ == State::kStopped) {
      return;
    }
    state_ = State::kStopped;
  }
  // Streams first, while the listener is open: each drains and ends its response cleanly.
  pipeline_.ShutdownStreams();
  // Then no new connections; the accept loop ends and shuts the pool down, which waits for
  // the requests in flight (an idle keep-alive connection ends within keep_alive_timeout).
  svr_.CloseListener();
  if (listener_.joinable()) {
    listener_.join();
  }
}

HttpServerStats HttplibTransport::Stats() const {
  HttpServerStats stats;
  stats.threads = gauges_->threads.load();
  stats.busy_threads = gauges_->busy.load();
  stats.peak_threads = gauges_->peak.load();
  stats.open_streams = pipeline_.open_streams();
  return stats;
}

void HttplibTransport::Record(const std::string& method, const std::string& route, int status,
                              std::chrono::steady_clock::duration elapsed, bool stream) {
  pipeline_.Record(method, route, status, elapsed, stream);
  if (workers_ != nullptr) {
    workers_->Set({"live"}, static_cast<double>(gauges_->threads.load()));
    workers_->Set({"busy"}, static_cast<double>(gauges_->busy.load()));
  }
}

}  // namespace internal

// ---- HttplibServer ----

absl::StatusOr<std::unique_ptr<HttplibServer>> HttplibServer::Open(
    HttpServerOptions options, Router router, TokenAuthenticator& authenticator,
    MetricsRegistry* metrics) {
  const bool httplib = options.transport == HttpTransport::kHttplib;
  if (options.max_subscription_streams == 0 || options.max_run_streams == 0 ||
      options.max_streams_per_token == 0 || options.max_body_bytes == 0 ||
      options.max_target_bytes < 16 || options.listen_backlog <= 0 ||
      options.read_timeout <= absl::ZeroDuration() ||
      options.write_timeout <= absl::ZeroDuration() ||
      (httplib &&
       (options.min_threads == 0 || options.max_threads < options.min_threads ||
        options.max_subscription_streams + options.max_run_streams + options.min_threads >
            options.max_threads))) {
    return absl::InvalidArgumentError(
        "inconsistent server options: need 0 < min_threads, positive stream budgets and "
        "per-token cap, both stream budgets + min_threads <= max_threads, a positive body "
        "limit, backlog and timeouts");
  }
  if (options.require_complete_router) {
    PULSE_RETURN_IF_ERROR(router.CheckComplete());
  }
  if (!httplib) {
    PULSE_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl,
                           internal::OpenBeastTransport(std::move(options), std::move(router),
                                                        authenticator, metrics));
    return std::unique_ptr<HttplibServer>(new HttplibServer(std::move(impl)));
  }
  auto impl = std::make_unique<internal::HttplibTransport>(std::move(options), std::move(router),
                                                           authenticator);
  PULSE_RETURN_IF_ERROR(impl->Configure(metrics));
  return std::unique_ptr<HttplibServer>(new HttplibServer(std::move(impl)));
}

HttplibServer::HttplibServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttplibServer::~HttplibServer() {
  if (impl_ != nullptr) {
    impl_->Stop();
  }
}

int HttplibServer::port() const { return impl_->port(); }

absl::Status HttplibServer::Start() { return impl_->Start(); }

void HttplibServer::Stop() { impl_->Stop(); }

HttpServerStats HttplibServer::stats() const { return impl_->Stats(); }

}  // namespace pulse::adapters::http
