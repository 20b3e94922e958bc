#include "pulse/adapters/http/server_routes.h"

#include <map>
#include <utility>

namespace pulse::adapters::http {
namespace {

using core::Scope;

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
    "kind": {"type": "string", "enum": ["chat", "patrol"]}
  }
})json";

constexpr std::string_view kActionListQuerySchema = R"json({
  "type": "object",
  "properties": {
    "view": {"type": "string", "enum": ["pending", "settled"]},
    "limit": {"type": "integer", "minimum": 1, "maximum": 500}
  }
})json";

// `route` taking the query parameters `schema` declares.
ServerRoute WithQuery(ServerRoute route, std::string_view schema,
                      std::map<std::string, core::AgentErrorCode> param_codes = {}) {
  route.spec.query_schema = std::string(schema);
  route.spec.query_param_codes = std::move(param_codes);
  return route;
}

ServerRoute Route(std::string name, std::string method, std::string path,
                  std::optional<Scope> scope, std::string description, std::string response,
                  std::string_view body_schema = {}, bool streaming = false) {
  ServerRoute route;
  route.spec.name = std::move(name);
  route.spec.method = std::move(method);
  route.spec.path = std::move(path);
  route.spec.scope = scope;
  route.spec.body_schema = std::string(body_schema);
  route.spec.streaming = streaming;
  route.description = std::move(description);
  route.response = std::move(response);
  return route;
}

std::vector<ServerRoute> BuildRoutes() {
  return {
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
                      "Lists Assistant sessions, newest first (limit 1..1000): the caller's own "
                      "chat sessions, or with kind=patrol the Patrol runs' system sessions (the "
                      "newest 50 are kept).",
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
                      "The governed action queue: view=pending (default, oldest first) or "
                      "settled, limit 1..500.",
                      "{ view, actions, count, readOnly }"),
                kActionListQuerySchema,
                {{"view", core::AgentErrorCode::kInvalidActionListView},
                 {"limit", core::AgentErrorCode::kInvalidActionListLimit}}),
      Route("get_action", "GET", "/api/actions/{actionId}", Scope::kActionsApprove,
            "One governed action: its audit record, lifecycle events and readiness.",
            "{ audit, events, readiness, readOnly }"),
      Route("render_workflow_prompt", "POST", "/api/ai/workflow-prompts/render", Scope::kAiChat,
            "Renders a workflow prompt of the manifest with its arguments.",
            "{ description, text }", kRenderPromptBodySchema),
  };
}

}  // namespace

const std::vector<ServerRoute>& ServerRoutes() {
  static const std::vector<ServerRoute> routes = BuildRoutes();
  return routes;
}

const ServerRoute* FindServerRoute(std::string_view name) {
  for (const ServerRoute& route : ServerRoutes()) {
    if (route.spec.name == name) {
      return &route;
    }
  }
  return nullptr;
}

}  // namespace pulse::adapters::http
