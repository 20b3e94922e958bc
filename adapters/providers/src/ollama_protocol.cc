#include "pulse/adapters/providers/ollama_protocol.h"

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
constexpr std::string_view kPath = "/api/chat";
constexpr std::string_view kAuthorizationHeader = "Authorization";
constexpr std::string_view kModel = "model";
constexpr std::string_view kMessages = "messages";
constexpr std::string_view kRole = "role";
constexpr std::string_view kContent = "content";
constexpr std::string_view kToolCalls = "tool_calls";
constexpr std::string_view kFunction = "function";
constexpr std::string_view kName = "name";
constexpr std::string_view kArguments = "arguments";
constexpr std::string_view kToolName = "tool_name";
constexpr std::string_view kTools = "tools";
constexpr std::string_view kType = "type";
constexpr std::string_view kDescription = "description";
constexpr std::string_view kParameters = "parameters";
constexpr std::string_view kStream = "stream";
constexpr std::string_view kKeepAlive = "keep_alive";
constexpr std::string_view kOptions = "options";
constexpr std::string_view kNumPredict = "num_predict";
// response
constexpr std::string_view kMessage = "message";
constexpr std::string_view kId = "id";
constexpr std::string_view kDone = "done";
constexpr std::string_view kDoneReason = "done_reason";
constexpr std::string_view kPromptEvalCount = "prompt_eval_count";
constexpr std::string_view kEvalCount = "eval_count";
constexpr std::string_view kError = "error";
}  // namespace w

// done_reason values; any other reason is kError and releases no tool call. "load" and
// "unload" end a request that only (un)loaded the model.
constexpr std::array<core::WireName<FinishReason>, 4> kDoneReasons = {{
    {FinishReason::kStop, "stop"},
    {FinishReason::kStop, "load"},
    {FinishReason::kStop, "unload"},
    {FinishReason::kLength, "length"},
}};

// ---- request ------------------------------------------------------------------------------

void WriteMessage(core::JsonWriter& out, const std::vector<core::Message>& messages,
                  std::size_t index) {
  const core::Message& m = messages[index];
  out.StartObject();
  out.Member(w::kRole, core::ToString(m.role));
  out.Member(w::kContent, m.content);
  if (m.role == core::MessageRole::kAssistant && !m.tool_calls.empty()) {
    out.Key(w::kToolCalls);
    out.StartArray();
    for (const core::ToolCall& call : m.tool_calls) {
      out.StartObject();
      out.Key(w::kFunction);
      out.StartObject();
      out.Member(w::kName, call.name);
      out.Key(w::kArguments);
      out.Value(internal::ReplayArguments(call.arguments_json));
      out.EndObject();
      out.EndObject();
    }
    out.EndArray();
  }
  if (m.role == core::MessageRole::kTool) {
    const std::string name = m.tool_name.empty()
                                 ? internal::ResolveToolName(messages, index, m.tool_call_id)
                                 : m.tool_name;
    out.MemberIfNotEmpty(w::kToolName, name);
  }
  out.EndObject();
}

absl::Status WriteTools(core::JsonWriter& out, const core::LlmRequest& request) {
  out.Key(w::kTools);
  out.StartArray();
  for (const core::ToolDefinition& tool : request.tools) {
    PULSE_ASSIGN_OR_RETURN(rapidjson::Document schema, internal::ToolSchema(tool));
    out.StartObject();
    out.Member(w::kType, w::kFunction);
    out.Key(w::kFunction);
    out.StartObject();
    out.Member(w::kName, tool.name);
    out.MemberIfNotEmpty(w::kDescription, tool.description);
    out.Key(w::kParameters);
    out.Value(schema);
    out.EndObject();
    out.EndObject();
  }
  out.EndArray();
  return absl::OkStatus();
}

// ---- decoder ------------------------------------------------------------------------------

class OllamaDecoder final : public internal::FailClosedDecoder {
 public:
  OllamaDecoder() : FailClosedDecoder("Ollama") {}

  bool Complete() const override { return finished(); }

