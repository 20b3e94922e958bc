// LlmProvider: one streamed completion from a language model, in the provider-neutral
// vocabulary of loop/llm_types.h. Adapters (OpenAI-compatible, Anthropic, Gemini, Ollama, ...)
// translate the request, parse the vendor's stream and fail closed: a stream that ends before
// a terminal finish reason is an error, never a success with partial tool calls.
// Thread-safety: implementations must be safe to call concurrently (one call per session turn);
// `on_event` is invoked on the calling thread only, before Stream returns.
// Codes (build them with the helpers in llm_types.h): ResourceExhausted (rate limited, may carry
// a retry-after), Unavailable / DeadlineExceeded (transient), InvalidArgument, PermissionDenied,
// Unauthenticated, FailedPrecondition (the request or credentials were refused; retrying the
// same request cannot help), DataLoss (the stream ended without a terminal finish reason).
#pragma once

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "pulse/core/model/llm_types.h"

namespace pulse::core {

class LlmProvider {
 public:
  virtual ~LlmProvider() = default;

  // Sends `request` and delivers the response to `on_event` in stream order: content deltas,
  // complete tool calls, usage, and exactly one kFinish as the last event of a complete
  // response. OK only when the stream completed. On an error the events already delivered
  // are all there is, and the caller discards any tool calls among them.
  [[nodiscard]] virtual absl::Status Stream(
      const LlmRequest& request, absl::FunctionRef<void(const LlmStreamEvent&)> on_event) = 0;
};

}  // namespace pulse::core
