// Hostile input against every route: malformed and mistyped bodies, unknown fields, huge
// bodies, traversal and control characters in ids, framing tricks, header injection and very
// long URLs. Every refusal must be the agent envelope with the right code, and none may reach
// a handler.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>

#include "http_test_support.h"

namespace pulse::adapters::http {
namespace {

using testing::Reply;
using testing::Send;
using testing::TestServer;
using testing::TokenHeader;

struct BodyRoute {
  std::string name;
  std::string method;
  std::string path;
  std::string code;  // the route's body error code
};

std::vector<BodyRoute> BodyRoutes() {
  std::vector<BodyRoute> out;
  for (const core::AgentCapability& c : core::AgentCapabilities()) {
    if (core::TakesBody(c)) {
      out.push_back({c.name, c.method, testing::PathFor(c.path, "vm%3A101"),
                     std::string(core::ToString(*c.body_error_code))});
    }
  }
  for (const ServerRoute& r : ServerRoutes()) {
    if (!r.spec.body_schema.empty()) {
      out.push_back({r.spec.name, r.spec.method, testing::PathFor(r.spec.path, "s-1"),
                     std::string(core::ToString(r.spec.body_error_code))});
    }
  }
  return out;
}

// A router whose handlers count their calls, so a test can prove nothing got through.
testing::TestServer CountingServer(std::atomic<int>& calls) {
  std::map<std::string, HttpHandler> overrides;
  auto counting = [&calls](const HttpRequest& r) {
    ++calls;
    return testing::EchoReply(r);
  };
  for (const core::AgentCapability& c : core::AgentCapabilities()) {
    if (!c.streaming) {
      overrides[c.name] = counting;
    }
  }
  for (const ServerRoute& r : ServerRoutes()) {
    if (!r.spec.streaming) {
      overrides[r.spec.name] = counting;
    }
  }
  return TestServer(testing::TestOptions(), testing::FullRouter(overrides));
}

TEST_CASE("malformed, mistyped and unknown-field bodies get the route's code",
          "[adapters][http][hostile]") {
  std::atomic<int> calls{0};
  TestServer server = CountingServer(calls);
  const std::string token = server.Token({"*"});
  for (const BodyRoute& r : BodyRoutes()) {
    INFO(r.name);
    for (const std::string& body :
         {std::string("{"), std::string("{\"a\":}"), std::string("[]"), std::string("\"x\""),
          std::string("null"), std::string("{} {}"), std::string("{\"a\":1,\"a\":2}"),
          std::string("{\"zzz_unknown\":1}"), std::string("\xff\xfe"),
          std::string(40, '[') + std::string(40, ']')}) {
      INFO(body);
      const Reply reply = Send(server, r.method, r.path, body, TokenHeader(token));
      CHECK(reply.status == 400);
      CHECK(testing::ErrorCode(reply.body) == r.code);
    }
  }
  CHECK(calls == 0);
}

TEST_CASE("wrong member types are refused before the handler", "[adapters][http][hostile]") {
  std::atomic<int> calls{0};
  TestServer server = CountingServer(calls);
  const std::string token = server.Token({"*"});
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> cases = {
      {"POST", "/api/ai/patrol/snooze", R"({"finding_id":"f","duration_hours":"4"})",
       "duration_hours"},
      {"POST", "/api/ai/patrol/snooze", R"({"finding_id":"f","duration_hours":4.5})",
       "duration_hours"},
      {"POST", "/api/ai/patrol/snooze", R"({"finding_id":"f","duration_hours":500})",
       "duration_hours"},
      {"POST", "/api/ai/patrol/acknowledge", R"({"finding_id":7})", "finding_id"},
      {"POST", "/api/ai/patrol/dismiss", R"({"finding_id":"f","reason":"bored"})", "reason"},
      {"POST", "/api/actions/a1/decision", R"({"outcome":"maybe"})", "outcome"},
      {"POST", "/api/actions/plan",
       R"({"requestId":"r","resourceId":"vm:1","capabilityName":"c","reason":"x","requestedBy":"a","params":[1]})",
       "params"},
      {"PUT", "/api/resources/vm%3A1/operator-state",
       R"({"intentionallyOffline":"no","neverAutoRemediate":true})", "intentionallyOffline"},
      {"POST", "/api/ai/chat", R"({"message":"hi","control_level":"root"})", "control_level"},
  };
  for (const auto& [method, path, body, member] : cases) {
    INFO(path << " " << body);
    const Reply reply = Send(server, method, path, body, TokenHeader(token));
    CHECK(reply.status == 400);
    const rapidjson::Document doc = testing::ParseBody(reply.body);
    REQUIRE(doc.HasMember("details"));
    CHECK(doc["details"].HasMember(member.c_str()));
  }
  // A required member is named too.
  const Reply missing =
      Send(server, "POST", "/api/ai/patrol/snooze", R"({"finding_id":"f"})", TokenHeader(token));
  CHECK(missing.status == 400);
  CHECK(testing::ParseBody(missing.body)["details"]["duration_hours"] == "required");
  const Reply unknown = Send(server, "POST", "/api/ai/patrol/acknowledge",
                             R"({"finding_id":"f","sneaky":true})", TokenHeader(token));
  CHECK(testing::ParseBody(unknown.body)["details"]["sneaky"] == "is not a known field");
  CHECK(calls == 0);
}

TEST_CASE("a path parameter repeated in the body must match the path",
          "[adapters][http][hostile]") {
  TestServer server;
  const std::string token = server.Token({"*"});
  const std::string path = "/api/resources/vm%3A101/operator-state";
  const Reply same =
      Send(server, "PUT", path,
           R"({"resourceId":"vm:101","intentionallyOffline":false,"neverAutoRemediate":false})",
           TokenHeader(token));
  CHECK(same.status == 200);
  const Reply other =
      Send(server, "PUT", path,
           R"({"resourceId":"vm:999","intentionallyOffline":false,"neverAutoRemediate":false})",
           TokenHeader(token));
  CHECK(other.status == 400);
  CHECK(testing::ErrorCode(other.body) == "operator_state_invalid");
}

TEST_CASE("bodies over the limit are 413 whether sized or chunked", "[adapters][http][hostile]") {
  std::atomic<int> calls{0};
  http::HttpServerOptions options = testing::TestOptions();
  options.max_body_bytes = 4096;
  std::map<std::string, HttpHandler> overrides;
  overrides["acknowledge_finding"] = [&calls](const HttpRequest& r) {
    ++calls;
    return testing::EchoReply(r);
  };
  TestServer server(options, testing::FullRouter(overrides));
  const std::string token = server.Token({"*"});
  const std::string huge = "{\"finding_id\":\"" + std::string(8192, 'x') + "\"}";
  const Reply sized = Send(server, "POST", "/api/ai/patrol/acknowledge", huge, TokenHeader(token));
  CHECK(sized.status == 413);
  CHECK(testing::ErrorCode(sized.body) == "request_too_large");

  // A chunked body is cut off while it is read.
  std::string chunked =
      "POST /api/ai/patrol/acknowledge HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-API-Token: " +
      token + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 8; ++i) {
    chunked += "400\r\n" + std::string(1024, 'y') + "\r\n";
  }
  chunked += "0\r\n\r\n";
  const std::string raw = server.Raw(chunked);
  CHECK(raw.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(raw.find("request_too_large") != std::string::npos);

  // A huge declared length is refused without reading it, even unauthenticated.
  const std::string declared = server.Raw(
      "POST /api/ai/patrol/acknowledge HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-API-Token: " +
      token + "\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{");
  CHECK(declared.rfind("HTTP/1.1 413", 0) == 0);
  CHECK(declared.find("Connection: close") != std::string::npos);
  CHECK(calls == 0);
}

TEST_CASE("ids with traversal, NUL, controls or bad escapes are 400 invalid_request",
          "[adapters][http][hostile]") {
  std::atomic<int> calls{0};
  TestServer server = CountingServer(calls);
  const std::string token = server.Token({"*"});
  const std::vector<std::string> ids = {"..%2F..%2Fetc%2Fpasswd",
                                        "%2E%2E",
                                        "..",
                                        "%2e",
                                        "a%00b",
                                        "%zz",
                                        "a%2",
                                        "a%0Ab",
                                        "a%0D%0AX-Injected:%201",
                                        "a%5Cb",
                                        "%7F",
                                        "%FF%FE",
                                        std::string(300, 'a')};
  for (const std::string& id : ids) {
    INFO(id);
    for (const std::string& path :
         {"/api/agent/resource-context/" + id, "/api/resources/" + id + "/operator-state",
          "/api/actions/" + id}) {
      const Reply reply = Send(server, "GET", path, "", TokenHeader(token));
      CHECK(reply.status == 400);
      CHECK(testing::ErrorCode(reply.body) == "invalid_request");
      CHECK(reply.headers.count("X-Injected") == 0);
    }
    const Reply post = Send(server, "POST", "/api/actions/" + id + "/decision",
                            testing::ValidBody("decide_action"), TokenHeader(token));
    CHECK(post.status == 400);
  }
  CHECK(calls == 0);
}

TEST_CASE("unknown routes are 404 and wrong methods 405 with Allow", "[adapters][http][hostile]") {
  TestServer server;
  const std::string token = server.Token({"*"});
  const Reply missing = Send(server, "GET", "/api/nope", "", TokenHeader(token));
  CHECK(missing.status == 404);
  CHECK(testing::ErrorCode(missing.body) == "route_not_found");
  const Reply unauth_missing = Send(server, "GET", "/etc/passwd");
  CHECK(unauth_missing.status == 404);
  const Reply wrong = Send(server, "DELETE", "/api/actions/plan", "", TokenHeader(token));
  CHECK(wrong.status == 405);
  CHECK(testing::ErrorCode(wrong.body) == "method_not_allowed");
  CHECK(wrong.headers.find("Allow")->second == "GET, POST");
  const Reply head = Send(server, "HEAD", "/api/agent/fleet-context", "", TokenHeader(token));
  CHECK(head.status == 405);
}

TEST_CASE("very long URLs are 414 in the envelope", "[adapters][http][hostile]") {
  TestServer server;
  const std::string token = server.Token({"*"});
  const Reply ours = Send(server, "GET", "/api/agent/fleet-context?q=" + std::string(3000, 'a'), "",
                          TokenHeader(token));
  CHECK(ours.status == 414);
  CHECK(testing::ErrorCode(ours.body) == "uri_too_long");
  const std::string raw = server.Raw("GET /" + std::string(10000, 'a') +
                                     " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(raw.rfind("HTTP/1.1 414", 0) == 0);
  CHECK(raw.find("\"error\":\"uri_too_long\"") != std::string::npos);
  const Reply post = Send(server, "POST", "/api/actions/" + std::string(3000, 'a') + "/execute",
                          "{}", TokenHeader(token));
  CHECK(post.status == 414);
}

TEST_CASE("header injection and framing tricks are refused", "[adapters][http][hostile]") {
  std::atomic<int> calls{0};
  TestServer server = CountingServer(calls);
  const std::string token = server.Token({"*"});
  // A bare CR inside the token value: the head is refused, no header is injected.
  const std::string bare_cr = server.Raw(
      "GET /api/agent/fleet-context HTTP/1.1\r\nHost: x\r\n"
      "Connection: close\r\nX-API-Token: " +
      token + "\rX-Injected: 1\r\n\r\n");
  // RFC 9112 section 2.2: a bare CR is invalid; the recipient must reject or replace it.
  CHECK(bare_cr.rfind("HTTP/1.1 400", 0) == 0);
  // CR LF encoded into the path: no route, and nothing reflected into the headers.
  const std::string encoded = server.Raw(
      "GET /api/agent/fleet-context%0D%0AX-Injected:%201 HTTP/1.1\r\nHost: x\r\nConnection: "
      "close\r\nX-API-Token: " +
      token + "\r\n\r\n");
  CHECK(encoded.rfind("HTTP/1.1 404", 0) == 0);
  CHECK(calls == 0);
  // An obsolete line fold: whatever the parser makes of it, nothing is injected or echoed.
  const std::string folded = server.Raw(
      "GET /api/agent/fleet-context HTTP/1.1\r\nHost: x\r\n"
      "Connection: close\r\nX-API-Token: " +
      token + "\r\n X-Injected: 1\r\n\r\n");
  CHECK(folded.rfind("HTTP/1.1 ", 0) == 0);
  for (const std::string* raw : {&bare_cr, &encoded, &folded}) {
    const std::string head = raw->substr(0, raw->find("\r\n\r\n"));
    CHECK(head.find("X-Injected") == std::string::npos);
    CHECK(raw->find(token) == std::string::npos);
  }
  const int calls_before_framing = calls;
  // Request-smuggling framing: both lengths, a bogus length, an unknown transfer coding.
  for (const std::string& framing :
       {std::string("Content-Length: 2\r\nTransfer-Encoding: chunked\r\n"),
        std::string("Content-Length: 2\r\nContent-Length: 3\r\n"),
        std::string("Content-Length: -1\r\n"), std::string("Content-Length: 0x10\r\n"),
        std::string("Transfer-Encoding: gzip\r\n")}) {
    INFO(framing);
    const std::string raw = server.Raw(
        "POST /api/ai/patrol/acknowledge HTTP/1.1\r\nHost: x\r\n"
        "Connection: close\r\nX-API-Token: " +
        token + "\r\n" + framing + "\r\n{}");
    CHECK(raw.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(raw.find("invalid_request") != std::string::npos);
  }
  // A GET with a body would have its body read as the next request: refused and closed.
  const std::string get_body = server.Raw(
      "GET /api/agent/fleet-context HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-API-Token: " +
      token + "\r\nContent-Length: 5\r\n\r\nGET /");
  CHECK(get_body.rfind("HTTP/1.1 400", 0) == 0);
  CHECK(get_body.find("Connection: close") != std::string::npos);
  // Range requests would slice JSON replies.
  const Reply range = Send(server, "GET", "/api/agent/fleet-context", "",
                           {{"X-API-Token", token}, {"Range", "bytes=0-3"}});
  CHECK(range.status == 400);
  CHECK(calls == calls_before_framing);
}

TEST_CASE("malformed query strings are 400 and good ones decode", "[adapters][http][hostile]") {
  TestServer server;
  const std::string token = server.Token({"*"});
  for (const char* query : {"?a=%zz", "?a=%00", "?a=%FF", "?%="}) {
    INFO(query);
    const Reply reply = Send(server, "GET", std::string("/api/agent/fleet-context") + query, "",
                             TokenHeader(token));
    CHECK(reply.status == 400);
    CHECK(testing::ErrorCode(reply.body) == "invalid_request");
  }
  const Reply ok = Send(server, "GET", "/api/agent/fleet-context?technology=a+b%2Bc&&hasFindings=1",
                        "", TokenHeader(token));
  REQUIRE(ok.status == 200);
  const rapidjson::Document body = testing::ParseBody(ok.body);
  CHECK(core::StringViewOf(body["query"]["technology"]) == "a b+c");
  CHECK(core::StringViewOf(body["query"]["hasFindings"]) == "1");
}

TEST_CASE("a refused request with a small body keeps the connection usable",
          "[adapters][http][hostile]") {
  TestServer server;
  const std::string token = server.Token({"*"});
  // Two requests on one connection: the first is refused (no token) but its body is drained,
  // so the second is read as a request and not as the rest of the first one's body.
  const std::string body = R"({"finding_id":"f-1"})";
  const std::string headers =
      "POST /api/ai/patrol/acknowledge HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n";
  TestServer::RawConnection connection(server.port());
  connection.Send(headers + "\r\n" + body);
  const std::string first = connection.Read(300);
  CHECK(first.rfind("HTTP/1.1 401", 0) == 0);
  CHECK(first.find("Connection: close") == std::string::npos);
  connection.Send(headers + "X-API-Token: " + token + "\r\nConnection: close\r\n\r\n" + body);
  const std::string second = connection.Read(1000);
  INFO(second);
  CHECK(second.rfind("HTTP/1.1 200", 0) == 0);
}

}  // namespace
}  // namespace pulse::adapters::http
