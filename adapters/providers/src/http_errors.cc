#include "pulse/adapters/providers/http_errors.h"

#include <array>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/llm_types.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::providers {
namespace {

constexpr absl::Duration kMaxRetryAfter = absl::Hours(24);
constexpr std::size_t kMaxErrorBodyBytes = std::size_t{64} << 10;

using core::ToAbsl;

std::optional<std::string_view> ErrorMessageIn(const rapidjson::Value& doc) {
  if (!doc.IsObject()) {
    return std::nullopt;
  }
  if (const rapidjson::Value* error = core::GetMember(doc, "error"); error != nullptr) {
    if (error->IsString()) {
      return core::StringViewOf(*error);
    }
    if (error->IsObject()) {
      if (auto message = core::GetString(*error, "message"); message.has_value()) {
        return message;
      }
    }
  }
  return core::GetString(doc, "message");
}

}  // namespace

std::optional<absl::Duration> ParseRetryAfter(std::string_view value, absl::Time now) {
  const absl::string_view text = absl::StripAsciiWhitespace(ToAbsl(value));
  if (text.empty()) {
    return std::nullopt;
  }
  if (absl::ascii_isdigit(static_cast<unsigned char>(text.front()))) {
    std::uint64_t seconds = 0;
    for (char c : text) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
        return std::nullopt;
      }
    }
    if (text.size() > 9 || !absl::SimpleAtoi(text, &seconds)) {
      return kMaxRetryAfter;  // absurdly large: the cap
    }
    return std::min(absl::Seconds(static_cast<std::int64_t>(seconds)), kMaxRetryAfter);
  }
  // asctime pads the day with a space ("Nov  6"); collapse runs of spaces first.
  const std::string single_spaced =
      absl::StrJoin(absl::StrSplit(text, ' ', absl::SkipEmpty()), " ");
  constexpr std::array<const char*, 3> kHttpDateFormats = {
      "%a, %d %b %Y %H:%M:%S GMT",  // IMF-fixdate
      "%A, %d-%b-%y %H:%M:%S GMT",  // RFC 850
      "%a %b %d %H:%M:%S %Y",       // asctime
  };
  for (const char* format : kHttpDateFormats) {
    absl::Time when;
    std::string error;
    if (absl::ParseTime(format, single_spaced, absl::UTCTimeZone(), &when, &error)) {
      return std::clamp(when - now, absl::ZeroDuration(), kMaxRetryAfter);
    }
  }
  return std::nullopt;
}

std::string ProviderErrorDetail(std::string_view body) {
  if (body.empty() || body.size() > kMaxErrorBodyBytes) {
    return "";
  }
  absl::StatusOr<rapidjson::Document> doc =
      core::ParseJson(body, core::JsonLimits{.max_bytes = kMaxErrorBodyBytes, .max_depth = 16});
  if (!doc.ok()) {
    return "";
  }
  std::optional<std::string_view> message = ErrorMessageIn(*doc);
  if (!message.has_value()) {
    return "";
  }
  // Redact before cutting, so a cut never leaves half a recognisable key behind.
  std::string text = core::RedactSecrets(*message);
  text = absl::StrReplaceAll(text, {{"\r", " "}, {"\n", " "}, {"\t", " "}});
  text = core::BoundedCleanText(text, kMaxProviderDetailBytes);
  return std::string(absl::StripAsciiWhitespace(text));
}

absl::Status HttpStatusError(int status, std::optional<absl::Duration> retry_after,
                             std::string_view detail) {
  const std::string suffix = detail.empty() ? "" : absl::StrCat(": ", ToAbsl(detail));
  const std::string code = absl::StrCat("(HTTP ", status, ")");
  if (status == 429) {
    return core::RateLimitedError(absl::StrCat("rate limited ", code, suffix),
                                  retry_after.value_or(absl::ZeroDuration()));
  }
  if (status == 503) {
    const std::string message = absl::StrCat("temporarily unavailable ", code, suffix);
    if (retry_after.has_value() && *retry_after > absl::ZeroDuration()) {
      return core::RateLimitedError(message, *retry_after);
    }
    return core::ProviderUnavailableError(message);
  }
  if (status == 401) {
    return absl::UnauthenticatedError(absl::StrCat("the API key was rejected ", code, suffix));
  }
  if (status == 403) {
    return absl::PermissionDeniedError(absl::StrCat("access was refused ", code, suffix));
  }
  if (status == 402) {
    return absl::FailedPreconditionError(
        absl::StrCat("the account needs payment or credits ", code, suffix));
  }
  if (status == 408 || (status >= 500 && status <= 599)) {
    return core::ProviderUnavailableError(absl::StrCat("server error ", code, suffix));
  }
  if (status >= 300 && status <= 399) {
    return absl::FailedPreconditionError(
        absl::StrCat("answered with a redirect ", code, "; check the base URL"));
  }
  if (status == 404) {
    return core::InvalidProviderRequestError(
        absl::StrCat("unknown model or endpoint ", code, suffix));
  }
  if (status == 413) {
    return core::InvalidProviderRequestError(
        absl::StrCat("the request is too large ", code, suffix));
  }
  if (status >= 400 && status <= 499) {
    return core::InvalidProviderRequestError(
        absl::StrCat("the request was rejected ", code, suffix));
  }
  return core::ProviderUnavailableError(absl::StrCat("unexpected answer ", code));
}

absl::Status AnnotateProviderError(const absl::Status& status, std::string_view prefix,
                                   std::span<const std::string> secrets) {
  if (status.ok()) {
    return status;
  }
  std::string message = absl::StrCat(ToAbsl(prefix), ": ", status.message());
  for (const std::string& secret : secrets) {
    if (secret.size() >= 4) {
      absl::StrReplaceAll({{secret, ToAbsl(core::kRedactedSecret)}}, &message);
    }
  }
  absl::Status annotated(status.code(), message);
  status.ForEachPayload([&](absl::string_view type_url, const absl::Cord& payload) {
    annotated.SetPayload(type_url, payload);
  });
  return annotated;
}

}  // namespace pulse::adapters::providers
