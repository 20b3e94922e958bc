#include "pulse/core/actions/action_identity.h"

#include <algorithm>
#include <array>
#include <set>

#include "pulse/core/json/json.h"
#include "rapidjson/document.h"
#include "sodium/crypto_hash_sha256.h"

namespace pulse::core {
namespace {

// Builds one identity envelope (see the header for the field lists).
class Envelope {
 public:
  explicit Envelope(std::string_view kind) {
    doc_.SetObject();
    Int(doc_, "v", kActionIdentityVersion);
    Str(doc_, "kind", kind);
  }

  rapidjson::Value& root() { return doc_; }

  rapidjson::Value Object() { return rapidjson::Value(rapidjson::kObjectType); }

  void Str(rapidjson::Value& obj, std::string_view key, std::string_view value) {
    obj.AddMember(Key(key), rapidjson::Value(value.data(), Size(value), alloc()), alloc());
  }
  void Bool(rapidjson::Value& obj, std::string_view key, bool value) {
    obj.AddMember(Key(key), rapidjson::Value(value), alloc());
  }
  void Int(rapidjson::Value& obj, std::string_view key, int value) {
    obj.AddMember(Key(key), rapidjson::Value(value), alloc());
  }
  void Strings(rapidjson::Value& obj, std::string_view key,
               const std::vector<std::string>& values) {
    rapidjson::Value arr(rapidjson::kArrayType);
    for (const std::string& v : values) {
      arr.PushBack(rapidjson::Value(v.data(), Size(v), alloc()), alloc());
    }
    obj.AddMember(Key(key), arr, alloc());
  }
  void Push(rapidjson::Value& array, rapidjson::Value& value) { array.PushBack(value, alloc()); }
  void Value(rapidjson::Value& obj, std::string_view key, rapidjson::Value& value) {
    obj.AddMember(Key(key), value, alloc());
  }
  // Params as their JSON object; text that does not parse is bound as a string instead, which
  // is still deterministic (planning never produces such text).
  void Params(rapidjson::Value& obj, std::string_view params_json) {
    absl::StatusOr<rapidjson::Document> parsed =
        ParseJson(params_json, JsonLimits{kMaxParamsJsonBytes, kMaxParamsDepth});
    if (parsed.ok()) {
      rapidjson::Value copy(*parsed, alloc());
      obj.AddMember(Key("params"), copy, alloc());
    } else {
      Str(obj, "params", params_json);
    }
  }
  void Actor(rapidjson::Value& obj, const ActionActor& actor) {
    rapidjson::Value a = Object();
    Str(a, "kind", ToString(actor.kind));
    Str(a, "id", actor.id);
    Value(obj, "actor", a);
  }
  void Requirement(rapidjson::Value& obj, const ApprovalRequirement& r) {
    rapidjson::Value a = Object();
    Str(a, "floor", ToString(r.floor));
    Int(a, "quorum", r.quorum);
    Bool(a, "disallowRequester", r.disallow_requester);
    Value(obj, "approvalRequirement", a);
  }

  std::string Canonical() const { return CanonicalJson(doc_); }

 private:
  static rapidjson::SizeType Size(std::string_view s) {
    return static_cast<rapidjson::SizeType>(s.size());
  }
  rapidjson::Value Key(std::string_view key) {
    return rapidjson::Value(key.data(), Size(key), alloc());
  }
  rapidjson::Document::AllocatorType& alloc() { return doc_.GetAllocator(); }

  rapidjson::Document doc_;
};

std::string Digest(std::string_view prefix, const std::string& envelope, std::size_t hex_digits) {
  return std::string(prefix) + ActionSha256Hex(envelope).substr(0, hex_digits);
}

}  // namespace

std::string ActionSha256Hex(std::string_view bytes) {
  std::array<unsigned char, crypto_hash_sha256_BYTES> out{};
  crypto_hash_sha256(out.data(), reinterpret_cast<const unsigned char*>(bytes.data()),
                     bytes.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(out.size() * 2);
  for (unsigned char b : out) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 0x0F]);
  }
  return hex;
}

std::string ResourceVersionEnvelope(const FleetResource& resource,
                                    const std::vector<Capability>& catalogue) {
  Envelope e("pulse.resource.version");
  rapidjson::Value& r = e.root();
  e.Str(r, "id", resource.id);
  e.Str(r, "type", resource.type);
  e.Str(r, "name", resource.name);
  e.Str(r, "status", resource.status);
  e.Str(r, "technology", resource.technology);
  e.Str(r, "parentId", resource.parent_id);
  e.Str(r, "revision", resource.revision);
  std::set<std::string> names;
  for (const Capability& c : catalogue) {
    names.insert(c.name);
  }
  e.Strings(r, "capabilities", std::vector<std::string>(names.begin(), names.end()));
  return e.Canonical();
}

