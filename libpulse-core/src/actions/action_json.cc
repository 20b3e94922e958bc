#include "pulse/core/actions/action_json.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/auth/api_token.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/action_codec.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::core {

namespace {

using action_internal::kActionReader;

constexpr std::size_t kText = kMaxActionTextBytes;  // free-text members
constexpr std::size_t kId = kMaxActionIdBytes;
constexpr std::size_t kLongText = 4096;  // messages and summaries
constexpr std::size_t kMaxListItems = 256;
constexpr std::string_view kActorChars = "._:@/+=-";
constexpr JsonPresence kRequired = JsonPresence::kRequired;

// ---- writers ------------------------------------------------------------------------------

// `json` (already valid JSON text) as a nested value. Falls back to {} if it does not parse,
// which cannot happen for canonical params produced by ValidateParams.
void WriteParams(JsonWriter& w, std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(json);
  if (!doc.ok()) {
    w.StartObject();
    w.EndObject();
    return;
  }
  w.Value(*doc);
}

void WriteActor(JsonWriter& w, const ActionActor& actor, bool with_name = true) {
  w.StartObject();
  w.Member("kind", ToString(actor.kind));
  w.Member("id", actor.id);
  if (with_name && !actor.name.empty()) {
    w.Member("name", actor.name);
  }
  w.EndObject();
}

void WriteRequest(JsonWriter& w, const ActionRequest& r) {
  w.StartObject();
  w.Member("requestId", r.request_id);
  w.Member("resourceId", r.resource_id);
  w.Member("capabilityName", r.capability_name);
  w.Key("params");
  WriteParams(w, r.params_json);
  w.Member("reason", r.reason);
  w.Member("requestedBy", r.actor.id);
  w.Key("actor");
  WriteActor(w, r.actor);
  w.MemberIfNotEmpty("approvalPosture", r.approval_posture);
  w.EndObject();
}

void WritePlan(JsonWriter& w, const ActionPlan& p) {
  w.StartObject();
  w.Member("actionId", p.action_id);
  w.Member("requestId", p.request_id);
  w.Member("resourceId", p.resource_id);
  w.Member("capabilityName", p.capability_name);
  w.Key("params");
  WriteParams(w, p.params_json);
  w.Member("allowed", p.allowed);
  w.Member("requiresApproval", p.requires_approval);
  w.Member("approvalPolicy", ToString(p.approval_policy));
  w.Key("approvalRequirement");
  w.StartObject();
  w.Member("version", 1);
  w.Member("floor", ToString(p.approval_requirement.floor));
  w.Member("quorum", p.approval_requirement.quorum);
  w.Member("disallowRequester", p.approval_requirement.disallow_requester);
  w.EndObject();
  w.Member("autoAuthorization", ToString(p.auto_authorization));
  w.Member("risk", ToString(p.risk));
  w.Key("predictedBlastRadius");
  w.StringArray(p.predicted_blast_radius);
  w.Member("rollbackAvailable", p.rollback_available);
  w.Member("message", p.message);
  w.TimeMember("plannedAt", p.planned_at);
  w.TimeMember("expiresAt", p.expires_at);
  w.Member("resourceVersion", p.resource_version);
  w.Member("policyVersion", p.policy_version);
  w.Member("planHash", p.plan_hash);
  w.Key("preflight");
  w.StartObject();
  w.Member("target", p.preflight.target);
  w.Member("currentState", p.preflight.current_state);
  w.Member("intendedChange", p.preflight.intended_change);
  w.Member("dryRunAvailable", p.preflight.dry_run_available);
  w.Member("dryRunSummary", p.preflight.dry_run_summary);
  w.Key("safetyChecks");
  w.StringArray(p.preflight.safety_checks);
  w.Key("verificationSteps");
  w.StringArray(p.preflight.verification_steps);
  w.EndObject();
  w.EndObject();
}

void WriteResult(JsonWriter& w, const ActionExecutionResult& r) {
  w.StartObject();
  w.Member("version", 2);
  w.Key("execution");
  w.StartObject();
  w.Member("status", ToString(r.execution.status));
  w.MemberIfNotEmpty("reasonCode", r.execution.reason_code);
  w.MemberIfNotEmpty("summary", r.execution.summary);
  w.EndObject();
  w.Key("verification");
  w.StartObject();
  w.Member("status", ToString(r.verification.status));
  w.Member("evidenceClass", ToString(r.verification.evidence_class));
  w.MemberIfNotEmpty("reasonCode", r.verification.reason_code);
  w.MemberIfNotEmpty("summary", r.verification.summary);
  w.MemberIfNotEmpty("observerId", r.verification.observer_id);
  w.TimeMemberIfSet("observedAt", r.verification.observed_at);
  w.EndObject();
  w.MemberIfNotEmpty("errorMessage", r.error_message);
  w.Member("dispatched", r.dispatched);
  w.MemberIfNotEmpty("executorId", r.executor_id);
  w.TimeMemberIfSet("startedAt", r.started_at);
  w.TimeMember("finishedAt", r.finished_at);
  w.EndObject();
}

void WriteEvent(JsonWriter& w, const ActionLifecycleEvent& e) {
  w.StartObject();
  w.Member("actionId", e.action_id);
  w.Member("sequence", e.sequence);
  w.TimeMember("timestamp", e.at);
  w.Member("state", ToString(e.state));
  w.Member("kind", ToString(e.kind));
  if (e.decision_revision.has_value()) {
    w.Member("decisionRevision", *e.decision_revision);
  }
  if (e.decision.has_value()) {
    w.Member("decision", ToString(*e.decision));
  }
  if (e.actor.has_value()) {
    w.Key("actor");
    WriteActor(w, *e.actor);
  }
  w.MemberIfNotEmpty("message", e.message);
  w.EndObject();
}

template <class F>
std::string Render(F&& write) {
  JsonWriter w;
  write(w);
  return w.Take();
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
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), ".params must be a JSON object"));
  }
  return CanonicalJson(*v);
}

