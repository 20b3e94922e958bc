// (b) Scope checks against the real binary, generated from the manifest it serves: every
// capability (and every scoped server route) called with a token that holds every scope but
// the one it needs is refused with 403 and exactly the missing_scope envelope; the same call
// with a token holding only that scope gets past authorization.
#include "pulse/core/policy/scope.h"

#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "pulse/adapters/http/server_routes.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

struct Target {
  std::string name;
  std::string method;
  std::string path;
  std::string scope;
  bool streaming = false;
};

// `path_template` with each placeholder filled with a well-formed id.
std::string Fill(const std::string& path_template) {
  static const std::map<std::string, std::string> values = {{"{resourceId}", "vm%3A101"},
                                                            {"{actionId}", "act_0123456789abcdef"},
                                                            {"{sessionId}", "ses_e2e"},
                                                            {"{questionId}", "q_e2e"},
                                                            {"{runId}", "patrol-e2e"},
                                                            {"{acknowledgementId}", "ack-e2e"},
                                                            {"{tokenId}", "tok_0123456789abcdef"},
                                                            {"{channel}", "ops"}};
  std::string out = path_template;
  for (const auto& [placeholder, value] : values) {
    for (std::size_t at = out.find(placeholder); at != std::string::npos;
         at = out.find(placeholder)) {
      out.replace(at, placeholder.size(), value);
    }
  }
  REQUIRE(out.find('{') == std::string::npos);
  return out;
}

// The capabilities as the server advertises them, then the scoped server routes.
std::vector<Target> Targets(int port) {
  const Reply manifest = Send(port, "GET", "/api/agent/capabilities");
  REQUIRE(manifest.status == 200);
  CHECK(manifest.body == core::ManifestJson());
  const rapidjson::Document doc = Json(manifest.body);
  std::vector<Target> out;
  for (const rapidjson::Value& c : doc["capabilities"].GetArray()) {
    Target t{Str(c, "name"), Str(c, "method"), Fill(Str(c, "path")), Str(c, "scope")};
    const core::AgentCapability* known = core::FindAgentCapability(t.name);
    REQUIRE(known != nullptr);
    t.streaming = known->streaming;
    out.push_back(t);
  }
  CHECK(out.size() == core::AgentCapabilities().size());
  for (const adapters::http::ServerRoute& r : adapters::http::ServerRoutes()) {
    if (r.spec.scope.has_value()) {
      out.push_back({r.spec.name, r.spec.method, Fill(r.spec.path),
                     std::string(core::ToString(*r.spec.scope)), r.spec.streaming});
    }
  }
  return out;
}

std::string AllScopesBut(const std::string& missing) {
  std::string out;
  for (core::Scope s : core::kAllScopes) {
    if (core::ToString(s) != missing) {
      out += (out.empty() ? "" : ",") + std::string(core::ToString(s));
    }
  }
  return out;
}

TEST_CASE("every route refuses a token without its scope with the exact missing_scope body",
          "[e2e][server][auth]") {
  TempDir dir;
  std::map<std::string, std::string> lacking;  // scope -> token holding every other scope
  std::map<std::string, std::string> only;     // scope -> token holding just it
  for (core::Scope s : core::kAllScopes) {
    const std::string name(core::ToString(s));
    lacking[name] = MintToken(dir.path(), AllScopesBut(name), "lacks-" + name);
    // The host agents' routes take only agent tokens (agent_token_required, also a 403, for any
    // other kind): their scopes are minted as the agent kind here.
    const bool agent_scope = s == core::Scope::kAgentReport || s == core::Scope::kAgentExec;
    only[name] = MintToken(dir.path(), name, "only-" + name, agent_scope ? "agent" : "");
  }
  ServerProcess server(dir.path());
  const std::vector<Target> targets = Targets(server.port());
  for (const Target& t : targets) {
    INFO(t.name << " " << t.method << " " << t.path);
    REQUIRE(lacking.count(t.scope) == 1);
    const Reply refused = Send(server.port(), t.method, t.path, lacking[t.scope],
                               t.method == "GET" || t.method == "DELETE" ? "" : "{}");
    CHECK(refused.status == 403);
    CHECK(refused.body == core::MissingScopeError(t.scope).ToJson());
    CHECK(refused.Header("Content-Type").rfind("application/json", 0) == 0);

    const Reply allowed = t.streaming ? SendFirstChunk(server.port(), t.method, t.path,
                                                       only[t.scope], t.method == "GET" ? "" : "{}")
                                      : Send(server.port(), t.method, t.path, only[t.scope],
                                             t.method == "GET" || t.method == "DELETE" ? "" : "{}");
    INFO(allowed.body);
    CHECK(allowed.status != 401);
    CHECK(allowed.status != 403);
    CHECK(ErrorCode(allowed.body) != "missing_scope");
  }
  // No credential at all is 401 everywhere, with the challenge header.
  for (const Target& t : targets) {
    INFO(t.name);
    const Reply anonymous = Send(server.port(), t.method, t.path, "",
                                 t.method == "GET" || t.method == "DELETE" ? "" : "{}");
    CHECK(anonymous.status == 401);
    CHECK(ErrorCode(anonymous.body) == "unauthorized");
    CHECK(anonymous.Header("WWW-Authenticate") == "Bearer realm=\"pulse\"");
  }
  // Authorization: Bearer works like X-API-Token.
  const Reply bearer = Send(server.port(), "GET", "/api/agent/fleet-context", "", "",
                            {{"Authorization", "Bearer " + only["monitoring:read"]}});
  CHECK(bearer.status == 200);
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
