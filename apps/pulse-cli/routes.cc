#include "routes.h"

#include <algorithm>

#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/capability_projection.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/manifest/surface.h"
#include "pulse/core/status_macros.h"

namespace pulse::cli {

absl::StatusOr<ApiCall> CapabilityCall(std::string_view name, const rapidjson::Value& args) {
  const core::AgentCapability* capability = core::FindAgentCapability(name);
  if (capability == nullptr) {
    return absl::InvalidArgumentError("no capability named " + std::string(name));
  }
  PULSE_ASSIGN_OR_RETURN(core::CapabilityCall call, core::ProjectCapabilityCall(*capability, args));
  return ApiCall{call.method, call.Target(), std::move(call.body_json)};
}

absl::StatusOr<ApiCall> RouteCall(std::string_view name,
                                  const std::map<std::string, std::string>& params,
                                  const std::vector<std::pair<std::string, std::string>>& query,
                                  std::optional<std::string> body) {
  const core::SurfaceRoute* route = core::FindSurfaceRoute(name);
  if (route == nullptr || route->kind != core::SurfaceRouteKind::kServer) {
    return absl::InvalidArgumentError("no server route named " + std::string(name));
  }
  PULSE_ASSIGN_OR_RETURN(std::vector<core::PathSegment> segments,
                         core::ParsePathTemplate(route->path));
  core::CapabilityCall call;
  call.method = route->method;
  for (const core::PathSegment& segment : segments) {
    call.path += "/";
    if (!segment.placeholder) {
      call.path += segment.text;
      continue;
    }
    const auto it = params.find(segment.text);
    if (it == params.end() || it->second.empty()) {
      return absl::InvalidArgumentError("missing " + segment.text);
    }
    call.path += core::PercentEncode(it->second);
  }
  call.query = query;
  std::sort(call.query.begin(), call.query.end());
  return ApiCall{call.method, call.Target(), std::move(body)};
}

}  // namespace pulse::cli
