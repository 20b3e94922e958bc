#include "pulse/core/model/operator_state.h"

#include <catch2/catch.hpp>
#include <string>

#include "pulse/core/json/json.h"

namespace pulse::core {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST_CASE("operator state input decodes the wire body", "[core][actions]") {
  absl::StatusOr<OperatorState> s = ParseOperatorStateInput(
      R"({"resourceId":"vm:101","intentionallyOffline":false,"neverAutoRemediate":true,)"
      R"("maintenanceStartAt":"2027-01-15T08:00:00Z","maintenanceEndAt":"2027-01-15T10:00:00+01:00",)"
      R"("maintenanceReason":"patching","criticality":"high","note":"ask ops",)"
      R"("lifecycleState":"active"})",
      "vm:101", kNow, "alice");
  REQUIRE(s.ok());
  CHECK(s->resource_id == "vm:101");
  CHECK(s->never_auto_remediate);
  CHECK(s->monitoring_mode == MonitoringMode::kNormal);
  CHECK(*s->maintenance_start_at == kNow);
  CHECK(*s->maintenance_end_at == kNow + absl::Hours(1));
  CHECK(s->criticality == Criticality::kHigh);
  CHECK(s->set_at == kNow);
  CHECK(s->set_by == "alice");
  CHECK(ValidateOperatorState(*s).ok());
}

TEST_CASE("monitoring mode wins over intentionallyOffline", "[core][actions]") {
  absl::StatusOr<OperatorState> muted = ParseOperatorStateInput(
      R"({"resourceId":"vm:101","intentionallyOffline":true,"neverAutoRemediate":false,)"
      R"("monitoringMode":"muted"})",
      "", kNow, "alice");
  REQUIRE(muted.ok());
  CHECK(muted->monitoring_mode == MonitoringMode::kMuted);
  CHECK_FALSE(muted->intentionally_offline);
  absl::StatusOr<OperatorState> offline = ParseOperatorStateInput(
      R"({"resourceId":"vm:101","intentionallyOffline":true,"neverAutoRemediate":false})", "", kNow,
      "alice");
  REQUIRE(offline.ok());
  CHECK(offline->monitoring_mode == MonitoringMode::kExpectedOffline);
  CHECK(offline->intentionally_offline);
}

TEST_CASE("invalid operator state input is refused", "[core][actions]") {
  const std::string base =
      R"("resourceId":"vm:101","intentionallyOffline":false,"neverAutoRemediate":true)";
  for (const std::string& bad : {
           std::string(R"({"resourceId":"vm:101","intentionallyOffline":false})"),
           "{" + base + R"(,"maintenanceStartAt":"2027-01-15T08:00:00Z"})",
           "{" + base +
               R"(,"maintenanceStartAt":"2027-01-15T09:00:00Z",)"
               R"("maintenanceEndAt":"2027-01-15T08:00:00Z"})",
           "{" + base + R"(,"maintenanceStartAt":"tomorrow","maintenanceEndAt":"later"})",
           "{" + base + R"(,"maintenanceReason":"no window"})",
           "{" + base + R"(,"monitoringMode":"paused"})",
           "{" + base + R"(,"criticality":"urgent"})",
           "{" + base + R"(,"neverAutoRemediate":"yes"})",
           "{" + base + R"(,"unknown":1})",
           std::string(R"({"resourceId":"VM 101","intentionallyOffline":false,)"
                       R"("neverAutoRemediate":true})"),
           "{" + base + R"(,"note":")" + std::string(3000, 'n') + R"("})",
           "[" + base + "]",
           std::string("{") + base,
       }) {
    INFO(bad.substr(0, 160));
    CHECK(absl::IsInvalidArgument(ParseOperatorStateInput(bad, "", kNow, "alice").status()));
  }
  CHECK(absl::IsInvalidArgument(
      ParseOperatorStateInput("{" + base + "}", "vm:102", kNow, "alice").status()));
  CHECK(absl::IsInvalidArgument(ParseOperatorStateInput("{" + base + "}", "", kNow, "").status()));
}

TEST_CASE("a maintenance window is active from its start up to but excluding its end",
          "[core][actions]") {
  OperatorState s;
  s.resource_id = "vm:101";
  s.maintenance_start_at = kNow;
  s.maintenance_end_at = kNow + absl::Hours(1);
  CHECK_FALSE(MaintenanceWindowActive(s, kNow - absl::Nanoseconds(1)));
  CHECK(MaintenanceWindowActive(s, kNow));
  CHECK(MaintenanceWindowActive(s, kNow + absl::Hours(1) - absl::Nanoseconds(1)));
  CHECK_FALSE(MaintenanceWindowActive(s, kNow + absl::Hours(1)));
  s.maintenance_end_at.reset();
  CHECK_FALSE(MaintenanceWindowActive(s, kNow));
}

TEST_CASE("operator state projects to the wire output shape", "[core][actions]") {
  OperatorState s;
  s.resource_id = "service:pve1/nginx";
  s.never_auto_remediate = true;
  s.maintenance_start_at = kNow;
  s.maintenance_end_at = kNow + absl::Hours(2);
  s.set_at = kNow - absl::Minutes(1);
  s.set_by = "alice";
  absl::StatusOr<rapidjson::Document> doc =
      ParseJson(OperatorStateToJson(s, kNow + absl::Minutes(30)));
  REQUIRE(doc.ok());
  CHECK(GetString(*doc, "canonicalId") == "service:pve1/nginx");
  CHECK(GetBool(*doc, "neverAutoRemediate") == true);
  CHECK(GetBool(*doc, "intentionallyOffline") == false);
  CHECK(GetString(*doc, "monitoringMode") == "normal");
  CHECK(GetString(*doc, "maintenanceStartAt") == "2027-01-15T08:00:00Z");
  CHECK(GetBool(*doc, "maintenanceWindowActive") == true);
  CHECK(GetString(*doc, "setAt") == "2027-01-15T07:59:00Z");
  CHECK(GetMember(*doc, "criticality") == nullptr);
  CHECK(GetBool(*doc, "localOnly") == false);
  s.local_only = true;
  absl::StatusOr<rapidjson::Document> local = ParseJson(OperatorStateToJson(s, kNow));
  REQUIRE(local.ok());
  CHECK(GetBool(*local, "localOnly") == true);
}

TEST_CASE("localOnly is optional on input and must be a boolean", "[core][actions]") {
  const std::string base =
      R"("resourceId":"vm:101","intentionallyOffline":false,"neverAutoRemediate":false)";
  absl::StatusOr<OperatorState> plain = ParseOperatorStateInput("{" + base + "}", "", kNow, "al");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->local_only);
  absl::StatusOr<OperatorState> local =
      ParseOperatorStateInput("{" + base + R"(,"localOnly":true})", "", kNow, "al");
  REQUIRE(local.ok());
  CHECK(local->local_only);
  CHECK(absl::IsInvalidArgument(
      ParseOperatorStateInput("{" + base + R"(,"localOnly":"yes"})", "", kNow, "al").status()));
  CHECK(absl::IsInvalidArgument(
      ParseOperatorStateInput("{" + base + R"(,"local_only":true})", "", kNow, "al").status()));
}

TEST_CASE("enum wire names of operator state round-trip", "[core][actions]") {
  for (MonitoringMode m :
       {MonitoringMode::kNormal, MonitoringMode::kExpectedOffline, MonitoringMode::kMuted}) {
    CHECK(ParseMonitoringMode(ToString(m)) == m);
  }
  for (Criticality c :
       {Criticality::kUnset, Criticality::kHigh, Criticality::kMedium, Criticality::kLow}) {
    CHECK(ParseCriticality(ToString(c)) == c);
  }
  CHECK(ParseResourceLifecycle("retired") == ResourceLifecycle::kRetired);
  CHECK_FALSE(ParseMonitoringMode("Normal").has_value());
}

}  // namespace
}  // namespace pulse::core
