// Internal to src/manifest: the schema texts of the capability catalogue. Input schemas are
// closed at the root ("additionalProperties": false) so an unknown member is refused before
// any handler; output schemas describe what a client may rely on and stay open
// ("additionalProperties": true) so a server can add members without breaking clients.
#pragma once

#include <string_view>

namespace pulse::core::manifest_internal {

// ---- input schemas (docs/api.md) ---------------------------------------------------

inline constexpr std::string_view kFleetContextInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "hasFindings": {"type": "boolean",
      "description": "Only resources with at least one active finding."},
    "severity": {"type": "string", "enum": ["critical", "warning", "info"],
      "description": "Only resources with an active finding of this severity."},
    "technology": {"type": "string",
      "description": "Only resources of this technology (case-insensitive exact match)."},
    "resourceType": {"type": "string",
      "description": "Only resources of this type, e.g. vm or node (case-insensitive exact match)."}
  }
})json";

inline constexpr std::string_view kSetOperatorStateInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "resourceId": {"type": "string", "minLength": 1,
      "description": "Canonical resource ID, e.g. vm:101."},
    "intentionallyOffline": {"type": "boolean",
      "description": "The resource is meant to be down; offline alerts about it are expected."},
    "neverAutoRemediate": {"type": "boolean",
      "description": "Lock the resource: no governed action is dispatched against it."},
    "monitoringMode": {"type": "string", "enum": ["normal", "expected_offline", "muted"],
      "description": "How closely to watch the resource; wins over intentionallyOffline."},
    "lifecycleState": {"type": "string", "enum": ["active", "retired"]},
    "maintenanceStartAt": {"type": "string", "format": "date-time",
      "description": "Start of a maintenance window (RFC 3339); needs maintenanceEndAt."},
    "maintenanceEndAt": {"type": "string", "format": "date-time",
      "description": "End of the maintenance window (RFC 3339); needs maintenanceStartAt."},
    "maintenanceReason": {"type": "string"},
    "criticality": {"type": "string", "enum": ["high", "medium", "low", ""],
      "description": "How much the resource matters; an empty string clears it."},
    "note": {"type": "string", "description": "Free-form operator note."},
    "localOnly": {"type": "boolean",
      "description": "Keep this resource inside the local trust boundary: hosted models see it only as an aggregate count, never its id, name or details."}
  },
  "required": ["resourceId", "intentionallyOffline", "neverAutoRemediate"],
  "dependencies": {
    "maintenanceStartAt": ["maintenanceEndAt"],
    "maintenanceEndAt": ["maintenanceStartAt"]
  }
})json";

inline constexpr std::string_view kAcknowledgeFindingInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "finding_id": {"type": "string", "minLength": 1, "description": "ID of the finding."}
  },
  "required": ["finding_id"]
})json";

inline constexpr std::string_view kSnoozeFindingInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "finding_id": {"type": "string", "minLength": 1, "description": "ID of the finding."},
    "duration_hours": {"type": "integer", "minimum": 1, "maximum": 168,
      "description": "How long to hide the finding, in whole hours."},
    "note": {"type": "string", "description": "Optional operator note, kept on the finding."}
  },
  "required": ["finding_id", "duration_hours"]
})json";

inline constexpr std::string_view kDismissFindingInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "finding_id": {"type": "string", "minLength": 1, "description": "ID of the finding."},
    "reason": {"type": "string",
      "enum": ["not_an_issue", "expected_behavior", "will_fix_later"],
      "description": "not_an_issue also suppresses future detections; will_fix_later reminds after 7 days."},
    "note": {"type": "string", "description": "Optional operator note."}
  },
  "required": ["finding_id", "reason"]
})json";

inline constexpr std::string_view kResolveFindingInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "finding_id": {"type": "string", "minLength": 1, "description": "ID of the finding."},
    "resolution_note": {"type": "string", "description": "What was done to fix it."}
  },
  "required": ["finding_id"]
})json";