// A required id or token (see IsToken).
std::string Token(JsonObjectReader& r, std::string_view key, std::size_t max_bytes,
                  std::string_view extra) {
  std::string s = r.String(key, {max_bytes, kRequired}).value_or("");
  if (!s.empty() && !action_internal::IsToken(s, max_bytes, extra)) {
    r.Fail(key, "contains characters outside its allowed set");
  }
  return s;
}

absl::StatusOr<ActionActor> ReadActor(const rapidjson::Value* v, const std::string& what) {
  if (v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is required"));
  }
  JsonObjectReader r(*v, what, kActionReader);
  ActionActor actor;
  actor.kind = r.Enum("kind", ParseActorKind, kRequired).value_or(ActorKind::kHuman);
  actor.id = Token(r, "id", kId, kActorChars);
  actor.name = r.String("name", {kMaxApiTokenNameBytes}).value_or("");
  PULSE_RETURN_IF_ERROR(r.Finish());
  return actor;
}

absl::StatusOr<ActionRequest> ReadRequest(const rapidjson::Value& v) {
  JsonObjectReader r(v, "request", kActionReader);
  ActionRequest req;
  req.request_id = r.String("requestId", {kId, kRequired}).value_or("");
  req.resource_id = r.String("resourceId", {256, kRequired}).value_or("");
  req.capability_name = r.String("capabilityName", {64, kRequired}).value_or("");
  const rapidjson::Value* params = r.Member("params", kRequired);
  req.reason = r.String("reason", {kText, kRequired}).value_or("");
  const std::string requested_by = r.String("requestedBy", {kId, kRequired}).value_or("");
  const rapidjson::Value* actor = r.Member("actor", kRequired);
  req.approval_posture = r.String("approvalPosture", {64}).value_or("");
  PULSE_RETURN_IF_ERROR(r.Finish());
  PULSE_ASSIGN_OR_RETURN(req.params_json, ParamsText(params, "request"));
  PULSE_ASSIGN_OR_RETURN(req.actor, ReadActor(actor, "request.actor"));
  if (requested_by != req.actor.id) {
    return absl::InvalidArgumentError("request.requestedBy must equal request.actor.id");
  }
  return req;
}

