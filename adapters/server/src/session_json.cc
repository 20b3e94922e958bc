#include "session_json.h"

#include "pulse/core/json/json_writer.h"

namespace pulse::server {
namespace {

void WriteMessages(core::JsonWriter& w, const core::SessionRecord& record) {
  w.StartArray();
  std::size_t index = 0;
  for (const core::Message& m : record.transcript) {
    w.StartObject();
    w.Member("index", index++);
    w.Member("role", core::ToString(m.role));
    if (m.role == core::MessageRole::kTool) {
      w.Key("tool_result");
      w.StartObject();
      w.Member("tool_name", m.tool_name);
      w.Member("content", m.content);
      w.Member("is_error", m.is_error);
      w.EndObject();
    } else {
      w.MemberIfNotEmpty("content", m.content);
    }
    if (!m.tool_calls.empty()) {
      w.Key("tool_calls");
      w.StartArray();
      for (const core::ToolCall& call : m.tool_calls) {
        w.StartObject();
        w.Member("name", call.name);
        w.Member("input", call.arguments_json);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string SessionListJson(const std::vector<core::SessionSummary>& sessions) {
  core::JsonWriter w;
  w.StartArray();
  for (const core::SessionSummary& s : sessions) {
    w.StartObject();
    w.Member("id", s.id);
    w.Member("status", core::ToString(s.status));
    w.Member("message_count", s.message_count);
    w.TimeMember("updated_at", s.updated_at);
    w.Member("kind", core::ToString(s.kind));
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

std::string SessionDetailJson(const core::SessionRecord& record) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("id", record.id);
  w.Member("status", core::ToString(record.status));
  w.TimeMember("created_at", record.created_at);
  w.TimeMember("updated_at", record.updated_at);
  w.Member("message_count", record.transcript.size());
  w.Member("safety_state", record.fsm.state);
  w.Member("kind", core::ToString(record.kind));
  if (record.owner.owned()) {
    w.Key("owner");
    w.StartObject();
    w.Member("token_id", record.owner.token_id);
    w.Member("token_name", record.owner.token_name);
    w.EndObject();
  }
  if (record.suspended.has_value()) {
    w.Key("awaiting_action");
    w.StartObject();
    w.Member("action_id", record.suspended->action_id);
    w.Member("plan_hash", record.suspended->plan_hash);
    w.Member("tool_name", record.suspended->tool_name);
    w.TimeMember("suspended_at", record.suspended->suspended_at);
    w.EndObject();
  }
  w.Key("usage");
  w.StartObject();
  w.Member("provider_calls", record.usage_totals.provider_calls);
  w.Member("input_tokens", record.usage_totals.input_tokens);
  w.Member("output_tokens", record.usage_totals.output_tokens);
  w.Key("priced_cost_usd");
  w.Double(record.usage_totals.priced_cost_usd);
  w.Member("unpriced_calls", record.usage_totals.unpriced_calls);
  w.EndObject();
  w.Key("messages");
  WriteMessages(w, record);
  w.EndObject();
  return w.Take();
}

std::string SessionMessagesJson(const core::SessionRecord& record) {
  core::JsonWriter w;
  WriteMessages(w, record);
  return w.Take();
}

}  // namespace pulse::server
