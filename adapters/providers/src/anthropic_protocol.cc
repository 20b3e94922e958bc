#include "pulse/adapters/providers/anthropic_protocol.h"

#include <array>
#include <cstdint>
#include <map>
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
using core::JsonStringRule;
using internal::StreamReaderOptions;

// Wire names, spelled once.
namespace w {
// request
constexpr std::string_view kPath = "/messages";
constexpr std::string_view kApiKeyHeader = "x-api-key";
constexpr std::string_view kVersionHeader = "anthropic-version";
constexpr std::string_view kModel = "model";
constexpr std::string_view kMaxTokens = "max_tokens";
constexpr std::string_view kSystem = "system";
constexpr std::string_view kMessages = "messages";
constexpr std::string_view kRole = "role";
constexpr std::string_view kUser = "user";
constexpr std::string_view kAssistant = "assistant";
constexpr std::string_view kContent = "content";
constexpr std::string_view kType = "type";
constexpr std::string_view kText = "text";
constexpr std::string_view kToolUse = "tool_use";
constexpr std::string_view kId = "id";
constexpr std::string_view kName = "name";
constexpr std::string_view kInput = "input";
constexpr std::string_view kToolResult = "tool_result";
constexpr std::string_view kToolUseId = "tool_use_id";
constexpr std::string_view kIsError = "is_error";
constexpr std::string_view kTools = "tools";
constexpr std::string_view kDescription = "description";
constexpr std::string_view kInputSchema = "input_schema";
constexpr std::string_view kToolChoice = "tool_choice";
constexpr std::string_view kAny = "any";
constexpr std::string_view kStream = "stream";
// stream events
constexpr std::string_view kMessageStart = "message_start";
constexpr std::string_view kContentBlockStart = "content_block_start";
constexpr std::string_view kContentBlockDelta = "content_block_delta";
constexpr std::string_view kContentBlockStop = "content_block_stop";
constexpr std::string_view kMessageDelta = "message_delta";
constexpr std::string_view kMessageStop = "message_stop";
constexpr std::string_view kPing = "ping";
constexpr std::string_view kError = "error";
// stream members
constexpr std::string_view kMessage = "message";
constexpr std::string_view kUsage = "usage";
constexpr std::string_view kIndex = "index";
constexpr std::string_view kContentBlock = "content_block";
constexpr std::string_view kDelta = "delta";
constexpr std::string_view kTextDelta = "text_delta";
constexpr std::string_view kInputJsonDelta = "input_json_delta";
constexpr std::string_view kPartialJson = "partial_json";
constexpr std::string_view kStopReason = "stop_reason";
constexpr std::string_view kInputTokens = "input_tokens";
constexpr std::string_view kCacheCreationInputTokens = "cache_creation_input_tokens";
constexpr std::string_view kCacheReadInputTokens = "cache_read_input_tokens";
constexpr std::string_view kOutputTokens = "output_tokens";
}  // namespace w

// stop_reason values. Anything else is terminal but kError: an unknown ending never releases
// tool calls.
constexpr std::array<core::WireName<FinishReason>, 7> kStopReasons = {{
    {FinishReason::kStop, "end_turn"},
    {FinishReason::kStop, "stop_sequence"},
    {FinishReason::kStop, "pause_turn"},
    {FinishReason::kToolCalls, "tool_use"},
    {FinishReason::kLength, "max_tokens"},
    {FinishReason::kLength, "model_context_window_exceeded"},
    {FinishReason::kError, "refusal"},
}};

enum class ErrorClass { kRateLimited, kUnavailable, kInvalidRequest };

