// The pure half of planning: request validation, the approval requirement, and building a plan
// (validated params, preflight, blast radius, versions, action id, plan hash) from a snapshot
// of the live resource. The same function rebuilds the plan at approval and execute time, so
// "drift" is exactly "the plan built now differs from the plan that was approved". Pure
// functions over plain values; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "pulse/core/actions/action_refusal.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/model/capability.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core {

inline constexpr absl::Duration kDefaultPlanTtl = absl::Minutes(5);
inline constexpr int kMaxApprovalQuorum = 16;
inline constexpr std::size_t kMaxBlastRadius = 64;

struct ActionPolicyOptions {
  // How long a plan may be decided and executed. A plan is expired when now >= planned_at +
  // plan_ttl: 4:59.999 after planning it is live, at exactly 5:00 it is expired.
  absl::Duration plan_ttl = kDefaultPlanTtl;
  // Distinct approving humans an admin/mfa plan needs (1..kMaxApprovalQuorum).
  int approval_quorum = 1;
  // When true, the requester of an admin/mfa plan may not approve it.
  bool require_requester_separation = false;
  // The highest auto-authorization class an agent or policy requester may run without a human
  // approval. kNever turns automatic execution off entirely.
  AutoAuthorization automatic_ceiling = AutoAuthorization::kLowRisk;
};

// Clamps quorum into 1..kMaxApprovalQuorum and replaces a non-positive TTL by the default.
ActionPolicyOptions NormalizePolicyOptions(ActionPolicyOptions options);

// The effective approval rule for `requester` asking for `capability`:
//  * dry_run_only stays dry_run_only (plan only; quorum 1, no separation);
//  * none stays none for a human requester; for an agent or policy requester it stays none
//    only when the capability's auto class is low_risk or elevated and not above
//    options.automatic_ceiling, otherwise it is raised to admin (automation never runs an
//    ineligible capability unreviewed);
//  * admin and mfa get options.approval_quorum and options.require_requester_separation;
//  * a non-empty `approval_posture` (ActionRequest::approval_posture: the requesting session
//    requires a human for every change) raises none to admin, whoever the requester is, so
//    the plan is pending_approval and only a recorded human approval lets it run.
ApprovalRequirement DeriveApprovalRequirement(const Capability& capability,
                                              const ActionActor& requester,
                                              const ActionPolicyOptions& options,
                                              std::string_view approval_posture = {});

// Checks the request's own fields (not params, which need the capability). Returns nullopt
// when valid, else a refusal: action_actor_unavailable for a missing/invalid actor id,
// invalid_action_request (with details field -> reason) for requestId ([A-Za-z0-9._:-],
// 1..128), resourceId (canonical), capabilityName (1..64, [a-z0-9_.-]), reason (non-empty
// clean UTF-8, at most kMaxActionTextBytes) and approvalPosture (empty, or 1..64 of
// [a-z0-9_:.-]).
std::optional<ActionRefusal> ValidateActionRequest(const ActionRequest& request);

// A live snapshot of everything a plan binds.
struct PlanInputs {
  FleetResource resource;
  std::vector<Capability> catalogue;             // as advertised now
  std::vector<FleetRelationship> relationships;  // edges touching the resource
};

struct PlannedAction {
  ActionRequest request;  // params canonical
  ActionPlan plan;        // complete, plan_hash set
};

// Builds the plan for `request` against `inputs` at time `now`. Refusals:
// capability_not_found (not advertised for the resource in its current state),
// action_execution_unavailable (the advertised declaration fails ValidateCapability),
// invalid_action_request (params fail ValidateParams; details name each param).
// `request` must already pass ValidateActionRequest.
Refusable<PlannedAction> BuildActionPlan(const ActionRequest& request, const PlanInputs& inputs,
                                         absl::Time now, const ActionPolicyOptions& options);

// Rebuilds `record`'s plan from `inputs` and compares. nullopt when the plan is unchanged;
// otherwise a message starting with kPlanDriftPrefix that says what changed (capability
// withdrawn, params no longer valid, resource changed, capability changed, neighbourhood
// changed).
std::optional<std::string> DescribePlanDrift(const ActionRecord& record, const PlanInputs& inputs,
                                             const ActionPolicyOptions& options);

}  // namespace pulse::core
