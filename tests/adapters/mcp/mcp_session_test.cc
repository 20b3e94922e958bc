#include "pulse/adapters/mcp/mcp_session.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "fake_pulse_caller.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"

namespace pulse::adapters::mcp {
namespace {

using pulse::testing::FakePulseCaller;

// Splits output into lines and REQUIREs each to be a JSON-RPC 2.0 response object.
std::vector<rapidjson::Document> Replies(const std::string& out) {
  std::vector<rapidjson::Document> replies;
  if (!out.empty()) {
    REQUIRE(out.back() == '\n');
  }
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    const std::string line = out.substr(start, end - start);
    auto doc = core::ParseJson(line, core::JsonLimits{.max_bytes = 64 << 20});
    INFO(line);
    REQUIRE(doc.ok());
    REQUIRE(doc->IsObject());
    CHECK(core::GetString(*doc, "jsonrpc") == std::optional<std::string_view>("2.0"));
    CHECK(doc->HasMember("id"));
    CHECK(doc->HasMember("result") != doc->HasMember("error"));
    replies.push_back(*std::move(doc));
    start = end + 1;
  }
  return replies;
}

int Code(const rapidjson::Document& reply) {
  return reply.HasMember("error") ? reply["error"]["code"].GetInt() : 0;
}

struct Fixture {
  FakePulseCaller caller;
  McpServer server{caller, *McpSurfaceFromManifest(core::ManifestJson()), "1"};
  McpSession session{server};
};

TEST_CASE(
    "interleaved requests and notifications split at every byte get one reply each, in "
    "order",
    "[adapters][mcp][session]") {
  Fixture f;
  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\r\n\n"
      R"({"jsonrpc":"2.0","id":"two","method":"ping"})"
      "\n"
      R"({"jsonrpc":"2.0","id":1,"result":{}})"  // a client's response: not answered
      "\n"
      R"({"jsonrpc":"2.0","id":3,"method":"server/discover"})"
      "\n"
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_fleet_context"}})"
      "\n";
  std::string out;
  for (char c : input) {
    out += f.session.Feed(std::string_view(&c, 1));
  }
  out += f.session.Finish();
  auto replies = Replies(out);
  REQUIRE(replies.size() == 4);
  CHECK(replies[0]["id"].GetInt() == 1);
  CHECK(std::string(replies[0]["result"]["protocolVersion"].GetString()) == "2025-03-26");
  CHECK(std::string(replies[1]["id"].GetString()) == "two");
  CHECK(Code(replies[2]) == kMethodNotFound);
  CHECK(replies[3]["id"].GetInt() == 4);
  CHECK(f.caller.requests.size() == 1);
}

TEST_CASE("garbage, truncated and binary lines cost one error each and the loop goes on",
          "[adapters][mcp][session]") {
  Fixture f;
  std::string input;
  input += "hello\n";
  input += R"({"jsonrpc":"2.0","id":1,"method":"ping")"
           "\n";  // truncated
  input += std::string("\x00\xff\xfe{\x01", 5) + "\n";
  input += "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":" + std::string(100, '[') +
           "\n";                                                         // deep and unterminated
  input += "[" + std::string(200, '[') + std::string(200, ']') + "]\n";  // too deep
  input += R"({"jsonrpc":"2.0","id":9,"method":"ping"})"
           "\n";
  auto replies = Replies(f.session.Feed(input));
  REQUIRE(replies.size() == 6);
  for (std::size_t i = 0; i < 5; ++i) {
    INFO(i);
    CHECK((Code(replies[i]) == kParseError || Code(replies[i]) == kInvalidRequest));
    CHECK(replies[i]["id"].IsNull());
  }
  CHECK(Code(replies[5]) == 0);
  CHECK(replies[5]["id"].GetInt() == 9);
}

TEST_CASE("a line over 4 MiB is refused without buffering it, and the next line is served",
          "[adapters][mcp][session]") {
  Fixture f;
  std::string out;
  const std::string prefix = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")";
  out += f.session.Feed(prefix);
  const std::string chunk(64 * 1024, 'a');
  std::size_t fed = prefix.size();
  while (fed <= kMaxLineBytes + chunk.size()) {
    out += f.session.Feed(chunk);
    fed += chunk.size();
    REQUIRE(f.session.buffered() <= kMaxLineBytes);
  }
  CHECK(out.empty());  // nothing is answered before the line ends
  out += f.session.Feed(
      "\"}}\n"
      R"({"jsonrpc":"2.0","id":2,"method":"ping"})"
      "\n");
  auto replies = Replies(out);
  REQUIRE(replies.size() == 2);
  CHECK(Code(replies[0]) == kParseError);
  CHECK(replies[0]["id"].IsNull());
  CHECK(Code(replies[1]) == 0);
  CHECK(replies[1]["id"].GetInt() == 2);
}

TEST_CASE("a line of exactly 4 MiB is still parsed", "[adapters][mcp][session]") {
  Fixture f;
  const std::string head = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")";
  const std::string tail = "\"}}";
  const std::string line =
      head + std::string(kMaxLineBytes - head.size() - tail.size(), 'b') + tail;
  REQUIRE(line.size() == kMaxLineBytes);
  auto replies = Replies(f.session.Feed(line + "\n"));
  REQUIRE(replies.size() == 1);
  CHECK(Code(replies[0]) == 0);
}

TEST_CASE("a last line without a newline is still answered at end of input",
          "[adapters][mcp][session]") {
  Fixture f;
  CHECK(f.session.Feed(R"({"jsonrpc":"2.0","id":5,"method":"ping"})").empty());
  auto replies = Replies(f.session.Finish());
  REQUIRE(replies.size() == 1);
  CHECK(replies[0]["id"].GetInt() == 5);
  CHECK(f.session.Finish().empty());
}

}  // namespace
}  // namespace pulse::adapters::mcp