// error.type values of the `error` event; unknown types are kUnavailable.
constexpr std::array<core::WireName<ErrorClass>, 10> kErrorTypes = {{
    {ErrorClass::kRateLimited, "rate_limit_error"},
    {ErrorClass::kUnavailable, "overloaded_error"},
    {ErrorClass::kUnavailable, "api_error"},
    {ErrorClass::kUnavailable, "timeout_error"},
    {ErrorClass::kInvalidRequest, "invalid_request_error"},
    {ErrorClass::kInvalidRequest, "authentication_error"},
    {ErrorClass::kInvalidRequest, "permission_error"},
    {ErrorClass::kInvalidRequest, "not_found_error"},
    {ErrorClass::kInvalidRequest, "request_too_large"},
    {ErrorClass::kInvalidRequest, "billing_error"},
}};

constexpr std::size_t kMaxBlocks = 1024;
constexpr std::int64_t kMaxBlockIndex = 1 << 20;
constexpr JsonPresence kRequired = JsonPresence::kRequired;

// ---- request ------------------------------------------------------------------------------

// One turn of the `messages` array. In a user turn tool_result blocks come first, as the API
// requires, then any text.
struct Turn {
  std::string_view role;
  std::vector<std::string> results;
  std::vector<std::string> blocks;
};

// Appends a serialized content block, merging it into the previous turn when the role repeats.
void AddBlock(std::vector<Turn>& turns, std::string_view role, std::string block, bool is_result) {
  if (turns.empty() || turns.back().role != role) {
    turns.push_back(Turn{role, {}, {}});
  }
  (is_result ? turns.back().results : turns.back().blocks).push_back(std::move(block));
}

std::string TextBlock(std::string_view text) {
  core::JsonWriter out;
  out.StartObject();
  out.Member(w::kType, w::kText);
  out.Member(w::kText, text);
  out.EndObject();
  return out.Take();
}

std::string ToolUseBlock(const core::ToolCall& call) {
  core::JsonWriter out;
  out.StartObject();
  out.Member(w::kType, w::kToolUse);
  out.Member(w::kId, call.id);
  out.Member(w::kName, call.name);
  out.Key(w::kInput);
  out.Value(internal::ReplayArguments(call.arguments_json));
  out.EndObject();
  return out.Take();
}

std::string ToolResultBlock(const core::Message& result) {
  core::JsonWriter out;
  out.StartObject();
  out.Member(w::kType, w::kToolResult);
  out.Member(w::kToolUseId, result.tool_call_id);
  out.Member(w::kContent, result.content);
  out.Member(w::kIsError, result.is_error);
  out.EndObject();
  return out.Take();
}

std::vector<Turn> Turns(const std::vector<core::Message>& messages) {
  std::vector<Turn> turns;
  for (const core::Message& m : messages) {
    switch (m.role) {
      case core::MessageRole::kSystem:
        break;  // the top-level `system` string
      case core::MessageRole::kUser:
        if (!m.content.empty()) {
          AddBlock(turns, w::kUser, TextBlock(m.content), false);
        }
        break;
      case core::MessageRole::kAssistant:
        if (!m.content.empty()) {
          AddBlock(turns, w::kAssistant, TextBlock(m.content), false);
        }
        for (const core::ToolCall& call : m.tool_calls) {
          AddBlock(turns, w::kAssistant, ToolUseBlock(call), false);
        }
        break;
      case core::MessageRole::kTool:
        AddBlock(turns, w::kUser, ToolResultBlock(m), true);
        break;
      case core::MessageRole::kRefusedClaim:
        break;  // a transcript entry: the loop's provider view never contains one
    }
  }
  return turns;
}

absl::Status WriteTools(core::JsonWriter& out, const core::LlmRequest& request) {
  out.Key(w::kTools);
  out.StartArray();
  for (const core::ToolDefinition& tool : request.tools) {
    PULSE_ASSIGN_OR_RETURN(rapidjson::Document schema, internal::ToolSchema(tool));
    out.StartObject();
    out.Member(w::kName, tool.name);
    out.MemberIfNotEmpty(w::kDescription, tool.description);
    out.Key(w::kInputSchema);
    out.Value(schema);
    out.EndObject();
  }
  out.EndArray();
  if (request.tool_choice == core::ToolChoice::kRequired) {
    out.Key(w::kToolChoice);
    out.StartObject();
    out.Member(w::kType, w::kAny);
    out.EndObject();
  }
  return absl::OkStatus();
}

