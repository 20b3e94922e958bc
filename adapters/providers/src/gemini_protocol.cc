#include "pulse/adapters/providers/gemini_protocol.h"

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "pulse/adapters/providers/http_errors.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/status_macros.h"
#include "stream_support.h"

namespace pulse::adapters::providers {
namespace {

using core::FinishReason;
using core::JsonObjectReader;
using core::JsonPresence;
using internal::StreamReaderOptions;

// Wire names, spelled once.
namespace w {
// request
constexpr std::string_view kModelsPrefix = "models/";
constexpr std::string_view kProviderPrefix = "gemini:";
constexpr std::string_view kStreamMethod = ":streamGenerateContent?alt=sse";
constexpr std::string_view kApiKeyHeader = "x-goog-api-key";
constexpr std::string_view kContents = "contents";
constexpr std::string_view kRole = "role";
constexpr std::string_view kUser = "user";
constexpr std::string_view kModel = "model";
constexpr std::string_view kParts = "parts";
constexpr std::string_view kText = "text";
constexpr std::string_view kFunctionCall = "functionCall";
constexpr std::string_view kFunctionResponse = "functionResponse";
constexpr std::string_view kThoughtSignature = "thoughtSignature";
constexpr std::string_view kId = "id";
constexpr std::string_view kName = "name";
constexpr std::string_view kArgs = "args";
constexpr std::string_view kResponse = "response";
constexpr std::string_view kContent = "content";
constexpr std::string_view kIsError = "is_error";
constexpr std::string_view kSystemInstruction = "systemInstruction";
constexpr std::string_view kTools = "tools";
constexpr std::string_view kFunctionDeclarations = "functionDeclarations";
constexpr std::string_view kDescription = "description";
constexpr std::string_view kParameters = "parameters";
constexpr std::string_view kAdditionalProperties = "additionalProperties";
constexpr std::string_view kType = "type";
constexpr std::string_view kObject = "object";
constexpr std::string_view kProperties = "properties";
constexpr std::string_view kToolConfig = "toolConfig";
constexpr std::string_view kFunctionCallingConfig = "functionCallingConfig";
constexpr std::string_view kMode = "mode";
constexpr std::string_view kAny = "ANY";
constexpr std::string_view kGenerationConfig = "generationConfig";
constexpr std::string_view kMaxOutputTokens = "maxOutputTokens";
// response
constexpr std::string_view kCandidates = "candidates";
constexpr std::string_view kThought = "thought";
// The REST API answers camelCase; proto-style JSON (and some SDK dumps) spell it this way.
constexpr std::string_view kThoughtSignatureSnake = "thought_signature";
constexpr std::string_view kFinishReason = "finishReason";
constexpr std::string_view kUsageMetadata = "usageMetadata";
constexpr std::string_view kPromptTokenCount = "promptTokenCount";
constexpr std::string_view kCandidatesTokenCount = "candidatesTokenCount";
constexpr std::string_view kThoughtsTokenCount = "thoughtsTokenCount";
constexpr std::string_view kPromptFeedback = "promptFeedback";
constexpr std::string_view kBlockReason = "blockReason";
constexpr std::string_view kError = "error";
constexpr std::string_view kCode = "code";
constexpr std::string_view kStatus = "status";
}  // namespace w

// finishReason values; every other reason (SAFETY, RECITATION, OTHER, BLOCKLIST,
// MALFORMED_FUNCTION_CALL, ...) is kError and releases no tool call.
constexpr std::array<core::WireName<FinishReason>, 2> kFinishReasons = {{
    {FinishReason::kStop, "STOP"},
    {FinishReason::kLength, "MAX_TOKENS"},
}};

enum class ErrorClass { kRateLimited, kUnavailable, kInvalidRequest };

// google.rpc status names of an in-stream `error` object.
constexpr std::array<core::WireName<ErrorClass>, 12> kErrorStatuses = {{
    {ErrorClass::kRateLimited, "RESOURCE_EXHAUSTED"},
    {ErrorClass::kUnavailable, "UNAVAILABLE"},
    {ErrorClass::kUnavailable, "INTERNAL"},
    {ErrorClass::kUnavailable, "DEADLINE_EXCEEDED"},
    {ErrorClass::kUnavailable, "ABORTED"},
    {ErrorClass::kUnavailable, "UNKNOWN"},
    {ErrorClass::kInvalidRequest, "INVALID_ARGUMENT"},
    {ErrorClass::kInvalidRequest, "FAILED_PRECONDITION"},
    {ErrorClass::kInvalidRequest, "PERMISSION_DENIED"},
    {ErrorClass::kInvalidRequest, "UNAUTHENTICATED"},
    {ErrorClass::kInvalidRequest, "NOT_FOUND"},
    {ErrorClass::kInvalidRequest, "OUT_OF_RANGE"},
}};

constexpr JsonPresence kRequired = JsonPresence::kRequired;

std::string StripModelPrefixes(std::string model) {
  for (std::string_view prefix : {w::kProviderPrefix, w::kModelsPrefix}) {
    if (std::string_view(model).starts_with(prefix)) {
      model.erase(0, prefix.size());
    }
  }
  return model;
}

bool IsModelSegment(std::string_view model) {
  if (model.empty()) {
    return false;
  }
  for (char c : model) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
      return false;
    }
  }
  return true;
}

