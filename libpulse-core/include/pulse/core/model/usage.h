// Token usage and money cost of provider calls (model_route.h explains the routes). Cost is
// derived from the route's known list price and never invented: an unknown price on a metered
// route is an unknown cost that a money budget must treat as a failure (fail closed), and a
// route without per-token billing (local model server, coding-plan allowance) has no cost a
// budget could apply to, reported as budget_applicable = false with an unknown cost — never as
// a made-up zero. Plain values and pure functions; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "pulse/core/model/llm_types.h"
#include "pulse/core/model/model_route.h"

namespace pulse::core {

// True for routes billed per token (kMeteredApi): only there does a money budget apply.
bool BudgetApplicable(InferenceRoute route);

// The route as usage records and events name it: ModelRoute::Identity(), or "" for a route
// with neither provider nor model set.
std::string RouteLabel(const ModelRoute& route);

// The price of `route` when it can be used for arithmetic: set, finite and non-negative on a
// metered route; nullopt otherwise (a negative or NaN price from configuration is unknown).
std::optional<ModelPrice> UsablePrice(const ModelRoute& route);

struct CallCost {
  std::optional<double> cost_usd;  // nullopt: unknown (unknown price, or not metered)
  bool budget_applicable = true;   // false: the route has no per-token money cost

  friend bool operator==(const CallCost&, const CallCost&) = default;
};

// The cost of `usage` on `route`: tokens / 1e6 × the per-million price, input and output
// priced separately. Negative token counts count as zero.
CallCost CostOf(const ModelRoute& route, const TokenUsage& usage);

// The usage of one provider call (every request counts: retries and the summary call too).
struct TurnUsage {
  int turn = 0;       // the run's turn counter when the call was made (0 = first turn)
  std::string route;  // ModelRoute::Identity() of the route that served it
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::optional<double> cost_usd;  // CostOf(...).cost_usd
  bool budget_applicable = true;   // CostOf(...).budget_applicable

  friend bool operator==(const TurnUsage&, const TurnUsage&) = default;
};

// Usage summed over every provider call of a session (kept whole when old TurnUsage entries
// are dropped).
struct UsageTotals {
  std::int64_t provider_calls = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  double priced_cost_usd = 0;       // the sum of the calls whose cost is known
  std::int64_t unpriced_calls = 0;  // calls whose cost is unknown (so the sum is a lower bound)

  friend bool operator==(const UsageTotals&, const UsageTotals&) = default;
};

// Adds one call to `totals`.
void AddUsage(UsageTotals& totals, const TurnUsage& call);

// The most TurnUsage entries a session keeps; older ones are dropped first (UsageTotals keeps
// counting them).
inline constexpr std::size_t kMaxSessionUsageEntries = 5000;

}  // namespace pulse::core
