// Shared fixture of the HTTP adapter tests: a real HttpServer on an ephemeral loopback port
// with every manifest capability and server route bound to a stub that echoes what it saw,
// an in-memory token store, and helpers for tokens, clients and raw-socket requests.
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pulse/adapters/http/http_server.h"
#include "pulse/adapters/http/server_routes.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/in_memory_token_store.h"

namespace pulse::testing {

namespace http = pulse::adapters::http;

// A handler that answers 200 with what it was given:
// {route, method, params{}, query{}, body, token}.
inline http::HttpReply EchoReply(const http::HttpRequest& r) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("route", r.route->name);
  w.Member("method", r.method);
  w.Key("params");
  w.StartObject();
  for (const auto& [k, v] : r.path_params) {
    w.Member(k, v);
  }
  w.EndObject();
  w.Key("query");
  w.StartObject();
  for (const auto& [k, v] : r.query) {
    w.Member(k, v);
  }
  w.EndObject();
  w.Member("body", r.body);
  w.Member("token", r.principal.token_id);
  w.EndObject();
  return http::HttpReply::Json(w.Take());
}

inline http::HttpReply StreamStub(const http::HttpRequest&) {
  http::SseOptions options;
  options.heartbeat = absl::Milliseconds(100);
  auto stream = http::SseStream::Create(options);
  stream->SendEvent("stream.connected", R"({"kind":"stream.connected"})");
  return http::HttpReply::EventStream(stream);
}

// Binds every manifest capability and server route; `overrides` replaces handlers by name.
inline http::Router FullRouter(const std::map<std::string, http::HttpHandler>& overrides = {}) {
  http::Router router;
  auto handler_for = [&](const std::string& name, bool streaming) -> http::HttpHandler {
    auto it = overrides.find(name);
    if (it != overrides.end()) {
      return it->second;
    }
    return streaming ? http::HttpHandler(StreamStub) : http::HttpHandler(EchoReply);
  };
  for (const core::AgentCapability& c : core::AgentCapabilities()) {
    REQUIRE(router.Handle(c.name, handler_for(c.name, c.streaming)).ok());
  }
  for (const http::ServerRoute& route : http::ServerRoutes()) {
    REQUIRE(
        router.Handle(route.spec.name, handler_for(route.spec.name, route.spec.streaming)).ok());
  }
  return router;
}

// Server options for tests: few threads (the machine is shared), room for the 256-stream
// test.
inline http::HttpServerOptions TestOptions() {
  http::HttpServerOptions options;
  options.io_threads = 2;
  options.handler_threads = 2;
  options.max_subscription_streams = 300;
  options.max_run_streams = 50;
  options.max_streams_per_token = 300;
  options.stop_grace = absl::Seconds(2);
  return options;
}

class TestServer {
 public:
  explicit TestServer(http::HttpServerOptions options = TestOptions(),
                      http::Router router = FullRouter(), http::MetricsRegistry* metrics = nullptr)
      : authenticator_(store_, clock_) {
    absl::StatusOr<std::unique_ptr<http::HttpServer>> server =
        http::HttpServer::Open(std::move(options), std::move(router), authenticator_, metrics);
    REQUIRE(server.ok());
    server_ = *std::move(server);
    REQUIRE(server_->Start().ok());
  }

  ~TestServer() { server_->Stop(); }

  http::HttpServer& server() { return *server_; }
  InMemoryTokenStore& store() { return store_; }
  int port() const { return server_->port(); }

  // A fresh token holding exactly `scopes` (wire strings or "*").
  std::string Token(const std::vector<std::string>& scopes) {
    core::NewApiToken request;
    request.name = "test";
    request.scopes = scopes;
    request.created_at = clock_.Now();
    absl::StatusOr<core::IssuedApiToken> issued = store_.Create(request);
    REQUIRE(issued.ok());
    return issued->token;
  }

  std::unique_ptr<httplib::Client> Client() const {
    auto client = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client->set_connection_timeout(2, 0);
    client->set_read_timeout(5, 0);
    client->set_write_timeout(5, 0);
    client->set_url_encode(false);  // send targets exactly as a test writes them
    return client;
  }

  // Sends `bytes` on a fresh connection and returns everything the server writes back until
  // it closes the connection or stays silent for `quiet_ms`.
  std::string Raw(const std::string& bytes, int quiet_ms = 300) const {
    RawConnection connection(server_->port());
    connection.Send(bytes);
    return connection.Read(quiet_ms);
  }

  // One client TCP connection for byte-level tests.
  class RawConnection {
   public:
    explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
      REQUIRE(fd_ >= 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    }
    ~RawConnection() { ::close(fd_); }
    RawConnection(const RawConnection&) = delete;
    RawConnection& operator=(const RawConnection&) = delete;

