// The surface table (surface.h): every route of pulse-server, the manifest capabilities' first
// (in manifest order), then the server's own routes (in documentation order).
#include "pulse/core/manifest/surface.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

constexpr bool kStreams = true;

constexpr std::string_view kChatBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "message": {"type": "string", "minLength": 1},
    "session_id": {"type": "string", "minLength": 1, "maxLength": 128},
    "control_level": {"type": "string", "enum": ["read_only", "controlled", "autonomous"]}
  },
  "required": ["message"]
})json";

constexpr std::string_view kEmptyBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {}
})json";

constexpr std::string_view kResumeBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "control_level": {"type": "string", "enum": ["read_only", "controlled", "autonomous"]}
  }
})json";

constexpr std::string_view kAnswerBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "control_level": {"type": "string", "enum": ["read_only", "controlled", "autonomous"]},
    "answers": {"type": "array", "minItems": 1, "maxItems": 16,
      "items": {"type": "object", "additionalProperties": false,
        "properties": {
          "id": {"type": "string", "minLength": 1, "maxLength": 128},
          "value": {"type": "string", "maxLength": 4096}
        },
        "required": ["id", "value"]}}
  },
  "required": ["answers"]
})json";

constexpr std::string_view kConsoleSignInBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "token": {"type": "string", "minLength": 1, "maxLength": 512}
  },
  "required": ["token"]
})json";

// PUT /api/settings/notifications: the whole channel list (docs/notifications.md). url and
// secret are write-only for the kinds whose URL is a credential (slack, discord) and for every
// secret: absent keeps the stored one, null removes a secret. An email channel's url is
// smtp[s]://host[:port], its secret the SMTP password, and its email member the addressing.
constexpr std::string_view kNotificationSettingsBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "channels": {"type": "array", "maxItems": 32, "items": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 48},
        "kind": {"type": "string", "enum": ["webhook", "slack", "discord", "ntfy", "gotify",
          "email"]},
        "url": {"type": "string", "minLength": 1, "maxLength": 2048},
        "secret": {"type": ["string", "null"], "minLength": 1, "maxLength": 4096},
        "enabled": {"type": "boolean"},
        "min_severity": {"type": "string", "enum": ["info", "watch", "warning", "critical"]},
        "events": {"type": "array", "maxItems": 16, "items": {"type": "string", "enum": [
          "finding.created", "finding.regressed", "finding.escalated", "approval.pending",
          "action.completed", "action.failed", "action.inconclusive", "patrol.run_error",
          "provider.unusable"]}},
        "quiet_hours": {"type": ["object", "null"], "additionalProperties": false,
          "properties": {
            "start": {"type": "string", "minLength": 5, "maxLength": 5},
            "end": {"type": "string", "minLength": 5, "maxLength": 5},
            "time_zone": {"type": "string", "minLength": 1, "maxLength": 64}
          },
          "required": ["start", "end"]},
        "rate_per_minute": {"type": "integer", "minimum": 1, "maximum": 600},
        "email": {"type": "object", "additionalProperties": false,
          "properties": {
            "from": {"type": "string", "minLength": 3, "maxLength": 254},
            "to": {"type": "array", "minItems": 1, "maxItems": 10,
              "items": {"type": "string", "minLength": 3, "maxLength": 254}},
            "username": {"type": "string", "maxLength": 256}
          },
          "required": ["from", "to"]}
      },
      "required": ["name", "kind"]}}
  },
  "required": ["channels"]
})json";

// PUT /api/settings/ai: every member optional (absent: unchanged). api_key is write-only: a
// string sets it, null removes it; it is never read back.
constexpr std::string_view kAiSettingsBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "provider": {"type": "string", "minLength": 1, "maxLength": 64},
    "base_url": {"type": "string", "maxLength": 2048},
    "model": {"type": "string", "maxLength": 256},
    "patrol_model": {"type": "string", "maxLength": 256},
    "api_key": {"type": ["string", "null"], "maxLength": 4096},
    "monthly_budget_usd": {"type": "number", "minimum": 0, "maximum": 1000000},
    "session_budget_usd": {"type": "number", "minimum": 0, "maximum": 1000000}
  }
})json";

