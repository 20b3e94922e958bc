#include "pulse/core/builtins/question_handler.h"

#include <string>

#include "absl/strings/ascii.h"
#include "pulse/core/json/json.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_names.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core {
namespace {

std::string Trimmed(std::string_view text) {
  return std::string(absl::StripAsciiWhitespace(ToAbsl(text)));
}

}  // namespace

ToolResult QuestionToolHandler::Run(const rapidjson::Value& args, const ToolContext& /*context*/) {
  const std::string question = Trimmed(GetString(args, kArgQuestion).value_or(""));
  if (question.empty()) {
    ToolError error;
    error.code = ToolErrorCode::kInvalidInput;
    error.message = "pulse_question needs a non-blank question";
    error.blocked = true;
    return ToolResult::Failure(std::move(error));
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("question");
  w.String(question.data(), static_cast<rapidjson::SizeType>(question.size()));
  w.Key("options");
  w.StartArray();
  if (const rapidjson::Value* options = GetMember(args, kArgOptions);
      options != nullptr && options->IsArray()) {
    for (const auto& option : options->GetArray()) {
      if (!option.IsString()) {
        continue;
      }
      const std::string text =
          Trimmed(std::string_view(option.GetString(), option.GetStringLength()));
      if (!text.empty()) {
        w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
      }
    }
  }
  w.EndArray();
  w.EndObject();
  ToolResult result = ToolResult::Success(std::string(buffer.GetString(), buffer.GetSize()));
  result.question = result.content;
  return result;
}

}  // namespace pulse::core
