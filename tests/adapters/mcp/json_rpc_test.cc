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

TEST_CASE("a line that is not UTF-8 is a parse error, whatever it holds",
          "[adapters][mcp][jsonrpc]") {
  for (const std::string& line :
       {std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\xffng\"}"),
        std::string("{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"method\":\"ping\"}"),
        std::string("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":"
                    "\"\xed\xa0\x80\"}}")}) {
    auto decoded = DecodeMessage(line);
    REQUIRE(decoded.error.has_value());
    CHECK(decoded.error->code == kParseError);
    CHECK(decoded.error->id_json == "null");
  }
}

TEST_CASE("an id is echoed as valid UTF-8 JSON, exactly when it can be",
          "[adapters][mcp][jsonrpc]") {
  auto surrogate = DecodeMessage(R"({"jsonrpc":"2.0","id":"a\udc00b","method":"ping"})");
  REQUIRE(surrogate.request.has_value());
  // The escaped lone surrogate decodes to bytes that are not UTF-8; each becomes U+FFFD.
  CHECK(surrogate.request->id_json ==
        std::optional<std::string>("\"a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                   "b\""));
  auto big = DecodeMessage(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})");
  REQUIRE(big.request.has_value());
  CHECK(big.request->id_json == std::optional<std::string>("18446744073709551615"));
  auto negative = DecodeMessage(R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"})");
  REQUIRE(negative.request.has_value());
  CHECK(negative.request->id_json == std::optional<std::string>("-9223372036854775808"));
  auto unicode = DecodeMessage("{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\xa9\\n\",\"method\":\"ping\"}");
  REQUIRE(unicode.request.has_value());
  CHECK(unicode.request->id_json == std::optional<std::string>("\"\xc3\xa9\\n\""));
}

TEST_CASE("a response from the client is neither executed nor answered",
          "[adapters][mcp][jsonrpc]") {
  for (const char* line : {R"({"jsonrpc":"2.0","id":1,"result":{}})",
                           R"({"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}})",
                           R"({"id":[],"result":5})"}) {
    INFO(line);
    auto decoded = DecodeMessage(line);
    CHECK_FALSE(decoded.request.has_value());
    CHECK_FALSE(decoded.error.has_value());
  }
  // With a method it is a request, whatever else it carries.
  CHECK(DecodeMessage(R"({"jsonrpc":"2.0","id":3,"method":"ping","result":{}})").request);
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
