#include "pulse/core/actions/action_json.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "json_reader.h"
#include "pulse/core/json/json.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

using action_internal::IsCleanText;
using action_internal::JsonWriter;
using action_internal::ObjectReader;
using action_internal::StringOf;
using action_internal::WriteKey;
using action_internal::WriteRawJson;
using action_internal::WriteString;
using action_internal::WriteStringArray;
using action_internal::WriteTime;

constexpr std::size_t kText = kMaxActionTextBytes;  // free-text members
constexpr std::size_t kId = kMaxActionIdBytes;
constexpr std::size_t kLongText = 4096;  // messages and summaries
constexpr std::size_t kMaxListItems = 256;
constexpr std::string_view kActorChars = "._:@/+=-";

// ---- writers ------------------------------------------------------------------------------

void Member(JsonWriter& w, std::string_view key, std::string_view value) {
  WriteKey(w, key);
  WriteString(w, value);
}

void OptionalMember(JsonWriter& w, std::string_view key, std::string_view value) {
  if (!value.empty()) {
    Member(w, key, value);
  }
}

void BoolMember(JsonWriter& w, std::string_view key, bool value) {
  WriteKey(w, key);
  w.Bool(value);
}

void TimeMember(JsonWriter& w, std::string_view key, absl::Time t) {
  WriteKey(w, key);
  WriteTime(w, t);
}

void WriteActor(JsonWriter& w, const ActionActor& actor) {
  w.StartObject();
  Member(w, "kind", ToString(actor.kind));
  Member(w, "id", actor.id);
  w.EndObject();
}

void WriteRequest(JsonWriter& w, const ActionRequest& r) {
  w.StartObject();
  Member(w, "requestId", r.request_id);
  Member(w, "resourceId", r.resource_id);
  Member(w, "capabilityName", r.capability_name);
  WriteKey(w, "params");
  WriteRawJson(w, r.params_json);
  Member(w, "reason", r.reason);
  Member(w, "requestedBy", r.actor.id);
  WriteKey(w, "actor");
  WriteActor(w, r.actor);
  w.EndObject();
}

void WritePlan(JsonWriter& w, const ActionPlan& p) {
  w.StartObject();
  Member(w, "actionId", p.action_id);
  Member(w, "requestId", p.request_id);
  Member(w, "resourceId", p.resource_id);
  Member(w, "capabilityName", p.capability_name);
  WriteKey(w, "params");
  WriteRawJson(w, p.params_json);
  BoolMember(w, "allowed", p.allowed);
  BoolMember(w, "requiresApproval", p.requires_approval);
  Member(w, "approvalPolicy", ToString(p.approval_policy));
  WriteKey(w, "approvalRequirement");
  w.StartObject();
  WriteKey(w, "version");
  w.Int(1);
  Member(w, "floor", ToString(p.approval_requirement.floor));
  WriteKey(w, "quorum");
  w.Int(p.approval_requirement.quorum);
  BoolMember(w, "disallowRequester", p.approval_requirement.disallow_requester);
  w.EndObject();
  Member(w, "autoAuthorization", ToString(p.auto_authorization));
  Member(w, "risk", ToString(p.risk));
  WriteKey(w, "predictedBlastRadius");
  WriteStringArray(w, p.predicted_blast_radius);
  BoolMember(w, "rollbackAvailable", p.rollback_available);
  Member(w, "message", p.message);
  TimeMember(w, "plannedAt", p.planned_at);
  TimeMember(w, "expiresAt", p.expires_at);
  Member(w, "resourceVersion", p.resource_version);
  Member(w, "policyVersion", p.policy_version);
  Member(w, "planHash", p.plan_hash);
  WriteKey(w, "preflight");
  w.StartObject();
  Member(w, "target", p.preflight.target);
  Member(w, "currentState", p.preflight.current_state);
  Member(w, "intendedChange", p.preflight.intended_change);
  BoolMember(w, "dryRunAvailable", p.preflight.dry_run_available);
  Member(w, "dryRunSummary", p.preflight.dry_run_summary);
  WriteKey(w, "safetyChecks");
  WriteStringArray(w, p.preflight.safety_checks);
  WriteKey(w, "verificationSteps");
  WriteStringArray(w, p.preflight.verification_steps);
  w.EndObject();
  w.EndObject();
}

