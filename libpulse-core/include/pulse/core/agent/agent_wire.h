// The wire names of the agent-surface read views, spelled exactly as on the wire (wire surface
// docs/api.md): members of AgentFleetContext, AgentResourceContext, the resource
// capability list, AgentOperationsLoopStatus, the action list and detail bodies, and the query
// parameters of those routes. Header-only constants.
#pragma once

#include <string_view>

namespace pulse::core::agent_wire {

// --- shared ---
inline constexpr std::string_view kGeneratedAt = "generatedAt";
inline constexpr std::string_view kReadOnly = "readOnly";
inline constexpr std::string_view kCount = "count";

// --- AgentFleetContext ---
inline constexpr std::string_view kResources = "resources";
inline constexpr std::string_view kCanonicalId = "canonicalId";
inline constexpr std::string_view kResourceType = "resourceType";
inline constexpr std::string_view kResourceName = "resourceName";
inline constexpr std::string_view kTechnology = "technology";
inline constexpr std::string_view kIntentionallyOffline = "intentionallyOffline";
inline constexpr std::string_view kMonitoringMode = "monitoringMode";
inline constexpr std::string_view kLifecycleState = "lifecycleState";
inline constexpr std::string_view kNeverAutoRemediate = "neverAutoRemediate";
inline constexpr std::string_view kMaintenanceWindowActive = "maintenanceWindowActive";
inline constexpr std::string_view kFindings = "findings";
inline constexpr std::string_view kTotal = "total";
inline constexpr std::string_view kCritical = "critical";
inline constexpr std::string_view kWarning = "warning";
inline constexpr std::string_view kInfo = "info";
inline constexpr std::string_view kPendingApprovalCount = "pendingApprovalCount";
// sources[] (a fleet of several sources only; docs/fleet.md)
inline constexpr std::string_view kSources = "sources";
inline constexpr std::string_view kSourceName = "name";
inline constexpr std::string_view kSourceKind = "kind";
inline constexpr std::string_view kSourceState = "state";  // up | down
inline constexpr std::string_view kSourceError = "error";
inline constexpr std::string_view kSourceResourceCount = "resourceCount";
inline constexpr std::string_view kSourceLastSeenAt = "lastSeenAt";

// --- AgentResourceContext ---
inline constexpr std::string_view kOperatorState = "operatorState";
inline constexpr std::string_view kActiveFindings = "activeFindings";
inline constexpr std::string_view kPendingApprovals = "pendingApprovals";
inline constexpr std::string_view kRecentActions = "recentActions";
inline constexpr std::string_view kContextSections = "contextSections";
// activeFindings[]
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kTitle = "title";
inline constexpr std::string_view kSeverity = "severity";
inline constexpr std::string_view kCategory = "category";
inline constexpr std::string_view kDescription = "description";
inline constexpr std::string_view kImpact = "impact";
inline constexpr std::string_view kRecommendation = "recommendation";
inline constexpr std::string_view kRegressionCount = "regressionCount";
inline constexpr std::string_view kPreviousResolvedFixSummary = "previousResolvedFixSummary";
inline constexpr std::string_view kDetectedAt = "detectedAt";
inline constexpr std::string_view kLastSeenAt = "lastSeenAt";
// pendingApprovals[] and recentActions[]
inline constexpr std::string_view kCommand = "command";
inline constexpr std::string_view kCommandRedacted = "commandRedacted";
inline constexpr std::string_view kRiskLevel = "riskLevel";
inline constexpr std::string_view kRequestedBy = "requestedBy";
inline constexpr std::string_view kRequestedAt = "requestedAt";
inline constexpr std::string_view kExpiresAt = "expiresAt";
inline constexpr std::string_view kCapabilityName = "capabilityName";
inline constexpr std::string_view kState = "state";
inline constexpr std::string_view kSuccess = "success";
inline constexpr std::string_view kErrorMessage = "errorMessage";
inline constexpr std::string_view kActionResultV2 = "actionResultV2";
inline constexpr std::string_view kVerification = "verification";
inline constexpr std::string_view kRan = "ran";
inline constexpr std::string_view kNote = "note";
inline constexpr std::string_view kRanAt = "ranAt";
inline constexpr std::string_view kCreatedAt = "createdAt";
inline constexpr std::string_view kUpdatedAt = "updatedAt";
// contextSections[]
inline constexpr std::string_view kSource = "source";
inline constexpr std::string_view kSummary = "summary";
inline constexpr std::string_view kObservedAt = "observedAt";
inline constexpr std::string_view kFacts = "facts";

// --- resource capabilities ---
inline constexpr std::string_view kResourceId = "resourceId";
inline constexpr std::string_view kCapabilities = "capabilities";

// --- action list and detail (docs/api.md) ---
inline constexpr std::string_view kView = "view";
inline constexpr std::string_view kActions = "actions";
inline constexpr std::string_view kAudit = "audit";
inline constexpr std::string_view kEvents = "events";
inline constexpr std::string_view kReadiness = "readiness";
inline constexpr std::string_view kReady = "ready";
inline constexpr std::string_view kCode = "code";
inline constexpr std::string_view kMessage = "message";
inline constexpr std::string_view kRefreshable = "refreshable";
inline constexpr std::string_view kCheckedAt = "checkedAt";

// --- AgentOperationsLoopStatus (docs/api.md) ---
inline constexpr std::string_view kNextAction = "nextAction";
inline constexpr std::string_view kProgressLabel = "progressLabel";
inline constexpr std::string_view kSteps = "steps";
inline constexpr std::string_view kLabel = "label";
inline constexpr std::string_view kStatus = "status";
inline constexpr std::string_view kPatrolEvidenceCount = "patrolEvidenceCount";
inline constexpr std::string_view kPatrolIssueEvidenceCount = "patrolIssueEvidenceCount";
inline constexpr std::string_view kActiveFindingCount = "activeFindingCount";
inline constexpr std::string_view kGovernedActionCount = "governedActionCount";
inline constexpr std::string_view kApprovedDecisionCount = "approvedDecisionCount";
inline constexpr std::string_view kRejectedDecisionCount = "rejectedDecisionCount";
inline constexpr std::string_view kVerifiedOutcomeCount = "verifiedOutcomeCount";
inline constexpr std::string_view kOperationsLoopStarterCount = "operationsLoopStarterCount";
inline constexpr std::string_view kAssistantStarterCount = "assistantOperationsLoopStarterCount";
inline constexpr std::string_view kPatrolStarterCount = "patrolOperationsLoopStarterCount";
inline constexpr std::string_view kMcpStarterCount = "mcpOperationsLoopStarterCount";
inline constexpr std::string_view kPatrolControlStarterCount =
    "patrolControlOperationsLoopStarterCount";
inline constexpr std::string_view kPatrolControlCompletedCount =
    "patrolControlCompletedOperationsLoopCount";
inline constexpr std::string_view kPatrolControlResolvedCount =
    "patrolControlResolvedOperationsLoopCount";
inline constexpr std::string_view kPatrolControlValueState = "patrolControlValueState";
// Compatibility aliases that mirror the patrolControl* members.
inline constexpr std::string_view kPatrolAutonomyStarterCount =
    "patrolAutonomyOperationsLoopStarterCount";
inline constexpr std::string_view kPatrolAutonomyCompletedCount =
    "patrolAutonomyCompletedOperationsLoopCount";
inline constexpr std::string_view kPatrolAutonomyResolvedCount =
    "patrolAutonomyResolvedOperationsLoopCount";
inline constexpr std::string_view kPatrolAutonomyValueState = "patrolAutonomyValueState";
inline constexpr std::string_view kProActivationStarterCount =
    "proActivationOperationsLoopStarterCount";
inline constexpr std::string_view kProActivationCompletedCount =
    "proActivationCompletedOperationsLoopCount";
inline constexpr std::string_view kProActivationResolvedCount =
    "proActivationResolvedOperationsLoopCount";
inline constexpr std::string_view kProActivationValueProofState = "proActivationValueProofState";
inline constexpr std::string_view kExternalAgentReady = "externalAgentReady";
inline constexpr std::string_view kWindowStart = "windowStart";

// --- query parameters ---
// GET /api/agent/fleet-context
inline constexpr std::string_view kQueryHasFindings = "hasFindings";
inline constexpr std::string_view kQuerySeverity = "severity";
inline constexpr std::string_view kQueryTechnology = "technology";
inline constexpr std::string_view kQueryResourceType = "resourceType";
// GET /api/actions
inline constexpr std::string_view kQueryView = "view";
inline constexpr std::string_view kQueryLimit = "limit";
// GET /api/ai/patrol/findings
inline constexpr std::string_view kQueryResourceId = "resource_id";
inline constexpr std::string_view kQueryIncludeResolved = "include_resolved";
inline constexpr std::string_view kQueryIncludeHidden = "include_hidden";
inline constexpr std::string_view kQueryCursor = "cursor";
// The response header that carries the next page's cursor (absent on the last page).
inline constexpr std::string_view kNextCursorHeader = "X-Next-Cursor";

}  // namespace pulse::core::agent_wire
