// StreamingProvider: the LlmProvider port over HTTP for any WireProtocol. It sends the
// protocol's request with ExchangeHttp (connect, response-header, idle-chunk and whole-request
// timeouts; cancellation wins), frames the body (SSE or NDJSON, bounded) and lets the
// protocol's decoder turn messages into events. It fails closed: a body that ends or breaks
// before the decoder reached a terminal finish reason is IncompleteStreamError (DataLoss) and
// delivers no tool call; a non-2xx status is the typed error of HttpStatusError. Every error
// message starts with the provider name and never holds the URL, the raw body or a credential
// (header values are scrubbed from it). Nothing is retried: the loop owns retries.
// Thread-safe: concurrent Stream calls use separate connections and decoders.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/adapters/providers/base_url.h"
#include "pulse/adapters/providers/http_exchange.h"
#include "pulse/adapters/providers/message_framer.h"
#include "pulse/adapters/providers/wire_protocol.h"
#include "pulse/core/ports/llm_provider.h"

namespace pulse::adapters::providers {

struct StreamingProviderOptions {
  std::string provider;  // registry name, the prefix of every error message
  BaseUrl base_url;
  HttpTimeouts timeouts;
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;  // one SSE message / NDJSON line
};

class StreamingProvider final : public core::LlmProvider {
 public:
  // InvalidArgument when `protocol` is null, the provider name is empty, a timeout is not
  // positive, max_message_bytes is zero or the base URL has no host.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<StreamingProvider>> Open(
      StreamingProviderOptions options, std::unique_ptr<WireProtocol> protocol);

  [[nodiscard]] absl::Status Stream(
      const core::LlmRequest& request,
      absl::FunctionRef<void(const core::LlmStreamEvent&)> on_event) override;

 private:
  StreamingProvider(StreamingProviderOptions options, std::unique_ptr<WireProtocol> protocol,
                    std::unique_ptr<http_client::HttpClient> client)
      : options_(std::move(options)), protocol_(std::move(protocol)), client_(std::move(client)) {}

  const StreamingProviderOptions options_;
  const std::unique_ptr<WireProtocol> protocol_;
  const std::unique_ptr<http_client::HttpClient> client_;  // thread-safe, shared by all streams
};

// The values of `headers` that may be credentials, for scrubbing from error messages: every
// value, and the token after a scheme word ("Bearer <token>").
std::vector<std::string> HeaderSecrets(
    const std::vector<std::pair<std::string, std::string>>& headers);

}  // namespace pulse::adapters::providers
