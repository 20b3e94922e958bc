// AnthropicProtocol: the Anthropic Messages API (POST {base}/messages, stream: true) as a
// WireProtocol. System messages become the top-level `system` string, tool calls and results
// become tool_use / tool_result content blocks, and adjacent same-role turns are merged so roles
// alternate. The decoder reads the named SSE events (message_start ... message_stop); a
// response is terminal once message_delta carries a stop_reason. The endpoint, default base
// URL included, comes from the registry (provider_registry.h). Immutable after construction;
// BuildRequest and NewDecoder may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/providers/wire_protocol.h"
#include "pulse/core/model/llm_types.h"

namespace pulse::adapters::providers {

inline constexpr std::string_view kAnthropicVersion = "2023-06-01";

struct AnthropicProtocolOptions {
  // Anthropic requires max_tokens; this is sent when the request leaves it unset.
  int default_max_tokens = 4096;
};

class AnthropicProtocol final : public WireProtocol {
 public:
  // `api_key` travels in the x-api-key header (omitted when empty).
  AnthropicProtocol(std::string model, std::string api_key, AnthropicProtocolOptions options = {});

  Framing framing() const override { return Framing::kServerSentEvents; }

  // POST /messages. InvalidProviderRequestError for a non-positive max_tokens, kRequired
  // without tools, a tool whose input schema is not a JSON object, or a conversation with no
  // user or assistant content. Arguments that are not a JSON object are replayed as {}.
  [[nodiscard]] absl::StatusOr<HttpRequestSpec> BuildRequest(
      const core::LlmRequest& request) const override;

  // Content deltas as text_delta events arrive; tool calls (each tool_use block closed by
  // content_block_stop and parsed as one JSON object), usage and the finish at OnEnd, once
  // message_delta carried a stop_reason (message_stop itself is not required: every block was
  // closed before it). end_turn, stop_sequence and pause_turn are kStop (kToolCalls with
  // calls), tool_use kToolCalls, max_tokens kLength, refusal and unknown reasons kError; kLength
  // and kError release no tool call. Stream errors: the `error` event as a typed error
  // (rate_limit_error: RateLimitedError; overloaded_error, api_error, timeout_error and unknown
  // types: ProviderUnavailableError; invalid_request_error, authentication_error,
  // permission_error, not_found_error, request_too_large, billing_error:
  // InvalidProviderRequestError), and IncompleteStreamError for malformed JSON, an impossible
  // event order, or a tool_use input that does not parse in a response that did not stop at
  // max_tokens.
  std::unique_ptr<StreamDecoder> NewDecoder() const override;

 private:
  std::string model_;
  std::string api_key_;
  AnthropicProtocolOptions options_;
};

}  // namespace pulse::adapters::providers
