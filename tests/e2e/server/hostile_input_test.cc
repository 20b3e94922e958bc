// (d) Hostile input against the real binary, for every route: malformed, mistyped, unknown-
// member and oversized bodies; ids with traversal, NUL, control characters and bad escapes;
// header injection, request-smuggling framing and oversized targets. Every refusal is the
// agent envelope with the route's code, no credential is ever echoed, and nothing the
// requests asked for happened.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "pulse/adapters/http/server_routes.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

struct Route {
  std::string name;
  std::string method;
  std::string path;       // template
  std::string body_code;  // "" for routes without a body
};

std::vector<Route> AllRoutes() {
  std::vector<Route> out;
  for (const core::AgentCapability& c : core::AgentCapabilities()) {
    out.push_back(
        {c.name, c.method, c.path,
         c.body_error_code.has_value() ? std::string(core::ToString(*c.body_error_code)) : ""});
  }
  for (const adapters::http::ServerRoute& r : adapters::http::ServerRoutes()) {
    out.push_back(
        {r.spec.name, r.spec.method, r.spec.path,
         r.spec.body_schema.empty() ? "" : std::string(core::ToString(r.spec.body_error_code))});
  }
  return out;
}

// A body each body route accepts.
std::string ValidBody(const std::string& name) {
  static const std::map<std::string, std::string> bodies = {
      {"set_operator_state", R"({"intentionallyOffline":false,"neverAutoRemediate":true})"},
      {"acknowledge_finding", R"({"finding_id":"f-1"})"},
      {"snooze_finding", R"({"finding_id":"f-1","duration_hours":4})"},
      {"dismiss_finding", R"({"finding_id":"f-1","reason":"not_an_issue"})"},
      {"resolve_finding", R"({"finding_id":"f-1"})"},
      {"plan_action",
       R"({"requestId":"r1","resourceId":"vm:101","capabilityName":"restart","reason":"hung"})"},
      {"decide_action", R"({"outcome":"approved"})"},
      {"execute_action", R"({"reason":"go"})"},
      {"run_patrol", R"({"resource_ids":["vm:101"]})"},
      {"set_patrol_autonomy", R"({"autonomy_level":"monitor"})"},
      {"acknowledge_patrol_autopilot", R"({"acknowledgement_id":"ack-1"})"},
      {"chat", R"({"message":"hello"})"},
      {"resume_session", R"({})"},
      {"abort_session", R"({})"},
      {"answer_question", R"({"answers":[{"id":"q1","value":"yes"}]})"},
      {"render_workflow_prompt", R"({"name":"pulse_triage_fleet"})"},
      {"unsnooze_finding", R"({"finding_id":"f-1"})"},
      {"reopen_finding", R"({"finding_id":"f-1"})"},
      {"create_api_token", R"({"name":"t","scopes":["monitoring:read"]})"},
      {"sign_in_console", R"({"token":"pulse_x"})"},
      {"update_ai_settings", R"({"model":"model-b"})"},
      {"update_patrol_settings",
       R"({"thresholds":{"defaults":{"cpu":{"warning":80,"critical":90}}}})"},
      {"set_resource_note", R"({"note":"a cold spare"})"},
      {"update_notification_settings", R"({"channels":[]})"},
      {"test_notification_channel", R"({})"},
      {"investigate_alert", R"({"alerts":[{"name":"TestAlert","resource_id":"vm:101"}]})"},
  };
  auto it = bodies.find(name);
  REQUIRE(it != bodies.end());
  return it->second;
}

// `valid` with its first member's value replaced by one of another JSON type.
std::string WrongTyped(const std::string& valid) {
  rapidjson::Document doc = Json(valid);
  if (doc.MemberCount() == 0) {
    return "";
  }
  rapidjson::Value& v = doc.MemberBegin()->value;
  auto& alloc = doc.GetAllocator();
  if (v.IsString()) {
    v.SetInt(12345);
  } else if (v.IsBool() || v.IsNumber()) {
    v.SetString("4", alloc);
  } else if (v.IsObject()) {
    v.SetInt(12345);  // an object's type is another one
  } else {
    v.SetObject();
  }
  return core::ToJsonString(doc);
}