// ---- decoder ------------------------------------------------------------------------------

class AnthropicDecoder final : public internal::FailClosedDecoder {
 public:
  AnthropicDecoder() : FailClosedDecoder("Anthropic") {}

  bool Complete() const override { return stopped_; }

 private:
  enum class BlockKind { kText, kToolUse, kOther };
  struct Block {
    BlockKind kind = BlockKind::kOther;
    bool open = true;
    std::string id;
    std::string name;
    std::string start_input;  // content_block.input, serialized
    std::string input_json;   // input_json_delta fragments, concatenated
  };

  absl::Status Decode(std::string_view event, std::string_view data, EmitFn emit) override {
    PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, internal::ParseStreamObject(vendor(), data));
    JsonObjectReader in(doc, "Anthropic event", StreamReaderOptions());
    const std::optional<std::string> type =
        in.String(w::kType, {internal::kMaxCodeBytes, kRequired});
    PULSE_RETURN_IF_ERROR(in.status());
    const std::string shown_type = core::BoundedCleanText(*type, internal::kMaxCodeBytes);
    if (!event.empty() && event != *type) {
      return Broken(fmt::format("event \"{}\" carries data of type \"{}\"",
                                core::BoundedCleanText(event, internal::kMaxCodeBytes),
                                shown_type));
    }
    if (*type == w::kPing) {
      return absl::OkStatus();
    }
    if (*type == w::kError) {
      return StreamError(in, data);
    }
    if (*type == w::kMessageStart) {
      return MessageStart(in);
    }
    if (!started_) {
      return Broken(fmt::format("\"{}\" arrived before message_start", shown_type));
    }
    if (*type == w::kContentBlockStart) {
      return BlockStart(in, emit);
    }
    if (*type == w::kContentBlockDelta) {
      return BlockDelta(in, emit);
    }
    if (*type == w::kContentBlockStop) {
      return BlockStop(in);
    }
    if (*type == w::kMessageDelta) {
      return MessageDelta(in);
    }
    if (*type == w::kMessageStop) {
      if (!finished()) {
        return Broken("message_stop arrived before any stop_reason");
      }
      stopped_ = true;
      return absl::OkStatus();
    }
    return absl::OkStatus();  // an event type added after this code was written
  }

  std::string_view MissingFinishText() const override {
    return "the stream ended before message_delta carried a stop_reason";
  }

  absl::Status MessageStart(JsonObjectReader& in) {
    if (started_) {
      return Broken("a second message_start arrived");
    }
    started_ = true;
    const rapidjson::Value* message = in.Member(w::kMessage, kRequired);
    PULSE_RETURN_IF_ERROR(in.status());
    JsonObjectReader m(*message, "Anthropic message_start.message", StreamReaderOptions());
    const rapidjson::Value* usage = m.Member(w::kUsage);
    PULSE_RETURN_IF_ERROR(m.status());
    return usage == nullptr ? absl::OkStatus() : ReadUsage(*usage, "Anthropic message usage");
  }

  // Token counts are cumulative: the latest report wins. Input counts every prompt token,
  // whether it was cached, written to the cache or neither.
  absl::Status ReadUsage(const rapidjson::Value& usage, std::string path) {
    JsonObjectReader u(usage, std::move(path), StreamReaderOptions());
    const std::optional<std::int64_t> input = u.Int(w::kInputTokens, 0, internal::kMaxTokenCount);
    const std::optional<std::int64_t> created =
        u.Int(w::kCacheCreationInputTokens, 0, internal::kMaxTokenCount);
    const std::optional<std::int64_t> read =
        u.Int(w::kCacheReadInputTokens, 0, internal::kMaxTokenCount);
    const std::optional<std::int64_t> output = u.Int(w::kOutputTokens, 0, internal::kMaxTokenCount);
    PULSE_RETURN_IF_ERROR(u.status());
    if (input.has_value() || created.has_value() || read.has_value()) {
      SetInputTokens(input.value_or(0) + created.value_or(0) + read.value_or(0));
    }
    if (output.has_value()) {
      SetOutputTokens(*output);
    }
    return absl::OkStatus();
  }

  absl::Status BlockStart(JsonObjectReader& in, EmitFn emit) {
    const std::optional<std::int64_t> index = in.Int(w::kIndex, 0, kMaxBlockIndex, kRequired);
    const rapidjson::Value* content = in.Member(w::kContentBlock, kRequired);
    PULSE_RETURN_IF_ERROR(in.status());
    if (finished()) {
      return Broken("a content block started after the stop_reason");
    }
    if (blocks_.contains(*index)) {
      return Broken(fmt::format("content block {} started twice", *index));
    }
    if (blocks_.size() >= kMaxBlocks) {
      return Broken(fmt::format("more than {} content blocks", kMaxBlocks));
    }
    JsonObjectReader b(*content, fmt::format("Anthropic content_block[{}]", *index),
                       StreamReaderOptions());
    const std::optional<std::string> type =
        b.String(w::kType, {internal::kMaxCodeBytes, kRequired});
    PULSE_RETURN_IF_ERROR(b.status());
    Block block;
    if (*type == w::kText) {
      block.kind = BlockKind::kText;
      const std::optional<std::string> text =
          b.String(w::kText, {internal::kStreamJsonLimits.max_bytes});
      PULSE_RETURN_IF_ERROR(b.status());
      if (text.has_value() && !text->empty()) {
        emit(core::LlmStreamEvent::ContentDelta(*text));
      }
    } else if (*type == w::kToolUse) {
      block.kind = BlockKind::kToolUse;
      block.id =
          b.String(w::kId, {internal::kMaxIdBytes, JsonPresence::kOptional, true}).value_or("");
      block.name = b.String(w::kName, {internal::kMaxNameBytes, kRequired, true}).value_or("");
      const rapidjson::Value* input = b.Member(w::kInput);
      if (input != nullptr && !input->IsObject()) {
        b.Fail(w::kInput, "must be a JSON object");
      }
      PULSE_RETURN_IF_ERROR(b.status());
      block.start_input = input == nullptr ? "{}" : core::ToJsonString(*input);
    }
    blocks_.emplace(*index, std::move(block));
    return absl::OkStatus();
  }

  // The open block `index` names, or a broken stream.
  absl::StatusOr<Block*> OpenBlock(std::int64_t index, std::string_view event) {
    auto it = blocks_.find(index);
    if (it == blocks_.end() || !it->second.open) {
      return Broken(fmt::format("{} for content block {}, which is not open", event, index));
    }
    return &it->second;
  }

  absl::Status BlockDelta(JsonObjectReader& in, EmitFn emit) {
    const std::optional<std::int64_t> index = in.Int(w::kIndex, 0, kMaxBlockIndex, kRequired);
    const rapidjson::Value* delta = in.Member(w::kDelta, kRequired);
    PULSE_RETURN_IF_ERROR(in.status());
    if (finished()) {
      return Broken("a content block delta arrived after the stop_reason");
    }
    PULSE_ASSIGN_OR_RETURN(Block * block, OpenBlock(*index, w::kContentBlockDelta));
    JsonObjectReader d(*delta, fmt::format("Anthropic delta[{}]", *index), StreamReaderOptions());
    const std::optional<std::string> type =
        d.String(w::kType, {internal::kMaxCodeBytes, kRequired});
    PULSE_RETURN_IF_ERROR(d.status());
    if (*type == w::kTextDelta) {
      if (block->kind != BlockKind::kText) {
        return Broken(fmt::format("text_delta for content block {}, which is not text", *index));
      }
      const std::optional<std::string> text =
          d.String(w::kText, {internal::kStreamJsonLimits.max_bytes});
      PULSE_RETURN_IF_ERROR(d.status());
      if (text.has_value() && !text->empty()) {
        emit(core::LlmStreamEvent::ContentDelta(*text));
      }
      return absl::OkStatus();
    }
    if (*type == w::kInputJsonDelta) {
      if (block->kind == BlockKind::kText) {
        return Broken(fmt::format("input_json_delta for text content block {}", *index));
      }
      const std::optional<std::string> fragment =
          d.String(w::kPartialJson, {internal::kStreamJsonLimits.max_bytes});
      PULSE_RETURN_IF_ERROR(d.status());
      if (block->kind != BlockKind::kToolUse || !fragment.has_value()) {
        return absl::OkStatus();  // a server tool's input: not ours to run
      }
      if (block->input_json.size() + fragment->size() > internal::kStreamJsonLimits.max_bytes) {
        return Broken(fmt::format("tool_use block {} input exceeds {} bytes", *index,
                                  internal::kStreamJsonLimits.max_bytes));
      }
      block->input_json += *fragment;
      return absl::OkStatus();
    }
    // thinking_delta, signature_delta, citations_delta, ...: not content, not tool input.
    return absl::OkStatus();
  }

  absl::Status BlockStop(JsonObjectReader& in) {
    const std::optional<std::int64_t> index = in.Int(w::kIndex, 0, kMaxBlockIndex, kRequired);
    PULSE_RETURN_IF_ERROR(in.status());
    PULSE_ASSIGN_OR_RETURN(Block * block, OpenBlock(*index, w::kContentBlockStop));
    block->open = false;
    if (block->kind != BlockKind::kToolUse) {
      return absl::OkStatus();
    }
    std::string arguments = std::move(block->start_input);
    if (!block->input_json.empty()) {
      absl::StatusOr<rapidjson::Document> input =
          core::ParseJson(block->input_json, internal::kStreamJsonLimits);
      if (!input.ok() || !input->IsObject()) {
        // Judged once the stop_reason is known: max_tokens explains a cut input.
        if (unusable_input_.ok()) {
          unusable_input_ = Broken(
              fmt::format("tool_use block {} ({}) input is not {}", *index,
                          core::BoundedCleanText(block->name, internal::kMaxNameBytes),
                          input.ok() ? std::string("a JSON object")
                                     : "valid JSON: " + std::string(input.status().message())));
        }
        return absl::OkStatus();
      }
      arguments = std::move(block->input_json);
    }
    return AddToolCall(
        core::ToolCall{std::move(block->id), std::move(block->name), std::move(arguments)},
        "anthropic_");
  }

  absl::Status MessageDelta(JsonObjectReader& in) {
    const rapidjson::Value* delta = in.Member(w::kDelta);
    const rapidjson::Value* usage = in.Member(w::kUsage);
    PULSE_RETURN_IF_ERROR(in.status());
    if (usage != nullptr) {
      PULSE_RETURN_IF_ERROR(ReadUsage(*usage, "Anthropic message_delta.usage"));
    }
    if (delta == nullptr) {
      return absl::OkStatus();
    }
    JsonObjectReader d(*delta, "Anthropic message_delta.delta", StreamReaderOptions());
    const std::optional<std::string> stop_reason =
        d.String(w::kStopReason, {internal::kMaxCodeBytes});
    PULSE_RETURN_IF_ERROR(d.status());
    if (!stop_reason.has_value()) {
      return absl::OkStatus();
    }
    for (const auto& [index, block] : blocks_) {
      if (block.open && block.kind == BlockKind::kToolUse) {
        return Broken(
            fmt::format("stop_reason arrived while tool_use block {} was still open", index));
      }
    }
    const FinishReason finish =
        core::WireValueOf(kStopReasons, *stop_reason).value_or(FinishReason::kError);
    if (!unusable_input_.ok() &&
        (finish == FinishReason::kStop || finish == FinishReason::kToolCalls)) {
      return unusable_input_;  // a finished response with a tool input that does not parse
    }
    return Finish(finish);
  }

  // The error event, typed by error.type. Its message is kept only as ProviderErrorDetail's
  // cleaned, redacted excerpt.
  absl::Status StreamError(JsonObjectReader& in, std::string_view data) const {
    const rapidjson::Value* error = in.Member(w::kError, kRequired);
    PULSE_RETURN_IF_ERROR(in.status());
    JsonObjectReader e(*error, "Anthropic error", StreamReaderOptions());
    const std::string type =
        e.String(w::kType, {internal::kMaxCodeBytes}).value_or("unknown_error");
    PULSE_RETURN_IF_ERROR(e.status());
    const std::string detail = ProviderErrorDetail(data);
    const std::string text = fmt::format("Anthropic stream error {}: {}",
                                         core::BoundedCleanText(type, internal::kMaxCodeBytes),
                                         detail.empty() ? "(no message)" : detail);
    switch (core::WireValueOf(kErrorTypes, type).value_or(ErrorClass::kUnavailable)) {
      case ErrorClass::kRateLimited:
        return core::RateLimitedError(text, absl::ZeroDuration());
      case ErrorClass::kInvalidRequest:
        return core::InvalidProviderRequestError(text);
      case ErrorClass::kUnavailable:
        break;
    }
    return core::ProviderUnavailableError(text);
  }

  std::map<std::int64_t, Block> blocks_;
  // The first tool_use input that did not parse as one JSON object. It breaks the stream unless
  // the stop_reason says the response was cut (max_tokens) or failed, which releases no call.
  absl::Status unusable_input_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace

