#include "pulse/core/findings/finding_requests.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/findings/finding_errors.h"
#include "pulse/core/json/json.h"

namespace pulse::core {
namespace {

// The invalid_finding_request details of a failed decode.
std::map<std::string, std::string> DetailsOf(const absl::Status& status) {
  REQUIRE_FALSE(status.ok());
  CHECK(absl::IsInvalidArgument(status));
  auto error = ToFindingAgentError(status);
  REQUIRE(error.has_value());
  CHECK(error->code == AgentErrorCode::kInvalidFindingRequest);
  return error->details;
}

rapidjson::Document Args(const std::string& json) {
  auto doc = ParseJson(json);
  REQUIRE(doc.ok());
  return std::move(*doc);
}

TEST_CASE("finding errors carry their surface code and details", "[core][findings]") {
  absl::Status invalid = InvalidFindingRequest("bad", {{"finding_id", "required"}});
  auto e = ToFindingAgentError(invalid);
  REQUIRE(e.has_value());
  CHECK(e->code == AgentErrorCode::kInvalidFindingRequest);
  CHECK(e->message == "bad");
  CHECK(
      e->ToJson() ==
      R"({"error":"invalid_finding_request","message":"bad","details":{"finding_id":"required"}})");
  CHECK(HttpStatusFor(e->code) == 400);
  auto not_found = ToFindingAgentError(FindingNotFoundError("f1"));
  CHECK(not_found->code == AgentErrorCode::kFindingNotFound);
  CHECK(not_found->message == "Finding not found");
  CHECK(HttpStatusFor(not_found->code) == 404);
  auto refused = ToFindingAgentError(FindingActionNotAllowed("f1", "no"));
  CHECK(refused->code == AgentErrorCode::kFindingActionNotAllowed);
  CHECK(HttpStatusFor(refused->code) == 409);
  CHECK_FALSE(ToFindingAgentError(absl::OkStatus()).has_value());
}

TEST_CASE("statuses without a payload map by their canonical code", "[core][findings]") {
  const std::pair<absl::Status, AgentErrorCode> table[] = {
      {absl::InvalidArgumentError("x"), AgentErrorCode::kInvalidFindingRequest},
      {absl::OutOfRangeError("x"), AgentErrorCode::kInvalidFindingRequest},
      {absl::NotFoundError("x"), AgentErrorCode::kFindingNotFound},
      {absl::FailedPreconditionError("x"), AgentErrorCode::kFindingActionNotAllowed},
      {absl::AbortedError("x"), AgentErrorCode::kFindingActionNotAllowed},
      {absl::AlreadyExistsError("x"), AgentErrorCode::kFindingActionNotAllowed},
      {absl::PermissionDeniedError("x"), AgentErrorCode::kFindingActionNotAllowed},
      {absl::UnavailableError("x"), AgentErrorCode::kPatrolUnavailable},
      {absl::InternalError("x"), AgentErrorCode::kPatrolUnavailable},
      {absl::DeadlineExceededError("x"), AgentErrorCode::kPatrolUnavailable},
  };
  for (const auto& [status, code] : table) {
    INFO(status.ToString());
    auto e = ToFindingAgentError(status);
    REQUIRE(e.has_value());
    CHECK(e->code == code);
    CHECK(e->details.empty());
  }
  // Every mapped code is one the finding capabilities declare.
  for (const auto& [status, code] : table) {
    const auto& set = FindingErrorCodes();
    CHECK(std::find(set.begin(), set.end(), code) != set.end());
  }
}

TEST_CASE("a payload naming a code outside the finding set is ignored", "[core][findings]") {
  absl::Status status = absl::NotFoundError("x");
  status.SetPayload(kFindingErrorPayloadUrl, absl::Cord(R"({"code":"action_not_found"})"));
  CHECK(ToFindingAgentError(status)->code == AgentErrorCode::kFindingNotFound);
  status.SetPayload(kFindingErrorPayloadUrl, absl::Cord("garbage"));
  CHECK(ToFindingAgentError(status)->code == AgentErrorCode::kFindingNotFound);
  absl::Status typed = MakeFindingError(absl::StatusCode::kUnavailable,
                                        AgentErrorCode::kPatrolUnavailable, "patrol is off");
  CHECK(ToFindingAgentError(typed)->code == AgentErrorCode::kPatrolUnavailable);
}

TEST_CASE("route bodies with a finding id decode and refuse what is missing or extra",
          "[core][findings]") {
  auto ok = ParseFindingIdRequest(R"({"finding_id":" f1 "})");
  REQUIRE(ok.ok());
  CHECK(ok->finding_id == "f1");
  CHECK(DetailsOf(ParseFindingIdRequest("{}").status()) ==
        std::map<std::string, std::string>{{"finding_id", "required"}});
  CHECK(DetailsOf(ParseFindingIdRequest(R"({"finding_id":""})").status()).at("finding_id") ==
        "required");
  CHECK(DetailsOf(ParseFindingIdRequest(R"({"finding_id":7})").status()).at("finding_id") ==
        "must be a string");
  CHECK(DetailsOf(ParseFindingIdRequest(R"({"finding_id":"a","x":1})").status()).at("x") ==
        "is not a known field");
  CHECK(DetailsOf(ParseFindingIdRequest(R"({"finding_id":"a","finding_id":"b"})").status())
            .at("finding_id") == "appears more than once");
  CHECK(DetailsOf(ParseFindingIdRequest("not json").status()).empty());
  CHECK(DetailsOf(ParseFindingIdRequest("[]").status()).empty());
  CHECK(DetailsOf(ParseFindingIdRequest(std::string(kMaxFindingRequestBytes + 1, ' ')).status())
            .empty());
}

TEST_CASE("snooze bodies need whole hours from 1 to 168", "[core][findings]") {
  auto ok = ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":168})");
  REQUIRE(ok.ok());
  CHECK(ok->duration_hours == 168);
  CHECK(ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":1})")->duration_hours == 1);
  CHECK(DetailsOf(ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":0})").status())
            .at("duration_hours") == "must be positive");
  CHECK(DetailsOf(ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":-3})").status())
            .at("duration_hours") == "must be positive");
  CHECK(DetailsOf(ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":169})").status())
            .at("duration_hours") == "must be at most 168");
  CHECK(DetailsOf(ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":1.5})").status())
            .at("duration_hours") == "must be a whole number of hours");
  CHECK(DetailsOf(ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":"2"})").status())
            .at("duration_hours") == "must be a whole number of hours");
  CHECK(DetailsOf(ParseSnoozeRequest(R"({"finding_id":"f1"})").status()).at("duration_hours") ==
        "required");
  // An optional note, bounded like every operator note.
  CHECK(
      ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":4,"note":"vendor patch"})")->note ==
      "vendor patch");
  CHECK(ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":4})")->note.empty());
  CHECK(DetailsOf(ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":4,"note":7})").status())
            .count("note") == 1);
  CHECK_FALSE(ParseSnoozeRequest(R"({"finding_id":"f1","duration_hours":4,"note":")" +
                                 std::string(kMaxNoteBytes + 1, 'n') + R"("})")
                  .ok());
}

