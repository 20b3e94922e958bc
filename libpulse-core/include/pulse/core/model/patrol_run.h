// PatrolRunRecord: what one Patrol run did (docs/patrol.md, in this product's subset) —
// its scope and trigger, what it checked, which findings were new, already known or resolved,
// whether the model pass ran (and why not), tokens and tool calls, its status and error. The
// scope request decoder for POST /api/ai/patrol/run lives here too. Plain values and pure
// codecs; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/fleet_source.h"

namespace pulse::core {

enum class PatrolTrigger { kScheduled, kManual, kAlert, kEvent };
// Wire: scheduled, manual, alert (POST /api/ai/investigate-alert; alerts/alert_intake.h),
// event (a fleet change; alerts/event_trigger.h).
std::string_view ToString(PatrolTrigger trigger);
std::optional<PatrolTrigger> ParsePatrolTrigger(std::string_view text);

enum class PatrolRunStatus { kRunning, kHealthy, kIssuesFound, kError };
// Wire: running, healthy, issues_found, error.
std::string_view ToString(PatrolRunStatus status);
std::optional<PatrolRunStatus> ParsePatrolRunStatus(std::string_view text);

// Bounds of a scoped run request.
inline constexpr std::size_t kMaxScopeItems = 100;
inline constexpr std::size_t kMaxScopeItemBytes = 256;
inline constexpr std::size_t kMaxPatrolRunBodyBytes = 32 * 1024;
// How many records a PatrolRunStore keeps (the newest).
inline constexpr std::size_t kPatrolRunHistoryLimit = 100;

// Empty lists = the whole fleet. Ids are canonical resource ids; types are resource types
// (vm, app-container, service, storage, backup-job, node, ...).
struct PatrolScope {
  std::vector<std::string> resource_ids;
  std::vector<std::string> resource_types;

  bool Full() const { return resource_ids.empty() && resource_types.empty(); }
  // A stable key: one run at a time per key ("full", or the sorted ids and types).
  std::string Key() const;

  friend bool operator==(const PatrolScope&, const PatrolScope&) = default;
};

// Decodes an optional POST /api/ai/patrol/run body: empty text or {} is the full scope;
// {resource_ids?: string[], resource_types?: string[]} (strict: unknown members refused,
// at most kMaxScopeItems items of at most kMaxScopeItemBytes clean text each, no blank item).
// Duplicates are dropped, order kept. InvalidArgument (invalid_patrol_scope) otherwise.
[[nodiscard]] absl::StatusOr<PatrolScope> ParsePatrolScopeRequest(std::string_view body);

// One model tool call of the run (bounded: inputs 16 KiB, outputs 2 KiB, 100 per run).
struct PatrolToolCall {
  std::string tool_name;
  std::string input;
  std::string output;
  bool success = false;

  friend bool operator==(const PatrolToolCall&, const PatrolToolCall&) = default;
};
inline constexpr std::size_t kMaxRecordedToolCalls = 100;
inline constexpr std::size_t kMaxToolCallInputBytes = 16 * 1024;
inline constexpr std::size_t kMaxToolCallOutputBytes = 2 * 1024;

// A verdict the model gave this run.
struct PatrolAssessment {
  std::string finding_id;
  std::string verdict;  // present, resolved, uncertain

