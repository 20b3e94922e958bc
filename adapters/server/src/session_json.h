// The client-safe JSON of Assistant sessions for the session routes: listing rows, one
// session with its status, usage and transcript, and the transcript alone. Provider call ids
// and the system prompt never appear (the transcript holds no system prompt). Pure functions.
#pragma once

#include <string>
#include <vector>

#include "pulse/core/model/session_record.h"

namespace pulse::server {

// [{id, status, message_count, updated_at}], in the given order.
std::string SessionListJson(const std::vector<core::SessionSummary>& sessions);

// {id, status, created_at, updated_at, message_count, safety_state, awaiting_action?
// {action_id, plan_hash, tool_name, suspended_at}, usage {provider_calls, input_tokens,
// output_tokens, priced_cost_usd, unpriced_calls}, messages: SessionMessagesJson}.
std::string SessionDetailJson(const core::SessionRecord& record);

// [{index, role, content?, tool_calls?: [{name, input}], tool_result?: {tool_name, content,
// is_error}}] in transcript order.
std::string SessionMessagesJson(const core::SessionRecord& record);

}  // namespace pulse::server