inline constexpr std::string_view kRunPatrolInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "resource_ids": {"type": "array", "maxItems": 100,
                     "items": {"type": "string", "minLength": 1, "maxLength": 256},
                     "description": "Canonical ids of the resources to check (default: all)."},
    "resource_types": {"type": "array", "maxItems": 100,
                       "items": {"type": "string", "minLength": 1, "maxLength": 256},
                       "description": "Resource types to check, e.g. vm, storage, backup-job."}
  }
})json";

inline constexpr std::string_view kSetPatrolAutonomyInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "autonomy_level": {"type": "string", "enum": ["monitor", "approval", "assisted", "full"],
                       "description": "How far Patrol may act on its own."},
    "acknowledgement_id": {"type": "string", "minLength": 1, "maxLength": 128,
                           "description": "Records the Autopilot acknowledgement (humans only)."},
    "full_mode_unlocked": {"type": "boolean", "description": "Deprecated; ignored."},
    "investigation_budget": {"type": "integer",
                             "description": "Evidence calls per investigation (clamped 5-30)."},
    "investigation_timeout_sec": {"type": "integer",
                                  "description": "Investigation timeout (clamped 60-1800)."}
  },
  "required": ["autonomy_level"]
})json";

inline constexpr std::string_view kAcknowledgeAutopilotInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "acknowledgement_id": {"type": "string", "minLength": 1, "maxLength": 128,
                           "description": "The operator's reference for this acknowledgement."}
  },
  "required": ["acknowledgement_id"]
})json";

inline constexpr std::string_view kRevokeAutopilotInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "acknowledgementId": {"type": "string", "minLength": 1, "maxLength": 128,
                          "description": "The acknowledgement to revoke."},
    "reason": {"type": "string", "maxLength": 512,
               "description": "Why it is revoked (recorded); in the body or as ?reason=."}
  },
  "required": ["acknowledgementId"]
})json";

inline constexpr std::string_view kAutopilotAcknowledgementOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "created": {"type": "boolean"},
    "acknowledgement": {"type": "object"},
    "autonomy": {"type": "object"}
  },
  "required": ["created", "acknowledgement"]
})json";

inline constexpr std::string_view kAutopilotRevocationOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "revoked": {"type": "boolean"},
    "revocation": {"type": "object"},
    "autonomy": {"type": "object"}
  },
  "required": ["revoked", "revocation"]
})json";

inline constexpr std::string_view kCreateApiTokenInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 128,
             "description": "A name for the token (shown in lists, audit rows and approvals)."},
    "scopes": {"type": "array", "minItems": 1, "maxItems": 16,
               "items": {"type": "string", "minLength": 1, "maxLength": 32},
               "description": "Scopes, e.g. [\"monitoring:read\"]; none beyond the caller's own."},
    "kind": {"type": "string", "enum": ["human", "agent", "service"],
             "description": "Who holds it (default human); only human tokens may approve."},
    "expiresIn": {"type": "string", "minLength": 2, "maxLength": 12,
                  "description": "Lifetime in hours or days, e.g. 12h or 30d; absent: never."},
    "host": {"type": "string", "minLength": 1, "maxLength": 64,
             "description": "For kind agent: the one host the token may report as (docs/agent.md)."}
  },
  "required": ["name", "scopes"]
})json";

inline constexpr std::string_view kRevokeApiTokenInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "tokenId": {"type": "string", "minLength": 1, "maxLength": 128,
                "description": "The token's id (tok_...)."}
  },
  "required": ["tokenId"]
})json";

inline constexpr std::string_view kApiTokenListOutput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "tokens": {"type": "array", "items": {"type": "object"}}
  },
  "required": ["tokens"]
})json";

inline constexpr std::string_view kApiTokenCreatedOutput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "token": {"type": "string"},
    "record": {"type": "object"}
  },
  "required": ["token", "record"]
})json";

