#include "pulse/core/findings/finding_requests.h"

#include <initializer_list>
#include <utility>
#include <vector>

#include "findings_service_internal.h"
#include "fmt/format.h"
#include "json_codec.h"
#include "pulse/core/findings/finding_errors.h"
#include "pulse/core/findings/finding_wire.h"
#include "pulse/core/json/json.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

namespace w = finding_wire;

absl::Status Bad(std::string_view member, std::string_view problem) {
  return InvalidFindingRequest(fmt::format("{} {}", member, problem),
                               {{std::string(member), std::string(problem)}});
}

// A request object: strict member set, typed getters with invalid_finding_request details.
class Request {
 public:
  explicit Request(const rapidjson::Value& value) : value_(value) {}

  absl::Status Check(std::initializer_list<std::string_view> allowed) const {
    if (!value_.IsObject()) {
      return InvalidFindingRequest("the request body must be a JSON object");
    }
    // RapidJSON keeps duplicate names; a body that names a member twice is ambiguous.
    std::vector<bool> seen(allowed.size(), false);
    for (const auto& m : value_.GetObject()) {
      const std::string_view name(m.name.GetString(), m.name.GetStringLength());
      std::size_t index = 0;
      for (std::string_view a : allowed) {
        if (a == name) {
          break;
        }
        ++index;
      }
      if (index == allowed.size()) {
        return Bad(findings_internal::SanitizeUtf8(findings_internal::TruncateUtf8(name, 64)),
                   "is not a known field");
      }
      if (seen[index]) {
        return Bad(name, "appears more than once");
      }
      seen[index] = true;
    }
    return absl::OkStatus();
  }

  absl::Status Text(std::string_view member, std::size_t max_bytes, bool required,
                    std::string& out) const {
    const rapidjson::Value* v = GetMember(value_, member);
    if (v == nullptr || v->IsNull()) {
      return required ? Bad(member, "required") : absl::OkStatus();
    }
    if (!v->IsString()) {
      return Bad(member, "must be a string");
    }
    const std::string_view text(v->GetString(), v->GetStringLength());
    if (text.size() > max_bytes) {
      return Bad(member, fmt::format("must be at most {} bytes", max_bytes));
    }
    if (!findings_internal::IsValidUtf8(text)) {
      return Bad(member, "must be valid UTF-8");
    }
    out = findings_internal::Trimmed(text);
    if (required && out.empty()) {
      return Bad(member, "required");
    }
    return absl::OkStatus();
  }

  template <typename E, typename ParseFn>
  absl::Status Enum(std::string_view member, ParseFn parse, bool required, std::string_view hint,
                    std::optional<E>& out) const {
    std::string text;
    PULSE_RETURN_IF_ERROR(Text(member, 64, required, text));
    if (text.empty()) {
      return absl::OkStatus();
    }
    out = parse(text);
    return out.has_value() ? absl::OkStatus() : Bad(member, hint);
  }

  absl::Status Flag(std::string_view member, bool& out) const {
    const rapidjson::Value* v = GetMember(value_, member);
    if (v == nullptr || v->IsNull()) {
      return absl::OkStatus();
    }
    if (!v->IsBool()) {
      return Bad(member, "must be a boolean");
    }
    out = v->GetBool();
    return absl::OkStatus();
  }

  const rapidjson::Value* Find(std::string_view member) const { return GetMember(value_, member); }

 private:
  const rapidjson::Value& value_;
};

absl::StatusOr<rapidjson::Document> ParseBody(std::string_view body) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(body, JsonLimits{kMaxFindingRequestBytes, 4});
  if (!doc.ok()) {
    return InvalidFindingRequest(std::string(doc.status().message()));
  }
  return doc;
}

constexpr std::size_t kIdBytes = 256;

}  // namespace

absl::StatusOr<FindingIdRequest> ParseFindingIdRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  Request in(doc);
  PULSE_RETURN_IF_ERROR(in.Check({w::kFindingId}));
  FindingIdRequest out;
  PULSE_RETURN_IF_ERROR(in.Text(w::kFindingId, kIdBytes, true, out.finding_id));
  return out;
}

