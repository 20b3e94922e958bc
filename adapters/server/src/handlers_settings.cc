// Settings changed at runtime: the AI settings (GET/PUT /api/settings/ai, docs/providers.md).
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {

using adapters::http::HttpReply;
using adapters::http::HttpRequest;
using core::AgentErrorCode;

absl::Status BindSettingsRoutes(adapters::http::Router& router, ServerContext& /*ctx*/) {
  for (const char* name : {"get_ai_settings", "update_ai_settings"}) {
    PULSE_RETURN_IF_ERROR(router.Handle(name, [](const HttpRequest&) {
      return HttpReply::Error(AgentErrorCode::kServiceUnavailable,
                              "runtime AI settings are not available in this build");
    }));
  }
  return absl::OkStatus();
}

}  // namespace pulse::server
