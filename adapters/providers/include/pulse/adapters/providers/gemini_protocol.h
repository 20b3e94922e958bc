// GeminiProtocol: the Gemini API's streamGenerateContent (POST
// {base}/models/{model}:streamGenerateContent?alt=sse) as a WireProtocol. Assistant turns are
// role "model", system messages become systemInstruction, tool calls and results travel as
// functionCall / functionResponse parts that keep the call id, and tool parameter schemas lose
// every `additionalProperties` key (the API rejects it). Each SSE message is one
// GenerateContentResponse; there is no end sentinel, so a response is terminal only once a
// candidate carries a finishReason. A functionCall part's thoughtSignature travels as the call's
// opaque provider_state and goes back on the same part (Gemini 3 refuses a follow-up request
// that lost it). The endpoint, default base URL included, comes from the registry
// (provider_registry.h). Immutable after construction; BuildRequest and NewDecoder may be called
// from any thread.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "pulse/adapters/providers/wire_protocol.h"
#include "pulse/core/model/llm_types.h"

namespace pulse::adapters::providers {

struct GeminiProtocolOptions {
  // generationConfig.maxOutputTokens when the request leaves max_tokens unset.
  int default_max_output_tokens = 8192;
};

class GeminiProtocol final : public WireProtocol {
 public:
  // `model` may carry a "models/" or "gemini:" prefix; it is stripped. `api_key` travels in the
  // x-goog-api-key header (omitted when empty), never in the URL.
  GeminiProtocol(std::string model, std::string api_key, GeminiProtocolOptions options = {});

  Framing framing() const override { return Framing::kServerSentEvents; }

  // POST /models/{model}:streamGenerateContent?alt=sse. InvalidProviderRequestError for a model
  // name that is empty or not made of [A-Za-z0-9._-] (it is a path segment), a non-positive
  // max_tokens, kRequired without tools, a tool whose schema is not a JSON object, or a
  // conversation with no user or model content. Consecutive tool results form one user content;
  // a result's functionResponse.name is the name of the preceding assistant call with its id
  // (else the result's tool_name, else its id), its response {"content": text}, plus
  // "is_error": true for a failed call. A call's provider_state, when set, is its part's
  // thoughtSignature, verbatim. An assistant turn whose calls are not answered by the next
  // message is replayed as its text only, and results that answer no preceding assistant turn
  // are dropped: the API refuses both.
  [[nodiscard]] absl::StatusOr<HttpRequestSpec> BuildRequest(
      const core::LlmRequest& request) const override;

  // Content deltas from candidates[0] text parts (thought parts are not content); functionCall
  // parts become tool calls (id trimmed, or "<name>_<n>" when empty; args serialized as
  // arguments_json; the part's thoughtSignature, or thought_signature, as provider_state unless
  // it is over kMaxProviderStateBytes, then dropped) delivered at OnEnd with the usage
  // (usageMetadata promptTokenCount; candidatesTokenCount plus thoughtsTokenCount) and the finish,
  // once a finishReason arrived: STOP is kStop (kToolCalls with calls), MAX_TOKENS kLength, every
  // other reason (SAFETY, RECITATION, MALFORMED_FUNCTION_CALL, OTHER, ...) kError; kLength and
  // kError release no tool call. Errors: promptFeedback.blockReason is InvalidProviderRequestError;
  // an `error` object maps by its status (RESOURCE_EXHAUSTED: RateLimitedError; UNAVAILABLE,
  // INTERNAL, DEADLINE_EXCEEDED and unknown: ProviderUnavailableError; INVALID_ARGUMENT and other
  // client errors: InvalidProviderRequestError); malformed JSON is IncompleteStreamError.
  std::unique_ptr<StreamDecoder> NewDecoder() const override;

 private:
  std::string model_;
  std::string api_key_;
  GeminiProtocolOptions options_;
};

}  // namespace pulse::adapters::providers
