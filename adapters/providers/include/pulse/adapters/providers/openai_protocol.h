// OpenAiProtocol: the OpenAI chat-completions wire format, spoken by OpenAI and by most hosted
// and local model servers (OpenRouter, DeepSeek, Groq, Mistral, Together, Fireworks, Z.ai,
// vLLM, LM Studio, llama.cpp). Request: POST /chat/completions with stream:true; tools as
// {type:function, function:{name, description, parameters}}; tool_choice omitted when unset,
// tools omitted for kNone, "required" for kRequired. Response: SSE `data:` chunks whose
// tool-call fragments are reassembled by index, ended by `[DONE]`. Reasoning text
// (reasoning_content / reasoning) never becomes content. Immutable; thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "pulse/adapters/providers/wire_protocol.h"

namespace pulse::adapters::providers {

struct OpenAiProtocolOptions {
  std::string model;
  std::string api_key;  // sent as "Authorization: Bearer <key>"; empty sends none
  // "max_tokens", or "max_completion_tokens" for OpenAI itself (its newer models refuse the
  // older name).
  std::string max_tokens_field = "max_tokens";
  // Sends stream_options:{include_usage:true}. Mistral refuses the member (and reports usage
  // without it).
  bool stream_usage_option = true;
  // Bound on one tool call's assembled arguments.
  std::size_t max_tool_arguments_bytes = 1 << 20;
};

class OpenAiProtocol final : public WireProtocol {
 public:
  explicit OpenAiProtocol(OpenAiProtocolOptions options) : options_(std::move(options)) {}

  Framing framing() const override { return Framing::kServerSentEvents; }

  // InvalidArgument for kRequired without tools, or a tool whose input schema is not a JSON
  // object.
  [[nodiscard]] absl::StatusOr<HttpRequestSpec> BuildRequest(
      const core::LlmRequest& request) const override;

  // The decoder: fragments are reassembled by `index` (id and name may come in the first
  // fragment only; a missing id becomes openai_<name>_<index>); finish_reason stop,
  // tool_calls (and the legacy function_call), length, content_filter (delivered as kError)
  // and error are terminal; usage may follow the finish; `[DONE]` completes the stream and
  // is optional once a finish reason arrived. Only stop and tool_calls release tool calls: a
  // response cut by `length` may hold cut arguments, and a filtered one is not an answer. An
  // {"error":{...}} chunk is a typed error: rate limits are RateLimitedError, server errors
  // Unavailable, 4xx InvalidArgument.
  std::unique_ptr<StreamDecoder> NewDecoder() const override;

 private:
  OpenAiProtocolOptions options_;
};

}  // namespace pulse::adapters::providers
