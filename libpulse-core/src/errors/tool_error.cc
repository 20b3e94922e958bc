#include "pulse/core/errors/tool_error.h"

#include <array>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/wire_enum.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core {
namespace {

// The single table of tool-result codes.
constexpr std::array<WireName<ToolErrorCode>, 12> kCodes = {{
    {ToolErrorCode::kFsmBlocked, "FSM_BLOCKED"},
    {ToolErrorCode::kPolicyBlocked, "POLICY_BLOCKED"},
    {ToolErrorCode::kApprovalRequired, "APPROVAL_REQUIRED"},
    {ToolErrorCode::kInvalidInput, "INVALID_INPUT"},
    {ToolErrorCode::kNotFound, "NOT_FOUND"},
    {ToolErrorCode::kExecutionFailed, "EXECUTION_FAILED"},
    {ToolErrorCode::kNoAgent, "NO_AGENT"},
    {ToolErrorCode::kLoopDetected, "LOOP_DETECTED"},
    {ToolErrorCode::kBudgetExhausted, "BUDGET_EXHAUSTED"},
    {ToolErrorCode::kToolNotAdvertised, "TOOL_NOT_ADVERTISED"},
    {ToolErrorCode::kNonInteractive, "NON_INTERACTIVE"},
    {ToolErrorCode::kExecutionContextUnavailable, "EXECUTION_CONTEXT_UNAVAILABLE"},
}};

// Result texts are model-facing and bounded elsewhere; this bound only keeps a hostile
// result from costing more than a parse of 1 MiB.
constexpr JsonLimits kResultLimits{1 << 20, 64};

// Locates the first '{' and parses one JSON object from there (trailing text fails).
std::optional<rapidjson::Document> ParseEmbeddedObject(std::string_view text) {
  std::size_t brace = text.find('{');
  if (brace == std::string_view::npos) {
    return std::nullopt;
  }
  auto doc = ParseJson(text.substr(brace), kResultLimits);
  if (!doc.ok() || !doc->IsObject()) {
    return std::nullopt;
  }
  return std::move(doc).value();
}

std::optional<std::string> NonBlankString(const rapidjson::Value* v) {
  if (v == nullptr || !v->IsString()) {
    return std::nullopt;
  }
  std::string s(v->GetString(), v->GetStringLength());
  if (absl::StripAsciiWhitespace(s).empty()) {
    return std::nullopt;
  }
  return s;
}

}  // namespace

const std::vector<ToolErrorCode>& AllToolErrorCodes() {
  static const std::vector<ToolErrorCode> codes = WireValues(kCodes);
  return codes;
}

std::string_view ToString(ToolErrorCode code) {
  return WireNameOf(kCodes, code, "EXECUTION_FAILED");
}

std::optional<ToolErrorCode> ParseToolErrorCode(std::string_view text) {
  return WireValueOf(kCodes, text);
}

std::string ToolError::ToJson() const {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("error");
  w.StartObject();
  std::string_view code_name = pulse::core::ToString(code);
  w.Key("code");
  w.String(code_name.data(), static_cast<rapidjson::SizeType>(code_name.size()));
  w.Key("message");
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  if (blocked) {
    w.Key("blocked");
    w.Bool(true);
  }
  if (failed) {
    w.Key("failed");
    w.Bool(true);
  }
  if (retryable) {
    w.Key("retryable");
    w.Bool(true);
  }
  if (!details.empty()) {
    w.Key("details");
    w.StartObject();
    for (const auto& [key, value] : details) {
      w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
      std::visit(
          [&w](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
              w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
            } else if constexpr (std::is_same_v<T, bool>) {
              w.Bool(v);
            } else {
              w.Int64(v);
            }
          },
          value);
    }
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::optional<std::string> ExtractToolErrorCode(std::string_view result_text) {
  auto doc = ParseEmbeddedObject(result_text);
  if (!doc) {
    return std::nullopt;
  }
  const rapidjson::Value* error = GetMember(*doc, "error");
  if (error != nullptr && error->IsObject()) {
    if (auto code = NonBlankString(GetMember(*error, "code"))) {
      return code;
    }
  }
  return NonBlankString(GetMember(*doc, "error_code"));
}

bool HasVerificationOk(std::string_view result_text) {
  auto doc = ParseEmbeddedObject(result_text);
  if (!doc) {
    return false;
  }
  const rapidjson::Value* verification = GetMember(*doc, "verification");
  if (verification == nullptr || !verification->IsObject()) {
    return false;
  }
  return GetBool(*verification, "ok").value_or(false);
}

}  // namespace pulse::core
