#include "pulse/core/errors/agent_error.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core {
namespace {

struct CodeInfo {
  AgentErrorCode code;
  std::string_view name;
  int http_status;
};

using C = AgentErrorCode;

// The single table of agent error codes: wire string and HTTP status.
constexpr std::array<CodeInfo, 77> kCodes = {{
    {C::kInvalidRequest, "invalid_request", 400},
    {C::kMissingScope, "missing_scope", 403},
    {C::kResourceNotFound, "resource_not_found", 404},
    {C::kOperatorStateNotSet, "operator_state_not_set", 404},
    {C::kOperatorStateInvalid, "operator_state_invalid", 400},
    {C::kInvalidFindingRequest, "invalid_finding_request", 400},
    {C::kFindingNotFound, "finding_not_found", 404},
    {C::kFindingActionNotAllowed, "finding_action_not_allowed", 409},
    {C::kPatrolUnavailable, "patrol_unavailable", 503},
    {C::kInvalidAutonomyLevel, "invalid_autonomy_level", 400},
    {C::kInvalidPatrolScope, "invalid_patrol_scope", 400},
    {C::kPatrolScopeUnresolved, "patrol_scope_unresolved", 422},
    {C::kPatrolAlreadyRunning, "patrol_already_running", 409},
    {C::kPatrolRunNotFound, "patrol_run_not_found", 404},
    {C::kInvalidAutopilotAcknowledgement, "invalid_autopilot_acknowledgement", 400},
    {C::kAutopilotAcknowledgementForbidden, "autopilot_acknowledgement_forbidden", 403},
    {C::kAutopilotAcknowledgementNotFound, "autopilot_acknowledgement_not_found", 404},
    {C::kInvalidActionRequest, "invalid_action_request", 400},
    {C::kMockModeEnabled, "mock_mode_enabled", 409},
    {C::kActionActorUnavailable, "action_actor_unavailable", 403},
    {C::kCapabilityNotFound, "capability_not_found", 404},
    {C::kActionExecutionUnavailable, "action_execution_unavailable", 503},
    {C::kActionRefreshNotAllowed, "action_refresh_not_allowed", 409},
    {C::kMissingId, "missing_id", 400},
    {C::kInvalidId, "invalid_id", 400},
    {C::kInvalidActionDecision, "invalid_action_decision", 400},
    {C::kActionNotFound, "action_not_found", 404},
    {C::kActionNotPending, "action_not_pending", 409},
    {C::kActionPlanExpired, "action_plan_expired", 410},
    {C::kActionPlanIdentityMismatch, "action_plan_identity_mismatch", 409},
    {C::kActionApprovalForbidden, "action_approval_forbidden", 403},
    {C::kActionStepUpUnavailable, "action_step_up_unavailable", 403},
    {C::kActionDecisionConflict, "action_decision_conflict", 409},
    {C::kActionSeparationRequired, "action_separation_required", 403},
    {C::kActionReplanRequired, "action_replan_required", 409},
    {C::kActionPlanDrift, "action_plan_drift", 409},
    {C::kActionEmergencyStop, "action_emergency_stop", 423},
    {C::kActionDryRunOnly, "action_dry_run_only", 409},
    {C::kResourceRemediationLocked, "resource_remediation_locked", 423},
    {C::kActionExecutorUnavailable, "action_executor_unavailable", 503},
    {C::kActionExecutionAvailabilityFailed, "action_execution_availability_failed", 503},
    {C::kInvalidActionExecution, "invalid_action_execution", 400},
    {C::kActionNotApproved, "action_not_approved", 409},
    {C::kActionAlreadyExecuting, "action_already_executing", 409},
    {C::kActionExecutionFinal, "action_execution_final", 409},
    {C::kActionExecutionForbidden, "action_execution_forbidden", 403},
    {C::kActionNotExecuting, "action_not_executing", 409},
    {C::kInvalidActionListLimit, "invalid_action_list_limit", 400},
    {C::kInvalidActionListView, "invalid_action_list_view", 400},
    {C::kInvalidActionListCursor, "invalid_action_list_cursor", 400},
    {C::kActionListFailed, "action_list_failed", 500},
    {C::kActionDetailFailed, "action_detail_failed", 500},
    {C::kAssistantNotConfigured, "assistant_not_configured", 503},
    {C::kSessionNotFound, "session_not_found", 404},
    {C::kSessionBusy, "session_busy", 409},
    {C::kQuestionNotFound, "question_not_found", 404},
    {C::kProviderUnavailable, "provider_unavailable", 502},
    {C::kInvalidTokenRequest, "invalid_token_request", 400},
    {C::kTokenNotFound, "token_not_found", 404},
    {C::kTokenManagementForbidden, "token_management_forbidden", 403},
    {C::kSessionNotResumable, "session_not_resumable", 409},
    {C::kAgentTokenRequired, "agent_token_required", 403},
    {C::kAgentHostMismatch, "agent_host_mismatch", 403},
    {C::kHumanTokenRequired, "human_token_required", 403},
    {C::kConsoleNotBuilt, "console_not_built", 404},
    {C::kUnauthorized, "unauthorized", 401},
    {C::kRouteNotFound, "route_not_found", 404},
    {C::kMethodNotAllowed, "method_not_allowed", 405},
    {C::kRequestTooLarge, "request_too_large", 413},
    {C::kUriTooLong, "uri_too_long", 414},
    {C::kInternalError, "internal_error", 500},
    {C::kServiceUnavailable, "service_unavailable", 503},
    {C::kUnsupportedMediaType, "unsupported_media_type", 415},
    {C::kTooManyStreams, "too_many_streams", 429},
    {C::kRequestHeaderTooLarge, "request_header_too_large", 431},
    {C::kRequestTimeout, "request_timeout", 408},
    {C::kCsrfRejected, "csrf_rejected", 403},
}};

const CodeInfo* Find(AgentErrorCode code) {
  for (const auto& info : kCodes) {
    if (info.code == code) {
      return &info;
    }
  }
  return nullptr;
}

void WriteString(rapidjson::Writer<rapidjson::StringBuffer>& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

}  // namespace

const std::vector<AgentErrorCode>& AllAgentErrorCodes() {
  static const std::vector<AgentErrorCode> codes = [] {
    std::vector<AgentErrorCode> out;
    out.reserve(kCodes.size());
    for (const auto& info : kCodes) {
      out.push_back(info.code);
    }
    return out;
  }();
  return codes;
}

std::string_view ToString(AgentErrorCode code) {
  const CodeInfo* info = Find(code);
  return info == nullptr ? std::string_view("invalid_request") : info->name;
}

std::optional<AgentErrorCode> ParseAgentErrorCode(std::string_view text) {
  for (const auto& info : kCodes) {
    if (info.name == text) {
      return info.code;
    }
  }
  return std::nullopt;
}

int HttpStatusFor(AgentErrorCode code) {
  const CodeInfo* info = Find(code);
  return info == nullptr ? 500 : info->http_status;
}

const std::vector<AgentErrorCode>& FindingErrorCodes() {
  static const std::vector<AgentErrorCode> codes = {C::kInvalidFindingRequest, C::kFindingNotFound,
                                                    C::kFindingActionNotAllowed,
                                                    C::kPatrolUnavailable};
  return codes;
}

const std::vector<AgentErrorCode>& PlanErrorCodes() {
  static const std::vector<AgentErrorCode> codes = {
      C::kInvalidActionRequest,   C::kMockModeEnabled,    C::kActionActorUnavailable,
      C::kResourceNotFound,       C::kCapabilityNotFound, C::kActionExecutionUnavailable,
      C::kActionRefreshNotAllowed};
  return codes;
}

const std::vector<AgentErrorCode>& DecideErrorCodes() {
  static const std::vector<AgentErrorCode> codes = {C::kMockModeEnabled,
                                                    C::kMissingId,
                                                    C::kInvalidId,
                                                    C::kInvalidActionDecision,
                                                    C::kActionNotFound,
                                                    C::kActionNotPending,
                                                    C::kActionPlanExpired,
                                                    C::kActionPlanIdentityMismatch,
                                                    C::kActionActorUnavailable,
                                                    C::kActionApprovalForbidden,
                                                    C::kActionStepUpUnavailable,
                                                    C::kActionDecisionConflict,
                                                    C::kActionSeparationRequired,
                                                    C::kActionReplanRequired,
                                                    C::kActionExecutionUnavailable,
                                                    C::kActionPlanDrift,
                                                    C::kActionEmergencyStop,
                                                    C::kActionDryRunOnly,
                                                    C::kResourceRemediationLocked,
                                                    C::kActionExecutorUnavailable,
                                                    C::kActionExecutionAvailabilityFailed};
  return codes;
}

const std::vector<AgentErrorCode>& ExecuteErrorCodes() {
  static const std::vector<AgentErrorCode> codes = {C::kMockModeEnabled,
                                                    C::kMissingId,
                                                    C::kInvalidId,
                                                    C::kInvalidActionExecution,
                                                    C::kActionNotFound,
                                                    C::kActionNotApproved,
                                                    C::kActionAlreadyExecuting,
                                                    C::kActionExecutionFinal,
                                                    C::kActionDryRunOnly,
                                                    C::kActionPlanExpired,
                                                    C::kActionExecutionUnavailable,
                                                    C::kActionPlanDrift,
                                                    C::kActionEmergencyStop,
                                                    C::kActionPlanIdentityMismatch,
                                                    C::kResourceRemediationLocked,
                                                    C::kActionExecutorUnavailable,
                                                    C::kActionActorUnavailable,
                                                    C::kActionExecutionForbidden,
                                                    C::kActionNotExecuting,
                                                    C::kActionReplanRequired};
  return codes;
}

const std::vector<AgentErrorCode>& TransportErrorCodes() {
  static const std::vector<AgentErrorCode> codes = {
      C::kInvalidRequest,       C::kUnauthorized,     C::kMissingScope,
      C::kRouteNotFound,        C::kMethodNotAllowed, C::kRequestTooLarge,
      C::kUriTooLong,           C::kInternalError,    C::kServiceUnavailable,
      C::kUnsupportedMediaType, C::kTooManyStreams,   C::kRequestHeaderTooLarge,
      C::kRequestTimeout,       C::kCsrfRejected};
  return codes;
}

std::string AgentError::ToJson() const {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("error");
  WriteString(w, pulse::core::ToString(code));
  w.Key("message");
  WriteString(w, message);
  if (code == AgentErrorCode::kMissingScope) {
    auto it = details.find("requiredScope");
    if (it != details.end()) {
      w.Key("requiredScope");
      WriteString(w, it->second);
    }
  }
  if (!details.empty()) {
    w.Key("details");
    w.StartObject();
    for (const auto& [key, value] : details) {
      w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
      WriteString(w, value);
    }
    w.EndObject();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

AgentError MakeAgentError(AgentErrorCode code, std::string message) {
  AgentError e;
  e.code = code;
  e.message = std::move(message);
  return e;
}

AgentError MissingScopeError(std::string_view required_scope) {
  AgentError e = MakeAgentError(
      AgentErrorCode::kMissingScope,
      absl::StrCat("this operation requires the ", std::string(required_scope), " scope"));
  e.details.emplace("requiredScope", std::string(required_scope));
  return e;
}

absl::StatusOr<AgentError> ParseAgentError(std::string_view json) {
  auto doc = ParseJson(json, JsonLimits{64 * 1024, 8});
  if (!doc.ok()) {
    return doc.status();
  }
  if (!doc->IsObject()) {
    return absl::InvalidArgumentError("agent error envelope must be a JSON object");
  }
  auto code_text = GetString(*doc, "error");
  if (!code_text || code_text->empty()) {
    return absl::InvalidArgumentError("agent error envelope has no \"error\" code");
  }
  auto code = ParseAgentErrorCode(*code_text);
  if (!code) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown agent error code \"", std::string(*code_text), "\""));
  }
  auto message = GetString(*doc, "message");
  if (!message || message->empty()) {
    return absl::InvalidArgumentError("agent error envelope has no \"message\"");
  }
  AgentError out = MakeAgentError(*code, std::string(*message));
  if (const rapidjson::Value* details = GetMember(*doc, "details")) {
    if (!details->IsObject()) {
      return absl::InvalidArgumentError("agent error \"details\" must be an object");
    }
    for (const auto& m : details->GetObject()) {
      if (!m.value.IsString()) {
        return absl::InvalidArgumentError("agent error \"details\" values must be strings");
      }
      out.details.emplace(std::string(m.name.GetString(), m.name.GetStringLength()),
                          std::string(m.value.GetString(), m.value.GetStringLength()));
    }
  }
  if (out.code == AgentErrorCode::kMissingScope && !out.details.count("requiredScope")) {
    if (auto scope = GetString(*doc, "requiredScope")) {
      out.details.emplace("requiredScope", std::string(*scope));
    }
  }
  return out;
}

}  // namespace pulse::core
