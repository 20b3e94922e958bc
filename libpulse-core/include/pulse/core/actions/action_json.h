// Wire JSON of governed actions. Member names are exactly the wire surface's (camelCase, as
// docs/api.md and docs/architecture.md "Governed actions" spell the action routes and records);
// enum values use their wire strings and times are RFC 3339 UTC with as many fractional digits as
// needed (exact round trip). Decoders are strict: a body must be one JSON object within the size
// and depth limits, with no unknown, duplicate, mistyped or over-long member, and only valid UTF-8
// text. Every decoder fails with InvalidArgument naming the first problem; none echoes a param
// value. Pure functions; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/model/capability.h"

namespace pulse::core {

inline constexpr std::size_t kMaxActionBodyBytes = 64 * 1024;
inline constexpr std::size_t kMaxActionRecordBytes = 1 << 20;

// ---- request bodies (POST /api/actions/...) ----------------------------------------------

// plan_action: {requestId, resourceId, capabilityName, params?, reason, requestedBy?}.
// requestedBy, when present, must be a string and is ignored: the requester is always the
// authenticated `actor`. params must be an object (kept as compact JSON text; the planner
// validates and canonicalizes it).
[[nodiscard]] absl::StatusOr<ActionRequest> ParsePlanActionBody(std::string_view json,
                                                                const ActionActor& actor);

struct DecisionBody {
  DecisionOutcome outcome = DecisionOutcome::kRejected;
  std::string reason;
  std::optional<std::string> plan_hash;
};
// decide_action: {outcome: "approved"|"rejected", reason?, planHash?}.
[[nodiscard]] absl::StatusOr<DecisionBody> ParseDecisionBody(std::string_view json);

struct ExecuteBody {
  std::string reason;
  std::optional<std::string> plan_hash;
};
// execute_action: {reason?, planHash?}; an empty or all-whitespace body is {}.
[[nodiscard]] absl::StatusOr<ExecuteBody> ParseExecuteBody(std::string_view json);

// ---- records ------------------------------------------------------------------------------

// The plan as the plan_action response: actionId, requestId, resourceId, capabilityName,
// params, allowed, requiresApproval, approvalPolicy, approvalRequirement {version:1, floor,
// quorum, disallowRequester}, autoAuthorization, risk, predictedBlastRadius, rollbackAvailable,
// message, plannedAt, expiresAt, resourceVersion, policyVersion, planHash, preflight {target,
// currentState, intendedChange, dryRunAvailable, dryRunSummary, safetyChecks,
// verificationSteps}.
std::string ActionPlanToJson(const ActionPlan& plan);

// The audit record: id, createdAt, updatedAt, state, decisionRevision, request {requestId,
// resourceId, capabilityName, params, reason, requestedBy, actor {kind, id}}, plan (as above),
// approvals [{actor, outcome, reason?, timestamp, planHash}], result? {version:2, execution
// {status, reasonCode?, summary?}, verification {status, evidenceClass, reasonCode?, summary?,
// observerId?, observedAt?}, errorMessage?, dispatched, executorId?, startedAt?, finishedAt},
// verificationOutcome {status} (derived: unknown|verified|unverified|failed).
std::string ActionRecordToJson(const ActionRecord& record);

// The one codec of a decision: {actor {kind, id, name?}, outcome, reason?, timestamp,
// planHash}, as the audit record's approvals[] holds it (kWithName, the name when not empty)
// and as the decide_action response's `approval` shows it (kWithoutName). Writes one value.
enum class ApprovalActorName { kWithName, kWithoutName };
void WriteApprovalJson(JsonWriter& w, const ApprovalRecord& approval, ApprovalActorName name);

// Inverse of ActionRecordToJson: ParseActionRecordJson(ActionRecordToJson(r)) == r. Also
// checks internal consistency (ids agree between request and plan, decisionRevision equals the
// number of approvals, verificationOutcome matches the result).
[[nodiscard]] absl::StatusOr<ActionRecord> ParseActionRecordJson(std::string_view json);

// The result object alone, exactly as ActionRecordToJson embeds it (the ActionResultV2 of the
// agent resource context).
std::string ActionExecutionResultToJson(const ActionExecutionResult& result);

// {actionId, sequence, timestamp, state, kind, decisionRevision?, decision?, actor?, message?}
std::string LifecycleEventToJson(const ActionLifecycleEvent& event);
[[nodiscard]] absl::StatusOr<ActionLifecycleEvent> ParseLifecycleEventJson(std::string_view json);

// ---- capabilities -------------------------------------------------------------------------

// {name, description, minimumApprovalLevel, autoAuthorization, risk, supportsRollback,
//  params: [{name, type, required, enum?, pattern?, isSensitive, description?}]}
std::string CapabilityToJson(const Capability& capability);
// Decodes and validates (ValidateCapability). autoAuthorization defaults to never, risk to
// medium, supportsRollback to false, params to []; minimumApprovalLevel is required. Type
// aliases (bool, int, float, float64, map) are accepted and normalized.
[[nodiscard]] absl::StatusOr<Capability> ParseCapabilityJson(std::string_view json);
// A JSON array of capabilities; names must be unique.
[[nodiscard]] absl::StatusOr<std::vector<Capability>> ParseCapabilityCatalogueJson(
    std::string_view json);

}  // namespace pulse::core