void WriteApproval(JsonWriter& w, const ApprovalRecord& a) {
  w.StartObject();
  WriteKey(w, "actor");
  WriteActor(w, a.actor);
  Member(w, "outcome", ToString(a.outcome));
  OptionalMember(w, "reason", a.reason);
  TimeMember(w, "timestamp", a.at);
  Member(w, "planHash", a.plan_hash);
  w.EndObject();
}

void WriteResult(JsonWriter& w, const ActionExecutionResult& r) {
  w.StartObject();
  WriteKey(w, "version");
  w.Int(2);
  WriteKey(w, "execution");
  w.StartObject();
  Member(w, "status", ToString(r.execution.status));
  OptionalMember(w, "reasonCode", r.execution.reason_code);
  OptionalMember(w, "summary", r.execution.summary);
  w.EndObject();
  WriteKey(w, "verification");
  w.StartObject();
  Member(w, "status", ToString(r.verification.status));
  Member(w, "evidenceClass", ToString(r.verification.evidence_class));
  OptionalMember(w, "reasonCode", r.verification.reason_code);
  OptionalMember(w, "summary", r.verification.summary);
  OptionalMember(w, "observerId", r.verification.observer_id);
  if (r.verification.observed_at.has_value()) {
    TimeMember(w, "observedAt", *r.verification.observed_at);
  }
  w.EndObject();
  OptionalMember(w, "errorMessage", r.error_message);
  BoolMember(w, "dispatched", r.dispatched);
  OptionalMember(w, "executorId", r.executor_id);
  if (r.started_at.has_value()) {
    TimeMember(w, "startedAt", *r.started_at);
  }
  TimeMember(w, "finishedAt", r.finished_at);
  w.EndObject();
}

void WriteEvent(JsonWriter& w, const ActionLifecycleEvent& e) {
  w.StartObject();
  Member(w, "actionId", e.action_id);
  WriteKey(w, "sequence");
  w.Int64(e.sequence);
  TimeMember(w, "timestamp", e.at);
  Member(w, "state", ToString(e.state));
  Member(w, "kind", ToString(e.kind));
  if (e.decision_revision.has_value()) {
    WriteKey(w, "decisionRevision");
    w.Uint(*e.decision_revision);
  }
  if (e.decision.has_value()) {
    Member(w, "decision", ToString(*e.decision));
  }
  if (e.actor.has_value()) {
    WriteKey(w, "actor");
    WriteActor(w, *e.actor);
  }
  OptionalMember(w, "message", e.message);
  w.EndObject();
}

template <class F>
std::string Render(F&& write) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  write(w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// ---- readers ------------------------------------------------------------------------------

absl::StatusOr<rapidjson::Document> ParseBody(std::string_view json, std::size_t max_bytes,
                                              std::size_t max_depth) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc,
                         ParseJson(json, JsonLimits{max_bytes, max_depth}));
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError("the body must be a single JSON object");
  }
  return doc;
}

// Compact JSON text of a params object, or an error.
absl::StatusOr<std::string> ParamsText(const rapidjson::Value* v, std::string_view what) {
  if (v == nullptr) {
    return std::string("{}");
  }
  if (!v->IsObject()) {
    return absl::InvalidArgumentError(
        absl::StrCat(action_internal::Sv(what), ".params must be a JSON object"));
  }
  return CanonicalJson(*v);
}

template <class E, class Parse>
E ReadEnum(ObjectReader& r, std::string_view key, Parse parse, E fallback) {
  return r.Enum<E>(key, parse, fallback);
}

