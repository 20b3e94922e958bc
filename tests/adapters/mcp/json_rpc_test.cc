#include "pulse/adapters/mcp/json_rpc.h"

#include <catch2/catch.hpp>

namespace pulse::adapters::mcp {
namespace {

TEST_CASE("a request keeps its id and params, a notification has no id",
          "[adapters][mcp][jsonrpc]") {
  auto request = DecodeMessage(R"({"jsonrpc":"2.0","id":"a-1","method":"ping","params":{"x":1}})");
  REQUIRE(request.request.has_value());
  CHECK(request.request->method == "ping");
  CHECK(request.request->id_json == std::optional<std::string>(R"("a-1")"));
  CHECK(request.request->params.IsObject());

  auto numeric = DecodeMessage(R"({"jsonrpc":"2.0","id":42,"method":"ping"})");
  REQUIRE(numeric.request.has_value());
  CHECK(numeric.request->id_json == std::optional<std::string>("42"));

  for (const char* line : {R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                           R"({"jsonrpc":"2.0","id":null,"method":"x"})"}) {
    auto notification = DecodeMessage(line);
    REQUIRE(notification.request.has_value());
    CHECK(notification.request->notification());
  }
}

TEST_CASE("malformed lines become the matching JSON-RPC error", "[adapters][mcp][jsonrpc]") {
  struct Case {
    const char* line;
    int code;
    const char* id;
  };
  const Case cases[] = {
      {"{not json", kParseError, "null"},
      {R"({"jsonrpc":"2.0","id":1,"method":"ping")", kParseError, "null"},  // truncated
      {"[]", kInvalidRequest, "null"},
      {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", kInvalidRequest, "null"},
      {"42", kInvalidRequest, "null"},
      {R"({"jsonrpc":"1.0","id":3,"method":"ping"})", kInvalidRequest, "3"},
      {R"({"id":4,"method":"ping"})", kInvalidRequest, "4"},
      {R"({"jsonrpc":"2.0","id":5})", kInvalidRequest, "5"},
      {R"({"jsonrpc":"2.0","id":6,"method":7})", kInvalidRequest, "6"},
      {R"({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})", kInvalidRequest, "null"},
      {R"({"jsonrpc":"2.0","id":true,"method":"ping"})", kInvalidRequest, "null"},
      {R"({"jsonrpc":"2.0","id":8,"method":"ping","params":"x"})", kInvalidRequest, "8"},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    auto decoded = DecodeMessage(c.line);
    REQUIRE(decoded.error.has_value());
    CHECK_FALSE(decoded.request.has_value());
    CHECK(decoded.error->code == c.code);
    CHECK(decoded.error->id_json == c.id);
  }
}

TEST_CASE("replies are single-line JSON-RPC objects", "[adapters][mcp][jsonrpc]") {
  CHECK(EncodeResult("7", "{}") == R"({"jsonrpc":"2.0","id":7,"result":{}})");
  const std::string error = EncodeError("\"x\"", kMethodNotFound, "method not found:\nfoo");
  CHECK(error ==
        R"({"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"method not found:\nfoo"}})");
  CHECK(error.find('\n') == std::string::npos);
}

}  // namespace
}  // namespace pulse::adapters::mcp
