// The transport-neutral request pipeline (request_pipeline.h): every refusal is an agent
// envelope; the order of the checks is the contract docs/api.md describes.
#include "request_pipeline.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/status_macros.h"

namespace pulse::adapters::http::internal {

using core::AgentErrorCode;

HttpReply TransportRefusal(int status, std::string_view message) {
  AgentErrorCode code =
      status >= 500 ? AgentErrorCode::kInternalError : AgentErrorCode::kInvalidRequest;
  std::string_view text = status >= 500 ? "internal error" : "the request is malformed";
  switch (status) {
    case 404:
      code = AgentErrorCode::kRouteNotFound;
      text = "no route has this path";
      break;
    case 405:
      code = AgentErrorCode::kMethodNotAllowed;
      text = "the method is not allowed";
      break;
    case 408:
      code = AgentErrorCode::kRequestTimeout;
      text = "the request did not arrive in time";
      break;
    case 413:
      code = AgentErrorCode::kRequestTooLarge;
      text = "the request body is too large";
      break;
    case 414:
      code = AgentErrorCode::kUriTooLong;
      text = "the request target is too long";
      break;
    case 415:
      code = AgentErrorCode::kUnsupportedMediaType;
      text = "a request body must be application/json";
      break;
    case 431:
      code = AgentErrorCode::kRequestHeaderTooLarge;
      text = "the request head is too large";
      break;
    case 503:
      code = AgentErrorCode::kServiceUnavailable;
      text = "the server is busy; retry later";
      break;
    default:
      break;
  }
  HttpReply reply = HttpReply::Error(code, std::string(message.empty() ? text : message));
  AddSecurityHeaders(reply);
  return reply;
}

RequestPipeline::RequestPipeline(const HttpServerOptions& options, Router router,
                                 TokenAuthenticator& authenticator)
    : options_(options),
      router_(std::move(router)),
      authenticator_(authenticator),
      slots_(StreamSlotLimits{options_.max_subscription_streams, options_.max_run_streams,
                              options_.max_streams_per_token, options_.max_host_agent_streams}) {}

absl::Status RequestPipeline::ConfigureMetrics(MetricsRegistry* metrics) {
  if (metrics == nullptr) {
    return absl::OkStatus();
  }
  PULSE_ASSIGN_OR_RETURN(
      requests_,
      metrics->AddCounter("pulse_http_requests_total", "HTTP requests by method, route and status.",
                          {"method", "route", "status"}));
  PULSE_ASSIGN_OR_RETURN(
      latency_, metrics->AddHistogram("pulse_http_request_duration_seconds",
                                      "Time until the reply was ready (for streams: opened).",
                                      {"method", "route"}, DefaultLatencyBuckets()));
  PULSE_ASSIGN_OR_RETURN(
      open_streams_, metrics->AddGauge("pulse_http_open_streams", "Event streams open now.", {}));
  PULSE_ASSIGN_OR_RETURN(
      GaugeFamily * slots,
      metrics->AddGauge("pulse_http_stream_slots",
                        "Event stream slots by budget (subscriptions, runs): in use and max.",
                        {"budget", "state"}));
  PULSE_ASSIGN_OR_RETURN(
      CounterFamily * refusals,
      metrics->AddCounter("pulse_http_stream_refusals_total",
                          "Streams refused by budget and reason (per_token cap, budget full).",
                          {"budget", "reason"}));
  PULSE_ASSIGN_OR_RETURN(GaugeFamily * per_token,
                         metrics->AddGauge("pulse_http_stream_slots_per_token",
                                           "The cap of open streams per token.", {}));
  per_token->Set({}, static_cast<double>(options_.max_streams_per_token));
  slots_.SetMetrics(slots, refusals);
  return absl::OkStatus();
}

Outcome RequestPipeline::Decide(const RawRequest& req, BodySource* body, const BodyFraming& framing,
                                bool& body_consumed) {
  Outcome out = DecideRoute(req, body, framing, body_consumed);
  AddSecurityHeaders(out.reply);
  return out;
}

Outcome RequestPipeline::DecideRoute(const RawRequest& req, BodySource* body,
                                     const BodyFraming& framing, bool& body_consumed) {
  Outcome out;
  if (std::optional<HttpReply> refused = CheckRequestShape(req, body, framing)) {
    out.reply = *std::move(refused);
    return out;
  }
  if (framing.kind != BodyFraming::Kind::kNone && !IsJsonContentType(req)) {
    // Refused from the headers, before anything reads the body, and the connection is
    // closed: the unread bytes must never be taken for the next request.
    out.reply = HttpReply::Error(AgentErrorCode::kUnsupportedMediaType,
                                 "a request body must be application/json");
    out.close_connection = true;
    return out;
  }
  const auto [raw_path, raw_query] = SplitTarget(req.target);
  RouteLookup lookup = router_.Lookup(req.method, raw_path);
  switch (lookup.kind) {
    case RouteLookup::Kind::kBadPath:
      out.reply =
          HttpReply::Error(AgentErrorCode::kInvalidRequest, "the request path is not well-formed");
      return out;
    case RouteLookup::Kind::kNotFound:
      out.reply = HttpReply::Error(AgentErrorCode::kRouteNotFound, "no route has this path");
      return out;
    case RouteLookup::Kind::kMethodNotAllowed:
      out.reply = HttpReply::Error(AgentErrorCode::kMethodNotAllowed,
                                   absl::StrCat("this path does not accept ", req.method));
      out.reply.headers.emplace_back("Allow", absl::StrJoin(lookup.allowed, ", "));
      return out;
    case RouteLookup::Kind::kFound:
      break;
  }
  const BoundRoute& route = *lookup.route;
  out.route = route.spec.name;
  HttpRequest request;
  request.method = req.method;
  request.route = &route.spec;
  if (std::optional<HttpReply> refused = Authorize(req, route, request.principal)) {
    out.reply = *std::move(refused);
    return out;
  }
  if (std::optional<HttpReply> refused = ReadInputs(
          req, body, framing, route, std::move(lookup.params), request, out, body_consumed)) {
    out.reply = *std::move(refused);
    return out;
  }
  if (route.spec.streaming) {
    if (std::optional<HttpReply> refused = TakeStreamSlot(route, request.principal, out)) {
      out.reply = *std::move(refused);
      return out;
    }
  }
  request.headers = HandlerHeaders(req);
  try {
    out.reply = route.handler(request);
  } catch (...) {
    // A handler that lets an exception escape is a bug; the client gets no detail of it.
    out.reply = HttpReply::Error(AgentErrorCode::kInternalError, "internal error");
  }
  return out;
}

std::optional<HttpReply> RequestPipeline::CheckRequestShape(const RawRequest& req,
                                                            const BodySource* body,
                                                            const BodyFraming& framing) const {
  if (framing.kind == BodyFraming::Kind::kInvalid) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            "the body framing headers are malformed");
  }
  if (req.target.size() > options_.max_target_bytes) {
    return HttpReply::Error(
        AgentErrorCode::kUriTooLong,
        absl::StrCat("the request target is longer than ", options_.max_target_bytes, " bytes"));
  }
  if (body == nullptr && framing.kind != BodyFraming::Kind::kNone) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            absl::StrCat("a ", req.method, " request may not carry a body"));
  }
  if (req.HasHeader("Range")) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, "range requests are not supported");
  }
  return std::nullopt;
}

