// The operator console's routes (docs/console.md): its page and assets, and the console session
// (sign in with a human token, the session cookie and its CSRF token, sign out).
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/status_macros.h"
#include "server_context.h"

namespace pulse::server {

using adapters::http::HttpReply;
using adapters::http::HttpRequest;
using core::AgentErrorCode;

absl::Status BindConsoleRoutes(adapters::http::Router& router, ServerContext& /*ctx*/,
                               adapters::http::ConsoleSessions& sessions) {
  // The page and its assets: none are compiled in yet.
  for (const char* name : {"console_page", "console_asset"}) {
    PULSE_RETURN_IF_ERROR(router.Handle(name, [](const HttpRequest&) {
      return HttpReply::Error(AgentErrorCode::kConsoleNotBuilt,
                              "this pulse-server was built without the console");
    }));
  }
  PULSE_RETURN_IF_ERROR(
      router.Handle("sign_in_console", adapters::http::ConsoleSignInHandler(sessions)));
  PULSE_RETURN_IF_ERROR(
      router.Handle("get_console_session", adapters::http::ConsoleSessionHandler(sessions)));
  PULSE_RETURN_IF_ERROR(
      router.Handle("sign_out_console", adapters::http::ConsoleSignOutHandler(sessions)));
  return absl::OkStatus();
}

}  // namespace pulse::server
