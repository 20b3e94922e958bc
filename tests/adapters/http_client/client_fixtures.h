// What the HttpClient tests build their clients and requests from: options with deadlines short
// enough for a test (2 s each), and a GET.
#pragma once

#include <string>
#include <utility>

#include "pulse/adapters/http_client/http_client.h"

namespace pulse::http_client::fixtures {

// `kept`: a keep-alive client, whose GETs to 127.0.0.1 go over its own kept connections
// (UsesKeptTransport) instead of libcurl.
inline ClientOptions FastOptions(bool kept = false) {
  ClientOptions options;
  options.timeouts.connect = absl::Seconds(2);
  options.timeouts.response_header = absl::Seconds(2);
  options.timeouts.idle = absl::Seconds(2);
  options.keep_alive = kept;
  return options;
}

inline Request Get(std::string target = "/") {
  Request request;
  request.target = std::move(target);
  return request;
}

}  // namespace pulse::http_client::fixtures