std::optional<HttpReply> RequestPipeline::Authorize(const RawRequest& req, const BoundRoute& route,
                                                    Principal& principal) const {
  if (!route.spec.scope.has_value()) {
    return std::nullopt;  // a public route: credentials, if any, are ignored
  }
  std::vector<std::string> api_tokens = HeaderValues(req, kApiTokenHeader);
  std::vector<std::string> authorizations = HeaderValues(req, kAuthorizationHeader);
  if (api_tokens.empty() && authorizations.empty() && options_.console_sessions != nullptr) {
    if (std::optional<std::string> cookie = ConsoleCookieValue(HeaderValues(req, "Cookie"))) {
      return AuthorizeConsole(req, route, *cookie, principal);
    }
  }
  absl::StatusOr<Principal> authenticated = authenticator_.Authenticate(api_tokens, authorizations);
  if (!authenticated.ok()) {
    HttpReply reply = HttpReply::Error(AuthenticationError(authenticated.status()));
    if (reply.status == 401) {
      reply.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"pulse\"");
    }
    return reply;
  }
  if (std::optional<core::AgentError> denied = RequireScope(*authenticated, *route.spec.scope)) {
    return HttpReply::Error(*denied);
  }
  principal = *std::move(authenticated);
  return std::nullopt;
}

std::optional<HttpReply> RequestPipeline::AuthorizeConsole(const RawRequest& req,
                                                           const BoundRoute& route,
                                                           const std::string& cookie,
                                                           Principal& principal) const {
  absl::StatusOr<ConsoleSession> session = options_.console_sessions->Resolve(cookie);
  if (!session.ok()) {
    if (absl::IsUnavailable(session.status())) {
      return HttpReply::Error(AuthenticationError(session.status()));
    }
    // No WWW-Authenticate: the browser must not answer with a login dialog.
    return HttpReply::Error(AgentErrorCode::kUnauthorized,
                            "the console session has ended: sign in again");
  }
  if (!IsSafeMethod(req.method)) {
    if (std::optional<core::AgentError> refused = CheckConsoleCsrf(
            HeaderValues(req, kCsrfHeader), HeaderValues(req, "Origin"), HeaderValues(req, "Host"),
            HeaderValues(req, "Sec-Fetch-Site"), session->csrf_token)) {
      return HttpReply::Error(*refused);
    }
  }
  if (std::optional<core::AgentError> denied =
          RequireScope(session->principal, *route.spec.scope)) {
    return HttpReply::Error(*denied);
  }
  principal = std::move(session->principal);
  return std::nullopt;
}