inline constexpr std::string_view kPlanActionInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "requestId": {"type": "string", "minLength": 1,
      "description": "Caller-chosen key; repeating a request with the same key and content returns the same plan."},
    "resourceId": {"type": "string", "minLength": 1,
      "description": "Canonical resource ID, e.g. vm:101."},
    "capabilityName": {"type": "string", "minLength": 1,
      "description": "A capability the resource lists (list_resource_capabilities)."},
    "params": {"type": "object", "additionalProperties": true,
      "description": "Parameters as the capability declares them."},
    "reason": {"type": "string", "minLength": 1, "description": "Why the change is needed."},
    "requestedBy": {"type": "string",
      "description": "Informational; the requester is always the authenticated caller."}
  },
  "required": ["requestId", "resourceId", "capabilityName", "reason", "requestedBy"]
})json";

inline constexpr std::string_view kDecideActionInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "actionId": {"type": "string", "pattern": "^[a-zA-Z0-9_-]+$", "maxLength": 128,
      "description": "ID of the planned action."},
    "outcome": {"type": "string", "enum": ["approved", "rejected"]},
    "reason": {"type": "string", "description": "Why; recorded in the audit trail."},
    "planHash": {"type": "string",
      "description": "The plan hash the decision is about; refused when the plan has changed."}
  },
  "required": ["actionId", "outcome"]
})json";

inline constexpr std::string_view kExecuteActionInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "actionId": {"type": "string", "pattern": "^[a-zA-Z0-9_-]+$", "maxLength": 128,
      "description": "ID of the approved action."},
    "reason": {"type": "string", "description": "Why now; recorded in the audit trail."},
    "planHash": {"type": "string",
      "description": "The plan hash that was approved; refused when the plan has changed."}
  },
  "required": ["actionId"]
})json";

// ---- output schemas (docs/api.md) --------------------------------------------------

inline constexpr std::string_view kResourceContextOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "canonicalId": {"type": "string"},
    "resourceType": {"type": "string"},
    "resourceName": {"type": "string"},
    "technology": {"type": "string"},
    "operatorState": {"type": "object"},
    "activeFindings": {"type": "array", "items": {"type": "object"}},
    "pendingApprovals": {"type": "array", "items": {"type": "object"}},
    "recentActions": {"type": "array", "items": {"type": "object"}},
    "contextSections": {"type": "array"},
    "generatedAt": {"type": "string", "format": "date-time"}
  },
  "required": ["canonicalId", "resourceType", "resourceName", "activeFindings",
    "pendingApprovals", "recentActions", "contextSections", "generatedAt"]
})json";

inline constexpr std::string_view kResourceCapabilitiesOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "resourceId": {"type": "string"},
    "capabilities": {"type": "array", "items": {"type": "object"}},
    "generatedAt": {"type": "string", "format": "date-time"}
  },
  "required": ["resourceId", "capabilities", "generatedAt"]
})json";

inline constexpr std::string_view kListAgentsOutput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "agents": {"type": "array", "items": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "host": {"type": "string"},
        "token_id": {"type": "string"},
        "agent_version": {"type": "string"},
        "state": {"type": "string", "enum": ["connected", "disconnected", "stale", "pending"]},
        "connected": {"type": "boolean"},
        "last_seen": {"type": ["string", "null"], "format": "date-time"},
        "last_report": {"type": ["string", "null"], "format": "date-time"},
        "report_seq": {"type": "integer", "minimum": 0},
        "resources": {"type": "integer", "minimum": 0}
      },
      "required": ["host", "token_id", "agent_version", "state", "connected", "last_seen",
                   "last_report", "report_seq", "resources"]
    }},
    "stale_after_seconds": {"type": "integer", "minimum": 1}
  },
  "required": ["agents", "stale_after_seconds"]
})json";

inline constexpr std::string_view kFleetContextOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "resources": {"type": "array", "items": {"type": "object"}},
    "sources": {"type": "array", "items": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "name": {"type": "string"},
        "kind": {"type": "string"},
        "state": {"type": "string", "enum": ["up", "down"]},
        "error": {"type": "string"},
        "resourceCount": {"type": "integer", "minimum": 0},
        "lastSeenAt": {"type": "string", "format": "date-time"}
      },
      "required": ["name", "kind", "state", "resourceCount"]
    }},
    "generatedAt": {"type": "string", "format": "date-time"}
  },
  "required": ["resources", "generatedAt"]
})json";

