// BaseUrl: a provider endpoint as configured by an operator ("https://api.z.ai/api/paas/v4",
// "http://localhost:11434"), validated once so the transport never sees a surprising URL.
// Only http and https; no user info (credentials travel in headers); no query, fragment,
// whitespace or control characters. Plain value.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace pulse::adapters::providers {

struct BaseUrl {
  bool https = true;
  std::string host;         // a name, an IPv4 address, or an IPv6 address without brackets
  int port = 443;           // the scheme's default unless the URL names one
  std::string path_prefix;  // "" or "/api/paas/v4": no trailing slash

  // "https://host:port" (IPv6 hosts in brackets): what the HTTP client connects to.
  std::string Origin() const;
  // path_prefix + `path`, where `path` begins with '/'.
  std::string Target(std::string_view path) const;

  friend bool operator==(const BaseUrl&, const BaseUrl&) = default;
};

// Parses and validates `text`. InvalidArgument (the message never repeats the URL, which may
// hold a secret) for: a scheme other than http/https, user info, an empty or malformed host, a
// port outside 1..65535, a query or fragment, whitespace, control or non-ASCII characters.
[[nodiscard]] absl::StatusOr<BaseUrl> ParseBaseUrl(std::string_view text);

}  // namespace pulse::adapters::providers
