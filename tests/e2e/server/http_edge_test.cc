// The HTTP edge against the real binary (issue 19 items 9 and 10).
// Body types: a body that is not declared application/json is refused with 415
// unsupported_media_type from its headers, before anything reads it, and the connection is
// closed, so bytes hidden in that body (a second request, as a desyncing proxy would forward
// them) are never answered. JSON with charset=utf-8 is accepted, and a request sent behind an
// accepted one on the same connection still is answered (the check can see a second answer).
// Queries: every route, manifest and server routes alike, refuses a query its declaration
// does not allow — unknown, repeated, mistyped, out of range, not in the enum, control
// characters — with its capability's code, before the handler runs; declared values pass.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "pulse/adapters/http/router.h"
#include "pulse/adapters/http/server_routes.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

// How often `text` holds a status line.
int Answers(const std::string& text) {
  int n = 0;
  for (std::size_t at = text.find("HTTP/1.1 "); at != std::string::npos;
       at = text.find("HTTP/1.1 ", at + 1)) {
    ++n;
  }
  return n;
}

// Writes `first` on a fresh connection, then `second` on the same connection 300 ms later,
// and returns everything the server writes back until it closes or stays silent for `quiet`.
// (Two writes: cpp-httplib 0.11 answers a request pipelined in the same segment only once more
// bytes arrive, so the second write is what would make a server parse what it left unread.)
std::string RawTwice(int port, const std::string& first, const std::string& second,
                     absl::Duration quiet = absl::Seconds(1)) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  const auto send_all = [fd](const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) {
        return;
      }
      sent += static_cast<std::size_t>(n);
    }
  };
  send_all(first);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  send_all(second);
  timeval tv{};
  const std::int64_t micros = absl::ToInt64Microseconds(quiet);
  tv.tv_sec = static_cast<time_t>(micros / 1000000);
  tv.tv_usec = static_cast<suseconds_t>(micros % 1000000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string Head(const std::string& method, const std::string& path, const std::string& token) {
  return method + " " + path + " HTTP/1.1\r\nHost: x\r\n" +
         (token.empty() ? "" : "X-API-Token: " + token + "\r\n");
}

std::string Chunked(const std::string& body) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx", body.size());
  return std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n";
}

