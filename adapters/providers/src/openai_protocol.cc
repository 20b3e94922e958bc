#include "pulse/adapters/providers/openai_protocol.h"

#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/providers/http_errors.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::providers {
namespace {

using core::FinishReason;
using core::LlmStreamEvent;

constexpr std::string_view kEmptySchema = R"({"type":"object","properties":{}})";
// More parallel calls than this in one response is not a model at work.
constexpr std::int64_t kMaxToolCallIndex = 127;
constexpr core::JsonLimits kChunkLimits{.max_bytes = 64u << 20, .max_depth = 64};

using core::ToAbsl;

absl::Status Malformed(std::string_view what) {
  return core::IncompleteStreamError(
      absl::StrCat("the provider stream is malformed: ", ToAbsl(what)));
}

// ---- request --------------------------------------------------------------------------------

absl::Status WriteTool(const core::ToolDefinition& tool, core::JsonWriter& w) {
  const std::string_view schema_text =
      tool.input_schema_json.empty() ? kEmptySchema : std::string_view(tool.input_schema_json);
  absl::StatusOr<rapidjson::Document> schema = core::ParseJson(schema_text);
  if (!schema.ok() || !schema->IsObject()) {
    return core::InvalidProviderRequestError(
        absl::StrCat("tool \"", tool.name, "\" has an input schema that is not a JSON object"));
  }
  w.StartObject();
  w.Member("type", "function");
  w.Key("function");
  w.StartObject();
  w.Member("name", tool.name);
  w.MemberIfNotEmpty("description", tool.description);
  w.Key("parameters");
  w.Value(*schema);
  w.EndObject();
  w.EndObject();
  return absl::OkStatus();
}

void WriteMessage(const core::Message& message, core::JsonWriter& w) {
  w.StartObject();
  w.Member("role", core::ToString(message.role));
  switch (message.role) {
    case core::MessageRole::kSystem:
    case core::MessageRole::kUser:
      w.Member("content", message.content);
      break;
    case core::MessageRole::kAssistant:
      // With tool calls the content is optional; an empty string confuses some servers.
      if (!message.content.empty() || message.tool_calls.empty()) {
        w.Member("content", message.content);
      }
      if (!message.tool_calls.empty()) {
        w.Key("tool_calls");
        w.StartArray();
        for (const core::ToolCall& call : message.tool_calls) {
          w.StartObject();
          w.Member("id", call.id);
          w.Member("type", "function");
          w.Key("function");
          w.StartObject();
          w.Member("name", call.name);
          w.Member("arguments", call.arguments_json.empty()
                                    ? std::string_view("{}")
                                    : std::string_view(call.arguments_json));
          w.EndObject();
          w.EndObject();
        }
        w.EndArray();
      }
      break;
    case core::MessageRole::kTool:
      w.Member("tool_call_id", message.tool_call_id);
      w.Member("content", message.content);
      break;
    case core::MessageRole::kRefusedClaim:
      break;  // skipped by the caller
  }
  w.EndObject();
}

// ---- decoder --------------------------------------------------------------------------------

std::optional<FinishReason> ParseFinishReason(std::string_view text) {
  if (text == "stop" || text == "end_turn" || text == "eos") {
    return FinishReason::kStop;
  }
  if (text == "tool_calls" || text == "function_call") {
    return FinishReason::kToolCalls;
  }
  if (text == "length" || text == "max_tokens") {
    return FinishReason::kLength;
  }
  if (text == "content_filter" || text == "error") {
    return FinishReason::kError;
  }
  return std::nullopt;
}

// An {"error":{...}} chunk as a typed error.
absl::Status InStreamError(const rapidjson::Value& error, std::string_view data) {
  std::int64_t code = 0;
  std::string kind;
  if (error.IsObject()) {
    if (const rapidjson::Value* c = core::GetMember(error, "code"); c != nullptr) {
      if (c->IsInt64()) {
        code = c->GetInt64();
      } else if (c->IsString()) {
        kind = absl::AsciiStrToLower(ToAbsl(core::StringViewOf(*c)));
      }
    }
    if (auto type = core::GetString(error, "type"); type.has_value()) {
      absl::StrAppend(&kind, " ", absl::AsciiStrToLower(ToAbsl(*type)));
    }
  }
  std::string detail = ProviderErrorDetail(data);
  const std::string message = absl::StrCat("the provider reported an error in the stream",
                                           detail.empty() ? "" : ": ", detail);
  if (code == 429 || absl::StrContains(kind, "rate_limit") || absl::StrContains(kind, "429")) {
    return core::RateLimitedError(message, absl::ZeroDuration());
  }
  if ((code >= 400 && code <= 499) || absl::StrContains(kind, "invalid_request")) {
    return core::InvalidProviderRequestError(message);
  }
  return core::ProviderUnavailableError(message);
}

class OpenAiDecoder final : public StreamDecoder {
 public:
  explicit OpenAiDecoder(std::size_t max_arguments_bytes)
      : max_arguments_bytes_(max_arguments_bytes) {}