absl::StatusOr<ActionActor> ReadActor(const rapidjson::Value* v, std::string what) {
  if (v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is required"));
  }
  ObjectReader r(*v, what);
  ActionActor actor;
  actor.kind = ReadEnum<ActorKind>(
      r, "kind", [](std::string_view t) { return ParseActorKind(t); }, ActorKind::kHuman);
  actor.id = r.Token("id", kId, kActorChars);
  PULSE_RETURN_IF_ERROR(r.Finish());
  return actor;
}

absl::StatusOr<ActionRequest> ReadRequest(const rapidjson::Value& v) {
  ObjectReader r(v, "request");
  ActionRequest req;
  req.request_id = r.String("requestId", kId);
  req.resource_id = r.String("resourceId", 256);
  req.capability_name = r.String("capabilityName", 64);
  const rapidjson::Value* params = r.Member("params", true);
  req.reason = r.String("reason", kText);
  const std::string requested_by = r.String("requestedBy", kId);
  const rapidjson::Value* actor = r.Member("actor", true);
  PULSE_RETURN_IF_ERROR(r.Finish());
  PULSE_ASSIGN_OR_RETURN(req.params_json, ParamsText(params, "request"));
  PULSE_ASSIGN_OR_RETURN(req.actor, ReadActor(actor, "request.actor"));
  if (requested_by != req.actor.id) {
    return absl::InvalidArgumentError("request.requestedBy must equal request.actor.id");
  }
  return req;
}

absl::StatusOr<ActionPlan> ReadPlan(const rapidjson::Value& v) {
  ObjectReader r(v, "plan");
  ActionPlan p;
  p.action_id = r.Token("actionId", kId, "_-");
  p.request_id = r.String("requestId", kId);
  p.resource_id = r.String("resourceId", 256);
  p.capability_name = r.String("capabilityName", 64);
  const rapidjson::Value* params = r.Member("params", true);
  p.allowed = r.Bool("allowed");
  p.requires_approval = r.Bool("requiresApproval");
  p.approval_policy = ReadEnum<ApprovalLevel>(
      r, "approvalPolicy", [](std::string_view t) { return ParseApprovalLevel(t); },
      ApprovalLevel::kAdmin);
  const rapidjson::Value* requirement = r.Member("approvalRequirement", true);
  p.auto_authorization = ReadEnum<AutoAuthorization>(
      r, "autoAuthorization", [](std::string_view t) { return ParseAutoAuthorization(t); },
      AutoAuthorization::kNever);
  p.risk = ReadEnum<ActionRisk>(
      r, "risk", [](std::string_view t) { return ParseActionRisk(t); }, ActionRisk::kMedium);
  p.predicted_blast_radius = r.StringArray("predictedBlastRadius", kMaxListItems, 256, true);
  p.rollback_available = r.Bool("rollbackAvailable");
  p.message = r.OptionalString("message", kLongText).value_or("");
  p.planned_at = r.Time("plannedAt");
  p.expires_at = r.Time("expiresAt");
  p.resource_version = r.String("resourceVersion", 128);
  p.policy_version = r.String("policyVersion", 128);
  p.plan_hash = r.String("planHash", 128);
  const rapidjson::Value* preflight = r.Member("preflight", true);
  PULSE_RETURN_IF_ERROR(r.Finish());
  PULSE_ASSIGN_OR_RETURN(p.params_json, ParamsText(params, "plan"));

  ObjectReader q(*requirement, "plan.approvalRequirement");
  q.Int("version", 1, 1);
  p.approval_requirement.floor = ReadEnum<ApprovalLevel>(
      q, "floor", [](std::string_view t) { return ParseApprovalLevel(t); }, ApprovalLevel::kAdmin);
  p.approval_requirement.quorum = static_cast<int>(q.Int("quorum", 1, 16));
  p.approval_requirement.disallow_requester = q.Bool("disallowRequester");
  PULSE_RETURN_IF_ERROR(q.Finish());

  ObjectReader f(*preflight, "plan.preflight");
  p.preflight.target = f.OptionalString("target", 256).value_or("");
  p.preflight.current_state = f.OptionalString("currentState", kText).value_or("");
  p.preflight.intended_change = f.OptionalString("intendedChange", kLongText).value_or("");
  p.preflight.dry_run_available = f.Bool("dryRunAvailable");
  p.preflight.dry_run_summary = f.OptionalString("dryRunSummary", kLongText).value_or("");
  p.preflight.safety_checks = f.StringArray("safetyChecks", kMaxListItems, kText, false);
  p.preflight.verification_steps = f.StringArray("verificationSteps", kMaxListItems, kText, false);
  PULSE_RETURN_IF_ERROR(f.Finish());
  if (p.planned_at > p.expires_at) {
    return absl::InvalidArgumentError("plan.expiresAt precedes plan.plannedAt");
  }
  return p;
}

