#include "pulse/core/builtins/finding_handlers.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "handler_support.h"
#include "pulse/core/builtins/tool_output.h"
#include "pulse/core/findings/finding_errors.h"
#include "pulse/core/findings/finding_requests.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/string_view.h"
#include "pulse/core/tools/tool_names.h"

namespace pulse::core {
namespace {

using handlers_internal::BoundedArray;
using handlers_internal::CheckResourceId;
using handlers_internal::InvalidInput;
using handlers_internal::ShortText;
using handlers_internal::Trimmed;
using handlers_internal::WriteBoundedArray;

constexpr std::size_t kMaxErrorDetails = 8;
constexpr std::size_t kMaxListedEvidenceBytes = 300;
constexpr std::size_t kMaxListedNoteBytes = 200;

bool IsTransient(absl::StatusCode code) {
  return code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded ||
         code == absl::StatusCode::kAborted || code == absl::StatusCode::kResourceExhausted;
}

std::string FindingBriefJson(const Finding& f, absl::Time now) {
  JsonWriter out;
  out.StartObject();
  out.Member("id", f.id);
  out.Member("key", ShortText(f.key, 128));
  out.Member("severity", ToString(f.severity));
  out.Member("category", ToString(f.category));
  out.Member("resource_id", ShortText(f.resource_id));
  out.MemberIfNotEmpty("resource_name", ShortText(f.resource_name));
  out.Member("title", ShortText(f.title));
  out.Member("loop_state", ToString(DeriveLoopState(f, now)));
  out.TimeMember("detected_at", f.detected_at);
  out.TimeMember("last_seen_at", f.last_seen_at);
  out.Member("times_raised", f.times_raised);
  out.Member("evidence", ShortText(f.evidence, kMaxListedEvidenceBytes));
  out.TimeMemberIfSet("resolved_at", f.resolved_at);
  out.MemberIfNotEmpty("user_note", ShortText(f.user_note, kMaxListedNoteBytes));
  out.EndObject();
  return out.Take();
}

std::string_view ReportMessage(ReportDisposition disposition) {
  switch (disposition) {
    case ReportDisposition::kCreated:
      return "New finding recorded.";
    case ReportDisposition::kHeartbeat:
      return "This finding was already active; its evidence and last-seen time were refreshed.";
    case ReportDisposition::kContentReplaced:
      return "The existing finding with this key was updated with the new title and content.";
    case ReportDisposition::kRegressed:
      return "The problem had been resolved and is back; the finding was reopened.";
    case ReportDisposition::kReactivated:
      return "A dismissed or suppressed finding was reactivated.";
    case ReportDisposition::kSeenWhileSuppressed:
      return "An operator dismissed or suppressed this finding; the sighting was noted and it "
             "stays hidden.";
    case ReportDisposition::kMerged:
      return "An equivalent active finding already exists; the report was merged into it "
             "(finding_id).";
    case ReportDisposition::kBlockedBySuppressionRule:
      return "An operator suppression rule covers this resource and category; nothing was "
             "recorded.";
    case ReportDisposition::kDismissedByOperatorState:
      return "The operator keeps this resource quiet (intentionally offline, muted or in a "
             "maintenance window); the finding was recorded dismissed and will not be "
             "investigated until that lifts.";
  }
  return "Recorded.";
}

std::string_view RefusalExplanation(ResolveRefusal refusal) {
  switch (refusal) {
    case ResolveRefusal::kNoVerifier:
      return "no deterministic verifier can confirm that this finding's problem is gone, and "
             "its category is only closed on such a confirmation";
    case ResolveRefusal::kSignalStillPresent:
      return "the deterministic verifier still detects the problem";
    case ResolveRefusal::kVerifierInconclusive:
      return "the deterministic verifier could not tell whether the problem is gone";
    case ResolveRefusal::kVerifierError:
      return "the deterministic verifier failed";
  }
  return "the resolve was not confirmed";
}

}  // namespace

ToolError FindingStatusToToolError(const absl::Status& status) {
  ToolError error;
  const std::optional<AgentError> agent = ToFindingAgentError(status);
  const AgentErrorCode code = agent.has_value() ? agent->code : AgentErrorCode::kPatrolUnavailable;
  if (IsTransient(status.code())) {
    error.code = ToolErrorCode::kExecutionFailed;
    error.failed = true;
    error.retryable = true;
  } else {
    switch (code) {
      case AgentErrorCode::kInvalidFindingRequest:
        error.code = ToolErrorCode::kInvalidInput;
        error.blocked = true;
        break;
      case AgentErrorCode::kFindingNotFound:
        error.code = ToolErrorCode::kNotFound;
        error.blocked = true;
        break;
      case AgentErrorCode::kFindingActionNotAllowed:
        error.code = ToolErrorCode::kPolicyBlocked;
        error.blocked = true;
        break;
      default:
        error.code = ToolErrorCode::kExecutionFailed;
        error.failed = true;
        break;
    }
  }
  error.message =
      ShortText(agent.has_value() ? agent->message : std::string(status.message()), 512);
  error.details.emplace_back("finding_error", std::string(ToString(code)));
  if (agent.has_value()) {
    std::size_t added = 0;
    for (const auto& [key, value] : agent->details) {
      if (added++ == kMaxErrorDetails) {
        break;
      }
      error.details.emplace_back(ShortText(key, 64), ShortText(value, 200));
    }
  }
  return error;
}

// ---- patrol_get_findings ------------------------------------------------------------------

PatrolGetFindingsHandler::PatrolGetFindingsHandler(FindingsService& findings, const Clock& clock)
    : findings_(findings), clock_(clock) {}

ToolResult PatrolGetFindingsHandler::Run(const rapidjson::Value& args,
                                         const ToolContext& /*context*/) {
  FindingQuery query;
  if (std::optional<std::string_view> id = GetString(args, kArgResourceId)) {
    query.resource_id = Trimmed(*id);
  }
  if (std::optional<std::string_view> category = GetString(args, kArgCategory)) {
    std::optional<Category> parsed = ParseCategory(*category);
    if (!parsed.has_value()) {
      return InvalidInput("category is not a finding category",
                          {{"argument", std::string(kArgCategory)}});
    }
    query.category = *parsed;
  }
  query.include_inactive = GetBool(args, kArgIncludeResolved).value_or(false);
  absl::StatusOr<std::vector<Finding>> listed = findings_.List(query);
  if (!listed.ok()) {
    return ToolResult::Failure(FindingStatusToToolError(listed.status()));
  }
  std::vector<Finding>& findings = *listed;
  // Patrol's own runtime finding is about Patrol, not the fleet: not the model's to assess.
  findings.erase(std::remove_if(findings.begin(), findings.end(),
                                [](const Finding& f) { return IsRuntimeFinding(f); }),
                 findings.end());
  // The most severe and most recent first, so a cut drops the least important.
  std::sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) {
      return SeverityRank(a.severity) > SeverityRank(b.severity);
    }
    if (a.last_seen_at != b.last_seen_at) {
      return a.last_seen_at > b.last_seen_at;
    }
    return a.id < b.id;
  });
  const absl::Time now = clock_.Now();
  BoundedArray items;
  for (const Finding& f : findings) {
    items.Add(FindingBriefJson(f, now));
  }
  JsonWriter out;
  out.StartObject();
  out.Member("count", items.size());
  out.Member("total", findings.size());
  WriteBoundedArray(out, "findings", items);
  out.Member("truncated", items.truncated());
  out.EndObject();
  return ToolResult::Success(out.Take());
}

