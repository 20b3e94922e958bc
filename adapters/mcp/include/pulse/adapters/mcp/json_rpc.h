// JSON-RPC 2.0 as MCP uses it over stdio: one message per line. DecodeMessage turns a line into
// a request or notification, or into the error reply the line deserves; the Encode* functions
// write one reply line (without the newline). Replies are compact JSON, so they never contain a
// raw newline. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "rapidjson/document.h"

namespace pulse::adapters::mcp {

inline constexpr std::string_view kJsonRpcVersion = "2.0";

// The JSON-RPC error codes MCP uses.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

struct RpcRequest {
  std::string method;
  // The id as compact JSON ("7", "\"a\""); nullopt for a notification (no id, or id null).
  std::optional<std::string> id_json;
  // The params member (an object or an array), or a null value when absent.
  rapidjson::Document params;

  bool notification() const { return !id_json.has_value(); }
};

struct RpcError {
  int code = kInternalError;
  std::string message;
  std::string id_json = "null";  // the request's id when it could be read
};

// What a line is. At most one member is set; neither is set for a response (a message with
// "result" or "error" and no "method"), which is never answered: this server sends no
// requests, and a reply to a response could be mistaken for the answer to the client's own
// request with the same id.
struct DecodedMessage {
  std::optional<RpcRequest> request;  // a valid request or notification
  std::optional<RpcError> error;      // the error reply the line deserves
};

// Decodes one line. A line that is not JSON, or not UTF-8 (RFC 8259 §8.1), is a parse error
// (-32700); JSON that is not a single request object with "jsonrpc":"2.0", a string "method"
// and an id that is a string or a number (or absent/null) is an invalid request (-32600).
// Batches (arrays) are refused as invalid requests: MCP 2025-06-18 removed them. The id is
// echoed as compact JSON with any ill-formed UTF-8 replaced, so a reply is always valid UTF-8.
DecodedMessage DecodeMessage(std::string_view line);

// {"jsonrpc":"2.0","id":<id_json>,"result":<result_json>}. Both must be valid compact JSON.
std::string EncodeResult(std::string_view id_json, std::string_view result_json);

// {"jsonrpc":"2.0","id":<id_json>,"error":{"code":<code>,"message":<message>}}.
std::string EncodeError(std::string_view id_json, int code, std::string_view message);
std::string EncodeError(const RpcError& error);

}  // namespace pulse::adapters::mcp