absl::StatusOr<ActionPlan> ReadPlan(const rapidjson::Value& v) {
  JsonObjectReader r(v, "plan", kActionReader);
  ActionPlan p;
  p.action_id = Token(r, "actionId", kId, "_-");
  p.request_id = r.String("requestId", {kId, kRequired}).value_or("");
  p.resource_id = r.String("resourceId", {256, kRequired}).value_or("");
  p.capability_name = r.String("capabilityName", {64, kRequired}).value_or("");
  const rapidjson::Value* params = r.Member("params", kRequired);
  p.allowed = r.Bool("allowed", kRequired).value_or(false);
  p.requires_approval = r.Bool("requiresApproval", kRequired).value_or(false);
  p.approval_policy =
      r.Enum("approvalPolicy", ParseApprovalLevel, kRequired).value_or(ApprovalLevel::kAdmin);
  const rapidjson::Value* requirement = r.Member("approvalRequirement", kRequired);
  p.auto_authorization = r.Enum("autoAuthorization", ParseAutoAuthorization, kRequired)
                             .value_or(AutoAuthorization::kNever);
  p.risk = r.Enum("risk", ParseActionRisk, kRequired).value_or(ActionRisk::kMedium);
  p.predicted_blast_radius = r.StringArray("predictedBlastRadius", kMaxListItems, 256, kRequired);
  p.rollback_available = r.Bool("rollbackAvailable", kRequired).value_or(false);
  p.message = r.String("message", {kLongText}).value_or("");
  p.planned_at = r.Time("plannedAt", kRequired).value_or(absl::UnixEpoch());
  p.expires_at = r.Time("expiresAt", kRequired).value_or(absl::UnixEpoch());
  p.resource_version = r.String("resourceVersion", {128, kRequired}).value_or("");
  p.policy_version = r.String("policyVersion", {128, kRequired}).value_or("");
  p.plan_hash = r.String("planHash", {128, kRequired}).value_or("");
  const rapidjson::Value* preflight = r.Member("preflight", kRequired);
  PULSE_RETURN_IF_ERROR(r.Finish());
  PULSE_ASSIGN_OR_RETURN(p.params_json, ParamsText(params, "plan"));

  JsonObjectReader q(*requirement, "plan.approvalRequirement", kActionReader);
  q.Int("version", 1, 1, kRequired);
  p.approval_requirement.floor =
      q.Enum("floor", ParseApprovalLevel, kRequired).value_or(ApprovalLevel::kAdmin);
  p.approval_requirement.quorum = static_cast<int>(q.Int("quorum", 1, 16, kRequired).value_or(1));
  p.approval_requirement.disallow_requester =
      q.Bool("disallowRequester", kRequired).value_or(false);
  PULSE_RETURN_IF_ERROR(q.Finish());

  JsonObjectReader f(*preflight, "plan.preflight", kActionReader);
  p.preflight.target = f.String("target", {256}).value_or("");
  p.preflight.current_state = f.String("currentState", {kText}).value_or("");
  p.preflight.intended_change = f.String("intendedChange", {kLongText}).value_or("");
  p.preflight.dry_run_available = f.Bool("dryRunAvailable", kRequired).value_or(false);
  p.preflight.dry_run_summary = f.String("dryRunSummary", {kLongText}).value_or("");
  p.preflight.safety_checks = f.StringArray("safetyChecks", kMaxListItems, kText);
  p.preflight.verification_steps = f.StringArray("verificationSteps", kMaxListItems, kText);
  PULSE_RETURN_IF_ERROR(f.Finish());
  if (p.planned_at > p.expires_at) {
    return absl::InvalidArgumentError("plan.expiresAt precedes plan.plannedAt");
  }
  return p;
}

