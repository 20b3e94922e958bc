// Internal to adapters/http: strict readers of the parts of a raw request the transports leave
// loosely parsed — the query string, the body framing headers, and which headers a handler
// may see — and the check that keeps response headers free of CR/LF.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/adapters/http/http_types.h"

namespace pulse::adapters::http::internal {

inline constexpr std::size_t kMaxQueryParams = 64;

// A request head as the transport parsed it, before any of it is trusted.
struct RawRequest {
  std::string method;
  std::string target;  // as sent: raw path and query
  // Every header field in order, names as sent (compared without regard to case).
  std::vector<std::pair<std::string, std::string>> headers;

  bool HasHeader(std::string_view name) const;
};

// True for the methods whose requests may carry a body: POST, PUT, PATCH, DELETE.
bool ExpectsContent(std::string_view method);

// Splits a target into its raw path and raw query ("" when there is no "?").
std::pair<std::string_view, std::string_view> SplitTarget(std::string_view target);

// Decodes "a=1&b=x%20y" ('+' is a space; %2B is '+'). Empty pieces are skipped; a piece
// without "=" has the value "". InvalidArgument for a bad escape, an escape decoding to NUL,
// text that is not valid UTF-8, or more than kMaxQueryParams pairs.
[[nodiscard]] absl::StatusOr<QueryParams> ParseQuery(std::string_view raw_query);

struct BodyFraming {
  enum class Kind { kNone, kLength, kChunked, kInvalid };
  Kind kind = Kind::kNone;
  std::uint64_t length = 0;  // kLength
};

// How the request delimits its body. kInvalid for a repeated or non-numeric Content-Length,
// a Transfer-Encoding other than "chunked", or both headers at once (the framing a request
// smuggler relies on).
BodyFraming ExamineFraming(const RawRequest& req);

// True when the request's body is declared JSON: exactly one Content-Type header whose media
// type is application/json (any case), with no parameter but an optional charset=utf-8. Any
// other type (multipart/form-data, text/plain, application/json-seq, ...) or none is false.
bool IsJsonContentType(const RawRequest& req);

// Every value of header `name` (case-insensitive), in order.
std::vector<std::string> HeaderValues(const RawRequest& req, std::string_view name);

// The headers a handler sees: lower-case names, credentials removed.
std::vector<std::pair<std::string, std::string>> HandlerHeaders(const RawRequest& req);

// True when a response header can be written as is: the name is an HTTP token, the value
// holds no CR, LF or NUL.
bool IsSafeHeader(std::string_view name, std::string_view value);

// The headers every reply carries unless its handler set its own (docs/security.md): a
// Content-Security-Policy that lets a reply load nothing and be framed by no page (the console's
// page sets a wider one for its own script and styles), X-Frame-Options DENY for browsers that
// predate frame-ancestors, Referrer-Policy no-referrer, and Cache-Control no-store (replies carry
// fleet data a shared cache must not keep). X-Content-Type-Options is the transport's.
void AddSecurityHeaders(HttpReply& reply);

}  // namespace pulse::adapters::http::internal
