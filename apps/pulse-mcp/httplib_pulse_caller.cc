#include "httplib_pulse_caller.h"

#include <httplib.h>

#include <exception>
#include <utility>

#include "pulse/core/manifest/capability_manifest.h"

namespace pulse::apps::mcp {

using adapters::mcp::PulseReply;
using adapters::mcp::PulseRequest;

HttplibPulseCaller::HttplibPulseCaller(std::unique_ptr<httplib::Client> client,
                                       std::string prefix, std::string token)
    : client_(std::move(client)), prefix_(std::move(prefix)), token_(std::move(token)) {}

HttplibPulseCaller::~HttplibPulseCaller() = default;

absl::StatusOr<std::unique_ptr<HttplibPulseCaller>> HttplibPulseCaller::Open(
    std::string_view base_url, std::string token, absl::Duration timeout) {
  std::string_view rest = base_url;
  std::string_view scheme;
  for (std::string_view candidate : {std::string_view("http://"), std::string_view("https://")}) {
    if (rest.substr(0, candidate.size()) == candidate) {
      scheme = candidate;
    }
  }
  if (scheme.empty()) {
    return absl::InvalidArgumentError("--server must be an http:// or https:// URL, got \"" +
                                      std::string(base_url) + "\"");
  }
  rest.remove_prefix(scheme.size());
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string prefix(slash == std::string_view::npos ? "" : rest.substr(slash));
  while (!prefix.empty() && prefix.back() == '/') {
    prefix.pop_back();
  }
  if (authority.empty() || authority.find_first_of("?#@ ") != std::string_view::npos ||
      prefix.find_first_of("?# ") != std::string::npos) {
    return absl::InvalidArgumentError("--server must look like http://host:port, got \"" +
                                      std::string(base_url) + "\"");
  }
  try {
    auto client = std::make_unique<httplib::Client>(std::string(scheme) + std::string(authority));
    if (!client->is_valid()) {
      return absl::InvalidArgumentError("--server is not a usable URL: " + std::string(base_url));
    }
    const auto seconds = absl::ToInt64Seconds(timeout);
    client->set_connection_timeout(seconds, 0);
    client->set_read_timeout(seconds, 0);
    client->set_write_timeout(seconds, 0);
    return std::unique_ptr<HttplibPulseCaller>(
        new HttplibPulseCaller(std::move(client), std::move(prefix), std::move(token)));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError("--server: " + std::string(e.what()));
  }
}

absl::StatusOr<PulseReply> HttplibPulseCaller::Send(const PulseRequest& request) {
  httplib::Headers headers = {
      {std::string(kTokenHeader), token_},
      {std::string(kAgentSurfaceHeader), std::string(core::kMcpSurfaceId)},
  };
  const std::string target = prefix_ + request.target;
  const std::string body = request.body_json.value_or("");
  constexpr const char* kJson = "application/json";
  try {
    httplib::Result result{nullptr, httplib::Error::Unknown};
    if (request.method == "GET") {
      result = client_->Get(target, headers);
    } else if (request.method == "DELETE") {
      result = request.body_json ? client_->Delete(target, headers, body, kJson)
                                 : client_->Delete(target, headers);
    } else if (request.method == "POST") {
      result = client_->Post(target, headers, body, kJson);
    } else if (request.method == "PUT") {
      result = client_->Put(target, headers, body, kJson);
    } else if (request.method == "PATCH") {
      result = client_->Patch(target, headers, body, kJson);
    } else {
      return absl::InvalidArgumentError("unsupported HTTP method " + request.method);
    }
    if (!result) {
      return absl::UnavailableError(httplib::to_string(result.error()));
    }
    PulseReply reply;
    reply.status = result->status;
    reply.body = result->body;
    reply.content_type = result->get_header_value("Content-Type");
    return reply;
  } catch (const std::exception& e) {
    return absl::UnavailableError(e.what());
  }
}

}  // namespace pulse::apps::mcp
