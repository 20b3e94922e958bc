// Url: an HTTP endpoint as an operator configures it ("https://api.z.ai/api/paas/v4",
// "http://127.0.0.1:7655", "http://[::1]:8000/v1"), parsed and validated once for every HTTP
// client in the tree (docs/architecture.md, "The HTTP client adapter"). Only http and https; no
// user info (credentials travel in headers); no query, fragment, whitespace, control or
// non-ASCII characters. A refusal carries a stable code (UrlErrorCode) and its message never
// repeats the text, which may hold a secret. Plain value; the functions are thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pulse::http_client {

// Longer texts are refused with kUrlTooLong before anything else is looked at.
inline constexpr std::size_t kMaxUrlBytes = 2048;

// Stable codes of a refused URL (the payload UrlErrorCode reads).
inline constexpr std::string_view kUrlEmpty = "url_empty";
inline constexpr std::string_view kUrlTooLong = "url_too_long";
inline constexpr std::string_view kUrlBadCharacters = "url_bad_characters";
inline constexpr std::string_view kUrlNoScheme = "url_no_scheme";
inline constexpr std::string_view kUrlBadScheme = "url_bad_scheme";
inline constexpr std::string_view kUrlUserInfo = "url_user_info";
inline constexpr std::string_view kUrlBadHost = "url_bad_host";
inline constexpr std::string_view kUrlBadPort = "url_bad_port";
inline constexpr std::string_view kUrlQueryOrFragment = "url_query_or_fragment";
inline constexpr std::string_view kUrlBadPath = "url_bad_path";

struct Url {
  bool https = true;
  std::string host;         // a lower-cased name, an IPv4 address, or an IPv6 address (no [])
  int port = 443;           // the scheme's default unless the URL names one
  std::string path_prefix;  // "" or "/api/paas/v4": no trailing slash

  // "https://host:port" (IPv6 hosts in brackets).
  std::string Origin() const;
  // path_prefix + `path`, where `path` begins with '/'.
  std::string Target(std::string_view path) const;
  // True for localhost, *.localhost, 127.0.0.0/8 and ::1.
  bool IsLoopback() const;

  friend bool operator==(const Url&, const Url&) = default;
};

// Parses and validates `text`. InvalidArgument with a UrlErrorCode for: empty or longer than
// kMaxUrlBytes; whitespace, control or non-ASCII characters; no "scheme://"; a scheme other than
// http/https; user info; an empty or malformed host (IPv6 zone ids included); a port outside
// 1..65535; a query or fragment; path characters that must be percent-encoded. The message
// starts with `what` ("URL", "base URL", "--server") and never repeats `text`.
[[nodiscard]] absl::StatusOr<Url> ParseUrl(std::string_view text, std::string_view what = "URL");

// The stable code of a status ParseUrl returned ("url_bad_port"), or "" for any other status.
std::string UrlErrorCode(const absl::Status& status);

}  // namespace pulse::http_client
