#include "pulse/core/tools/tool_catalog.h"

#include <algorithm>
#include <utility>

#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

// Schemas are literal JSON so a reviewer reads exactly what a model is offered. The catalog
// test proves each one parses, is closed at every object level, and that every enum equals
// the matching value list in tool_names.h. The numeric bounds mirror tool_catalog.h.

constexpr InvocationClass kResolveNone{ToolKind::kResolve, MutationTarget::kNone};
constexpr InvocationClass kReadNone{ToolKind::kRead, MutationTarget::kNone};
constexpr InvocationClass kUserInputNone{ToolKind::kUserInput, MutationTarget::kNone};
constexpr InvocationClass kWritePulseState{ToolKind::kWrite, MutationTarget::kPulseState};
constexpr InvocationClass kWriteInfrastructure{ToolKind::kWrite, MutationTarget::kInfrastructure};

ToolSpec Make(std::string_view name, std::string description, std::string schema,
              InvocationClass c) {
  ToolSpec spec;
  spec.name = std::string(name);
  spec.description = std::move(description);
  spec.input_schema_json = std::move(schema);
  spec.descriptor = StaticDescriptor(c);
  return spec;
}

ToolSpec PulseQuery() {
  return Make(
      kToolPulseQuery,
      "Find and identify resources before reading or changing them. action=search finds "
      "resources matching `query`; get returns one resource by `resource_id` (including the "
      "capabilities it offers); list enumerates resources, optionally of one `resource_type`; "
      "topology shows how resources relate (which node hosts which guest, which storage backs "
      "it); action reads the recorded action `action_id`: its decisions, outcome and "
      "verification provenance. Resolution only: it never changes anything and never runs "
      "commands on a resource.",
      R"json({
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["search", "get", "list", "topology", "action"],
               "description": "What to resolve."},
    "query": {"type": "string", "minLength": 1, "maxLength": 512,
              "description": "Search text (action=search): a name, id fragment, type or tag."},
    "resource_id": {"type": "string", "minLength": 1, "maxLength": 256,
                    "description": "Canonical resource id (action=get, or scope for topology)."},
    "resource_type": {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,63}$",
                      "description": "Restrict list/search to one resource type, e.g. vm."},
    "action_id": {"type": "string", "minLength": 1, "maxLength": 256,
                  "description": "Recorded action to read (action=action)."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 200,
              "description": "Maximum number of results (default 50)."}
  },
  "required": ["action"],
  "additionalProperties": false
})json",
      kResolveNone);
}

ToolSpec PulseRead() {
  return Make(
      kToolPulseRead,
      "Read the live state of one resource (resolve its `resource_id` with pulse_query first). "
      "action=status returns its current state; logs returns the most recent `lines` log "
      "lines; config returns its configuration; exec runs `command` on it only when a "
      "structural classifier proves the command read-only (allowlisted programs, no shell "
      "metacharacters, redirection, substitution or chaining). Any other command is refused "
      "before it is dispatched. This tool never changes anything; to request a change, use "
      "pulse_control.",
      R"json({
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["status", "logs", "config", "exec"],
               "description": "What to read."},
    "resource_id": {"type": "string", "minLength": 1, "maxLength": 256,
                    "description": "Canonical id of the resource to read."},
    "lines": {"type": "integer", "minimum": 1, "maximum": 1000,
              "description": "Number of most recent log lines (action=logs, default 100)."},
    "command": {"type": "string", "minLength": 1, "maxLength": 1024,
                "description": "Read-only command (action=exec), e.g. df -h. Refused unless proven read-only."}
  },
  "required": ["action", "resource_id"],
  "additionalProperties": false
})json",
      kReadNone);
}