absl::StatusOr<ApprovalRecord> ReadApproval(const rapidjson::Value& v) {
  JsonObjectReader r(v, "approval", kActionReader);
  ApprovalRecord a;
  const rapidjson::Value* actor = r.Member("actor", kRequired);
  a.outcome =
      r.Enum("outcome", ParseDecisionOutcome, kRequired).value_or(DecisionOutcome::kRejected);
  a.reason = r.String("reason", {kText}).value_or("");
  a.at = r.Time("timestamp", kRequired).value_or(absl::UnixEpoch());
  a.plan_hash = r.String("planHash", {128, kRequired}).value_or("");
  PULSE_RETURN_IF_ERROR(r.Finish());
  PULSE_ASSIGN_OR_RETURN(a.actor, ReadActor(actor, "approval.actor"));
  return a;
}

absl::StatusOr<ActionExecutionResult> ReadResult(const rapidjson::Value& v) {
  JsonObjectReader r(v, "result", kActionReader);
  ActionExecutionResult res;
  r.Int("version", 2, 2, kRequired);
  const rapidjson::Value* execution = r.Member("execution", kRequired);
  const rapidjson::Value* verification = r.Member("verification", kRequired);
  res.error_message = r.String("errorMessage", {kLongText}).value_or("");
  res.dispatched = r.Bool("dispatched", kRequired).value_or(false);
  res.executor_id = r.String("executorId", {kId}).value_or("");
  res.started_at = r.Time("startedAt");
  res.finished_at = r.Time("finishedAt", kRequired).value_or(absl::UnixEpoch());
  PULSE_RETURN_IF_ERROR(r.Finish());

  JsonObjectReader e(*execution, "result.execution", kActionReader);
  res.execution.status =
      e.Enum("status", ParseExecutionStatus, kRequired).value_or(ExecutionStatus::kNotRun);
  res.execution.reason_code = e.String("reasonCode", {128}).value_or("");
  res.execution.summary = e.String("summary", {kLongText}).value_or("");
  PULSE_RETURN_IF_ERROR(e.Finish());

  JsonObjectReader o(*verification, "result.verification", kActionReader);
  res.verification.status = o.Enum("status", ParseVerificationStatus, kRequired)
                                .value_or(VerificationStatus::kNotAttempted);
  res.verification.evidence_class =
      o.Enum("evidenceClass", ParseEvidenceClass, kRequired).value_or(EvidenceClass::kNone);
  res.verification.reason_code = o.String("reasonCode", {128}).value_or("");
  res.verification.summary = o.String("summary", {kLongText}).value_or("");
  res.verification.observer_id = o.String("observerId", {kId}).value_or("");
  res.verification.observed_at = o.Time("observedAt");
  PULSE_RETURN_IF_ERROR(o.Finish());
  return res;
}

absl::StatusOr<ActionLifecycleEvent> ReadEvent(const rapidjson::Value& v) {
  JsonObjectReader r(v, "event", kActionReader);
  ActionLifecycleEvent e;
  e.action_id = Token(r, "actionId", kId, "_-");
  e.sequence = r.Int("sequence", 0, INT64_MAX, kRequired).value_or(0);
  e.at = r.Time("timestamp", kRequired).value_or(absl::UnixEpoch());
  e.state = r.Enum("state", ParseActionState, kRequired).value_or(ActionState::kPlanned);
  e.kind =
      r.Enum("kind", ParseLifecycleEventKind, kRequired).value_or(LifecycleEventKind::kTransition);
  std::optional<std::int64_t> revision = r.Int("decisionRevision", 0, UINT32_MAX);
  if (revision.has_value()) {
    e.decision_revision = static_cast<std::uint32_t>(*revision);
  }
  e.decision = r.Enum("decision", ParseDecisionOutcome);
  const rapidjson::Value* actor = r.Member("actor");
  e.message = r.String("message", {kLongText}).value_or("");
  PULSE_RETURN_IF_ERROR(r.Finish());
  if (actor != nullptr) {
    PULSE_ASSIGN_OR_RETURN(e.actor, ReadActor(actor, "event.actor"));
  }
  return e;
}