absl::StatusOr<ApprovalRecord> ReadApproval(const rapidjson::Value& v) {
  ObjectReader r(v, "approval");
  ApprovalRecord a;
  const rapidjson::Value* actor = r.Member("actor", true);
  a.outcome = ReadEnum<DecisionOutcome>(
      r, "outcome", [](std::string_view t) { return ParseDecisionOutcome(t); },
      DecisionOutcome::kRejected);
  a.reason = r.OptionalString("reason", kText).value_or("");
  a.at = r.Time("timestamp");
  a.plan_hash = r.String("planHash", 128);
  PULSE_RETURN_IF_ERROR(r.Finish());
  PULSE_ASSIGN_OR_RETURN(a.actor, ReadActor(actor, "approval.actor"));
  return a;
}

absl::StatusOr<ActionExecutionResult> ReadResult(const rapidjson::Value& v) {
  ObjectReader r(v, "result");
  ActionExecutionResult res;
  r.Int("version", 2, 2);
  const rapidjson::Value* execution = r.Member("execution", true);
  const rapidjson::Value* verification = r.Member("verification", true);
  res.error_message = r.OptionalString("errorMessage", kLongText).value_or("");
  res.dispatched = r.Bool("dispatched");
  res.executor_id = r.OptionalString("executorId", kId).value_or("");
  res.started_at = r.OptionalTime("startedAt");
  res.finished_at = r.Time("finishedAt");
  PULSE_RETURN_IF_ERROR(r.Finish());

  ObjectReader e(*execution, "result.execution");
  res.execution.status = ReadEnum<ExecutionStatus>(
      e, "status", [](std::string_view t) { return ParseExecutionStatus(t); },
      ExecutionStatus::kNotRun);
  res.execution.reason_code = e.OptionalString("reasonCode", 128).value_or("");
  res.execution.summary = e.OptionalString("summary", kLongText).value_or("");
  PULSE_RETURN_IF_ERROR(e.Finish());

  ObjectReader o(*verification, "result.verification");
  res.verification.status = ReadEnum<VerificationStatus>(
      o, "status", [](std::string_view t) { return ParseVerificationStatus(t); },
      VerificationStatus::kNotAttempted);
  res.verification.evidence_class = ReadEnum<EvidenceClass>(
      o, "evidenceClass", [](std::string_view t) { return ParseEvidenceClass(t); },
      EvidenceClass::kNone);
  res.verification.reason_code = o.OptionalString("reasonCode", 128).value_or("");
  res.verification.summary = o.OptionalString("summary", kLongText).value_or("");
  res.verification.observer_id = o.OptionalString("observerId", kId).value_or("");
  res.verification.observed_at = o.OptionalTime("observedAt");
  PULSE_RETURN_IF_ERROR(o.Finish());
  return res;
}

