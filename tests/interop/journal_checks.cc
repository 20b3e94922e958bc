#include "journal_checks.h"

#include <catch2/catch.hpp>
#include <cstddef>

#include "absl/status/statusor.h"
#include "pulse/core/json/json.h"

namespace pulse::testing {
namespace {

using core::GetMember;
using core::GetString;

std::string Str(const rapidjson::Value& object, std::string_view key) {
  return std::string(GetString(object, key).value_or("<missing>"));
}

std::string ContentText(const rapidjson::Value& message) {
  const rapidjson::Value* content = GetMember(message, "content");
  return content == nullptr ? "<missing>" : MessageText(*content);
}

// Removes member `key` from every object in `value`, at any depth.
void StripMember(rapidjson::Value& value, const char* key) {
  if (value.IsObject()) {
    value.RemoveMember(key);
    // By index: clang finds a mutable member iterator's != ambiguous in C++20.
    const auto members = value.MemberBegin();
    for (rapidjson::SizeType i = 0; i < value.MemberCount(); ++i) {
      StripMember(members[i].value, key);
    }
  } else if (value.IsArray()) {
    for (auto& element : value.GetArray()) {
      StripMember(element, key);
    }
  }
}

std::string ExpectedSchema(const core::ToolDefinition& tool, bool drop_additional_properties) {
  absl::StatusOr<rapidjson::Document> schema = core::ParseJson(tool.input_schema_json);
  REQUIRE(schema.ok());
  if (drop_additional_properties) {
    StripMember(*schema, "additionalProperties");
  }
  return core::CanonicalJson(*schema);
}

void CheckTools(const rapidjson::Value& body, const ExpectedRequest& expected) {
  const rapidjson::Value* tools = GetMember(body, "tools");
  if (expected.tools.empty()) {
    CHECK((tools == nullptr || tools->IsNull() || (tools->IsArray() && tools->Empty())));
    return;
  }
  REQUIRE(tools != nullptr);
  REQUIRE(tools->IsArray());
  REQUIRE(tools->Size() == expected.tools.size());
  for (rapidjson::SizeType i = 0; i < tools->Size(); ++i) {
    const rapidjson::Value* function = GetMember((*tools)[i], "function");
    REQUIRE(function != nullptr);
    const core::ToolDefinition& want = expected.tools[i];
    CHECK(Str(*function, "name") == want.name);
    CHECK(Str(*function, "description") == want.description);
    const rapidjson::Value* parameters = GetMember(*function, "parameters");
    REQUIRE(parameters != nullptr);
    CHECK(core::CanonicalJson(*parameters) ==
          ExpectedSchema(want, expected.schemas_drop_additional_properties));
  }
}

void CheckAssistantCalls(const rapidjson::Value& messages, const ExpectedRequest& expected) {
  const rapidjson::Value* assistant = nullptr;
  for (const auto& message : messages.GetArray()) {
    if (Str(message, "role") == "assistant" && GetMember(message, "tool_calls") != nullptr) {
      assistant = &message;
    }
  }
  REQUIRE(assistant != nullptr);
  const rapidjson::Value& calls = *GetMember(*assistant, "tool_calls");
  REQUIRE(calls.IsArray());
  REQUIRE(calls.Size() == expected.assistant_calls.size());
  for (rapidjson::SizeType i = 0; i < calls.Size(); ++i) {
    const core::ToolCall& want = expected.assistant_calls[i];
    const rapidjson::Value* function = GetMember(calls[i], "function");
    REQUIRE(function != nullptr);
    if (expected.call_ids_on_wire) {
      CHECK(Str(calls[i], "id") == want.id);
    }
    CHECK(Str(*function, "name") == want.name);
    CHECK(Canonical(Str(*function, "arguments")) == Canonical(want.arguments_json));
  }
}

void CheckToolResults(const rapidjson::Value& messages, const ExpectedRequest& expected) {
  std::vector<const rapidjson::Value*> results;
  for (const auto& message : messages.GetArray()) {
    if (Str(message, "role") == "tool") {
      results.push_back(&message);
    }
  }
  REQUIRE(results.size() == expected.tool_result_texts.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    CHECK_THAT(ContentText(*results[i]), Catch::Contains(expected.tool_result_texts[i]));
    // Each result answers its call: ids survive the round trip where the format has them.
    if (expected.call_ids_on_wire) {
      CHECK(Str(*results[i], "tool_call_id") == expected.assistant_calls.at(i).id);
    }
  }
}

}  // namespace

std::string MessageText(const rapidjson::Value& content) {
  if (content.IsString()) {
    return std::string(core::StringViewOf(content));
  }
  std::string text;
  if (content.IsArray()) {
    for (const auto& part : content.GetArray()) {
      if (part.IsObject() && Str(part, "type") == "text") {
        text += Str(part, "text");
      }
    }
  }
  return text;
}

std::string Canonical(std::string_view json) {
  absl::StatusOr<rapidjson::Document> parsed = core::ParseJson(json);
  return parsed.ok() ? core::CanonicalJson(*parsed) : "<invalid JSON>";
}

void CheckJournalEntry(const rapidjson::Value& entry, const ExpectedRequest& expected) {
  INFO("journal entry " << core::ToJsonString(entry));
  REQUIRE(entry.IsObject());
  CHECK(Str(entry, "method") == "POST");
  CHECK(Str(entry, "path") == expected.path);

  // The mock refuses (401, unjournaled) a request without its key, so the header being here
  // means the key travelled where this format carries it.
  const rapidjson::Value* headers = GetMember(entry, "headers");
  REQUIRE(headers != nullptr);
  CHECK(GetMember(*headers, expected.credential_header) != nullptr);

  const rapidjson::Value* response = GetMember(entry, "response");
  REQUIRE(response != nullptr);
  CHECK(core::GetInt64(*response, "status").value_or(0) == 200);
  const rapidjson::Value* fixture = GetMember(*response, "fixture");
  REQUIRE(fixture != nullptr);
  REQUIRE(fixture->IsObject());
  const rapidjson::Value* match = GetMember(*fixture, "match");
  REQUIRE(match != nullptr);
  CHECK(Str(*match, "userMessage") == expected.fixture_user_message);
  CHECK(core::GetBool(*match, "hasToolResult").value_or(false) == expected.fixture_has_tool_result);

  const rapidjson::Value* body = GetMember(entry, "body");
  REQUIRE(body != nullptr);
  CHECK(Str(*body, "model") == expected.model);
  CHECK(core::GetBool(*body, "stream") == std::optional<bool>(true));
  if (!expected.max_tokens_field.empty()) {
    CHECK(core::GetInt64(*body, expected.max_tokens_field) ==
          std::optional<std::int64_t>(expected.max_tokens));
  }

  const rapidjson::Value* messages = GetMember(*body, "messages");
  REQUIRE(messages != nullptr);
  REQUIRE(messages->IsArray());
  REQUIRE(messages->Size() >= 2);
  CHECK(Str((*messages)[0], "role") == "system");
  CHECK(ContentText((*messages)[0]) == expected.system_prompt);
  std::string last_user;
  for (const auto& message : messages->GetArray()) {
    if (Str(message, "role") == "user") {
      last_user = ContentText(message);
    }
  }
  CHECK(last_user == expected.user_text);

  CheckTools(*body, expected);
  if (!expected.assistant_calls.empty()) {
    CheckAssistantCalls(*messages, expected);
  }
  CheckToolResults(*messages, expected);
}

}  // namespace pulse::testing
