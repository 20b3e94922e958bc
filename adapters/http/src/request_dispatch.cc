// The per-request pipeline of HttplibServer: shape checks, route, authentication and scope,
// path parameters, query, body, handler, then the reply (or the event stream) and the
// request record. Every refusal is an agent envelope.
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/core/manifest/path_template.h"
#include "server_impl.h"

namespace pulse::adapters::http {

using core::AgentErrorCode;
using internal::BodyFraming;
using internal::Outcome;

void HttplibServer::Impl::Dispatch(const httplib::Request& req, httplib::Response& res,
                                   const httplib::ContentReader* reader) {
  const auto start = std::chrono::steady_clock::now();
  const BodyFraming framing = internal::ExamineFraming(req);
  bool body_consumed = false;
  Outcome outcome = Decide(req, reader, framing, body_consumed);
  if (!body_consumed) {
    SettleUnreadBody(req, reader, framing, outcome);
  }
  const bool stream = outcome.reply.stream != nullptr;
  Apply(outcome, res);
  Record(req.method, outcome.route, res.status, std::chrono::steady_clock::now() - start,
         stream && res.status == 200);
}

Outcome HttplibServer::Impl::Decide(const httplib::Request& req,
                                    const httplib::ContentReader* reader,
                                    const BodyFraming& framing, bool& body_consumed) {
  Outcome out;
  if (std::optional<HttpReply> refused = CheckRequestShape(req, reader, framing)) {
    out.reply = *std::move(refused);
    return out;
  }
  if (framing.kind != BodyFraming::Kind::kNone && !internal::IsJsonContentType(req)) {
    // Refused from the headers, before anything reads the body (cpp-httplib would parse a
    // multipart body itself, into callbacks we never give it), and the connection is closed:
    // the unread bytes must never be taken for the next request.
    out.reply = HttpReply::Error(AgentErrorCode::kUnsupportedMediaType,
                                 "a request body must be application/json");
    out.close_connection = true;
    return out;
  }
  const auto [raw_path, raw_query] = internal::SplitTarget(req.target);
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
          req, reader, framing, route, std::move(lookup.params), request, out, body_consumed)) {
    out.reply = *std::move(refused);
    return out;
  }
  if (route.spec.streaming) {
    if (std::optional<HttpReply> refused = TakeStreamSlot(route, request.principal, out)) {
      out.reply = *std::move(refused);
      return out;
    }
  }
  request.headers = internal::HandlerHeaders(req);
  try {
    out.reply = route.handler(request);
  } catch (...) {
    // A handler that lets an exception escape is a bug; the client gets no detail of it.
    out.reply = HttpReply::Error(AgentErrorCode::kInternalError, "internal error");
  }
  return out;
}

std::optional<HttpReply> HttplibServer::Impl::CheckRequestShape(
    const httplib::Request& req, const httplib::ContentReader* reader,
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
  if (reader == nullptr && framing.kind != BodyFraming::Kind::kNone) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            absl::StrCat("a ", req.method, " request may not carry a body"));
  }
  if (req.has_header("Range")) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, "range requests are not supported");
  }
  return std::nullopt;
}

