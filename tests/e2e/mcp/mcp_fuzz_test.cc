// Hostile input against the real pulse-mcp binary over its pipes, in front of a real
// pulse-server: malformed, truncated, oversized (> 4 MiB), binary and non-UTF-8 lines, wrong
// types in every field, deep nesting, batches, huge ids, client responses, pipelined and
// split messages, EOF in the middle of a line, and a seeded random mutation of valid
// messages. Each line is answered or deliberately left unanswered (notifications, responses,
// blank lines); the process keeps serving until stdin closes, then exits 0; and every line it
// writes to stdout is one JSON-RPC 2.0 response in valid UTF-8.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mcp_stdio_client.h"
#include "message_mutator.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr std::size_t kMaxLine = std::size_t{4} << 20;  // pulse-mcp's line bound
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

// REQUIREs `line` to be one JSON-RPC 2.0 response object in valid UTF-8: "jsonrpc":"2.0", an id
// that is a string, a number or null, exactly one of result (an object) and error ({code: an
// integer, message: a string, data?}), and nothing else.
rapidjson::Document ParseResponse(const std::string& line) {
  INFO("stdout line (first 300 bytes): " << line.substr(0, 300));
  REQUIRE(core::IsValidUtf8(line));
  auto doc = core::ParseJson(line, core::JsonLimits{.max_bytes = 64 << 20});
  REQUIRE(doc.ok());
  REQUIRE(doc->IsObject());
  REQUIRE(core::GetString(*doc, "jsonrpc") == std::optional<std::string_view>("2.0"));
  REQUIRE(doc->HasMember("id"));
  const rapidjson::Value& id = (*doc)["id"];
  REQUIRE((id.IsString() || id.IsNumber() || id.IsNull()));
  const bool has_result = doc->HasMember("result");
  const bool has_error = doc->HasMember("error");
  REQUIRE(has_result != has_error);
  REQUIRE(doc->MemberCount() == 3);
  if (has_result) {
    REQUIRE((*doc)["result"].IsObject());
  } else {
    const rapidjson::Value& error = (*doc)["error"];
    REQUIRE(error.IsObject());
    REQUIRE(error.HasMember("code"));
    REQUIRE(error["code"].IsInt());
    REQUIRE(core::GetString(error, "message").has_value());
  }
  return *std::move(doc);
}

int CodeOf(const rapidjson::Value& reply) {
  return reply.HasMember("error") ? reply["error"]["code"].GetInt() : 0;
}

// One pulse-mcp in front of one pulse-server, both started by the constructor.
class Fuzzer {
 public:
  Fuzzer()
      : token_(MintToken(dir_.path(), "*", "mcp", "agent")),
        server_(dir_.path()),
        client_(
            {PULSE_MCP_BINARY, "--server", "http://127.0.0.1:" + std::to_string(server_.port())},
            {"PULSE_API_TOKEN=" + token_}, dir_.File("mcp-stderr.log")) {}

  McpStdioClient& client() { return client_; }

  // The next stdout line as a checked response; REQUIREs one within 20 s (so the process is
  // alive and serving).
  rapidjson::Document Next() {
    std::optional<std::string> line = client_.ReadLine();
    INFO("pulse-mcp stopped answering; its stderr is in " << dir_.File("mcp-stderr.log"));
    REQUIRE(line.has_value());
    return ParseResponse(*line);
  }