absl::StatusOr<ActionLifecycleEvent> ReadEvent(const rapidjson::Value& v) {
  ObjectReader r(v, "event");
  ActionLifecycleEvent e;
  e.action_id = r.Token("actionId", kId, "_-");
  e.sequence = r.Int("sequence", 0, INT64_MAX);
  e.at = r.Time("timestamp");
  e.state = ReadEnum<ActionState>(
      r, "state", [](std::string_view t) { return ParseActionState(t); }, ActionState::kPlanned);
  e.kind = ReadEnum<LifecycleEventKind>(
      r, "kind", [](std::string_view t) { return ParseLifecycleEventKind(t); },
      LifecycleEventKind::kTransition);
  std::optional<std::int64_t> revision = r.OptionalInt("decisionRevision", 0, UINT32_MAX);
  if (revision.has_value()) {
    e.decision_revision = static_cast<std::uint32_t>(*revision);
  }
  e.decision = r.OptionalEnum<DecisionOutcome>(
      "decision", [](std::string_view t) { return ParseDecisionOutcome(t); });
  const rapidjson::Value* actor = r.Member("actor", false);
  e.message = r.OptionalString("message", kLongText).value_or("");
  PULSE_RETURN_IF_ERROR(r.Finish());
  if (actor != nullptr) {
    PULSE_ASSIGN_OR_RETURN(e.actor, ReadActor(actor, "event.actor"));
  }
  return e;
}

absl::StatusOr<Capability> ReadCapability(const rapidjson::Value& v) {
  ObjectReader r(v, "capability");
  Capability c;
  c.name = r.String("name", 64);
  c.description = r.OptionalString("description", kMaxCapabilityTextBytes).value_or("");
  c.minimum_approval = ReadEnum<ApprovalLevel>(
      r, "minimumApprovalLevel", [](std::string_view t) { return ParseApprovalLevel(t); },
      ApprovalLevel::kAdmin);
  c.auto_authorization =
      r.OptionalEnum<AutoAuthorization>("autoAuthorization", [](std::string_view t) {
         return ParseAutoAuthorization(t);
       }).value_or(AutoAuthorization::kNever);
  c.risk = r.OptionalEnum<ActionRisk>("risk", [](std::string_view t) {
              return ParseActionRisk(t);
            }).value_or(ActionRisk::kMedium);
  c.supports_rollback = r.OptionalBool("supportsRollback").value_or(false);
  const rapidjson::Value* params = r.Member("params", false);
  PULSE_RETURN_IF_ERROR(r.Finish());
  if (params != nullptr) {
    if (!params->IsArray() || params->Size() > kMaxCapabilityParams) {
      return absl::InvalidArgumentError(absl::StrCat(
          "capability.params must be an array of at most ", kMaxCapabilityParams, " params"));
    }
    for (const auto& item : params->GetArray()) {
      ObjectReader p(item, "capability.params[]");
      CapabilityParam param;
      param.name = p.String("name", 64);
      param.type = ReadEnum<ParamType>(
          p, "type", [](std::string_view t) { return ParseParamType(t); }, ParamType::kString);
      param.required = p.OptionalBool("required").value_or(false);
      param.enum_values = p.StringArray("enum", kMaxParamEnumValues, kMaxParamStringBytes, false);
      param.pattern = p.OptionalString("pattern", kMaxParamPatternBytes).value_or("");
      param.sensitive = p.OptionalBool("isSensitive").value_or(false);
      param.description = p.OptionalString("description", kMaxCapabilityTextBytes).value_or("");
      PULSE_RETURN_IF_ERROR(p.Finish());
      c.params.push_back(std::move(param));
    }
  }
  PULSE_RETURN_IF_ERROR(ValidateCapability(c));
  return c;
}

}  // namespace

