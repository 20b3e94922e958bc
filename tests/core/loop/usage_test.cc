// Usage and cost (core/loop/usage.h): known prices are priced exactly, unknown prices stay
// unknown on a metered route, and routes without per-token billing never report a cost.
#include "pulse/core/model/usage.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

namespace pulse::core {
namespace {

ModelRoute Metered(std::optional<ModelPrice> price) {
  ModelRoute route;
  route.provider = "openai";
  route.model = "gpt-4o";
  route.route = InferenceRoute::kMeteredApi;
  route.price = price;
  return route;
}

TEST_CASE("a metered route with a known price is priced per million tokens", "[core][loop]") {
  const ModelRoute route = Metered(ModelPrice{2.5, 10.0});
  const CallCost cost = CostOf(route, TokenUsage{1'000'000, 500'000});
  REQUIRE(cost.cost_usd.has_value());
  CHECK(*cost.cost_usd == Approx(2.5 + 5.0));
  CHECK(cost.budget_applicable);
  const CallCost small = CostOf(route, TokenUsage{1200, 300});
  CHECK(*small.cost_usd == Approx(1200 * 2.5e-6 + 300 * 10.0e-6));
  CHECK(*CostOf(route, TokenUsage{0, 0}).cost_usd == 0.0);
  // Negative counts from a confused provider count as zero, never as a refund.
  CHECK(*CostOf(route, TokenUsage{-5, -5}).cost_usd == 0.0);
}

TEST_CASE("an unknown or unusable price is an unknown cost that a budget applies to",
          "[core][loop]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::optional<ModelPrice>& price :
       {std::optional<ModelPrice>(), std::optional<ModelPrice>(ModelPrice{-1, 1}),
        std::optional<ModelPrice>(ModelPrice{1, nan})}) {
    const ModelRoute route = Metered(price);
    const CallCost cost = CostOf(route, TokenUsage{100, 100});
    CHECK_FALSE(cost.cost_usd.has_value());
    CHECK(cost.budget_applicable);
    CHECK_FALSE(UsablePrice(route).has_value());
  }
}

TEST_CASE("routes without per-token billing report no cost and no budget, never zero",
          "[core][loop]") {
  for (InferenceRoute kind :
       {InferenceRoute::kLocalModelServer, InferenceRoute::kCodingPlanAllowance}) {
    ModelRoute route = Metered(ModelPrice{1, 1});  // a price is configured but does not apply
    route.route = kind;
    const CallCost cost = CostOf(route, TokenUsage{100, 100});
    CHECK_FALSE(cost.cost_usd.has_value());
    CHECK_FALSE(cost.budget_applicable);
    CHECK_FALSE(BudgetApplicable(kind));
  }
  CHECK(BudgetApplicable(InferenceRoute::kMeteredApi));
}

TEST_CASE("usage totals count every call and keep unpriced calls apart", "[core][loop]") {
  UsageTotals totals;
  AddUsage(totals, TurnUsage{0, "openai:gpt-4o", 100, 10, 0.25, true});
  AddUsage(totals, TurnUsage{1, "openai:gpt-4o", 50, 5, std::nullopt, true});
  CHECK(totals.provider_calls == 2);
  CHECK(totals.input_tokens == 150);
  CHECK(totals.output_tokens == 15);
  CHECK(totals.priced_cost_usd == 0.25);
  CHECK(totals.unpriced_calls == 1);
}

TEST_CASE("a route is labelled by its identity, or not at all when unnamed", "[core][loop]") {
  CHECK(RouteLabel(Metered(std::nullopt)) == "openai:gpt-4o");
  CHECK(RouteLabel(ModelRoute{}).empty());
}

}  // namespace
}  // namespace pulse::core
