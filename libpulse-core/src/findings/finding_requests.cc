#include "pulse/core/findings/finding_requests.h"

#include <optional>
#include <string>
#include <type_traits>

#include "findings_service_internal.h"
#include "fmt/format.h"
#include "pulse/core/findings/finding_errors.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/finding_wire.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

namespace w = finding_wire;

constexpr JsonPresence kRequired = JsonPresence::kRequired;
constexpr JsonPresence kOptional = JsonPresence::kOptional;

absl::Status Bad(std::string_view member, std::string_view problem) {
  return InvalidFindingRequest(fmt::format("{} {}", member, problem),
                               {{std::string(member), std::string(problem)}});
}

// Request bodies word their errors for the caller: invalid_finding_request, details
// {member: problem}. Text is trimmed, so an all-space required member reads as missing.
absl::Status RenderRequestError(const JsonReadError& e) {
  using P = JsonReadProblem;
  switch (e.problem) {
    case P::kNotObject:
      return InvalidFindingRequest("the request body must be a JSON object");
    case P::kUnknownMember:
      return Bad(SanitizeUtf8(TruncateUtf8(e.member, 64)), "is not a known field");
    case P::kDuplicateMember:
      return Bad(e.member, "appears more than once");
    case P::kMissing:
    case P::kEmpty:
      return Bad(e.member, "required");
    case P::kTooLong:
      return Bad(e.member, fmt::format("must be at most {} bytes", e.high));
    case P::kBadText:
      return Bad(e.member, "must be valid UTF-8");
    default:
      return Bad(e.member, JsonMemberProblemText(e));
  }
}

constexpr JsonReaderOptions kRequestReader{.render = &RenderRequestError};

JsonStringRule Text(std::size_t max_bytes, JsonPresence presence) {
  return JsonStringRule{max_bytes, presence, /*trim=*/true};
}

// A trimmed vocabulary string; `hint` words an unknown value.
template <typename Parse>
auto EnumMember(JsonObjectReader& in, std::string_view member, Parse parse, JsonPresence presence,
                std::string_view hint) -> std::invoke_result_t<Parse, std::string_view> {
  std::optional<std::string> text = in.String(member, Text(64, presence));
  if (!text.has_value() || text->empty()) {
    return std::nullopt;
  }
  auto value = parse(*text);
  if (!value.has_value()) {
    in.Fail(member, hint);
  }
  return value;
}

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
  JsonObjectReader in(doc, "request", kRequestReader);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kFindingId}));
  FindingIdRequest out;
  out.finding_id = in.String(w::kFindingId, Text(kIdBytes, kRequired)).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  return out;
}

absl::StatusOr<SnoozeRequest> ParseSnoozeRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  JsonObjectReader in(doc, "request", kRequestReader);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kFindingId, w::kDurationHours, w::kNote}));
  SnoozeRequest out;
  out.finding_id = in.String(w::kFindingId, Text(kIdBytes, kRequired)).value_or("");
  out.note = in.String(w::kNote, Text(kMaxNoteBytes, kOptional)).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  const rapidjson::Value* hours = in.Member(w::kDurationHours);
  if (hours == nullptr) {
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
  JsonObjectReader in(doc, "request", kRequestReader);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kFindingId, w::kReason, w::kNote}));
  DismissRequest out;
  out.finding_id = in.String(w::kFindingId, Text(kIdBytes, kRequired)).value_or("");
  out.reason = EnumMember(in, w::kReason, ParseOperatorDismissReason, kRequired,
                          "must be not_an_issue, expected_behavior or will_fix_later")
                   .value_or(out.reason);
  out.note = in.String(w::kNote, Text(kMaxNoteBytes, kOptional)).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  return out;
}

absl::StatusOr<ResolveRequest> ParseResolveRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  JsonObjectReader in(doc, "request", kRequestReader);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kFindingId, w::kResolutionNote}));
  ResolveRequest out;
  out.finding_id = in.String(w::kFindingId, Text(kIdBytes, kRequired)).value_or("");
  out.resolution_note = in.String(w::kResolutionNote, Text(kMaxNoteBytes, kOptional)).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  return out;
}

absl::StatusOr<NoteRequest> ParseNoteRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  JsonObjectReader in(doc, "request", kRequestReader);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kFindingId, w::kNote}));
  NoteRequest out;
  out.finding_id = in.String(w::kFindingId, Text(kIdBytes, kRequired)).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  // The note must be present; an empty string (or null) clears it.
  if (GetMember(doc, w::kNote) == nullptr) {
    return Bad(w::kNote, "required");
  }
  out.note = in.String(w::kNote, Text(kMaxNoteBytes, kOptional)).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  return out;
}

