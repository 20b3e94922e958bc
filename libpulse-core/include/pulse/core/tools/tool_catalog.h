// The one table of built-in model-facing tools (docs/architecture.md "Classification"): name,
// model-facing description, closed JSON Schema (Draft 4), invocation descriptor and loop traits of
// each. The handler factory of each row is in builtins/builtin_catalog.h, one module up, because
// the handlers reach the services this module sits below. Everything else (registry, classifier,
// provider projection, manifests) reads this table. The table is immutable and built once on first
// use; safe to read from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pulse/core/tools/invocation_descriptor.h"
#include "pulse/core/tools/tool_traits.h"

namespace pulse::core {

// Length bounds the built-in schemas use; handlers may rely on them after validation.
inline constexpr int kMaxResourceIdLength = 256;
inline constexpr int kMaxIdLength = 128;  // finding ids, dedupe keys
inline constexpr int kMaxActionIdLength = 256;
inline constexpr int kMaxFreeTextLength = 4096;  // descriptions, evidence, notes
inline constexpr int kMaxReasonLength = 1024;    // reasons, rationales, questions
inline constexpr int kMaxCommandLength = 1024;
inline constexpr int kMaxParamValueLength = 1024;
inline constexpr int kMaxParams = 32;
inline constexpr int kMaxQuestionOptions = 8;

// One model-facing tool. The hint flags describe where the tool belongs; the invocation
// policy (not this table) decides what a run is offered and may execute.
struct ToolSpec {
  std::string name;
  std::string description;        // model-facing: what it does and what it never does
  std::string input_schema_json;  // closed Draft-4 JSON Schema of the arguments object
  InvocationDescriptor descriptor;
  bool interactive_only = false;    // only a conversation with a user (Assistant) offers it
  bool investigation_only = false;  // only a Patrol investigation run offers it
  bool runs_alone = false;          // never shares a provider turn with another call
  // What the agentic loop reads about the tool instead of its name (tool_traits.h). Built-ins
  // only: an extension keeps the default.
  ToolTraits traits;

  friend bool operator==(const ToolSpec&, const ToolSpec&) = default;
};

// Every built-in tool, in the order of kBuiltinToolNames. The reference stays valid for the
// life of the program.
const std::vector<ToolSpec>& BuiltinTools();

// A copy of the built-in tool named exactly `name` (no trimming, case-sensitive), or nullopt.
std::optional<ToolSpec> FindBuiltinTool(std::string_view name);

// Exact-match membership tests against the built-in table and the retired-name list.
bool IsBuiltinToolName(std::string_view name);
bool IsRetiredToolName(std::string_view name);

}  // namespace pulse::core