TEST_CASE("dismiss bodies accept the three operator reasons only", "[core][findings]") {
  auto ok = ParseDismissRequest(R"({"finding_id":"f1","reason":"will_fix_later","note":"Q3"})");
  REQUIRE(ok.ok());
  CHECK(ok->reason == DismissReason::kWillFixLater);
  CHECK(ok->note == "Q3");
  CHECK(ParseDismissRequest(R"({"finding_id":"f1","reason":"not_an_issue"})")->note.empty());
  CHECK(DetailsOf(ParseDismissRequest(R"({"finding_id":"f1","reason":"suppressed"})").status())
            .count("reason") == 1);
  CHECK(DetailsOf(ParseDismissRequest(R"({"finding_id":"f1"})").status()).at("reason") ==
        "required");
}

TEST_CASE("resolve, note and suppression-rule bodies decode", "[core][findings]") {
  auto resolve = ParseResolveRequest(R"({"finding_id":"f1","resolution_note":"swapped disk"})");
  REQUIRE(resolve.ok());
  CHECK(resolve->resolution_note == "swapped disk");
  CHECK(ParseResolveRequest(R"({"finding_id":"f1"})")->resolution_note.empty());
  auto note = ParseNoteRequest(R"({"finding_id":"f1","note":""})");
  REQUIRE(note.ok());
  CHECK(note->note.empty());
  CHECK(DetailsOf(ParseNoteRequest(R"({"finding_id":"f1"})").status()).at("note") == "required");
  auto rule = ParseSuppressionRuleRequest(
      R"({"resource_id":"vm:1","resource_name":"web","category":"backup",)"
      R"("description":"nas backups","allow_broad_scope":false})");
  REQUIRE(rule.ok());
  CHECK(rule->resource_id == "vm:1");
  CHECK(rule->category == Category::kBackup);
  CHECK_FALSE(rule->allow_broad_scope);
  CHECK(DetailsOf(ParseSuppressionRuleRequest(R"({"resource_id":"vm:1"})").status())
            .at("description") == "required");
  CHECK(DetailsOf(ParseSuppressionRuleRequest(R"({"description":"d","category":"disk"})").status())
            .count("category") == 1);
  CHECK(
      DetailsOf(
          ParseSuppressionRuleRequest(R"({"description":"d","allow_broad_scope":"yes"})").status())
          .count("allow_broad_scope") == 1);
}

