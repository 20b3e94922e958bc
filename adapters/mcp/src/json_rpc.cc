#include "pulse/adapters/mcp/json_rpc.h"

#include <string>

#include "pulse/adapters/mcp/line_reader.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"

namespace pulse::adapters::mcp {
namespace {

DecodedMessage Fail(int code, std::string message, std::string id_json = "null") {
  DecodedMessage decoded;
  decoded.error = RpcError{code, std::move(message), std::move(id_json)};
  return decoded;
}

// The id as compact JSON. Through JsonWriter, which repairs ill-formed UTF-8: the line was
// valid UTF-8, but an escaped lone surrogate ("\udc00") decodes to bytes that are not.
std::string IdJson(const rapidjson::Value& id) {
  core::JsonWriter w;
  w.Value(id);
  return w.Take();
}

}  // namespace

DecodedMessage DecodeMessage(std::string_view line) {
  if (!core::IsValidUtf8(line)) {
    return Fail(kParseError, "malformed JSON-RPC message: the line is not valid UTF-8");
  }
  auto parsed = core::ParseJson(line, core::JsonLimits{.max_bytes = kMaxLineBytes});
  if (!parsed.ok()) {
    return Fail(kParseError,
                "malformed JSON-RPC message: " + std::string(parsed.status().message()));
  }
  rapidjson::Document& doc = *parsed;
  if (doc.IsArray()) {
    return Fail(kInvalidRequest, "batch requests are not supported");
  }
  if (!doc.IsObject()) {
    return Fail(kInvalidRequest, "a JSON-RPC message must be an object");
  }
  if (!doc.HasMember("method") && (doc.HasMember("result") || doc.HasMember("error"))) {
    return DecodedMessage{};  // a response, well-formed or not: never answered
  }
  std::optional<std::string> id_json;
  if (const rapidjson::Value* id = core::GetMember(doc, "id"); id != nullptr && !id->IsNull()) {
    if (!id->IsString() && !id->IsNumber()) {
      return Fail(kInvalidRequest, "id must be a string or a number");
    }
    id_json = IdJson(*id);
  }
  const std::string reply_id = id_json.value_or("null");
  if (core::GetString(doc, "jsonrpc") != std::optional<std::string_view>(kJsonRpcVersion)) {
    return Fail(kInvalidRequest, "jsonrpc must be \"2.0\"", reply_id);
  }
  const std::optional<std::string_view> method = core::GetString(doc, "method");
  if (!method.has_value()) {
    return Fail(kInvalidRequest, "method must be a string", reply_id);
  }
  RpcRequest request;
  request.method = std::string(*method);
  request.id_json = std::move(id_json);
  if (const rapidjson::Value* params = core::GetMember(doc, "params"); params != nullptr) {
    if (!params->IsObject() && !params->IsArray()) {
      return Fail(kInvalidRequest, "params must be an object or an array", reply_id);
    }
    request.params.CopyFrom(*params, request.params.GetAllocator());
  }
  DecodedMessage decoded;
  decoded.request = std::move(request);
  return decoded;
}

std::string EncodeResult(std::string_view id_json, std::string_view result_json) {
  std::string out;
  out.reserve(40 + id_json.size() + result_json.size());
  out.append(R"({"jsonrpc":"2.0","id":)");
  out.append(id_json);
  out.append(R"(,"result":)");
  out.append(result_json);
  out.push_back('}');
  return out;
}

std::string EncodeError(std::string_view id_json, int code, std::string_view message) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("jsonrpc", kJsonRpcVersion);
  w.Key("id");
  w.RawValue(id_json);
  w.Key("error");
  w.StartObject();
  w.Member("code", code);
  w.Member("message", message);
  w.EndObject();
  w.EndObject();
  return w.Take();
}

std::string EncodeError(const RpcError& error) {
  return EncodeError(error.id_json, error.code, error.message);
}

}  // namespace pulse::adapters::mcp
