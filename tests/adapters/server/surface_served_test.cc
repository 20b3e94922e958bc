// pulse-server serves the surface table (core/manifest/surface.h), through the real adapter on
// a loopback port: every row answers at its method and path (a row without a handler would be
// 404 route_not_found), public rows without a token, scoped rows only with their scope; what
// is not a row is refused as it always was.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>

#include "httplib.h"
#include "pulse/adapters/server/server_app.h"
#include "pulse/adapters/server/server_config.h"
#include "pulse/adapters/server/token_command.h"
#include "pulse/adapters/system/system_clock.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/manifest/surface.h"
#include "pulse/testing/temp_dir.h"

namespace pulse::server {
namespace {

class TempDir : public pulse::testing::TempDir {
 public:
  TempDir() : pulse::testing::TempDir("pulse-surface") {}
};

// The row's path with every placeholder filled.
std::string PathOf(const core::SurfaceRoute& row) {
  absl::StatusOr<std::vector<core::PathSegment>> segments = core::ParsePathTemplate(row.path);
  REQUIRE(segments.ok());
  std::string path;
  for (const core::PathSegment& segment : *segments) {
    path += "/" + (segment.placeholder ? std::string("x-1") : segment.text);
  }
  return path.empty() ? "/" : path;  // the root has no segment
}

std::string ErrorCode(const httplib::Result& result) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(result->body);
  if (!doc.ok() || !doc->IsObject() || !doc->HasMember("error") || !(*doc)["error"].IsString()) {
    return "";
  }
  return (*doc)["error"].GetString();
}

httplib::Result Call(httplib::Client& client, const core::SurfaceRoute& row,
                     const httplib::Headers& headers) {
  const std::string path = PathOf(row);
  if (row.method == "GET") {
    return client.Get(path, headers);
  }
  if (row.method == "DELETE") {
    return client.Delete(path, headers);
  }
  if (row.method == "PUT") {
    return client.Put(path, headers, "{}", "application/json");
  }
  return client.Post(path, headers, "{}", "application/json");
}

// pulse-server on the demo fleet over `data_dir`, listening on an ephemeral loopback port,
// Patrol off.
std::unique_ptr<ServerApp> StartDemoServer(const std::string& data_dir) {
  ServerSettings flags;
  flags.listen = "127.0.0.1:0";
  flags.data_dir = data_dir;
  flags.fleet = "demo";
  flags.patrol_interval = "0";
  absl::StatusOr<ServerConfig> config = ResolveServerConfig(flags, std::nullopt);
  REQUIRE(config.ok());
  absl::StatusOr<std::unique_ptr<ServerApp>> app = ServerApp::Open(*config);
  REQUIRE(app.ok());
  REQUIRE((*app)->Start().ok());
  return *std::move(app);
}

TEST_CASE("pulse-server answers every surface row at its method and path", "[server][surface]") {
  TempDir dir;
  // One token per scope the table names, each holding that scope alone.
  adapters::system::SystemClock system_clock;
  std::map<core::Scope, std::string> tokens;
  for (const core::SurfaceRoute& row : core::SurfaceRoutes()) {
    if (row.scope.has_value() && tokens.count(*row.scope) == 0) {
      TokenCreateOptions options;
      options.data_dir = dir.path();
      options.name = "t-" + std::string(core::ToString(*row.scope));
      options.scopes = std::string(core::ToString(*row.scope));
      absl::StatusOr<std::string> token = CreateApiToken(options, system_clock);
      REQUIRE(token.ok());
      tokens.emplace(*row.scope, *token);
    }
  }
  const std::unique_ptr<ServerApp> app = StartDemoServer(dir.path());
  httplib::Client client("127.0.0.1", app->port());
  client.set_read_timeout(10, 0);

  for (const core::SurfaceRoute& row : core::SurfaceRoutes()) {
    INFO(row.method << " " << row.path);
    httplib::Result anonymous = Call(client, row, {});
    REQUIRE(anonymous);
    CHECK(ErrorCode(anonymous) != "method_not_allowed");
    if (row.name == "console_asset") {
      // Reached, and there is no asset called x-1 (console_not_built without the console).
      CHECK(anonymous->status == 404);
      continue;
    }
    CHECK(ErrorCode(anonymous) != "route_not_found");
    if (!row.scope.has_value()) {
      // Public rows answer without a credential; the console's session routes answer for a
      // request without a session (a sign-in needs a token in its body).
      const std::map<std::string, int> expected = {
          {"sign_in_console", 400}, {"get_console_session", 401}, {"sign_out_console", 200}};
      auto it = expected.find(row.name);
      if (it != expected.end()) {
        CHECK(anonymous->status == it->second);
      } else if (row.name == "console_page") {
        // The console, or (built without Node) an HTML page that names the stable code.
        CHECK((anonymous->status == 200 ||
               (anonymous->status == 404 &&
                anonymous->body.find("console_not_built") != std::string::npos)));
      } else {
        CHECK(anonymous->status == 200);
      }
      continue;
    }
    CHECK(anonymous->status == 401);
    if (row.streaming) {
      continue;  // an authorized stream stays open; its routing is shown above
    }
    httplib::Result authorized =
        Call(client, row, {{std::string(core::kApiTokenHeader), tokens.at(*row.scope)}});
    REQUIRE(authorized);
    CHECK(authorized->status != 401);
    CHECK(ErrorCode(authorized) != "missing_scope");
    CHECK(ErrorCode(authorized) != "route_not_found");
    CHECK(ErrorCode(authorized) != "method_not_allowed");
  }

  // What is not a row.
  httplib::Result unknown = client.Get("/api/no-such-route");
  REQUIRE(unknown);
  CHECK(unknown->status == 404);
  CHECK(ErrorCode(unknown) == "route_not_found");
  httplib::Result wrong_method = client.Patch("/healthz", "{}", "application/json");
  REQUIRE(wrong_method);
  CHECK(wrong_method->status == 405);
  CHECK(ErrorCode(wrong_method) == "method_not_allowed");
  CHECK(wrong_method->get_header_value("Allow") == "GET");
  httplib::Result encoded = client.Get("/%68ealthz");
  REQUIRE(encoded);
  CHECK(encoded->status == 200);
  httplib::Result bad_escape = client.Get("/api/actions/%zz");
  REQUIRE(bad_escape);
  CHECK(bad_escape->status == 400);
  CHECK(ErrorCode(bad_escape) == "invalid_request");
  httplib::Result oversized = client.Get("/" + std::string(4000, 'a'));
  REQUIRE(oversized);
  CHECK(oversized->status == 414);
  CHECK(app->Shutdown());
}

// The event loops answer the store reads and, over the demo fleet, the fleet context themselves
// (server_app.cc, loop_routes); a token's first use is a write, so that request runs again on
// the handler pool and the use is recorded.
TEST_CASE("pulse-server answers its reads on the event loop and still records a token's use",
          "[server][surface]") {
  TempDir dir;
  adapters::system::SystemClock system_clock;
  const auto token = [&](const std::string& name, const std::string& scopes) {
    TokenCreateOptions options;
    options.data_dir = dir.path();
    options.name = name;
    options.scopes = scopes;
    absl::StatusOr<std::string> created = CreateApiToken(options, system_clock);
    REQUIRE(created.ok());
    return *created;
  };
  const std::string reader = token("reader", "monitoring:read");
  const std::string admin = token("admin", "settings:write");
  const std::unique_ptr<ServerApp> app = StartDemoServer(dir.path());
  httplib::Client client("127.0.0.1", app->port());
  client.set_read_timeout(10, 0);
  const httplib::Headers as_reader = {{std::string(core::kApiTokenHeader), reader}};

  for (int i = 0; i < 3; ++i) {
    httplib::Result context = client.Get("/api/agent/fleet-context", as_reader);
    REQUIRE(context);
    CHECK(context->status == 200);
    absl::StatusOr<rapidjson::Document> doc = core::ParseJson(context->body);
    REQUIRE(doc.ok());
    REQUIRE((*doc).HasMember("resources"));
    CHECK((*doc)["resources"].Size() > 0);
  }
  httplib::Result status = client.Get("/api/agent/patrol-control/status", as_reader);
  REQUIRE(status);
  CHECK(status->status == 200);

  const adapters::http::HttpServerStats stats = app->http_stats();
  CHECK(stats.loop_refused >= 1);   // the reader's first use, recorded on the pool
  CHECK(stats.loop_answered >= 3);  // the rest
  httplib::Result listed =
      client.Get("/api/security/tokens", {{std::string(core::kApiTokenHeader), admin}});
  REQUIRE(listed);
  REQUIRE(listed->status == 200);
  absl::StatusOr<rapidjson::Document> tokens = core::ParseJson(listed->body);
  REQUIRE(tokens.ok());
  bool reader_used = false;
  const rapidjson::Value& list = tokens->IsArray() ? *tokens : (*tokens)["tokens"];
  for (const rapidjson::Value& info : list.GetArray()) {
    if (std::string(info["name"].GetString()) == "reader") {
      reader_used = info.HasMember("lastUsedAt");
    }
  }
  CHECK(reader_used);
  CHECK(app->Shutdown());
}

}  // namespace
}  // namespace pulse::server