std::optional<HttpReply> RequestPipeline::ReadInputs(const RawRequest& req, BodySource* body,
                                                     const BodyFraming& framing,
                                                     const BoundRoute& route, PathParams params,
                                                     HttpRequest& request, Outcome& out,
                                                     bool& body_consumed) {
  for (const auto& [name, value] : params) {
    if (const absl::Status checked = core::CheckPathParam(name, value); !checked.ok()) {
      return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                              absl::StrCat("path parameter ", name, ": ", checked.message()));
    }
  }
  request.path_params = std::move(params);
  absl::StatusOr<QueryParams> query = ParseQuery(SplitTarget(req.target).second);
  if (!query.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, std::string(query.status().message()));
  }
  if (std::optional<core::AgentError> refused = route.query_validator->Validate(
          *query, route.spec.query_error_code, route.spec.query_param_codes)) {
    return HttpReply::Error(*refused);
  }
  request.query = *std::move(query);
  if (body != nullptr) {
    body_consumed = true;
    HttpReply error;
    if (!body->Read(framing, options_.max_body_bytes, request.body, error)) {
      out.close_connection = true;
      return error;
    }
  }
  if (route.body_validator != nullptr) {
    if (std::optional<core::AgentError> refused = route.body_validator->Validate(
            request.body, route.spec.body_error_code, request.path_params)) {
      return HttpReply::Error(*refused);
    }
  }
  return std::nullopt;
}

std::optional<HttpReply> RequestPipeline::TakeStreamSlot(const BoundRoute& route,
                                                         const Principal& principal, Outcome& out) {
  StreamSlots::Taken taken = slots_.Acquire(route.spec.stream_budget, principal.token_id);
  if (!taken.refusal.has_value()) {
    out.slot = std::move(taken.slot);
    return std::nullopt;
  }
  HttpReply reply = HttpReply::Error(slots_.RefusalError(route.spec.stream_budget, *taken.refusal));
  if (*taken.refusal == StreamSlots::Refusal::kBudget) {
    reply.headers.emplace_back("Retry-After", "1");
  }
  return reply;
}

bool RequestPipeline::AdmitStream(Outcome& outcome) {
  HttpReply& reply = outcome.reply;
  if (reply.stream == nullptr) {
    return true;
  }
  std::shared_ptr<SseStream> stream = reply.stream;
  if (!outcome.slot.held()) {
    // Only a route declared streaming may stream: it took its slot before the handler ran.
    stream->Abort();
    reply = HttpReply::Error(AgentErrorCode::kInternalError, "internal error");
    return false;
  }
  if (!RegisterStream(stream)) {
    stream->Abort();  // releases the producer
    reply = HttpReply::Error(AgentErrorCode::kServiceUnavailable,
                             "the server is shutting down; retry later");
    reply.headers.emplace_back("Retry-After", "1");
    outcome.slot.Release();
    return false;
  }
  return true;
}

bool RequestPipeline::RegisterStream(const std::shared_ptr<SseStream>& stream) {
  std::size_t open = 0;
  {
    absl::MutexLock lock(&streams_mu_);
    if (stopping_) {
      return false;
    }
    streams_.emplace(stream.get(), stream);
    open = streams_.size();
  }
  if (open_streams_ != nullptr) {
    open_streams_->Set({}, static_cast<double>(open));
  }
  return true;
}

void RequestPipeline::UnregisterStream(const SseStream* stream) {
  std::size_t open = 0;
  {
    absl::MutexLock lock(&streams_mu_);
    streams_.erase(stream);
    open = streams_.size();
  }
  streams_cv_.SignalAll();
  if (open_streams_ != nullptr) {
    open_streams_->Set({}, static_cast<double>(open));
  }
}

void RequestPipeline::ShutdownStreams() {
  absl::MutexLock lock(&streams_mu_);
  stopping_ = true;
  for (auto& [key, weak] : streams_) {
    if (std::shared_ptr<SseStream> stream = weak.lock()) {
      stream->Shutdown();
    }
  }
  const absl::Time deadline = absl::Now() + options_.stop_grace;
  while (!streams_.empty() && !streams_cv_.WaitWithDeadline(&streams_mu_, deadline)) {
  }
}

std::size_t RequestPipeline::open_streams() const {
  absl::MutexLock lock(&streams_mu_);
  return streams_.size();
}

void RequestPipeline::Record(const std::string& method, const std::string& route, int status,
                             std::chrono::steady_clock::duration elapsed, bool stream) {
  const absl::Duration duration = absl::FromChrono(elapsed);
  if (requests_ != nullptr) {
    requests_->Increment({method, route, absl::StrCat(status)});
    latency_->Observe({method, route}, absl::ToDoubleSeconds(duration));
  }
  if (options_.on_request) {
    options_.on_request(RequestRecord{method, route, status, duration, stream});
  }
}

}  // namespace pulse::adapters::http::internal