// ---- request ------------------------------------------------------------------------------

// One entry of `contents`. In a user content functionResponse parts come first, then text.
struct Content {
  std::string_view role;
  std::vector<std::string> responses;
  std::vector<std::string> parts;
};

void AddPart(std::vector<Content>& contents, std::string_view role, std::string part,
             bool is_response) {
  if (contents.empty() || contents.back().role != role) {
    contents.push_back(Content{role, {}, {}});
  }
  (is_response ? contents.back().responses : contents.back().parts).push_back(std::move(part));
}

std::string TextPart(std::string_view text) {
  core::JsonWriter out;
  out.StartObject();
  out.Member(w::kText, text);
  out.EndObject();
  return out.Take();
}

// The call's thought signature (provider_state) rides on the part, beside functionCall, as
// the API sent it: Gemini 3 refuses a follow-up request whose calls lost theirs.
std::string FunctionCallPart(const core::ToolCall& call) {
  core::JsonWriter out;
  out.StartObject();
  out.Key(w::kFunctionCall);
  out.StartObject();
  out.MemberIfNotEmpty(w::kId, call.id);
  out.Member(w::kName, call.name);
  out.Key(w::kArgs);
  out.Value(internal::ReplayArguments(call.arguments_json));
  out.EndObject();
  out.MemberIfNotEmpty(w::kThoughtSignature, call.provider_state);
  out.EndObject();
  return out.Take();
}

std::string FunctionResponsePart(const core::Message& result, std::string_view name) {
  core::JsonWriter out;
  out.StartObject();
  out.Key(w::kFunctionResponse);
  out.StartObject();
  out.MemberIfNotEmpty(w::kId, result.tool_call_id);
  out.Member(w::kName, name);
  out.Key(w::kResponse);
  out.StartObject();
  out.Member(w::kContent, result.content);
  if (result.is_error) {
    out.Member(w::kIsError, true);
  }
  out.EndObject();
  out.EndObject();
  out.EndObject();
  return out.Take();
}

// The name a tool result's functionResponse carries: the answered call's name, else the
// result's own tool_name, else its call id.
std::string_view ResponseName(const core::Message& result,
                              const std::vector<core::ToolCall>& answered) {
  for (const core::ToolCall& call : answered) {
    if (call.id == result.tool_call_id) {
      return call.name;
    }
  }
  return result.tool_name.empty() ? std::string_view(result.tool_call_id)
                                  : std::string_view(result.tool_name);
}

std::vector<Content> Contents(const std::vector<core::Message>& messages) {
  std::vector<Content> contents;
  // The calls of the latest assistant turn that was sent with its functionCall parts; tool
  // results answer those, or nothing.
  const std::vector<core::ToolCall>* answered = nullptr;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const core::Message& m = messages[i];
    switch (m.role) {
      case core::MessageRole::kSystem:
        break;  // systemInstruction
      case core::MessageRole::kUser:
        answered = nullptr;
        if (!m.content.empty()) {
          AddPart(contents, w::kUser, TextPart(m.content), false);
        }
        break;
      case core::MessageRole::kAssistant: {
        const bool has_answers =
            i + 1 < messages.size() && messages[i + 1].role == core::MessageRole::kTool;
        answered = nullptr;
        if (!m.content.empty()) {
          AddPart(contents, w::kModel, TextPart(m.content), false);
        }
        if (has_answers && !m.tool_calls.empty()) {
          for (const core::ToolCall& call : m.tool_calls) {
            AddPart(contents, w::kModel, FunctionCallPart(call), false);
          }
          answered = &m.tool_calls;
        }
        break;
      }
      case core::MessageRole::kTool:
        if (answered != nullptr) {
          AddPart(contents, w::kUser, FunctionResponsePart(m, ResponseName(m, *answered)), true);
        }
        break;
      case core::MessageRole::kRefusedClaim:
        break;  // a transcript entry: the loop's provider view never contains one
    }
  }
  return contents;
}