inline constexpr std::string_view kOperationsLoopStatusOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "nextAction": {"type": "string", "enum": ["run_patrol", "review_findings", "open_assistant",
      "review_approvals", "open_mcp", "complete"]},
    "progressLabel": {"type": "string"},
    "steps": {"type": "array"},
    "patrolEvidenceCount": {"type": "integer"},
    "patrolIssueEvidenceCount": {"type": "integer"},
    "activeFindingCount": {"type": "integer"},
    "pendingApprovalCount": {"type": "integer"},
    "governedActionCount": {"type": "integer"},
    "approvedDecisionCount": {"type": "integer"},
    "rejectedDecisionCount": {"type": "integer"},
    "verifiedOutcomeCount": {"type": "integer"},
    "operationsLoopStarterCount": {"type": "integer"},
    "assistantOperationsLoopStarterCount": {"type": "integer"},
    "patrolOperationsLoopStarterCount": {"type": "integer"},
    "patrolControlOperationsLoopStarterCount": {"type": "integer"},
    "patrolControlCompletedOperationsLoopCount": {"type": "integer"},
    "patrolControlResolvedOperationsLoopCount": {"type": "integer"},
    "mcpOperationsLoopStarterCount": {"type": "integer"},
    "patrolControlValueState": {"type": "string", "enum": ["not_started", "in_progress",
      "governed_decision_recorded", "verified_needs_mcp", "verified"]},
    "patrolAutonomyValueState": {"type": "string", "enum": ["not_started", "in_progress",
      "governed_decision_recorded", "verified_needs_mcp", "verified"]},
    "proActivationValueProofState": {"type": "string", "enum": ["not_started", "in_progress",
      "governed_decision_recorded", "verified_needs_mcp", "verified"]},
    "externalAgentReady": {"type": "boolean"},
    "windowStart": {"type": "string", "format": "date-time"},
    "generatedAt": {"type": "string", "format": "date-time"}
  },
  "required": ["nextAction", "generatedAt"]
})json";

inline constexpr std::string_view kOperatorStateOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "canonicalId": {"type": "string"},
    "intentionallyOffline": {"type": "boolean"},
    "neverAutoRemediate": {"type": "boolean"},
    "setAt": {"type": "string", "format": "date-time"},
    "monitoringMode": {"type": "string", "enum": ["normal", "expected_offline", "muted"]},
    "lifecycleState": {"type": "string", "enum": ["active", "retired"]},
    "maintenanceStartAt": {"type": "string", "format": "date-time"},
    "maintenanceEndAt": {"type": "string", "format": "date-time"},
    "maintenanceReason": {"type": "string"},
    "criticality": {"type": "string"},
    "note": {"type": "string"},
    "setBy": {"type": "string"},
    "maintenanceWindowActive": {"type": "boolean"},
    "localOnly": {"type": "boolean"}
  },
  "required": ["canonicalId", "intentionallyOffline", "neverAutoRemediate", "setAt"]
})json";

inline constexpr std::string_view kListFindingsInput = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "resource_id": {"type": "string", "minLength": 1, "maxLength": 256,
      "description": "Only findings of this resource (canonical ID, e.g. vm:101)."},
    "include_resolved": {"type": "boolean",
      "description": "Resolved findings too, not only active ones."},
    "include_hidden": {"type": "boolean",
      "description": "Snoozed, dismissed and suppressed findings too, not only active ones."},
    "limit": {"type": "integer", "minimum": 0, "maximum": 500,
      "description": "At most this many findings; 0 or absent: every active finding, or 200 with include_resolved or include_hidden."},
    "cursor": {"type": "string", "minLength": 1, "maxLength": 1024,
      "examples": ["f1.Y3JpdGljYWwKMAp4"],
      "description": "Continue after the previous page: the opaque X-Next-Cursor header value of its response."}
  }
})json";