  absl::Status OnMessage(std::string_view event, std::string_view data, EmitFn emit) override {
    if (done_) {
      return absl::OkStatus();
    }
    const absl::string_view trimmed = absl::StripAsciiWhitespace(ToAbsl(data));
    if (trimmed == "[DONE]") {
      done_ = true;
      return absl::OkStatus();
    }
    absl::StatusOr<rapidjson::Document> doc = core::ParseJson(data, kChunkLimits);
    if (!doc.ok() || !doc->IsObject()) {
      return Malformed("a message is not a JSON object");
    }
    if (const rapidjson::Value* error = core::GetMember(*doc, "error");
        error != nullptr && !error->IsNull()) {
      return InStreamError(*error, data);
    }
    if (event == "error") {
      return InStreamError(*doc, data);
    }
    if (const rapidjson::Value* usage = core::GetMember(*doc, "usage");
        usage != nullptr && usage->IsObject()) {
      core::TokenUsage tokens;
      tokens.input_tokens = core::GetInt64(*usage, "prompt_tokens").value_or(0);
      tokens.output_tokens = core::GetInt64(*usage, "completion_tokens").value_or(0);
      usage_ = tokens;
    }
    const rapidjson::Value* choices = core::GetMember(*doc, "choices");
    if (choices == nullptr || choices->IsNull()) {
      return absl::OkStatus();
    }
    if (!choices->IsArray()) {
      return Malformed("choices is not an array");
    }
    for (const rapidjson::Value& choice : choices->GetArray()) {
      if (!choice.IsObject()) {
        return Malformed("a choice is not an object");
      }
      if (core::GetInt64(choice, "index").value_or(0) != 0) {
        continue;  // only one completion is requested
      }
      PULSE_RETURN_IF_ERROR(OnChoice(choice, emit));
    }
    return absl::OkStatus();
  }

  bool Complete() const override { return done_; }

  absl::Status OnEnd(EmitFn emit) override {
    if (!finish_.has_value()) {
      return core::IncompleteStreamError("the stream ended before a finish reason");
    }
    FinishReason finish = *finish_;
    // A response cut short (length) or withheld (content_filter, error) releases no call.
    if (finish == FinishReason::kStop || finish == FinishReason::kToolCalls) {
      for (auto& [index, call] : calls_) {
        if (call.name.empty()) {
          return Malformed("a tool call has no name");
        }
        if (call.id.empty()) {
          call.id = absl::StrCat("openai_", call.name, "_", index);
        }
        if (call.arguments_json.empty()) {
          call.arguments_json = "{}";
        }
      }
      for (const auto& [index, call] : calls_) {
        emit(LlmStreamEvent::ToolCallDone(call));
      }
      if (!calls_.empty() && finish == FinishReason::kStop) {
        finish = FinishReason::kToolCalls;
      }
    }
    if (usage_.has_value()) {
      emit(LlmStreamEvent::Usage(usage_->input_tokens, usage_->output_tokens));
    }
    emit(LlmStreamEvent::Finish(finish));
    return absl::OkStatus();
  }

 private:
  absl::Status OnChoice(const rapidjson::Value& choice, EmitFn emit) {
    if (const rapidjson::Value* delta = core::GetMember(choice, "delta");
        delta != nullptr && delta->IsObject()) {
      if (auto content = core::GetString(*delta, "content");
          content.has_value() && !content->empty()) {
        emit(LlmStreamEvent::ContentDelta(std::string(*content)));
      }
      if (const rapidjson::Value* fragments = core::GetMember(*delta, "tool_calls");
          fragments != nullptr && !fragments->IsNull()) {
        if (!fragments->IsArray()) {
          return Malformed("tool_calls is not an array");
        }
        std::int64_t position = 0;
        for (const rapidjson::Value& fragment : fragments->GetArray()) {
          PULSE_RETURN_IF_ERROR(OnToolCallFragment(fragment, position++));
        }
      }
    }
    if (const rapidjson::Value* reason = core::GetMember(choice, "finish_reason");
        reason != nullptr && !reason->IsNull()) {
      if (!reason->IsString()) {
        return Malformed("finish_reason is not a string");
      }
      // An unknown reason still ends the response; it is read as a plain stop.
      finish_ = ParseFinishReason(core::StringViewOf(*reason)).value_or(FinishReason::kStop);
    }
    return absl::OkStatus();
  }

