#include "pulse/core/manifest/workflow_prompts.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/core/manifest/path_template.h"
#include "pulse/core/tools/tool_schema.h"

namespace pulse::core {
namespace {

constexpr std::string_view kTriage = "pulse_triage_fleet";
constexpr std::string_view kOperationsLoop = "pulse_operations_loop";
constexpr std::string_view kInvestigate = "pulse_investigate_resource";
constexpr std::string_view kReview = "pulse_review_finding";

std::vector<WorkflowPrompt> AllPrompts() {
  return {
      {
          .name = std::string(kTriage),
          .label = "Triage fleet",
          .presentation_kind = "fleet",
          .description =
              "Survey the whole fleet, find the resource that most needs attention and name "
              "the safest governed next step.",
          .required_capabilities = {"get_fleet_context"},
      },
      {
          .name = std::string(kOperationsLoop),
          .label = "Ask Patrol to handle an issue",
          .presentation_kind = "workflow",
          .description =
              "Take one issue from finding to verified fix through the governed loop: plan, "
              "approval, execution, verification, resolution.",
          .required_capabilities = {"get_patrol_control_status", "get_fleet_context",
                                    "get_resource_context", "list_findings", "plan_action",
                                    "decide_action", "execute_action", "resolve_finding"},
      },
      {
          .name = std::string(kInvestigate),
          .label = "Investigate resource",
          .presentation_kind = "resource",
          .description = "Explain one resource's state, findings, approvals and recent actions.",
          .arguments = {{"resourceId", "Canonical resource ID, e.g. vm:101.", true}},
          .required_capabilities = {"get_resource_context"},
      },
      {
          .name = std::string(kReview),
          .label = "Review finding",
          .presentation_kind = "finding",
          .description =
              "Weigh the evidence behind one finding and recommend how to close or act on it.",
          .arguments = {{"finding_id", "ID of the finding to review.", true}},
          .required_capabilities = {"list_findings"},
      },
  };
}

std::string TriageText() {
  return "Triage the Pulse fleet.\n"
         "1. Call get_fleet_context to see every resource with its finding counts, pending "
         "approvals and operator intent.\n"
         "2. Pick the resource that carries the most risk: critical findings first, then "
         "pending approvals, then warnings. Treat resources an operator marked intentionally "
         "offline, muted or retired as expected unless something contradicts that intent.\n"
         "3. Call get_resource_context for that resource before you consider any change.\n"
         "4. Summarize what needs attention and name the safest governed next step. Do not "
         "plan, approve or execute anything unless you are asked to.";
}

std::string OperationsLoopText() {
  return "Handle one issue through Pulse's governed operations loop, in this order.\n"
         "1. Call get_patrol_control_status to see where the loop stands.\n"
         "2. Call get_fleet_context, then list_findings, and choose the issue to work on.\n"
         "3. Call get_resource_context for the affected resource and confirm the evidence.\n"
         "4. Call plan_action with one capability the resource lists and a clear reason.\n"
         "5. Follow the plan's approval policy: call decide_action only when the plan "
         "requires a decision and you are entitled to make it; otherwise wait for a human.\n"
         "6. Call execute_action only for a plan that is approved or needs no approval.\n"
         "7. Verify: read get_patrol_control_status, get_resource_context and list_findings "
         "again and check that the problem is really gone.\n"
         "8. Only then call resolve_finding with a note on what was done.\n"
         "If the plan is rejected, record the decision, change nothing, and propose a safer "
         "follow-up.";
}

std::string InvestigateText(std::string_view resource_id, PromptSurface surface) {
  const std::string quoted = absl::StrCat("\"", std::string(resource_id), "\"");
  std::string read_step;
  if (surface == PromptSurface::kMcp) {
    read_step =
        absl::StrCat("1. Prefer resources/read on pulse://resource/", PercentEncode(resource_id),
                     " when the client supports it; otherwise call "
                     "get_resource_context with resourceId ",
                     quoted, ".\n");
  } else {
    read_step = absl::StrCat("1. Call get_resource_context with resourceId ", quoted, ".\n");
  }
  return absl::StrCat(
      "Investigate the Pulse resource ", quoted, ".\n", read_step,
      "2. Explain its current state, active findings, pending approvals, recent governed "
      "actions and operator flags (maintenance window, remediation lock, monitoring mode).\n"
      "3. Say what you would check or change next, and why. Make no changes unless the "
      "operator asks for them.");
}

std::string ReviewText(std::string_view finding_id) {
  const std::string quoted = absl::StrCat("\"", std::string(finding_id), "\"");
  return absl::StrCat(
      "Review the Pulse finding ", quoted, ".\n",
      "1. Call list_findings (add include_resolved=1 if it is not among the active ones) "
      "and locate the finding.\n"
      "2. Call get_resource_context for the affected resource.\n"
      "3. Weigh the evidence and recommend one next step - acknowledge, snooze, dismiss "
      "with the right reason, resolve, or plan a governed action - and explain why.");
}

// The trimmed value of a declared argument, or the error RenderWorkflowPrompt documents.
absl::StatusOr<std::string> ArgumentValue(const WorkflowPromptArgument& argument,
                                          const std::map<std::string, std::string>& arguments) {
  auto it = arguments.find(argument.name);
  std::string value;
  if (it != arguments.end()) {
    value = std::string(absl::StripAsciiWhitespace(it->second));
  }
  if (value.empty()) {
    if (argument.required) {
      return absl::InvalidArgumentError(
          absl::StrCat("prompt argument ", argument.name, " is required"));
    }
    return value;
  }
  const bool controls = std::any_of(value.begin(), value.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 || c == 0x7F;
  });
  if (value.size() > kMaxPromptArgumentBytes || !IsValidUtf8(value) || controls) {
    return absl::InvalidArgumentError(
        absl::StrCat("prompt argument ", argument.name, " is invalid"));
  }
  return value;
}

}  // namespace

