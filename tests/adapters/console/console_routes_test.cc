// GET / and GET /assets/{asset} in the real pulse-server: the page with the console's Content-
// Security-Policy and no-cache, the hashed assets immutable for a year, a matching If-None-Match
// answered 304 without a body, and unknown or hostile asset names refused before or by the
// handler. A build without the console answers console_not_built instead, with a page for "/"
// saying how to build it.
#include <catch2/catch.hpp>
#include <string>

#include "pulse/adapters/console/console_assets.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

using adapters::console::ConsoleAsset;
using adapters::console::ConsoleAssets;

constexpr const char* kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

#if PULSE_CONSOLE_BUILT

TEST_CASE("the console page is served with its CSP, no-cache and a working ETag",
          "[console][e2e]") {
  TempDir dir;
  ServerProcess server(dir.path());
  const Reply page = Send(server.port(), "GET", "/");
  REQUIRE(page.status == 200);
  CHECK(page.Header("Content-Type") == "text/html; charset=utf-8");
  CHECK(page.Header("Content-Security-Policy") == kPolicy);
  CHECK(page.Header("Cache-Control") == "no-cache");
  CHECK(page.Header("X-Content-Type-Options") == "nosniff");
  CHECK(page.body == std::string(ConsoleAssets().front().bytes));
  const std::string etag = page.Header("ETag");
  CHECK(etag == std::string(ConsoleAssets().front().etag));

  // A browser revalidating its copy gets 304 and no body; a stale or weak copy of the same tag
  // counts too (If-None-Match compares weakly), another tag gets the page.
  for (const std::string& validator : {etag, "\"0000\", " + etag, "W/" + etag, std::string("*")}) {
    INFO(validator);
    const Reply again = Send(server.port(), "GET", "/", "", "", {{"If-None-Match", validator}});
    CHECK(again.status == 304);
    CHECK(again.body.empty());
    CHECK(again.Header("ETag") == etag);
  }
  CHECK(Send(server.port(), "GET", "/", "", "", {{"If-None-Match", "\"other\""}}).status == 200);
  CHECK(Send(server.port(), "GET", "/", "", "", {{"If-None-Match", ""}}).status == 200);
}

TEST_CASE("console assets are immutable, revalidate to 304 and match exact names only",
          "[console][e2e]") {
  TempDir dir;
  ServerProcess server(dir.path());
  for (const ConsoleAsset& asset : ConsoleAssets().subspan(1)) {
    const std::string path = "/" + std::string(asset.name);
    INFO(path);
    const Reply reply = Send(server.port(), "GET", path);
    REQUIRE(reply.status == 200);
    CHECK(reply.body == std::string(asset.bytes));
    CHECK(reply.Header("Content-Type") == std::string(asset.content_type));
    CHECK(reply.Header("Cache-Control") == "public, max-age=31536000, immutable");
    CHECK(reply.Header("ETag") == std::string(asset.etag));
    const Reply cached =
        Send(server.port(), "GET", path, "", "", {{"If-None-Match", std::string(asset.etag)}});
    CHECK(cached.status == 304);
    CHECK(cached.body.empty());
  }
  const std::string name(ConsoleAssets()[1].name.substr(7));
  // Unknown names: no such asset.
  for (const std::string& unknown :
       {std::string("/assets/app-NOSUCH00.js"), std::string("/assets/index.html"),
        std::string("/assets/") + name + "x", std::string("/assets/") + name + "%00x"}) {
    INFO(unknown);
    const Reply reply = Send(server.port(), "GET", unknown);
    CHECK(reply.status >= 400);
    CHECK(reply.status < 500);
    CHECK(reply.Header("Cache-Control") != "public, max-age=31536000, immutable");
  }
  CHECK(ErrorCode(Send(server.port(), "GET", "/assets/app-NOSUCH00.js").body) == "route_not_found");
  CHECK(ErrorCode(Send(server.port(), "GET", "/assets/index.html").body) == "route_not_found");
  // Names that try to leave assets/ never reach a file: refused as paths before the handler,
  // or matched by no route.
  for (const std::string& hostile :
       {std::string("/assets/..%2Findex.html"), std::string("/assets/%2e%2e"),
        std::string("/assets/..%5C") + name, std::string("/assets/../index.html"),
        std::string("/assets/a/") + name, std::string("/assets/%252e%252e%252f") + name,
        std::string("/assets/") + std::string(300, 'a')}) {
    INFO(hostile);
    const Reply reply = Send(server.port(), "GET", hostile);
    CHECK(reply.status >= 400);
    CHECK(reply.status < 500);
    CHECK(reply.body.find("<!doctype") == std::string::npos);
  }
  // Another method on the page is not served.
  CHECK(Send(server.port(), "POST", "/", "", "{}").status == 405);
}

#else

TEST_CASE("a server without the console says so at / and under /assets/", "[console][e2e]") {
  TempDir dir;
  ServerProcess server(dir.path());
  const Reply page = Send(server.port(), "GET", "/");
  CHECK(page.status == 404);
  CHECK(page.Header("Content-Type") == "text/html; charset=utf-8");
  CHECK(page.body.find("not built") != std::string::npos);
  CHECK(page.body.find("install-node-tools.sh") != std::string::npos);
  CHECK(page.body.find("console_not_built") != std::string::npos);  // the stable code
  CHECK(page.Header("Content-Security-Policy") == kPolicy);
  const Reply asset = Send(server.port(), "GET", "/assets/app-AAAAAAAA.js");
  CHECK(asset.status == 404);
  CHECK(ErrorCode(asset.body) == "console_not_built");
}

#endif

}  // namespace
}  // namespace pulse::testing::e2e
