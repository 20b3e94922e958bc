// Decoders for the inputs of the finding lifecycle: the HTTP route bodies (docs/api.md)
// and the Patrol tool arguments (patrol_report_finding, patrol_assess_finding,
// patrol_resolve_finding). Each decoder is strict (unknown members, wrong types and missing
// required members are refused) and fails with InvalidArgument carrying the
// invalid_finding_request payload and per-member details, e.g. {"finding_id":"required"} or
// {"duration_hours":"must be positive"} (finding_errors.h). Business rules (snooze bounds,
// required evidence) are enforced again by FindingsService. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/model/finding_types.h"
#include "rapidjson/document.h"

namespace pulse::core {

// Largest route body accepted.
inline constexpr std::size_t kMaxFindingRequestBytes = 64 * 1024;

// {finding_id}: acknowledge, suppress, unsnooze.
struct FindingIdRequest {
  std::string finding_id;
};
// {finding_id, duration_hours}: duration_hours an integer in 1..168.
struct SnoozeRequest {
  std::string finding_id;
  std::int64_t duration_hours = 0;
  std::string note;  // optional: kept on the finding as its user note
};
// {finding_id, reason, note?}: reason not_an_issue|expected_behavior|will_fix_later.
struct DismissRequest {
  std::string finding_id;
  DismissReason reason = DismissReason::kExpectedBehavior;
  std::string note;
};
// {finding_id, resolution_note?}: the operator resolve.
struct ResolveRequest {
  std::string finding_id;
  std::string resolution_note;
};
// {finding_id, note}: replace the operator note (empty clears it).
struct NoteRequest {
  std::string finding_id;
  std::string note;
};
// patrol_assess_finding {finding_id, verdict, evidence, reason?}.
struct AssessRequest {
  std::string finding_id;
  AssessVerdict verdict = AssessVerdict::kUncertain;
  std::string evidence;
  std::string reason;
};
// patrol_resolve_finding {finding_id, resolution_note, evidence}.
struct PatrolResolveRequest {
  std::string finding_id;
  std::string resolution_note;
  std::string evidence;
};

[[nodiscard]] absl::StatusOr<FindingIdRequest> ParseFindingIdRequest(std::string_view body);
[[nodiscard]] absl::StatusOr<SnoozeRequest> ParseSnoozeRequest(std::string_view body);
[[nodiscard]] absl::StatusOr<DismissRequest> ParseDismissRequest(std::string_view body);
[[nodiscard]] absl::StatusOr<ResolveRequest> ParseResolveRequest(std::string_view body);
[[nodiscard]] absl::StatusOr<NoteRequest> ParseNoteRequest(std::string_view body);
// {resource_id?, resource_name?, category?, description, allow_broad_scope?}.
[[nodiscard]] absl::StatusOr<SuppressionRuleRequest> ParseSuppressionRuleRequest(
    std::string_view body);

// Tool arguments, already parsed and bounded by the loop. patrol_report_finding takes
// resource_id, category, severity, title, description, evidence, recommendation (required)
// and key, resource_name, resource_type, impact, node (optional).
[[nodiscard]] absl::StatusOr<FindingReport> ParseReportFindingArgs(const rapidjson::Value& args);
[[nodiscard]] absl::StatusOr<AssessRequest> ParseAssessFindingArgs(const rapidjson::Value& args);
[[nodiscard]] absl::StatusOr<PatrolResolveRequest> ParseResolveFindingArgs(
    const rapidjson::Value& args);

}  // namespace pulse::core