// PUT /api/settings/patrol: the whole threshold table (absent sections: none; absent default
// metrics: the built-in levels). warning < critical, canonical resource ids and the type
// grammar are checked by the core's parser (model/patrol_thresholds.h).
constexpr std::string_view kPatrolSettingsBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "required": ["thresholds"],
  "properties": {
    "thresholds": {"type": "object", "additionalProperties": false, "properties": {
      "defaults": {"type": "object", "additionalProperties": false, "properties": {
        "cpu": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}},
        "memory": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}},
        "disk": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}},
        "storage": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}}}},
      "resource_types": {"type": "object", "maxProperties": 64, "additionalProperties": {"type": "object", "additionalProperties": false, "properties": {
        "cpu": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}},
        "memory": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}},
        "disk": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}},
        "storage": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}}}}},
      "resources": {"type": "object", "maxProperties": 1024, "additionalProperties": {"type": "object", "additionalProperties": false, "properties": {
        "cpu": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}},
        "memory": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}},
        "disk": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}},
        "storage": {"type": "object", "additionalProperties": false, "required": ["warning", "critical"], "properties": {"warning": {"type": "number", "minimum": 0, "maximum": 100}, "critical": {"type": "number", "minimum": 0, "maximum": 100}}}}}}}}
  }
})json";

// PUT /api/ai/notes/resources/{resourceId}: the note (OperatorState::note's limit).
constexpr std::string_view kResourceNoteBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "required": ["note"],
  "properties": {
    "note": {"type": "string", "minLength": 1, "maxLength": 2048}
  }
})json";

// GET /api/resources/{resourceId}/metrics: which series and how far back.
constexpr std::string_view kResourceMetricsQuerySchema = R"json({
  "type": "object",
  "properties": {
    "metric": {"type": "string", "pattern": "^[a-z][a-z0-9_.-]{0,63}$", "examples": ["usage"]},
    "hours": {"type": "integer", "minimum": 1, "maximum": 2160}
  }
})json";

constexpr std::string_view kFindingIdBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "finding_id": {"type": "string", "minLength": 1}
  },
  "required": ["finding_id"]
})json";

constexpr std::string_view kRenderPromptBodySchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 128},
    "arguments": {"type": "object", "maxProperties": 16,
      "additionalProperties": {"type": "string", "maxLength": 1024}}
  },
  "required": ["name"]
})json";

constexpr std::string_view kSessionListQuerySchema = R"json({
  "type": "object",
  "properties": {
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
    "kind": {"type": "string", "enum": ["chat", "patrol"]},
    "cursor": {"type": "string", "minLength": 1, "maxLength": 1024, "examples": ["s1.MAp4"],
      "description": "Continue after the previous page: the opaque X-Next-Cursor header value of its response."}
  }
})json";

constexpr std::string_view kHostAgentCommandsQuerySchema = R"json({
  "type": "object",
  "properties": {
    "host": {"type": "string", "minLength": 1, "maxLength": 64},
    "agent_version": {"type": "string", "maxLength": 64}
  },
  "required": ["host"]
})json";

constexpr std::string_view kActionListQuerySchema = R"json({
  "type": "object",
  "properties": {
    "view": {"type": "string", "enum": ["pending", "settled"]},
    "limit": {"type": "integer", "minimum": 1, "maximum": 500},
    "cursor": {"type": "string", "minLength": 1, "maxLength": 1024,
      "examples": ["a1.cGVuZGluZwowCng"],
      "description": "Continue after the previous page of the same view: the opaque X-Next-Cursor header value of its response."}
  }
})json";

// A manifest capability's route; the rest of the capability is its row in
// capability_catalogue.cc, under the same name.
SurfaceRoute Cap(std::string name, std::string method, std::string path, Scope scope,
                 bool streaming = false) {
  SurfaceRoute route;
  route.name = std::move(name);
  route.method = std::move(method);
  route.path = std::move(path);
  route.scope = scope;
  route.streaming = streaming;
  route.kind = SurfaceRouteKind::kCapability;
  return route;
}

// A route outside the manifest, with what docs/api.md says about it and its body checks.
SurfaceRoute Route(std::string name, std::string method, std::string path,
                   std::optional<Scope> scope, std::string description, std::string response,
                   std::string_view body_schema = {}, bool streaming = false) {
  SurfaceRoute route;
  route.name = std::move(name);
  route.method = std::move(method);
  route.path = std::move(path);
  route.scope = scope;
  route.streaming = streaming;
  route.kind = SurfaceRouteKind::kServer;
  route.description = std::move(description);
  route.response = std::move(response);
  route.body_schema = std::string(body_schema);
  return route;
}