// ---- patrol_report_finding ----------------------------------------------------------------

PatrolReportFindingHandler::PatrolReportFindingHandler(FindingsService& findings, Fleet& fleet)
    : findings_(findings), fleet_(fleet) {}

ToolResult PatrolReportFindingHandler::Run(const rapidjson::Value& args,
                                           const ToolContext& /*context*/) {
  absl::StatusOr<FindingReport> parsed = ParseReportFindingArgs(args);
  if (!parsed.ok()) {
    return ToolResult::Failure(FindingStatusToToolError(parsed.status()));
  }
  FindingReport report = *std::move(parsed);
  report.resource_id = Trimmed(report.resource_id);
  if (auto bad = CheckResourceId(report.resource_id)) {
    return *bad;
  }
  absl::StatusOr<FleetResource> resource = fleet_.GetResource(report.resource_id);
  if (resource.ok()) {
    if (report.resource_name.empty()) {
      report.resource_name = resource->name;
    }
    if (report.resource_type.empty()) {
      report.resource_type = resource->type;
    }
  } else if (absl::IsNotFound(resource.status())) {
    return ToolResult::Failure(PortStatusToToolError(resource.status(), report.resource_id));
  }
  // Any other fleet failure leaves the report as given: an unreachable fleet must not keep a
  // real problem from being recorded.
  absl::StatusOr<ReportOutcome> outcome = findings_.Report(report);
  if (!outcome.ok()) {
    return ToolResult::Failure(FindingStatusToToolError(outcome.status()));
  }
  JsonWriter out;
  out.StartObject();
  out.Member("finding_id", outcome->finding_id);
  out.Member("reported_id", outcome->reported_id);
  out.Member("disposition", ToString(outcome->disposition));
  out.Member("is_new", outcome->is_new);
  out.Key("events");
  out.StartArray();
  for (LifecycleEventType event : outcome->events) {
    out.String(ToString(event));
  }
  out.EndArray();
  out.Member("message", ReportMessage(outcome->disposition));
  out.EndObject();
  return ToolResult::Success(out.Take());
}

