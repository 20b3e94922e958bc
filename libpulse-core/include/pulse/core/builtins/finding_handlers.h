// The Patrol finding tool handlers, all through FindingsService (the only way a finding
// changes). They touch only Pulse's finding records, never infrastructure. Results:
//   patrol_get_findings    {"count","findings":[{"id","key","severity","category",
//                           "resource_id","resource_name"?,"title","loop_state","detected_at",
//                           "last_seen_at","times_raised","evidence","resolved_at"?,
//                           "user_note"?}],"truncated"}: most severe first, then most recently
//                           seen; active only unless include_resolved
//   patrol_report_finding  {"finding_id","reported_id","disposition","is_new","events":[...],
//                           "message"}; the resource must exist in the fleet (its name and type
//                           are recorded with the finding)
//   patrol_assess_finding  {"finding_id","verdict","applied","refusal"?,"message"}: a resolved
//                           verdict the verifier does not confirm is applied=false, not an error
//   patrol_resolve_finding {"finding_id","resolved":true,"message"}; a resolve the category's
//                           verifier does not confirm is POLICY_BLOCKED (details refusal)
// Failures map through FindingStatusToToolError. Thread-safe when the borrowed ports are.
#pragma once

#include "absl/status/status.h"
#include "pulse/core/errors/tool_error.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/policy/tool_executor.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core {

// The tool error for a failed findings operation (finding_errors.h), with details
// "finding_error" (the agent code) and the payload's details:
//   Unavailable, DeadlineExceeded, Aborted (clashes persisted), ResourceExhausted
//                                  -> EXECUTION_FAILED (failed, retryable)
//   invalid_finding_request       -> INVALID_INPUT (blocked)
//   finding_not_found             -> NOT_FOUND (blocked)
//   finding_action_not_allowed    -> POLICY_BLOCKED (blocked)
//   patrol_unavailable            -> EXECUTION_FAILED (failed)
ToolError FindingStatusToToolError(const absl::Status& status);

class PatrolGetFindingsHandler final : public ToolHandler {
 public:
  // Borrows `findings` and `clock` (the loop state is derived at the clock's now).
  PatrolGetFindingsHandler(FindingsService& findings, const Clock& clock);
  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  FindingsService& findings_;
  const Clock& clock_;
};

class PatrolReportFindingHandler final : public ToolHandler {
 public:
  // Borrows `findings` and `fleet` (which checks that the resource exists).
  PatrolReportFindingHandler(FindingsService& findings, Fleet& fleet);
  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  FindingsService& findings_;
  Fleet& fleet_;
};

class PatrolAssessFindingHandler final : public ToolHandler {
 public:
  explicit PatrolAssessFindingHandler(FindingsService& findings);
  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  FindingsService& findings_;
};

class PatrolResolveFindingHandler final : public ToolHandler {
 public:
  explicit PatrolResolveFindingHandler(FindingsService& findings);
  ToolResult Run(const rapidjson::Value& args, const ToolContext& context) override;

 private:
  FindingsService& findings_;
};

}  // namespace pulse::core
