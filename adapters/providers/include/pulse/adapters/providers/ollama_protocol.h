// OllamaProtocol: Ollama's native chat API (POST {base}/api/chat, NDJSON) as a WireProtocol.
// Messages keep their roles (system, user, assistant, tool); assistant tool calls carry their
// arguments as objects and tool results name their tool. Ollama cannot force a tool call, so
// ToolChoice::kRequired is refused rather than silently ignored. Each response line is one
// chat chunk; the line with "done":true is the last. The endpoint, default base URL included,
// comes from the registry (provider_registry.h). Immutable after construction; BuildRequest and
// NewDecoder may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "pulse/adapters/providers/wire_protocol.h"
#include "pulse/core/model/llm_types.h"

namespace pulse::adapters::providers {

struct OllamaProtocolOptions {
  // The Authorization header value ("Bearer ...", "Basic ...") for a server behind
  // authentication; nothing is sent when empty.
  std::string authorization;
  // The keep_alive request field, a duration such as "5m" or "-1m" (forever); omitted when empty
  // (the server default).
  std::string keep_alive;
};

class OllamaProtocol final : public WireProtocol {
 public:
  explicit OllamaProtocol(std::string model, OllamaProtocolOptions options = {});

  Framing framing() const override { return Framing::kNdjson; }

  // POST /api/chat with stream:true and options.num_predict from max_tokens.
  // InvalidProviderRequestError for ToolChoice::kRequired (Ollama cannot force a tool call),
  // a non-positive max_tokens, a tool whose schema is not a JSON object, or an empty
  // conversation. Arguments that are not a JSON object are replayed as {}; a tool result
  // without tool_name is named after the assistant call it answers. Ollama's tool message has
  // no error flag: a failed call is told by its content alone.
  [[nodiscard]] absl::StatusOr<HttpRequestSpec> BuildRequest(
      const core::LlmRequest& request) const override;

  // Content deltas from message.content (message.thinking is not content); message.tool_calls
  // arrive complete and are buffered (an id Ollama gives is kept, else "ollama_<name>_<n>";
  // arguments, an object, serialized as arguments_json) until the "done":true line, which
  // carries done_reason (stop, load, unload: kStop, or kToolCalls with calls; length: kLength;
  // anything else: kError; kLength and kError release no tool call) and prompt_eval_count /
  // eval_count. A line
  // {"error": ...} is ProviderUnavailableError; malformed lines are IncompleteStreamError.
  std::unique_ptr<StreamDecoder> NewDecoder() const override;

 private:
  std::string model_;
  OllamaProtocolOptions options_;
};

}  // namespace pulse::adapters::providers
