// The host agents' routes (docs/agent.md): reports, the command stream and results from
// pulse-agent processes. Only tokens of kind agent may use them, and each token only for the one
// host it is bound to (the hub binds it on first use): whatever a request's body or query names,
// a token never reports for, receives the commands of, or answers for another host. Bodies are
// decoded strictly by the protocol's codec (hostagent/wire.h) before anything is stored.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "pulse/adapters/hostagent/agent_hub.h"
#include "pulse/adapters/hostagent/wire.h"
#include "pulse/adapters/http/sse_stream.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "server_context.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;
namespace ha = adapters::hostagent;
using core::AgentErrorCode;
using http::HttpReply;
using http::HttpRequest;

std::optional<HttpReply> RefuseNonAgent(const HttpRequest& request) {
  if (request.principal.authenticated && request.principal.kind == core::ApiTokenKind::kAgent) {
    return std::nullopt;
  }
  return HttpReply::Error(AgentErrorCode::kAgentTokenRequired,
                          "this route is for pulse-agent: use a token created with --kind agent "
                          "(docs/agent.md)");
}

// A token is live while the store lists it (not revoked) and it has not expired.
ha::TokenLiveness LivenessOf(ServerContext& ctx) {
  return [&ctx](std::string_view token_id) {
    absl::StatusOr<std::vector<core::ApiTokenInfo>> tokens = ctx.tokens.List();
    if (!tokens.ok()) {
      return true;  // unknown: keep the binding (fail closed)
    }
    const absl::Time now = ctx.clock.Now();
    for (const core::ApiTokenInfo& t : *tokens) {
      if (t.id == token_id) {
        return !t.expires_at.has_value() || now < *t.expires_at;
      }
    }
    return false;
  };
}

// The hub's refusal as the agent envelope.
HttpReply Refusal(const absl::Status& status, std::string_view what) {
  const std::string_view message = core::ToStd(status.message());
  if (absl::IsPermissionDenied(status)) {
    constexpr std::string_view kPrefix = "agent_host_mismatch: ";
    return HttpReply::Error(
        AgentErrorCode::kAgentHostMismatch,
        std::string(absl::StartsWith(core::ToAbsl(message), core::ToAbsl(kPrefix))
                        ? message.substr(kPrefix.size())
                        : message));
  }
  if (absl::IsInvalidArgument(status)) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest, std::string(message));
  }
  if (absl::IsResourceExhausted(status)) {
    return HttpReply::Error(AgentErrorCode::kServiceUnavailable, std::string(message));
  }
  return Unavailable(what, status);
}

// The host's command stream as the hub's sink.
class StreamSink final : public ha::CommandSink {
 public:
  explicit StreamSink(std::shared_ptr<http::SseStream> stream) : stream_(std::move(stream)) {}
  bool Send(std::string_view event, std::string_view data) override {
    return stream_->SendEvent(event, data);
  }
  bool open() const override { return !stream_->cancelled() && !stream_->finished(); }
  void End() override { stream_->Close(); }

 private:
  std::shared_ptr<http::SseStream> stream_;
};

HttpReply Report(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonAgent(request)) {
    return *refused;
  }
  absl::StatusOr<ha::Report> report = ha::DecodeReport(request.body);
  if (!report.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            std::string(report.status().message()));
  }
  const std::string host = report->host;
  if (absl::Status s = ctx.agents->Authorize(request.principal.token_id, host, LivenessOf(ctx));
      !s.ok()) {
    return Refusal(s, "the host agent registry");
  }
  absl::StatusOr<ha::ReportAck> ack =
      ctx.agents->AcceptReport(request.principal.token_id, *std::move(report), request.body);
  if (!ack.ok()) {
    return Refusal(ack.status(), "the host agent registry");
  }
  core::JsonWriter out;
  out.StartObject();
  out.Member("accepted", true);
  out.Member("host", host);
  out.Member("report_seq", ack->report_seq);
  out.Member("next_report_seconds", ack->next_report_seconds);
  out.EndObject();
  return HttpReply::Json(out.Take());
}

