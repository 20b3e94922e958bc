#include "client.h"

#include <httplib.h>

#include <exception>
#include <utility>

namespace pulse::cli {
namespace {

absl::Status TransportError(httplib::Error error) {
  const std::string text = httplib::to_string(error);
  switch (error) {
    case httplib::Error::ConnectionTimeout:
      return absl::DeadlineExceededError("connection timed out");
    case httplib::Error::Read:
      return absl::UnavailableError("reading the reply failed or timed out (" + text + ")");
    case httplib::Error::Canceled:
      return absl::CancelledError("request cancelled");
    case httplib::Error::Connection:
      return absl::UnavailableError("connection failed (refused, unreachable or unknown host)");
    case httplib::Error::Write:
      return absl::UnavailableError("the connection broke while sending the request");
    default:
      return absl::UnavailableError(text);
  }
}

}  // namespace

PulseClient::PulseClient(ClientOptions options, std::unique_ptr<httplib::Client> client,
                         std::string prefix)
    : options_(std::move(options)), client_(std::move(client)), prefix_(std::move(prefix)) {}

PulseClient::~PulseClient() = default;

absl::StatusOr<std::unique_ptr<PulseClient>> PulseClient::Open(ClientOptions options) {
  const std::string& url = options.base_url;
  std::string_view rest = url;
  std::string_view scheme;
  for (std::string_view candidate : {std::string_view("http://"), std::string_view("https://")}) {
    if (rest.substr(0, candidate.size()) == candidate) {
      scheme = candidate;
    }
  }
  if (scheme.empty()) {
    return absl::InvalidArgumentError("--server must be an http:// or https:// URL, got \"" +
                                      url + "\"");
  }
  rest.remove_prefix(scheme.size());
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string prefix(slash == std::string_view::npos ? "" : rest.substr(slash));
  while (!prefix.empty() && prefix.back() == '/') {
    prefix.pop_back();
  }
  const auto bad_char = [](std::string_view s, std::string_view set) {
    for (char c : s) {
      if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7F ||
          set.find(c) != std::string_view::npos) {
        return true;
      }
    }
    return false;
  };
  if (authority.empty() || bad_char(authority, "?#@/\\") || bad_char(prefix, "?#\\")) {
    return absl::InvalidArgumentError("--server must look like http://host:port, got \"" + url +
                                      "\"");
  }
  try {
    auto client = std::make_unique<httplib::Client>(std::string(scheme) + std::string(authority));
    if (!client->is_valid()) {
      return absl::InvalidArgumentError("--server is not a usable URL: " + url);
    }
    const auto seconds = absl::ToInt64Seconds(options.timeout);
    const auto micros = absl::ToInt64Microseconds(options.timeout) % 1000000;
    client->set_connection_timeout(seconds, micros);
    client->set_read_timeout(seconds, micros);
    client->set_write_timeout(seconds, micros);
    client->set_keep_alive(false);
    client->set_follow_location(false);
    return std::unique_ptr<PulseClient>(
        new PulseClient(std::move(options), std::move(client), std::move(prefix)));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError("--server: " + std::string(e.what()));
  }
}

absl::StatusOr<HttpResult> PulseClient::Send(std::string_view method, std::string_view target,
                                             const std::optional<std::string>& json_body) {
  return Stream(method, target, json_body, {});
}

absl::StatusOr<HttpResult> PulseClient::Stream(
    std::string_view method, std::string_view target,
    const std::optional<std::string>& json_body,
    const std::function<bool(std::string_view)>& on_bytes) {
  if (stopped_.load()) {
    return absl::CancelledError("request cancelled");
  }
  HttpResult result;
  bool streaming = false;
  bool too_large = false;
  httplib::Request req;
  req.method = std::string(method);
  req.path = prefix_ + std::string(target);
  req.headers.emplace("Accept", on_bytes ? "text/event-stream, application/json"
                                         : "application/json");
  if (!options_.token.empty()) {
    req.headers.emplace(std::string(kTokenHeader), options_.token);
  }
  if (json_body.has_value()) {
    req.body = *json_body;
    req.headers.emplace("Content-Type", "application/json");
  }
  req.response_handler = [&](const httplib::Response& response) {
    result.status = response.status;
    result.content_type = response.get_header_value("Content-Type");
    streaming = on_bytes && response.status == 200 &&
                result.content_type.rfind("text/event-stream", 0) == 0;
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t size, std::uint64_t,
                             std::uint64_t) {
    if (streaming) {
      return on_bytes(std::string_view(data, size));
    }
    if (result.body.size() + size > options_.max_body_bytes) {
      too_large = true;
      return false;
    }
    result.body.append(data, size);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  bool ok = false;
  try {
    ok = client_->send(req, res, error);
  } catch (const std::exception& e) {
    return absl::UnavailableError(e.what());
  }
  if (too_large) {
    return absl::ResourceExhaustedError("the reply is larger than " +
                                        std::to_string(options_.max_body_bytes >> 20) + " MiB");
  }
  if (!ok) {
    if (stopped_.load()) {
      return absl::CancelledError("request cancelled");
    }
    return TransportError(error);
  }
  if (result.status == 0) {
    result.status = res.status;
  }
  return result;
}

void PulseClient::Stop() {
  stopped_.store(true);
  client_->stop();
}

}  // namespace pulse::cli
