// The provider registry: the one table of model providers Pulse can talk to (name, wire
// protocol family, defaults, credentials, how inference is paid for), the model-string syntax
// that names a provider and model ("anthropic:claude-3-5-sonnet-latest"), and the list prices
// known for well-known models. Facts follow docs/providers.md "The registry". Static data and pure
// functions; thread-safe.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/model/model_route.h"

namespace pulse::adapters::providers {

enum class ProtocolFamily { kOpenAiCompatible, kOllama, kAnthropic, kGemini };
// Wire: openai_compatible, ollama, anthropic, gemini.
std::string_view ToString(ProtocolFamily family);

struct ProviderEntry {
  std::string_view name;          // registry id, the prefix of model strings: "openai"
  std::string_view display_name;  // "OpenAI"
  ProtocolFamily family;
  std::string_view default_model;     // "" when the operator must name one
  std::string_view default_base_url;  // "" when the operator must give one
  bool base_url_overridable;          // an operator may point it elsewhere (a proxy, a mirror)
  bool base_url_required;             // no default: the operator must give one
  std::string_view credential_field;  // settings field holding the key: "<id>_api_key"
  bool requires_api_key;              // with the default base URL
  bool api_key_optional_with_custom_base_url;
  std::array<std::string_view, 2> env_vars;  // where a key may come from; "" unused
  core::InferenceRoute route;
  // OpenAI-compatible dialect: the completion-cap member and whether stream_options is taken.
  std::string_view max_tokens_field = "max_tokens";
  bool stream_usage_option = true;
};

// Every entry, in display order: openai, anthropic, gemini, openrouter, deepseek, groq,
// mistral, cerebras, together, fireworks, zai, zai-coding, ollama, openai-compatible.
std::span<const ProviderEntry> ProviderRegistry();

// The entry named `name` (exact, lower case), or nullptr.
const ProviderEntry* FindProvider(std::string_view name);

// A provider and a model, as named by a model string.
struct ModelRef {
  std::string provider;
  std::string model;

  friend bool operator==(const ModelRef&, const ModelRef&) = default;
};

// Parses a model string. "provider:model" when the prefix is a registry name (the model may
// itself hold colons: "ollama:qwen3:8b"). "vendor/model" for OpenRouter's vendor prefixes
// (openai/, anthropic/, google/, deepseek/, meta-llama/, mistralai/, x-ai/, xai/, cohere/,
// qwen/) is OpenRouter with the whole string as the model; "provider/model" for any other
// registry name is that provider. Otherwise the provider is guessed from the model: claude* is
// anthropic, gpt*/o1*/o3*/o4* openai, deepseek* deepseek, gemini* gemini, anything else ollama.
// InvalidArgument for an empty string or an empty model.
[[nodiscard]] absl::StatusOr<ModelRef> ParseModelString(std::string_view text);

// The list price of `model` on `provider` (US dollars per million tokens, base tier, as the
// provider publishes it), or nullopt when Pulse does not know it. Only metered routes have one.
std::optional<core::ModelPrice> KnownPrice(std::string_view provider, std::string_view model);

}  // namespace pulse::adapters::providers