absl::StatusOr<ActionRequest> ParsePlanActionBody(std::string_view json, const ActionActor& actor) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc,
                         ParseBody(json, kMaxActionBodyBytes, kMaxParamsDepth + 1));
  ObjectReader r(doc, "body");
  ActionRequest req;
  req.request_id = r.String("requestId", kId);
  req.resource_id = r.String("resourceId", 256);
  req.capability_name = r.String("capabilityName", 64);
  const rapidjson::Value* params = r.Member("params", false);
  req.reason = r.String("reason", kText);
  r.OptionalString("requestedBy", kId);  // ignored: the requester is the authenticated actor
  PULSE_RETURN_IF_ERROR(r.Finish());
  if (params != nullptr && !params->IsObject()) {
    return absl::InvalidArgumentError("body.params must be a JSON object");
  }
  req.params_json = params == nullptr ? std::string("{}") : ToJsonString(*params);
  req.actor = actor;
  return req;
}

absl::StatusOr<DecisionBody> ParseDecisionBody(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(json, kMaxActionBodyBytes, 2));
  ObjectReader r(doc, "body");
  DecisionBody body;
  body.outcome = ReadEnum<DecisionOutcome>(
      r, "outcome", [](std::string_view t) { return ParseDecisionOutcome(t); },
      DecisionOutcome::kRejected);
  body.reason = r.OptionalString("reason", kText).value_or("");
  body.plan_hash = r.OptionalString("planHash", 128);
  PULSE_RETURN_IF_ERROR(r.Finish());
  return body;
}

absl::StatusOr<ExecuteBody> ParseExecuteBody(std::string_view json) {
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return ExecuteBody{};
  }
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(json, kMaxActionBodyBytes, 2));
  ObjectReader r(doc, "body");
  ExecuteBody body;
  body.reason = r.OptionalString("reason", kText).value_or("");
  body.plan_hash = r.OptionalString("planHash", 128);
  PULSE_RETURN_IF_ERROR(r.Finish());
  return body;
}

std::string ActionPlanToJson(const ActionPlan& plan) {
  return Render([&](JsonWriter& w) { WritePlan(w, plan); });
}

std::string ActionRecordToJson(const ActionRecord& record) {
  return Render([&](JsonWriter& w) {
    w.StartObject();
    Member(w, "id", record.id());
    TimeMember(w, "createdAt", record.created_at);
    TimeMember(w, "updatedAt", record.updated_at);
    Member(w, "state", ToString(record.state));
    WriteKey(w, "decisionRevision");
    w.Uint(record.decision_revision);
    WriteKey(w, "request");
    WriteRequest(w, record.request);
    WriteKey(w, "plan");
    WritePlan(w, record.plan);
    WriteKey(w, "approvals");
    w.StartArray();
    for (const ApprovalRecord& a : record.approvals) {
      WriteApproval(w, a);
    }
    w.EndArray();
    if (record.result.has_value()) {
      WriteKey(w, "result");
      WriteResult(w, *record.result);
    }
    WriteKey(w, "verificationOutcome");
    w.StartObject();
    Member(w, "status", LegacyVerificationOutcome(record.result));
    w.EndObject();
    w.EndObject();
  });
}

