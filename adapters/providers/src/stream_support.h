// What the vendor protocols (Anthropic, Gemini, Ollama) share: the bounds a response stream is
// held to, strict reading of its JSON (a malformed response is a broken stream), the request
// pieces every vendor spells the same way, and FailClosedDecoder, the one place that decides
// when buffered tool calls, usage and the finish reach the caller. Internal to the providers
// adapter; thread-compatible like the decoders built on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/providers/wire_protocol.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/model/llm_types.h"
#include "rapidjson/document.h"

namespace pulse::adapters::providers::internal {

// One framed message, and one tool call's accumulated argument text, may not exceed these.
inline constexpr core::JsonLimits kStreamJsonLimits{8u << 20, 64};
// A response carrying more tool calls than this is treated as broken.
inline constexpr std::size_t kMaxToolCalls = 128;
// Bounds on the short strings of a stream.
inline constexpr std::size_t kMaxNameBytes = 256;  // tool names
inline constexpr std::size_t kMaxIdBytes = 512;    // tool call ids
inline constexpr std::size_t kMaxCodeBytes = 128;  // event types, stop reasons, error types
inline constexpr std::int64_t kMaxTokenCount = std::int64_t{1} << 53;

// `data` parsed as one JSON object within kStreamJsonLimits; IncompleteStreamError starting
// with `vendor` when it is not JSON, too large, too deeply nested, or not an object.
[[nodiscard]] absl::StatusOr<rapidjson::Document> ParseStreamObject(std::string_view vendor,
                                                                    std::string_view data);

// Reader options whose errors are IncompleteStreamError: a response that breaks its vendor's
// format is a broken stream, never the caller's invalid request.
[[nodiscard]] const core::JsonReaderOptions& StreamReaderOptions();

// Member `key` of `reader` as an optional array (nullptr when absent or null); records a
// problem when it is present but not an array.
const rapidjson::Value* ArrayMember(core::JsonObjectReader& reader, std::string_view key);

// ---- requests -----------------------------------------------------------------------------

// The arguments of an earlier tool call, as a JSON object to replay in a request. Vendors that
// take arguments as an object (Anthropic tool_use.input, Gemini functionCall.args, Ollama
// function.arguments) cannot carry text that is not one: malformed, non-object or over-deep
// arguments_json is replayed as {}. That keeps a transcript holding a model's malformed call
// sendable; the call's tool result (the loop's refusal) still tells the model what happened.
[[nodiscard]] rapidjson::Document ReplayArguments(std::string_view arguments_json);

// `tool.input_schema_json` parsed; an empty schema is {"type":"object"}.
// InvalidProviderRequestError when it is not one JSON object within the default JsonLimits.
[[nodiscard]] absl::StatusOr<rapidjson::Document> ToolSchema(const core::ToolDefinition& tool);

// The content of every system message, in order, joined by a blank line ("" when none).
[[nodiscard]] std::string SystemText(const core::LlmRequest& request);

// Checks every vendor applies: max_tokens, when set, is positive; ToolChoice::kRequired comes
// with tools to call. InvalidProviderRequestError naming `vendor` otherwise.
[[nodiscard]] absl::Status CheckRequest(std::string_view vendor, const core::LlmRequest& request);

// True when the request puts tool definitions on the wire: it has tools and its tool choice is
// not kNone (kNone is sent as a tool-free request, never as a vendor "none" mode).
[[nodiscard]] bool OffersTools(const core::LlmRequest& request);

// The name of the tool `call_id` invoked, from the latest assistant message before
// `messages[before]` that made that call; "" when none did.
[[nodiscard]] std::string ResolveToolName(const std::vector<core::Message>& messages,
                                          std::size_t before, std::string_view call_id);

// ---- decoding -----------------------------------------------------------------------------

// The bookkeeping every decoder shares. Subclasses decode messages in Decode() and record the
// terminal finish reason with Finish() once their vendor reports one; tool calls go through
// AddToolCall() and are held back. OnEnd() then delivers, in order, the tool calls, the usage
// when any was reported, and one kFinish: kToolCalls whenever calls are delivered, kStop for a
// tool-call finish without calls. A response cut short (kLength) or failed (kError) delivers no
// tool call, however complete its calls look: the model's plan may be missing a step. Without a
// recorded finish OnEnd() is IncompleteStreamError and delivers nothing. The first error is
// sticky: every later call returns it, and a message after Complete() is itself an error.
class FailClosedDecoder : public StreamDecoder {
 public:
  [[nodiscard]] absl::Status OnMessage(std::string_view event, std::string_view data,
                                       EmitFn emit) final;
  [[nodiscard]] absl::Status OnEnd(EmitFn emit) final;

 protected:
  // `vendor` starts every error message ("Anthropic", "Gemini", "Ollama").
  explicit FailClosedDecoder(std::string_view vendor);

  // One framed message; a non-OK status breaks the stream.
  [[nodiscard]] virtual absl::Status Decode(std::string_view event, std::string_view data,
                                            EmitFn emit) = 0;
  // Why OnEnd() without a finish is incomplete, e.g. "ended before message_delta carried a
  // stop_reason".
  virtual std::string_view MissingFinishText() const = 0;

  // Buffers a complete tool call; an empty id becomes "<id_prefix><name>_<n>" (n counts this
  // response's calls from 0). Broken stream when the id repeats or there are too many calls.
  [[nodiscard]] absl::Status AddToolCall(core::ToolCall call, std::string_view id_prefix);
  std::size_t tool_call_count() const { return calls_.size(); }

  void SetInputTokens(std::int64_t tokens) { input_tokens_ = tokens; }
  void SetOutputTokens(std::int64_t tokens) { output_tokens_ = tokens; }

  // Records the terminal finish reason; IncompleteStreamError when one was already recorded.
  [[nodiscard]] absl::Status Finish(core::FinishReason reason);
  bool finished() const { return finish_.has_value(); }

  // IncompleteStreamError "<vendor> stream: <what>".
  absl::Status Broken(std::string_view what) const;
  const std::string& vendor() const { return vendor_; }

 private:
  std::string vendor_;
  std::vector<core::ToolCall> calls_;
  std::optional<std::int64_t> input_tokens_;
  std::optional<std::int64_t> output_tokens_;
  std::optional<core::FinishReason> finish_;
  absl::Status broken_;
  bool ended_ = false;
};

}  // namespace pulse::adapters::providers::internal
