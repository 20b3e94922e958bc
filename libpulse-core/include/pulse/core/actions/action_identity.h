// Deterministic identities of governed actions (docs/architecture.md "Governed actions", our own
// versioned form): the resource version, the capability policy version, the action id and the plan
// hash. Identical inputs always give identical identities (so an identical re-plan is idempotent),
// and any change of a bound field changes them (so drift is detectable). Pure functions.
//
// Encoding, version 1. Each identity is a digest over one JSON object ("envelope") holding
// "v":1, a "kind" string and the fields listed below. Every listed field is always present:
// an absent optional value is "" (strings) or [] (lists), never omitted. The envelope is
// serialized canonically (pulse/core/json/json.h CanonicalJson): compact, object members
// sorted by byte-wise key order at every level, arrays in the order given here, strings as
// UTF-8 with only '"', '\\' and control characters escaped (\b \f \n \r \t, else \u00XX),
// integers in decimal, booleans as true/false; params are embedded as their canonical JSON
// object. The digest is SHA-256 over those bytes, in lowercase hex, truncated as noted.
//
//   resource version  kind "pulse.resource.version":  id, type, name, status, technology,
//       parentId, revision, capabilities (advertised names, sorted ascending, unique)
//       -> "resource:sha256:" + first 24 hex digits
//   policy version    kind "pulse.capability.policy": name, description,
//       minimumApprovalLevel, autoAuthorization, risk, supportsRollback,
//       params: [{name, type (canonical spelling), required, enum: [...], pattern, sensitive,
//       description}, ...] in declaration order
//       -> "policy:sha256:" + first 24 hex digits
//   action id         kind "pulse.action.id": requestId, resourceId, capabilityName, params,
//       reason, actor {kind, id}, approvalRequirement {floor, quorum, disallowRequester},
//       resourceVersion, policyVersion, predictedBlastRadius [...]
//       -> "act_" + first 32 hex digits
//   plan hash         kind "pulse.action.plan": actionId, request {requestId, resourceId,
//       capabilityName, params, reason, actor {kind, id}}, allowed, requiresApproval,
//       approvalPolicy, approvalRequirement {...}, autoAuthorization, risk,
//       predictedBlastRadius [...], rollbackAvailable, message, resourceVersion,
//       policyVersion, preflight {target, currentState, intendedChange, dryRunAvailable,
//       dryRunSummary, safetyChecks [...], verificationSteps [...]}
//       -> "sha256:" + all 64 hex digits
// Times (plannedAt, expiresAt) are deliberately not bound: the same plan made twice is the
// same plan. Enum values use their wire strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pulse/core/model/action_types.h"
#include "pulse/core/model/capability.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core {

inline constexpr int kActionIdentityVersion = 1;

// Lowercase hex SHA-256 of `bytes` (64 digits).
std::string ActionSha256Hex(std::string_view bytes);

// The resource version of `resource` as it advertises `catalogue`.
std::string ComputeResourceVersion(const FleetResource& resource,
                                   const std::vector<Capability>& catalogue);

// The policy version of one capability declaration.
std::string ComputePolicyVersion(const Capability& capability);

// The action id over `request` and the plan's approval requirement, versions and blast radius
// (plan.action_id and plan.plan_hash are ignored). Every input of the plan hash is derived from
// these, so one action id never names two different plans. `request.params_json` must be
// canonical (as ValidateParams returns it).
std::string ComputeActionId(const ActionPlan& plan, const ActionRequest& request);

// The plan hash over the bound fields of `plan` and `request` (plan.plan_hash is ignored).
std::string ComputePlanHash(const ActionPlan& plan, const ActionRequest& request);

// The exact bytes each digest is computed over (exposed so the encoding can be checked and
// reproduced by other implementations).
std::string ResourceVersionEnvelope(const FleetResource& resource,
                                    const std::vector<Capability>& catalogue);
std::string PolicyVersionEnvelope(const Capability& capability);
std::string ActionIdEnvelope(const ActionPlan& plan, const ActionRequest& request);
std::string PlanHashEnvelope(const ActionPlan& plan, const ActionRequest& request);

}  // namespace pulse::core
