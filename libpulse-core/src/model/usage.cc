#include "pulse/core/model/usage.h"

#include <algorithm>
#include <cmath>

namespace pulse::core {
namespace {

bool UsableRate(double usd_per_mtok) { return std::isfinite(usd_per_mtok) && usd_per_mtok >= 0; }

constexpr double kTokensPerPriceUnit = 1'000'000.0;

}  // namespace

bool BudgetApplicable(InferenceRoute route) { return route == InferenceRoute::kMeteredApi; }

std::string RouteLabel(const ModelRoute& route) {
  return route.provider.empty() && route.model.empty() ? std::string() : route.Identity();
}

std::optional<ModelPrice> UsablePrice(const ModelRoute& route) {
  if (!BudgetApplicable(route.route) || !route.price.has_value() ||
      !UsableRate(route.price->input_usd_per_mtok) ||
      !UsableRate(route.price->output_usd_per_mtok)) {
    return std::nullopt;
  }
  return route.price;
}

CallCost CostOf(const ModelRoute& route, const TokenUsage& usage) {
  CallCost cost;
  cost.budget_applicable = BudgetApplicable(route.route);
  const std::optional<ModelPrice> price = UsablePrice(route);
  if (!price.has_value()) {
    return cost;
  }
  const double input = static_cast<double>(std::max<std::int64_t>(0, usage.input_tokens));
  const double output = static_cast<double>(std::max<std::int64_t>(0, usage.output_tokens));
  cost.cost_usd = input / kTokensPerPriceUnit * price->input_usd_per_mtok +
                  output / kTokensPerPriceUnit * price->output_usd_per_mtok;
  return cost;
}

void AddUsage(UsageTotals& totals, const TurnUsage& call) {
  ++totals.provider_calls;
  totals.input_tokens += std::max<std::int64_t>(0, call.input_tokens);
  totals.output_tokens += std::max<std::int64_t>(0, call.output_tokens);
  if (call.cost_usd.has_value()) {
    totals.priced_cost_usd += *call.cost_usd;
  } else {
    ++totals.unpriced_calls;
  }
}

}  // namespace pulse::core