// `route` taking the query parameters `schema` declares.
SurfaceRoute WithQuery(SurfaceRoute route, std::string_view schema,
                       std::map<std::string, AgentErrorCode> param_codes = {}) {
  route.query_schema = std::string(schema);
  route.query_param_codes = std::move(param_codes);
  return route;
}

std::vector<SurfaceRoute> BuildSurface() {
  return {
      // ---- manifest capabilities (capability_catalogue.cc) ----
      Cap("get_resource_context", "GET", "/api/agent/resource-context/{resourceId}",
          Scope::kMonitoringRead),
      Cap("list_resource_capabilities", "GET", "/api/agent/resource-capabilities/{resourceId}",
          Scope::kMonitoringRead),
      Cap("get_fleet_context", "GET", "/api/agent/fleet-context", Scope::kMonitoringRead),
      Cap("list_agents", "GET", "/api/agents", Scope::kMonitoringRead),
      Cap("get_patrol_control_status", "GET", "/api/agent/patrol-control/status",
          Scope::kMonitoringRead),
      Cap("get_operator_state", "GET", "/api/resources/{resourceId}/operator-state",
          Scope::kMonitoringRead),
      Cap("set_operator_state", "PUT", "/api/resources/{resourceId}/operator-state",
          Scope::kMonitoringWrite),
      Cap("clear_operator_state", "DELETE", "/api/resources/{resourceId}/operator-state",
          Scope::kMonitoringWrite),
      Cap("subscribe_events", "GET", "/api/agent/events", Scope::kMonitoringRead, kStreams),
      Cap("list_findings", "GET", "/api/ai/patrol/findings", Scope::kAiExecute),
      Cap("acknowledge_finding", "POST", "/api/ai/patrol/acknowledge", Scope::kAiExecute),
      Cap("snooze_finding", "POST", "/api/ai/patrol/snooze", Scope::kAiExecute),
      Cap("dismiss_finding", "POST", "/api/ai/patrol/dismiss", Scope::kAiExecute),
      Cap("resolve_finding", "POST", "/api/ai/patrol/resolve", Scope::kAiExecute),
      Cap("run_patrol", "POST", "/api/ai/patrol/run", Scope::kAiExecute),
      Cap("list_patrol_runs", "GET", "/api/ai/patrol/runs", Scope::kAiExecute),
      Cap("get_patrol_run", "GET", "/api/ai/patrol/runs/{runId}", Scope::kAiExecute),
      Cap("get_patrol_status", "GET", "/api/ai/patrol/status", Scope::kAiExecute),
      Cap("get_patrol_autonomy", "GET", "/api/ai/patrol/autonomy", Scope::kSettingsWrite),
      Cap("set_patrol_autonomy", "PUT", "/api/ai/patrol/autonomy", Scope::kSettingsWrite),
      Cap("acknowledge_patrol_autopilot", "POST", "/api/ai/patrol/autonomy/acknowledgements",
          Scope::kSettingsWrite),
      Cap("revoke_patrol_autopilot", "DELETE",
          "/api/ai/patrol/autonomy/acknowledgements/{acknowledgementId}", Scope::kSettingsWrite),
      Cap("plan_action", "POST", "/api/actions/plan", Scope::kActionsPlan),
      Cap("decide_action", "POST", "/api/actions/{actionId}/decision", Scope::kActionsApprove),
      Cap("execute_action", "POST", "/api/actions/{actionId}/execute", Scope::kActionsExecute),
      Cap("list_api_tokens", "GET", "/api/security/tokens", Scope::kSettingsWrite),
      Cap("create_api_token", "POST", "/api/security/tokens", Scope::kSettingsWrite),
      Cap("revoke_api_token", "DELETE", "/api/security/tokens/{tokenId}", Scope::kSettingsWrite),
      // ---- the server's own routes ----
      Route("get_capabilities", "GET", "/api/agent/capabilities", std::nullopt,
            "The capability manifest: every capability with its route, scope, governance, "
            "schemas and error codes, plus workflow prompts and the MCP contract.",
            "CapabilityManifest"),
      Route("healthz", "GET", "/healthz", std::nullopt,
            "Liveness: answers while the server accepts requests.", "{ status: \"ok\" }"),
      Route("metrics", "GET", "/metrics", Scope::kMonitoringRead,
            "Prometheus text: requests and latencies by route, tool calls by kind and "
            "outcome, safety-gate blocks, provider tokens, actions by state.",
            "text/plain; version=0.0.4"),
      Route("chat", "POST", "/api/ai/chat", Scope::kAiChat,
            "Talks to the Assistant. Streams data: {\"type\":...,\"data\":...} events, "
            "session first and done last, with a heartbeat comment every 5 seconds. "
            "control_level may only lower the server's configured level. A new session belongs "
            "to the calling token; session_id continues only one of the caller's own sessions.",
            "text/event-stream of ChatEvent", kChatBodySchema, true),
      WithQuery(Route("list_sessions", "GET", "/api/ai/sessions", Scope::kAiChat,
                      "Lists Assistant sessions, most recently updated first, ties by id "
                      "(limit 1..1000, default 100): the caller's own chat sessions, or with "
                      "kind=patrol the Patrol runs' system sessions (the newest 50 are kept). "
                      "Keyset pages: when more sessions follow, the X-Next-Cursor header holds "
                      "the cursor of the next page (pass it as cursor with the same kind). A "
                      "session updated while a client pages moves to the front, so it may be "
                      "missed by that walk; every other session is listed once.",
                      "Session[]"),
                kSessionListQuerySchema),
      Route("get_session", "GET", "/api/ai/sessions/{sessionId}", Scope::kAiChat,
            "One session: its status, kind, owner, usage and client-safe transcript. A chat "
            "session is visible to the token that created it and to an admin (`*`) only; to "
            "others it is session_not_found.",
            "{ id, status, created_at, updated_at, message_count, usage, messages }"),
      Route("get_session_messages", "GET", "/api/ai/sessions/{sessionId}/messages", Scope::kAiChat,
            "The client-safe transcript of one session (visible as get_session).", "Message[]"),
      Route("delete_session", "DELETE", "/api/ai/sessions/{sessionId}", Scope::kAiChat,
            "Deletes one session and its transcript: the owner's chat session, or any session "
            "for an admin (`*`).",
            "{ success: true }"),
      Route("resume_session", "POST", "/api/ai/sessions/{sessionId}/resume", Scope::kAiExecute,
            "Continues the caller's own session suspended on an approval once the action is "
            "decided: an action with a recorded approval runs through the lifecycle, bound to "
            "its plan hash (resuming is never itself an approval). The run keeps the control "
            "level the session's chat asked for; control_level may lower it. A Patrol session "
            "is never resumed (session_not_resumable).",
            "text/event-stream of ChatEvent", kResumeBodySchema, true),
      Route("abort_session", "POST", "/api/ai/sessions/{sessionId}/abort", Scope::kAiChat,
            "Stops the session's run in progress, if any (the owner's session, or any for an "
            "admin): it ends with an error event and done. A session with no run in progress "
            "is left as it is.",
            "{ session_id, aborted }", kEmptyBodySchema),
      Route("answer_question", "POST", "/api/ai/question/{questionId}/answer", Scope::kAiChat,
            "Answers the question one of the caller's own sessions is waiting on and continues "
            "that session: the answers become the user's next message and the run streams like a "
            "chat, at the control level the session's chat asked for (control_level may lower "
            "it).",
            "text/event-stream of ChatEvent", kAnswerBodySchema, true),
      Route("list_models", "GET", "/api/ai/models", Scope::kAiChat,
            "The models the configured provider offers, and where its requests go: "
            "destination local (it sees unredacted context) or remote (secrets and localOnly "
            "resources are redacted), with destination_reason.",
            "{ provider, model, destination, destination_reason, models: Model[] }"),
      Route("get_operations_loop_status", "GET", "/api/agent/operations-loop/status",
            Scope::kMonitoringRead,
            "Legacy alias of get_patrol_control_status: the same body at the route older "
            "clients call.",
            "AgentOperationsLoopStatus"),
      WithQuery(Route("list_actions", "GET", "/api/actions", Scope::kActionsApprove,
                      "The governed action queue: view=pending (default: planned, "
                      "pending_approval, approved and executing, oldest created first) or "
                      "settled (rejected, expired, completed and failed, most recently updated "
                      "first), ties by id; limit 1..500 (default 100); count is the page's. "
                      "Keyset pages: when more actions follow, the X-Next-Cursor header holds "
                      "the cursor of the next page (pass it as cursor with the same view). An "
                      "action's place never changes while it stays in its view, so a walk "
                      "lists each action that stays there exactly once.",
                      "{ view, actions, count, readOnly }"),
                kActionListQuerySchema,
                {{"view", AgentErrorCode::kInvalidActionListView},
                 {"limit", AgentErrorCode::kInvalidActionListLimit},
                 {"cursor", AgentErrorCode::kInvalidActionListCursor}}),
      Route("get_action", "GET", "/api/actions/{actionId}", Scope::kActionsApprove,
            "One governed action: its audit record, lifecycle events and readiness.",
            "{ audit, events, readiness, readOnly }"),
      Route("render_workflow_prompt", "POST", "/api/ai/workflow-prompts/render", Scope::kAiChat,
            "Renders a workflow prompt of the manifest with its arguments.",
            "{ description, text }", kRenderPromptBodySchema),
      Route("patrol_stream", "GET", "/api/ai/patrol/stream", Scope::kAiExecute,
            "Patrol as it happens: comment `: connected` first, then `id: <seq>` + data events "
            "(run start, phase, content, tool_start, tool_end, error, complete, finding changes) "
            "and `: ping <unix>` after 15 seconds of silence. Last-Event-ID resumes after that "
            "event from a bounded replay buffer; a fresh client, or one whose id fell out of "
            "the buffer, gets a snapshot event (runs in progress, buffer bounds) with "
            "resync_reason late_joiner or stale_last_event_id. A malformed Last-Event-ID is "
            "invalid_request. docs/patrol.md has the event shapes.",
            "text/event-stream of PatrolStreamEvent", "", true),
      Route("unsnooze_finding", "POST", "/api/ai/patrol/unsnooze", Scope::kAiExecute,
            "Ends a finding's snooze now: it is active again. An operator's undo, not offered "
            "to agents. finding_action_not_allowed unless the finding is snoozed.",
            "{ success: true, message: string }", kFindingIdBodySchema),
      Route("reopen_finding", "POST", "/api/ai/patrol/reopen", Scope::kAiExecute,
            "Reopens a dismissed or suppressed finding: clears the dismissal, suppression, "
            "acknowledgement and reminder (suppression rules stay). An operator's undo, not "
            "offered to agents. finding_action_not_allowed unless dismissed or suppressed.",
            "{ success: true, message: string }", kFindingIdBodySchema),
      // ---- host agents (docs/agent.md): tokens of kind agent only, each bound to one host ----
      Route("report_host_agent", "POST", "/api/agents/report", Scope::kAgentReport,
            "A pulse-agent reports its host: resources (only the host's own), relationships, "
            "statuses, metrics and what its allowlist accepts. The first request binds the token "
            "to the host; a token of another host, or a host bound to another live token, is "
            "agent_host_mismatch. The report replaces the host's last one.",
            "{ accepted, host, report_seq, next_report_seconds }"),
      WithQuery(Route("host_agent_commands", "GET", "/api/agents/commands", Scope::kAgentExec,
                      "A pulse-agent's command stream: event hello first, then event command "
                      "frames (dispatch, exec, report), a heartbeat comment every 15 seconds. A "
                      "newer stream of the same host ends the older one. Unanswered commands are "
                      "sent again on every reconnect.",
                      "text/event-stream of hello and command events", "", true),
                kHostAgentCommandsQuerySchema),
      Route("host_agent_result", "POST", "/api/agents/results", Scope::kAgentExec,
            "A pulse-agent answers a command of its own host: accepted is false for an unknown, "
            "finished or another host's command (late answers after a reconnect are normal).",
            "{ accepted }"),
      // ---- metrics history, for charts (the console's capacity chart) ----
      WithQuery(
          Route("get_resource_metrics", "GET", "/api/resources/{resourceId}/metrics",
                Scope::kMonitoringRead,
                "A resource's recorded utilization (percent used) of one metric (default: usage "
                "for a storage, memory for anything else) over the last `hours` (1..2160, default "
                "168): at most 500 points, averaged into equal time "
                "buckets when more were recorded; the capacity forecast of the window (the one "
                "Patrol's findings carry); and the forecast's line from the newest reading to the "
                "day the resource is full, or as far ahead as the window reaches back. "
                "resource_not_found for a resource the fleet does not have.",
                "{ resource_id, metric, start, end, recorded, samples: [{ at, value }], "
                "forecast: { reading, sample_count, current_pct, daily_change, days_to_full }, "
                "line: [{ at, value }] }"),
          kResourceMetricsQuerySchema),
      // ---- the operator console (docs/console.md): public rows; the session cookie is the
      // credential of every other route, checked by the transport (csrf_rejected) ----
      Route("console_page", "GET", "/", std::nullopt,
            "The operator console: one HTML page whose script and styles are compiled into the "
            "server. Without them (a build without Node.js) a page saying the console is not "
            "built, with status 404 (console_not_built).",
            "text/html"),
      Route("console_asset", "GET", "/assets/{asset}", std::nullopt,
            "A script, style sheet or image of the console, by its content-hashed name "
            "(immutable, cached for a year). console_not_built or route_not_found otherwise.",
            "the asset's bytes"),
      Route("sign_in_console", "POST", "/api/console/session", std::nullopt,
            "Signs in to the console with a human API token: answers with an HttpOnly, "
            "SameSite=Strict session cookie bound to the token (a revoked or expired token ends "
            "the session) and the CSRF token every state-changing request of the session must "
            "send as X-CSRF-Token. unauthorized for a token the store does not accept; "
            "human_token_required for an agent or service token.",
            "{ csrf_token, token: { id, name, kind }, scopes, expires_at }",
            kConsoleSignInBodySchema),
      Route("get_console_session", "GET", "/api/console/session", std::nullopt,
            "The console session of the request's cookie, as sign_in_console answers it; "
            "unauthorized without a live one.",
            "{ csrf_token, token: { id, name, kind }, scopes, expires_at }"),
      Route("sign_out_console", "DELETE", "/api/console/session", std::nullopt,
            "Ends the console session of the request's cookie (with its CSRF token) and clears "
            "the cookie. Idempotent.",
            "{ signed_out: true }"),
      // ---- AI settings at runtime (docs/providers.md): human tokens only ----
      Route("get_ai_settings", "GET", "/api/settings/ai", Scope::kSettingsWrite,
            "The AI settings in force: provider, base URL, model, the Patrol model and the one "
            "Patrol uses, whether a key is set (never the key), the spend caps, who changed them "
            "and when, this month's metered spend the monthly cap is checked against, the last "
            "tool-call preflight of each model, and the models the provider lists (asked each "
            "time; models_error when it cannot be read). Human tokens only: "
            "human_token_required.",
            "{ provider, base_url, model, patrol_model, effective_patrol_model, api_key_set, "
            "monthly_budget_usd, session_budget_usd, month_spend: { month, cost_usd, "
            "cap_reached }, updated_at, updated_by, preflight, models, models_error? }"),
      Route("update_ai_settings", "PUT", "/api/settings/ai", Scope::kSettingsWrite,
            "Changes the AI settings; the next run uses them, without a restart (runs in flight "
            "finish on the settings they started with). A provider named without a model gets "
            "the first model the provider lists (provider_unavailable when it cannot be asked). "
            "The key is sealed with the credential store and never answered. Each change is "
            "audited. Human tokens only: human_token_required.",
            "the settings as get_ai_settings answers them", kAiSettingsBodySchema),
      // ---- Patrol thresholds at runtime (docs/patrol.md "Thresholds") ----
      Route("get_patrol_settings", "GET", "/api/settings/patrol", Scope::kMonitoringRead,
            "Patrol's utilization thresholds: a warning and a critical level (percent) for cpu, "
            "memory, disk and storage as defaults, per resource type and per resource (an "
            "override names some metrics; the rest come from the level below), who changed them "
            "and when. Without a change, the built-in levels (cpu and memory 90/98, disk and "
            "storage 85/95).",
            "{ thresholds: { defaults: { cpu: { warning, critical }, memory, disk, storage }, "
            "resource_types: { <type>: { <metric>: { warning, critical } } }, resources: { <id>: "
            "{ ... } }, updated_at?, updated_by? } }"),
      Route("update_patrol_settings", "PUT", "/api/settings/patrol", Scope::kSettingsWrite,
            "Replaces Patrol's thresholds; the next Patrol run (and the next verification of a "
            "finding) uses them, without a restart. Levels are 0..100 with warning below "
            "critical; resource types are [a-z][a-z0-9-]{0,31}, resources canonical ids "
            "(type:local-id); at most 64 type and 1024 resource overrides. invalid_request "
            "(nothing changes) otherwise. Each change is audited. Human tokens only: "
            "human_token_required.",
            "the thresholds as get_patrol_settings answers them", kPatrolSettingsBodySchema),
      // ---- operator notes, Patrol's context (docs/patrol.md "Operator notes") ----
      Route("list_notes", "GET", "/api/ai/notes", Scope::kMonitoringRead,
            "Every operator note: the notes on resources (a resource's operator-state note, "
            "written here or with set_operator_state) and the notes on findings (given with "
            "snooze, dismiss or resolve; a finding woken from dismissal keeps its note). Patrol "
            "gives each pass the notes of the resources it looks at, redacted like all outbound "
            "context. At most 500 of each.",
            "{ resource_notes: [{ resource_id, note, set_at, set_by }], finding_notes: "
            "[{ finding_id, resource_id, title, note }] }"),
      Route("set_resource_note", "PUT", "/api/ai/notes/resources/{resourceId}",
            Scope::kMonitoringWrite,
            "Creates or replaces the note on a resource (1..2048 bytes of clean UTF-8), keeping "
            "the rest of its operator state. resource_not_found for a resource the fleet does "
            "not have; invalid_request (nothing changes) for a bad body.",
            "{ resource_id, note, set_at, set_by }", kResourceNoteBodySchema),
      Route("delete_resource_note", "DELETE", "/api/ai/notes/resources/{resourceId}",
            Scope::kMonitoringWrite,
            "Removes the note on a resource, keeping the rest of its operator state. "
            "Idempotent: deleted is false when there was none.",
            "{ deleted }"),
      // ---- alert intake (docs/alerts.md) ----
      Route("investigate_alert", "POST", "/api/ai/investigate-alert", Scope::kAiExecute,
            "Takes alerts from another monitoring system: Prometheus Alertmanager's webhook "
            "payload (version 4; point a webhook_configs url here with http_config.authorization "
            "carrying a token) or the native shape {alerts: [{name, status?, resource_id?, "
            "severity?, summary?, description?, labels?}]}. Each alert maps to one resource by "
            "the documented label rules (pulse_resource, container, vmid, instance, host, node) "
            "or to none, never a guess; a mapped firing alert reports a finding (key "
            "alert:<alertname>) with the alert as evidence, a resolved one asks the finding's "
            "verifier to confirm (it never resolves the finding on its own). One scoped Patrol "
            "run (trigger alert) starts over the mapped resources out of their 10-minute "
            "cooldown. invalid_request for a malformed body or more than 500 alerts.",
            "{ shape, received, alerts: [{ name, fingerprint, status, mapping, resource_id?, "
            "rule?, reason?, finding_id?, finding_outcome, detail?, investigation }], mapped, "
            "unmapped, ambiguous, run_id? }"),
      Route("list_patrol_triggers", "GET", "/api/ai/patrol/triggers", Scope::kAiExecute,
            "Event-triggered Patrol (docs/patrol.md \"Runs the fleet starts\"): its settings, the "
            "runs it started in the last hour, and the ledger of the fleet changes offered to "
            "it, newest first (at most 200): each with its decision, ignored (not a change that "
            "starts an investigation), started (with the run), cooldown, rate_limited, "
            "already_running or failed, and the reason.",
            "{ enabled, window_seconds, cooldown_seconds, max_runs_per_hour, runs_in_last_hour, "
            "ledger: [{ at, seq, resource_id, change, detail?, decision, reason?, run_id? }] }"),
      // ---- notification channels (docs/notifications.md): human tokens only ----
      Route("get_notification_settings", "GET", "/api/settings/notifications",
            Scope::kSettingsWrite,
            "The notification channels: name, kind, url (never for slack and discord, whose URL "
            "is the credential; url_set instead), whether a secret is set (never the secret), "
            "enabled, severity floor, event kinds, quiet hours, rate per minute, an email "
            "channel's addressing, who changed them and when; and the outbox's pending, "
            "delivered and dead counts with the newest dead rows. Human tokens only: "
            "human_token_required.",
            "{ channels: [{ name, kind, url?, url_set, secret_set, enabled, min_severity, events, "
            "quiet_hours?, rate_per_minute, email?: { from, to, username? }, updated_at, "
            "updated_by }], outbox: { pending, "
            "delivered, dead, dead_letters: [{ channel, event, event_key, attempts, last_error, "
            "idempotency_key }] } }"),
      Route("update_notification_settings", "PUT", "/api/settings/notifications",
            Scope::kSettingsWrite,
            "Replaces the channel list (a channel not named is removed with its secrets). "
            "Secrets and Slack and Discord URLs are sealed with the credential store and never "
            "answered; absent keeps the stored one, a secret null removes it. Events that happen "
            "from then on are queued for the channels that want them. Audited. Human tokens "
            "only: human_token_required; invalid_request for a bad URL, time zone, quiet-hours "
            "time, email address, a missing url or Gotify token, or an email user name without "
            "a password.",
            "the settings as get_notification_settings answers them",
            kNotificationSettingsBodySchema),
      Route("test_notification_channel", "POST", "/api/settings/notifications/{channel}/test",
            Scope::kSettingsWrite,
            "Sends one test notification to the channel now (not through the outbox; quiet hours "
            "and the rate limit do not apply) and answers how the receiver took it (for email, "
            "http_status is the SMTP server's last reply code). "
            "invalid_request for a channel that is not configured. Human tokens only: "
            "human_token_required.",
            "{ channel, kind, delivered, http_status, error?, idempotency_key }", kEmptyBodySchema),
  };
}

}  // namespace