  absl::Status OnToolCallFragment(const rapidjson::Value& fragment, std::int64_t position) {
    if (!fragment.IsObject()) {
      return Malformed("a tool call fragment is not an object");
    }
    std::int64_t index = position;
    if (const rapidjson::Value* i = core::GetMember(fragment, "index"); i != nullptr) {
      if (!i->IsInt64()) {
        return Malformed("a tool call index is not an integer");
      }
      index = i->GetInt64();
    }
    if (index < 0 || index > kMaxToolCallIndex) {
      return Malformed("a tool call index is out of range");
    }
    core::ToolCall& call = calls_[index];
    if (auto id = core::GetString(fragment, "id"); id.has_value() && call.id.empty()) {
      call.id = std::string(*id);
    }
    const rapidjson::Value* function = core::GetMember(fragment, "function");
    if (function == nullptr || !function->IsObject()) {
      return absl::OkStatus();
    }
    if (auto name = core::GetString(*function, "name"); name.has_value() && call.name.empty()) {
      call.name = std::string(*name);
    }
    if (auto arguments = core::GetString(*function, "arguments"); arguments.has_value()) {
      if (call.arguments_json.size() + arguments->size() > max_arguments_bytes_) {
        return Malformed("a tool call's arguments exceed the size limit");
      }
      call.arguments_json.append(*arguments);
    }
    return absl::OkStatus();
  }

  const std::size_t max_arguments_bytes_;
  std::map<std::int64_t, core::ToolCall> calls_;  // by index: provider order
  std::optional<FinishReason> finish_;
  std::optional<core::TokenUsage> usage_;
  bool done_ = false;
};

}  // namespace

absl::StatusOr<HttpRequestSpec> OpenAiProtocol::BuildRequest(
    const core::LlmRequest& request) const {
  const bool send_tools = !request.tools.empty() && request.tool_choice != core::ToolChoice::kNone;
  if (request.tool_choice == core::ToolChoice::kRequired && request.tools.empty()) {
    return core::InvalidProviderRequestError("tool_choice required needs at least one tool");
  }
  core::JsonWriter w;
  w.StartObject();
  w.Member("model", options_.model);
  w.Key("messages");
  w.StartArray();
  for (const core::Message& message : request.messages) {
    if (message.role == core::MessageRole::kRefusedClaim) {
      continue;  // a transcript entry: the loop's provider view never contains one
    }
    WriteMessage(message, w);
  }
  w.EndArray();
  if (send_tools) {
    w.Key("tools");
    w.StartArray();
    for (const core::ToolDefinition& tool : request.tools) {
      PULSE_RETURN_IF_ERROR(WriteTool(tool, w));
    }
    w.EndArray();
    if (request.tool_choice == core::ToolChoice::kRequired) {
      w.Member("tool_choice", "required");
    }
  }
  if (request.max_tokens.has_value()) {
    w.Member(options_.max_tokens_field, *request.max_tokens);
  }
  w.Member("stream", true);
  if (options_.stream_usage_option) {
    w.Key("stream_options");
    w.StartObject();
    w.Member("include_usage", true);
    w.EndObject();
  }
  w.EndObject();

  HttpRequestSpec spec;
  spec.method = "POST";
  spec.path = "/chat/completions";
  spec.headers.emplace_back("Accept", "text/event-stream");
  if (!options_.api_key.empty()) {
    spec.headers.emplace_back("Authorization", absl::StrCat("Bearer ", options_.api_key));
  }
  spec.body = w.Take();
  return spec;
}

std::unique_ptr<StreamDecoder> OpenAiProtocol::NewDecoder() const {
  return std::make_unique<OpenAiDecoder>(options_.max_tool_arguments_bytes);
}

}  // namespace pulse::adapters::providers
