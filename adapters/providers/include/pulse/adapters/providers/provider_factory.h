// Building providers from operator configuration: a registry name, an optional base URL and
// model (empty: the registry default), an API key and timeouts become a validated LlmProvider,
// the route a run's usage is costed on, or the list of models the endpoint serves (for
// GET /api/ai/models-ready). Validation happens here, once, with messages an operator can act
// on and that never repeat the key or the URL. Thread-safe (pure functions; ListModels does I/O
// on the calling thread).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/adapters/providers/base_url.h"
#include "pulse/adapters/providers/endpoint_locality.h"
#include "pulse/adapters/providers/http_exchange.h"
#include "pulse/adapters/providers/provider_registry.h"
#include "pulse/core/model/model_route.h"
#include "pulse/core/ports/llm_provider.h"

namespace pulse::adapters::providers {

struct ProviderConfig {
  std::string provider;  // registry name: "openai", "zai-coding", "openai-compatible", ...
  std::string base_url;  // empty: the registry default
  std::string model;     // empty: the registry default
  std::string api_key;   // surrounding whitespace is ignored
  // Where the caller reads keys from, named in the missing-key message ("set <key_sources>");
  // empty: the provider's conventional variables (ANTHROPIC_API_KEY, ...).
  std::string key_sources;
  HttpTimeouts timeouts;
  // Whether the endpoint is inside the local trust boundary: decided from the base URL
  // (auto), or declared by the operator (endpoint_locality.h).
  LocalitySetting locality = LocalitySetting::kAuto;
};

// A configuration checked against the registry, defaults filled in.
struct ResolvedProvider {
  const ProviderEntry* entry = nullptr;  // never null; points into the static registry
  BaseUrl base_url;
  std::string model;
  std::string api_key;
  // Where the requests go; only a local destination sees unredacted context.
  Destination destination;
};

// Checks `config`. InvalidArgument for: an unknown provider; a base URL on a provider that
// does not take one; a missing base URL where one is required; a malformed base URL (see
// ParseBaseUrl); a locality declaration DecideDestination refuses; a missing model where the
// registry has no default; a model or key with
// whitespace inside or control characters; a missing key where the provider requires one
// (naming the credential field and environment variables to set).
[[nodiscard]] absl::StatusOr<ResolvedProvider> ResolveProvider(const ProviderConfig& config);

// As ResolveProvider, but a missing model is not an error (the model stays empty): what a
// model listing needs.
[[nodiscard]] absl::StatusOr<ResolvedProvider> ResolveListing(const ProviderConfig& config);

// The provider for `config`: a StreamingProvider over the protocol of its family. Errors as
// ResolveProvider.
[[nodiscard]] absl::StatusOr<std::unique_ptr<core::LlmProvider>> MakeProvider(
    const ProviderConfig& config);

// The route of `config`'s model: provider, model, inference route, and the known list price on
// a metered route. The route follows the destination, not the provider's name: a local
// destination is a local model server (the only route that sees unredacted context); a remote
// one keeps the registry's route, except that a usually-local provider (ollama,
// openai-compatible) off the local network becomes a metered API with an unknown price. The key
// is not needed (and not checked); other errors as ResolveProvider.
[[nodiscard]] absl::StatusOr<core::ModelRoute> ResolveRoute(const ProviderConfig& config);

struct ModelInfo {
  std::string id;            // as the provider's chat endpoint takes it
  std::string display_name;  // "" when the provider gives none

  friend bool operator==(const ModelInfo&, const ModelInfo&) = default;
};

// The models `config`'s endpoint serves, in the provider's order: OpenAI-compatible
// GET {base}/models, Ollama GET {base}/api/tags, Anthropic GET {base}/models?limit=1000, Gemini
// GET {base}/models?pageSize=1000 (only models that can generateContent; "models/" stripped).
// Errors: those of ResolveListing, the typed HTTP and transport errors of the streaming
// provider, and IncompleteStreamError (DataLoss) for a listing that is not the expected JSON.
[[nodiscard]] absl::StatusOr<std::vector<ModelInfo>> ListModels(
    const ProviderConfig& config, const std::atomic<bool>* cancelled = nullptr);

// The model a configuration without one starts with: the first of `models` (the provider's
// order) that serves chat, skipping ids that name another kind of model (embedding, speech,
// transcription, realtime audio, image, moderation, rerank, guard and legacy completion models:
// the substrings are in model_listing.cc and docs/providers.md). nullopt when none is left.
[[nodiscard]] std::optional<std::string> FirstChatModel(const std::vector<ModelInfo>& models);

}  // namespace pulse::adapters::providers