const std::vector<SurfaceRoute>& SurfaceRoutes() {
  static const std::vector<SurfaceRoute> routes = BuildSurface();
  return routes;
}

std::vector<const SurfaceRoute*> ServerSurfaceRoutes() {
  std::vector<const SurfaceRoute*> out;
  for (const SurfaceRoute& route : SurfaceRoutes()) {
    if (route.kind == SurfaceRouteKind::kServer) {
      out.push_back(&route);
    }
  }
  return out;
}

const SurfaceRoute* FindSurfaceRoute(std::string_view name) {
  for (const SurfaceRoute& route : SurfaceRoutes()) {
    if (route.name == name) {
      return &route;
    }
  }
  return nullptr;
}

const SurfaceRoute* FindSurfaceRoute(std::string_view method, std::string_view path_template) {
  for (const SurfaceRoute& route : SurfaceRoutes()) {
    if (route.method == method && route.path == path_template) {
      return &route;
    }
  }
  return nullptr;
}

absl::Status ValidateSurface() {
  static constexpr std::string_view kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  std::set<std::string> names;
  // (method, shape): the template with every placeholder written as "{}".
  std::set<std::pair<std::string, std::string>> shapes;
  for (const SurfaceRoute& route : SurfaceRoutes()) {
    const auto bad = [&](std::string_view problem) {
      return absl::InvalidArgumentError(
          absl::StrCat("route \"", route.name, "\": ", ToAbsl(problem)));
    };
    if (route.name.empty() || !names.insert(route.name).second) {
      return bad("the name is blank or used twice");
    }
    if (std::find(std::begin(kMethods), std::end(kMethods), route.method) == std::end(kMethods)) {
      return bad("has an unsupported method");
    }
    absl::StatusOr<std::vector<PathSegment>> segments = ParsePathTemplate(route.path);
    if (!segments.ok()) {
      return bad(std::string(segments.status().message()));
    }
    std::string shape;
    for (const PathSegment& segment : *segments) {
      absl::StrAppend(&shape, "/", segment.placeholder ? "{}" : segment.text);
    }
    if (!shapes.emplace(route.method, shape).second) {
      return bad("another route has the same method and path");
    }
    for (const std::string* schema : {&route.body_schema, &route.query_schema}) {
      if (schema->empty()) {
        continue;
      }
      absl::StatusOr<rapidjson::Document> doc = ParseJson(*schema);
      if (!doc.ok() || !doc->IsObject()) {
        return bad("has a schema that is not a JSON object");
      }
    }
    if (route.kind == SurfaceRouteKind::kCapability &&
        (!route.description.empty() || !route.body_schema.empty() || !route.query_schema.empty())) {
      return bad("a capability's route describes itself in the manifest, not here");
    }
  }
  return absl::OkStatus();
}

}  // namespace pulse::core
