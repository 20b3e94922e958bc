#include "pulse/adapters/providers/provider_registry.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::providers {
namespace {

using core::InferenceRoute;
using enum ProtocolFamily;

constexpr std::array<core::WireName<ProtocolFamily>, 4> kFamilies = {{
    {kOpenAiCompatible, "openai_compatible"},
    {kOllama, "ollama"},
    {kAnthropic, "anthropic"},
    {kGemini, "gemini"},
}};

// The registry. Defaults and environment variables follow docs/providers.md "The registry". A base
// URL includes the API version path the protocol's request paths are appended to.
constexpr std::array<ProviderEntry, 14> kProviders = {{
    {.name = "openai",
     .display_name = "OpenAI",
     .family = kOpenAiCompatible,
     .default_model = "gpt-4o",
     .default_base_url = "https://api.openai.com/v1",
     .base_url_overridable = true,
     .base_url_required = false,
     .credential_field = "openai_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = true,
     .env_vars = {"OPENAI_API_KEY", ""},
     .route = InferenceRoute::kMeteredApi,
     .max_tokens_field = "max_completion_tokens"},
    {.name = "anthropic",
     .display_name = "Anthropic",
     .family = kAnthropic,
     .default_model = "claude-3-5-sonnet-latest",
     .default_base_url = "https://api.anthropic.com/v1",
     .base_url_overridable = true,
     .base_url_required = false,
     .credential_field = "anthropic_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"ANTHROPIC_API_KEY", ""},
     .route = InferenceRoute::kMeteredApi},
    {.name = "gemini",
     .display_name = "Google Gemini",
     .family = kGemini,
     .default_model = "gemini-1.5-pro",
     .default_base_url = "https://generativelanguage.googleapis.com/v1beta",
     .base_url_overridable = true,
     .base_url_required = false,
     .credential_field = "gemini_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
     .route = InferenceRoute::kMeteredApi},
    {.name = "openrouter",
     .display_name = "OpenRouter",
     .family = kOpenAiCompatible,
     .default_model = "openai/gpt-4o-mini",
     .default_base_url = "https://openrouter.ai/api/v1",
     .base_url_overridable = false,
     .base_url_required = false,
     .credential_field = "openrouter_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"OPENROUTER_API_KEY", ""},
     .route = InferenceRoute::kMeteredApi},
    {.name = "deepseek",
     .display_name = "DeepSeek",
     .family = kOpenAiCompatible,
     .default_model = "deepseek-v4-flash",
     .default_base_url = "https://api.deepseek.com",
     .base_url_overridable = false,
     .base_url_required = false,
     .credential_field = "deepseek_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"DEEPSEEK_API_KEY", ""},
     .route = InferenceRoute::kMeteredApi},
    {.name = "groq",
     .display_name = "Groq",
     .family = kOpenAiCompatible,
     .default_model = "llama-3.3-70b-versatile",
     .default_base_url = "https://api.groq.com/openai/v1",
     .base_url_overridable = false,
     .base_url_required = false,
     .credential_field = "groq_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"GROQ_API_KEY", ""},
     .route = InferenceRoute::kMeteredApi},
    // Mistral refuses stream_options (422 extra_forbidden) and reports usage without it.
    {.name = "mistral",
     .display_name = "Mistral",
     .family = kOpenAiCompatible,
     .default_model = "mistral-large-latest",
     .default_base_url = "https://api.mistral.ai/v1",
     .base_url_overridable = false,
     .base_url_required = false,
     .credential_field = "mistral_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"MISTRAL_API_KEY", ""},
     .route = InferenceRoute::kMeteredApi,
     .stream_usage_option = false},
    {.name = "cerebras",
     .display_name = "Cerebras",
     .family = kOpenAiCompatible,
     .default_model = "llama-4-scout-17b-16e-instruct",
     .default_base_url = "https://api.cerebras.ai/v1",
     .base_url_overridable = false,
     .base_url_required = false,
     .credential_field = "cerebras_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"CEREBRAS_API_KEY", ""},
     .route = InferenceRoute::kMeteredApi},
    {.name = "together",
     .display_name = "Together AI",
     .family = kOpenAiCompatible,
     .default_model = "meta-llama/Llama-3.3-70B-Instruct-Turbo",
     .default_base_url = "https://api.together.xyz/v1",
     .base_url_overridable = false,
     .base_url_required = false,
     .credential_field = "together_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"TOGETHER_API_KEY", ""},
     .route = InferenceRoute::kMeteredApi},
    {.name = "fireworks",
     .display_name = "Fireworks AI",
     .family = kOpenAiCompatible,
     .default_model = "accounts/fireworks/models/llama-v3p1-70b-instruct",
     .default_base_url = "https://api.fireworks.ai/inference/v1",
     .base_url_overridable = false,
     .base_url_required = false,
     .credential_field = "fireworks_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"FIREWORKS_API_KEY", ""},
     .route = InferenceRoute::kMeteredApi},
    {.name = "zai",
     .display_name = "Z.ai",
     .family = kOpenAiCompatible,
     .default_model = "glm-5.2",
     .default_base_url = "https://api.z.ai/api/paas/v4",
     .base_url_overridable = true,
     .base_url_required = false,
     .credential_field = "zai_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"ZHIPU_API_KEY", "ZAI_API_KEY"},
     .route = InferenceRoute::kMeteredApi},
    // The GLM Coding Plan endpoint: usage counts against a subscription allowance.
    {.name = "zai-coding",
     .display_name = "Z.ai Coding Plan",
     .family = kOpenAiCompatible,
     .default_model = "glm-5.2",
     .default_base_url = "https://api.z.ai/api/coding/paas/v4",
     .base_url_overridable = true,
     .base_url_required = false,
     .credential_field = "zai_coding_api_key",
     .requires_api_key = true,
     .api_key_optional_with_custom_base_url = false,
     .env_vars = {"ZHIPU_API_KEY", "ZAI_API_KEY"},
     .route = InferenceRoute::kCodingPlanAllowance},
    // No key by default; one is sent as a bearer token to a server behind authentication.
    {.name = "ollama",
     .display_name = "Ollama",
     .family = kOllama,
     .default_model = "qwen3:8b",
     .default_base_url = "http://localhost:11434",
     .base_url_overridable = true,
     .base_url_required = false,
     .credential_field = "ollama_api_key",
     .requires_api_key = false,
     .api_key_optional_with_custom_base_url = true,
     .env_vars = {"", ""},
     .route = InferenceRoute::kLocalModelServer},
    // vLLM, LM Studio, llama.cpp server and any other chat-completions server.
    {.name = "openai-compatible",
     .display_name = "OpenAI-compatible server",
     .family = kOpenAiCompatible,
     .default_model = "",
     .default_base_url = "",
     .base_url_overridable = true,
     .base_url_required = true,
     .credential_field = "openai_compatible_api_key",
     .requires_api_key = false,
     .api_key_optional_with_custom_base_url = true,
     .env_vars = {"", ""},
     .route = InferenceRoute::kLocalModelServer},
}};

// OpenRouter names models "<vendor>/<model>".
constexpr std::array<std::string_view, 10> kOpenRouterVendorPrefixes = {
    "openai",    "anthropic", "google", "deepseek", "meta-llama",
    "mistralai", "x-ai",      "xai",    "cohere",   "qwen"};

struct PriceRow {
  std::string_view provider;
  std::string_view model;
  core::ModelPrice price;
};

// List prices in US dollars per million tokens (input, output) as each provider published them
// (checked mid-2025): the base tier, i.e. the shortest context band, no caching, no batch
// discount. A model missing here has no known price and its cost is reported as unknown.
constexpr std::array<PriceRow, 19> kPrices = {{
    {"openai", "gpt-4o", {2.50, 10.00}},
    {"openai", "gpt-4o-mini", {0.15, 0.60}},
    {"openai", "gpt-4.1", {2.00, 8.00}},
    {"openai", "gpt-4.1-mini", {0.40, 1.60}},
    {"anthropic", "claude-3-5-sonnet-latest", {3.00, 15.00}},
    {"anthropic", "claude-3-7-sonnet-latest", {3.00, 15.00}},
    {"anthropic", "claude-3-5-haiku-latest", {0.80, 4.00}},
    {"anthropic", "claude-sonnet-4-0", {3.00, 15.00}},
    {"anthropic", "claude-opus-4-0", {15.00, 75.00}},
    {"gemini", "gemini-1.5-pro", {1.25, 5.00}},
    {"gemini", "gemini-1.5-flash", {0.075, 0.30}},
    {"gemini", "gemini-2.0-flash", {0.10, 0.40}},
    {"gemini", "gemini-2.5-pro", {1.25, 10.00}},
    {"gemini", "gemini-2.5-flash", {0.30, 2.50}},
    {"openrouter", "openai/gpt-4o-mini", {0.15, 0.60}},
    {"groq", "llama-3.3-70b-versatile", {0.59, 0.79}},
    {"mistral", "mistral-large-latest", {2.00, 6.00}},
    {"together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", {0.88, 0.88}},
    {"fireworks", "accounts/fireworks/models/llama-v3p1-70b-instruct", {0.90, 0.90}},
}};

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string_view GuessProvider(std::string_view model) {
  const std::string lower = absl::AsciiStrToLower(core::ToAbsl(model));
  if (StartsWith(lower, "claude")) {
    return "anthropic";
  }
  if (StartsWith(lower, "gpt") || StartsWith(lower, "o1") || StartsWith(lower, "o3") ||
      StartsWith(lower, "o4")) {
    return "openai";
  }
  if (StartsWith(lower, "deepseek")) {
    return "deepseek";
  }
  if (StartsWith(lower, "gemini")) {
    return "gemini";
  }
  return "ollama";
}

absl::StatusOr<ModelRef> Named(std::string_view provider, std::string_view model) {
  if (model.empty()) {
    return absl::InvalidArgumentError("model string names a provider but no model");
  }
  return ModelRef{std::string(provider), std::string(model)};
}

}  // namespace

