#include "pulse/adapters/http/http_types.h"

#include <utility>

#include "absl/strings/match.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::http {

std::string_view HttpRequest::Header(std::string_view header_name) const {
  for (const auto& [name, value] : headers) {
    if (absl::EqualsIgnoreCase(name, core::ToAbsl(header_name))) {
      return value;
    }
  }
  return {};
}

std::optional<std::string_view> HttpRequest::Query(std::string_view name) const {
  auto it = query.lower_bound(std::string(name));  // the first value in request order
  if (it == query.end() || it->first != name) {
    return std::nullopt;
  }
  return std::string_view(it->second);
}

HttpReply HttpReply::Json(std::string json, int status) {
  HttpReply reply;
  reply.status = status;
  reply.body = std::move(json);
  return reply;
}

HttpReply HttpReply::Text(std::string text, std::string content_type, int status) {
  HttpReply reply;
  reply.status = status;
  reply.content_type = std::move(content_type);
  reply.body = std::move(text);
  return reply;
}

HttpReply HttpReply::NoContent() {
  HttpReply reply;
  reply.status = 204;
  return reply;
}

HttpReply HttpReply::Error(const core::AgentError& error) {
  return Json(error.ToJson(), core::HttpStatusFor(error.code));
}

HttpReply HttpReply::Error(core::AgentErrorCode code, std::string message) {
  return Error(core::MakeAgentError(code, std::move(message)));
}

HttpReply HttpReply::EventStream(std::shared_ptr<SseStream> stream) {
  HttpReply reply;
  reply.content_type = "text/event-stream";
  reply.stream = std::move(stream);
  return reply;
}

}  // namespace pulse::adapters::http
