// Endpoint locality over hostile URL shapes: only `localhost` and canonical IP literals in the
// loopback, private and link-local ranges are local; every other name and every IPv4 form a
// resolver may read differently is remote; URLs that hide a host behind user info, a zone id or
// a query are refused before anything is decided. And the operator's declaration wins, except
// that a hosted API at its own address cannot be declared local.
#include "pulse/adapters/providers/endpoint_locality.h"

#include <catch2/catch.hpp>
#include <string>

#include "pulse/adapters/providers/base_url.h"
#include "pulse/adapters/providers/provider_factory.h"

namespace pulse::adapters::providers {
namespace {

struct Shape {
  const char* url;
  Locality expected;
  const char* reason_part;  // a fragment the reason must hold
};

TEST_CASE("the locality of a base URL follows its host literally, and doubt is remote",
          "[adapters][providers][locality]") {
  using L = Locality;
  const Shape shapes[] = {
      // Loopback, private, link-local: IPv4.
      {"http://127.0.0.1:8000/v1", L::kLocal, "loopback"},
      {"http://127.255.255.254", L::kLocal, "loopback"},
      {"http://10.0.0.1", L::kLocal, "private"},
      {"http://10.255.255.255:11434", L::kLocal, "private"},
      {"http://172.16.0.1", L::kLocal, "private"},
      {"http://172.31.255.255", L::kLocal, "private"},
      {"http://192.168.0.10:1234", L::kLocal, "private"},
      {"http://169.254.1.1", L::kLocal, "link-local"},
      // localhost itself, in any case (host names are case-insensitive).
      {"http://localhost:11434", L::kLocal, "localhost"},
      {"http://LOCALHOST:11434", L::kLocal, "localhost"},
      {"HTTP://LocalHost", L::kLocal, "localhost"},
      // IPv6.
      {"http://[::1]:8000", L::kLocal, "loopback"},
      {"http://[0:0:0:0:0:0:0:1]", L::kLocal, "loopback"},
      {"http://[fc00::1]", L::kLocal, "private"},
      {"http://[FD12:3456:789A::1]", L::kLocal, "private"},
      {"http://[fe80::1]", L::kLocal, "link-local"},
      {"http://[febf:ffff::1]", L::kLocal, "link-local"},
      {"http://[::ffff:127.0.0.1]", L::kLocal, "IPv4-mapped"},
      {"http://[::ffff:7f00:1]", L::kLocal, "loopback"},
      {"http://[::ffff:192.168.1.1]", L::kLocal, "private"},
      // Names that merely start or end like a local one.
      {"http://127.0.0.1.evil.com", L::kRemote, "host name"},
      {"http://127.0.0.1.nip.io:8000", L::kRemote, "host name"},
      {"http://localhost.evil.com", L::kRemote, "host name"},
      {"http://foo.localhost", L::kRemote, "host name"},
      {"http://localhost.localdomain", L::kRemote, "host name"},
      {"http://evil-localhost", L::kRemote, "host name"},
      {"http://gpu-box", L::kRemote, "host name"},
      {"http://ollama.lan:11434", L::kRemote, "host name"},
      // Trailing dots: resolvers differ, so no.
      {"http://localhost.:11434", L::kRemote, "host name"},
      {"http://127.0.0.1.:8000", L::kRemote, "numeric"},
      // IPv4 forms inet_aton reads but that are not canonical: hex, decimal, octal, short.
      {"http://0x7f000001", L::kRemote, "numeric"},
      {"http://0X7F000001", L::kRemote, "numeric"},
      {"http://0x7f.0.0.1", L::kRemote, "numeric"},
      {"http://2130706433", L::kRemote, "numeric"},
      {"http://0177.0.0.1", L::kRemote, "numeric"},
      {"http://010.0.0.1", L::kRemote, "numeric"},  // octal: 8.0.0.1, not 10.0.0.1
      {"http://0192.168.0.1", L::kRemote, "numeric"},
      {"http://127.1", L::kRemote, "numeric"},
      {"http://10.1", L::kRemote, "numeric"},
      {"http://127.0.0.256", L::kRemote, "numeric"},
      {"http://1.2.3.4.5", L::kRemote, "numeric"},
      // Just outside the ranges, and the addresses that are never this machine's model.
      {"http://172.15.255.255", L::kRemote, "outside"},
      {"http://172.32.0.1", L::kRemote, "outside"},
      {"http://192.169.0.1", L::kRemote, "outside"},
      {"http://169.253.0.1", L::kRemote, "outside"},
      {"http://11.0.0.1", L::kRemote, "outside"},
      {"http://8.8.8.8", L::kRemote, "outside"},
      {"http://100.64.0.1", L::kRemote, "outside"},
      {"http://0.0.0.0:8000", L::kRemote, "outside"},
      {"http://255.255.255.255", L::kRemote, "outside"},
      {"https://203.0.113.7/v1", L::kRemote, "outside"},
      // IPv6 outside, mapped public, compatible and translated forms.
      {"http://[::ffff:8.8.8.8]", L::kRemote, "IPv4-mapped"},
      {"http://[::ffff:808:808]", L::kRemote, "IPv4-mapped"},
      {"http://[::127.0.0.1]", L::kRemote, "outside"},
      {"http://[64:ff9b::7f00:1]", L::kRemote, "outside"},
      {"http://[::]", L::kRemote, "outside"},
      {"http://[2001:db8::1]", L::kRemote, "outside"},
      {"http://[fbff::1]", L::kRemote, "outside"},
      {"http://[fec0::1]", L::kRemote, "outside"},
      {"http://[fe7f::1]", L::kRemote, "outside"},
      {"http://[1::2::3]", L::kRemote, "well-formed"},
      {"http://[:::1]", L::kRemote, "well-formed"},
  };
  for (const Shape& shape : shapes) {
    INFO(shape.url);
    absl::StatusOr<BaseUrl> url = ParseBaseUrl(shape.url);
    REQUIRE(url.ok());
    const HostLocality got = ClassifyHost(url->host);
    CHECK(got.locality == shape.expected);
    CHECK(got.reason.find(shape.reason_part) != std::string::npos);
  }
}

TEST_CASE("URLs that hide the real host are refused before locality is decided",
          "[adapters][providers][locality]") {
  for (const char* url :
       {"http://127.0.0.1@evil.com", "http://user:pw@127.0.0.1:8000",
        "http://127.0.0.1:80@evil.com", "http://127.0.0.1\\@evil.com", "http://evil.com#@127.0.0.1",
        "http://evil.com?@127.0.0.1", "http://[fe80::1%25eth0]:8000", "http://[fe80::1%eth0]",
        "http://127.0.0.1%2e.evil.com", "unix:///run/ollama.sock",
        "http+unix://%2Frun%2Follama.sock", "http://localhost\t", "http:// 127.0.0.1",
        "http://[::1", "http://127.0.0.1:0"}) {
    INFO(url);
    CHECK(ParseBaseUrl(url).status().code() == absl::StatusCode::kInvalidArgument);
  }
  // And a host handed over directly is judged by the same literal rules.
  CHECK(ClassifyHost("").locality == Locality::kRemote);
  CHECK(ClassifyHost("fe80::1%eth0").locality == Locality::kRemote);
  CHECK(ClassifyHost("LocalHost").locality == Locality::kLocal);
  CHECK(ClassifyHost("127.0.0.1 ").locality == Locality::kRemote);
}

TEST_CASE("the operator's locality setting is parsed exactly", "[adapters][providers][locality]") {
  CHECK(ParseLocalitySetting("auto") == LocalitySetting::kAuto);
  CHECK(ParseLocalitySetting("local") == LocalitySetting::kLocal);
  CHECK(ParseLocalitySetting("remote") == LocalitySetting::kRemote);
  for (const char* bad : {"", "LOCAL", "Local", "Auto", "REMOTE", "local ", " auto", "loca", "true",
                          "trusted", "lan", "yes", "unknown"}) {
    INFO(bad);
    CHECK_FALSE(ParseLocalitySetting(bad).has_value());
  }
  for (LocalitySetting s :
       {LocalitySetting::kAuto, LocalitySetting::kLocal, LocalitySetting::kRemote}) {
    CHECK(ParseLocalitySetting(ToString(s)) == s);
  }
  CHECK(ToString(Locality::kLocal) == "local");
  CHECK(ToString(Locality::kRemote) == "remote");
}

ProviderConfig Config(std::string provider, std::string base_url, LocalitySetting locality) {
  ProviderConfig config;
  config.provider = std::move(provider);
  config.base_url = std::move(base_url);
  config.model = "test-model";
  config.api_key = "key-123456";
  config.locality = locality;
  return config;
}

TEST_CASE("a declaration wins over the URL, but a hosted API cannot be declared local",
          "[adapters][providers][locality]") {
  using core::InferenceRoute;
  using S = LocalitySetting;
  struct Row {
    const char* provider;
    const char* url;
    S setting;
    Locality locality;
    InferenceRoute route;
    const char* reason_part;
  };
  const Row rows[] = {
      {"openai-compatible", "http://127.0.0.1:8000/v1", S::kAuto, Locality::kLocal,
       InferenceRoute::kLocalModelServer, "loopback"},
      {"openai-compatible", "http://127.0.0.1:8000/v1", S::kRemote, Locality::kRemote,
       InferenceRoute::kMeteredApi, "declared remote"},
      {"openai-compatible", "https://vllm.example.com/v1", S::kAuto, Locality::kRemote,
       InferenceRoute::kMeteredApi, "host name"},
      {"openai-compatible", "https://vllm.example.com/v1", S::kLocal, Locality::kLocal,
       InferenceRoute::kLocalModelServer, "declared local"},
      {"ollama", "", S::kAuto, Locality::kLocal, InferenceRoute::kLocalModelServer, "localhost"},
      {"ollama", "", S::kRemote, Locality::kRemote, InferenceRoute::kMeteredApi, "declared remote"},
      {"ollama", "http://gpu.example.net:11434", S::kAuto, Locality::kRemote,
       InferenceRoute::kMeteredApi, "host name"},
      {"openai", "", S::kAuto, Locality::kRemote, InferenceRoute::kMeteredApi, "hosted API"},
      {"openai", "http://127.0.0.1:4000/v1", S::kAuto, Locality::kRemote,
       InferenceRoute::kMeteredApi, "proxy"},
      {"openai", "http://127.0.0.1:4000/v1", S::kLocal, Locality::kLocal,
       InferenceRoute::kLocalModelServer, "declared local"},
      {"zai-coding", "", S::kRemote, Locality::kRemote, InferenceRoute::kCodingPlanAllowance,
       "declared remote"},
  };
  for (const Row& row : rows) {
    INFO(row.provider << " " << row.url << " " << ToString(row.setting));
    const ProviderConfig config = Config(row.provider, row.url, row.setting);
    absl::StatusOr<ResolvedProvider> resolved = ResolveProvider(config);
    REQUIRE(resolved.ok());
    CHECK(resolved->destination.locality == row.locality);
    CHECK(resolved->destination.setting == row.setting);
    CHECK(resolved->destination.reason.find(row.reason_part) != std::string::npos);
    absl::StatusOr<core::ModelRoute> route = ResolveRoute(config);
    REQUIRE(route.ok());
    CHECK(route->route == row.route);
  }
  for (const char* hosted : {"openai", "anthropic", "gemini", "openrouter", "zai"}) {
    INFO(hosted);
    const absl::Status refused = ResolveProvider(Config(hosted, "", S::kLocal)).status();
    CHECK(refused.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(refused.message()).find("hosted API") != std::string::npos);
    CHECK(ResolveRoute(Config(hosted, "", S::kLocal)).status().code() ==
          absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace pulse::adapters::providers
