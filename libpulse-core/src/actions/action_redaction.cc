#include "pulse/core/actions/action_redaction.h"

#include <utility>

#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/json/json.h"

namespace pulse::core {
namespace {

constexpr JsonLimits kParamsLimits{1 << 20, 64};

void RedactValue(rapidjson::Value& value, rapidjson::Document::AllocatorType& alloc) {
  if (value.IsString()) {
    const std::string redacted = RedactSecrets(StringViewOf(value));
    value.SetString(redacted.data(), static_cast<rapidjson::SizeType>(redacted.size()), alloc);
    return;
  }
  if (value.IsArray()) {
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      RedactValue(value[i], alloc);
    }
    return;
  }
  if (!value.IsObject()) {
    return;
  }
  // Index-based: iterating a non-const object trips clang's -Wambiguous-reversed-operator.
  rapidjson::Value::MemberIterator it = value.MemberBegin();
  for (rapidjson::SizeType i = 0; i < value.MemberCount(); ++i) {
    rapidjson::Value::Member& member = it[i];
    if (NamesSecret(StringViewOf(member.name))) {
      member.value.SetString(kRedactedSecret.data(),
                             static_cast<rapidjson::SizeType>(kRedactedSecret.size()), alloc);
    } else {
      RedactValue(member.value, alloc);
    }
  }
}

void RedactAll(std::vector<std::string>& texts) {
  for (std::string& text : texts) {
    text = RedactSecrets(text);
  }
}

}  // namespace

std::string RedactParamsJson(std::string_view params_json) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(params_json, kParamsLimits);
  if (!doc.ok() || !doc->IsObject()) {
    return RedactSecrets(params_json);
  }
  RedactValue(*doc, doc->GetAllocator());
  return ToJsonString(*doc);
}

ActionRecord RedactedActionRecord(ActionRecord record) {
  record.request.params_json = RedactParamsJson(record.request.params_json);
  record.request.reason = RedactSecrets(record.request.reason);
  ActionPlan& plan = record.plan;
  plan.params_json = RedactParamsJson(plan.params_json);
  plan.message = RedactSecrets(plan.message);
  plan.preflight.intended_change = RedactSecrets(plan.preflight.intended_change);
  plan.preflight.dry_run_summary = RedactSecrets(plan.preflight.dry_run_summary);
  RedactAll(plan.preflight.safety_checks);
  RedactAll(plan.preflight.verification_steps);
  for (ApprovalRecord& approval : record.approvals) {
    approval.reason = RedactSecrets(approval.reason);
  }
  if (record.result.has_value()) {
    record.result->execution.summary = RedactSecrets(record.result->execution.summary);
    record.result->verification.summary = RedactSecrets(record.result->verification.summary);
    record.result->error_message = RedactSecrets(record.result->error_message);
  }
  return record;
}

}  // namespace pulse::core