std::string PolicyVersionEnvelope(const Capability& capability) {
  Envelope e("pulse.capability.policy");
  rapidjson::Value& r = e.root();
  e.Str(r, "name", capability.name);
  e.Str(r, "description", capability.description);
  e.Str(r, "minimumApprovalLevel", ToString(capability.minimum_approval));
  e.Str(r, "autoAuthorization", ToString(capability.auto_authorization));
  e.Str(r, "risk", ToString(capability.risk));
  e.Bool(r, "supportsRollback", capability.supports_rollback);
  rapidjson::Value params(rapidjson::kArrayType);
  for (const CapabilityParam& p : capability.params) {
    rapidjson::Value o = e.Object();
    e.Str(o, "name", p.name);
    e.Str(o, "type", ToString(p.type));
    e.Bool(o, "required", p.required);
    e.Strings(o, "enum", p.enum_values);
    e.Str(o, "pattern", p.pattern);
    e.Bool(o, "sensitive", p.sensitive);
    e.Str(o, "description", p.description);
    e.Push(params, o);
  }
  e.Value(r, "params", params);
  return e.Canonical();
}

std::string ActionIdEnvelope(const ActionPlan& plan, const ActionRequest& request) {
  Envelope e("pulse.action.id");
  rapidjson::Value& r = e.root();
  e.Str(r, "requestId", request.request_id);
  e.Str(r, "resourceId", request.resource_id);
  e.Str(r, "capabilityName", request.capability_name);
  e.Params(r, request.params_json);
  e.Str(r, "reason", request.reason);
  e.Actor(r, request.actor);
  if (!request.approval_posture.empty()) {  // absent when unset: older ids stay stable
    e.Str(r, "approvalPosture", request.approval_posture);
  }
  e.Requirement(r, plan.approval_requirement);
  e.Str(r, "resourceVersion", plan.resource_version);
  e.Str(r, "policyVersion", plan.policy_version);
  e.Strings(r, "predictedBlastRadius", plan.predicted_blast_radius);
  return e.Canonical();
}

std::string PlanHashEnvelope(const ActionPlan& plan, const ActionRequest& request) {
  Envelope e("pulse.action.plan");
  rapidjson::Value& r = e.root();
  e.Str(r, "actionId", plan.action_id);
  rapidjson::Value req = e.Object();
  e.Str(req, "requestId", request.request_id);
  e.Str(req, "resourceId", request.resource_id);
  e.Str(req, "capabilityName", request.capability_name);
  e.Params(req, request.params_json);
  e.Str(req, "reason", request.reason);
  e.Actor(req, request.actor);
  if (!request.approval_posture.empty()) {  // absent when unset: older hashes stay stable
    e.Str(req, "approvalPosture", request.approval_posture);
  }
  e.Value(r, "request", req);
  e.Bool(r, "allowed", plan.allowed);
  e.Bool(r, "requiresApproval", plan.requires_approval);
  e.Str(r, "approvalPolicy", ToString(plan.approval_policy));
  e.Requirement(r, plan.approval_requirement);
  e.Str(r, "autoAuthorization", ToString(plan.auto_authorization));
  e.Str(r, "risk", ToString(plan.risk));
  e.Strings(r, "predictedBlastRadius", plan.predicted_blast_radius);
  e.Bool(r, "rollbackAvailable", plan.rollback_available);
  e.Str(r, "message", plan.message);
  e.Str(r, "resourceVersion", plan.resource_version);
  e.Str(r, "policyVersion", plan.policy_version);
  rapidjson::Value pf = e.Object();
  e.Str(pf, "target", plan.preflight.target);
  e.Str(pf, "currentState", plan.preflight.current_state);
  e.Str(pf, "intendedChange", plan.preflight.intended_change);
  e.Bool(pf, "dryRunAvailable", plan.preflight.dry_run_available);
  e.Str(pf, "dryRunSummary", plan.preflight.dry_run_summary);
  e.Strings(pf, "safetyChecks", plan.preflight.safety_checks);
  e.Strings(pf, "verificationSteps", plan.preflight.verification_steps);
  e.Value(r, "preflight", pf);
  return e.Canonical();
}

std::string ComputeResourceVersion(const FleetResource& resource,
                                   const std::vector<Capability>& catalogue) {
  return Digest("resource:sha256:", ResourceVersionEnvelope(resource, catalogue), 24);
}

std::string ComputePolicyVersion(const Capability& capability) {
  return Digest("policy:sha256:", PolicyVersionEnvelope(capability), 24);
}

std::string ComputeActionId(const ActionPlan& plan, const ActionRequest& request) {
  return Digest("act_", ActionIdEnvelope(plan, request), 32);
}

std::string ComputePlanHash(const ActionPlan& plan, const ActionRequest& request) {
  return Digest("sha256:", PlanHashEnvelope(plan, request), 64);
}

}  // namespace pulse::core
