// WireProtocol: one vendor's request format and stream format, separated from the HTTP
// transport (streaming_provider.h) so each can be tested alone: a protocol turns the
// provider-neutral LlmRequest into an HTTP request spec and decodes the framed messages of the
// response stream into LlmStreamEvents.
//
// Fail closed (docs/providers.md "Streams fail closed"): a decoder delivers content deltas as they
// arrive, but tool calls, usage and the single kFinish only once the stream reached a terminal
// finish reason; a stream that ends (or breaks) before that delivers no tool call at all, and
// partial tool call JSON is never delivered. Thread-compatible: a decoder serves one response.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/core/model/llm_types.h"

namespace pulse::adapters::providers {

using EmitFn = absl::FunctionRef<void(const core::LlmStreamEvent&)>;

// How the response body is cut into messages.
enum class Framing {
  kServerSentEvents,  // `event:` / `data:` lines, messages separated by a blank line
  kNdjson,            // one JSON document per line
};

struct HttpRequestSpec {
  std::string method = "POST";
  // Appended to the base URL's own path: "/chat/completions", "/api/chat",
  // "/models/gemini-2.5-pro:streamGenerateContent?alt=sse".
  std::string path;
  // Besides Content-Type: application/json (always sent). Credentials travel here, never in
  // the path or query.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // JSON
};

class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;

  // One framed message: an SSE message (`event` is its event name or "", `data` its data
  // lines joined by '\n') or one NDJSON line (`event` is ""). A non-OK status means the stream
  // is broken (malformed JSON, an error reported inside the stream, an impossible sequence):
  // the transport stops reading and returns it, built with the llm_types.h error helpers.
  [[nodiscard]] virtual absl::Status OnMessage(std::string_view event, std::string_view data,
                                               EmitFn emit) = 0;

  // True once the protocol's last message was decoded (OpenAI `[DONE]`, Anthropic
  // `message_stop`, Ollama `"done":true`): the transport stops reading and calls OnEnd.
  [[nodiscard]] virtual bool Complete() const = 0;

  // The response is over (Complete() or end of body). OK when a terminal finish reason was
  // reached: then the pending tool calls, usage and the kFinish are delivered, in that order.
  // Otherwise IncompleteStreamError and nothing is delivered.
  [[nodiscard]] virtual absl::Status OnEnd(EmitFn emit) = 0;
};

class WireProtocol {
 public:
  virtual ~WireProtocol() = default;

  virtual Framing framing() const = 0;

  // The HTTP request for `request` (model, credentials and options were given at
  // construction). InvalidArgument (InvalidProviderRequestError) for a request the protocol
  // cannot express, e.g. ToolChoice::kRequired on Ollama.
  [[nodiscard]] virtual absl::StatusOr<HttpRequestSpec> BuildRequest(
      const core::LlmRequest& request) const = 0;

  virtual std::unique_ptr<StreamDecoder> NewDecoder() const = 0;
};

}  // namespace pulse::adapters::providers
