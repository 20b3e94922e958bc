#include "pulse/adapters/providers/provider_factory.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/providers/anthropic_protocol.h"
#include "pulse/adapters/providers/gemini_protocol.h"
#include "pulse/adapters/providers/ollama_protocol.h"
#include "pulse/adapters/providers/openai_protocol.h"
#include "pulse/adapters/providers/streaming_provider.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::providers {
namespace {

constexpr std::size_t kMaxModelBytes = 256;
constexpr std::size_t kMaxApiKeyBytes = 4096;

using core::ToAbsl;

// No whitespace, controls or DEL: the value travels in a header or a JSON string verbatim.
bool IsToken(std::string_view text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return false;
    }
  }
  return true;
}

std::string KeySources(const ProviderEntry& entry, const ProviderConfig& config) {
  if (!config.key_sources.empty()) {
    return absl::StrCat("set ", config.key_sources);
  }
  std::string sources;
  for (std::string_view var : entry.env_vars) {
    if (!var.empty()) {
      absl::StrAppend(&sources, sources.empty() ? "set " : " or ", ToAbsl(var));
    }
  }
  return sources.empty() ? std::string("set ProviderConfig::api_key") : sources;
}

std::unique_ptr<WireProtocol> NewProtocol(const ResolvedProvider& resolved) {
  const ProviderEntry& entry = *resolved.entry;
  switch (entry.family) {
    case ProtocolFamily::kOpenAiCompatible: {
      OpenAiProtocolOptions options;
      options.model = resolved.model;
      options.api_key = resolved.api_key;
      options.max_tokens_field = std::string(entry.max_tokens_field);
      options.stream_usage_option = entry.stream_usage_option;
      return std::make_unique<OpenAiProtocol>(std::move(options));
    }
    case ProtocolFamily::kAnthropic:
      return std::make_unique<AnthropicProtocol>(resolved.model, resolved.api_key);
    case ProtocolFamily::kGemini:
      return std::make_unique<GeminiProtocol>(resolved.model, resolved.api_key);
    case ProtocolFamily::kOllama: {
      OllamaProtocolOptions options;
      if (!resolved.api_key.empty()) {
        options.authorization = absl::StrCat("Bearer ", resolved.api_key);
      }
      return std::make_unique<OllamaProtocol>(resolved.model, std::move(options));
    }
  }
  return nullptr;
}

// Everything but the key. A model listing needs no model: `require_model` false leaves an
// unnamed model empty.
absl::StatusOr<ResolvedProvider> ResolveEndpoint(const ProviderConfig& config, bool require_model) {
  const ProviderEntry* entry = FindProvider(config.provider);
  if (entry == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown provider \"", config.provider.substr(0, 64),
                     "\"; expected a registry name such as openai, anthropic, gemini, ollama "
                     "or openai-compatible"));
  }
  ResolvedProvider resolved;
  resolved.entry = entry;
  const std::string name(entry->name);
  if (!config.base_url.empty() && !entry->base_url_overridable) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " does not take a base URL; use openai-compatible for another endpoint"));
  }
  if (config.base_url.empty() && entry->base_url_required) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " needs a base URL, for example http://localhost:8000/v1"));
  }
  const std::string_view url_text =
      config.base_url.empty() ? entry->default_base_url : std::string_view(config.base_url);
  absl::StatusOr<BaseUrl> url = ParseBaseUrl(url_text);
  if (!url.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", url.status().message()));
  }
  resolved.base_url = *std::move(url);
  const bool custom_url = !config.base_url.empty() && config.base_url != entry->default_base_url;
  absl::StatusOr<Destination> destination =
      DecideDestination(*entry, resolved.base_url.host, custom_url, config.locality);
  if (!destination.ok()) {
    return destination.status();
  }
  resolved.destination = *std::move(destination);

  resolved.model = config.model.empty() ? std::string(entry->default_model) : config.model;
  if (resolved.model.empty()) {
    if (!require_model) {
      return resolved;
    }
    return absl::InvalidArgumentError(absl::StrCat(name, " needs a model name"));
  }
  if (resolved.model.size() > kMaxModelBytes || !IsToken(resolved.model)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": the model name must be at most ", kMaxModelBytes,
                     " bytes without whitespace or control characters"));
  }
  return resolved;
}

// The key, on top of ResolveEndpoint.
absl::StatusOr<ResolvedProvider> ResolveCredentials(const ProviderConfig& config,
                                                    bool require_model) {
  PULSE_ASSIGN_OR_RETURN(ResolvedProvider resolved, ResolveEndpoint(config, require_model));
  const ProviderEntry& entry = *resolved.entry;
  const std::string name(entry.name);
  resolved.api_key = std::string(absl::StripAsciiWhitespace(config.api_key));
  if (resolved.api_key.size() > kMaxApiKeyBytes || !IsToken(resolved.api_key)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": the API key must be at most ", kMaxApiKeyBytes,
                     " bytes without whitespace or control characters"));
  }
  const bool custom_url = !config.base_url.empty() && config.base_url != entry.default_base_url;
  const bool key_optional =
      !entry.requires_api_key || (custom_url && entry.api_key_optional_with_custom_base_url);
  if (resolved.api_key.empty() && !key_optional) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(entry.display_name), " needs an API key: ", KeySources(entry, config)));
  }
  return resolved;
}

}  // namespace

absl::StatusOr<ResolvedProvider> ResolveProvider(const ProviderConfig& config) {
  return ResolveCredentials(config, /*require_model=*/true);
}

absl::StatusOr<ResolvedProvider> ResolveListing(const ProviderConfig& config) {
  return ResolveCredentials(config, /*require_model=*/false);
}

absl::StatusOr<std::unique_ptr<core::LlmProvider>> MakeProvider(const ProviderConfig& config) {
  PULSE_ASSIGN_OR_RETURN(ResolvedProvider resolved, ResolveProvider(config));
  StreamingProviderOptions options;
  options.provider = std::string(resolved.entry->name);
  options.base_url = resolved.base_url;
  options.timeouts = config.timeouts;
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<StreamingProvider> provider,
                         StreamingProvider::Open(std::move(options), NewProtocol(resolved)));
  return std::unique_ptr<core::LlmProvider>(std::move(provider));
}

absl::StatusOr<core::ModelRoute> ResolveRoute(const ProviderConfig& config) {
  PULSE_ASSIGN_OR_RETURN(ResolvedProvider resolved,
                         ResolveEndpoint(config, /*require_model=*/true));
  core::ModelRoute route;
  route.provider = std::string(resolved.entry->name);
  route.model = resolved.model;
  route.route = resolved.entry->route;
  if (resolved.destination.locality == Locality::kLocal) {
    route.route = core::InferenceRoute::kLocalModelServer;
  } else if (route.route == core::InferenceRoute::kLocalModelServer) {
    route.route = core::InferenceRoute::kMeteredApi;
  }
  if (route.route == core::InferenceRoute::kMeteredApi) {
    route.price = KnownPrice(route.provider, route.model);
  }
  return route;
}

}  // namespace pulse::adapters::providers
