// Token lifecycle against the real binary: `pulse-server token create|list|revoke` and the
// /api/security/tokens routes. A list never shows a secret; a revoked or expired token is
// refused on its next request (401); bad kinds and lifetimes are usage errors (exit 2) that
// create nothing; the API is for human tokens only and never mints or revokes a token wider
// than its caller.
#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

Captured Token(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ServerBinary(), "token"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

// The secret part of every token must be absent from `text`.
void CheckNoSecret(const std::string& text, const std::vector<std::string>& tokens) {
  for (const std::string& token : tokens) {
    CHECK(text.find(token.substr(6)) == std::string::npos);
  }
  CHECK(text.find("pulse_") == std::string::npos);
}

const rapidjson::Value* Named(const rapidjson::Value& tokens, const std::string& name) {
  for (const rapidjson::Value& t : tokens.GetArray()) {
    if (Str(t, "name") == name) {
      return &t;
    }
  }
  return nullptr;
}

TEST_CASE("token list shows name, kind, scopes and times, never a secret",
          "[e2e][server][tokens]") {
  TempDir dir;
  const std::string d = dir.path();
  const std::string human = MintToken(d, "actions:approve,monitoring:read", "alice");
  const std::string agent = MintToken(d, "monitoring:read", "claude desktop", "agent");
  const Captured service = Token({"create", "--data-dir", d, "--name", "ci", "--scopes",
                                  "monitoring:read", "--kind", "service", "--expires", "30d"});
  REQUIRE(service.exit_code == 0);
  const std::string ci = service.out.substr(0, service.out.size() - 1);
  const std::vector<std::string> secrets = {human, agent, ci};

  const Captured table = Token({"list", "--data-dir", d});
  INFO(table.out << table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.rfind("ID", 0) == 0);
  for (const char* expected : {"alice", "claude desktop", "ci", "human", "agent", "service",
                               "monitoring:read,actions:approve", "LAST USED", "EXPIRES"}) {
    CHECK(table.out.find(expected) != std::string::npos);
  }
  CheckNoSecret(table.out + table.err, secrets);

  {
    ServerProcess server(d);
    REQUIRE(Send(server.port(), "GET", "/api/agent/fleet-context", agent).status == 200);
    CHECK(server.Stop() == "exited 0");
  }
  const absl::Time now = absl::Now();
  const Captured json = Token({"list", "--data-dir", d, "--json"});
  REQUIRE(json.exit_code == 0);
  CheckNoSecret(json.out, secrets);
  rapidjson::Document doc = Json(json.out);
  REQUIRE(doc["tokens"].Size() == 3);
  const rapidjson::Value* a = Named(doc["tokens"], "alice");
  const rapidjson::Value* c = Named(doc["tokens"], "claude desktop");
  const rapidjson::Value* s = Named(doc["tokens"], "ci");
  REQUIRE((a != nullptr && c != nullptr && s != nullptr));
  CHECK(Str(*a, "kind") == "human");
  CHECK(Str(*c, "kind") == "agent");
  CHECK(Str(*s, "kind") == "service");
  CHECK(Str(*a, "id").rfind("tok_", 0) == 0);
  CHECK((*a)["scopes"].Size() == 2);
  CHECK_FALSE(a->HasMember("lastUsedAt"));  // never used
  CHECK(c->HasMember("lastUsedAt"));        // used above
  CHECK_FALSE(a->HasMember("expiresAt"));
  absl::Time expires;
  std::string error;
  REQUIRE(absl::ParseTime(absl::RFC3339_full, Str(*s, "expiresAt"), &expires, &error));
  CHECK(absl::AbsDuration(expires - (now + absl::Hours(24 * 30))) < absl::Minutes(5));
  CHECK_FALSE((*s)["expired"].GetBool());
}

TEST_CASE("token revoke by name or id ends the token on its next request",
          "[e2e][server][tokens]") {
  TempDir dir;
  const std::string d = dir.path();
  const std::string keep = MintToken(d, "monitoring:read", "keep");
  const std::string by_name = MintToken(d, "monitoring:read", "by-name");
  const std::string by_id = MintToken(d, "monitoring:read", "by-id");
  const std::string dup1 = MintToken(d, "monitoring:read", "dup");
  const std::string dup2 = MintToken(d, "monitoring:read", "dup");
  ServerProcess server(d);
  const int port = server.port();
  for (const std::string* t : {&keep, &by_name, &by_id, &dup1, &dup2}) {
    REQUIRE(Send(port, "GET", "/api/agent/fleet-context", *t).status == 200);
  }

  // While the server runs: the revoke takes effect on the very next request.
  const Captured named = Token({"revoke", "--data-dir", d, "by-name"});
  INFO(named.err);
  CHECK(named.exit_code == 0);
  CHECK(named.out.find("by-name") != std::string::npos);
  const Reply refused = Send(port, "GET", "/api/agent/fleet-context", by_name);
  CHECK(refused.status == 401);
  CHECK(ErrorCode(refused.body) == "unauthorized");

  rapidjson::Document listed = Json(Token({"list", "--data-dir", d, "--json"}).out);
  const rapidjson::Value* target = Named(listed["tokens"], "by-id");
  REQUIRE(target != nullptr);
  CHECK(Token({"revoke", "--data-dir", d, Str(*target, "id")}).exit_code == 0);
  CHECK(Send(port, "GET", "/api/agent/fleet-context", by_id).status == 401);

  // Hostile or mistaken: an unknown name, one already revoked, a shared name (refused, neither
  // revoked: name one by id), no argument.
  const Captured unknown = Token({"revoke", "--data-dir", d, "nobody"});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("nobody") != std::string::npos);
  CHECK(Token({"revoke", "--data-dir", d, "by-name"}).exit_code == 1);
  CHECK(Token({"revoke", "--data-dir", d, "tok_0000000000000000"}).exit_code == 1);
  const Captured shared = Token({"revoke", "--data-dir", d, "dup"});
  CHECK(shared.exit_code == 2);
  CHECK(shared.err.find("2 tokens are named") != std::string::npos);
  CHECK(Send(port, "GET", "/api/agent/fleet-context", dup1).status == 200);
  CHECK(Send(port, "GET", "/api/agent/fleet-context", dup2).status == 200);
  CHECK(Token({"revoke", "--data-dir", d}).exit_code == 2);
  CHECK(Send(port, "GET", "/api/agent/fleet-context", keep).status == 200);
  CHECK(server.Stop() == "exited 0");

  const Captured missing = Token({"list", "--data-dir", dir.File("nothing-here")});
  CHECK(missing.exit_code == 1);
  CHECK_FALSE(std::filesystem::exists(dir.File("nothing-here")));
}

