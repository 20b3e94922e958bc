#include "pulse/core/actions/action_planner.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/actions/action_identity.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/action_codec.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

using action_internal::IsToken;

constexpr std::string_view kActorIdChars = "._:@/+=-";
constexpr std::string_view kRequestIdChars = "._:-";
constexpr std::size_t kMaxPostureBytes = 64;

bool IsPosture(std::string_view posture) {
  if (posture.empty() || posture.size() > kMaxPostureBytes) {
    return false;
  }
  for (char c : posture) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '.' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

bool IsCapabilityName(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-')) {
      return false;
    }
  }
  return true;
}

bool AutomationEligible(AutoAuthorization capability_class, AutoAuthorization ceiling) {
  if (capability_class == AutoAuthorization::kNever || ceiling == AutoAuthorization::kNever) {
    return false;
  }
  return static_cast<int>(capability_class) <= static_cast<int>(ceiling);
}

std::vector<std::string> BlastRadius(const FleetResource& resource,
                                     const std::vector<FleetRelationship>& relationships) {
  std::set<std::string> neighbours;
  for (const FleetRelationship& r : relationships) {
    if (r.from_id == resource.id && r.to_id != resource.id) {
      neighbours.insert(r.to_id);
    } else if (r.to_id == resource.id && r.from_id != resource.id) {
      neighbours.insert(r.from_id);
    }
  }
  std::vector<std::string> out = {resource.id};
  for (const std::string& n : neighbours) {
    if (out.size() >= kMaxBlastRadius) {
      break;
    }
    out.push_back(n);
  }
  return out;
}

std::string RequirementSentence(const ApprovalRequirement& r) {
  switch (r.floor) {
    case ApprovalLevel::kNone:
      return "No approval is required.";
    case ApprovalLevel::kDryRunOnly:
      return "This capability is dry-run only: the plan can be reviewed but never executed.";
    case ApprovalLevel::kAdmin:
    case ApprovalLevel::kMfa:
      return absl::StrCat("Requires ", r.quorum, r.quorum == 1 ? " approval" : " approvals",
                          r.floor == ApprovalLevel::kMfa ? " with MFA step-up" : "",
                          r.disallow_requester ? " by someone other than the requester" : "", ".");
  }
  return "";
}

ActionPreflight BuildPreflight(const ActionRequest& request, const FleetResource& resource,
                               const Capability& capability) {
  ActionPreflight p;
  p.target = resource.id;
  p.current_state = resource.status;
  p.intended_change = absl::StrCat("Run ", capability.name, " on ",
                                   resource.name.empty() ? resource.id : resource.name, " (",
                                   resource.id, "): ", request.reason);
  p.dry_run_available = false;
  p.dry_run_summary =
      "No dry run is available for this capability; this plan records the intended change "
      "only.";
  p.safety_checks = {
      "Approval and execution are bound to this plan hash.",
      "The resource and capability are re-read and the plan is rebuilt before dispatch; any "
      "drift refuses dispatch.",
      "The operator remediation lock is checked before dispatch.",
      "The action is dispatched at most once.",
  };
  p.verification_steps = {
      "After dispatch, the intended end state is observed independently of the executor.",
      "Only a succeeded execution confirmed by an independent observer counts as verified.",
  };
  return p;
}

}  // namespace

ActionPolicyOptions NormalizePolicyOptions(ActionPolicyOptions options) {
  options.approval_quorum = std::clamp(options.approval_quorum, 1, kMaxApprovalQuorum);
  if (options.plan_ttl <= absl::ZeroDuration()) {
    options.plan_ttl = kDefaultPlanTtl;
  }
  return options;
}

ApprovalRequirement DeriveApprovalRequirement(const Capability& capability,
                                              const ActionActor& requester,
                                              const ActionPolicyOptions& options,
                                              std::string_view approval_posture) {
  ApprovalRequirement r;
  r.floor = capability.minimum_approval;
  r.quorum = 1;
  r.disallow_requester = false;
  if (r.floor == ApprovalLevel::kNone && requester.kind != ActorKind::kHuman &&
      !AutomationEligible(capability.auto_authorization, options.automatic_ceiling)) {
    r.floor = ApprovalLevel::kAdmin;
  }
  // The session's posture: a chat confirmation is not an approval, so a session that requires
  // a human gets a plan that waits for a recorded decision.
  if (r.floor == ApprovalLevel::kNone && !approval_posture.empty()) {
    r.floor = ApprovalLevel::kAdmin;
  }
  if (r.floor == ApprovalLevel::kAdmin || r.floor == ApprovalLevel::kMfa) {
    r.quorum = std::clamp(options.approval_quorum, 1, kMaxApprovalQuorum);
    r.disallow_requester = options.require_requester_separation;
  }
  return r;
}

std::optional<ActionRefusal> ValidateActionRequest(const ActionRequest& request) {
  if (!IsToken(request.actor.id, kMaxActionIdBytes, kActorIdChars)) {
    return Refuse(AgentErrorCode::kActionActorUnavailable,
                  "the request has no valid authenticated actor");
  }
  std::map<std::string, std::string> details;
  if (!IsToken(request.request_id, kMaxActionIdBytes, kRequestIdChars)) {
    details["requestId"] = "must be 1..128 characters of [A-Za-z0-9._:-]";
  }
  if (!IsCanonicalResourceId(request.resource_id)) {
    details["resourceId"] = "must be a canonical resource id such as vm:101";
  }
  if (!IsCapabilityName(request.capability_name)) {
    details["capabilityName"] = "must be 1..64 characters of [a-z0-9_.-]";
  }
  if (request.reason.empty() || request.reason.size() > kMaxActionTextBytes ||
      !IsCleanText(request.reason) ||
      request.reason.find_first_not_of(" \t\n") == std::string::npos) {
    details["reason"] = absl::StrCat("must be non-blank, clean UTF-8 text of at most ",
                                     kMaxActionTextBytes, " bytes");
  }
  if (!request.approval_posture.empty() && !IsPosture(request.approval_posture)) {
    details["approvalPosture"] = "must be 1..64 characters of [a-z0-9_:.-]";
  }
  if (details.empty()) {
    return std::nullopt;
  }
  ActionRefusal refusal = Refuse(AgentErrorCode::kInvalidActionRequest,
                                 absl::StrCat("invalid action request: ", details.begin()->first,
                                              " ", details.begin()->second));
  refusal.details = std::move(details);
  return refusal;
}