// `schema` without any member named additionalProperties, at any depth. The depth is bounded
// by the JsonLimits the schema was parsed with.
void WriteWithoutAdditionalProperties(core::JsonWriter& out, const rapidjson::Value& schema) {
  if (schema.IsObject()) {
    out.StartObject();
    for (const auto& m : schema.GetObject()) {
      const std::string_view key = core::StringViewOf(m.name);
      if (key == w::kAdditionalProperties) {
        continue;
      }
      out.Key(key);
      WriteWithoutAdditionalProperties(out, m.value);
    }
    out.EndObject();
  } else if (schema.IsArray()) {
    out.StartArray();
    for (const auto& item : schema.GetArray()) {
      WriteWithoutAdditionalProperties(out, item);
    }
    out.EndArray();
  } else {
    out.Value(schema);
  }
}

// True for an object schema that declares no property: the API rejects an OBJECT parameters
// schema with empty properties, so such a tool is declared without parameters.
bool TakesNoParameters(const rapidjson::Value& schema) {
  const std::optional<std::string_view> type = core::GetString(schema, w::kType);
  if (type.has_value() && *type != w::kObject) {
    return false;
  }
  const rapidjson::Value* properties = core::GetMember(schema, w::kProperties);
  return properties == nullptr || (properties->IsObject() && properties->MemberCount() == 0);
}

absl::Status WriteTools(core::JsonWriter& out, const core::LlmRequest& request) {
  out.Key(w::kTools);
  out.StartArray();
  out.StartObject();
  out.Key(w::kFunctionDeclarations);
  out.StartArray();
  for (const core::ToolDefinition& tool : request.tools) {
    PULSE_ASSIGN_OR_RETURN(rapidjson::Document schema, internal::ToolSchema(tool));
    out.StartObject();
    out.Member(w::kName, tool.name);
    out.MemberIfNotEmpty(w::kDescription, tool.description);
    if (!TakesNoParameters(schema)) {
      out.Key(w::kParameters);
      WriteWithoutAdditionalProperties(out, schema);
    }
    out.EndObject();
  }
  out.EndArray();
  out.EndObject();
  out.EndArray();
  if (request.tool_choice == core::ToolChoice::kRequired) {
    out.Key(w::kToolConfig);
    out.StartObject();
    out.Key(w::kFunctionCallingConfig);
    out.StartObject();
    out.Member(w::kMode, w::kAny);
    out.EndObject();
    out.EndObject();
  }
  return absl::OkStatus();
}

// ---- decoder ------------------------------------------------------------------------------

class GeminiDecoder final : public internal::FailClosedDecoder {
 public:
  GeminiDecoder() : FailClosedDecoder("Gemini") {}

  // The finishReason chunk is the last one Gemini sends.
  bool Complete() const override { return finished(); }