std::optional<HttpReply> HttplibServer::Impl::Authorize(const httplib::Request& req,
                                                        const BoundRoute& route,
                                                        Principal& principal) const {
  if (!route.spec.scope.has_value()) {
    return std::nullopt;  // a public route: credentials, if any, are ignored
  }
  absl::StatusOr<Principal> authenticated =
      authenticator_.Authenticate(internal::HeaderValues(req, std::string(kApiTokenHeader)),
                                  internal::HeaderValues(req, std::string(kAuthorizationHeader)));
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

std::optional<HttpReply> HttplibServer::Impl::ReadInputs(const httplib::Request& req,
                                                         const httplib::ContentReader* reader,
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
  absl::StatusOr<QueryParams> query =
      internal::ParseQuery(internal::SplitTarget(req.target).second);
  if (!query.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, std::string(query.status().message()));
  }
  if (std::optional<core::AgentError> refused = route.query_validator->Validate(
          *query, route.spec.query_error_code, route.spec.query_param_codes)) {
    return HttpReply::Error(*refused);
  }
  request.query = *std::move(query);
  if (reader != nullptr) {
    body_consumed = true;
    HttpReply error;
    if (!ReadBody(*reader, framing, request.body, error)) {
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

bool HttplibServer::Impl::ReadBody(const httplib::ContentReader& reader, const BodyFraming& framing,
                                   std::string& body, HttpReply& error) const {
  const std::size_t limit = options_.max_body_bytes;
  if (framing.kind == BodyFraming::Kind::kNone) {
    return true;  // no Content-Length and not chunked: no body (never read to EOF)
  }
  const HttpReply too_large =
      HttpReply::Error(AgentErrorCode::kRequestTooLarge,
                       absl::StrCat("the request body is larger than ", limit, " bytes"));
  if (framing.kind == BodyFraming::Kind::kLength && framing.length > limit) {
    error = too_large;
    return false;
  }
  bool over = false;
  const bool ok = reader([&](const char* data, std::size_t length) {
    if (body.size() + length > limit) {
      over = true;
      return false;
    }
    body.append(data, length);
    return true;
  });
  if (over || !ok) {
    error = over ? too_large
                 : HttpReply::Error(AgentErrorCode::kInvalidRequest,
                                    "the request body could not be read");
    return false;
  }
  return true;
}

void HttplibServer::Impl::SettleUnreadBody(const httplib::Request& req,
                                           const httplib::ContentReader* reader,
                                           const BodyFraming& framing, Outcome& outcome) const {
  if (framing.kind == BodyFraming::Kind::kNone) {
    return;
  }
  if (outcome.close_connection || !internal::IsJsonContentType(req)) {
    // Never drained: cpp-httplib's reader parses a multipart body itself (and fails on it).
    outcome.close_connection = true;
    return;
  }
  const bool small_enough =
      framing.kind == BodyFraming::Kind::kChunked ||
      (framing.kind == BodyFraming::Kind::kLength && framing.length <= options_.max_body_bytes);
  if (reader == nullptr || !small_enough) {
    outcome.close_connection = true;
    return;
  }
  std::size_t seen = 0;
  const std::size_t limit = options_.max_body_bytes;
  const bool drained = (*reader)([&](const char*, std::size_t length) {
    seen += length;
    return seen <= limit;
  });
  if (!drained) {
    outcome.close_connection = true;
  }
}

void HttplibServer::Impl::Apply(Outcome& outcome, httplib::Response& res) {
  HttpReply& reply = outcome.reply;
  if (reply.stream != nullptr) {
    std::shared_ptr<SseStream> stream = reply.stream;
    if (!outcome.slot.held()) {
      // Only a route declared streaming may stream: it took its slot before the handler ran.
      stream->Abort();
      reply = HttpReply::Error(AgentErrorCode::kInternalError, "internal error");
    } else if (RegisterStream(stream)) {
      AttachStream(stream, reply, res, std::move(outcome.slot));
      return;
    } else {
      stream->Abort();  // releases the producer
      reply = HttpReply::Error(AgentErrorCode::kServiceUnavailable,
                               "the server is shutting down; retry later");
      reply.headers.emplace_back("Retry-After", "1");
    }
  }
  res.status = reply.status;
  for (const auto& [name, value] : reply.headers) {
    if (internal::IsSafeHeader(name, value)) {
      res.set_header(name, value);
    }
  }
  res.set_header("X-Content-Type-Options", "nosniff");
  if (outcome.close_connection) {
    res.set_header("Connection", "close");
    if (!reply.body.empty()) {
      // cpp-httplib 0.11 keeps reading the connection whatever the response's Connection header
      // says. A body provider that reports failure once the whole body is written ends that
      // keep-alive loop, so the unread request body is never parsed as the next request.
      auto body = std::make_shared<const std::string>(std::move(reply.body));
      res.set_content_provider(
          body->size(), reply.content_type,
          [body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
            sink.write(body->data() + offset, length);
            return false;
          });
    }
    return;
  }
  if (!reply.body.empty()) {
    res.set_content(reply.body, reply.content_type);
  }
}

std::optional<HttpReply> HttplibServer::Impl::TakeStreamSlot(const BoundRoute& route,
                                                             const Principal& principal,
                                                             Outcome& out) {
  internal::StreamSlots::Taken taken = slots_.Acquire(route.spec.stream_budget, principal.token_id);
  if (!taken.refusal.has_value()) {
    out.slot = std::move(taken.slot);
    return std::nullopt;
  }
  HttpReply reply = HttpReply::Error(slots_.RefusalError(route.spec.stream_budget, *taken.refusal));
  if (*taken.refusal == internal::StreamSlots::Refusal::kBudget) {
    reply.headers.emplace_back("Retry-After", "1");
  }
  return reply;
}

void HttplibServer::Impl::AttachStream(const std::shared_ptr<SseStream>& stream,
                                       const HttpReply& reply, httplib::Response& res,
                                       internal::StreamSlot slot) {
  res.status = 200;
  for (const auto& [name, value] : reply.headers) {
    if (internal::IsSafeHeader(name, value)) {
      res.set_header(name, value);
    }
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_chunked_content_provider(
      "text/event-stream",
      [stream](std::size_t, httplib::DataSink& sink) {
        std::string chunk;
        switch (stream->Next(chunk)) {
          case SseStream::Pull::kWrite:
            if (!sink.write(chunk.data(), chunk.size())) {
              stream->Abort();  // the client went away
              return false;
            }
            return true;
          case SseStream::Pull::kEnd:
            sink.done();
            return true;
          case SseStream::Pull::kAbort:
            return false;
        }
        return false;
      },
      [this, stream, held = std::make_shared<internal::StreamSlot>(std::move(slot))](bool success) {
        stream->MarkFinished(success);
        UnregisterStream(stream.get());
        held->Release();
      });
}

bool HttplibServer::Impl::RegisterStream(const std::shared_ptr<SseStream>& stream) {
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

void HttplibServer::Impl::UnregisterStream(const SseStream* stream) {
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

void HttplibServer::Impl::Record(const std::string& method, const std::string& route, int status,
                                 std::chrono::steady_clock::duration elapsed, bool stream) {
  const absl::Duration duration = absl::FromChrono(elapsed);
  if (requests_ != nullptr) {
    requests_->Increment({method, route, absl::StrCat(status)});
    latency_->Observe({method, route}, absl::ToDoubleSeconds(duration));
    workers_->Set({"live"}, static_cast<double>(gauges_->threads.load()));
    workers_->Set({"busy"}, static_cast<double>(gauges_->busy.load()));
  }
  if (options_.on_request) {
    options_.on_request(RequestRecord{method, route, status, duration, stream});
  }
}

}  // namespace pulse::adapters::http