ToolSpec PulseMetrics() {
  return Make(kToolPulseMetrics,
              "Metric history and summaries for one resource. `metric` selects cpu, memory, disk, "
              "network or usage (omit for all), `range` the look-back window (default 24h), and "
              "summary=true returns min, average, maximum and latest values instead of the series. "
              "Read-only.",
              R"json({
  "type": "object",
  "properties": {
    "resource_id": {"type": "string", "minLength": 1, "maxLength": 256,
                    "description": "Canonical id of the resource."},
    "metric": {"type": "string", "enum": ["cpu", "memory", "disk", "network", "usage"],
               "description": "Metric to return; omit for all."},
    "range": {"type": "string", "enum": ["1h", "6h", "24h", "7d", "30d"],
              "description": "Look-back window (default 24h)."},
    "summary": {"type": "boolean", "description": "Return a summary instead of the series."}
  },
  "required": ["resource_id"],
  "additionalProperties": false
})json",
              kReadNone);
}

ToolSpec PulseControl() {
  return Make(
      kToolPulseControl,
      "Request a change to one resource as a typed capability (for example restarting a "
      "service). The request (`capability` and `params` exactly as the resource's capability "
      "list defines them, plus your `reason`) goes to the action lifecycle, which plans it, "
      "checks policy and preflight, and may need a human approval before anything runs; an "
      "approved plan runs at most once and is verified independently. This tool never touches "
      "infrastructure itself and never runs commands. Look up the resource's capabilities "
      "first; a capability it does not offer is refused.",
      R"json({
  "type": "object",
  "properties": {
    "type": {"type": "string", "enum": ["resource"],
             "description": "Kind of request; always resource."},
    "resource_id": {"type": "string", "minLength": 1, "maxLength": 256,
                    "description": "Canonical id of the resource to change."},
    "capability": {"type": "string", "maxLength": 64, "pattern": "^[a-z][a-z0-9_.-]{0,63}$",
                   "description": "Capability name from the resource's capability list."},
    "params": {
      "type": "object",
      "maxProperties": 32,
      "additionalProperties": {
        "type": ["string", "number", "boolean"],
        "maxLength": 1024,
        "minimum": -1000000000000000,
        "maximum": 1000000000000000
      },
      "description": "Capability parameters as the capability defines them: a flat map from parameter name to a string, number or boolean."
    },
    "reason": {"type": "string", "minLength": 1, "maxLength": 1024,
               "description": "Why this change is needed, citing the evidence."}
  },
  "required": ["type", "resource_id", "capability", "reason"],
  "additionalProperties": false
})json",
      kWriteInfrastructure);
}

ToolSpec PulseQuestion() {
  ToolSpec spec =
      Make(kToolPulseQuestion,
           "Ask the user one clarifying question when you cannot continue safely without the "
           "answer (for example which of two matching resources they mean). Offer up to 8 short "
           "`options` when the answer is a choice. Only available in a conversation with a user; "
           "it runs alone in its turn, so call no other tool beside it. Never use it to ask for "
           "approval of a change: approvals belong to the action lifecycle.",
           R"json({
  "type": "object",
  "properties": {
    "question": {"type": "string", "minLength": 1, "maxLength": 1024,
                 "description": "The question, in one or two sentences."},
    "options": {"type": "array", "maxItems": 8, "uniqueItems": true,
                "items": {"type": "string", "minLength": 1, "maxLength": 128},
                "description": "Suggested answers the user can pick from."}
  },
  "required": ["question"],
  "additionalProperties": false
})json",
           kUserInputNone);
  spec.interactive_only = true;
  spec.runs_alone = true;
  return spec;
}

ToolSpec PatrolGetFindings() {
  return Make(
      kToolPatrolGetFindings,
      "List Patrol findings (known problems), active ones only unless include_resolved=true, "
      "optionally for one `resource_id` or `category`. Call it before reporting, assessing or "
      "resolving findings so you update an existing finding instead of duplicating it. "
      "Read-only.",
      R"json({
  "type": "object",
  "properties": {
    "resource_id": {"type": "string", "minLength": 1, "maxLength": 256,
                    "description": "Only findings for this resource."},
    "category": {"type": "string",
                 "enum": ["performance", "capacity", "reliability", "backup", "security", "general"],
                 "description": "Only findings in this category."},
    "include_resolved": {"type": "boolean",
                         "description": "Also return resolved findings (default false)."}
  },
  "additionalProperties": false
})json",
      kReadNone);
}

