// The Patrol finding tools over FindingsService: report, list, assess, resolve; the fleet check
// of reported resources; the verifier gate; stable codes for service refusals and failures.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "handlers_test_support.h"
#include "pulse/core/json/json_time.h"

namespace pulse::testing::handlers {
namespace {

using core::GetBool;
using core::GetInt64;
using core::kToolPatrolAssessFinding;
using core::kToolPatrolGetFindings;
using core::kToolPatrolReportFinding;
using core::kToolPatrolResolveFinding;

std::string ReportArgs(std::string resource_id, std::string category, std::string severity,
                       std::string key, std::string title = "Root filesystem almost full") {
  return R"({"resource_id":")" + resource_id + R"(","category":")" + category +
         R"(","severity":")" + severity + R"(","title":")" + title +
         R"(","description":"/ on web-01 is 96% full and writes fail.",)"
         R"("evidence":"pulse_read logs: No space left on device; df: 96%",)"
         R"("recommendation":"Free space or grow the disk.","key":")" +
         key + R"("})";
}

std::string Report(Fixture& f, std::string resource_id, std::string category, std::string severity,
                   std::string key) {
  rapidjson::Document r = f.Ok(
      kToolPatrolReportFinding,
      ReportArgs(std::move(resource_id), std::move(category), std::move(severity), std::move(key)));
  return Str(r, "finding_id");
}

TEST_CASE("patrol_report_finding records a finding on a fleet resource, then heartbeats",
          "[core][handlers][findings]") {
  Fixture f;
  rapidjson::Document r =
      f.Ok(kToolPatrolReportFinding, ReportArgs("vm:101", "capacity", "critical", "disk-full"));
  const std::string id = Str(r, "finding_id");
  REQUIRE_FALSE(id.empty());
  CHECK(Str(r, "reported_id") == id);
  CHECK(Str(r, "disposition") == "created");
  CHECK(GetBool(r, "is_new") == true);
  CHECK(Strings(Member(r, "events")) == std::vector<std::string>{"detected"});
  CHECK(Str(r, "message") == "New finding recorded.");
  absl::StatusOr<core::StoredFinding> stored = f.finding_store.Get(id);
  REQUIRE(stored.ok());
  CHECK(stored->finding.resource_name == "web-01");  // recorded from the fleet
  CHECK(stored->finding.resource_type == "vm");
  CHECK(stored->finding.severity == core::Severity::kCritical);

  rapidjson::Document again =
      f.Ok(kToolPatrolReportFinding, ReportArgs("vm:101", "capacity", "critical", "disk-full"));
  CHECK(Str(again, "finding_id") == id);
  CHECK(Str(again, "disposition") == "heartbeat");
  CHECK(GetBool(again, "is_new") == false);
  CHECK(Member(again, "events").Size() == 0);
  CHECK(f.finding_store.size() == 1);
}

TEST_CASE("patrol_report_finding refuses unknown resources and bad reports, storing nothing",
          "[core][handlers][findings]") {
  Fixture f;
  CHECK(f.Refused(kToolPatrolReportFinding, ReportArgs("vm:999", "capacity", "warning", "k")) ==
        "NOT_FOUND");
  CHECK(f.Refused(kToolPatrolReportFinding, ReportArgs("web-01", "capacity", "warning", "k")) ==
        "INVALID_INPUT");
  // A blank title passes the schema's minLength but not the service.
  CHECK(f.Refused(kToolPatrolReportFinding,
                  ReportArgs("vm:101", "capacity", "warning", "k", "   ")) == "INVALID_INPUT");
  CHECK(Contains(f.last_error, R"("finding_error":"invalid_finding_request")"));
  CHECK(f.finding_store.size() == 0);
}

TEST_CASE("patrol_report_finding still records when the fleet cannot be reached",
          "[core][handlers][findings]") {
  Fixture f;
  f.fleet.SetError(FakeFleet::Method::kGetResource, absl::UnavailableError("agent offline"));
  rapidjson::Document r =
      f.Ok(kToolPatrolReportFinding, ReportArgs("vm:101", "reliability", "warning", "flapping"));
  CHECK(Str(r, "disposition") == "created");
}

TEST_CASE("patrol_get_findings lists active findings, most severe first",
          "[core][handlers][findings]") {
  Fixture f;
  const std::string warning = Report(f, "vm:102", "performance", "warning", "cpu-high");
  f.clock.Advance(absl::Minutes(1));
  const std::string critical = Report(f, "vm:101", "capacity", "critical", "disk-full");
  rapidjson::Document r = f.Ok(kToolPatrolGetFindings, "{}");
  CHECK(GetInt64(r, "count") == 2);
  CHECK(GetInt64(r, "total") == 2);
  CHECK(GetBool(r, "truncated") == false);
  const rapidjson::Value& findings = Member(r, "findings");
  REQUIRE(findings.Size() == 2);
  const rapidjson::Value& first = findings[0];
  CHECK(Str(first, "id") == critical);
  CHECK(Str(first, "key") == "disk-full");
  CHECK(Str(first, "severity") == "critical");
  CHECK(Str(first, "category") == "capacity");
  CHECK(Str(first, "resource_id") == "vm:101");
  CHECK(Str(first, "resource_name") == "web-01");
  CHECK(Str(first, "title") == "Root filesystem almost full");
  CHECK(Str(first, "loop_state") == "detected");
  CHECK(Str(first, "detected_at") == core::FormatRfc3339(f.clock.Now()));
  CHECK(Str(first, "last_seen_at") == core::FormatRfc3339(f.clock.Now()));
  CHECK(GetInt64(first, "times_raised") == 1);
  CHECK(Str(first, "evidence") == "pulse_read logs: No space left on device; df: 96%");
  CHECK(core::GetMember(first, "resolved_at") == nullptr);
  CHECK(Str(findings[1], "id") == warning);

  rapidjson::Document only =
      f.Ok(kToolPatrolGetFindings, R"({"resource_id":"vm:102","category":"performance"})");
  REQUIRE(Member(only, "findings").Size() == 1);
  CHECK(Str(Member(only, "findings")[0], "id") == warning);
  CHECK(GetInt64(f.Ok(kToolPatrolGetFindings, R"({"category":"backup"})"), "count") == 0);
}

