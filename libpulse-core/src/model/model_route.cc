#include "pulse/core/model/model_route.h"

#include <array>

#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<InferenceRoute>, 3> kInferenceRoutes = {{
    {InferenceRoute::kMeteredApi, "metered_api"},
    {InferenceRoute::kLocalModelServer, "local_model_server"},
    {InferenceRoute::kCodingPlanAllowance, "coding_plan_allowance"},
}};

}  // namespace

std::string_view ToString(InferenceRoute route) { return WireNameOf(kInferenceRoutes, route); }

std::optional<InferenceRoute> ParseInferenceRoute(std::string_view text) {
  return WireValueOf(kInferenceRoutes, text);
}

std::string ModelRoute::Identity() const {
  std::string out;
  out.reserve(provider.size() + 1 + model.size());
  out.append(provider).append(":").append(model);
  return out;
}

}  // namespace pulse::core
