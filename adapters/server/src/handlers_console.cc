// The operator console's routes (docs/console.md): its page and assets, and the console session
// (sign in with a human token, the session cookie and its CSRF token, sign out).
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {

using adapters::http::HttpReply;
using adapters::http::HttpRequest;
using core::AgentErrorCode;

absl::Status BindConsoleRoutes(adapters::http::Router& router, ServerContext& /*ctx*/) {
  // The page and its assets: none are compiled in yet.
  for (const char* name : {"console_page", "console_asset"}) {
    PULSE_RETURN_IF_ERROR(router.Handle(name, [](const HttpRequest&) {
      return HttpReply::Error(AgentErrorCode::kConsoleNotBuilt,
                              "this pulse-server was built without the console");
    }));
  }
  for (const char* name : {"sign_in_console", "get_console_session", "sign_out_console"}) {
    PULSE_RETURN_IF_ERROR(router.Handle(name, [](const HttpRequest&) {
      return HttpReply::Error(AgentErrorCode::kServiceUnavailable,
                              "console sessions are not available in this build");
    }));
  }
  return absl::OkStatus();
}

}  // namespace pulse::server