absl::StatusOr<SnoozeRequest> ParseSnoozeRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  Request in(doc);
  PULSE_RETURN_IF_ERROR(in.Check({w::kFindingId, w::kDurationHours}));
  SnoozeRequest out;
  PULSE_RETURN_IF_ERROR(in.Text(w::kFindingId, kIdBytes, true, out.finding_id));
  const rapidjson::Value* hours = in.Find(w::kDurationHours);
  if (hours == nullptr || hours->IsNull()) {
    return Bad(w::kDurationHours, "required");
  }
  if (!hours->IsInt64()) {
    return Bad(w::kDurationHours, "must be a whole number of hours");
  }
  out.duration_hours = hours->GetInt64();
  if (out.duration_hours < kMinSnoozeHours) {
    return Bad(w::kDurationHours, "must be positive");
  }
  if (out.duration_hours > kMaxSnoozeHours) {
    return Bad(w::kDurationHours, fmt::format("must be at most {}", kMaxSnoozeHours));
  }
  return out;
}

absl::StatusOr<DismissRequest> ParseDismissRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  Request in(doc);
  PULSE_RETURN_IF_ERROR(in.Check({w::kFindingId, w::kReason, w::kNote}));
  DismissRequest out;
  PULSE_RETURN_IF_ERROR(in.Text(w::kFindingId, kIdBytes, true, out.finding_id));
  std::optional<DismissReason> reason;
  PULSE_RETURN_IF_ERROR(in.Enum(w::kReason, ParseOperatorDismissReason, true,
                                "must be not_an_issue, expected_behavior or will_fix_later",
                                reason));
  out.reason = *reason;
  PULSE_RETURN_IF_ERROR(in.Text(w::kNote, kMaxNoteBytes, false, out.note));
  return out;
}

absl::StatusOr<ResolveRequest> ParseResolveRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  Request in(doc);
  PULSE_RETURN_IF_ERROR(in.Check({w::kFindingId, w::kResolutionNote}));
  ResolveRequest out;
  PULSE_RETURN_IF_ERROR(in.Text(w::kFindingId, kIdBytes, true, out.finding_id));
  PULSE_RETURN_IF_ERROR(in.Text(w::kResolutionNote, kMaxNoteBytes, false, out.resolution_note));
  return out;
}

absl::StatusOr<NoteRequest> ParseNoteRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  Request in(doc);
  PULSE_RETURN_IF_ERROR(in.Check({w::kFindingId, w::kNote}));
  NoteRequest out;
  PULSE_RETURN_IF_ERROR(in.Text(w::kFindingId, kIdBytes, true, out.finding_id));
  if (in.Find(w::kNote) == nullptr) {
    return Bad(w::kNote, "required");
  }
  PULSE_RETURN_IF_ERROR(in.Text(w::kNote, kMaxNoteBytes, false, out.note));
  return out;
}

absl::StatusOr<SuppressionRuleRequest> ParseSuppressionRuleRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  Request in(doc);
  PULSE_RETURN_IF_ERROR(in.Check({w::kResourceId, w::kResourceName, w::kCategory,
                                  w::kRuleDescription, w::kAllowBroadScope}));
  SuppressionRuleRequest out;
  PULSE_RETURN_IF_ERROR(in.Text(w::kResourceId, kMaxReportIdentifierBytes, false,
                                out.resource_id));
  PULSE_RETURN_IF_ERROR(in.Text(w::kResourceName, kMaxReportIdentifierBytes, false,
                                out.resource_name));
  PULSE_RETURN_IF_ERROR(in.Enum(w::kCategory, ParseCategory, false, "is not a known category",
                                out.category));
  PULSE_RETURN_IF_ERROR(in.Text(w::kRuleDescription, kMaxNoteBytes, true, out.description));
  PULSE_RETURN_IF_ERROR(in.Flag(w::kAllowBroadScope, out.allow_broad_scope));
  return out;
}