TEST_CASE("patrol tool arguments decode into service requests", "[core][findings]") {
  auto report = ParseReportFindingArgs(Args(
      R"({"resource_id":"vm:1","category":"capacity","severity":"critical","title":" Disk full ",)"
      R"("description":"d","evidence":"e","recommendation":"r","key":"disk-high"})"));
  REQUIRE(report.ok());
  CHECK(report->category == Category::kCapacity);
  CHECK(report->severity == Severity::kCritical);
  CHECK(report->title == "Disk full");
  CHECK(report->key == "disk-high");
  auto no_evidence = ParseReportFindingArgs(
      Args(R"({"resource_id":"vm:1","category":"capacity","severity":"critical","title":"t",)"
           R"("description":"d","recommendation":"r"})"));
  CHECK(DetailsOf(no_evidence.status()).at("evidence") == "required");
  auto bad_category = ParseReportFindingArgs(
      Args(R"({"resource_id":"vm:1","category":"storage","severity":"critical","title":"t",)"
           R"("description":"d","evidence":"e","recommendation":"r"})"));
  CHECK(DetailsOf(bad_category.status()).count("category") == 1);

  auto assess = ParseAssessFindingArgs(
      Args(R"({"finding_id":"f1","verdict":"resolved","evidence":"ok now"})"));
  REQUIRE(assess.ok());
  CHECK(assess->verdict == AssessVerdict::kResolved);
  CHECK(DetailsOf(ParseAssessFindingArgs(Args(R"({"finding_id":"f1","verdict":"gone",)"
                                              R"("evidence":"e"})"))
                      .status())
            .count("verdict") == 1);
  auto resolve = ParseResolveFindingArgs(
      Args(R"({"finding_id":"f1","resolution_note":"fixed","evidence":"job ok"})"));
  REQUIRE(resolve.ok());
  CHECK(resolve->evidence == "job ok");
  CHECK(DetailsOf(ParseResolveFindingArgs(Args(R"({"finding_id":"f1","evidence":"e"})")).status())
            .at("resolution_note") == "required");
}

}  // namespace
}  // namespace pulse::core