  // Writes `bytes` (any number of lines, or part of one) followed by a newline and a ping with a
  // fresh id, then reads up to that ping's reply: the replies `bytes` produced, each checked.
  std::vector<rapidjson::Document> Exchange(const std::string& bytes) {
    const std::string sentinel = "sentinel-" + std::to_string(++sentinels_);
    REQUIRE(client_.Write(bytes + "\n" + R"({"jsonrpc":"2.0","id":")" + sentinel +
                          R"(","method":"ping"})" + "\n"));
    std::vector<rapidjson::Document> replies;
    while (true) {
      rapidjson::Document reply = Next();
      if (core::GetString(reply, "id") == std::optional<std::string_view>(sentinel)) {
        REQUIRE(CodeOf(reply) == 0);
        return replies;
      }
      replies.push_back(std::move(reply));
    }
  }

  // Exchange for a line that must get exactly one reply; returns it.
  rapidjson::Document One(const std::string& line) {
    std::vector<rapidjson::Document> replies = Exchange(line);
    INFO("sent (first 300 bytes): " << line.substr(0, 300));
    REQUIRE(replies.size() == 1);
    return std::move(replies.front());
  }

  // Closes stdin; REQUIREs a clean exit and no further output.
  void Finish() {
    CHECK(client_.CloseAndWait() == 0);
    CHECK_FALSE(client_.ReadLine(absl::Milliseconds(200)).has_value());
  }

 private:
  TempDir dir_;
  std::string token_;
  ServerProcess server_;
  McpStdioClient client_;
  int sentinels_ = 0;
};

TEST_CASE("pulse-mcp answers malformed, truncated, binary and non-UTF-8 lines and keeps serving",
          "[e2e][mcp][fuzz]") {
  Fuzzer f;
  struct Case {
    std::string line;
    int code;
  };
  const std::vector<Case> cases = {
      {"this is not json", kParseError},
      {"{", kParseError},
      {"}", kParseError},
      {R"({"jsonrpc":"2.0","id":1,"method":"ping")", kParseError},  // truncated
      {R"({"jsonrpc":"2.0","id":1,"method":"pi)", kParseError},     // cut in a string
      {R"({"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0"})", kParseError},  // two
      {R"({"jsonrpc":"2.0","id":1,"method":"ping",})", kParseError},  // trailing comma
      {R"({'jsonrpc':'2.0','id':1,'method':'ping'})", kParseError},   // single quotes
      {R"({"jsonrpc":"2.0","id":NaN,"method":"ping"})", kParseError},
      {R"({"jsonrpc":"2.0","id":1e999,"method":"ping"})", kParseError},  // not a double
      {std::string("\x00\x01\x02\x03", 4), kParseError},
      {std::string(R"({"jsonrpc":"2.0","id":1,"method":"pi)") + '\0' + "ng\"}", kParseError},
      {"\xff\xfe\xfd", kParseError},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc0\x80\"}", kParseError},      // overlong NUL
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xa0\x80\"}", kParseError},  // surrogate
      {"{\"jsonrpc\":\"2.0\",\"id\":\"\xe2\x82\",\"method\":\"ping\"}", kParseError},  // cut
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\xf4\x90\x80\x80", kParseError},
      {"42", kInvalidRequest},
      {"\"ping\"", kInvalidRequest},
      {"null", kInvalidRequest},
      {"[]", kInvalidRequest},                                             // an empty batch
      {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", kInvalidRequest},  // batches are refused
      {R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}])",
       kInvalidRequest},
      {"{}", kInvalidRequest},
  };
  for (const Case& c : cases) {
    INFO("line: " << c.line);
    rapidjson::Document reply = f.One(c.line);
    CHECK(CodeOf(reply) == c.code);
    CHECK(reply["id"].IsNull());
  }

  // A byte order mark is ignored, as RFC 8259 §8.1 permits.
  rapidjson::Document bom = f.One("\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  CHECK(CodeOf(bom) == 0);
  CHECK(core::ToJsonString(bom["id"]) == "1");

  // Random binary lines: whatever the bytes, one error each, and never a reply that is not
  // JSON-RPC (ParseResponse checks every line).
  std::mt19937 random(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 50; ++i) {
    std::string garbage(static_cast<std::size_t>(1 + random() % 2000), '\0');
    for (char& c : garbage) {
      do {
        c = static_cast<char>(byte(random));
      } while (c == '\n' || c == '\r' || c == ' ' || c == '\t');
    }
    const int code = CodeOf(f.One(garbage));
    CHECK((code == kParseError || code == kInvalidRequest));
  }

  // Blank lines and lone carriage returns are skipped without a reply.
  CHECK(f.Exchange("").empty());
  CHECK(f.Exchange("   \t ").empty());
  CHECK(f.Exchange("\r").empty());
  f.Finish();
}