inline constexpr std::string_view kListOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "items": {"type": "array", "items": {"type": "object"}},
    "count": {"type": "integer", "minimum": 0},
    "next_cursor": {"type": "string", "description": "Present when more items follow: pass it as cursor to get the next page."}
  },
  "required": ["items", "count"]
})json";

inline constexpr std::string_view kRunPatrolOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "success": {"type": "boolean"},
    "accepted": {"type": "boolean"},
    "message": {"type": "string"},
    "run_id": {"type": "string"},
    "started_at": {"type": "string"}
  },
  "required": ["success", "accepted", "run_id"]
})json";

inline constexpr std::string_view kPatrolRunOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "id": {"type": "string"},
    "status": {"type": "string", "enum": ["running", "healthy", "issues_found", "error"]},
    "trigger_reason": {"type": "string"},
    "started_at": {"type": "string"},
    "new_finding_ids": {"type": "array", "items": {"type": "string"}},
    "model_pass_ran": {"type": "boolean"}
  },
  "required": ["id", "status", "started_at"]
})json";

inline constexpr std::string_view kPatrolStatusOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "runtime_state": {"type": "string", "enum": ["idle", "running", "blocked"]},
    "blocked_reason": {
      "type": "string",
      "enum": ["no_provider", "preflight_failed", "budget_exhausted", "paused"]
    },
    "blocked_message": {"type": "string"},
    "running": {"type": "boolean"},
    "enabled": {"type": "boolean"},
    "interval_ms": {"type": "integer"},
    "next_patrol_at": {"type": "string", "format": "date-time"},
    "model_configured": {"type": "boolean"},
    "model_failures": {"type": "object"},
    "autonomy_level": {"type": "string"},
    "last_patrol_at": {"type": "string", "format": "date-time"},
    "last_scoped_patrol_at": {"type": "string", "format": "date-time"},
    "last_activity_at": {"type": "string", "format": "date-time"}
  },
  "required": ["runtime_state", "running", "enabled", "interval_ms"]
})json";

inline constexpr std::string_view kPatrolAutonomyOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "autonomy_level": {"type": "string"},
    "requested_autonomy_level": {"type": "string"},
    "effective_autonomy_level": {"type": "string"},
    "full_mode_unlocked": {"type": "boolean"},
    "investigation_budget": {"type": "integer"},
    "investigation_timeout_sec": {"type": "integer"}
  },
  "required": ["autonomy_level", "effective_autonomy_level"]
})json";

inline constexpr std::string_view kFindingActionOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "success": {"type": "boolean"},
    "message": {"type": "string"}
  },
  "required": ["success", "message"]
})json";

inline constexpr std::string_view kActionPlanOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "actionId": {"type": "string"},
    "requestId": {"type": "string"},
    "allowed": {"type": "boolean"},
    "requiresApproval": {"type": "boolean"},
    "approvalPolicy": {"type": "string"},
    "rollbackAvailable": {"type": "boolean"},
    "plannedAt": {"type": "string", "format": "date-time"},
    "expiresAt": {"type": "string", "format": "date-time"},
    "resourceVersion": {"type": "string"},
    "policyVersion": {"type": "string"},
    "planHash": {"type": "string"},
    "predictedBlastRadius": {"type": "array"},
    "message": {"type": "string"},
    "preflight": {"type": "object"}
  },
  "required": ["actionId", "requestId", "allowed", "requiresApproval", "approvalPolicy",
    "rollbackAvailable", "plannedAt", "expiresAt", "resourceVersion", "policyVersion", "planHash"]
})json";

inline constexpr std::string_view kActionDecisionOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "actionId": {"type": "string"},
    "state": {"type": "string"},
    "approval": {"type": "object"},
    "audit": {"type": "object"}
  },
  "required": ["actionId", "state", "approval", "audit"]
})json";

inline constexpr std::string_view kActionExecutionOutput = R"json({
  "type": "object",
  "additionalProperties": true,
  "properties": {
    "actionId": {"type": "string"},
    "state": {"type": "string"},
    "result": {"type": "object"},
    "audit": {"type": "object"}
  },
  "required": ["actionId", "state", "audit"]
})json";

}  // namespace pulse::core::manifest_internal
