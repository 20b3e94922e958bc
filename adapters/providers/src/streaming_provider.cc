#include "pulse/adapters/providers/streaming_provider.h"

#include <atomic>
#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "pulse/adapters/providers/http_errors.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::providers {
namespace {

// How much of an error response is kept to find the provider's `message` in it.
constexpr std::size_t kMaxErrorBodyBytes = std::size_t{16} << 10;

bool IsCancelled(const core::LlmRequest& request) {
  return request.cancelled != nullptr && request.cancelled->load(std::memory_order_acquire);
}

bool NamesCredentialHeader(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(core::ToAbsl(name));
  return absl::StrContains(lower, "key") || absl::StrContains(lower, "auth") ||
         absl::StrContains(lower, "token") || absl::StrContains(lower, "secret");
}

std::optional<absl::Duration> RetryAfterOf(const HttpResponseHead& head) {
  if (std::optional<std::string> value = head.Header("Retry-After"); value.has_value()) {
    return ParseRetryAfter(*value, absl::Now());
  }
  return std::nullopt;
}

// Reads one response: keeps the head's verdict, a bounded error body, or frames and decodes a
// 2xx body; then says how the response ended. Events go to `on_event` until the request is
// cancelled.
class ResponseReader {
 public:
  ResponseReader(const core::LlmRequest& request, const WireProtocol& protocol,
                 std::size_t max_message_bytes,
                 absl::FunctionRef<void(const core::LlmStreamEvent&)> on_event)
      : request_(request),
        decoder_(protocol.NewDecoder()),
        framer_(NewMessageFramer(protocol.framing(), max_message_bytes)),
        on_event_(on_event) {}
  ResponseReader(const ResponseReader&) = delete;
  ResponseReader& operator=(const ResponseReader&) = delete;

  bool OnHead(const HttpResponseHead& head) {
    status_ = head.status;
    retry_after_ = RetryAfterOf(head);
    return true;
  }

  bool OnBody(std::string_view bytes) {
    if (!Succeeded()) {
      const std::size_t room = kMaxErrorBodyBytes - error_body_.size();
      error_body_.append(bytes.substr(0, room));
      return error_body_.size() < kMaxErrorBodyBytes;
    }
    framing_ = framer_->Feed(bytes, [this](std::string_view event, std::string_view data) {
      return OnMessage(event, data);
    });
    return framing_.ok() && decoding_.ok() && !complete_;
  }

  // The outcome once the exchange ended with `end` (kBodyComplete, kStopped or kBrokenBody).
  absl::Status Finish(HttpEnd end) {
    if (!Succeeded()) {
      return HttpStatusError(status_, retry_after_, ProviderErrorDetail(error_body_));
    }
    PULSE_RETURN_IF_ERROR(framing_);
    PULSE_RETURN_IF_ERROR(decoding_);
    if (end == HttpEnd::kBodyComplete && !complete_) {
      // Only a body that ended cleanly may hold a last NDJSON line without a line end.
      PULSE_RETURN_IF_ERROR(framer_->Finish([this](std::string_view event, std::string_view data) {
        return OnMessage(event, data);
      }));
      PULSE_RETURN_IF_ERROR(decoding_);
    }
    return decoder_->OnEnd(Emitter());
  }

 private:
  bool Succeeded() const { return status_ >= 200 && status_ <= 299; }

  bool OnMessage(std::string_view event, std::string_view data) {
    decoding_ = decoder_->OnMessage(event, data, Emitter());
    if (!decoding_.ok()) {
      return false;
    }
    complete_ = decoder_->Complete();
    return !complete_;
  }

  // Nothing reaches the caller once the request is cancelled.
  EmitFn Emitter() { return EmitFn(emit_); }
  void Emit(const core::LlmStreamEvent& event) {
    if (!IsCancelled(request_)) {
      on_event_(event);
    }
  }

  const core::LlmRequest& request_;
  std::unique_ptr<StreamDecoder> decoder_;
  std::unique_ptr<MessageFramer> framer_;
  absl::FunctionRef<void(const core::LlmStreamEvent&)> on_event_;
  std::function<void(const core::LlmStreamEvent&)> emit_ = [this](const core::LlmStreamEvent& e) {
    Emit(e);
  };
  int status_ = 0;
  std::optional<absl::Duration> retry_after_;
  std::string error_body_;  // a non-2xx body, bounded
  absl::Status framing_;    // the framer's verdict
  absl::Status decoding_;   // the decoder's first error
  bool complete_ = false;   // the decoder saw the protocol's last message
};

}  // namespace

std::vector<std::string> HeaderSecrets(
    const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<std::string> secrets;
  for (const auto& [name, value] : headers) {
    if (!NamesCredentialHeader(name)) {
      continue;
    }
    secrets.push_back(value);
    const std::size_t space = value.rfind(' ');
    if (space != std::string::npos) {
      secrets.push_back(value.substr(space + 1));
    }
  }
  return secrets;
}

absl::StatusOr<std::unique_ptr<StreamingProvider>> StreamingProvider::Open(
    StreamingProviderOptions options, std::unique_ptr<WireProtocol> protocol) {
  if (protocol == nullptr) {
    return absl::InvalidArgumentError("streaming provider needs a wire protocol");
  }
  if (options.provider.empty()) {
    return absl::InvalidArgumentError("streaming provider needs a provider name");
  }
  const HttpTimeouts& t = options.timeouts;
  if (t.connect <= absl::ZeroDuration() || t.response_header <= absl::ZeroDuration() ||
      t.idle_chunk <= absl::ZeroDuration() || t.request <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("provider timeouts must be positive");
  }
  if (options.max_message_bytes == 0) {
    return absl::InvalidArgumentError("provider stream message limit must be positive");
  }
  absl::StatusOr<std::unique_ptr<http_client::HttpClient>> client =
      NewProviderClient(options.base_url, options.timeouts);
  if (!client.ok()) {
    return client.status();
  }
  return std::unique_ptr<StreamingProvider>(
      new StreamingProvider(std::move(options), std::move(protocol), *std::move(client)));
}

absl::Status StreamingProvider::Stream(
    const core::LlmRequest& request,
    absl::FunctionRef<void(const core::LlmStreamEvent&)> on_event) {
  if (IsCancelled(request)) {
    return absl::CancelledError("the request was cancelled");
  }
  absl::StatusOr<HttpRequestSpec> spec = protocol_->BuildRequest(request);
  if (!spec.ok()) {
    return AnnotateProviderError(spec.status(), options_.provider, {});
  }
  const std::vector<std::string> secrets = HeaderSecrets(spec->headers);
  auto finish = [&](const absl::Status& status) {
    if (IsCancelled(request)) {
      return absl::CancelledError("the request was cancelled");
    }
    return AnnotateProviderError(status, options_.provider, secrets);
  };

  ResponseReader reader(request, *protocol_, options_.max_message_bytes, on_event);
  const HttpOutcome outcome = ExchangeHttp(
      *client_, *spec, request.cancelled.get(),
      [&reader](const HttpResponseHead& head) { return reader.OnHead(head); },
      [&reader](std::string_view bytes) { return reader.OnBody(bytes); });
  if (outcome.end == HttpEnd::kFailed) {
    return finish(outcome.error);
  }
  return finish(reader.Finish(outcome.end));
}

}  // namespace pulse::adapters::providers