 private:
  absl::Status Decode(std::string_view /*event*/, std::string_view data, EmitFn emit) override {
    PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, internal::ParseStreamObject(vendor(), data));
    if (core::GetMember(doc, w::kError) != nullptr) {
      // Kept only as ProviderErrorDetail's cleaned, redacted excerpt.
      const std::string detail = ProviderErrorDetail(data);
      return core::ProviderUnavailableError(
          fmt::format("Ollama stream error: {}", detail.empty() ? "(no message)" : detail));
    }
    JsonObjectReader in(doc, "Ollama chunk", StreamReaderOptions());
    const rapidjson::Value* message = in.Member(w::kMessage);
    const std::optional<bool> done = in.Bool(w::kDone);
    const std::optional<std::string> reason = in.String(w::kDoneReason, {internal::kMaxCodeBytes});
    const std::optional<std::int64_t> prompt =
        in.Int(w::kPromptEvalCount, 0, internal::kMaxTokenCount);
    const std::optional<std::int64_t> eval = in.Int(w::kEvalCount, 0, internal::kMaxTokenCount);
    PULSE_RETURN_IF_ERROR(in.status());
    if (message != nullptr) {
      PULSE_RETURN_IF_ERROR(ReadMessage(*message, emit));
    }
    if (prompt.has_value()) {
      SetInputTokens(*prompt);
    }
    if (eval.has_value()) {
      SetOutputTokens(*eval);
    }
    if (!done.value_or(false)) {
      return absl::OkStatus();
    }
    if (!reason.has_value() || reason->empty()) {
      return Finish(FinishReason::kStop);
    }
    return Finish(core::WireValueOf(kDoneReasons, *reason).value_or(FinishReason::kError));
  }

  std::string_view MissingFinishText() const override {
    return "the stream ended before a line with \"done\":true";
  }

  absl::Status ReadMessage(const rapidjson::Value& message, EmitFn emit) {
    JsonObjectReader m(message, "Ollama message", StreamReaderOptions());
    const std::optional<std::string> content =
        m.String(w::kContent, {internal::kStreamJsonLimits.max_bytes});
    const rapidjson::Value* calls = internal::ArrayMember(m, w::kToolCalls);
    PULSE_RETURN_IF_ERROR(m.status());
    if (content.has_value() && !content->empty()) {
      emit(core::LlmStreamEvent::ContentDelta(*content));
    }
    if (calls != nullptr) {
      for (rapidjson::SizeType i = 0; i < calls->Size(); ++i) {
        PULSE_RETURN_IF_ERROR(ReadToolCall((*calls)[i], i));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadToolCall(const rapidjson::Value& call, rapidjson::SizeType index) {
    JsonObjectReader c(call, fmt::format("Ollama tool_calls[{}]", index), StreamReaderOptions());
    std::string id =
        c.String(w::kId, {internal::kMaxIdBytes, JsonPresence::kOptional, true}).value_or("");
    const rapidjson::Value* function = c.Member(w::kFunction, JsonPresence::kRequired);
    PULSE_RETURN_IF_ERROR(c.status());
    JsonObjectReader f(*function, fmt::format("Ollama tool_calls[{}].function", index),
                       StreamReaderOptions());
    std::string name =
        f.String(w::kName, {internal::kMaxNameBytes, JsonPresence::kRequired, true}).value_or("");
    const rapidjson::Value* args = f.Member(w::kArguments);
    PULSE_RETURN_IF_ERROR(f.status());
    PULSE_ASSIGN_OR_RETURN(std::string arguments, Arguments(args, index));
    return AddToolCall(core::ToolCall{std::move(id), std::move(name), std::move(arguments)},
                       "ollama_");
  }

  // The arguments as JSON object text. Ollama sends an object; a string holding one object is
  // accepted too (some model templates produce it), anything else breaks the stream.
  absl::StatusOr<std::string> Arguments(const rapidjson::Value* args,
                                        rapidjson::SizeType index) const {
    if (args == nullptr) {
      return std::string("{}");
    }
    if (args->IsObject()) {
      return core::ToJsonString(*args);
    }
    if (args->IsString()) {
      absl::StatusOr<rapidjson::Document> parsed =
          core::ParseJson(core::StringViewOf(*args), internal::kStreamJsonLimits);
      if (parsed.ok() && parsed->IsObject()) {
        return std::string(core::StringViewOf(*args));
      }
    }
    return Broken(fmt::format("tool_calls[{}].function.arguments is not a JSON object", index));
  }
};

}  // namespace

OllamaProtocol::OllamaProtocol(std::string model, OllamaProtocolOptions options)
    : model_(std::move(model)), options_(std::move(options)) {}

absl::StatusOr<HttpRequestSpec> OllamaProtocol::BuildRequest(
    const core::LlmRequest& request) const {
  if (request.tool_choice == core::ToolChoice::kRequired) {
    return core::InvalidProviderRequestError(
        "Ollama cannot force a tool call: tool_choice \"required\" is not supported by its "
        "chat API");
  }
  PULSE_RETURN_IF_ERROR(internal::CheckRequest("Ollama", request));
  if (request.messages.empty()) {
    return core::InvalidProviderRequestError("Ollama request: the conversation is empty");
  }

  core::JsonWriter out;
  out.StartObject();
  out.Member(w::kModel, model_);
  out.Key(w::kMessages);
  out.StartArray();
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    if (request.messages[i].role == core::MessageRole::kRefusedClaim) {
      continue;  // a transcript entry: the loop's provider view never contains one
    }
    WriteMessage(out, request.messages, i);
  }
  out.EndArray();
  if (internal::OffersTools(request)) {
    PULSE_RETURN_IF_ERROR(WriteTools(out, request));
  }
  out.Member(w::kStream, true);
  out.MemberIfNotEmpty(w::kKeepAlive, options_.keep_alive);
  if (request.max_tokens.has_value()) {
    out.Key(w::kOptions);
    out.StartObject();
    out.Member(w::kNumPredict, *request.max_tokens);
    out.EndObject();
  }
  out.EndObject();

  HttpRequestSpec spec;
  spec.path = std::string(w::kPath);
  if (!options_.authorization.empty()) {
    spec.headers.emplace_back(w::kAuthorizationHeader, options_.authorization);
  }
  spec.body = out.Take();
  return spec;
}

std::unique_ptr<StreamDecoder> OllamaProtocol::NewDecoder() const {
  return std::make_unique<OllamaDecoder>();
}

}  // namespace pulse::adapters::providers
