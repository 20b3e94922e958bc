// The catalogue itself: the capability rows (context, operator state, the event stream,
// findings, actions), in manifest order (docs/api.md lists them). Provisioning is not served
// by this product. Each row's route (method, path, scope, streaming) is the row of the
// same name in the surface table (surface.cc).
#include <algorithm>
#include <utility>

#include "manifest_internal.h"
#include "manifest_schemas.h"
#include "pulse/core/json/json.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/manifest/surface.h"

namespace pulse::core {
namespace {

namespace mi = manifest_internal;
using C = AgentErrorCode;

constexpr std::string_view kFindingActionResponse = "{ success: true, message: string }";

std::vector<AgentCapability> BuildCatalogue() {
  std::vector<AgentCapability> out;
  // ---- context ----
  out.push_back({
      .name = "get_resource_context",
      .title = "Get resource context",
      .description =
          "Reads everything Pulse knows about one resource: identity and type, the operator "
          "state set on it, active findings, approvals waiting on it, recent governed actions "
          "with their verification, and supporting context sections. Read it before "
          "proposing any change to the resource.",
      .category = std::string(kCategoryContext),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "AgentResourceContext",
      .output_schema = std::string(mi::kResourceContextOutput),
      .error_codes = {C::kResourceNotFound},
  });
  out.push_back({
      .name = "list_resource_capabilities",
      .title = "List resource capabilities",
      .description =
          "Lists the governed capabilities a resource offers in its current state: name, "
          "parameters, approval floor, risk and rollback support. Only a listed capability "
          "can be planned as an action.",
      .category = std::string(kCategoryContext),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "AgentResourceCapabilities",
      .output_schema = std::string(mi::kResourceCapabilitiesOutput),
      .error_codes = {C::kResourceNotFound},
  });
  out.push_back({
      .name = "get_fleet_context",
      .title = "Get fleet context",
      .description =
          "Summarizes every governed resource: type and technology, operator intent "
          "(offline, muted, retired, remediation lock, maintenance window), active finding "
          "counts by severity and pending approvals. Optional filters narrow the list.",
      .category = std::string(kCategoryContext),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "AgentFleetContext",
      .input_schema = std::string(mi::kFleetContextInput),
      .output_schema = std::string(mi::kFleetContextOutput),
  });
  out.push_back({
      .name = "list_agents",
      .title = "List host agents",
      .description =
          "Lists the host agents (pulse-agent) bound to this server, by host: the token bound "
          "to each, its agent version, when it last reported and was last seen, how many "
          "resources its last report described, and its state: connected (command stream "
          "open), disconnected (no stream, reported within the stale window), stale (nothing "
          "within the window; its resources read as unknown) or pending (bound, never "
          "reported).",
      .category = std::string(kCategoryContext),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "{ agents: HostAgent[], stale_after_seconds }",
      .output_schema = std::string(mi::kListAgentsOutput),
  });
  out.push_back({
      .name = "get_patrol_control_status",
      .title = "Get Patrol work status",
      .description = "Reports where the operations loop stands, as counts only: Patrol evidence "
                     "gathered, active findings, approvals waiting, governed actions decided and "
                     "verified, and the suggested next step.",
      .category = std::string(kCategoryContext),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "AgentOperationsLoopStatus",
      .output_schema = std::string(mi::kOperationsLoopStatusOutput),
  });
  // ---- operator state ----
  out.push_back({
      .name = "get_operator_state",
      .title = "Get operator state",
      .description =
          "Reads the intent an operator declared for a resource: intentionally offline, "
          "monitoring mode, lifecycle, maintenance window, criticality, note, and whether "
          "automatic remediation is locked.",
      .category = std::string(kCategoryOperatorState),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "ResourceOperatorState",
      .output_schema = std::string(mi::kOperatorStateOutput),
      .error_codes = {C::kOperatorStateNotSet},
  });
  out.push_back({
      .name = "set_operator_state",
      .title = "Set operator state",
      .description =
          "Declares operator intent for a resource, replacing what was set before. "
          "neverAutoRemediate locks the resource against governed execution; a maintenance "
          "window needs both its start and its end.",
      .category = std::string(kCategoryOperatorState),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "ResourceOperatorState",
      .request_body_shape = "ResourceOperatorStateInput",
      .input_schema = std::string(mi::kSetOperatorStateInput),
      .output_schema = std::string(mi::kOperatorStateOutput),
      .error_codes = {C::kOperatorStateInvalid},
      .body_error_code = C::kOperatorStateInvalid,
  });
  out.push_back({
      .name = "clear_operator_state",
      .title = "Clear operator state",
      .description = "Removes the operator intent recorded for a resource, returning it to normal "
                     "monitoring with no remediation lock.",
      .category = std::string(kCategoryOperatorState),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
  });
  // ---- the event stream ----
  out.push_back({
      .name = "subscribe_events",
      .title = "Subscribe events",
      .description =
          "Opens a server-sent event stream of fleet activity: stream.connected first, a "
          "heartbeat every 15 seconds, then finding.created, approval.pending, "
          "action.completed and fleet.change (a container died, was OOM-killed, turned "
          "unhealthy or restarted) as they happen. Streaming only; never offered as a tool.",
      .category = std::string(kCategoryContext),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "text/event-stream of AgentEvent",
  });
  // ---- findings ----
  out.push_back({
      .name = "list_findings",
      .title = "List findings",
      .description =
          "Lists Patrol findings, most severe first, then newest detected, then by id. By "
          "default only active findings of warning severity or above; the query parameters "
          "resource_id, include_resolved=1, include_hidden=1 (snoozed, dismissed and "
          "suppressed ones) and limit (at most 500) narrow or widen the list. When more "
          "findings follow, the response carries an opaque X-Next-Cursor header; send it back "
          "as cursor for the next page (keyset pagination: no finding repeats or is skipped "
          "while findings are written between pages).",
      .category = std::string(kCategoryFinding),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "Finding[]",
      .input_schema = std::string(mi::kListFindingsInput),
      .output_schema = std::string(mi::kListOutput),
      .error_codes = {C::kInvalidFindingRequest},
      .query_error_code = C::kInvalidFindingRequest,
  });
  out.push_back({
      .name = "acknowledge_finding",
      .title = "Acknowledge finding",
      .description = "Marks a finding as seen by an operator: it stays active but stops asking for "
                     "attention.",
      .category = std::string(kCategoryFinding),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = std::string(kFindingActionResponse),
      .request_body_shape = "{ finding_id: string }",
      .input_schema = std::string(mi::kAcknowledgeFindingInput),
      .output_schema = std::string(mi::kFindingActionOutput),
      .error_codes = FindingErrorCodes(),
      .body_error_code = C::kInvalidFindingRequest,
  });
  out.push_back({
      .name = "snooze_finding",
      .title = "Snooze finding",
      .description =
          "Hides a finding for 1 to 168 hours. It comes back when the snooze ends if the "
          "problem is still there.",
      .category = std::string(kCategoryFinding),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = std::string(kFindingActionResponse),
      .request_body_shape = "{ finding_id: string, duration_hours: number, note? }",
      .input_schema = std::string(mi::kSnoozeFindingInput),
      .output_schema = std::string(mi::kFindingActionOutput),
      .error_codes = FindingErrorCodes(),
      .body_error_code = C::kInvalidFindingRequest,
  });
  out.push_back({
      .name = "dismiss_finding",
      .title = "Dismiss finding",
      .description =
          "Closes a finding that needs no action: not_an_issue (also suppresses future "
          "detections), expected_behavior, or will_fix_later (reminds again after 7 days).",
      .category = std::string(kCategoryFinding),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = std::string(kFindingActionResponse),
      .request_body_shape =
          "{ finding_id, reason: \"not_an_issue\"|\"expected_behavior\"|\"will_fix_later\", "
          "note? }",
      .input_schema = std::string(mi::kDismissFindingInput),
      .output_schema = std::string(mi::kFindingActionOutput),
      .error_codes = FindingErrorCodes(),
      .body_error_code = C::kInvalidFindingRequest,
  });
  out.push_back({
      .name = "resolve_finding",
      .title = "Resolve finding",
      .description =
          "Marks a finding as fixed, with an optional note on what was done. Patrol reopens "
          "it if the problem is detected again.",
      .category = std::string(kCategoryFinding),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = std::string(kFindingActionResponse),
      .request_body_shape = "{ finding_id, resolution_note? }",
      .input_schema = std::string(mi::kResolveFindingInput),
      .output_schema = std::string(mi::kFindingActionOutput),
      .error_codes = FindingErrorCodes(),
      .body_error_code = C::kInvalidFindingRequest,
  });
  // ---- Patrol runs and autonomy ----
  out.push_back({
      .name = "run_patrol",
      .title = "Run Patrol",
      .description =
          "Starts a Patrol run now: deterministic checks of the fleet (or of the resources and "
          "types named), then the model pass when a provider is configured, then "
          "investigation and governed fixes as the autonomy level allows. Returns at once with "
          "the run id; read the outcome with get_patrol_run. One run at a time per scope.",
      .category = std::string(kCategoryPatrol),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "{ success, accepted, message, run_id, started_at, scope_resolution? }",
      .request_body_shape = "{ resource_ids?: string[], resource_types?: string[] }",
      .input_schema = std::string(mi::kRunPatrolInput),
      .output_schema = std::string(mi::kRunPatrolOutput),
      .error_codes = {C::kInvalidPatrolScope, C::kPatrolScopeUnresolved, C::kPatrolAlreadyRunning},
      .body_error_code = C::kInvalidPatrolScope,
  });
  out.push_back({
      .name = "list_patrol_runs",
      .title = "List Patrol runs",
      .description = "Lists the last Patrol runs (at most 100), newest first: scope, trigger, "
                     "status, finding counts, model pass, tokens, tool calls and fixes.",
      .category = std::string(kCategoryPatrol),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "PatrolRunRecord[]",
      .output_schema = std::string(mi::kListOutput),
  });
  out.push_back({
      .name = "get_patrol_run",
      .title = "Get Patrol run",
      .description = "Reads one Patrol run record by id (running or finished).",
      .category = std::string(kCategoryPatrol),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "PatrolRunRecord",
      .output_schema = std::string(mi::kPatrolRunOutput),
      .error_codes = {C::kPatrolRunNotFound},
  });
  out.push_back({
      .name = "get_patrol_status",
      .title = "Get Patrol status",
      .description = "Reports Patrol's runtime state (idle, running or blocked, with the "
                     "reason: no provider, preflight failed, budget exhausted, paused), its "
                     "schedule and next run, the effective autonomy level, the model's recent "
                     "failures, when the last full run ended (last_patrol_at; scoped runs "
                     "advance last_activity_at) and the last run's outcome.",
      .category = std::string(kCategoryPatrol),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "PatrolStatus",
      .output_schema = std::string(mi::kPatrolStatusOutput),
  });
  out.push_back({
      .name = "get_patrol_autonomy",
      .title = "Get Patrol autonomy",
      .description = "Reads how far Patrol may act on its own: the requested and effective "
                     "autonomy level (monitor, approval, assisted, full), the Autopilot "
                     "acknowledgement and the investigation budget.",
      .category = std::string(kCategoryPatrol),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "PatrolAutonomy",
      .output_schema = std::string(mi::kPatrolAutonomyOutput),
  });
  out.push_back({
      .name = "set_patrol_autonomy",
      .title = "Set Patrol autonomy",
      .description =
          "Sets the autonomy level: monitor (findings only), approval (investigate, every fix "
          "waits for a human), assisted (low-risk fixes run automatically) or full (Autopilot: "
          "needs an acknowledgement_id recorded by a human; without one it acts as approval).",
      .category = std::string(kCategoryPatrol),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "PatrolAutonomy",
      .request_body_shape = "{ autonomy_level, acknowledgement_id?, investigation_budget?, "
                            "investigation_timeout_sec? }",
      .input_schema = std::string(mi::kSetPatrolAutonomyInput),
      .output_schema = std::string(mi::kPatrolAutonomyOutput),
      .error_codes = {C::kInvalidAutonomyLevel},
      .body_error_code = C::kInvalidAutonomyLevel,
  });
  out.push_back({
      .name = "acknowledge_patrol_autopilot",
      .title = "Acknowledge Patrol Autopilot",
      .description =
          "Records the calling human's Autopilot acknowledgement: while it exists, autonomy "
          "level full lets Patrol execute low-risk and elevated capabilities that need no "
          "approval on its own. Repeating the current acknowledgement id changes nothing "
          "(created false); another id replaces it. Humans only: a caller marked as an agent is "
          "refused.",
      .category = std::string(kCategoryPatrol),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "AutopilotAcknowledgementResult",
      .request_body_shape = "{ acknowledgement_id }",
      .input_schema = std::string(mi::kAcknowledgeAutopilotInput),
      .output_schema = std::string(mi::kAutopilotAcknowledgementOutput),
      .error_codes = {C::kInvalidAutopilotAcknowledgement, C::kAutopilotAcknowledgementForbidden},
      .body_error_code = C::kInvalidAutopilotAcknowledgement,
      .human_only = true,
  });
  out.push_back({
      .name = "revoke_patrol_autopilot",
      .title = "Revoke Patrol Autopilot acknowledgement",
      .description =
          "Revokes the recorded Autopilot acknowledgement with an optional body {reason}: from "
          "then on autonomy level full acts as approval until a human acknowledges again. "
          "Humans only.",
      .category = std::string(kCategoryPatrol),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "AutopilotAcknowledgementRevocation",
      .input_schema = std::string(mi::kRevokeAutopilotInput),
      .output_schema = std::string(mi::kAutopilotRevocationOutput),
      .error_codes = {C::kInvalidAutopilotAcknowledgement, C::kAutopilotAcknowledgementForbidden,
                      C::kAutopilotAcknowledgementNotFound},
      .human_only = true,
  });
  // ---- governed actions ----
  out.push_back({
      .name = "plan_action",
      .title = "Plan action",
      .description =
          "Plans a governed change: one capability of one resource with validated "
          "parameters. The plan states risk, preflight, the approval requirement and a plan "
          "hash; nothing runs yet. Repeating an identical request returns the same plan.",
      .category = std::string(kCategoryAction),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kActionPlan,
      .response_shape = "ActionPlan",
      .request_body_shape = "ActionRequest",
      .input_schema = std::string(mi::kPlanActionInput),
      .output_schema = std::string(mi::kActionPlanOutput),
      .error_codes = PlanErrorCodes(),
      .body_error_code = C::kInvalidActionRequest,
      .open_members = {"params"},
  });
  out.push_back({
      .name = "decide_action",
      .title = "Decide action",
      .description =
          "Approves or rejects a planned action that waits for approval. The decision binds "
          "to the plan hash: a plan that changed or expired has to be planned again.",
      .category = std::string(kCategoryAction),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kActionPlan,
      .response_shape = "ActionDecisionResponse",
      .request_body_shape =
          "{ outcome: \"approved\"|\"rejected\", reason?: string, planHash?: string }",
      .input_schema = std::string(mi::kDecideActionInput),
      .output_schema = std::string(mi::kActionDecisionOutput),
      .error_codes = DecideErrorCodes(),
      .body_error_code = C::kInvalidActionDecision,
  });
  out.push_back({
      .name = "execute_action",
      .title = "Execute action",
      .description =
          "Runs an approved (or approval-free) action exactly once after re-checking the "
          "resource for drift, and reports the execution result with its independent "
          "verification.",
      .category = std::string(kCategoryAction),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kActionPlan,
      .response_shape = "ActionExecutionResponse",
      .request_body_shape = "{ reason?: string, planHash?: string }",
      .input_schema = std::string(mi::kExecuteActionInput),
      .output_schema = std::string(mi::kActionExecutionOutput),
      .error_codes = ExecuteErrorCodes(),
      .body_error_code = C::kInvalidActionExecution,
  });
  // ---- API tokens (the web console's token page) ----
  out.push_back({
      .name = "list_api_tokens",
      .title = "List API tokens",
      .description =
          "Lists the live API tokens: id, name, kind (human, agent, service), scopes, when each "
          "was created and last used, and when it expires. Never a token's secret. Humans "
          "only.",
      .category = std::string(kCategorySecurity),
      .action_mode = ActionMode::kRead,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "{ tokens: ApiTokenRecord[] }",
      .output_schema = std::string(mi::kApiTokenListOutput),
      .error_codes = {C::kTokenManagementForbidden},
      .human_only = true,
  });
  out.push_back({
      .name = "create_api_token",
      .title = "Create API token",
      .description =
          "Mints an API token and returns its secret once (only a keyed hash is kept). Its "
          "scopes may not exceed the caller's; kind agent or service makes every request of "
          "the token act as software, which may never approve. Humans only.",
      .category = std::string(kCategorySecurity),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .response_shape = "{ token, record: ApiTokenRecord }",
      .request_body_shape = "{ name, scopes[], kind?, expiresIn? }",
      .input_schema = std::string(mi::kCreateApiTokenInput),
      .output_schema = std::string(mi::kApiTokenCreatedOutput),
      .error_codes = {C::kInvalidTokenRequest, C::kTokenManagementForbidden},
      .body_error_code = C::kInvalidTokenRequest,
      .human_only = true,
  });
  out.push_back({
      .name = "revoke_api_token",
      .title = "Revoke API token",
      .description =
          "Revokes a token by id: its next request is refused (401). A token whose scopes "
          "exceed the caller's cannot be revoked by it. Humans only.",
      .category = std::string(kCategorySecurity),
      .action_mode = ActionMode::kWrite,
      .approval_policy = ApprovalPolicy::kScopeOnly,
      .input_schema = std::string(mi::kRevokeApiTokenInput),
      .error_codes = {C::kTokenNotFound, C::kTokenManagementForbidden},
      .human_only = true,
  });
  // Method, path, scope and streaming are the capability's route row (surface.h), found by
  // name; ValidateManifest fails for a capability without one.
  for (AgentCapability& capability : out) {
    if (const SurfaceRoute* route = FindSurfaceRoute(capability.name);
        route != nullptr && route->kind == SurfaceRouteKind::kCapability) {
      capability.method = route->method;
      capability.path = route->path;
      capability.scope = route->scope.value_or(Scope::kMonitoringRead);
      capability.streaming = route->streaming;
    }
  }
  return out;
}

std::string PlaceholderHint(std::string_view name) {
  if (name == "resourceId") {
    return "Canonical resource ID, e.g. vm:101 or node:pve1.";
  }
  if (name == "actionId") {
    return "ID of the governed action.";
  }
  if (name == "tokenId") {
    return "ID of the API token (tok_...).";
  }
  return "Path parameter " + std::string(name) + ".";
}

void AddString(rapidjson::Value& object, std::string_view key, std::string_view value,
               rapidjson::Document::AllocatorType& alloc) {
  object.AddMember(
      rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), alloc),
      rapidjson::Value(value.data(), static_cast<rapidjson::SizeType>(value.size()), alloc), alloc);
}

}  // namespace