// ---- patrol_assess_finding ----------------------------------------------------------------

PatrolAssessFindingHandler::PatrolAssessFindingHandler(FindingsService& findings)
    : findings_(findings) {}

ToolResult PatrolAssessFindingHandler::Run(const rapidjson::Value& args,
                                           const ToolContext& /*context*/) {
  absl::StatusOr<AssessRequest> parsed = ParseAssessFindingArgs(args);
  if (!parsed.ok()) {
    return ToolResult::Failure(FindingStatusToToolError(parsed.status()));
  }
  absl::StatusOr<AssessOutcome> outcome =
      findings_.Assess(parsed->finding_id, parsed->verdict, parsed->evidence, parsed->reason);
  if (!outcome.ok()) {
    return ToolResult::Failure(FindingStatusToToolError(outcome.status()));
  }
  std::string message;
  switch (outcome->verdict) {
    case AssessVerdict::kPresent:
      message = "Recorded: the problem is still present; its evidence was refreshed.";
      break;
    case AssessVerdict::kUncertain:
      message = "Recorded as uncertain; the finding stays open.";
      break;
    case AssessVerdict::kResolved:
      message = outcome->applied ? std::string("The finding was resolved.")
                                 : absl::StrCat("The finding stays open: ",
                                                ToAbsl(RefusalExplanation(outcome->refusal.value_or(
                                                    ResolveRefusal::kVerifierInconclusive))),
                                                ".");
      break;
  }
  JsonWriter out;
  out.StartObject();
  out.Member("finding_id", outcome->finding_id);
  out.Member("verdict", ToString(outcome->verdict));
  out.Member("applied", outcome->applied);
  if (outcome->refusal.has_value()) {
    out.Member("refusal", ToString(*outcome->refusal));
  }
  out.Member("message", message);
  out.EndObject();
  return ToolResult::Success(out.Take());
}

// ---- patrol_resolve_finding ---------------------------------------------------------------

PatrolResolveFindingHandler::PatrolResolveFindingHandler(FindingsService& findings)
    : findings_(findings) {}

ToolResult PatrolResolveFindingHandler::Run(const rapidjson::Value& args,
                                            const ToolContext& /*context*/) {
  absl::StatusOr<PatrolResolveRequest> parsed = ParseResolveFindingArgs(args);
  if (!parsed.ok()) {
    return ToolResult::Failure(FindingStatusToToolError(parsed.status()));
  }
  absl::StatusOr<ResolveOutcome> outcome =
      findings_.ResolveByPatrol(parsed->finding_id, parsed->resolution_note, parsed->evidence);
  if (!outcome.ok()) {
    return ToolResult::Failure(FindingStatusToToolError(outcome.status()));
  }
  if (!outcome->resolved) {
    const ResolveRefusal refusal = outcome->refusal.value_or(ResolveRefusal::kVerifierInconclusive);
    ToolError error;
    error.code = ToolErrorCode::kPolicyBlocked;
    error.blocked = true;
    error.message = absl::StrCat("The finding stays open: ", ToAbsl(RefusalExplanation(refusal)),
                                 ". Nothing was changed.");
    error.details.emplace_back("refusal", std::string(ToString(refusal)));
    error.details.emplace_back("finding_id", outcome->finding_id);
    return ToolResult::Failure(std::move(error));
  }
  JsonWriter out;
  out.StartObject();
  out.Member("finding_id", outcome->finding_id);
  out.Member("resolved", true);
  out.Member("message", outcome->message.empty() ? std::string("The finding was resolved.")
                                                 : ShortText(outcome->message, 512));
  out.EndObject();
  return ToolResult::Success(out.Take());
}

}  // namespace pulse::core
