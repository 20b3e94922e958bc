// ParseUrl: the one URL validation of every HTTP client in the tree; each refusal has a stable
// code and never repeats the text (which may hold a secret).
#include "pulse/adapters/http_client/url.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "pulse/adapters/http_client/smtp_client.h"

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

TEST_CASE("an SMTP URL is smtp or smtps, a host and a port, nothing more",
          "[adapters][http_client][url][smtp]") {
  absl::StatusOr<SmtpUrl> plain = ParseSmtpUrl("smtp://mail.lab.example", "url");
  REQUIRE(plain.ok());
  CHECK(plain->host == "mail.lab.example");
  CHECK(plain->port == 587);
  CHECK_FALSE(plain->implicit_tls);
  CHECK(plain->url == "smtp://mail.lab.example:587");
  absl::StatusOr<SmtpUrl> tls = ParseSmtpUrl("SMTPS://10.0.0.5/", "url");
  REQUIRE(tls.ok());
  CHECK(tls->implicit_tls);
  CHECK(tls->port == 465);
  CHECK(tls->url == "smtps://10.0.0.5:465");
  absl::StatusOr<SmtpUrl> v6 = ParseSmtpUrl("smtp://[::1]:2525", "url");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK(v6->url == "smtp://[::1]:2525");
  for (const std::string& bad : std::vector<std::string>{"",
                                                         "mail.lab.example",
                                                         "http://mail.lab.example",
                                                         "smtp:/mail",
                                                         "smtp://",
                                                         "smtp://user:secret-pw@mail.lab.example",
                                                         "smtp://mail.lab.example/relay",
                                                         "smtp://mail.lab.example?x=1",
                                                         "smtp://mail.lab.example#f",
                                                         "smtp://mail:0",
                                                         "smtp://mail:65536",
                                                         "smtp://mail:",
                                                         "smtp://mail:25x",
                                                         "smtp://mail:+25",
                                                         "smtp://ma il",
                                                         "smtp://mail\r\n.example",
                                                         "smtp://[::1",
                                                         "smtp://[]",
                                                         "smtp://[::1]x",
                                                         "smtp://[g::1]",
                                                         "smtp://.mail",
                                                         "smtp://-mail",
                                                         "smtp://mail..example",
                                                         "smtp://mail\\x",
                                                         "smtp://m\xc3\xa9il",
                                                         "smtp://" + std::string(3000, 'a')}) {
    INFO(bad);
    const absl::StatusOr<SmtpUrl> parsed = ParseSmtpUrl(bad, "the url");
    REQUIRE_FALSE(parsed.ok());
    CHECK(absl::IsInvalidArgument(parsed.status()));
    const std::string message(parsed.status().message());
    CHECK(message.rfind("the url ", 0) == 0);
    CHECK(message.find("secret-pw") == std::string::npos);  // never the text itself
  }
}

}  // namespace
}  // namespace pulse::http_client