namespace manifest_internal {

rapidjson::Document ParseCatalogueJson(std::string_view text) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(text);
  if (!doc.ok()) {
    return rapidjson::Document();
  }
  return std::move(doc).value();
}

rapidjson::Document FallbackInputSchema(const AgentCapability& capability) {
  rapidjson::Document schema(rapidjson::kObjectType);
  auto& alloc = schema.GetAllocator();
  AddString(schema, "type", "object", alloc);
  rapidjson::Value properties(rapidjson::kObjectType);
  rapidjson::Value required(rapidjson::kArrayType);
  for (const std::string& name : PathPlaceholders(capability.path)) {
    rapidjson::Value property(rapidjson::kObjectType);
    AddString(property, "type", "string", alloc);
    AddString(property, "description", PlaceholderHint(name), alloc);
    properties.AddMember(rapidjson::Value(name.c_str(), alloc), property, alloc);
    required.PushBack(rapidjson::Value(name.c_str(), alloc), alloc);
  }
  if (TakesBody(capability)) {
    rapidjson::Value body(rapidjson::kObjectType);
    AddString(body, "type", "object", alloc);
    AddString(body, "description", "JSON request body.", alloc);
    properties.AddMember("body", body, alloc);
  }
  schema.AddMember("properties", properties, alloc);
  if (!required.Empty()) {
    schema.AddMember("required", required, alloc);
  }
  schema.AddMember("additionalProperties", true, alloc);
  return schema;
}

}  // namespace manifest_internal