TEST_CASE("a body that is not JSON is refused with 415 unread and nothing behind it is answered",
          "[e2e][server][edge]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const int port = server.port();
  // The request a front-end proxy would forward as body bytes: were the body left unread on a
  // connection kept open, this would be answered as a request of its own.
  const std::string smuggled = Head("GET", "/api/agent/fleet-context", token) + "\r\n";
  const std::string multipart = "--B0und\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n" +
                                smuggled + "\r\n--B0und--\r\n";
  struct Case {
    std::string name;
    std::string content_type;  // the header line(s), "" for none
    std::string framing;       // "length" or "chunked"
    std::string body;
    std::string token;
  };
  const std::vector<Case> cases = {
      {"multipart", "Content-Type: multipart/form-data; boundary=B0und\r\n", "length", multipart,
       token},
      {"multipart unauthenticated", "Content-Type: multipart/form-data; boundary=B0und\r\n",
       "length", multipart, ""},
      {"multipart chunked", "Content-Type: multipart/form-data; boundary=B0und\r\n", "chunked",
       multipart, token},
      {"multipart without boundary", "Content-Type: multipart/form-data\r\n", "length", smuggled,
       token},
      {"form", "Content-Type: application/x-www-form-urlencoded\r\n", "length", smuggled, token},
      {"form chunked", "Content-Type: application/x-www-form-urlencoded\r\n", "chunked", smuggled,
       token},
      {"text", "Content-Type: text/plain\r\n", "length", smuggled, token},
      {"none", "", "length", smuggled, token},
      {"none chunked", "", "chunked", smuggled, token},
      {"json-seq", "Content-Type: application/json-seq\r\n", "length", smuggled, token},
      {"jsonx", "Content-Type: application/jsonx\r\n", "length", smuggled, token},
      {"problem+json", "Content-Type: application/problem+json\r\n", "length", smuggled, token},
      {"latin1", "Content-Type: application/json; charset=latin1\r\n", "length", smuggled, token},
      {"two types", "Content-Type: application/json\r\nContent-Type: text/plain\r\n", "length",
       smuggled, token},
  };
  for (const std::string& target : {std::string("POST /api/actions/plan"),
                                    std::string("PUT /api/resources/vm%3A101/operator-state"),
                                    std::string("POST /api/ai/chat")}) {
    for (const Case& c : cases) {
      INFO(target << " / " << c.name);
      const std::size_t space = target.find(' ');
      std::string bytes =
          Head(target.substr(0, space), target.substr(space + 1), c.token) + c.content_type;
      if (c.framing == "chunked") {
        bytes += "Transfer-Encoding: chunked\r\n\r\n" + Chunked(c.body);
      } else {
        bytes += "Content-Length: " + std::to_string(c.body.size()) + "\r\n\r\n" + c.body;
      }
      // Then a well-formed request on the same connection: never answered either, nor is
      // the one hidden in the body that its bytes would let a careless server parse.
      const std::string raw = RawTwice(port, bytes, smuggled);
      CHECK(raw.rfind("HTTP/1.1 415", 0) == 0);
      CHECK(raw.find("\"error\":\"unsupported_media_type\"") != std::string::npos);
      CHECK(raw.find("Connection: close") != std::string::npos);
      CHECK(Answers(raw) == 1);
    }
  }
  // JSON, with or without charset=utf-8 and in any case, is read; a request pipelined behind
  // it is answered, so the checks above would have seen a smuggled answer.
  const std::string prompt = R"({"name":"pulse_triage_fleet"})";
  for (const std::string& type :
       {std::string("application/json"), std::string("application/json; charset=utf-8"),
        std::string("Application/JSON;charset=\"UTF-8\"")}) {
    INFO(type);
    const std::string raw =
        RawTwice(port,
                 Head("POST", "/api/ai/workflow-prompts/render", token) + "Content-Type: " + type +
                     "\r\nContent-Length: " + std::to_string(prompt.size()) + "\r\n\r\n" + prompt,
                 smuggled);
    CHECK(raw.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(Answers(raw) == 2);
  }
  // An empty body needs no type.
  CHECK(Raw(port, Head("POST", "/api/ai/workflow-prompts/render", token) +
                      "Content-Length: 0\r\nConnection: close\r\n\r\n")
            .rfind("HTTP/1.1 400", 0) == 0);
  // Nothing was planned, set or started, and the server is healthy.
  CHECK(Json(Send(port, "GET", "/api/actions?view=pending", token).body)["count"].GetInt() == 0);
  CHECK(Send(port, "GET", "/api/resources/vm%3A101/operator-state", token).status == 404);
  CHECK(Send(port, "GET", "/api/ai/sessions", token).body == "[]");
  CHECK(Send(port, "GET", "/healthz").status == 200);
  CHECK(server.Stop() == "exited 0");
  CHECK(server.Log().find(" answered 5") == std::string::npos);
}

// ---- queries ----

struct QueryRoute {
  std::string name;
  std::string method;
  std::string path;
  adapters::http::RouteSpec spec;
};

std::vector<QueryRoute> AllRoutes() {
  std::vector<QueryRoute> out;
  for (const core::AgentCapability& c : core::AgentCapabilities()) {
    out.push_back({c.name, c.method, c.path, adapters::http::RouteSpecFor(c)});
  }
  for (const adapters::http::ServerRoute& r : adapters::http::ServerRoutes()) {
    out.push_back({r.spec.name, r.spec.method, r.spec.path, r.spec});
  }
  return out;
}

std::string Fill(const std::string& path_template) {
  std::string out;
  for (std::size_t i = 0; i < path_template.size(); ++i) {
    if (path_template[i] == '{') {
      i = path_template.find('}', i);
      out += "vm%3A101";
    } else {
      out += path_template[i];
    }
  }
  return out;
}

struct Param {
  std::string type;
  const rapidjson::Value* schema = nullptr;
};

// Hostile values for a parameter of `type` (already percent-encoded), with the code each
// must meet: the parameter's code, or "invalid_request" for text that does not even decode.
std::vector<std::pair<std::string, bool>> HostileValues(const std::string& type,
                                                        const rapidjson::Value& schema) {
  // second: true when the route's (or parameter's) own code answers; false: invalid_request.
  std::vector<std::pair<std::string, bool>> v = {
      {"%ZZ", false}, {"%00", false}, {"%FF%FE", false}, {"a%0Ab", true}, {"%1B%5B2J", true}};
  if (type == "integer") {
    for (const char* bad : {"1.5", "1e3", "1E3", "0x10", "%2B5", "+5", "%205", "5abc",
                            "99999999999999999999", "-99999999999999999999", "", "NaN", "10%00"}) {
      v.emplace_back(bad, std::string(bad) != "10%00");
    }
    if (const rapidjson::Value* min = core::GetMember(schema, "minimum")) {
      v.emplace_back(std::to_string(min->GetInt64() - 1), true);
    }
    if (const rapidjson::Value* max = core::GetMember(schema, "maximum")) {
      v.emplace_back(std::to_string(max->GetInt64() + 1), true);
    }
  } else if (type == "boolean") {
    for (const char* bad : {"maybe", "", "2", "yes", "truee", "%E2%9C%93", "-1"}) {
      v.emplace_back(bad, true);
    }
  } else if (const rapidjson::Value* values = core::GetMember(schema, "enum")) {
    for (const char* bad : {"bogus", "", "%27;DROP", "all"}) {
      v.emplace_back(bad, true);
    }
    const std::string first(core::StringViewOf((*values)[0]));
    std::string upper = first;
    for (char& ch : upper) {
      ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    v.emplace_back(upper, true);
    v.emplace_back(first + "%20", true);
  } else if (const rapidjson::Value* max = core::GetMember(schema, "maxLength")) {
    v.emplace_back(std::string(static_cast<std::size_t>(max->GetInt64()) + 1, 'a'), true);
  }
  return v;
}

std::string ValidValue(const std::string& type, const rapidjson::Value& schema) {
  if (type == "integer") {
    const rapidjson::Value* min = core::GetMember(schema, "minimum");
    return std::to_string(std::max<std::int64_t>(1, min == nullptr ? 1 : min->GetInt64()));
  }
  if (type == "boolean") {
    return "true";
  }
  if (const rapidjson::Value* values = core::GetMember(schema, "enum")) {
    return std::string(core::StringViewOf((*values)[0]));
  }
  // A value only the server can mint (a findings cursor) declares a valid example.
  if (const rapidjson::Value* examples = core::GetMember(schema, "examples")) {
    return std::string(core::StringViewOf((*examples)[0]));
  }
  return "vm%3A101";
}

TEST_CASE("every route refuses a query its declaration does not allow, with its own code",
          "[e2e][server][edge]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const int port = server.port();
  int checked = 0;
  for (const QueryRoute& r : AllRoutes()) {
    const std::string path = Fill(r.path);
    const std::string route_code(core::ToString(r.spec.query_error_code));
    const auto send = [&](const std::string& query) {
      // Bodies are never the problem here: the query is refused before any body is read.
      const bool body = r.method == "POST" || r.method == "PUT";
      if (r.spec.streaming) {
        // Read only the first chunk: a stream that was wrongly opened never ends by itself.
        return SendFirstChunk(port, r.method, path + "?" + query, token, body ? "{}" : "");
      }
      return Send(port, r.method, path + "?" + query, token, body ? "{}" : "");
    };
    const auto expect = [&](const std::string& query, const std::string& code) {
      INFO(r.name << " " << r.method << " " << path << "?" << query);
      const Reply reply = send(query);
      CHECK(reply.status == 400);
      CHECK(ErrorCode(reply.body) == code);
      CHECK(reply.body.find("leak-me-7c1") == std::string::npos);
      ++checked;
    };
    // Parameters nobody declared, whatever the route.
    expect("zzz_unknown=leak-me-7c1", route_code);
    expect("%7A%7A=1", route_code);
    expect("__proto__=1", route_code);
    expect("x%00=1", "invalid_request");
    if (r.spec.query_schema.empty()) {
      expect("limit=1", route_code);
      continue;
    }
    const rapidjson::Document schema = Json(r.spec.query_schema);
    for (const auto& property : schema["properties"].GetObject()) {
      const std::string name(core::StringViewOf(property.name));
      const std::string type(core::GetString(property.value, "type").value_or(""));
      auto own = r.spec.query_param_codes.find(name);
      const std::string code = own == r.spec.query_param_codes.end()
                                   ? route_code
                                   : std::string(core::ToString(own->second));
      for (const auto& [value, own_code] : HostileValues(type, property.value)) {
        expect(name + "=" + value, own_code ? code : "invalid_request");
      }
      const std::string valid = ValidValue(type, property.value);
      expect(name + "=" + valid + "&" + name + "=" + valid, code);  // repeated
      expect(name + "=" + valid + "&zzz_unknown=1", route_code);    // declared + unknown
      // The declared value alone is never refused as a query (whatever the handler says).
      INFO(r.name << " " << name << "=" << valid);
      const Reply accepted = send(name + "=" + valid);
      CHECK(accepted.status != 0);
      CHECK(ErrorCode(accepted.body) != code);
      CHECK((accepted.status != 400 || ErrorCode(accepted.body) != "invalid_request"));
    }
  }
  CHECK(checked > 200);
  // The cases the issue names, and well-formed queries reaching their handlers.
  for (const std::string& query :
       {std::string("limit=-1"), std::string("limit=1e3"), std::string("limit=1.5"),
        std::string("limit=501"), std::string("include_resolved=maybe"),
        std::string("resource_id=")}) {
    INFO(query);
    CHECK(ErrorCode(Send(port, "GET", "/api/ai/patrol/findings?" + query, token).body) ==
          "invalid_finding_request");
  }
  CHECK(ErrorCode(Send(port, "GET", "/api/agent/fleet-context?severity=bogus", token).body) ==
        "invalid_request");
  CHECK(ErrorCode(Send(port, "GET", "/api/actions?limit=0", token).body) ==
        "invalid_action_list_limit");
  CHECK(ErrorCode(Send(port, "GET", "/api/ai/sessions?limit=1001", token).body) ==
        "invalid_request");
  CHECK(Send(port, "GET", "/api/ai/patrol/findings?limit=5&include_resolved=1", token).status ==
        200);
  CHECK(Send(port, "GET", "/api/agent/fleet-context?severity=critical&hasFindings=TRUE", token)
            .status == 200);
  CHECK(Send(port, "GET", "/api/actions?view=settled&limit=500", token).status == 200);
  // Nothing a refused request asked for happened.
  CHECK(Json(Send(port, "GET", "/api/actions?view=pending", token).body)["count"].GetInt() == 0);
  CHECK(Send(port, "GET", "/api/resources/vm%3A101/operator-state", token).status == 404);
  CHECK(Send(port, "GET", "/api/ai/sessions", token).body == "[]");
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
