#include "pulse/adapters/mcp/mcp_server.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "fake_pulse_caller.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "rapidjson/schema.h"

namespace pulse::adapters::mcp {
namespace {

using pulse::testing::FakePulseCaller;

// The text of a string value ("<not a string>" otherwise).
std::string S(const rapidjson::Value& v) { return v.IsString() ? v.GetString() : "<not a string>"; }

McpSurface ServedSurface() {
  auto surface = McpSurfaceFromManifest(core::ManifestJson());
  REQUIRE(surface.ok());
  return *std::move(surface);
}

struct Fixture {
  FakePulseCaller caller;
  McpServer server{caller, ServedSurface(), "9.9.9"};

  // Sends `line` and parses the one reply it must produce.
  rapidjson::Document Rpc(const std::string& line) {
    std::optional<std::string> reply = server.HandleLine(line);
    REQUIRE(reply.has_value());
    CHECK(reply->find('\n') == std::string::npos);
    auto doc = core::ParseJson(*reply, core::JsonLimits{.max_bytes = 64 << 20});
    REQUIRE(doc.ok());
    REQUIRE(doc->IsObject());
    CHECK(core::GetString(*doc, "jsonrpc") == std::optional<std::string_view>("2.0"));
    return *std::move(doc);
  }
  rapidjson::Document Call(const std::string& method, const std::string& params_json) {
    return Rpc(R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params_json +
               "}");
  }
  // The error code of a reply (0 when it is a result).
  static int Code(const rapidjson::Document& reply) {
    const rapidjson::Value* error = core::GetMember(reply, "error");
    return error == nullptr ? 0 : static_cast<int>(core::GetInt64(*error, "code").value_or(0));
  }
  static std::string Message(const rapidjson::Document& reply) {
    return std::string(core::GetString(reply["error"], "message").value_or(""));
  }
};

TEST_CASE("initialize answers with the client's version when supported, else the newest",
          "[adapters][mcp][server]") {
  Fixture f;
  for (std::string_view version : kSupportedProtocolVersions) {
    auto reply = f.Call("initialize", R"({"protocolVersion":")" + std::string(version) +
                                          R"(","capabilities":{},"clientInfo":{"name":"t"}})");
    REQUIRE(Fixture::Code(reply) == 0);
    CHECK(core::GetString(reply["result"], "protocolVersion") ==
          std::optional<std::string_view>(version));
  }
  for (const char* other : {"1999-01-01", "2025-06-19", ""}) {
    auto reply = f.Call("initialize", std::string(R"({"protocolVersion":")") + other + "\"}");
    REQUIRE(Fixture::Code(reply) == 0);
    CHECK(core::GetString(reply["result"], "protocolVersion") ==
          std::optional<std::string_view>("2025-11-25"));
  }
  auto reply = f.Call("initialize", R"({"protocolVersion":"2025-06-18"})");
  const rapidjson::Value& result = reply["result"];
  CHECK(core::GetString(result["serverInfo"], "name") ==
        std::optional<std::string_view>("pulse-mcp"));
  CHECK(core::GetString(result["serverInfo"], "version") ==
        std::optional<std::string_view>("9.9.9"));
  CHECK(result["capabilities"].HasMember("tools"));
  CHECK(result["capabilities"].HasMember("prompts"));
  CHECK(result["capabilities"].HasMember("resources"));
  CHECK(core::GetString(result, "instructions").has_value());
  CHECK(f.server.protocol_version() == "2025-06-18");
}

TEST_CASE("initialize without a protocol version is invalid params", "[adapters][mcp][server]") {
  Fixture f;
  CHECK(Fixture::Code(f.Call("initialize", "{}")) == kInvalidParams);
  CHECK(Fixture::Code(f.Call("initialize", R"({"protocolVersion":20250618})")) == kInvalidParams);
  CHECK(Fixture::Code(f.Call("initialize", R"(["2025-06-18"])")) == kInvalidParams);
  CHECK(Fixture::Code(f.Rpc(R"({"jsonrpc":"2.0","id":1,"method":"initialize"})")) ==
        kInvalidParams);
}

