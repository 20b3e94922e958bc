#include "pulse/adapters/providers/http_errors.h"

#include <catch2/catch.hpp>
#include <string>

#include "pulse/adapters/providers/base_url.h"
#include "pulse/core/model/llm_types.h"

namespace pulse::adapters::providers {
namespace {

// ---- base URLs ------------------------------------------------------------------------------

TEST_CASE("a base URL keeps scheme, host, port and path prefix", "[adapters][providers][url]") {
  auto zai = ParseBaseUrl("https://api.z.ai/api/coding/paas/v4/");
  REQUIRE(zai.ok());
  CHECK(zai->https);
  CHECK(zai->host == "api.z.ai");
  CHECK(zai->port == 443);
  CHECK(zai->path_prefix == "/api/coding/paas/v4");
  CHECK(zai->Origin() == "https://api.z.ai:443");
  CHECK(zai->Target("/chat/completions") == "/api/coding/paas/v4/chat/completions");

  auto local = ParseBaseUrl("HTTP://LocalHost:11434");
  REQUIRE(local.ok());
  CHECK_FALSE(local->https);
  CHECK(local->host == "localhost");
  CHECK(local->port == 11434);
  CHECK(local->path_prefix.empty());
  CHECK(local->Target("/api/chat") == "/api/chat");

  auto v6 = ParseBaseUrl("http://[::1]:8000/v1");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK(v6->Origin() == "http://[::1]:8000");

  auto plain = ParseBaseUrl("http://10.0.0.5");
  REQUIRE(plain.ok());
  CHECK(plain->port == 80);
}

TEST_CASE("a malformed base URL is refused without repeating it", "[adapters][providers][url]") {
  const std::vector<std::string> bad = {
      "",
      "api.openai.com/v1",
      "ftp://example.com",
      "file:///etc/passwd",
      "https://user:hunter2-secret@example.com/v1",
      "https://@example.com",
      "https://example.com/v1?key=abc",
      "https://example.com/v1#frag",
      "https://exa mple.com",
      "https://example.com/v1\r\nX-Injected: 1",
      "https://example.com\t/v1",
      "https://",
      "https://:443",
      "https://example.com:0",
      "https://example.com:65536",
      "https://example.com:12ab",
      "https://example.com:",
      "https://[::1",
      "https://[zz::1]",
      "https://exämple.com",
      "https://example.com/a b",
      "https://example.com/<script>",
  };
  for (const std::string& text : bad) {
    auto url = ParseBaseUrl(text);
    INFO(text);
    REQUIRE_FALSE(url.ok());
    CHECK(url.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(url.status().message()).find("hunter2") == std::string::npos);
  }
}

// ---- Retry-After ----------------------------------------------------------------------------

TEST_CASE("Retry-After takes delta-seconds and HTTP-dates", "[adapters][providers][errors]") {
  const absl::Time now = absl::FromUnixSeconds(1445412450);  // Wed, 21 Oct 2015 07:27:30 GMT
  CHECK(ParseRetryAfter("7", now) == absl::Seconds(7));
  CHECK(ParseRetryAfter(" 120 ", now) == absl::Seconds(120));
  CHECK(ParseRetryAfter("0", now) == absl::ZeroDuration());
  CHECK(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now) == absl::Seconds(30));
  CHECK(ParseRetryAfter("Wednesday, 21-Oct-15 07:28:00 GMT", now) == absl::Seconds(30));
  CHECK(ParseRetryAfter("Wed Oct 21 07:28:00 2015", now) == absl::Seconds(30));
  // A date in the past means "now"; absurd values are capped at a day.
  CHECK(ParseRetryAfter("Wed, 21 Oct 2015 07:00:00 GMT", now) == absl::ZeroDuration());
  CHECK(ParseRetryAfter("999999999999", now) == absl::Hours(24));
  CHECK(ParseRetryAfter("86401", now) == absl::Hours(24));
  CHECK_FALSE(ParseRetryAfter("", now).has_value());
  CHECK_FALSE(ParseRetryAfter("-5", now).has_value());
  CHECK_FALSE(ParseRetryAfter("7s", now).has_value());
  CHECK_FALSE(ParseRetryAfter("1.5", now).has_value());
  CHECK_FALSE(ParseRetryAfter("soon", now).has_value());
}

// ---- status mapping -------------------------------------------------------------------------

TEST_CASE("HTTP statuses map to typed provider errors", "[adapters][providers][errors]") {
  struct Row {
    int status;
    absl::StatusCode code;
  };
  const std::vector<Row> rows = {
      {400, absl::StatusCode::kInvalidArgument},    {401, absl::StatusCode::kUnauthenticated},
      {402, absl::StatusCode::kFailedPrecondition}, {403, absl::StatusCode::kPermissionDenied},
      {404, absl::StatusCode::kInvalidArgument},    {408, absl::StatusCode::kUnavailable},
      {409, absl::StatusCode::kInvalidArgument},    {413, absl::StatusCode::kInvalidArgument},
      {422, absl::StatusCode::kInvalidArgument},    {429, absl::StatusCode::kResourceExhausted},
      {500, absl::StatusCode::kUnavailable},        {502, absl::StatusCode::kUnavailable},
      {503, absl::StatusCode::kUnavailable},        {504, absl::StatusCode::kUnavailable},
      {529, absl::StatusCode::kUnavailable},        {301, absl::StatusCode::kFailedPrecondition},
      {307, absl::StatusCode::kFailedPrecondition},
  };
  for (const Row& row : rows) {
    const absl::Status status = HttpStatusError(row.status, std::nullopt, "");
    INFO(row.status << ": " << status);
    CHECK(status.code() == row.code);
    CHECK(std::string(status.message()).find("HTTP " + std::to_string(row.status)) !=
          std::string::npos);
  }
}

TEST_CASE("429 and 503 carry Retry-After to the loop", "[adapters][providers][errors]") {
  const absl::Status limited = HttpStatusError(429, absl::Seconds(7), "");
  CHECK(core::ClassifyLlmError(limited) == core::LlmErrorKind::kRateLimited);
  CHECK(core::RetryAfter(limited) == absl::Seconds(7));

  const absl::Status limited_no_hint = HttpStatusError(429, std::nullopt, "");
  CHECK(limited_no_hint.code() == absl::StatusCode::kResourceExhausted);
  CHECK_FALSE(core::RetryAfter(limited_no_hint).has_value());

  const absl::Status busy = HttpStatusError(503, absl::Seconds(3), "");
  CHECK(core::RetryAfter(busy) == absl::Seconds(3));
  CHECK(core::ClassifyLlmError(HttpStatusError(503, std::nullopt, "")) ==
        core::LlmErrorKind::kUnavailable);
}

TEST_CASE("the provider's error text is kept short, single-line and redacted",
          "[adapters][providers][errors]") {
  CHECK(ProviderErrorDetail(R"({"error":{"message":"Invalid model","type":"x"}})") ==
        "Invalid model");
  CHECK(ProviderErrorDetail(R"({"error":"model 'qwen3' not found"})") == "model 'qwen3' not found");
  CHECK(ProviderErrorDetail(R"({"message":"slow down"})") == "slow down");
  CHECK(ProviderErrorDetail("<html>502 Bad Gateway</html>").empty());
  CHECK(ProviderErrorDetail(R"({"detail":"nothing we read"})").empty());
  CHECK(ProviderErrorDetail("").empty());

  const std::string leaked = ProviderErrorDetail(
      R"({"error":{"message":"Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz0123.\nSee docs."}})");
  CHECK(leaked.find("abcdefghijklmnop") == std::string::npos);
  CHECK(leaked.find('\n') == std::string::npos);
  CHECK(leaked.find("[REDACTED]") != std::string::npos);

  const std::string long_text =
      ProviderErrorDetail("{\"error\":{\"message\":\"" + std::string(5000, 'a') + "\"}}");
  CHECK(long_text.size() <= kMaxProviderDetailBytes);
}

TEST_CASE("an annotated error names the provider, hides secrets and keeps the retry-after",
          "[adapters][providers][errors]") {
  const std::vector<std::string> secrets = {"my-secret-key-123", "abc"};
  const absl::Status annotated = AnnotateProviderError(
      core::RateLimitedError("echo my-secret-key-123 abc", absl::Seconds(4)), "groq", secrets);
  CHECK(annotated.code() == absl::StatusCode::kResourceExhausted);
  CHECK(annotated.message() == "groq: echo [REDACTED] abc");  // 3-byte values are not secrets
  CHECK(core::RetryAfter(annotated) == absl::Seconds(4));
  CHECK(AnnotateProviderError(absl::OkStatus(), "groq", secrets).ok());
}

}  // namespace
}  // namespace pulse::adapters::providers
