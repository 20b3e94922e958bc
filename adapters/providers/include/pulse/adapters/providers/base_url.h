// BaseUrl: a provider endpoint as configured by an operator ("https://api.z.ai/api/paas/v4",
// "http://localhost:11434"), validated once so the transport never sees a surprising URL. It is
// the HTTP client's Url (pulse/adapters/http_client/url.h): only http and https; no user info
// (credentials travel in headers); no query, fragment, whitespace or control characters.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/http_client/url.h"

namespace pulse::adapters::providers {

using BaseUrl = http_client::Url;

// Parses and validates `text` (http_client::ParseUrl). InvalidArgument (the message starts with
// "base URL" and never repeats the URL, which may hold a secret) for: a scheme other than
// http/https, user info, an empty or malformed host, a port outside 1..65535, a query or
// fragment, whitespace, control or non-ASCII characters.
[[nodiscard]] inline absl::StatusOr<BaseUrl> ParseBaseUrl(std::string_view text) {
  return http_client::ParseUrl(text, "base URL");
}

}  // namespace pulse::adapters::providers