absl::StatusOr<SuppressionRuleRequest> ParseSuppressionRuleRequest(std::string_view body) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBody(body));
  JsonObjectReader in(doc, "request", kRequestReader);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers(
      {w::kResourceId, w::kResourceName, w::kCategory, w::kRuleDescription, w::kAllowBroadScope}));
  SuppressionRuleRequest out;
  out.resource_id =
      in.String(w::kResourceId, Text(kMaxReportIdentifierBytes, kOptional)).value_or("");
  out.resource_name =
      in.String(w::kResourceName, Text(kMaxReportIdentifierBytes, kOptional)).value_or("");
  out.category = EnumMember(in, w::kCategory, ParseCategory, kOptional, "is not a known category");
  out.description = in.String(w::kRuleDescription, Text(kMaxNoteBytes, kRequired)).value_or("");
  out.allow_broad_scope = in.Bool(w::kAllowBroadScope).value_or(out.allow_broad_scope);
  PULSE_RETURN_IF_ERROR(in.status());
  return out;
}

absl::StatusOr<FindingReport> ParseReportFindingArgs(const rapidjson::Value& args) {
  JsonObjectReader in(args, "request", kRequestReader);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers(
      {w::kResourceId, w::kResourceName, w::kResourceType, w::kCategory, w::kSeverity, w::kTitle,
       w::kDescription, w::kImpact, w::kEvidence, w::kRecommendation, w::kKey, w::kNode}));
  FindingReport out;
  const JsonStringRule identifier = Text(kMaxReportIdentifierBytes, kOptional);
  const JsonStringRule text = Text(kMaxReportTextBytes, kRequired);
  out.resource_id =
      in.String(w::kResourceId, Text(kMaxReportIdentifierBytes, kRequired)).value_or("");
  out.resource_name = in.String(w::kResourceName, identifier).value_or("");
  out.resource_type = in.String(w::kResourceType, identifier).value_or("");
  out.category = EnumMember(in, w::kCategory, ParseCategory, kRequired, "is not a known category")
                     .value_or(out.category);
  out.severity = EnumMember(in, w::kSeverity, ParseSeverity, kRequired, "is not a known severity")
                     .value_or(out.severity);
  out.title = in.String(w::kTitle, Text(kMaxReportTitleBytes, kRequired)).value_or("");
  out.description = in.String(w::kDescription, text).value_or("");
  out.impact = in.String(w::kImpact, Text(kMaxReportTextBytes, kOptional)).value_or("");
  out.evidence = in.String(w::kEvidence, text).value_or("");
  out.recommendation = in.String(w::kRecommendation, text).value_or("");
  out.key = in.String(w::kKey, Text(kMaxReportKeyBytes, kOptional)).value_or("");
  out.node = in.String(w::kNode, identifier).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  return out;
}

absl::StatusOr<AssessRequest> ParseAssessFindingArgs(const rapidjson::Value& args) {
  JsonObjectReader in(args, "request", kRequestReader);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kFindingId, w::kVerdict, w::kEvidence, w::kReason}));
  AssessRequest out;
  out.finding_id = in.String(w::kFindingId, Text(kIdBytes, kRequired)).value_or("");
  out.verdict = EnumMember(in, w::kVerdict, ParseAssessVerdict, kRequired,
                           "must be present, resolved or uncertain")
                    .value_or(out.verdict);
  out.evidence = in.String(w::kEvidence, Text(kMaxReportTextBytes, kRequired)).value_or("");
  out.reason = in.String(w::kReason, Text(kMaxNoteBytes, kOptional)).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  return out;
}

absl::StatusOr<PatrolResolveRequest> ParseResolveFindingArgs(const rapidjson::Value& args) {
  JsonObjectReader in(args, "request", kRequestReader);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kFindingId, w::kResolutionNote, w::kEvidence}));
  PatrolResolveRequest out;
  out.finding_id = in.String(w::kFindingId, Text(kIdBytes, kRequired)).value_or("");
  out.resolution_note = in.String(w::kResolutionNote, Text(kMaxNoteBytes, kRequired)).value_or("");
  out.evidence = in.String(w::kEvidence, Text(kMaxReportTextBytes, kRequired)).value_or("");
  PULSE_RETURN_IF_ERROR(in.status());
  return out;
}

}  // namespace pulse::core