absl::StatusOr<Capability> ReadCapability(const rapidjson::Value& v) {
  JsonObjectReader r(v, "capability", kActionReader);
  Capability c;
  c.name = r.String("name", {64, kRequired}).value_or("");
  c.description = r.String("description", {kMaxCapabilityTextBytes}).value_or("");
  c.minimum_approval =
      r.Enum("minimumApprovalLevel", ParseApprovalLevel, kRequired).value_or(ApprovalLevel::kAdmin);
  c.auto_authorization =
      r.Enum("autoAuthorization", ParseAutoAuthorization).value_or(AutoAuthorization::kNever);
  c.risk = r.Enum("risk", ParseActionRisk).value_or(ActionRisk::kMedium);
  c.supports_rollback = r.Bool("supportsRollback").value_or(false);
  const rapidjson::Value* params = r.Member("params");
  PULSE_RETURN_IF_ERROR(r.Finish());
  if (params != nullptr) {
    if (!params->IsArray() || params->Size() > kMaxCapabilityParams) {
      return absl::InvalidArgumentError(absl::StrCat(
          "capability.params must be an array of at most ", kMaxCapabilityParams, " params"));
    }
    for (const auto& item : params->GetArray()) {
      JsonObjectReader p(item, "capability.params[]", kActionReader);
      CapabilityParam param;
      param.name = p.String("name", {64, kRequired}).value_or("");
      param.type = p.Enum("type", ParseParamType, kRequired).value_or(ParamType::kString);
      param.required = p.Bool("required").value_or(false);
      param.enum_values = p.StringArray("enum", kMaxParamEnumValues, kMaxParamStringBytes);
      param.pattern = p.String("pattern", {kMaxParamPatternBytes}).value_or("");
      param.sensitive = p.Bool("isSensitive").value_or(false);
      param.description = p.String("description", {kMaxCapabilityTextBytes}).value_or("");
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
  JsonObjectReader r(doc, "body", kActionReader);
  ActionRequest req;
  req.request_id = r.String("requestId", {kId, kRequired}).value_or("");
  req.resource_id = r.String("resourceId", {256, kRequired}).value_or("");
  req.capability_name = r.String("capabilityName", {64, kRequired}).value_or("");
  const rapidjson::Value* params = r.Member("params");
  req.reason = r.String("reason", {kText, kRequired}).value_or("");
  r.String("requestedBy", {kId});  // ignored: the requester is the authenticated actor
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
  JsonObjectReader r(doc, "body", kActionReader);
  DecisionBody body;
  body.outcome =
      r.Enum("outcome", ParseDecisionOutcome, kRequired).value_or(DecisionOutcome::kRejected);
  body.reason = r.String("reason", {kText}).value_or("");
  body.plan_hash = r.String("planHash", {128});
  PULSE_RETURN_IF_ERROR(r.Finish());
  return body;
}

absl::StatusOr<ExecuteBody> ParseExecuteBody(std::string_view json) {
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return ExecuteBody{};
  }
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(json, kMaxActionBodyBytes, 2));
  JsonObjectReader r(doc, "body", kActionReader);
  ExecuteBody body;
  body.reason = r.String("reason", {kText}).value_or("");
  body.plan_hash = r.String("planHash", {128});
  PULSE_RETURN_IF_ERROR(r.Finish());
  return body;
}