absl::StatusOr<ActionRecord> ParseActionRecordJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc,
                         ParseBody(json, kMaxActionRecordBytes, kMaxParamsDepth + 3));
  ObjectReader r(doc, "record");
  ActionRecord record;
  const std::string id = r.Token("id", kId, "_-");
  record.created_at = r.Time("createdAt");
  record.updated_at = r.Time("updatedAt");
  record.state = ReadEnum<ActionState>(
      r, "state", [](std::string_view t) { return ParseActionState(t); }, ActionState::kPlanned);
  record.decision_revision = static_cast<std::uint32_t>(r.Int("decisionRevision", 0, 64));
  const rapidjson::Value* request = r.Member("request", true);
  const rapidjson::Value* plan = r.Member("plan", true);
  const rapidjson::Value* approvals = r.Member("approvals", true);
  const rapidjson::Value* result = r.Member("result", false);
  const rapidjson::Value* outcome = r.Member("verificationOutcome", true);
  PULSE_RETURN_IF_ERROR(r.Finish());
  PULSE_ASSIGN_OR_RETURN(record.request, ReadRequest(*request));
  PULSE_ASSIGN_OR_RETURN(record.plan, ReadPlan(*plan));
  if (!approvals->IsArray() || approvals->Size() > 64) {
    return absl::InvalidArgumentError("record.approvals must be an array of at most 64");
  }
  for (const auto& a : approvals->GetArray()) {
    PULSE_ASSIGN_OR_RETURN(ApprovalRecord approval, ReadApproval(a));
    record.approvals.push_back(std::move(approval));
  }
  if (result != nullptr) {
    PULSE_ASSIGN_OR_RETURN(record.result, ReadResult(*result));
  }
  ObjectReader o(*outcome, "record.verificationOutcome");
  const std::string legacy = o.String("status", 32);
  PULSE_RETURN_IF_ERROR(o.Finish());

  if (id != record.plan.action_id) {
    return absl::InvalidArgumentError("record.id differs from plan.actionId");
  }
  if (record.plan.request_id != record.request.request_id ||
      record.plan.resource_id != record.request.resource_id ||
      record.plan.capability_name != record.request.capability_name ||
      record.plan.params_json != record.request.params_json) {
    return absl::InvalidArgumentError("the plan does not match its request");
  }
  if (record.decision_revision != record.approvals.size()) {
    return absl::InvalidArgumentError("decisionRevision differs from the number of approvals");
  }
  if (legacy != LegacyVerificationOutcome(record.result)) {
    return absl::InvalidArgumentError("verificationOutcome contradicts the result");
  }
  return record;
}

std::string LifecycleEventToJson(const ActionLifecycleEvent& event) {
  return Render([&](JsonWriter& w) { WriteEvent(w, event); });
}

absl::StatusOr<ActionLifecycleEvent> ParseLifecycleEventJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(json, kMaxActionBodyBytes, 3));
  return ReadEvent(doc);
}

std::string CapabilityToJson(const Capability& c) {
  return Render([&](JsonWriter& w) {
    w.StartObject();
    Member(w, "name", c.name);
    Member(w, "description", c.description);
    Member(w, "minimumApprovalLevel", ToString(c.minimum_approval));
    Member(w, "autoAuthorization", ToString(c.auto_authorization));
    Member(w, "risk", ToString(c.risk));
    BoolMember(w, "supportsRollback", c.supports_rollback);
    WriteKey(w, "params");
    w.StartArray();
    for (const CapabilityParam& p : c.params) {
      w.StartObject();
      Member(w, "name", p.name);
      Member(w, "type", ToString(p.type));
      BoolMember(w, "required", p.required);
      if (!p.enum_values.empty()) {
        WriteKey(w, "enum");
        WriteStringArray(w, p.enum_values);
      }
      OptionalMember(w, "pattern", p.pattern);
      BoolMember(w, "isSensitive", p.sensitive);
      OptionalMember(w, "description", p.description);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  });
}

absl::StatusOr<Capability> ParseCapabilityJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(json, kMaxActionBodyBytes, 4));
  return ReadCapability(doc);
}

absl::StatusOr<std::vector<Capability>> ParseCapabilityCatalogueJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc,
                         ParseJson(json, JsonLimits{kMaxActionRecordBytes, 5}));
  if (!doc.IsArray() || doc.Size() > 256) {
    return absl::InvalidArgumentError("a capability catalogue is an array of at most 256");
  }
  std::vector<Capability> out;
  std::set<std::string> names;
  for (const auto& item : doc.GetArray()) {
    PULSE_ASSIGN_OR_RETURN(Capability c, ReadCapability(item));
    if (!names.insert(c.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("capability '", c.name, "' appears more than once"));
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace pulse::core