TEST_CASE("token create refuses a bad kind or lifetime with exit 2 and creates nothing",
          "[e2e][server][tokens]") {
  TempDir dir;
  const std::string d = dir.File("data");
  const std::vector<std::vector<std::string>> bad = {
      {"--kind", "root"},     {"--kind", "Human"},   {"--kind", ""},
      {"--kind", "human "},   {"--expires", "30"},   {"--expires", "0d"},
      {"--expires", "-1d"},   {"--expires", "1.5d"}, {"--expires", "1w"},
      {"--expires", "30 d"},  {"--expires", ""},     {"--expires", "99999d"},
      {"--expires", "1h30m"}, {"--expires", "d"},    {"--expires", "99999999999h"},
  };
  for (const std::vector<std::string>& extra : bad) {
    std::vector<std::string> args = {"create", "--data-dir", d, "--name", "x", "--scopes", "*"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Captured c = Token(args);
    INFO(extra[0] << " '" << extra[1] << "' -> " << c.err);
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
    CHECK(c.err.find(extra[0]) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(d));  // nothing was created
  CHECK(Token({}).exit_code == 2);
  CHECK(Token({"create", "--data-dir", d, "--name", "x"}).exit_code == 2);
  CHECK(Token({"destroy"}).exit_code == 2);
  const Captured ok = Token({"create", "--data-dir", d, "--name", "x", "--scopes", "*", "--kind",
                             "agent", "--expires", "12h"});
  CHECK(ok.exit_code == 0);
}

// The host agent registry's row for `host` in the data dir: its token id, "" when unbound.
std::string BoundToken(const std::string& data_dir, const std::string& host) {
  SQLite::Database db(data_dir + "/pulse.db", SQLite::OPEN_READONLY);
  SQLite::Statement q(db, "SELECT token_id FROM host_agents WHERE host = ?");
  q.bind(1, host);
  return q.executeStep() ? q.getColumn(0).getString() : std::string();
}

std::string IdOf(const std::string& data_dir, const std::string& name) {
  rapidjson::Document listed = Json(Token({"list", "--data-dir", data_dir, "--json"}).out);
  const rapidjson::Value* t = Named(listed["tokens"], name);
  REQUIRE(t != nullptr);
  return Str(*t, "id");
}

TEST_CASE("token create --host refuses another kind or a bad host name with exit 2",
          "[e2e][server][tokens]") {
  TempDir dir;
  const std::string d = dir.File("data");
  const std::vector<std::vector<std::string>> bad = {
      {"--host", "web1"},
      {"--kind", "human", "--host", "web1"},
      {"--kind", "service", "--host", "web1"},
      {"--kind", "agent", "--host", ""},
      {"--kind", "agent", "--host", "-web1"},
      {"--kind", "agent", "--host", "web 1"},
      {"--kind", "agent", "--host", "web1/x"},
      {"--kind", "agent", "--host", "h\xc3\xa4st"},
      {"--kind", "agent", "--host", std::string(65, 'a')},
  };
  for (const std::vector<std::string>& extra : bad) {
    std::vector<std::string> args = {
        "create", "--data-dir", d, "--name", "web1", "--scopes", "agent:report,agent:exec"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Captured c = Token(args);
    INFO(extra.back() << " -> " << c.err);
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
    CHECK(c.err.find("--host") != std::string::npos);
  }
  CHECK(Token({"create", "--data-dir", d, "--name", "x", "--scopes", "agent:report", "--kind",
               "human", "--host", "web1"})
            .err.find("kind agent") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(d));  // nothing was created
}

TEST_CASE("token create --host binds an agent token to one host until it is revoked",
          "[e2e][server][tokens]") {
  TempDir dir;
  const std::string d = dir.path();
  const Captured first = Token({"create", "--data-dir", d, "--name", "web1-agent", "--scopes",
                                "agent:report,agent:exec", "--kind", "agent", "--host", "web1"});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string first_id = IdOf(d, "web1-agent");
  CHECK(BoundToken(d, "web1") == first_id);
  MintToken(d, "monitoring:read", "alice");

  // The host is taken while its token lives: refused, naming the host and the holder; no
  // second token is created.
  const Captured taken = Token({"create", "--data-dir", d, "--name", "thief", "--scopes",
                                "agent:report", "--kind", "agent", "--host", "web1"});
  CHECK(taken.exit_code == 1);
  CHECK(taken.out.empty());
  CHECK(taken.err.find("web1") != std::string::npos);
  CHECK(taken.err.find(first_id) != std::string::npos);
  CHECK(taken.err.find("revoke") != std::string::npos);
  rapidjson::Document listed = Json(Token({"list", "--data-dir", d, "--json"}).out);
  CHECK(listed["tokens"].Size() == 2);
  CHECK(Named(listed["tokens"], "thief") == nullptr);
  CHECK(BoundToken(d, "web1") == first_id);

  // list shows the binding: HOST in the table, "host" in the JSON, only for bound tokens.
  const Captured table = Token({"list", "--data-dir", d});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("HOST") != std::string::npos);
  CHECK(table.out.find("web1") != std::string::npos);
  CHECK(table.out.find("agent:report,agent:exec") != std::string::npos);
  const rapidjson::Value* agent = Named(listed["tokens"], "web1-agent");
  const rapidjson::Value* alice = Named(listed["tokens"], "alice");
  REQUIRE((agent != nullptr && alice != nullptr));
  CHECK(Str(*agent, "host") == "web1");
  CHECK_FALSE(alice->HasMember("host"));

  // Revoking the holder frees the host for a new token, which takes over the binding.
  REQUIRE(Token({"revoke", "--data-dir", d, first_id}).exit_code == 0);
  const Captured second = Token({"create", "--data-dir", d, "--name", "web1-new", "--scopes",
                                 "agent:report,agent:exec", "--kind", "agent", "--host", "web1"});
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  const std::string second_id = IdOf(d, "web1-new");
  CHECK(BoundToken(d, "web1") == second_id);

  // An expired holder is no longer live either.
  {
    SQLite::Database db(dir.File("pulse.db"), SQLite::OPEN_READWRITE);
    const std::int64_t past = absl::ToUnixNanos(absl::Now() - absl::Seconds(1));
    db.exec("UPDATE api_tokens SET expires_at_ns = " + std::to_string(past) +
            " WHERE name = 'web1-new'");
  }
  REQUIRE(Token({"create", "--data-dir", d, "--name", "web1-third", "--scopes", "agent:report",
                 "--kind", "agent", "--host", "web1"})
              .exit_code == 0);
  CHECK(BoundToken(d, "web1") == IdOf(d, "web1-third"));

  // A second host is a binding of its own.
  REQUIRE(Token({"create", "--data-dir", d, "--name", "db1-agent", "--scopes", "agent:report",
                 "--kind", "agent", "--host", "db1"})
              .exit_code == 0);
  CHECK(BoundToken(d, "db1") == IdOf(d, "db1-agent"));
  CHECK(BoundToken(d, "web1") == IdOf(d, "web1-third"));
}

TEST_CASE("the token API binds an agent token to its host, and refuses a held host",
          "[e2e][server][tokens]") {
  TempDir dir;
  const std::string admin = MintToken(dir.path(), "*", "admin");
  ServerProcess server(dir.path());
  const int port = server.port();
  const std::string tokens = "/api/security/tokens";
  const Reply created = Send(port, "POST", tokens, admin,
                             R"({"name":"web7 agent","scopes":["agent:report","agent:exec"],)"
                             R"("kind":"agent","host":"web7"})");
  INFO(created.body);
  REQUIRE(created.status == 201);
  const rapidjson::Document doc = Json(created.body);
  CHECK(Str(doc["record"], "host") == "web7");
  const std::string secret = Str(doc, "token");
  // The list shows the binding; the host is listed, pending, before any agent reported.
  const rapidjson::Document listed = Json(Send(port, "GET", tokens, admin).body);
  CHECK(Str(*Named(listed["tokens"], "web7 agent"), "host") == "web7");
  // The bound token cannot report as another host.
  const Reply forged =
      Send(port, "POST", "/api/agents/report", secret,
           R"({"protocol":1,"host":"web8","agent_version":"x","sent_at":"2026-12-03T00:00:00Z",)"
           R"("interval_seconds":30,"resources":[]})");
  CHECK(ErrorCode(forged.body) == "agent_host_mismatch");
  // Refused, nothing created: a second token for the held host, a host on a human token, a
  // host that is not a host name.
  for (const char* body :
       {R"({"name":"b","scopes":["agent:report"],"kind":"agent","host":"web7"})",
        R"({"name":"c","scopes":["monitoring:read"],"host":"web9"})",
        R"({"name":"d","scopes":["agent:report"],"kind":"agent","host":"../etc"})",
        R"({"name":"e","scopes":["agent:report"],"kind":"agent","host":""})"}) {
    const Reply reply = Send(port, "POST", tokens, admin, body);
    INFO(body << " -> " << reply.body);
    CHECK(reply.status == 400);
    CHECK(ErrorCode(reply.body) == "invalid_token_request");
  }
  CHECK(Json(Send(port, "GET", tokens, admin).body)["tokens"].Size() == 2);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("an expired token is refused with 401 and listed as expired", "[e2e][server][tokens]") {
  TempDir dir;
  const std::string d = dir.path();
  const Captured minted = Token({"create", "--data-dir", d, "--name", "short", "--scopes",
                                 "monitoring:read", "--expires", "1h"});
  REQUIRE(minted.exit_code == 0);
  const std::string token = minted.out.substr(0, minted.out.size() - 1);
  ServerProcess server(d);
  REQUIRE(Send(server.port(), "GET", "/api/agent/fleet-context", token).status == 200);
  {
    // An hour passes: move the stored expiry into the past.
    SQLite::Database db(dir.File("pulse.db"), SQLite::OPEN_READWRITE);
    const std::int64_t past = absl::ToUnixNanos(absl::Now() - absl::Seconds(1));
    db.exec("UPDATE api_tokens SET expires_at_ns = " + std::to_string(past) +
            " WHERE name = 'short'");
  }
  const Reply refused = Send(server.port(), "GET", "/api/agent/fleet-context", token);
  CHECK(refused.status == 401);
  CHECK(ErrorCode(refused.body) == "unauthorized");
  CHECK(server.Stop() == "exited 0");
  const Captured table = Token({"list", "--data-dir", d});
  CHECK(table.out.find("(expired)") != std::string::npos);
  CHECK(Json(Token({"list", "--data-dir", d, "--json"}).out)["tokens"][0]["expired"].GetBool());
}

TEST_CASE("the token API lists, creates (the secret once) and revokes, for humans only",
          "[e2e][server][tokens]") {
  TempDir dir;
  const std::string admin = MintToken(dir.path(), "*", "admin");
  const std::string narrow = MintToken(dir.path(), "settings:write,monitoring:read", "narrow");
  const std::string robot = MintToken(dir.path(), "*", "robot", "agent");
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  ServerProcess server(dir.path());
  const int port = server.port();
  const std::string tokens = "/api/security/tokens";

  const Reply list = Send(port, "GET", tokens, admin);
  REQUIRE(list.status == 200);
  CheckNoSecret(list.body, {admin, narrow, robot, reader});
  CHECK(Json(list.body)["tokens"].Size() == 4);

  const Reply created = Send(port, "POST", tokens, narrow,
                             R"({"name":"console agent","scopes":["monitoring:read"],)"
                             R"("kind":"agent","expiresIn":"30d"})");
  INFO(created.body);
  REQUIRE(created.status == 201);
  rapidjson::Document doc = Json(created.body);
  const std::string secret = Str(doc, "token");
  CHECK(secret.rfind("pulse_", 0) == 0);
  CHECK(Str(doc["record"], "kind") == "agent");
  CHECK(Str(doc["record"], "name") == "console agent");
  CHECK(doc["record"].HasMember("expiresAt"));
  const std::string id = Str(doc["record"], "id");
  CHECK(Send(port, "GET", "/api/agent/fleet-context", secret).status == 200);
  const Reply again = Send(port, "GET", tokens, admin);
  CheckNoSecret(again.body, {admin, narrow, robot, reader, secret});
  CHECK(Json(again.body)["tokens"].Size() == 5);

  // Hostile: each refused with its code, nothing created.
  const std::vector<std::pair<std::string, std::string>> bad_bodies = {
      {R"({"name":"x","scopes":["monitoring:read"],"kind":"root"})", "invalid_token_request"},
      {R"({"name":"x","scopes":["monitoring:read"],"expiresIn":"0d"})", "invalid_token_request"},
      {R"({"name":"x","scopes":["monitoring:read"],"expiresIn":"30"})", "invalid_token_request"},
      {R"({"name":"","scopes":["monitoring:read"]})", "invalid_token_request"},
      {R"({"name":"x","scopes":[]})", "invalid_token_request"},
      {R"({"name":"x","scopes":["AI:CHAT"]})", "invalid_token_request"},
      {R"({"name":"x","scopes":["monitoring:read"],"token":"pulse_mine"})",
       "invalid_token_request"},
      {R"({"name":"tab\there","scopes":["monitoring:read"]})", "invalid_token_request"},
      {R"({"name":"x","scopes":["*"]})", "token_management_forbidden"},
      {R"({"name":"x","scopes":["ai:execute"]})", "token_management_forbidden"},
  };
  for (const auto& [body, code] : bad_bodies) {
    const Reply reply = Send(port, "POST", tokens, narrow, body);
    INFO(body << " -> " << reply.body);
    CHECK(ErrorCode(reply.body) == code);
  }
  CHECK(ErrorCode(Send(port, "POST", tokens, robot, R"({"name":"x","scopes":["*"]})").body) ==
        "token_management_forbidden");
  CHECK(ErrorCode(Send(port, "POST", tokens, admin, R"({"name":"x","scopes":["*"]})",
                       {{"X-Pulse-Agent-Surface", "pulse_mcp"}})
                      .body) == "token_management_forbidden");
  CHECK(ErrorCode(Send(port, "GET", tokens, robot).body) == "token_management_forbidden");
  CHECK(ErrorCode(Send(port, "GET", tokens, reader).body) == "missing_scope");
  CHECK(Json(Send(port, "GET", tokens, admin).body)["tokens"].Size() == 5);

  // Revoke: by id only, never a token wider than the caller.
  rapidjson::Document all = Json(Send(port, "GET", tokens, admin).body);
  const std::string admin_id = Str(*Named(all["tokens"], "admin"), "id");
  CHECK(ErrorCode(Send(port, "DELETE", tokens + "/" + admin_id, narrow).body) ==
        "token_management_forbidden");
  CHECK(ErrorCode(Send(port, "DELETE", tokens + "/console-agent", admin).body) ==
        "token_not_found");
  CHECK(ErrorCode(Send(port, "DELETE", tokens + "/tok_0000000000000000", admin).body) ==
        "token_not_found");
  CHECK(ErrorCode(Send(port, "DELETE", tokens + "/" + id, robot).body) ==
        "token_management_forbidden");
  const Reply revoked = Send(port, "DELETE", tokens + "/" + id, narrow);
  CHECK(revoked.status == 204);
  const Reply after = Send(port, "GET", "/api/agent/fleet-context", secret);
  CHECK(after.status == 401);
  CHECK(ErrorCode(Send(port, "DELETE", tokens + "/" + id, narrow).body) == "token_not_found");
  CHECK(Send(port, "GET", "/api/agent/fleet-context", admin).status == 200);
  CHECK(server.Stop() == "exited 0");
  CHECK(server.Log().find(secret) == std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