 private:
  // SSE messages from Gemini have no event name; one that has a name is read all the same.
  absl::Status Decode(std::string_view /*event*/, std::string_view data, EmitFn emit) override {
    PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, internal::ParseStreamObject(vendor(), data));
    JsonObjectReader in(doc, "Gemini response", StreamReaderOptions());
    const rapidjson::Value* error = in.Member(w::kError);
    const rapidjson::Value* feedback = in.Member(w::kPromptFeedback);
    const rapidjson::Value* usage = in.Member(w::kUsageMetadata);
    const rapidjson::Value* candidates = internal::ArrayMember(in, w::kCandidates);
    PULSE_RETURN_IF_ERROR(in.status());
    if (error != nullptr) {
      return StreamError(*error, data);
    }
    if (feedback != nullptr) {
      PULSE_RETURN_IF_ERROR(PromptFeedback(*feedback));
    }
    if (usage != nullptr) {
      PULSE_RETURN_IF_ERROR(Usage(*usage));
    }
    if (candidates != nullptr && !candidates->Empty()) {
      PULSE_RETURN_IF_ERROR(Candidate((*candidates)[0], emit));
    }
    return absl::OkStatus();
  }

  std::string_view MissingFinishText() const override {
    return "the stream ended before a candidate carried a finishReason";
  }

  absl::Status Candidate(const rapidjson::Value& candidate, EmitFn emit) {
    JsonObjectReader c(candidate, "Gemini candidates[0]", StreamReaderOptions());
    const rapidjson::Value* content = c.Member(w::kContent);
    const std::optional<std::string> finish = c.String(w::kFinishReason, {internal::kMaxCodeBytes});
    PULSE_RETURN_IF_ERROR(c.status());
    if (content != nullptr) {
      JsonObjectReader body(*content, "Gemini candidates[0].content", StreamReaderOptions());
      const rapidjson::Value* parts = internal::ArrayMember(body, w::kParts);
      PULSE_RETURN_IF_ERROR(body.status());
      if (parts != nullptr) {
        for (rapidjson::SizeType i = 0; i < parts->Size(); ++i) {
          PULSE_RETURN_IF_ERROR(Part((*parts)[i], i, emit));
        }
      }
    }
    if (finish.has_value() && !finish->empty()) {
      return Finish(core::WireValueOf(kFinishReasons, *finish).value_or(FinishReason::kError));
    }
    return absl::OkStatus();
  }

  absl::Status Part(const rapidjson::Value& part, rapidjson::SizeType index, EmitFn emit) {
    JsonObjectReader p(part, fmt::format("Gemini part[{}]", index), StreamReaderOptions());
    const std::optional<bool> thought = p.Bool(w::kThought);
    const std::optional<std::string> text =
        p.String(w::kText, {internal::kStreamJsonLimits.max_bytes});
    const rapidjson::Value* call = p.Member(w::kFunctionCall);
    std::string signature = Signature(p, w::kThoughtSignature);
    if (signature.empty()) {
      signature = Signature(p, w::kThoughtSignatureSnake);
    }
    PULSE_RETURN_IF_ERROR(p.status());
    if (thought.value_or(false)) {
      return absl::OkStatus();  // a thought summary: not content
    }
    if (text.has_value() && !text->empty()) {
      emit(core::LlmStreamEvent::ContentDelta(*text));
    }
    return call == nullptr ? absl::OkStatus() : FunctionCall(*call, index, std::move(signature));
  }

  // The part's thought signature under `key`: opaque bytes kept verbatim, "" when absent, and
  // dropped when over kMaxProviderStateBytes (a request without it fails loudly; a cut one
  // could not be valid either). Not a string: a broken stream.
  static std::string Signature(JsonObjectReader& part, std::string_view key) {
    const rapidjson::Value* value = part.Member(key);
    if (value == nullptr) {
      return "";
    }
    if (!value->IsString()) {
      part.Fail(key, "must be a string");
      return "";
    }
    if (value->GetStringLength() > core::kMaxProviderStateBytes) {
      return "";
    }
    return std::string(value->GetString(), value->GetStringLength());
  }

  absl::Status FunctionCall(const rapidjson::Value& call, rapidjson::SizeType index,
                            std::string signature) {
    JsonObjectReader f(call, fmt::format("Gemini part[{}].functionCall", index),
                       StreamReaderOptions());
    std::string id =
        f.String(w::kId, {internal::kMaxIdBytes, JsonPresence::kOptional, true}).value_or("");
    std::string name = f.String(w::kName, {internal::kMaxNameBytes, kRequired, true}).value_or("");
    const rapidjson::Value* args = f.Member(w::kArgs);
    if (args != nullptr && !args->IsObject()) {
      f.Fail(w::kArgs, "must be a JSON object");
    }
    PULSE_RETURN_IF_ERROR(f.status());
    std::string arguments = args == nullptr ? "{}" : core::ToJsonString(*args);
    return AddToolCall(
        core::ToolCall{std::move(id), std::move(name), std::move(arguments), std::move(signature)},
        "");
  }

  absl::Status Usage(const rapidjson::Value& usage) {
    JsonObjectReader u(usage, "Gemini usageMetadata", StreamReaderOptions());
    const std::optional<std::int64_t> prompt =
        u.Int(w::kPromptTokenCount, 0, internal::kMaxTokenCount);
    const std::optional<std::int64_t> candidates =
        u.Int(w::kCandidatesTokenCount, 0, internal::kMaxTokenCount);
    const std::optional<std::int64_t> thoughts =
        u.Int(w::kThoughtsTokenCount, 0, internal::kMaxTokenCount);
    PULSE_RETURN_IF_ERROR(u.status());
    if (prompt.has_value()) {
      SetInputTokens(*prompt);
    }
    if (candidates.has_value() || thoughts.has_value()) {
      SetOutputTokens(candidates.value_or(0) + thoughts.value_or(0));
    }
    return absl::OkStatus();
  }

  absl::Status PromptFeedback(const rapidjson::Value& feedback) const {
    JsonObjectReader f(feedback, "Gemini promptFeedback", StreamReaderOptions());
    const std::optional<std::string> reason = f.String(w::kBlockReason, {internal::kMaxCodeBytes});
    PULSE_RETURN_IF_ERROR(f.status());
    if (reason.has_value() && !reason->empty()) {
      return core::InvalidProviderRequestError(
          fmt::format("Gemini blocked the prompt (blockReason {})",
                      core::BoundedCleanText(*reason, internal::kMaxCodeBytes)));
    }
    return absl::OkStatus();
  }

  // Read leniently: whatever shape the error object has, the stream fails with it. Its message
  // is kept only as ProviderErrorDetail's cleaned, redacted excerpt.
  absl::Status StreamError(const rapidjson::Value& error, std::string_view data) const {
    const std::optional<std::int64_t> code = core::GetInt64(error, w::kCode);
    const std::string status(core::GetString(error, w::kStatus).value_or(""));
    const std::string detail = ProviderErrorDetail(data);
    const std::string text = fmt::format("Gemini stream error {} {}: {}", code.value_or(0),
                                         core::BoundedCleanText(status, internal::kMaxCodeBytes),
                                         detail.empty() ? "(no message)" : detail);
    std::optional<ErrorClass> kind = core::WireValueOf(kErrorStatuses, status);
    if (!kind.has_value() && code.has_value()) {
      if (*code == 429) {
        kind = ErrorClass::kRateLimited;
      } else if (*code >= 400 && *code < 500) {
        kind = ErrorClass::kInvalidRequest;
      }
    }
    switch (kind.value_or(ErrorClass::kUnavailable)) {
      case ErrorClass::kRateLimited:
        return core::RateLimitedError(text, absl::ZeroDuration());
      case ErrorClass::kInvalidRequest:
        return core::InvalidProviderRequestError(text);
      case ErrorClass::kUnavailable:
        break;
    }
    return core::ProviderUnavailableError(text);
  }
};

}  // namespace

