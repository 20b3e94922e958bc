// What the route handlers of pulse-server work with: the borrowed services, stores and
// server-side machinery, assembled by ServerApp (server_app.h) and living as long as it. The
// Bind* functions bind every manifest capability and server route (router.h) to its handler;
// each handler only decodes, authorizes (the HTTP layer has checked the scope), calls the
// core and serializes, and answers every refusal with the agent error envelope.
// Handlers run concurrently on HTTP handler threads; everything here is thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "notification_sender.h"
#include "patrol_scheduler.h"
#include "pulse/adapters/hostagent/agent_hub.h"
#include "pulse/adapters/http/console_sessions.h"
#include "pulse/adapters/http/http_types.h"
#include "pulse/adapters/http/metrics_registry.h"
#include "pulse/adapters/http/router.h"
#include "pulse/adapters/providers/provider_factory.h"
#include "pulse/adapters/server/agent_event_bus.h"
#include "pulse/adapters/server/ai_runtime.h"
#include "pulse/adapters/server/chat_runs.h"
#include "pulse/adapters/server/patrol_stream.h"
#include "pulse/adapters/server/server_config.h"
#include "pulse/adapters/server/server_metrics.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_notification_channels.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/alerts/alert_intake.h"
#include "pulse/core/alerts/event_trigger.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/loop/agentic_loop.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/patrol/patrol_service.h"
#include "pulse/core/ports/audit_log.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/metrics_history.h"
#include "pulse/core/ports/notification_outbox.h"
#include "pulse/core/ports/operator_state_store.h"
#include "pulse/core/ports/patrol_run_store.h"
#include "pulse/core/ports/session_store.h"
#include "pulse/core/ports/token_store.h"
#include "session_levels.h"

namespace pulse::server {

struct ServerContext {
  const ServerConfig& config;
  const core::Clock& clock;
  core::Fleet& fleet;
  core::ActionStore& actions;  // the observed store (events, metrics)
  core::OperatorStateStore& operator_state;
  core::SessionStore& sessions;
  core::TokenStore& tokens;
  core::ActionService& action_service;
  core::FindingsService& findings;
  core::AgentViews& views;
  AiRuntime& ai;  // the AI settings and their engine (the chat loop, the provider)
  ChatRuns& runs;
  SessionLevels& levels;
  AgentEventBus& bus;
  ServerMetrics& metrics;
  const adapters::http::MetricsRegistry& registry;
  core::PatrolService& patrol;
  core::PatrolRunStore& patrol_runs;
  PatrolScheduler& scheduler;
  const adapters::storage::SqliteDatabase& database;  // for its read-pool statistics
  adapters::hostagent::AgentHub* agents;              // never null in a running server
  const core::MetricsHistory& history;  // recorded utilization series (charts, forecasts)
  PatrolStreamHub& patrol_stream;       // GET /api/ai/patrol/stream
  core::AuditLog& audit;                // settings changes (the Patrol thresholds)
  // Notifications (docs/notifications.md): the channels, the outbox and its sender.
  adapters::storage::SqliteNotificationChannels& notification_channels;
  core::NotificationOutbox& notifications;
  NotificationSender& notification_sender;
  core::AlertIntake& alerts;           // POST /api/ai/investigate-alert (docs/alerts.md)
  core::PatrolEventTrigger& triggers;  // GET /api/ai/patrol/triggers (its ledger)
};

// The actor a request acts as: the kind the token was minted with (human, agent, service),
// narrowed to agent when a human token sends the agent-surface marker; id the token's public
// id (tok_...), name its name.
core::ActionActor ActorFor(const adapters::http::HttpRequest& request);

// 503 service_unavailable for a store or port that failed; logs what failed (never a
// credential: port messages carry none).
adapters::http::HttpReply Unavailable(std::string_view what, const absl::Status& status);

// The decoded path parameter `name` of the request ("" when the route has none).
const std::string& PathParam(const adapters::http::HttpRequest& request, const std::string& name);

// One line on stderr, prefixed "pulse-server: ".
void LogLine(std::string_view line);

[[nodiscard]] absl::Status BindAlertRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindAgentRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindFindingRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindActionRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindAssistantRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindPatrolRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindTokenRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindHostAgentRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindConsoleRoutes(adapters::http::Router& router, ServerContext& ctx,
                                             adapters::http::ConsoleSessions& sessions);
[[nodiscard]] absl::Status BindMetricsRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindSettingsRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindNoteRoutes(adapters::http::Router& router, ServerContext& ctx);
[[nodiscard]] absl::Status BindNotificationRoutes(adapters::http::Router& router,
                                                  ServerContext& ctx);

}  // namespace pulse::server
