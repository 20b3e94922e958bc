// ParseUrl: the one URL validation of every HTTP client in the tree; each refusal has a stable
// code and never repeats the text (which may hold a secret).
#include "pulse/adapters/http_client/url.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace pulse::http_client {
namespace {

TEST_CASE("a URL keeps scheme, host, port and path prefix", "[adapters][http_client][url]") {
  auto zai = ParseUrl("https://api.z.ai/api/coding/paas/v4/");
  REQUIRE(zai.ok());
  CHECK(zai->https);
  CHECK(zai->host == "api.z.ai");
  CHECK(zai->port == 443);
  CHECK(zai->path_prefix == "/api/coding/paas/v4");
  CHECK(zai->Origin() == "https://api.z.ai:443");
  CHECK(zai->Target("/chat") == "/api/coding/paas/v4/chat");
  CHECK_FALSE(zai->IsLoopback());

  auto local = ParseUrl("HTTP://LocalHost:7655");
  REQUIRE(local.ok());
  CHECK_FALSE(local->https);
  CHECK(local->host == "localhost");
  CHECK(local->port == 7655);
  CHECK(local->IsLoopback());

  auto v6 = ParseUrl("http://[::1]:8000/v1");
  REQUIRE(v6.ok());
  CHECK(v6->Origin() == "http://[::1]:8000");
  CHECK(v6->IsLoopback());
  CHECK(ParseUrl("http://127.1.2.3")->IsLoopback());
  CHECK(ParseUrl("http://127.0.0.1")->port == 80);
  CHECK_FALSE(ParseUrl("http://127.0.0.1.evil.com")->IsLoopback());
  CHECK_FALSE(ParseUrl("http://128.0.0.1")->IsLoopback());
  CHECK(ParseUrl("http://api.localhost")->IsLoopback());
}

TEST_CASE("malformed URLs are refused with stable codes and never repeated",
          "[adapters][http_client][url]") {
  struct Row {
    std::string text;
    std::string_view code;
  };
  const std::vector<Row> rows = {
      {"", kUrlEmpty},
      {"http://h/" + std::string(3000, 'a'), kUrlTooLong},
      {"127.0.0.1:7655", kUrlNoScheme},
      {"api.openai.com/v1", kUrlNoScheme},
      {"ftp://example.com", kUrlBadScheme},
      {"file:///etc/passwd", kUrlBadScheme},
      {"unix:///run/docker.sock", kUrlBadScheme},
      {"http://exa mple.com", kUrlBadCharacters},
      {"http:// 127.0.0.1", kUrlBadCharacters},
      {"https://example.com/v1\r\nX-Injected: 1", kUrlBadCharacters},
      {"https://ex\xc3\xa4mple.com", kUrlBadCharacters},
      {"https://user:hunter2-secret@example.com/v1", kUrlUserInfo},
      {"https://example.com/v1?key=abc", kUrlQueryOrFragment},
      {"http://evil.com#@127.0.0.1", kUrlQueryOrFragment},
      {"https://", kUrlBadHost},
      {"https://:443", kUrlBadHost},
      {"https://[::1", kUrlBadHost},
      {"https://[zz::1]", kUrlBadHost},
      {"http://[fe80::1%25eth0]:8000", kUrlBadHost},
      {"http://127.0.0.1\\@evil.com", kUrlUserInfo},
      {"http://-evil.com", kUrlBadHost},
      {"https://example.com:0", kUrlBadPort},
      {"https://example.com:65536", kUrlBadPort},
      {"https://example.com:99999999999", kUrlBadPort},
      {"https://example.com:12ab", kUrlBadPort},
      {"https://example.com:", kUrlBadPort},
      {"https://example.com/<script>", kUrlBadPath},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    auto url = ParseUrl(row.text, "--server");
    REQUIRE_FALSE(url.ok());
    CHECK(url.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(UrlErrorCode(url.status()) == row.code);
    const std::string message(url.status().message());
    CHECK(message.rfind("--server ", 0) == 0);
    CHECK(message.find("hunter2") == std::string::npos);
    CHECK(message.find("evil") == std::string::npos);
  }
  CHECK(UrlErrorCode(absl::InvalidArgumentError("x")).empty());
}

}  // namespace
}  // namespace pulse::http_client