std::string ActionPlanToJson(const ActionPlan& plan) {
  return Render([&](JsonWriter& w) { WritePlan(w, plan); });
}

void WriteApprovalJson(JsonWriter& w, const ApprovalRecord& approval, ApprovalActorName name) {
  w.StartObject();
  w.Key("actor");
  WriteActor(w, approval.actor, name == ApprovalActorName::kWithName);
  w.Member("outcome", ToString(approval.outcome));
  w.MemberIfNotEmpty("reason", approval.reason);
  w.TimeMember("timestamp", approval.at);
  w.Member("planHash", approval.plan_hash);
  w.EndObject();
}

std::string ActionRecordToJson(const ActionRecord& record) {
  return Render([&](JsonWriter& w) {
    w.StartObject();
    w.Member("id", record.id());
    w.TimeMember("createdAt", record.created_at);
    w.TimeMember("updatedAt", record.updated_at);
    w.Member("state", ToString(record.state));
    w.Member("decisionRevision", record.decision_revision);
    w.Key("request");
    WriteRequest(w, record.request);
    w.Key("plan");
    WritePlan(w, record.plan);
    w.Key("approvals");
    w.StartArray();
    for (const ApprovalRecord& a : record.approvals) {
      WriteApprovalJson(w, a, ApprovalActorName::kWithName);
    }
    w.EndArray();
    if (record.result.has_value()) {
      w.Key("result");
      WriteResult(w, *record.result);
    }
    w.Key("verificationOutcome");
    w.StartObject();
    w.Member("status", LegacyVerificationOutcome(record.result));
    w.EndObject();
    w.EndObject();
  });
}

absl::StatusOr<ActionRecord> ParseActionRecordJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc,
                         ParseBody(json, kMaxActionRecordBytes, kMaxParamsDepth + 3));
  JsonObjectReader r(doc, "record", kActionReader);
  ActionRecord record;
  const std::string id = Token(r, "id", kId, "_-");
  record.created_at = r.Time("createdAt", kRequired).value_or(absl::UnixEpoch());
  record.updated_at = r.Time("updatedAt", kRequired).value_or(absl::UnixEpoch());
  record.state = r.Enum("state", ParseActionState, kRequired).value_or(ActionState::kPlanned);
  record.decision_revision =
      static_cast<std::uint32_t>(r.Int("decisionRevision", 0, 64, kRequired).value_or(0));
  const rapidjson::Value* request = r.Member("request", kRequired);
  const rapidjson::Value* plan = r.Member("plan", kRequired);
  const rapidjson::Value* approvals = r.Member("approvals", kRequired);
  const rapidjson::Value* result = r.Member("result");
  const rapidjson::Value* outcome = r.Member("verificationOutcome", kRequired);
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
  JsonObjectReader o(*outcome, "record.verificationOutcome", kActionReader);
  const std::string legacy = o.String("status", {32, kRequired}).value_or("");
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

std::string ActionExecutionResultToJson(const ActionExecutionResult& result) {
  return Render([&](JsonWriter& w) { WriteResult(w, result); });
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
    w.Member("name", c.name);
    w.Member("description", c.description);
    w.Member("minimumApprovalLevel", ToString(c.minimum_approval));
    w.Member("autoAuthorization", ToString(c.auto_authorization));
    w.Member("risk", ToString(c.risk));
    w.Member("supportsRollback", c.supports_rollback);
    w.Key("params");
    w.StartArray();
    for (const CapabilityParam& p : c.params) {
      w.StartObject();
      w.Member("name", p.name);
      w.Member("type", ToString(p.type));
      w.Member("required", p.required);
      if (!p.enum_values.empty()) {
        w.Key("enum");
        w.StringArray(p.enum_values);
      }
      w.MemberIfNotEmpty("pattern", p.pattern);
      w.Member("isSensitive", p.sensitive);
      w.MemberIfNotEmpty("description", p.description);
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
