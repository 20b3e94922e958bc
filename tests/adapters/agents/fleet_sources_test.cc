// Fleet sources (adapters/agents/fleet_sources.h): the strict {"sources": [...]} parser, the
// kind registry and the built-in kinds' settings, with malformed and hostile input.
#include "pulse/adapters/agents/fleet_sources.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agents_test_support.h"

namespace pulse::testing::agents {
namespace {

using adapters::agents::FleetSourceRegistry;
using adapters::agents::FleetSourceSpec;
using adapters::agents::IsFleetSourcesDocument;
using adapters::agents::ParseFleetSources;

std::string ErrorOf(std::string_view json) {
  absl::StatusOr<std::vector<FleetSourceSpec>> parsed = ParseFleetSources(json);
  REQUIRE_FALSE(parsed.ok());
  CHECK(absl::IsInvalidArgument(parsed.status()));
  return std::string(parsed.status().message());
}

FleetSourceRegistry Builtins(FakeClock& clock) {
  adapters::agents::BuiltinFleetSourceOptions options;
  options.demo = DemoOptions(clock);
  FleetSourceRegistry registry;
  REQUIRE(adapters::agents::RegisterBuiltinFleetSources(registry, options).ok());
  return registry;
}

FleetSourceSpec OnlySource(const std::string& json) {
  absl::StatusOr<std::vector<FleetSourceSpec>> parsed = ParseFleetSources(json);
  INFO(parsed.status().ToString());
  REQUIRE(parsed.ok());
  REQUIRE(parsed->size() == 1);
  return parsed->front();
}

TEST_CASE("a sources list parses in order with each source's settings",
          "[adapters][agents][sources]") {
  absl::StatusOr<std::vector<FleetSourceSpec>> parsed = ParseFleetSources(
      R"({"sources": [{"name": "lab", "kind": "demo"},
                      {"kind": "local", "name": "this-host", "allow_exec": false}]})");
  REQUIRE(parsed.ok());
  REQUIRE(parsed->size() == 2);
  CHECK((*parsed)[0].name == "lab");
  CHECK((*parsed)[0].kind == "demo");
  CHECK((*parsed)[1].name == "this-host");
  CHECK((*parsed)[1].kind == "local");
  CHECK((*parsed)[1].json == R"({"allow_exec":false,"kind":"local","name":"this-host"})");
}

TEST_CASE("the top-level key tells a sources document from a demo fleet file",
          "[adapters][agents][sources]") {
  CHECK(IsFleetSourcesDocument(R"({"sources": []})"));
  CHECK_FALSE(IsFleetSourcesDocument(R"({"nodes": [], "vms": []})"));
  CHECK_FALSE(IsFleetSourcesDocument("[]"));
  CHECK_FALSE(IsFleetSourcesDocument("not json"));
  CHECK_FALSE(IsFleetSourcesDocument(""));
}

TEST_CASE("malformed and hostile sources lists are refused naming the place",
          "[adapters][agents][sources]") {
  CHECK(ErrorOf("").find("not valid JSON") != std::string::npos);
  CHECK(ErrorOf("{\"sources\": [").find("not valid JSON") != std::string::npos);
  CHECK_FALSE(ErrorOf("[]").empty());
  CHECK(ErrorOf(R"({"sources": [], "extra": 1})").find("extra") != std::string::npos);
  CHECK(ErrorOf(R"({"sources": {}})").find("array") != std::string::npos);
  CHECK(ErrorOf(R"({"sources": []})").find("at least one") != std::string::npos);
  CHECK(ErrorOf(R"({})").find("sources") != std::string::npos);
  CHECK(ErrorOf(R"({"sources": ["demo"]})").find("fleet.sources[0]") != std::string::npos);
  CHECK(ErrorOf(R"({"sources": [{"kind": "demo"}]})").find("fleet.sources[0].name") !=
        std::string::npos);
  CHECK(ErrorOf(R"({"sources": [{"name": "a"}]})").find("fleet.sources[0].kind") !=
        std::string::npos);
  CHECK(ErrorOf(R"({"sources": [{"name": "a", "kind": 7}]})").find("kind") != std::string::npos);
  CHECK(ErrorOf(R"({"sources": [{"name": "a", "kind": "demo", "name": "b"}]})").find("duplicate") !=
        std::string::npos);
  CHECK(ErrorOf(R"({"sources": [{"name": "a", "kind": "demo"}, {"name": "a", "kind": "local"}]})")
            .find("fleet.sources[1].name \"a\" is used by an earlier source") != std::string::npos);
  for (const std::string& name :
       std::vector<std::string>{"", "A", "-a", "a b", "../etc", "a/b", "a@b", "a\\u0000b",
                                "caf\\u00e9", std::string(33, 'a')}) {
    INFO(name);
    CHECK(ErrorOf(absl::StrCat(R"({"sources": [{"kind": "demo", "name": ")", name, "\"}]}"))
              .find("fleet.sources[0].name") != std::string::npos);
  }
  for (const std::string& kind :
       std::vector<std::string>{"", "Demo", "1demo", "de mo", "de\\nmo"}) {
    INFO(kind);
    CHECK(ErrorOf(absl::StrCat(R"({"sources": [{"name": "a", "kind": ")", kind, "\"}]}"))
              .find("fleet.sources[0].kind") != std::string::npos);
  }
  std::string many = R"({"sources": [)";
  for (int i = 0; i < 33; ++i) {
    absl::StrAppend(&many, i == 0 ? "" : ",", R"({"kind": "demo", "name": "s)", i, "\"}");
  }
  CHECK(ErrorOf(many + "]}").find("more than 32") != std::string::npos);
  CHECK(ErrorOf(std::string(200, '[') + std::string(200, ']')).find("not valid JSON") !=
        std::string::npos);
  CHECK(ErrorOf(R"({"sources": [{"name": "a", "kind": "demo", "deep": )" + std::string(20, '[') +
                std::string(20, ']') + "}]}")
            .find("not valid JSON") != std::string::npos);
  CHECK(ErrorOf(std::string((1 << 20) + 1, ' ')).find("not valid JSON") != std::string::npos);
}