TEST_CASE("pulse-mcp rejects a wrong type in every field with the JSON-RPC code for it",
          "[e2e][mcp][fuzz]") {
  Fuzzer f;
  struct Case {
    std::string line;
    int code;        // 0: a result
    std::string id;  // the id the reply must carry, as compact JSON
  };
  const auto call = [](const std::string& method, const std::string& params) {
    return R"({"jsonrpc":"2.0","id":9,"method":")" + method + R"(","params":)" + params + "}";
  };
  std::vector<Case> cases = {
      // the envelope
      {R"({"jsonrpc":2,"id":1,"method":"ping"})", kInvalidRequest, "1"},
      {R"({"jsonrpc":null,"id":1,"method":"ping"})", kInvalidRequest, "1"},
      {R"({"jsonrpc":"1.0","id":1,"method":"ping"})", kInvalidRequest, "1"},
      {R"({"jsonrpc":["2.0"],"id":1,"method":"ping"})", kInvalidRequest, "1"},
      {R"({"id":1,"method":"ping"})", kInvalidRequest, "1"},
      {R"({"jsonrpc":"2.0","id":true,"method":"ping"})", kInvalidRequest, "null"},
      {R"({"jsonrpc":"2.0","id":{},"method":"ping"})", kInvalidRequest, "null"},
      {R"({"jsonrpc":"2.0","id":[1],"method":"ping"})", kInvalidRequest, "null"},
      {R"({"jsonrpc":"2.0","id":2,"method":1})", kInvalidRequest, "2"},
      {R"({"jsonrpc":"2.0","id":2,"method":null})", kInvalidRequest, "2"},
      {R"({"jsonrpc":"2.0","id":2,"method":["ping"]})", kInvalidRequest, "2"},
      {R"({"jsonrpc":"2.0","id":2,"method":{"name":"ping"}})", kInvalidRequest, "2"},
      {R"({"jsonrpc":"2.0","id":2})", kInvalidRequest, "2"},
      {R"({"jsonrpc":"2.0","id":3,"method":"ping","params":"x"})", kInvalidRequest, "3"},
      {R"({"jsonrpc":"2.0","id":3,"method":"ping","params":7})", kInvalidRequest, "3"},
      {R"({"jsonrpc":"2.0","id":3,"method":"ping","params":true})", kInvalidRequest, "3"},
      {R"({"jsonrpc":"2.0","id":3,"method":"ping","params":null})", kInvalidRequest, "3"},
      // initialize
      {call("initialize", R"({"protocolVersion":20251125})"), kInvalidParams, "9"},
      {call("initialize", R"({"protocolVersion":null})"), kInvalidParams, "9"},
      {call("initialize", R"({"protocolVersion":["2025-11-25"]})"), kInvalidParams, "9"},
      {call("initialize", R"(["2025-11-25"])"), kInvalidParams, "9"},
      {call("initialize", "{}"), kInvalidParams, "9"},
      // tools
      {call("tools/call", R"({"name":7})"), kInvalidParams, "9"},
      {call("tools/call", R"({"name":null})"), kInvalidParams, "9"},
      {call("tools/call", R"({"name":["get_fleet_context"]})"), kInvalidParams, "9"},
      {call("tools/call", R"({"name":"get_fleet_context","arguments":[]})"), kInvalidParams, "9"},
      {call("tools/call", R"({"name":"get_fleet_context","arguments":"{}"})"), kInvalidParams, "9"},
      {call("tools/call", R"({"name":"get_fleet_context","arguments":5})"), kInvalidParams, "9"},
      {call("tools/call", R"(["get_fleet_context"])"), kInvalidParams, "9"},
      {call("tools/call", R"({"name":"no_such_tool"})"), kInvalidParams, "9"},
      {call("tools/call", R"({"name":"subscribe_events"})"), kInvalidParams, "9"},
      // prompts
      {call("prompts/get", R"({"name":1})"), kInvalidParams, "9"},
      {call("prompts/get", R"({"name":"pulse_triage_fleet","arguments":[]})"), kInvalidParams, "9"},
      {call("prompts/get", R"({"name":"pulse_investigate_resource","arguments":{"resourceId":1}})"),
       kInvalidParams, "9"},
      {call("prompts/get", R"({"name":"pulse_investigate_resource","arguments":{}})"),
       kInvalidParams, "9"},
      // resources
      {call("resources/read", R"({"uri":1})"), kInvalidParams, "9"},
      {call("resources/read", R"({"uri":null})"), kInvalidParams, "9"},
      {call("resources/read", R"({"uri":"pulse://resource/"})"), kInvalidParams, "9"},
      {call("resources/read", R"({"uri":"file:///etc/passwd"})"), kInvalidParams, "9"},
      {call("resources/read", "[]"), kInvalidParams, "9"},
      // methods
      {call("tools/lists", "{}"), kMethodNotFound, "9"},
      {call("server/discover", "{}"), kMethodNotFound, "9"},
      {call("resources/subscribe", R"({"uri":"pulse://resource/x"})"), kMethodNotFound, "9"},
      // params the method does not look at are ignored
      {call("ping", R"(["x"])"), 0, "9"},
      {call("tools/list", R"({"cursor":5})"), 0, "9"},
  };
  for (const Case& c : cases) {
    INFO("line: " << c.line);
    rapidjson::Document reply = f.One(c.line);
    CHECK(CodeOf(reply) == c.code);
    CHECK(core::ToJsonString(reply["id"]) == c.id);
  }

  // Tool arguments the route cannot take are a tool result the model can correct.
  for (const char* args : {R"({})", R"({"resourceId":5})", R"({"resourceId":""})",
                           R"({"resourceId":null})", R"({"resourceId":{"id":"vm:101"}})"}) {
    INFO(args);
    rapidjson::Document reply = f.One(call(
        "tools/call", std::string(R"({"name":"get_resource_context","arguments":)") + args + "}"));
    REQUIRE(CodeOf(reply) == 0);
    CHECK(core::GetBool(reply["result"], "isError") == std::optional<bool>(true));
    CHECK(Str(reply["result"]["structuredContent"], "error") == "invalid_request");
  }
  f.Finish();
}

TEST_CASE("pulse-mcp survives deep nesting, huge ids and huge strings", "[e2e][mcp][fuzz]") {
  Fuzzer f;
  SECTION("nesting far beyond the parser's bound is a parse error") {
    for (std::size_t depth : {65u, 1000u, 100000u}) {
      INFO(depth);
      const std::string params = std::string(depth, '[') + std::string(depth, ']');
      CHECK(CodeOf(f.One(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":)" + params + "}")) ==
            kParseError);
      CHECK(CodeOf(f.One(std::string(depth, '{'))) == kParseError);  // and unterminated
    }
    // Deep tool arguments never reach pulse-server.
    const std::string deep = std::string(200, '[') + std::string(200, ']');
    CHECK(CodeOf(f.One(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":)"
                       R"("get_fleet_context","arguments":{"x":)" +
                       deep + "}}}")) == kParseError);
  }
  SECTION("ids come back as they were sent") {
    const std::vector<std::string> ids = {"0",
                                          "-1",
                                          "9223372036854775807",
                                          "-9223372036854775808",
                                          "18446744073709551615",
                                          "1.5",
                                          "-0.25",
                                          "1e300",
                                          "\"\"",
                                          "\"" + std::string(100000, 'x') + "\"",
                                          "\"\\u00e9\\n\\u0000\\\"\"",
                                          "\"\xf0\x9f\x98\x80\""};
    for (const std::string& id : ids) {
      INFO("id: " << id.substr(0, 80));
      rapidjson::Document reply = f.One(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})");
      CHECK(CodeOf(reply) == 0);
      auto sent = core::ParseJson(id, core::JsonLimits{.max_bytes = 1 << 20});
      REQUIRE(sent.ok());
      CHECK(core::ToJsonString(reply["id"]) == core::ToJsonString(*sent));
    }
    // Integers beyond 64 bits are numbers too: the reply carries the same double.
    rapidjson::Document reply =
        f.One(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"})");
    REQUIRE(reply["id"].IsNumber());
    CHECK(reply["id"].GetDouble() == 123456789012345678901234567890.0);
    // An id that is an escaped lone surrogate is answered with valid UTF-8 (ParseResponse).
    CHECK(CodeOf(f.One(R"({"jsonrpc":"2.0","id":"\udc00","method":"ping"})")) == 0);
  }
  SECTION("a 3 MiB method name is answered") {
    const std::string method(3u << 20, 'm');
    rapidjson::Document reply = f.One(R"({"jsonrpc":"2.0","id":1,"method":")" + method + "\"}");
    CHECK(CodeOf(reply) == kMethodNotFound);
  }
  f.Finish();
}

TEST_CASE("pulse-mcp drops a line over 4 MiB as it streams in and serves the next one",
          "[e2e][mcp][fuzz]") {
  Fuzzer f;
  SECTION("a valid-looking request padded past the bound") {
    const std::string head = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")";
    std::string line = head + std::string(kMaxLine + 1 - head.size() - 3, 'a') + "\"}}";
    REQUIRE(line.size() == kMaxLine + 1);
    rapidjson::Document reply = f.One(line);
    CHECK(CodeOf(reply) == kParseError);
    CHECK(reply["id"].IsNull());
  }
  SECTION("16 MiB of binary without a newline, then a request") {
    std::string blob(16u << 20, '\0');
    std::mt19937 random(11);
    for (char& c : blob) {
      c = static_cast<char>(random() % 256);
      if (c == '\n') {
        c = 'x';
      }
    }
    rapidjson::Document reply = f.One(blob);
    CHECK(CodeOf(reply) == kParseError);
  }
  rapidjson::Document ping = f.One(R"({"jsonrpc":"2.0","id":"after","method":"ping"})");
  CHECK(Str(ping, "id") == "after");
  f.Finish();
}

TEST_CASE(
    "pulse-mcp answers pipelined requests in order and never answers notifications "
    "or responses",
    "[e2e][mcp][fuzz]") {
  Fuzzer f;
  std::string burst;
  std::vector<std::string> expected_ids;
  for (int i = 0; i < 150; ++i) {
    const std::string id = "\"r" + std::to_string(i) + "\"";
    switch (i % 5) {
      case 0:
        burst += R"({"jsonrpc":"2.0","id":)" + id +
                 R"(,"method":"ping"})"
                 "\n";
        expected_ids.push_back(id);
        break;
      case 1:
        burst += R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                 "\n";
        burst += R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})"
                 "\n";
        break;
      case 2:
        burst += R"({"jsonrpc":"2.0","id":)" + id +
                 R"(,"result":{}})"
                 "\n";  // a response
        burst += R"({"jsonrpc":"2.0","id":)" + id +
                 R"(,"error":{"code":1,"message":"x"}})"
                 "\n";
        break;
      case 3:
        burst += R"({"jsonrpc":"2.0","id":)" + id +
                 R"(,"method":"tools/call","params":{"name":"get_patrol_control_status"}})"
                 "\n";
        expected_ids.push_back(id);
        break;
      default:
        burst += "garbage " + std::to_string(i) + "\n\n";
        expected_ids.push_back("null");
        break;
    }
  }
  std::vector<rapidjson::Document> replies = f.Exchange(burst);
  REQUIRE(replies.size() == expected_ids.size());
  for (std::size_t i = 0; i < replies.size(); ++i) {
    INFO(i);
    CHECK(core::ToJsonString(replies[i]["id"]) == expected_ids[i]);
  }

  // One request split across writes, with pauses so that each part is its own read.
  const std::string request = R"({"jsonrpc":"2.0","id":"split","method":"tools/list"})";
  for (std::size_t cut : {1u, 20u, 40u}) {
    REQUIRE(f.client().Write(request.substr(0, cut)));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    REQUIRE(f.client().Write(request.substr(cut) + "\n"));
    rapidjson::Document reply = f.Next();
    CHECK(Str(reply, "id") == "split");
    CHECK(reply["result"]["tools"].IsArray());
  }
  f.Finish();
}

TEST_CASE("pulse-mcp answers an unterminated last line at EOF, then exits 0", "[e2e][mcp][fuzz]") {
  SECTION("a complete request without its newline") {
    Fuzzer f;
    REQUIRE(f.client().Write(R"({"jsonrpc":"2.0","id":"eof","method":"ping"})"));
    CHECK(f.client().CloseAndWait() == 0);
    rapidjson::Document reply = f.Next();
    CHECK(Str(reply, "id") == "eof");
    CHECK(CodeOf(reply) == 0);
    CHECK_FALSE(f.client().ReadLine(absl::Milliseconds(200)).has_value());
  }
  SECTION("a message cut in the middle") {
    Fuzzer f;
    REQUIRE(f.client().Write(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                             "\n"
                             R"({"jsonrpc":"2.0","id":2,"meth)"));
    CHECK(CodeOf(f.Next()) == 0);
    CHECK(f.client().CloseAndWait() == 0);
    rapidjson::Document reply = f.Next();
    CHECK(CodeOf(reply) == kParseError);
    CHECK_FALSE(f.client().ReadLine(absl::Milliseconds(200)).has_value());
  }
  SECTION("a notification cut at EOF gets nothing") {
    Fuzzer f;
    REQUIRE(f.client().Write(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
    f.Finish();
  }
}

TEST_CASE(
    "pulse-mcp answers every line of a seeded random mutation of valid messages with "
    "JSON-RPC only",
    "[e2e][mcp][fuzz]") {
  Fuzzer f;
  MessageMutator mutator(20261130);  // a fixed seed: a failure reproduces
  constexpr int kIterations = 3000;
  int answered = 0;
  int results = 0;
  std::set<int> codes;
  for (int i = 0; i < kIterations; ++i) {
    const std::string line = mutator.Next();
    INFO("iteration " << i << ", line: " << line.substr(0, 300));
    std::vector<rapidjson::Document> replies = f.Exchange(line);
    REQUIRE(replies.size() <= 1);  // one line is at most one message, so at most one reply
    for (const rapidjson::Document& reply : replies) {
      ++answered;
      const int code = CodeOf(reply);
      results += code == 0 ? 1 : 0;
      codes.insert(code);
      if (code != 0) {
        // Only the codes of the protocol, never one made up.
        CHECK((code == kParseError || code == kInvalidRequest || code == kMethodNotFound ||
               code == kInvalidParams || code == -32603));
      }
    }
  }
  // The mutations reached past the parser into the methods (results and method errors), so the
  // loop exercised more than the JSON parser.
  INFO("answered " << answered << " of " << kIterations << ", " << results << " results");
  CHECK(answered > kIterations / 2);
  CHECK(results > 0);
  CHECK(codes.count(kParseError) == 1);
  CHECK(codes.count(kInvalidParams) + codes.count(kMethodNotFound) + codes.count(kInvalidRequest) >
        0);
  f.Finish();
}

}  // namespace
}  // namespace pulse::testing::e2e
