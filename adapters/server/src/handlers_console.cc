// The operator console's routes (docs/console.md): its page and assets, and the console session
// (sign in with a human token, the session cookie and its CSRF token, sign out).
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "pulse/adapters/console/console_assets.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "server_context.h"

namespace pulse::server {
namespace {

using adapters::console::ConsoleAsset;
using adapters::http::HttpReply;
using adapters::http::HttpRequest;
using core::AgentErrorCode;

// The page loads only its own bundled script and style sheet and talks only to its own origin;
// no other site may frame it (clickjacking), and it submits no forms anywhere.
constexpr std::string_view kConsolePolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// The page names its assets by content hash, so the page itself must be revalidated on every
// load while an asset never changes under its name.
constexpr std::string_view kIndexCaching = "no-cache";
constexpr std::string_view kAssetCaching = "public, max-age=31536000, immutable";

constexpr std::string_view kNotBuiltPage =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<title>Pulse console not built</title></head><body>\n"
    "<h1>The Pulse console is not built into this server</h1>\n"
    "<p>This pulse-server was built without Node.js, so it carries no console. The HTTP API "
    "works as usual.</p>\n"
    "<p>To build the console: run <code>cmake/install-node-tools.sh</code> (it installs the "
    "console's pinned build tools with <code>npm ci</code>), reconfigure with "
    "<code>-DPULSE_CONSOLE=ON</code> and rebuild <code>pulse-server</code>. See "
    "docs/console.md.</p>\n<p>Error code: <code>console_not_built</code></p>\n</body></html>\n";

// Whether If-None-Match names `etag`: "*", or the tag in a comma-separated list, compared
// weakly as RFC 9110 asks for this header (a W/ prefix is ignored).
bool NoneMatchHits(std::string_view header, std::string_view etag) {
  for (absl::string_view item : absl::StrSplit(core::ToAbsl(header), ',')) {
    absl::string_view tag = absl::StripAsciiWhitespace(item);
    if (tag == "*") {
      return true;
    }
    absl::ConsumePrefix(&tag, "W/");
    if (tag == core::ToAbsl(etag)) {
      return true;
    }
  }
  return false;
}

HttpReply Serve(const HttpRequest& request, const ConsoleAsset& asset,
                std::string_view cache_control) {
  HttpReply reply;
  if (NoneMatchHits(request.Header("if-none-match"), asset.etag)) {
    reply.status = 304;
  } else {
    reply = HttpReply::Text(std::string(asset.bytes), std::string(asset.content_type));
  }
  reply.headers.emplace_back("ETag", std::string(asset.etag));
  reply.headers.emplace_back("Cache-Control", std::string(cache_control));
  return reply;
}

HttpReply ConsolePage(const HttpRequest& request) {
  const ConsoleAsset* index = adapters::console::ConsoleIndex();
  if (index == nullptr) {
    HttpReply reply = HttpReply::Text(std::string(kNotBuiltPage), "text/html; charset=utf-8",
                                      core::HttpStatusFor(AgentErrorCode::kConsoleNotBuilt));
    reply.headers.emplace_back("Content-Security-Policy", std::string(kConsolePolicy));
    reply.headers.emplace_back("Cache-Control", "no-store");
    return reply;
  }
  HttpReply reply = Serve(request, *index, kIndexCaching);
  reply.headers.emplace_back("Content-Security-Policy", std::string(kConsolePolicy));
  return reply;
}

HttpReply ConsoleAssetFile(const HttpRequest& request) {
  if (!adapters::console::ConsoleBuilt()) {
    return HttpReply::Error(AgentErrorCode::kConsoleNotBuilt,
                            "this pulse-server was built without the console");
  }
  auto name = request.path_params.find("asset");
  const ConsoleAsset* asset = name == request.path_params.end()
                                  ? nullptr
                                  : adapters::console::FindConsoleAsset(name->second);
  if (asset == nullptr) {
    return HttpReply::Error(AgentErrorCode::kRouteNotFound, "no such console asset");
  }
  return Serve(request, *asset, kAssetCaching);
}

}  // namespace

absl::Status BindConsoleRoutes(adapters::http::Router& router, ServerContext& /*ctx*/,
                               adapters::http::ConsoleSessions& sessions) {
  PULSE_RETURN_IF_ERROR(router.Handle("console_page", ConsolePage));
  PULSE_RETURN_IF_ERROR(router.Handle("console_asset", ConsoleAssetFile));
  PULSE_RETURN_IF_ERROR(
      router.Handle("sign_in_console", adapters::http::ConsoleSignInHandler(sessions)));
  PULSE_RETURN_IF_ERROR(
      router.Handle("get_console_session", adapters::http::ConsoleSessionHandler(sessions)));
  PULSE_RETURN_IF_ERROR(
      router.Handle("sign_out_console", adapters::http::ConsoleSignOutHandler(sessions)));
  return absl::OkStatus();
}

}  // namespace pulse::server