TEST_CASE("the registry opens known kinds and refuses unknown ones and bad settings",
          "[adapters][agents][sources]") {
  FakeClock clock;
  FleetSourceRegistry registry = Builtins(clock);
  CHECK(registry.Kinds() == std::vector<std::string>{"demo", "local"});
  CHECK(registry.Has("demo"));
  CHECK_FALSE(registry.Has("docker"));
  CHECK(absl::IsAlreadyExists(registry.Register("demo", [](const FleetSourceSpec&) {
    return absl::StatusOr<std::unique_ptr<core::Fleet>>(absl::UnknownError("unused"));
  })));
  CHECK(absl::IsInvalidArgument(registry.Register("Bad Kind", nullptr)));

  absl::StatusOr<std::unique_ptr<core::Fleet>> demo =
      registry.Open(OnlySource(R"({"sources": [{"name": "lab", "kind": "demo"}]})"));
  REQUIRE(demo.ok());
  CHECK((*demo)->GetResource("vm:101").ok());
  absl::StatusOr<std::unique_ptr<core::Fleet>> file = registry.Open(
      OnlySource(absl::StrCat(R"({"sources": [{"name": "lab", "kind": "demo", "file": ")",
                              PULSE_DEMO_FLEET_PATH, "\"}]}")));
  CHECK(file.ok());
  absl::StatusOr<std::unique_ptr<core::Fleet>> local = registry.Open(OnlySource(
      R"({"sources": [{"name": "me", "kind": "local", "allow_exec": false,
                       "allow_actions": true, "action_allowlist": ["nginx"]}]})"));
  CHECK(local.ok());

  const auto refused = [&registry](const std::string& json) {
    absl::StatusOr<std::unique_ptr<core::Fleet>> opened = registry.Open(OnlySource(json));
    REQUIRE_FALSE(opened.ok());
    return opened.status();
  };
  absl::Status unknown = refused(R"({"sources": [{"name": "d1", "kind": "docker"}]})");
  CHECK(absl::IsInvalidArgument(unknown));
  CHECK(std::string(unknown.message()) ==
        "fleet source \"d1\": unknown kind \"docker\"; known kinds: demo, local");
  absl::Status typo = refused(R"({"sources": [{"name": "lab", "kind": "demo", "flie": "x"}]})");
  CHECK(absl::IsInvalidArgument(typo));
  CHECK(std::string(typo.message()).find("fleet source \"lab\" (demo)") != std::string::npos);
  CHECK(std::string(typo.message()).find("flie") != std::string::npos);
  CHECK(absl::IsNotFound(
      refused(R"({"sources": [{"name": "lab", "kind": "demo", "file": "/nonexistent/f.json"}]})")));
  CHECK(absl::IsInvalidArgument(
      refused(R"({"sources": [{"name": "lab", "kind": "demo", "file": 3}]})")));
  CHECK(absl::IsInvalidArgument(
      refused(R"({"sources": [{"name": "me", "kind": "local", "allow_actions": "yes"}]})")));
  CHECK(absl::IsInvalidArgument(
      refused(R"({"sources": [{"name": "me", "kind": "local", "action_allowlist": "nginx"}]})")));
  CHECK(absl::IsInvalidArgument(refused(
      R"({"sources": [{"name": "me", "kind": "local", "action_allowlist": ["../../bin/sh"]}]})")));
}

}  // namespace
}  // namespace pulse::testing::agents
