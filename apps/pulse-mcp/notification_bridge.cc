#include "notification_bridge.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/adapters/http_client/http_client.h"
#include "pulse/adapters/http_client/sse_parser.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/surface.h"
#include "pulse/core/string_view.h"

namespace pulse::apps::mcp {
namespace {

// One event of the stream is a few KiB at most (the server cuts long text); more is not it.
constexpr std::size_t kMaxEventBytes = 1 << 20;

void Log(std::string_view line) {
  const std::string text = absl::StrCat("pulse-mcp: ", core::ToAbsl(line), "\n");
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace

std::optional<std::string> NotificationBridge::NotificationLine(std::string_view event_json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(event_json);
  if (!doc.ok() || !doc->IsObject()) {
    return std::nullopt;
  }
  // Re-encoded, so the line is one compact JSON value whatever the server sent.
  return absl::StrCat(R"({"jsonrpc":"2.0","method":")", core::ToAbsl(kPatrolNotificationMethod),
                      R"(","params":)", core::ToJsonString(*doc), "}\n");
}

absl::StatusOr<std::unique_ptr<NotificationBridge>> NotificationBridge::Start(
    std::string_view base_url, std::string token, OutputLines& out,
    NotificationBridgeOptions options) {
  http_client::ClientOptions client_options;
  client_options.timeouts.connect = absl::Seconds(10);
  client_options.timeouts.response_header = absl::Seconds(30);
  client_options.timeouts.idle = options.idle;
  client_options.max_body_bytes = 0;  // a stream has no end to cap
  absl::StatusOr<std::unique_ptr<http_client::HttpClient>> client =
      http_client::HttpClient::Open(base_url, std::move(client_options), "--server");
  if (!client.ok()) {
    return client.status();
  }
  std::unique_ptr<NotificationBridge> bridge(
      new NotificationBridge(*std::move(client), std::move(token), out, options));
  NotificationBridge* self = bridge.get();
  bridge->thread_ = std::thread([self] { self->Loop(); });
  return bridge;
}

NotificationBridge::NotificationBridge(std::unique_ptr<http_client::HttpClient> client,
                                       std::string token, OutputLines& out,
                                       NotificationBridgeOptions options)
    : client_(std::move(client)), token_(std::move(token)), out_(out), options_(options) {}

NotificationBridge::~NotificationBridge() { Stop(); }

void NotificationBridge::Open() {
  absl::MutexLock lock(&mu_);
  open_ = true;
  cv_.SignalAll();
}

void NotificationBridge::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_.store(true);
    cv_.SignalAll();
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

void NotificationBridge::Loop() {
  {
    // Nothing is written before the client initialized the session.
    absl::MutexLock lock(&mu_);
    while (!open_ && !stop_.load()) {
      cv_.Wait(&mu_);
    }
  }
  absl::Duration backoff = options_.first_backoff;
  while (!stop_.load()) {
    bool refused = false;
    const bool delivered = FollowOnce(refused);
    if (refused) {
      Log("the Patrol stream refused the token (it needs ai:execute): no notifications");
      return;
    }
    if (delivered) {
      backoff = options_.first_backoff;
    }
    absl::MutexLock lock(&mu_);
    const absl::Time until = absl::Now() + backoff;
    while (!stop_.load() && absl::Now() < until) {
      cv_.WaitWithDeadline(&mu_, until);
    }
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

bool NotificationBridge::FollowOnce(bool& refused) {
  const core::SurfaceRoute* route = core::FindSurfaceRoute("patrol_stream");
  http_client::Request request;
  request.method = route->method;
  request.target = route->path;
  request.headers = {{std::string(core::kApiTokenHeader), token_},
                     {std::string(core::kAgentSurfaceHeader), std::string(core::kMcpSurfaceId)},
                     {"Accept", "text/event-stream"}};
  if (last_event_id_.has_value()) {
    request.headers.emplace_back("Last-Event-ID", *last_event_id_);
  }
  http_client::SseParser parser(kMaxEventBytes);
  bool ok_status = false;
  bool delivered = false;
  bool writable = true;
  // Every end (clean, refused, dropped, timed out) leads to the same retry; the status adds
  // nothing the flags below do not say.
  client_
      ->Stream(
          request,
          [&](const http_client::ResponseHead& head) {
            refused = head.status == 401 || head.status == 403;
            ok_status = head.status == 200;
            return ok_status;
          },
          [&](std::string_view bytes) {
            const bool parsed = parser.Feed(bytes, [&](const http_client::SseEvent& event) {
              std::optional<std::string> line = NotificationLine(event.data);
              if (!line.has_value() || !writable) {
                return;
              }
              writable = out_.Write(*line);
              delivered = true;
              if (!event.id.empty()) {
                last_event_id_ = event.id;
              }
            });
            return parsed && writable && !stop_.load();
          },
          &stop_)
      .IgnoreError();
  if (!writable) {
    stop_.store(true);  // stdout is gone: the stdio loop ends too
  }
  return delivered;
}

}  // namespace pulse::apps::mcp
