// Redaction follows the destination, not the provider's name: a provider that is usually a
// local model server (openai-compatible, ollama) gets the local_model_server route — the only
// route that sees unredacted context — only when its base URL is a local address.
#include <catch2/catch.hpp>
#include <string>

#include "pulse/adapters/providers/provider_factory.h"

namespace pulse::adapters::providers {
namespace {

using core::InferenceRoute;

ProviderConfig Endpoint(std::string provider, std::string base_url) {
  ProviderConfig config;
  config.provider = std::move(provider);
  config.base_url = std::move(base_url);
  config.model = "test-model";
  return config;
}

InferenceRoute RouteOf(const ProviderConfig& config) {
  absl::StatusOr<core::ModelRoute> route = ResolveRoute(config);
  REQUIRE(route.ok());
  return route->route;
}

TEST_CASE("a local-family provider on a remote base URL is not a local model server",
          "[adapters][providers][locality]") {
  for (const char* provider : {"openai-compatible", "ollama"}) {
    for (const char* url : {"https://llm.example.com/v1", "http://203.0.113.5:8000/v1",
                            "http://127.0.0.1.evil.com/v1", "http://[::ffff:8.8.8.8]:8000",
                            "http://0x7f000001:8000", "http://localhost.:8000"}) {
      INFO(provider << " " << url);
      CHECK(RouteOf(Endpoint(provider, url)) != InferenceRoute::kLocalModelServer);
    }
  }
}

TEST_CASE("a local-family provider on a local base URL stays a local model server",
          "[adapters][providers][locality]") {
  for (const char* provider : {"openai-compatible", "ollama"}) {
    for (const char* url :
         {"http://127.0.0.1:8000/v1", "http://localhost:11434", "http://LOCALHOST:11434",
          "http://[::1]:8000", "http://10.1.2.3:8000", "http://192.168.1.20:11434",
          "http://172.16.0.9:8000", "http://169.254.10.1:8000", "http://[fd12:3456::1]:8000",
          "http://[fe80::1]:8000"}) {
      INFO(provider << " " << url);
      CHECK(RouteOf(Endpoint(provider, url)) == InferenceRoute::kLocalModelServer);
    }
  }
}

TEST_CASE("a hosted provider stays remote even behind a loopback base URL",
          "[adapters][providers][locality]") {
  CHECK(RouteOf(Endpoint("openai", "http://127.0.0.1:8000/v1")) == InferenceRoute::kMeteredApi);
  CHECK(RouteOf(Endpoint("zai-coding", "http://127.0.0.1:8000/v1")) ==
        InferenceRoute::kCodingPlanAllowance);
}

}  // namespace
}  // namespace pulse::adapters::providers
