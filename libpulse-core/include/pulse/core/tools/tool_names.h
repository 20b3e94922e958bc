// The wire vocabulary of model-facing tools: every built-in tool name, the argument names
// and closed argument values the built-in schemas declare, and the retired names no tool may
// ever register under again. Spelled exactly as on the wire. Header-only constants; no state.
#pragma once

#include <array>
#include <string_view>

namespace pulse::core {

// --- Built-in tool names (docs/architecture.md "Classification") ---
inline constexpr std::string_view kToolPulseQuery = "pulse_query";
inline constexpr std::string_view kToolPulseRead = "pulse_read";
inline constexpr std::string_view kToolPulseMetrics = "pulse_metrics";
inline constexpr std::string_view kToolPulseControl = "pulse_control";
inline constexpr std::string_view kToolPulseQuestion = "pulse_question";
inline constexpr std::string_view kToolPatrolGetFindings = "patrol_get_findings";
inline constexpr std::string_view kToolPatrolReportFinding = "patrol_report_finding";
inline constexpr std::string_view kToolPatrolAssessFinding = "patrol_assess_finding";
inline constexpr std::string_view kToolPatrolResolveFinding = "patrol_resolve_finding";
inline constexpr std::string_view kToolPatrolActionCapabilities = "patrol_action_capabilities";
inline constexpr std::string_view kToolPatrolProposeAction = "patrol_propose_action";

// Every built-in name, in catalog order.
inline constexpr std::array<std::string_view, 11> kBuiltinToolNames = {
    kToolPulseQuery,           kToolPulseRead,
    kToolPulseMetrics,         kToolPulseControl,
    kToolPulseQuestion,        kToolPatrolGetFindings,
    kToolPatrolReportFinding,  kToolPatrolAssessFinding,
    kToolPatrolResolveFinding, kToolPatrolActionCapabilities,
    kToolPatrolProposeAction,
};

// --- Retired names: mutation paths and aliases that no longer exist. No tool (built-in or
// extension) may register under them; a model that still emits one classifies fail-closed
// and the executor refuses it with POLICY_BLOCKED (rule retired_tool) before any lookup. ---
inline constexpr std::array<std::string_view, 16> kRetiredToolNames = {
    "pulse_run_command",    "run_command",      "pulse_file_edit",  "pulse_control_guest",
    "pulse_control_docker", "set_resource_url", "fetch_url",        "pulse_discovery",
    "pulse_storage",        "pulse_docker",     "pulse_kubernetes", "pulse_alerts",
    "pulse_knowledge",      "pulse_pmg",        "pulse_summarize",  "patrol_propose_observer",
};

// Name prefixes reserved for built-in tools; extensions must choose other names so that a
// model can never confuse an extension with a governed built-in.
inline constexpr std::array<std::string_view, 2> kReservedToolNamePrefixes = {"pulse_", "patrol_"};

// --- Argument names used by the built-in schemas ---
inline constexpr std::string_view kArgAction = "action";
inline constexpr std::string_view kArgActionId = "action_id";
inline constexpr std::string_view kArgCapability = "capability";
inline constexpr std::string_view kArgCategory = "category";
inline constexpr std::string_view kArgCommand = "command";
inline constexpr std::string_view kArgDescription = "description";
inline constexpr std::string_view kArgEvidence = "evidence";
inline constexpr std::string_view kArgFindingId = "finding_id";
inline constexpr std::string_view kArgIncludeResolved = "include_resolved";
inline constexpr std::string_view kArgKey = "key";
inline constexpr std::string_view kArgLimit = "limit";
inline constexpr std::string_view kArgLines = "lines";
inline constexpr std::string_view kArgMetric = "metric";
inline constexpr std::string_view kArgOptions = "options";
inline constexpr std::string_view kArgParams = "params";
inline constexpr std::string_view kArgQuery = "query";
inline constexpr std::string_view kArgQuestion = "question";
inline constexpr std::string_view kArgRange = "range";
inline constexpr std::string_view kArgRationale = "rationale";
inline constexpr std::string_view kArgReason = "reason";
inline constexpr std::string_view kArgRecommendation = "recommendation";
inline constexpr std::string_view kArgResolutionNote = "resolution_note";
inline constexpr std::string_view kArgResourceId = "resource_id";
inline constexpr std::string_view kArgResourceType = "resource_type";
inline constexpr std::string_view kArgSeverity = "severity";
inline constexpr std::string_view kArgSummary = "summary";
inline constexpr std::string_view kArgTitle = "title";
inline constexpr std::string_view kArgType = "type";
inline constexpr std::string_view kArgVerdict = "verdict";

// --- Closed argument values (each array equals the schema enum that declares it) ---
// pulse_query.action
inline constexpr std::string_view kQueryActionSearch = "search";
inline constexpr std::string_view kQueryActionGet = "get";
inline constexpr std::string_view kQueryActionList = "list";
inline constexpr std::string_view kQueryActionTopology = "topology";
inline constexpr std::string_view kQueryActionAction = "action";
inline constexpr std::array<std::string_view, 5> kQueryActions = {
    kQueryActionSearch, kQueryActionGet, kQueryActionList, kQueryActionTopology,
    kQueryActionAction};

// pulse_read.action
inline constexpr std::string_view kReadActionStatus = "status";
inline constexpr std::string_view kReadActionLogs = "logs";
inline constexpr std::string_view kReadActionConfig = "config";
inline constexpr std::string_view kReadActionExec = "exec";
inline constexpr std::array<std::string_view, 4> kReadActions = {
    kReadActionStatus, kReadActionLogs, kReadActionConfig, kReadActionExec};

// pulse_metrics.metric and pulse_metrics.range
inline constexpr std::array<std::string_view, 5> kMetricNames = {"cpu", "memory", "disk", "network",
                                                                 "usage"};
inline constexpr std::array<std::string_view, 5> kMetricRanges = {"1h", "6h", "24h", "7d", "30d"};

// pulse_control.type: the only model-originated mutation is a typed resource capability.
inline constexpr std::string_view kControlTypeResource = "resource";
inline constexpr std::array<std::string_view, 1> kControlTypes = {kControlTypeResource};

// Finding vocabularies (patrol_* tools), severities in ascending order.
inline constexpr std::array<std::string_view, 6> kFindingCategories = {
    "performance", "capacity", "reliability", "backup", "security", "general"};
inline constexpr std::array<std::string_view, 4> kFindingSeverities = {"info", "watch", "warning",
                                                                       "critical"};
inline constexpr std::array<std::string_view, 3> kAssessVerdicts = {"present", "resolved",
                                                                    "uncertain"};

}  // namespace pulse::core