AnthropicProtocol::AnthropicProtocol(std::string model, std::string api_key,
                                     AnthropicProtocolOptions options)
    : model_(std::move(model)), api_key_(std::move(api_key)), options_(options) {}

absl::StatusOr<HttpRequestSpec> AnthropicProtocol::BuildRequest(
    const core::LlmRequest& request) const {
  PULSE_RETURN_IF_ERROR(internal::CheckRequest("Anthropic", request));
  const int max_tokens = request.max_tokens.value_or(options_.default_max_tokens);
  if (max_tokens <= 0) {
    return core::InvalidProviderRequestError(
        fmt::format("Anthropic request: max_tokens must be positive, not {}", max_tokens));
  }
  const std::vector<Turn> turns = Turns(request.messages);
  if (turns.empty()) {
    return core::InvalidProviderRequestError(
        "Anthropic request: the conversation has no user or assistant content");
  }

  core::JsonWriter out;
  out.StartObject();
  out.Member(w::kModel, model_);
  out.Member(w::kMaxTokens, max_tokens);
  out.MemberIfNotEmpty(w::kSystem, internal::SystemText(request));
  out.Key(w::kMessages);
  out.StartArray();
  for (const Turn& turn : turns) {
    out.StartObject();
    out.Member(w::kRole, turn.role);
    out.Key(w::kContent);
    out.StartArray();
    for (const std::string& block : turn.results) {
      out.RawValue(block);
    }
    for (const std::string& block : turn.blocks) {
      out.RawValue(block);
    }
    out.EndArray();
    out.EndObject();
  }
  out.EndArray();
  if (internal::OffersTools(request)) {
    PULSE_RETURN_IF_ERROR(WriteTools(out, request));
  }
  out.Member(w::kStream, true);
  out.EndObject();

  HttpRequestSpec spec;
  spec.path = std::string(w::kPath);
  if (!api_key_.empty()) {
    spec.headers.emplace_back(w::kApiKeyHeader, api_key_);
  }
  spec.headers.emplace_back(w::kVersionHeader, kAnthropicVersion);
  spec.body = out.Take();
  return spec;
}

std::unique_ptr<StreamDecoder> AnthropicProtocol::NewDecoder() const {
  return std::make_unique<AnthropicDecoder>();
}

}  // namespace pulse::adapters::providers