ToolSpec PatrolReportFinding() {
  return Make(kToolPatrolReportFinding,
              "Record a problem you found on one resource, with the concrete `evidence` from tool "
              "results in this run and a `recommendation`. `key` is a short stable dedupe key "
              "(lowercase words joined by '-', e.g. disk-high; defaults to the normalized title): "
              "reporting the same resource, category and key again updates the existing finding "
              "instead of creating a second one. Changes only Pulse's finding records, never "
              "infrastructure.",
              R"json({
  "type": "object",
  "properties": {
    "resource_id": {"type": "string", "minLength": 1, "maxLength": 256,
                    "description": "Canonical id of the affected resource."},
    "category": {"type": "string",
                 "enum": ["performance", "capacity", "reliability", "backup", "security", "general"]},
    "severity": {"type": "string", "enum": ["info", "watch", "warning", "critical"]},
    "title": {"type": "string", "minLength": 1, "maxLength": 256,
              "description": "One-line summary of the problem."},
    "description": {"type": "string", "minLength": 1, "maxLength": 4096,
                    "description": "What is wrong and why it matters."},
    "evidence": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "Observed values and tool results that show the problem."},
    "recommendation": {"type": "string", "minLength": 1, "maxLength": 4096,
                       "description": "What an operator should do about it."},
    "key": {"type": "string", "minLength": 1, "maxLength": 128,
            "description": "Stable dedupe key, e.g. disk-high."}
  },
  "required": ["resource_id", "category", "severity", "title", "description", "evidence",
               "recommendation"],
  "additionalProperties": false
})json",
              kWritePulseState);
}

ToolSpec PatrolAssessFinding() {
  return Make(
      kToolPatrolAssessFinding,
      "Give a verdict on an existing finding after checking it: present (the problem is still "
      "there; refreshes its evidence), resolved (the signal is gone; closing it may require "
      "an independent verifier to confirm) or uncertain (you could not tell; it stays open). "
      "Changes only Pulse's finding records, never infrastructure.",
      R"json({
  "type": "object",
  "properties": {
    "finding_id": {"type": "string", "minLength": 1, "maxLength": 128,
                   "description": "Id from patrol_get_findings."},
    "verdict": {"type": "string", "enum": ["present", "resolved", "uncertain"]},
    "evidence": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "What you observed in this run that supports the verdict."}
  },
  "required": ["finding_id", "verdict", "evidence"],
  "additionalProperties": false
})json",
      kWritePulseState);
}

ToolSpec PatrolResolveFinding() {
  return Make(
      kToolPatrolResolveFinding,
      "Mark an existing finding resolved, with a `resolution_note` and the `evidence` that the "
      "signal is gone. Backup, reliability, security and general findings are only closed when "
      "a deterministic verifier confirms the problem is gone; otherwise the request is "
      "refused. Changes only Pulse's finding records, never infrastructure.",
      R"json({
  "type": "object",
  "properties": {
    "finding_id": {"type": "string", "minLength": 1, "maxLength": 128,
                   "description": "Id from patrol_get_findings."},
    "resolution_note": {"type": "string", "minLength": 1, "maxLength": 1024,
                        "description": "Why the finding is resolved."},
    "evidence": {"type": "string", "minLength": 1, "maxLength": 4096,
                 "description": "What you observed in this run that shows it is resolved."}
  },
  "required": ["finding_id", "resolution_note", "evidence"],
  "additionalProperties": false
})json",
      kWritePulseState);
}

ToolSpec PatrolActionCapabilities() {
  ToolSpec spec =
      Make(kToolPatrolActionCapabilities,
           "List the typed capabilities one resource offers (name, parameters, risk and whether "
           "approval is needed). Use it before patrol_propose_action. Read-only.",
           R"json({
  "type": "object",
  "properties": {
    "resource_id": {"type": "string", "minLength": 1, "maxLength": 256,
                    "description": "Canonical id of the resource."}
  },
  "required": ["resource_id"],
  "additionalProperties": false
})json",
           kReadNone);
  spec.investigation_only = true;
  return spec;
}