  friend bool operator==(const PatrolAssessment&, const PatrolAssessment&) = default;
};

// Why a captured proposal never reached the action lifecycle: only an investigation that
// completed (the model gave its final answer) may hand its proposal on.
enum class ProposalDropReason {
  kProviderError,    // the provider failed (after its retries)
  kBudgetStop,       // a loop bound stopped it: provider calls, tokens, money, repeated denial
  kCancelled,        // shutdown cancelled it
  kTimedOut,         // the investigation timeout passed
  kIncomplete,       // it ended without a final answer (fallback summary, or any other end)
  kEngineError,      // the run could not run or be saved
  kAutonomyLowered,  // at admission, the level in force was monitor
};
// Wire: provider_error, budget_stop, cancelled, timed_out, incomplete, engine_error,
// autonomy_lowered.
std::string_view ToString(ProposalDropReason reason);
std::optional<ProposalDropReason> ParseProposalDropReason(std::string_view text);

// Why a planned fix was not dispatched automatically (it stays in the lifecycle for a human).
// Read at admission and again immediately before dispatch.
enum class FixHoldReason {
  kApprovalRequired,    // the plan itself needs a human decision
  kNotAutoExecutable,   // the run's level does not execute this auto-authorization class
  kAutonomyLowered,     // the level was lowered during the run
  kAutopilotRevoked,    // the Autopilot acknowledgement was revoked during the run
  kRemediationLocked,   // never_auto_remediate is set on the resource
  kMaintenanceWindow,   // a maintenance window is active on the resource
  kLockStateUnknown,    // the operator state could not be read
  kAutonomyUnreadable,  // the autonomy settings could not be read again
};
// Wire: approval_required, not_auto_executable, autonomy_lowered, autopilot_revoked,
// remediation_locked, maintenance_window, lock_state_unknown, autonomy_unreadable.
std::string_view ToString(FixHoldReason reason);
std::optional<FixHoldReason> ParseFixHoldReason(std::string_view text);

// What happened to a new finding after the run: investigated, a proposal, an action.
struct PatrolRemediation {
  std::string finding_id;
  std::string outcome;    // investigated, no_proposal, proposal_invalid, proposal_dropped,
                          // fix_queued,
                          // fix_executed, fix_verified, fix_verification_failed, fix_failed,
                          // fix_refused, fix_unrecorded, timed_out, error
  std::string action_id;  // "" without a plan
  std::string action_state;
  std::string execution;     // not_run, succeeded, failed, inconclusive ("" when not run)
  std::string verification;  // not_attempted, confirmed, contradicted, inconclusive
  std::string note;          // why it stayed pending, or what failed
  // Set exactly when a captured proposal was dropped (outcome proposal_dropped, or timed_out).
  std::optional<ProposalDropReason> proposal_dropped_reason;
  // Set when a planned fix was held for a human (outcome fix_queued).
  std::optional<FixHoldReason> hold_reason;

  friend bool operator==(const PatrolRemediation&, const PatrolRemediation&) = default;
};

struct PatrolRunRecord {
  std::string id;
  PatrolTrigger trigger = PatrolTrigger::kScheduled;
  PatrolScope scope;
  std::vector<std::string> effective_scope_resource_ids;  // scoped runs: what was checked
  absl::Time started_at;
  std::optional<absl::Time> completed_at;
  PatrolRunStatus status = PatrolRunStatus::kRunning;
  std::string autonomy_level;  // the effective level the run acted at

  std::int64_t resources_checked = 0;
  std::int64_t new_findings = 0;       // warning+ findings created this run
  std::int64_t existing_findings = 0;  // warning+ findings re-detected (heartbeat)
  std::int64_t resolved_findings = 0;
  std::int64_t rejected_findings = 0;  // reports the findings service refused
  std::vector<std::string> new_finding_ids;
  std::vector<std::string> existing_finding_ids;
  std::vector<std::string> resolved_finding_ids;
  std::vector<std::string> finding_ids;  // every warning+ finding active after the run
  std::string findings_summary;          // "All healthy" / "2 warnings, 1 critical"

  // The model pass.
  bool model_pass_ran = false;
  std::string model_pass_skipped_reason;  // set exactly when it did not run
  std::vector<PatrolAssessment> assessments;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::vector<PatrolToolCall> tool_calls;  // at most kMaxRecordedToolCalls
  std::int64_t tool_call_count = 0;
  std::string ai_analysis;  // the model's final text

  std::vector<PatrolRemediation> remediations;

  // The fleet's sources as the run began (a fleet of several sources only; docs/fleet.md).
  // A down source's resources show `unknown` and are skipped by triage without an error.
  std::vector<FleetSourceStatus> fleet_sources;

  std::int64_t error_count = 0;
  std::string error_summary;  // set when status is error
  std::string error_detail;   // bounded

  friend bool operator==(const PatrolRunRecord&, const PatrolRunRecord&) = default;
};

// The wire JSON (snake_case, docs/patrol.md names where they exist; duration_ms derived).
std::string PatrolRunToJson(const PatrolRunRecord& record);
// Decodes PatrolRunToJson's output (stores). InvalidArgument for anything else.
[[nodiscard]] absl::StatusOr<PatrolRunRecord> PatrolRunFromJson(std::string_view json);

}  // namespace pulse::core