std::string Fill(const std::string& path_template, const std::string& value) {
  std::string out;
  for (std::size_t i = 0; i < path_template.size(); ++i) {
    if (path_template[i] == '{') {
      i = path_template.find('}', i);
      out += value;
    } else {
      out += path_template[i];
    }
  }
  return out;
}

bool HasPlaceholder(const Route& r) { return r.path.find('{') != std::string::npos; }

// Nothing a refused request asked for happened.
void CheckUntouched(int port, const std::string& token) {
  const Reply actions = Send(port, "GET", "/api/actions?view=pending", token);
  REQUIRE(actions.status == 200);
  CHECK(Json(actions.body)["count"].GetInt() == 0);
  const Reply settled = Send(port, "GET", "/api/actions?view=settled", token);
  CHECK(Json(settled.body)["count"].GetInt() == 0);
  const Reply sessions = Send(port, "GET", "/api/ai/sessions", token);
  CHECK(sessions.body == "[]");
  CHECK(Send(port, "GET", "/api/resources/vm%3A101/operator-state", token).status == 404);
}

TEST_CASE("bodies that are malformed, mistyped, open-ended or too large are refused",
          "[e2e][server][hostile]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const std::string huge(2 << 20, 'x');
  for (const Route& r : AllRoutes()) {
    if (r.body_code.empty()) {
      continue;
    }
    const std::string path = Fill(r.path, "vm%3A101");
    const std::string valid = ValidBody(r.name);
    std::vector<std::string> bodies = {
        "{",
        "[1]",
        "\"text\"",
        "null",
        "{\"a\":1}{}",
        R"({"zzz_unknown":"leak-me-9f3"})",
        valid.substr(0, valid.size() - 1) + R"(,"zzz_unknown":"leak-me-9f3"})",
        R"({"a":)" + std::string(200, '[') + std::string(200, ']') + "}"};
    if (valid != "{}") {
      bodies.push_back(WrongTyped(valid));
      bodies.push_back(valid.substr(0, valid.size() - 1) + "," + valid.substr(1));  // duplicates
    }
    for (const std::string& body : bodies) {
      INFO(r.name << " " << body.substr(0, 120));
      const Reply reply = Send(server.port(), r.method, path, token, body);
      CHECK(reply.status == 400);
      CHECK(ErrorCode(reply.body) == r.body_code);
      CHECK(reply.body.find("leak-me-9f3") == std::string::npos);  // never echoes a value
    }
    // A body announced larger than the limit is refused from its headers, unread. (Sent
    // without the body: a client that keeps writing one the server will not read may meet a
    // connection reset instead of the reply, as TCP has it.)
    INFO(r.name << " huge");
    const std::string too_large =
        Raw(server.port(), r.method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
                               "X-API-Token: " + token + "\r\nContent-Type: application/json\r\n" +
                               "Content-Length: " + std::to_string(huge.size()) + "\r\n\r\n");
    CHECK(too_large.rfind("HTTP/1.1 413", 0) == 0);
    CHECK(too_large.find("\"error\":\"request_too_large\"") != std::string::npos);
  }
  // Sent in full, the same body is refused the same way (when the reply outruns the reset).
  const Reply sent =
      Send(server.port(), "POST", "/api/actions/plan", token, "{\"a\":\"" + huge + "\"}");
  CHECK((sent.status == 0 || ErrorCode(sent.body) == "request_too_large"));
  // Chunked framing is held to the same limit.
  std::string chunked =
      "POST /api/actions/plan HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
      "X-API-Token: " +
      token +
      "\r\nTransfer-Encoding: chunked\r\n"
      "Content-Type: application/json\r\n\r\n";
  for (int i = 0; i < 40; ++i) {
    chunked += "10000\r\n" + std::string(0x10000, 'a') + "\r\n";
  }
  chunked += "0\r\n\r\n";
  const std::string raw = Raw(server.port(), chunked);
  CHECK((raw.empty() || raw.rfind("HTTP/1.1 413", 0) == 0));
  CheckUntouched(server.port(), token);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("ids with traversal, NUL, controls or bad escapes never reach a handler",
          "[e2e][server][hostile]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const std::vector<std::string> evil = {"..",
                                         "%2e%2e",
                                         "..%2F..%2Fetc%2Fpasswd",
                                         "a%2Fb",
                                         "a%5Cb",
                                         "%00",
                                         "a%00b",
                                         "a%0Ab",
                                         "a%0D%0AX-Injected:%201",
                                         "%ZZ",
                                         "%",
                                         "%7F",
                                         std::string(300, 'a')};
  for (const Route& r : AllRoutes()) {
    if (!HasPlaceholder(r)) {
      continue;
    }
    for (const std::string& id : evil) {
      INFO(r.name << " " << id.substr(0, 40));
      const std::string body =
          r.body_code.empty() ? "" : (r.method == "DELETE" ? "" : ValidBody(r.name));
      const Reply reply = Send(server.port(), r.method, Fill(r.path, id), token, body);
      CHECK(reply.status == 400);
      CHECK(ErrorCode(reply.body) == "invalid_request");
      CHECK(reply.Header("X-Injected").empty());
    }
    // Odd but well-formed ids reach the handler and get its ordinary answer, never a 500.
    for (const std::string& odd : {std::string("vm%3A101'%20OR%20'1'%3D'1"),
                                   std::string("%E2%9C%93"), std::string("x;rm%20-rf%20%2F")}) {
      INFO(r.name << " " << odd);
      const std::string body = r.body_code.empty() ? "" : ValidBody(r.name);
      const Reply reply = Send(server.port(), r.method, Fill(r.path, odd), token, body);
      CHECK(reply.status != 0);
      // (This server has no model provider: the Assistant's routes say so.)
      CHECK((reply.status < 500 || ErrorCode(reply.body) == "assistant_not_configured"));
    }
  }
  // An id that is not canonical is nobody's resource, whatever it spells.
  const Reply traversal = Send(server.port(), "GET", "/api/agent/resource-context/..%2F..", token);
  CHECK(traversal.status == 400);
  CheckUntouched(server.port(), token);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("header injection, smuggling framing and oversized targets are refused",
          "[e2e][server][hostile]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const int port = server.port();
  const std::string head = "Host: x\r\nConnection: close\r\n";
  // A bare CR inside the token: the head is refused, nothing is split into a header.
  const std::string bare_cr = Raw(port, "GET /api/agent/fleet-context HTTP/1.1\r\n" + head +
                                            "X-API-Token: " + token + "\rX-Injected: 1\r\n\r\n");
  // RFC 9112 section 2.2: a bare CR is invalid; the recipient must reject or replace it.
  CHECK(bare_cr.rfind("HTTP/1.1 400", 0) == 0);
  // CR LF encoded into the path: no route, and nothing reflected into the response headers.
  const std::string encoded =
      Raw(port, "GET /api/agent/fleet-context%0D%0AX-Injected:%201 HTTP/1.1\r\n" + head +
                    "X-API-Token: " + token + "\r\n\r\n");
  CHECK(encoded.rfind("HTTP/1.1 404", 0) == 0);
  for (const std::string* raw : {&bare_cr, &encoded}) {
    const std::string headers = raw->substr(0, raw->find("\r\n\r\n"));
    CHECK(headers.find("X-Injected") == std::string::npos);
    CHECK(raw->find(token) == std::string::npos);
    CHECK(headers.find("X-Content-Type-Options: nosniff") != std::string::npos);
  }
  // Request smuggling: both lengths, conflicting lengths, bogus lengths, unknown codings.
  for (const std::string& framing :
       {std::string("Content-Length: 2\r\nTransfer-Encoding: chunked\r\n"),
        std::string("Content-Length: 2\r\nContent-Length: 3\r\n"),
        std::string("Content-Length: -1\r\n"), std::string("Content-Length: 0x10\r\n"),
        std::string("Transfer-Encoding: gzip\r\n")}) {
    INFO(framing);
    const std::string raw = Raw(port, "POST /api/actions/plan HTTP/1.1\r\n" + head +
                                          "X-API-Token: " + token + "\r\n" + framing + "\r\n{}");
    CHECK(raw.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(raw.find("invalid_request") != std::string::npos);
  }
  // A GET with a body would have its body read as the next request.
  const std::string get_body =
      Raw(port, "GET /api/agent/fleet-context HTTP/1.1\r\n" + head + "X-API-Token: " + token +
                    "\r\nContent-Length: 5\r\n\r\nGET /");
  CHECK(get_body.rfind("HTTP/1.1 400", 0) == 0);
  // Targets over the limit, and methods no route takes.
  const Reply long_target =
      Send(port, "GET", "/api/agent/resource-context/" + std::string(5000, 'a'), token);
  CHECK(long_target.status == 414);
  CHECK(ErrorCode(long_target.body) == "uri_too_long");
  const Reply wrong_method = Send(port, "PATCH", "/api/agent/fleet-context", token, "{}");
  CHECK(wrong_method.status == 405);
  CHECK(wrong_method.Header("Allow") == "GET");
  const Reply unknown = Send(port, "GET", "/api/agent/../../etc/passwd", token);
  CHECK(unknown.status / 100 == 4);
  CHECK(unknown.body.find("root:") == std::string::npos);
  // Two different credentials in one request are refused; so is a malformed bearer.
  const Reply two = Send(port, "GET", "/api/agent/fleet-context", token, "",
                         {{"Authorization", "Bearer pulse_" + std::string(43, 'A')}});
  CHECK(two.status == 401);
  const Reply basic =
      Send(port, "GET", "/api/agent/fleet-context", "", "", {{"Authorization", "Basic " + token}});
  CHECK(basic.status == 401);
  CHECK(basic.body.find(token) == std::string::npos);
  // Hostile query strings.
  CHECK(ErrorCode(Send(port, "GET", "/api/actions?limit=1e3", token).body) ==
        "invalid_action_list_limit");
  CHECK(ErrorCode(Send(port, "GET", "/api/actions?view=%00", token).body) == "invalid_request");
  CHECK(ErrorCode(Send(port, "GET", "/api/actions?view=all", token).body) ==
        "invalid_action_list_view");
  // Cursors the server never issued: forged, another list's, another view's, over-long.
  for (const std::string& cursor :
       {std::string("a1.AAAA"), std::string("f1.Y3JpdGljYWwKMAp4"), std::string("a1.%21%21"),
        std::string("a1.c2V0dGxlZAowCng"), std::string("a1.") + std::string(1100, 'A')}) {
    INFO(cursor);
    CHECK(ErrorCode(Send(port, "GET", "/api/actions?cursor=" + cursor, token).body) ==
          "invalid_action_list_cursor");
    CHECK(ErrorCode(Send(port, "GET", "/api/ai/sessions?cursor=" + cursor, token).body) ==
          "invalid_request");
  }
  CHECK(ErrorCode(Send(port, "GET", "/api/agent/fleet-context?severity=%27;DROP", token).body) ==
        "invalid_request");
  CheckUntouched(port, token);
  // The server is still healthy and its log never shows the token.
  CHECK(Send(port, "GET", "/healthz").status == 200);
  CHECK(server.Stop() == "exited 0");
  CHECK(server.Log().find(token) == std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