absl::StatusOr<FindingReport> ParseReportFindingArgs(const rapidjson::Value& args) {
  Request in(args);
  PULSE_RETURN_IF_ERROR(in.Check({w::kResourceId, w::kResourceName, w::kResourceType,
                                  w::kCategory, w::kSeverity, w::kTitle, w::kDescription,
                                  w::kImpact, w::kEvidence, w::kRecommendation, w::kKey,
                                  w::kNode}));
  FindingReport out;
  PULSE_RETURN_IF_ERROR(in.Text(w::kResourceId, kMaxReportIdentifierBytes, true,
                                out.resource_id));
  PULSE_RETURN_IF_ERROR(in.Text(w::kResourceName, kMaxReportIdentifierBytes, false,
                                out.resource_name));
  PULSE_RETURN_IF_ERROR(in.Text(w::kResourceType, kMaxReportIdentifierBytes, false,
                                out.resource_type));
  std::optional<Category> category;
  PULSE_RETURN_IF_ERROR(
      in.Enum(w::kCategory, ParseCategory, true, "is not a known category", category));
  out.category = *category;
  std::optional<Severity> severity;
  PULSE_RETURN_IF_ERROR(
      in.Enum(w::kSeverity, ParseSeverity, true, "is not a known severity", severity));
  out.severity = *severity;
  PULSE_RETURN_IF_ERROR(in.Text(w::kTitle, kMaxReportTitleBytes, true, out.title));
  PULSE_RETURN_IF_ERROR(in.Text(w::kDescription, kMaxReportTextBytes, true, out.description));
  PULSE_RETURN_IF_ERROR(in.Text(w::kImpact, kMaxReportTextBytes, false, out.impact));
  PULSE_RETURN_IF_ERROR(in.Text(w::kEvidence, kMaxReportTextBytes, true, out.evidence));
  PULSE_RETURN_IF_ERROR(
      in.Text(w::kRecommendation, kMaxReportTextBytes, true, out.recommendation));
  PULSE_RETURN_IF_ERROR(in.Text(w::kKey, kMaxReportKeyBytes, false, out.key));
  PULSE_RETURN_IF_ERROR(in.Text(w::kNode, kMaxReportIdentifierBytes, false, out.node));
  return out;
}

absl::StatusOr<AssessRequest> ParseAssessFindingArgs(const rapidjson::Value& args) {
  Request in(args);
  PULSE_RETURN_IF_ERROR(in.Check({w::kFindingId, w::kVerdict, w::kEvidence, w::kReason}));
  AssessRequest out;
  PULSE_RETURN_IF_ERROR(in.Text(w::kFindingId, kIdBytes, true, out.finding_id));
  std::optional<AssessVerdict> verdict;
  PULSE_RETURN_IF_ERROR(in.Enum(w::kVerdict, ParseAssessVerdict, true,
                                "must be present, resolved or uncertain", verdict));
  out.verdict = *verdict;
  PULSE_RETURN_IF_ERROR(in.Text(w::kEvidence, kMaxReportTextBytes, true, out.evidence));
  PULSE_RETURN_IF_ERROR(in.Text(w::kReason, kMaxNoteBytes, false, out.reason));
  return out;
}

absl::StatusOr<PatrolResolveRequest> ParseResolveFindingArgs(const rapidjson::Value& args) {
  Request in(args);
  PULSE_RETURN_IF_ERROR(in.Check({w::kFindingId, w::kResolutionNote, w::kEvidence}));
  PatrolResolveRequest out;
  PULSE_RETURN_IF_ERROR(in.Text(w::kFindingId, kIdBytes, true, out.finding_id));
  PULSE_RETURN_IF_ERROR(
      in.Text(w::kResolutionNote, kMaxNoteBytes, true, out.resolution_note));
  PULSE_RETURN_IF_ERROR(in.Text(w::kEvidence, kMaxReportTextBytes, true, out.evidence));
  return out;
}

}  // namespace pulse::core
