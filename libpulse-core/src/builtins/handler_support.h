// Internal helpers of the built-in tool handlers: argument checks that go beyond the schema
// (which argument applies to which action, canonical resource ids, blank text), bounded JSON
// lists, and the compact JSON shapes several handlers share (a resource, a capability).
// Pure functions and plain values; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pulse/core/actions/action_planner.h"
#include "pulse/core/builtins/tool_output.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/model/capability.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/fleet.h"
#include "rapidjson/document.h"

namespace pulse::core::handlers_internal {

using ErrorDetails = std::vector<std::pair<std::string, ToolErrorDetail>>;

// INVALID_INPUT, blocked (the call never reached a port).
ToolResult InvalidInput(std::string message, ErrorDetails details = {});

// An argument the schema allows for the tool but that does not apply to `action` would be
// silently ignored, and the model would believe it had effect. Returns the INVALID_INPUT
// result naming the first such member of `args` (details argument, action), else nullopt.
std::optional<ToolResult> RejectInapplicable(const rapidjson::Value& args, std::string_view tool,
                                             std::string_view action,
                                             std::initializer_list<std::string_view> allowed);

// nullopt when `id` is a canonical resource id (actions/resource_id.h); else INVALID_INPUT
// telling the model to resolve the resource with pulse_query first.
std::optional<ToolResult> CheckResourceId(std::string_view id);

// `text` without surrounding ASCII whitespace.
std::string Trimmed(std::string_view text);

// The string member `key` of `args`, "" when absent.
std::string_view StringArg(const rapidjson::Value& args, std::string_view key);

// A short field (a name, a summary, a message): clean text of at most `max_bytes`, secrets
// redacted, cut without a marker.
std::string ShortText(std::string_view text, std::size_t max_bytes = 256);

// A JSON array built item by item within a byte and item budget. Once an item does not fit,
// it and every later one are counted as omitted, so the kept items are always a prefix.
class BoundedArray {
 public:
  explicit BoundedArray(std::size_t max_bytes = kMaxToolListBytes,
                        std::size_t max_items = std::numeric_limits<std::size_t>::max())
      : max_bytes_(max_bytes), max_items_(max_items) {}

  // Appends one complete JSON value; false (and counted as omitted) when it does not fit.
  bool Add(std::string item_json);
  std::size_t size() const { return items_.size(); }
  std::size_t omitted() const { return omitted_; }
  bool truncated() const { return omitted_ > 0; }
  // "[item,item,...]".
  std::string Json() const;

 private:
  std::size_t max_bytes_;
  std::size_t max_items_;
  std::size_t bytes_ = 0;
  std::size_t omitted_ = 0;
  std::vector<std::string> items_;
};

// Writes `key`: the array, then "<key>_omitted": n when it was cut. The caller writes one
// "truncated" member for the whole result.
void WriteBoundedArray(JsonWriter& out, std::string_view key, const BoundedArray& array);

// {"id","type","name","status","technology"?,"parent_id"?}
std::string ResourceBriefJson(const FleetResource& resource);

// {name: value} of descriptive facts: at most `max_entries`, values shortened and redacted,
// values stored under a secret-naming key replaced by kRedactedSecret.
void WriteFacts(JsonWriter& out, std::string_view key,
                const std::map<std::string, std::string>& facts, std::size_t max_entries = 32);

// {"name","description","risk","requires_approval","approval_floor","auto_authorization",
//  "supports_rollback","params":[{"name","type","required","enum"?,"pattern"?,
//  "description"?}]}. The approval floor is the effective one for `requester` under `options`.
std::string CapabilityJson(const Capability& capability, const ActionActor& requester,
                           const ActionPolicyOptions& options);

// Writes "capabilities": the bounded list of the catalogue's valid entries (CapabilityJson),
// "capabilities_omitted" when cut, and "unusable_capabilities": [names] for entries that fail
// ValidateCapability (planning refuses them). Returns whether the list was cut.
bool WriteCapabilities(JsonWriter& out, const std::vector<Capability>& catalogue,
                       const ActionActor& requester, const ActionPolicyOptions& options,
                       std::size_t max_bytes = kMaxToolListBytes);

}  // namespace pulse::core::handlers_internal