    int fd() const { return fd_; }

    void Send(const std::string& bytes) {
      std::size_t sent = 0;
      while (sent < bytes.size()) {
        const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) {
          break;
        }
        sent += static_cast<std::size_t>(n);
      }
    }

    // What arrives until the peer closes or is silent for `quiet_ms`.
    std::string Read(int quiet_ms) {
      timeval tv{};
      tv.tv_sec = quiet_ms / 1000;
      tv.tv_usec = (quiet_ms % 1000) * 1000;
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      std::string out;
      char buf[4096];
      while (true) {
        const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
        if (n <= 0) {
          break;
        }
        out.append(buf, static_cast<std::size_t>(n));
      }
      return out;
    }

   private:
    int fd_;
  };

 private:
  FakeClock clock_;
  InMemoryTokenStore store_;
  http::TokenAuthenticator authenticator_;
  std::unique_ptr<http::HttpServer> server_;
};

struct Reply {
  int status = 0;
  std::string body;
  httplib::Headers headers;
  httplib::Error error = httplib::Error::Success;
};

// One request through httplib::Client. With `first_chunk_only` the body is cut after the first
// chunk (for event streams, which would never end).
inline Reply Send(const TestServer& server, const std::string& method, const std::string& path,
                  const std::string& body = "", const httplib::Headers& headers = {},
                  bool first_chunk_only = false) {
  auto client = server.Client();
  httplib::Request req;
  req.method = method;
  req.path = path;
  req.headers = headers;
  req.body = body;
  if (!body.empty()) {
    req.set_header("Content-Type", "application/json");
  }
  Reply reply;
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    reply.body.append(data, n);
    return !first_chunk_only;
  };
  httplib::Response res;
  client->send(req, res, reply.error);
  reply.status = res.status;
  reply.headers = res.headers;
  return reply;
}

inline httplib::Headers TokenHeader(const std::string& token) {
  return httplib::Headers{{"X-API-Token", token}};
}

// Every scope this product knows, as wire strings.
inline std::vector<std::string> AllScopeNames() {
  std::vector<std::string> out;
  for (core::Scope s : core::kAllScopes) {
    out.emplace_back(core::ToString(s));
  }
  return out;
}

inline std::vector<std::string> AllScopesExcept(core::Scope missing) {
  std::vector<std::string> out;
  for (core::Scope s : core::kAllScopes) {
    if (s != missing) {
      out.emplace_back(core::ToString(s));
    }
  }
  return out;
}

inline rapidjson::Document ParseBody(const std::string& body) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body);
  REQUIRE(doc.ok());
  return std::move(doc).value();
}

// The error code of an agent envelope body.
inline std::string ErrorCode(const std::string& body) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(body);
  if (!doc.ok() || !doc->IsObject()) {
    return "<not json: " + body.substr(0, 80) + ">";
  }
  return std::string(core::GetString(*doc, "error").value_or("<no error>"));
}

// A path for a capability's route with each placeholder filled by `value` (already encoded).
inline std::string PathFor(const std::string& path_template, const std::string& value) {
  std::string out;
  const std::vector<core::PathSegment> segments = core::ParsePathTemplate(path_template).value();
  for (const core::PathSegment& s : segments) {
    out += "/" + (s.placeholder ? value : s.text);
  }
  return out;
}

// A body the capability's schema accepts.
inline std::string ValidBody(const std::string& name) {
  static const std::map<std::string, std::string> bodies = {
      {"set_operator_state", R"({"intentionallyOffline":false,"neverAutoRemediate":true})"},
      {"acknowledge_finding", R"({"finding_id":"f-1"})"},
      {"snooze_finding", R"({"finding_id":"f-1","duration_hours":4})"},
      {"dismiss_finding", R"({"finding_id":"f-1","reason":"not_an_issue"})"},
      {"resolve_finding", R"({"finding_id":"f-1"})"},
      {"plan_action",
       R"({"requestId":"r1","resourceId":"vm:101","capabilityName":"restart","reason":"hung","requestedBy":"agent","params":{"force":true}})"},
      {"decide_action", R"({"outcome":"approved"})"},
      {"execute_action", R"({})"},
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
      {"update_patrol_settings",
       R"({"thresholds":{"defaults":{"cpu":{"warning":80,"critical":90}}}})"},
      {"set_resource_note", R"({"note":"a cold spare"})"},
      {"update_notification_settings", R"({"channels":[]})"},
      {"test_notification_channel", R"({})"},
      {"investigate_alert", R"({"alerts":[{"name":"TestAlert","resource_id":"vm:101"}]})"},
  };
  auto it = bodies.find(name);
  return it == bodies.end() ? "" : it->second;
}

}  // namespace pulse::testing