GeminiProtocol::GeminiProtocol(std::string model, std::string api_key,
                               GeminiProtocolOptions options)
    : model_(StripModelPrefixes(std::move(model))),
      api_key_(std::move(api_key)),
      options_(options) {}

absl::StatusOr<HttpRequestSpec> GeminiProtocol::BuildRequest(
    const core::LlmRequest& request) const {
  if (!IsModelSegment(model_)) {
    return core::InvalidProviderRequestError(
        fmt::format("Gemini request: model \"{}\" is not a valid model name",
                    core::BoundedCleanText(model_, internal::kMaxNameBytes)));
  }
  PULSE_RETURN_IF_ERROR(internal::CheckRequest("Gemini", request));
  const int max_tokens = request.max_tokens.value_or(options_.default_max_output_tokens);
  if (max_tokens <= 0) {
    return core::InvalidProviderRequestError(
        fmt::format("Gemini request: maxOutputTokens must be positive, not {}", max_tokens));
  }
  const std::vector<Content> contents = Contents(request.messages);
  if (contents.empty()) {
    return core::InvalidProviderRequestError(
        "Gemini request: the conversation has no user or model content");
  }

  core::JsonWriter out;
  out.StartObject();
  out.Key(w::kContents);
  out.StartArray();
  for (const Content& content : contents) {
    out.StartObject();
    out.Member(w::kRole, content.role);
    out.Key(w::kParts);
    out.StartArray();
    for (const std::string& part : content.responses) {
      out.RawValue(part);
    }
    for (const std::string& part : content.parts) {
      out.RawValue(part);
    }
    out.EndArray();
    out.EndObject();
  }
  out.EndArray();
  const std::string system = internal::SystemText(request);
  if (!system.empty()) {
    out.Key(w::kSystemInstruction);
    out.StartObject();
    out.Key(w::kParts);
    out.StartArray();
    out.RawValue(TextPart(system));
    out.EndArray();
    out.EndObject();
  }
  if (internal::OffersTools(request)) {
    PULSE_RETURN_IF_ERROR(WriteTools(out, request));
  }
  out.Key(w::kGenerationConfig);
  out.StartObject();
  out.Member(w::kMaxOutputTokens, max_tokens);
  out.EndObject();
  out.EndObject();

  HttpRequestSpec spec;
  spec.path = fmt::format("/{}{}{}", w::kModelsPrefix, model_, w::kStreamMethod);
  if (!api_key_.empty()) {
    spec.headers.emplace_back(w::kApiKeyHeader, api_key_);
  }
  spec.body = out.Take();
  return spec;
}

std::unique_ptr<StreamDecoder> GeminiProtocol::NewDecoder() const {
  return std::make_unique<GeminiDecoder>();
}

}  // namespace pulse::adapters::providers
