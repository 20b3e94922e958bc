#include "stream_support.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "fmt/format.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::providers::internal {
namespace {

absl::Status RenderStreamReadError(const core::JsonReadError& error) {
  return core::IncompleteStreamError(core::JsonReadErrorText(error));
}

// Error text quotes at most this much of a response.
constexpr std::size_t kQuotedBytes = 120;

}  // namespace

absl::StatusOr<rapidjson::Document> ParseStreamObject(std::string_view vendor,
                                                      std::string_view data) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(data, kStreamJsonLimits);
  if (!doc.ok()) {
    return core::IncompleteStreamError(fmt::format("{} stream: message is not usable JSON ({})",
                                                   vendor, std::string(doc.status().message())));
  }
  if (!doc->IsObject()) {
    return core::IncompleteStreamError(fmt::format("{} stream: message is not a JSON object: {}",
                                                   vendor,
                                                   core::BoundedCleanText(data, kQuotedBytes)));
  }
  return doc;
}

const core::JsonReaderOptions& StreamReaderOptions() {
  static const core::JsonReaderOptions kOptions{.render = &RenderStreamReadError};
  return kOptions;
}

const rapidjson::Value* ArrayMember(core::JsonObjectReader& reader, std::string_view key) {
  const rapidjson::Value* v = reader.Member(key);
  if (v != nullptr && !v->IsArray()) {
    reader.Fail(key, "must be an array");
    return nullptr;
  }
  return v;
}

rapidjson::Document ReplayArguments(std::string_view arguments_json) {
  absl::StatusOr<rapidjson::Document> parsed = core::ParseJson(arguments_json);
  if (parsed.ok() && parsed->IsObject()) {
    return std::move(parsed).value();
  }
  rapidjson::Document empty;
  empty.SetObject();
  return empty;
}

absl::StatusOr<rapidjson::Document> ToolSchema(const core::ToolDefinition& tool) {
  if (absl::StripAsciiWhitespace(core::ToAbsl(tool.input_schema_json)).empty()) {
    rapidjson::Document schema;
    schema.SetObject();
    schema.AddMember("type", "object", schema.GetAllocator());
    return schema;
  }
  absl::StatusOr<rapidjson::Document> schema = core::ParseJson(tool.input_schema_json);
  if (!schema.ok()) {
    return core::InvalidProviderRequestError(fmt::format(
        "tool \"{}\" has an unusable input schema: {}",
        core::BoundedCleanText(tool.name, kMaxNameBytes), std::string(schema.status().message())));
  }
  if (!schema->IsObject()) {
    return core::InvalidProviderRequestError(
        fmt::format("tool \"{}\" input schema is not a JSON object",
                    core::BoundedCleanText(tool.name, kMaxNameBytes)));
  }
  return schema;
}

std::string SystemText(const core::LlmRequest& request) {
  std::string text;
  for (const core::Message& m : request.messages) {
    if (m.role != core::MessageRole::kSystem || m.content.empty()) {
      continue;
    }
    if (!text.empty()) {
      text += "\n\n";
    }
    text += m.content;
  }
  return text;
}

absl::Status CheckRequest(std::string_view vendor, const core::LlmRequest& request) {
  if (request.max_tokens.has_value() && *request.max_tokens <= 0) {
    return core::InvalidProviderRequestError(fmt::format(
        "{} request: max_tokens must be positive, not {}", vendor, *request.max_tokens));
  }
  if (request.tool_choice == core::ToolChoice::kRequired && request.tools.empty()) {
    return core::InvalidProviderRequestError(fmt::format(
        "{} request: tool_choice \"required\" needs at least one tool to call", vendor));
  }
  return absl::OkStatus();
}

bool OffersTools(const core::LlmRequest& request) {
  return !request.tools.empty() && request.tool_choice != core::ToolChoice::kNone;
}

std::string ResolveToolName(const std::vector<core::Message>& messages, std::size_t before,
                            std::string_view call_id) {
  for (std::size_t i = std::min(before, messages.size()); i > 0; --i) {
    const core::Message& m = messages[i - 1];
    if (m.role != core::MessageRole::kAssistant) {
      continue;
    }
    for (const core::ToolCall& call : m.tool_calls) {
      if (call.id == call_id) {
        return call.name;
      }
    }
  }
  return "";
}

// ---- FailClosedDecoder ----------------------------------------------------------------------

FailClosedDecoder::FailClosedDecoder(std::string_view vendor) : vendor_(vendor) {}

absl::Status FailClosedDecoder::OnMessage(std::string_view event, std::string_view data,
                                          EmitFn emit) {
  if (!broken_.ok()) {
    return broken_;
  }
  if (ended_ || Complete()) {
    broken_ = Broken("a message arrived after the end of the response");
    return broken_;
  }
  absl::Status status = Decode(event, data, emit);
  if (!status.ok()) {
    broken_ = status;
  }
  return status;
}

absl::Status FailClosedDecoder::OnEnd(EmitFn emit) {
  if (!broken_.ok()) {
    return broken_;
  }
  if (ended_) {
    return Broken("the response was already ended");
  }
  ended_ = true;
  if (!finish_.has_value()) {
    broken_ = Broken(MissingFinishText());
    return broken_;
  }
  core::FinishReason finish = *finish_;
  const bool deliver_calls =
      (finish == core::FinishReason::kStop || finish == core::FinishReason::kToolCalls) &&
      !calls_.empty();
  if (deliver_calls) {
    finish = core::FinishReason::kToolCalls;
  } else if (finish == core::FinishReason::kToolCalls) {
    finish = core::FinishReason::kStop;
  }
  if (deliver_calls) {
    for (core::ToolCall& call : calls_) {
      emit(core::LlmStreamEvent::ToolCallDone(std::move(call)));
    }
  }
  calls_.clear();
  if (input_tokens_.has_value() || output_tokens_.has_value()) {
    emit(core::LlmStreamEvent::Usage(input_tokens_.value_or(0), output_tokens_.value_or(0)));
  }
  emit(core::LlmStreamEvent::Finish(finish));
  return absl::OkStatus();
}

absl::Status FailClosedDecoder::AddToolCall(core::ToolCall call, std::string_view id_prefix) {
  if (calls_.size() >= kMaxToolCalls) {
    return Broken(fmt::format("more than {} tool calls in one response", kMaxToolCalls));
  }
  if (call.id.empty()) {
    call.id = fmt::format("{}{}_{}", id_prefix, call.name, calls_.size());
  }
  for (const core::ToolCall& earlier : calls_) {
    if (earlier.id == call.id) {
      return Broken(fmt::format("tool call id \"{}\" is used twice",
                                core::BoundedCleanText(call.id, kQuotedBytes)));
    }
  }
  calls_.push_back(std::move(call));
  return absl::OkStatus();
}

absl::Status FailClosedDecoder::Finish(core::FinishReason reason) {
  if (finish_.has_value()) {
    return Broken("a second finish reason arrived");
  }
  finish_ = reason;
  return absl::OkStatus();
}

absl::Status FailClosedDecoder::Broken(std::string_view what) const {
  return core::IncompleteStreamError(fmt::format("{} stream: {}", vendor_, what));
}

}  // namespace pulse::adapters::providers::internal
