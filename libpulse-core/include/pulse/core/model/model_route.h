// The route a run's provider calls take, and what they cost. A route is the provider name, the
// model and how inference is paid for: a metered API bills per token (the price may or may not
// be known), a local model server and a coding-plan allowance have no per-run money cost. The
// route also decides the outbound context policy: only a local model server sees unredacted
// context. Usage is counted per provider call; cost is derived, never invented: an unknown
// price is reported as unknown, and routes without per-token billing report
// budget_applicable = false rather than a zero. Plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pulse::core {

enum class InferenceRoute {
  kMeteredApi,           // a hosted API billed per token
  kLocalModelServer,     // Ollama, vLLM, LM Studio, llama.cpp on the operator's own machines
  kCodingPlanAllowance,  // a subscription allowance (Z.ai coding endpoint): no per-run price
};
// Wire: metered_api, local_model_server, coding_plan_allowance.
std::string_view ToString(InferenceRoute route);
std::optional<InferenceRoute> ParseInferenceRoute(std::string_view text);

// US dollars per million tokens.
struct ModelPrice {
  double input_usd_per_mtok = 0;
  double output_usd_per_mtok = 0;

  friend bool operator==(const ModelPrice&, const ModelPrice&) = default;
};

struct ModelRoute {
  std::string provider;  // registry name: openai, anthropic, ollama, ...
  std::string model;     // the model id as the provider knows it
  InferenceRoute route = InferenceRoute::kMeteredApi;
  std::optional<ModelPrice> price;  // known list price of `model` on a metered route

  // "provider:model", the route identity shown to users.
  std::string Identity() const;

  friend bool operator==(const ModelRoute&, const ModelRoute&) = default;
};

}  // namespace pulse::core