HttpReply Commands(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonAgent(request)) {
    return *refused;
  }
  const std::string host(request.Query("host").value_or(""));
  if (!ha::IsAgentHostName(host)) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            "host must be 1..64 bytes of [A-Za-z0-9._-]");
  }
  if (absl::Status s = ctx.agents->Authorize(request.principal.token_id, host, LivenessOf(ctx));
      !s.ok()) {
    return Refusal(s, "the host agent registry");
  }
  http::SseOptions options;
  options.heartbeat = absl::Seconds(ctx.agents->options().heartbeat_seconds);
  // A command stream that falls this far behind is cut: the agent reconnects and every
  // unanswered command is sent again, so nothing is lost by cancelling.
  options.max_queued_frames = 64;
  options.overflow = http::SseOverflow::kCancel;
  std::shared_ptr<http::SseStream> stream = http::SseStream::Create(options);
  ctx.agents->Attach(host, std::make_shared<StreamSink>(stream));
  return HttpReply::EventStream(std::move(stream));
}

HttpReply Results(ServerContext& ctx, const HttpRequest& request) {
  if (std::optional<HttpReply> refused = RefuseNonAgent(request)) {
    return *refused;
  }
  absl::StatusOr<ha::Result> result = ha::DecodeResult(request.body);
  if (!result.ok()) {
    return HttpReply::Error(AgentErrorCode::kInvalidRequest,
                            std::string(result.status().message()));
  }
  if (absl::Status s =
          ctx.agents->Authorize(request.principal.token_id, result->host, LivenessOf(ctx));
      !s.ok()) {
    return Refusal(s, "the host agent registry");
  }
  const bool accepted = ctx.agents->AcceptResult(result->host, *result);
  core::JsonWriter out;
  out.StartObject();
  out.Member("accepted", accepted);
  out.EndObject();
  return HttpReply::Json(out.Take());
}

void OptionalTime(core::JsonWriter& out, std::string_view key,
                  const std::optional<absl::Time>& at) {
  out.Key(key);
  if (at.has_value()) {
    out.Time(*at);
  } else {
    out.Null();
  }
}

// list_agents: the registry as the hub sees it now.
HttpReply ListAgents(ServerContext& ctx) {
  const std::vector<ha::HostView> hosts = ctx.agents->Hosts();
  core::JsonWriter out;
  out.StartObject();
  out.Key("agents");
  out.StartArray();
  for (const ha::HostView& h : hosts) {
    out.StartObject();
    out.Member("host", h.host);
    out.Member("token_id", h.token_id);
    out.Member("agent_version", h.agent_version);
    out.Member("state", ha::ToString(h.state));
    out.Member("connected", h.connected);
    OptionalTime(out, "last_seen", h.last_seen);
    OptionalTime(out, "last_report", h.last_report_at);
    out.Member("report_seq", h.report_seq);
    out.Member("resources",
               static_cast<std::uint64_t>(h.report == nullptr ? 0 : h.report->resources.size()));
    out.EndObject();
  }
  out.EndArray();
  out.Member("stale_after_seconds",
             static_cast<std::int64_t>(absl::ToInt64Seconds(ctx.agents->StaleWindowFor())));
  out.EndObject();
  return HttpReply::Json(out.Take());
}

}  // namespace

absl::Status BindHostAgentRoutes(http::Router& router, ServerContext& ctx) {
  PULSE_RETURN_IF_ERROR(
      router.Handle("list_agents", [&ctx](const HttpRequest&) { return ListAgents(ctx); }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "report_host_agent", [&ctx](const HttpRequest& request) { return Report(ctx, request); }));
  PULSE_RETURN_IF_ERROR(router.Handle("host_agent_commands", [&ctx](const HttpRequest& request) {
    return Commands(ctx, request);
  }));
  PULSE_RETURN_IF_ERROR(router.Handle(
      "host_agent_result", [&ctx](const HttpRequest& request) { return Results(ctx, request); }));
  return absl::OkStatus();
}

}  // namespace pulse::server