const std::vector<WorkflowPrompt>& WorkflowPrompts() {
  static const std::vector<WorkflowPrompt> prompts = [] {
    std::vector<WorkflowPrompt> offered;
    for (WorkflowPrompt& prompt : AllPrompts()) {
      const bool available =
          std::all_of(prompt.required_capabilities.begin(), prompt.required_capabilities.end(),
                      [](const std::string& name) { return FindAgentCapability(name) != nullptr; });
      if (available) {
        offered.push_back(std::move(prompt));
      }
    }
    return offered;
  }();
  return prompts;
}

absl::StatusOr<RenderedPrompt> RenderWorkflowPrompt(
    std::string_view name, const std::map<std::string, std::string>& arguments,
    PromptSurface surface) {
  const auto& prompts = WorkflowPrompts();
  auto it = std::find_if(prompts.begin(), prompts.end(),
                         [&](const WorkflowPrompt& p) { return p.name == name; });
  if (it == prompts.end()) {
    return absl::NotFoundError(absl::StrCat("unknown prompt: ", QuoteForMessage(name)));
  }
  std::map<std::string, std::string> values;
  for (const WorkflowPromptArgument& argument : it->arguments) {
    absl::StatusOr<std::string> value = ArgumentValue(argument, arguments);
    if (!value.ok()) {
      return value.status();
    }
    values[argument.name] = *std::move(value);
  }
  if (name == kTriage) {
    return RenderedPrompt{"Pulse fleet triage", TriageText()};
  }
  if (name == kOperationsLoop) {
    return RenderedPrompt{"Patrol issue handling", OperationsLoopText()};
  }
  if (name == kInvestigate) {
    return RenderedPrompt{"Pulse resource investigation",
                          InvestigateText(values["resourceId"], surface)};
  }
  return RenderedPrompt{"Pulse finding review", ReviewText(values["finding_id"])};
}

}  // namespace pulse::core
