// How a provider's HTTP answer becomes a typed error (llm_types.h helpers): the status code
// decides the kind, Retry-After rides along on 429 and 503, and the message is neutral text
// with the HTTP status. The provider's own error text is kept only as a short excerpt of the
// JSON `message` it sent, cleaned and passed through RedactSecrets; the raw body, the URL and
// the credentials never appear. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace pulse::adapters::providers {

inline constexpr std::size_t kMaxProviderDetailBytes = 200;

// A Retry-After value: delta-seconds ("7") or an HTTP-date (IMF-fixdate, RFC 850 or asctime)
// taken relative to `now`. nullopt when malformed; a date in the past is zero. Capped at one
// day so a hostile value cannot overflow a sleep.
std::optional<absl::Duration> ParseRetryAfter(std::string_view value, absl::Time now);

// The provider's own error message in `body` (`error.message`, `error` as a string, or
// `message`, in that order), when `body` is JSON: at most kMaxProviderDetailBytes of clean
// single-line text with secrets redacted. "" when there is none.
std::string ProviderErrorDetail(std::string_view body);

// The error for a non-2xx HTTP `status`: 401 Unauthenticated; 403 PermissionDenied; 402
// FailedPrecondition; 3xx FailedPrecondition (a redirect means a wrong base URL); 429
// RateLimitedError carrying `retry_after`; 503 RateLimitedError when it carries a Retry-After,
// else Unavailable; 408 and other 5xx Unavailable; 400, 404, 413, 422 and other 4xx
// InvalidArgument. `detail` (from ProviderErrorDetail) is appended when not empty.
absl::Status HttpStatusError(int status, std::optional<absl::Duration> retry_after,
                             std::string_view detail);

// `status` with `prefix` + ": " before its message, every occurrence of each of `secrets`
// (at least 4 bytes long) replaced by "[REDACTED]", and its payloads (retry-after) kept.
absl::Status AnnotateProviderError(const absl::Status& status, std::string_view prefix,
                                   std::span<const std::string> secrets);

}  // namespace pulse::adapters::providers