const std::vector<AgentCapability>& AgentCapabilities() {
  static const std::vector<AgentCapability> catalogue = BuildCatalogue();
  return catalogue;
}

const AgentCapability* FindAgentCapability(std::string_view name) {
  for (const AgentCapability& capability : AgentCapabilities()) {
    if (capability.name == name) {
      return &capability;
    }
  }
  return nullptr;
}

const std::vector<ManifestCategory>& ManifestCategories() {
  static const std::vector<ManifestCategory> categories = [] {
    const std::vector<ManifestCategory> all = {
        {std::string(kCategoryContext), "Context (read-only)",
         "What the fleet and each resource look like now, and where the operations loop "
         "stands."},
        {std::string(kCategoryOperatorState), "Operator state (per-resource intent)",
         "What an operator has declared about a resource: offline on purpose, in "
         "maintenance, locked against remediation."},
        {std::string(kCategoryFinding), "Findings (Patrol lifecycle)",
         "Problems Patrol found, and the operator decisions that close or defer them."},
        {std::string(kCategoryPatrol), "Patrol (runs and autonomy)",
         "Starting Patrol runs, reading their records, and how far Patrol may act on its "
         "own."},
        {std::string(kCategoryAction), "Actions (governed plan/approval/execute)",
         "Changes to infrastructure: planned, approved by policy or a human, executed once "
         "and verified independently."},
        {std::string(kCategorySecurity), "Security (API tokens)",
         "Who may call this server: the API tokens, their kinds and scopes. Humans only."},
    };
    std::vector<ManifestCategory> used;
    for (const ManifestCategory& category : all) {
      const bool in_use =
          std::any_of(AgentCapabilities().begin(), AgentCapabilities().end(),
                      [&](const AgentCapability& c) { return c.category == category.id; });
      if (in_use) {
        used.push_back(category);
      }
    }
    return used;
  }();
  return categories;
}

