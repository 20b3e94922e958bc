#include "pulse/core/findings/finding_errors.h"

#include <algorithm>
#include <utility>

#include "absl/strings/cord.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"

namespace pulse::core {
namespace {

std::string PayloadJson(AgentErrorCode agent_code,
                        const std::map<std::string, std::string>& details) {
  JsonWriter out;
  out.StartObject();
  out.Member("code", ToString(agent_code));
  if (!details.empty()) {
    out.Key("details");
    out.StartObject();
    for (const auto& [key, value] : details) {
      out.Member(key, value);
    }
    out.EndObject();
  }
  out.EndObject();
  return out.Take();
}

bool InSetF(AgentErrorCode code) {
  const auto& codes = FindingErrorCodes();
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

AgentErrorCode CanonicalMapping(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return AgentErrorCode::kInvalidFindingRequest;
    case absl::StatusCode::kNotFound:
      return AgentErrorCode::kFindingNotFound;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kPermissionDenied:
      return AgentErrorCode::kFindingActionNotAllowed;
    default:
      return AgentErrorCode::kPatrolUnavailable;
  }
}

// Reads the payload; false when absent or not a well-formed set-F payload.
bool ReadPayload(const absl::Status& status, AgentError& out) {
  auto payload = status.GetPayload(kFindingErrorPayloadUrl);
  if (!payload.has_value()) {
    return false;
  }
  const std::string text(*payload);
  auto doc = ParseJson(text, JsonLimits{16 * 1024, 3});
  if (!doc.ok() || !doc->IsObject()) {
    return false;
  }
  std::optional<std::string_view> code_text = GetString(*doc, "code");
  if (!code_text.has_value()) {
    return false;
  }
  std::optional<AgentErrorCode> code = ParseAgentErrorCode(*code_text);
  if (!code.has_value() || !InSetF(*code)) {
    return false;
  }
  out.code = *code;
  if (const rapidjson::Value* details = GetMember(*doc, "details");
      details != nullptr && details->IsObject()) {
    for (const auto& m : details->GetObject()) {
      if (m.value.IsString()) {
        out.details.emplace(std::string(StringViewOf(m.name)), std::string(StringViewOf(m.value)));
      }
    }
  }
  return true;
}

}  // namespace

absl::Status MakeFindingError(absl::StatusCode code, AgentErrorCode agent_code,
                              std::string_view message,
                              const std::map<std::string, std::string>& details) {
  absl::Status status(code, std::string(message));
  status.SetPayload(kFindingErrorPayloadUrl, absl::Cord(PayloadJson(agent_code, details)));
  return status;
}

absl::Status InvalidFindingRequest(std::string_view message,
                                   const std::map<std::string, std::string>& details) {
  return MakeFindingError(absl::StatusCode::kInvalidArgument,
                          AgentErrorCode::kInvalidFindingRequest, message, details);
}

absl::Status FindingNotFoundError(std::string_view finding_id) {
  return MakeFindingError(absl::StatusCode::kNotFound, AgentErrorCode::kFindingNotFound,
                          "Finding not found", {{"finding_id", std::string(finding_id)}});
}

absl::Status FindingActionNotAllowed(std::string_view finding_id, std::string_view message) {
  return MakeFindingError(absl::StatusCode::kFailedPrecondition,
                          AgentErrorCode::kFindingActionNotAllowed, message,
                          {{"finding_id", std::string(finding_id)}});
}

std::optional<AgentError> ToFindingAgentError(const absl::Status& status) {
  if (status.ok()) {
    return std::nullopt;
  }
  AgentError error;
  if (!ReadPayload(status, error)) {
    error.code = CanonicalMapping(status.code());
    error.details.clear();
  }
  error.message = std::string(status.message());
  if (error.message.empty()) {
    error.message = std::string(ToString(error.code));
  }
  return error;
}

}  // namespace pulse::core
