// Workflow prompts (docs/mcp.md): ready-made instructions that walk an agent through a
// governed workflow with the manifest's capabilities. One catalogue serves the manifest's
// "workflowPrompts", MCP prompts/list and prompts/get, and the API's render route, so the
// surfaces cannot offer different prompts. Immutable data; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::core {

// Longest prompt argument value accepted (after trimming).
inline constexpr std::size_t kMaxPromptArgumentBytes = 256;

struct WorkflowPromptArgument {
  std::string name{};
  std::string description{};
  bool required = false;
};

struct WorkflowPrompt {
  std::string name{};               // e.g. pulse_triage_fleet
  std::string label{};              // human label
  std::string presentation_kind{};  // fleet, workflow, resource, finding
  std::string description{};
  std::vector<WorkflowPromptArgument> arguments{};
  // The prompt is offered only when every one of these capabilities is in the manifest.
  std::vector<std::string> required_capabilities{};
};

// The prompts whose required capabilities all exist, in manifest order.
const std::vector<WorkflowPrompt>& WorkflowPrompts();

// Where the rendered text will be read: MCP clients may read a resource through
// resources/read, the API's clients call capabilities only.
enum class PromptSurface { kApi, kMcp };

struct RenderedPrompt {
  std::string description;
  std::string text;
};

// Renders prompt `name` with `arguments` (name -> value). Values are trimmed of ASCII
// whitespace; arguments the prompt does not declare are ignored.
// Errors: NotFound "unknown prompt: <name>"; InvalidArgument "prompt argument <arg> is
// required" for a missing or blank required argument, and "prompt argument <arg> is invalid"
// for a value over kMaxPromptArgumentBytes, not valid UTF-8, or holding a control character
// (a value is quoted into the instructions, so it may not break out of its line).
[[nodiscard]] absl::StatusOr<RenderedPrompt> RenderWorkflowPrompt(
    std::string_view name, const std::map<std::string, std::string>& arguments,
    PromptSurface surface = PromptSurface::kApi);

}  // namespace pulse::core