Refusable<PlannedAction> BuildActionPlan(const ActionRequest& request, const PlanInputs& inputs,
                                         absl::Time now, const ActionPolicyOptions& raw_options) {
  const ActionPolicyOptions options = NormalizePolicyOptions(raw_options);
  const Capability* capability = FindCapability(inputs.catalogue, request.capability_name);
  if (capability == nullptr) {
    return Refuse(AgentErrorCode::kCapabilityNotFound,
                  absl::StrCat("capability '", request.capability_name, "' is not advertised for ",
                               request.resource_id, " in its current state"));
  }
  absl::Status declared = ValidateCapability(*capability);
  if (!declared.ok()) {
    return Refuse(AgentErrorCode::kActionExecutionUnavailable,
                  absl::StrCat("the advertised capability declaration is invalid: ",
                               std::string(declared.message())));
  }
  ParamValidation params = ValidateParams(*capability, request.params_json);
  if (!params.ok()) {
    ActionRefusal refusal = Refuse(AgentErrorCode::kInvalidActionRequest,
                                   absl::StrCat("invalid params: ", params.errors.begin()->first,
                                                " ", params.errors.begin()->second));
    refusal.details = params.errors;
    return refusal;
  }

  PlannedAction out;
  out.request = request;
  out.request.params_json = params.canonical_params;
  const ApprovalRequirement requirement =
      DeriveApprovalRequirement(*capability, request.actor, options, request.approval_posture);

  ActionPlan& plan = out.plan;
  plan.request_id = request.request_id;
  plan.resource_id = request.resource_id;
  plan.capability_name = request.capability_name;
  plan.params_json = out.request.params_json;
  plan.approval_policy = capability->minimum_approval;
  plan.approval_requirement = requirement;
  plan.allowed = requirement.floor != ApprovalLevel::kDryRunOnly;
  plan.requires_approval =
      requirement.floor == ApprovalLevel::kAdmin || requirement.floor == ApprovalLevel::kMfa;
  plan.auto_authorization = capability->auto_authorization;
  plan.risk = capability->risk;
  plan.predicted_blast_radius = BlastRadius(inputs.resource, inputs.relationships);
  plan.rollback_available = capability->supports_rollback;
  plan.message = RequirementSentence(requirement);
  if (plan.requires_approval && !request.approval_posture.empty()) {
    absl::StrAppend(&plan.message, " The requesting session's posture (", request.approval_posture,
                    ") requires a recorded human approval for every change.");
  }
  plan.planned_at = now;
  plan.expires_at = now + options.plan_ttl;
  plan.resource_version = ComputeResourceVersion(inputs.resource, inputs.catalogue);
  plan.policy_version = ComputePolicyVersion(*capability);
  plan.preflight = BuildPreflight(out.request, inputs.resource, *capability);
  plan.action_id = ComputeActionId(plan, out.request);
  plan.plan_hash = ComputePlanHash(plan, out.request);
  return out;
}

std::optional<std::string> DescribePlanDrift(const ActionRecord& record, const PlanInputs& inputs,
                                             const ActionPolicyOptions& options) {
  const ActionPlan& approved = record.plan;
  Refusable<PlannedAction> rebuilt =
      BuildActionPlan(record.request, inputs, approved.planned_at, options);
  if (rebuilt.refused()) {
    const ActionRefusal& r = rebuilt.refusal();
    if (r.code == AgentErrorCode::kCapabilityNotFound) {
      return absl::StrCat(ToAbsl(kPlanDriftPrefix), " capability '", approved.capability_name,
                          "' is no longer advertised for ", approved.resource_id);
    }
    return absl::StrCat(ToAbsl(kPlanDriftPrefix), " the plan no longer validates against the live ",
                        "capability: ", r.message);
  }
  const ActionPlan& now = rebuilt.value().plan;
  if (now.plan_hash == approved.plan_hash) {
    return std::nullopt;
  }
  std::vector<std::string> what;
  if (now.resource_version != approved.resource_version) {
    what.push_back(absl::StrCat("resource ", approved.resource_id, " changed (",
                                approved.resource_version, " -> ", now.resource_version, ")"));
  }
  if (now.policy_version != approved.policy_version) {
    what.push_back(absl::StrCat("capability '", approved.capability_name, "' changed (",
                                approved.policy_version, " -> ", now.policy_version, ")"));
  }
  if (what.empty() && now.predicted_blast_radius != approved.predicted_blast_radius) {
    what.push_back("the resource's relationships changed");
  }
  if (what.empty()) {
    what.push_back("the rebuilt plan differs from the approved plan");
  }
  std::string message = absl::StrCat(ToAbsl(kPlanDriftPrefix), " ", what.front());
  for (std::size_t i = 1; i < what.size(); ++i) {
    absl::StrAppend(&message, "; ", what[i]);
  }
  absl::StrAppend(&message, "; re-plan to act on the current state");
  return message;
}

}  // namespace pulse::core
