#include "fake_agent_server.h"

#include <catch2/catch.hpp>
#include <utility>

#include "absl/time/clock.h"
#include "fmt/format.h"
#include "pulse/adapters/http/router.h"

namespace pulse::adapters::hostagent::testing {
namespace {

constexpr std::string_view kCommandsQuery =
    R"({"type":"object","properties":{"host":{"type":"string","maxLength":64},)"
    R"("agent_version":{"type":"string","maxLength":64}}})";

http::HttpReply HostMismatch(const std::string& host) {
  return http::HttpReply::Json(
      fmt::format(R"({{"error":"agent_host_mismatch","message":"this token is not {}'s"}})", host),
      403);
}

}  // namespace

FakeAgentServer::FakeAgentServer() {
  http::Router router;
  auto spec = [](std::string name, std::string method, std::string path) {
    http::RouteSpec route;
    route.name = std::move(name);
    route.method = std::move(method);
    route.path = std::move(path);
    route.scope = core::Scope::kAgentExec;
    return route;
  };
  http::RouteSpec report = spec("agent_report", "POST", "/api/agents/report");
  http::RouteSpec results = spec("agent_results", "POST", "/api/agents/results");
  http::RouteSpec commands = spec("agent_commands", "GET", "/api/agents/commands");
  commands.streaming = true;
  commands.stream_budget = http::StreamBudget::kSubscription;
  commands.query_schema = std::string(kCommandsQuery);
  REQUIRE(
      router.HandleRoute(report, [this](const http::HttpRequest& r) { return OnReport(r); }).ok());
  REQUIRE(
      router.HandleRoute(results, [this](const http::HttpRequest& r) { return OnResult(r); }).ok());
  REQUIRE(router.HandleRoute(commands, [this](const http::HttpRequest& r) { return OnCommands(r); })
              .ok());
  http::HttpServerOptions options;
  options.io_threads = 1;
  options.handler_threads = 2;
  options.max_body_bytes = kMaxMessageBytes;
  options.stop_grace = absl::Milliseconds(500);
  options.require_complete_router = false;
  absl::StatusOr<std::unique_ptr<http::HttpServer>> server =
      http::HttpServer::Open(options, std::move(router), authenticator_);
  REQUIRE(server.ok());
  server_ = *std::move(server);
  REQUIRE(server_->Start().ok());
}

FakeAgentServer::~FakeAgentServer() { server_->Stop(); }

std::string FakeAgentServer::url() const {
  return fmt::format("http://127.0.0.1:{}", server_->port());
}

std::string FakeAgentServer::Token() {
  core::NewApiToken request;
  request.name = "web1";
  request.kind = core::ApiTokenKind::kAgent;
  request.scopes = {"agent:exec"};
  request.created_at = clock_.Now();
  absl::StatusOr<core::IssuedApiToken> issued = store_.Create(request);
  REQUIRE(issued.ok());
  return issued->token;
}

void FakeAgentServer::SetScript(const ServerScript& script) {
  absl::MutexLock lock(&mu_);
  script_ = script;
}

http::HttpReply FakeAgentServer::OnReport(const http::HttpRequest& request) {
  absl::StatusOr<Report> report = DecodeReport(request.body);
  absl::MutexLock lock(&mu_);
  ++requests_;
  if (!report.ok()) {
    ++malformed_;
    return http::HttpReply::Error(core::AgentErrorCode::kInvalidRequest,
                                  std::string(report.status().message()));
  }
  if (!script_.refuse_host.empty() && report->host == script_.refuse_host) {
    return HostMismatch(report->host);
  }
  const std::string host = report->host;
  reports_.push_back(*std::move(report));
  return http::HttpReply::Json(
      fmt::format(R"({{"accepted":true,"host":"{}","report_seq":{},"next_report_seconds":30}})",
                  host, reports_.size()));
}

http::HttpReply FakeAgentServer::OnResult(const http::HttpRequest& request) {
  absl::StatusOr<Result> result = DecodeResult(request.body);
  absl::MutexLock lock(&mu_);
  ++requests_;
  if (!result.ok()) {
    ++malformed_;
    return http::HttpReply::Error(core::AgentErrorCode::kInvalidRequest,
                                  std::string(result.status().message()));
  }
  if (!script_.refuse_host.empty() && result->host == script_.refuse_host) {
    return HostMismatch(result->host);
  }
  results_.push_back(*std::move(result));
  return http::HttpReply::Json(R"({"accepted":true})");
}

http::HttpReply FakeAgentServer::OnCommands(const http::HttpRequest& request) {
  const std::string host(request.Query("host").value_or(""));
  absl::MutexLock lock(&mu_);
  ++requests_;
  if (!script_.refuse_host.empty() && host == script_.refuse_host) {
    return HostMismatch(host);
  }
  http::SseOptions sse;
  sse.heartbeat = absl::Seconds(1);
  std::shared_ptr<http::SseStream> stream = http::SseStream::Create(sse);
  if (script_.command_before_hello) {
    stream->SendEvent("command", R"({"protocol":1})");
  }
  Hello hello;
  hello.host = script_.hello_host.empty() ? host : script_.hello_host;
  hello.heartbeat_seconds = 1;
  hello.server_version = "fake";
  stream->SendEvent("hello", EncodeHello(hello));
  if (script_.end_streams_after_hello) {
    stream->Close();
  }
  // A newer stream for the host replaces the older one, as the real server does.
  if (stream_ != nullptr) {
    stream_->Close();
  }
  stream_ = stream;
  stream_times_.push_back(absl::Now());
  return http::HttpReply::EventStream(stream);
}

bool FakeAgentServer::Push(std::string_view event, std::string_view data) {
  absl::MutexLock lock(&mu_);
  return stream_ != nullptr && stream_->SendEvent(event, data);
}

bool FakeAgentServer::WaitFor(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time until = absl::Now() + timeout;
  while (absl::Now() < until) {
    if (done()) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return done();
}

bool FakeAgentServer::WaitForStreams(std::size_t count, absl::Duration timeout) {
  return WaitFor([&] { return stream_times().size() >= count; }, timeout);
}

bool FakeAgentServer::WaitForReports(std::size_t count, absl::Duration timeout) {
  return WaitFor([&] { return reports().size() >= count; }, timeout);
}

bool FakeAgentServer::WaitForResults(std::size_t count, absl::Duration timeout) {
  return WaitFor([&] { return results().size() >= count; }, timeout);
}

std::vector<Report> FakeAgentServer::reports() {
  absl::MutexLock lock(&mu_);
  return reports_;
}

std::vector<Result> FakeAgentServer::results() {
  absl::MutexLock lock(&mu_);
  return results_;
}

std::vector<absl::Time> FakeAgentServer::stream_times() {
  absl::MutexLock lock(&mu_);
  return stream_times_;
}

std::size_t FakeAgentServer::requests() {
  absl::MutexLock lock(&mu_);
  return requests_;
}

std::size_t FakeAgentServer::malformed() {
  absl::MutexLock lock(&mu_);
  return malformed_;
}

}  // namespace pulse::adapters::hostagent::testing