std::string_view ToString(ProtocolFamily family) { return core::WireNameOf(kFamilies, family); }

std::span<const ProviderEntry> ProviderRegistry() { return kProviders; }

const ProviderEntry* FindProvider(std::string_view name) {
  for (const ProviderEntry& entry : kProviders) {
    if (entry.name == name) {
      return &entry;
    }
  }
  return nullptr;
}

absl::StatusOr<ModelRef> ParseModelString(std::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError("model string is empty");
  }
  if (const std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    if (const ProviderEntry* entry = FindProvider(text.substr(0, colon)); entry != nullptr) {
      return Named(entry->name, text.substr(colon + 1));
    }
  }
  if (const std::size_t slash = text.find('/'); slash != std::string_view::npos) {
    const std::string_view prefix = text.substr(0, slash);
    for (std::string_view vendor : kOpenRouterVendorPrefixes) {
      if (prefix == vendor) {
        return Named("openrouter", text);
      }
    }
    if (const ProviderEntry* entry = FindProvider(prefix); entry != nullptr) {
      return Named(entry->name, text.substr(slash + 1));
    }
  }
  return ModelRef{std::string(GuessProvider(text)), std::string(text)};
}

std::optional<core::ModelPrice> KnownPrice(std::string_view provider, std::string_view model) {
  for (const PriceRow& row : kPrices) {
    if (row.provider == provider && row.model == model) {
      return row.price;
    }
  }
  return std::nullopt;
}

}  // namespace pulse::adapters::providers