std::vector<Scope> ManifestRequiredScopes() {
  std::vector<Scope> scopes;
  for (Scope scope : kAllScopes) {
    const bool required = std::any_of(AgentCapabilities().begin(), AgentCapabilities().end(),
                                      [&](const AgentCapability& c) { return c.scope == scope; });
    if (required) {
      scopes.push_back(scope);
    }
  }
  return scopes;
}

std::vector<std::string> McpToolCapabilityNames() {
  std::vector<std::string> names;
  for (const AgentCapability& capability : AgentCapabilities()) {
    if (!capability.streaming && !capability.human_only) {
      names.push_back(capability.name);
    }
  }
  return names;
}

bool TakesBody(const AgentCapability& capability) {
  return capability.method == "POST" || capability.method == "PUT" || capability.method == "PATCH";
}

std::string InputSchemaJson(const AgentCapability& capability) {
  if (capability.input_schema.empty()) {
    return ToJsonString(manifest_internal::FallbackInputSchema(capability));
  }
  return ToJsonString(manifest_internal::ParseCatalogueJson(capability.input_schema));
}

std::string BodySchemaJson(const AgentCapability& capability) {
  if (!TakesBody(capability)) {
    return "";
  }
  rapidjson::Document schema = capability.input_schema.empty()
                                   ? manifest_internal::FallbackInputSchema(capability)
                                   : manifest_internal::ParseCatalogueJson(capability.input_schema);
  const std::vector<std::string> placeholders = PathPlaceholders(capability.path);
  if (schema.HasMember("required") && schema["required"].IsArray()) {
    rapidjson::Value& required = schema["required"];
    rapidjson::Value kept(rapidjson::kArrayType);
    for (const auto& name : required.GetArray()) {
      if (std::find(placeholders.begin(), placeholders.end(), StringViewOf(name)) ==
          placeholders.end()) {
        kept.PushBack(rapidjson::Value(name, schema.GetAllocator()), schema.GetAllocator());
      }
    }
    if (kept.Empty()) {
      schema.RemoveMember("required");
    } else {
      required = kept;
    }
  }
  return ToJsonString(schema);
}

std::string_view ApprovalSummary(const AgentCapability& capability) {
  if (capability.action_mode == ActionMode::kRead) {
    return "no approval required";
  }
  if (capability.approval_policy == ApprovalPolicy::kActionPlan) {
    return "governed action-plan approval is required before execution";
  }
  return "required scope is sufficient; no action-plan approval is required";
}

}  // namespace pulse::core