TEST_CASE("patrol_assess_finding records verdicts, and a resolved verdict needs the verifier",
          "[core][handlers][findings]") {
  Fixture f;
  const std::string id = Report(f, "vm:101", "reliability", "warning", "crash-loop");
  rapidjson::Document present =
      f.Ok(kToolPatrolAssessFinding,
           R"({"finding_id":")" + id + R"(","verdict":"present","evidence":"still restarting"})");
  CHECK(Str(present, "finding_id") == id);
  CHECK(Str(present, "verdict") == "present");
  CHECK(GetBool(present, "applied") == true);
  CHECK(core::GetMember(present, "refusal") == nullptr);

  rapidjson::Document resolved = f.Ok(
      kToolPatrolAssessFinding,
      R"({"finding_id":")" + id + R"(","verdict":"resolved","evidence":"no restarts for 1h"})");
  CHECK(GetBool(resolved, "applied") == false);
  CHECK(Str(resolved, "refusal") == "no_deterministic_verifier");
  CHECK(Contains(Str(resolved, "message"), "stays open"));
  CHECK(f.Ok(kToolPatrolGetFindings, "{}")["findings"].Size() == 1);

  CHECK(f.Refused(kToolPatrolAssessFinding,
                  R"({"finding_id":"nope","verdict":"present","evidence":"x"})") == "NOT_FOUND");
  CHECK(Contains(f.last_error, R"("finding_error":"finding_not_found")"));
  CHECK(f.Refused(kToolPatrolAssessFinding,
                  R"({"finding_id":")" + id + R"(","verdict":"present","evidence":"   "})") ==
        "INVALID_INPUT");
}

TEST_CASE("patrol_resolve_finding closes a finding of any category only on the verifier's word",
          "[core][handlers][findings]") {
  Fixture f;
  const std::string cpu = Report(f, "vm:102", "performance", "warning", "cpu-high");
  const std::string crash = Report(f, "vm:101", "reliability", "warning", "crash-loop");
  const std::string resolve = R"(","resolution_note":"load is back to normal",)"
                              R"("evidence":"pulse_metrics cpu avg 12% over 1h"})";

  // A metric finding is no exception: the model's evidence alone is refused.
  CHECK(f.Refused(kToolPatrolResolveFinding, R"({"finding_id":")" + cpu + resolve) ==
        "POLICY_BLOCKED");
  CHECK(Contains(f.last_error, R"("refusal":"no_deterministic_verifier")"));
  f.verifier.Script("cpu-high", core::VerifierVerdict::kSignalGone);
  rapidjson::Document r = f.Ok(kToolPatrolResolveFinding, R"({"finding_id":")" + cpu + resolve);
  CHECK(Str(r, "finding_id") == cpu);
  CHECK(GetBool(r, "resolved") == true);
  CHECK_FALSE(Str(r, "message").empty());

  CHECK(f.Refused(kToolPatrolResolveFinding, R"({"finding_id":")" + crash + resolve) ==
        "POLICY_BLOCKED");
  CHECK(Contains(f.last_error, R"("refusal":"no_deterministic_verifier")"));
  f.verifier.Script("crash-loop", core::VerifierVerdict::kSignalPresent);
  CHECK(f.Refused(kToolPatrolResolveFinding, R"({"finding_id":")" + crash + resolve) ==
        "POLICY_BLOCKED");
  CHECK(Contains(f.last_error, R"("refusal":"verifier_still_detects")"));
  f.verifier.Script("crash-loop", core::VerifierVerdict::kSignalGone);
  CHECK(GetBool(f.Ok(kToolPatrolResolveFinding, R"({"finding_id":")" + crash + resolve),
                "resolved") == true);

  // Resolving twice is an illegal transition.
  CHECK(f.Refused(kToolPatrolResolveFinding, R"({"finding_id":")" + cpu + resolve) ==
        "POLICY_BLOCKED");
  CHECK(Contains(f.last_error, R"("finding_error":"finding_action_not_allowed")"));
  rapidjson::Document all = f.Ok(kToolPatrolGetFindings, R"({"include_resolved":true})");
  CHECK(GetInt64(all, "count") == 2);
  CHECK(Str(Member(all, "findings")[0], "loop_state") == "resolved");
}

TEST_CASE("finding tools report store failures as retryable execution failures",
          "[core][handlers][findings]") {
  Fixture f;
  f.finding_store.FailNext(absl::UnavailableError("database locked"), "List");
  CHECK(f.Refused(kToolPatrolGetFindings, "{}") == "EXECUTION_FAILED");
  CHECK(Contains(f.last_error, R"("retryable":true)"));
  CHECK(Contains(f.last_error, R"("finding_error":"patrol_unavailable")"));
}

}  // namespace
}  // namespace pulse::testing::handlers