TEST_CASE("ping answers an empty object and keeps the id", "[adapters][mcp][server]") {
  Fixture f;
  auto reply = f.Rpc(R"({"jsonrpc":"2.0","id":"p-9","method":"ping"})");
  CHECK(core::GetString(reply, "id") == std::optional<std::string_view>("p-9"));
  REQUIRE(reply.HasMember("result"));
  CHECK(reply["result"].IsObject());
  CHECK(reply["result"].MemberCount() == 0);
}

TEST_CASE("unknown methods are -32601 and notifications get no reply", "[adapters][mcp][server]") {
  Fixture f;
  for (const char* method : {"server/discover", "tools/delete", "completion/complete", ""}) {
    auto reply = f.Rpc(std::string(R"({"jsonrpc":"2.0","id":3,"method":")") + method + "\"}");
    CHECK(Fixture::Code(reply) == kMethodNotFound);
    CHECK(Fixture::Message(reply) == std::string("method not found: ") + method);
    CHECK(core::GetInt64(reply, "id") == std::optional<std::int64_t>(3));
  }
  CHECK_FALSE(f.server.HandleLine(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  CHECK_FALSE(f.server.HandleLine(R"({"jsonrpc":"2.0","method":"server/discover"})"));
  CHECK_FALSE(f.server.HandleLine(
      R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_fleet_context"}})"));
  CHECK(f.caller.requests.empty());  // a notification is never executed as a tool call
  CHECK_FALSE(f.server.HandleLine(""));
  CHECK_FALSE(f.server.HandleLine("  \t"));
}

TEST_CASE("parse errors and invalid requests are answered with id null",
          "[adapters][mcp][server]") {
  Fixture f;
  auto parse = f.Rpc(R"({"jsonrpc":"2.0","id":1,"method":"pi)");
  CHECK(Fixture::Code(parse) == kParseError);
  CHECK(parse["id"].IsNull());
  auto invalid = f.Rpc(R"({"jsonrpc":"2.0","id":[1],"method":"ping"})");
  CHECK(Fixture::Code(invalid) == kInvalidRequest);
  CHECK(invalid["id"].IsNull());
  auto oversized = core::ParseJson(f.server.OversizedLineReply());
  REQUIRE(oversized.ok());
  CHECK(Fixture::Code(*oversized) == kParseError);
}

TEST_CASE("tools/list offers the pulse_mcp contract and never subscribe_events",
          "[adapters][mcp][server][tools]") {
  Fixture f;
  auto reply = f.Call("tools/list", "{}");
  REQUIRE(Fixture::Code(reply) == 0);
  const rapidjson::Value& tools = reply["result"]["tools"];
  REQUIRE(tools.IsArray());
  std::vector<std::string> names;
  for (const rapidjson::Value& tool : tools.GetArray()) {
    names.emplace_back(core::GetString(tool, "name").value_or(""));
    CHECK(tool["inputSchema"].IsObject());
    CHECK(core::GetString(tool["inputSchema"], "type") ==
          std::optional<std::string_view>("object"));
    CHECK(tool["annotations"].HasMember("readOnlyHint"));
    CHECK(tool["_meta"].HasMember("pulse.capability"));
    CHECK(core::GetString(tool, "description").value_or("").find("Pulse capability metadata:") !=
          std::string_view::npos);
  }
  CHECK(names == core::McpToolCapabilityNames());
  CHECK(std::find(names.begin(), names.end(), "subscribe_events") == names.end());
  auto plan = std::find(names.begin(), names.end(), "plan_action");
  REQUIRE(plan != names.end());
  const rapidjson::Value& plan_tool = tools[static_cast<rapidjson::SizeType>(plan - names.begin())];
  CHECK(plan_tool["annotations"]["destructiveHint"].GetBool());
}

TEST_CASE("each outputSchema admits the manifest's result or the error envelope of a refusal",
          "[adapters][mcp][server][tools]") {
  Fixture f;
  auto reply = f.Call("tools/list", "{}");
  REQUIRE(Fixture::Code(reply) == 0);
  const auto accepts = [](const rapidjson::Value& schema, const char* instance_json) {
    rapidjson::Document schema_copy;
    schema_copy.CopyFrom(schema, schema_copy.GetAllocator());
    rapidjson::SchemaDocument compiled(schema_copy);
    rapidjson::SchemaValidator validator(compiled);
    auto instance = core::ParseJson(instance_json);
    REQUIRE(instance.ok());
    return instance->Accept(validator);
  };
  int with_schema = 0;
  for (const rapidjson::Value& tool : reply["result"]["tools"].GetArray()) {
    const std::string name = S(tool["name"]);
    INFO(name);
    const core::AgentCapability* capability = core::FindAgentCapability(name);
    REQUIRE(capability != nullptr);
    if (capability->output_schema.empty()) {
      CHECK_FALSE(tool.HasMember("outputSchema"));
      continue;
    }
    ++with_schema;
    const rapidjson::Value& schema = tool["outputSchema"];
    CHECK(S(schema["type"]) == "object");  // MCP requires an object schema at the root
    REQUIRE(schema["anyOf"].IsArray());
    REQUIRE(schema["anyOf"].Size() == 2);
    auto manifest = core::ParseJson(capability->output_schema);
    REQUIRE(manifest.ok());
    CHECK(core::CanonicalJson(schema["anyOf"][0]) == core::CanonicalJson(*manifest));
    CHECK(accepts(schema, R"({"error":"missing_scope","message":"needs ai:execute",
                             "requiredScope":"ai:execute","details":{"requiredScope":"ai:execute"}})"));
    CHECK(
        accepts(schema, R"({"error":"invalid_request","message":"m","details":{"a":"required"}})"));
    CHECK_FALSE(accepts(schema, "{}"));
    CHECK_FALSE(accepts(schema, R"({"message":"no code"})"));
    CHECK_FALSE(accepts(schema, R"({"error":"","message":"empty code"})"));
  }
  CHECK(with_schema > 0);
}

TEST_CASE("a paged list's next cursor reaches the agent in structuredContent and in the text",
          "[adapters][mcp][server][tools]") {
  Fixture f;
  std::optional<std::string> cursor = "c1.abc";
  std::string target;
  f.caller.SetHandler([&](const PulseRequest& request) -> absl::StatusOr<PulseReply> {
    target = request.target;
    return PulseReply{200, R"([{"id":"f-1"}])", "application/json", cursor};
  });
  auto first = f.Call("tools/call", R"({"name":"list_findings","arguments":{"limit":1}})");
  REQUIRE(Fixture::Code(first) == 0);
  const rapidjson::Value& result = first["result"];
  CHECK_FALSE(result.HasMember("isError"));
  CHECK(S(result["structuredContent"]["next_cursor"]) == "c1.abc");
  CHECK(result["structuredContent"]["count"].GetInt() == 1);
  REQUIRE(result["content"].Size() == 2);
  CHECK(S(result["content"][1]["text"]).find("cursor \"c1.abc\"") != std::string::npos);
  // The agent sends it back as the cursor argument; the route gets it as ?cursor=.
  auto second =
      f.Call("tools/call", R"({"name":"list_findings","arguments":{"limit":1,"cursor":"c1.abc"}})");
  REQUIRE(Fixture::Code(second) == 0);
  CHECK(target.find("cursor=c1.abc") != std::string::npos);
  // The last page has none: one text item and no next_cursor.
  cursor.reset();
  auto last = f.Call("tools/call", R"({"name":"list_findings","arguments":{"limit":1}})");
  REQUIRE(Fixture::Code(last) == 0);
  CHECK_FALSE(last["result"]["structuredContent"].HasMember("next_cursor"));
  CHECK(last["result"]["content"].Size() == 1);
}

TEST_CASE("tools/call refuses subscribe_events and unknown tools without calling the server",
          "[adapters][mcp][server][tools]") {
  Fixture f;
  auto stream = f.Call("tools/call", R"({"name":"subscribe_events","arguments":{}})");
  CHECK(Fixture::Code(stream) == kInvalidParams);
  CHECK(Fixture::Message(stream) == "unknown tool: subscribe_events");
  CHECK(Fixture::Code(f.Call("tools/call", R"({"name":"rm_rf"})")) == kInvalidParams);
  CHECK(Fixture::Message(f.Call("tools/call", R"({"name":"  "})")) == "tool name is required");
  CHECK(Fixture::Code(f.Call("tools/call", R"({"arguments":{}})")) == kInvalidParams);
  CHECK(Fixture::Code(f.Call("tools/call", R"({"name":"get_fleet_context","arguments":[1]})")) ==
        kInvalidParams);
  CHECK(Fixture::Code(f.Rpc(R"({"jsonrpc":"2.0","id":1,"method":"tools/call"})")) ==
        kInvalidParams);
  CHECK(Fixture::Code(f.Call("tools/call", R"({"name":5,"arguments":{}})")) == kInvalidParams);
  CHECK(Fixture::Code(f.Call("tools/call", R"({"name":"get_fleet_context","arguments":"x"})")) ==
        kInvalidParams);
  CHECK(f.caller.requests.empty());
}

TEST_CASE("arguments a tool cannot take are an isError result the model can correct",
          "[adapters][mcp][server][tools]") {
  Fixture f;
  SECTION("a missing path argument") {
    auto reply = f.Call("tools/call", R"({"name":"get_resource_context","arguments":{}})");
    REQUIRE(Fixture::Code(reply) == 0);
    const rapidjson::Value& result = reply["result"];
    CHECK(result["isError"].GetBool());
    const rapidjson::Value& envelope = result["structuredContent"];
    CHECK(S(envelope["error"]) == "invalid_request");
    CHECK(S(envelope["message"]).find("missing path argument(s): resourceId") != std::string::npos);
    CHECK(S(envelope["details"]["resourceId"]) == "required");
    // The text is the same envelope, for clients that show only content.
    auto text = core::ParseJson(S(result["content"][0]["text"]));
    REQUIRE(text.ok());
    CHECK(core::ToJsonString(*text) == core::ToJsonString(envelope));
  }
  SECTION("path arguments of the wrong type, or empty") {
    auto reply =
        f.Call("tools/call",
               R"({"name":"decide_action","arguments":{"actionId":7,"outcome":"approved"}})");
    CHECK(reply["result"]["isError"].GetBool());
    CHECK(S(reply["result"]["structuredContent"]["details"]["actionId"]) ==
          "must be a non-empty string");
    auto empty =
        f.Call("tools/call", R"({"name":"get_operator_state","arguments":{"resourceId":""}})");
    CHECK(empty["result"]["isError"].GetBool());
    CHECK(S(empty["result"]["structuredContent"]["details"]["resourceId"]) ==
          "must be a non-empty string");
  }
  CHECK(f.caller.requests.empty());  // nothing that cannot be routed reaches pulse-server
}

TEST_CASE("tools/call is one HTTP request projected from the manifest route",
          "[adapters][mcp][server][tools]") {
  Fixture f;
  SECTION("path ids are percent-encoded per segment") {
    auto reply =
        f.Call("tools/call",
               R"({"name":" get_resource_context ","arguments":{"resourceId":"node/a b:1"}})");
    REQUIRE(Fixture::Code(reply) == 0);
    REQUIRE(f.caller.requests.size() == 1);
    CHECK(f.caller.requests[0].method == "GET");
    CHECK(f.caller.requests[0].target == "/api/agent/resource-context/node%2Fa%20b%3A1");
    CHECK_FALSE(f.caller.requests[0].body_json.has_value());
  }
  SECTION("booleans and integers reach the query string") {
    REQUIRE(Fixture::Code(f.Call("tools/call", R"({"name":"list_findings","arguments":
        {"include_resolved":true,"limit":5,"resource_id":"vm 1"}})")) == 0);
    REQUIRE(f.caller.requests.size() == 1);
    CHECK(f.caller.requests[0].target ==
          "/api/ai/patrol/findings?include_resolved=true&limit=5&resource_id=vm%201");
  }
  SECTION("methods with a body send the remaining arguments as JSON") {
    REQUIRE(Fixture::Code(f.Call("tools/call", R"({"name":"decide_action","arguments":
        {"actionId":"act_1","decision":"approve","_approval_id":"x"}})")) == 0);
    REQUIRE(f.caller.requests.size() == 1);
    CHECK(f.caller.requests[0].method == "POST");
    CHECK(f.caller.requests[0].target == "/api/actions/act_1/decision");
    REQUIRE(f.caller.requests[0].body_json.has_value());
    auto body = core::ParseJson(*f.caller.requests[0].body_json);
    REQUIRE(body.ok());
    CHECK(core::GetString(*body, "decision") == std::optional<std::string_view>("approve"));
    CHECK_FALSE(body->HasMember("actionId"));
    CHECK_FALSE(body->HasMember("_approval_id"));
  }
}

TEST_CASE("a tool result carries the reply, and a refusal is isError with the stable code",
          "[adapters][mcp][server][tools]") {
  Fixture f;
  const std::string call = R"({"name":"get_fleet_context","arguments":{}})";
  SECTION("a JSON object fills structuredContent") {
    f.caller.Answer(200, "{\n  \"resources\": [],\n  \"big\": 12345678901234567\n}");
    auto reply = f.Call("tools/call", call);
    const rapidjson::Value& result = reply["result"];
    CHECK_FALSE(result.HasMember("isError"));
    CHECK(S(result["content"][0]["type"]) == "text");
    CHECK(S(result["content"][0]["text"]) ==
          "{\n  \"resources\": [],\n  \"big\": 12345678901234567\n}");
    CHECK(result["structuredContent"]["big"].GetInt64() == 12345678901234567);
  }
  SECTION("a compact reply is passed on byte for byte, one line, in structuredContent") {
    const std::string body =
        R"({"resources":[{"canonicalId":"vm:101","ratio":0.25,"name":"caf\u00e9 é"}],)"
        R"("generatedAt":"2027-01-15T08:00:00Z"})";
    f.caller.Answer(200, body);
    std::optional<std::string> line = f.server.HandleLine(
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_fleet_context"}})");
    REQUIRE(line.has_value());
    CHECK(line->find('\n') == std::string::npos);
    CHECK(line->find(R"(,"structuredContent":)" + body + "}}") != std::string::npos);
    f.caller.Answer(200, R"([{"id":1},{"id":2}])");
    line = f.server.HandleLine(
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_fleet_context"}})");
    REQUIRE(line.has_value());
    CHECK(line->find(R"("structuredContent":{"items":[{"id":1},{"id":2}],"count":2})") !=
          std::string::npos);
  }
  SECTION("ill-formed UTF-8 in a reply is repaired in structuredContent and the text") {
    f.caller.Answer(200, "{\"name\":\"bad \xFF byte\"}");
    std::optional<std::string> line = f.server.HandleLine(
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_fleet_context"}})");
    REQUIRE(line.has_value());
    CHECK(core::IsValidUtf8(*line));
    auto reply = f.Call("tools/call", call);
    CHECK(S(reply["result"]["structuredContent"]["name"]) == "bad \xEF\xBF\xBD byte");
  }
  SECTION("a JSON array is wrapped as items and count") {
    f.caller.Answer(200, R"([{"id":1},{"id":2}])");
    auto reply = f.Call("tools/call", call);
    CHECK(reply["result"]["structuredContent"]["count"].GetInt() == 2);
    CHECK(reply["result"]["structuredContent"]["items"].Size() == 2);
  }
  SECTION("a non-2xx envelope is an error result with its code and message") {
    f.caller.Answer(403, R"({"error":"missing_scope","message":"needs ai:execute"})");
    auto reply = f.Call("tools/call", call);
    REQUIRE(Fixture::Code(reply) == 0);
    const rapidjson::Value& result = reply["result"];
    CHECK(result["isError"].GetBool());
    CHECK(S(result["structuredContent"]["error"]) == "missing_scope");
    CHECK(S(result["structuredContent"]["message"]) == "needs ai:execute");
  }
  SECTION("a non-JSON failure still gets a code from the closed vocabulary") {
    f.caller.Answer(502, "Bad Gateway");
    auto reply = f.Call("tools/call", call);
    CHECK(reply["result"]["isError"].GetBool());
    CHECK(S(reply["result"]["structuredContent"]["error"]) == "service_unavailable");
    CHECK(S(reply["result"]["structuredContent"]["message"]) ==
          "pulse-server answered HTTP 502 without an error envelope");
    CHECK(S(reply["result"]["content"][0]["text"]) == "Bad Gateway");
  }
  SECTION("each envelope-less status maps to its transport code") {
    const std::vector<std::pair<int, std::string>> cases = {
        {401, "unauthorized"},
        {404, "route_not_found"},
        {405, "method_not_allowed"},
        {413, "request_too_large"},
        {414, "uri_too_long"},
        {400, "invalid_request"},
        {418, "invalid_request"},
        {500, "internal_error"},
        {503, "service_unavailable"},
        {504, "service_unavailable"},
        {599, "internal_error"},
        // JSON, but not an envelope: an array, or an object without a string "error"
        {409, "invalid_request"}};
    for (const auto& [status, code] : cases) {
      f.caller.Answer(status, status == 409 ? R"({"error":7})" : "<html>oops</html>");
      auto reply = f.Call("tools/call", call);
      INFO(status);
      CHECK(reply["result"]["isError"].GetBool());
      const std::string got = S(reply["result"]["structuredContent"]["error"]);
      CHECK(got == code);
      CHECK(core::ParseAgentErrorCode(got).has_value());
    }
  }
  SECTION("no reply at all is an isError result naming the route") {
    f.caller.SetHandler([](const PulseRequest&) -> absl::StatusOr<PulseReply> {
      return absl::UnavailableError("Connection refused");
    });
    auto reply = f.Call("tools/call", call);
    REQUIRE(Fixture::Code(reply) == 0);
    CHECK(reply["result"]["isError"].GetBool());
    CHECK(S(reply["result"]["structuredContent"]["error"]) == "service_unavailable");
    CHECK(S(reply["result"]["structuredContent"]["message"]) ==
          "call Pulse: GET /api/agent/fleet-context: Connection refused");
  }
}

TEST_CASE("prompts come from the shared workflow catalogue", "[adapters][mcp][server][prompts]") {
  Fixture f;
  auto list = f.Call("prompts/list", "{}");
  REQUIRE(Fixture::Code(list) == 0);
  std::vector<std::string> names;
  for (const rapidjson::Value& prompt : list["result"]["prompts"].GetArray()) {
    names.emplace_back(core::GetString(prompt, "name").value_or(""));
  }
  CHECK(std::find(names.begin(), names.end(), "pulse_investigate_resource") != names.end());
  CHECK(std::find(names.begin(), names.end(), "pulse_triage_fleet") != names.end());

  auto got = f.Call("prompts/get",
                    R"({"name":"pulse_investigate_resource","arguments":{"resourceId":"vm-101"}})");
  REQUIRE(Fixture::Code(got) == 0);
  const rapidjson::Value& message = got["result"]["messages"][0];
  CHECK(S(message["role"]) == "user");
  const std::string text = message["content"]["text"].GetString();
  CHECK(text.find("vm-101") != std::string::npos);
  CHECK(text.find("pulse://resource/") != std::string::npos);  // the MCP rendering

  auto missing = f.Call("prompts/get", R"({"name":"pulse_investigate_resource"})");
  CHECK(Fixture::Code(missing) == kInvalidParams);
  CHECK(Fixture::Message(missing) == "prompt argument resourceId is required");
  auto unknown = f.Call("prompts/get", R"({"name":"pulse_nope"})");
  CHECK(Fixture::Code(unknown) == kInvalidParams);
  CHECK(Fixture::Message(unknown) == "unknown prompt: pulse_nope");
  CHECK(Fixture::Code(f.Call("prompts/get", R"({"name":"pulse_investigate_resource",
      "arguments":{"resourceId":7}})")) == kInvalidParams);
  CHECK(f.caller.requests.empty());
}

TEST_CASE("resources are the fleet's, read through pulse://resource/<id>",
          "[adapters][mcp][server][resources]") {
  Fixture f;
  f.caller.SetHandler([](const PulseRequest& request) -> absl::StatusOr<PulseReply> {
    if (request.target == "/api/agent/fleet-context") {
      return PulseReply{200, R"({"resources":[
        {"canonicalId":"node/pve 1","resourceType":"node","resourceName":"pve1",
         "technology":"proxmox","findings":{"total":3,"critical":1,"warning":2,"info":0},
         "pendingApprovalCount":1},
        {"canonicalId":"vm-7","resourceType":"vm","resourceName":""}]})",
                        "application/json", std::nullopt};
    }
    if (request.target == "/api/agent/resource-context/node%2Fpve%201") {
      return PulseReply{200, R"({"resourceId":"node/pve 1"})", "application/json", std::nullopt};
    }
    if (request.target == "/api/agent/resource-context/forbidden") {
      return PulseReply{403, R"({"error":"missing_scope","message":"no"})", "application/json",
                        std::nullopt};
    }
    return PulseReply{404, R"({"error":"resource_not_found","message":"no"})", "application/json",
                      std::nullopt};
  });
  auto list = f.Call("resources/list", "{}");
  REQUIRE(Fixture::Code(list) == 0);
  const rapidjson::Value& resources = list["result"]["resources"];
  REQUIRE(resources.Size() == 2);
  CHECK(S(resources[0]["uri"]) == "pulse://resource/node%2Fpve%201");
  CHECK(S(resources[0]["name"]) == "pve1");
  CHECK(resources[0]["description"] ==
        "node; proxmox; findings: 3 total (1 critical, 2 warning, 0 info); pending approvals: 1");
  CHECK(S(resources[1]["name"]) == "vm-7");

  auto read = f.Call("resources/read", R"({"uri":"pulse://resource/node%2Fpve%201"})");
  REQUIRE(Fixture::Code(read) == 0);
  CHECK(S(read["result"]["contents"][0]["text"]) == R"({"resourceId":"node/pve 1"})");
  CHECK(S(read["result"]["contents"][0]["mimeType"]) == "application/json");

  CHECK(Fixture::Code(f.Call("resources/read", R"({"uri":"pulse://resource/gone"})")) ==
        kInvalidParams);
  CHECK(Fixture::Code(f.Call("resources/read", R"({"uri":"pulse://resource/forbidden"})")) ==
        kInternalError);
  for (const char* uri : {"http://resource/x", "pulse://resource/", "pulse://resource/a/b",
                          "pulse://resource/a?x=1", "pulse://resource/%zz"}) {
    INFO(uri);
    CHECK(Fixture::Code(f.Call("resources/read", std::string(R"({"uri":")") + uri + "\"}")) ==
          kInvalidParams);
  }
  CHECK(Fixture::Code(f.Call("resources/read", "{}")) == kInvalidParams);
}

TEST_CASE("a surface without resources or prompts does not offer their methods",
          "[adapters][mcp][server]") {
  FakePulseCaller caller;
  McpSurface surface;
  surface.tool_names = {"list_findings"};
  surface.resources = true;  // but get_fleet_context is not a tool
  surface.prompts = false;
  McpServer server(caller, surface, "1");
  for (const char* method : {"resources/list", "resources/read", "prompts/list", "prompts/get"}) {
    auto reply = server.HandleLine(std::string(R"({"jsonrpc":"2.0","id":1,"method":")") + method +
                                   R"(","params":{}})");
    REQUIRE(reply.has_value());
    CHECK(reply->find("-32601") != std::string::npos);
  }
  auto init = server.HandleLine(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"x"}})");
  REQUIRE(init.has_value());
  CHECK(init->find("\"resources\"") == std::string::npos);
  CHECK(init->find("\"prompts\"") == std::string::npos);
}

}  // namespace
}  // namespace pulse::adapters::mcp
