// Secret-free display copies of what an action carries (issue 20 item 7). The action store keeps
// the plan's real parameter values, because the executor needs them to act; every copy that
// leaves the engine (tool results, API replies, events) is built from these functions, which
// apply the outbound policy's redaction (RedactSecrets) and mask parameters named like secrets.
// Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "pulse/core/model/action_types.h"

namespace pulse::core {

// `params_json` with the value of every member whose name NamesSecret() (at any depth) replaced
// by kRedactedSecret, and RedactSecrets applied to every other string value. Text that is not a
// JSON object is returned through RedactSecrets.
std::string RedactParamsJson(std::string_view params_json);

// A copy of `record` fit to serve: request and plan params through RedactParamsJson, and the
// request reason, decision reasons, plan message, preflight texts and result summaries through
// RedactSecrets. Identity (ids, hashes, versions) and state are unchanged.
ActionRecord RedactedActionRecord(ActionRecord record);

}  // namespace pulse::core