ToolSpec PatrolProposeAction() {
  ToolSpec spec =
      Make(kToolPatrolProposeAction,
           "Propose one typed remediation for a resource: a `capability` from "
           "patrol_action_capabilities with its `params` and your `rationale`. The proposal is "
           "recorded for review and planning; this tool plans nothing, executes nothing and "
           "changes nothing. At most one proposal per Patrol run.",
           R"json({
  "type": "object",
  "properties": {
    "resource_id": {"type": "string", "minLength": 1, "maxLength": 256,
                    "description": "Canonical id of the resource to remediate."},
    "capability": {"type": "string", "maxLength": 64, "pattern": "^[a-z][a-z0-9_.-]{0,63}$",
                   "description": "Capability name from patrol_action_capabilities."},
    "params": {
      "type": "object",
      "maxProperties": 32,
      "additionalProperties": {
        "type": ["string", "number", "boolean"],
        "maxLength": 1024,
        "minimum": -1000000000000000,
        "maximum": 1000000000000000
      },
      "description": "Capability parameters as the capability defines them: a flat map from parameter name to a string, number or boolean."
    },
    "rationale": {"type": "string", "minLength": 1, "maxLength": 1024,
                  "description": "Why this remediation fixes the finding, citing evidence."}
  },
  "required": ["resource_id", "capability", "rationale"],
  "additionalProperties": false
})json",
           kReadNone);
  spec.investigation_only = true;
  return spec;
}

// `spec` with the traits `set` declares.
ToolSpec With(ToolSpec spec, void (*set)(ToolTraits&)) {
  set(spec.traits);
  return spec;
}

// The rows, in kBuiltinToolNames order, each with the traits the loop reads (tool_traits.h).
std::vector<ToolSpec> BuildCatalog() {
  return {
      With(PulseQuery(), [](ToolTraits& t) { t.progress = "Reading inventory."; }),
      With(PulseRead(), [](ToolTraits& t) { t.progress = "Reading target."; }),
      With(PulseMetrics(), [](ToolTraits& t) { t.progress = "Reading target."; }),
      With(PulseControl(),
           [](ToolTraits& t) {
             t.requests_approval = true;
             t.dispatches_mutation = true;
           }),
      With(PulseQuestion(), [](ToolTraits& t) { t.asks_question = true; }),
      With(PatrolGetFindings(), [](ToolTraits& t) { t.findings = FindingRole::kReadsFindings; }),
      With(PatrolReportFinding(), [](ToolTraits& t) { t.findings = FindingRole::kLifecycleWrite; }),
      With(PatrolAssessFinding(), [](ToolTraits& t) { t.findings = FindingRole::kLifecycleWrite; }),
      With(PatrolResolveFinding(),
           [](ToolTraits& t) { t.findings = FindingRole::kLifecycleWrite; }),
      PatrolActionCapabilities(),
      With(PatrolProposeAction(), [](ToolTraits& t) { t.proposes_action = true; }),
  };
}

}  // namespace

const std::vector<ToolSpec>& BuiltinTools() {
  // Immutable after construction; function-local statics initialize thread-safely.
  static const std::vector<ToolSpec> catalog = BuildCatalog();
  return catalog;
}

std::optional<ToolSpec> FindBuiltinTool(std::string_view name) {
  for (const ToolSpec& spec : BuiltinTools()) {
    if (spec.name == name) {
      return spec;
    }
  }
  return std::nullopt;
}

bool IsBuiltinToolName(std::string_view name) {
  return std::find(kBuiltinToolNames.begin(), kBuiltinToolNames.end(), name) !=
         kBuiltinToolNames.end();
}

bool IsRetiredToolName(std::string_view name) {
  return std::find(kRetiredToolNames.begin(), kRetiredToolNames.end(), name) !=
         kRetiredToolNames.end();
}

}  // namespace pulse::core
