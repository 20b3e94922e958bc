// The Patrol domain values: autonomy levels and their wire codecs, the run scope decoder, the
// run record codec, the deterministic triage rules and the fake run store's contract.
#include <catch2/catch.hpp>
#include <string>

#include "contracts/patrol_run_store_contract.h"
#include "pulse/core/model/autonomy.h"
#include "pulse/core/model/patrol_run.h"
#include "pulse/core/patrol/triage.h"
#include "pulse/testing/in_memory_patrol_run_store.h"

namespace pulse::testing::patrol {
namespace {

using core::AutoAuthorization;
using core::AutonomyLevel;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

core::AutonomySettings Update(std::string_view body, const core::AutonomySettings& current = {},
                              bool human = true) {
  absl::StatusOr<core::AutonomySettings> s =
      core::ParseAutonomyUpdate(body, current, "tok_human", human, kNow);
  REQUIRE(s.ok());
  return *s;
}

std::string UpdateError(std::string_view body, bool human = true) {
  absl::StatusOr<core::AutonomySettings> s =
      core::ParseAutonomyUpdate(body, {}, "tok_human", human, kNow);
  REQUIRE_FALSE(s.ok());
  CHECK(absl::IsInvalidArgument(s.status()));
  const std::string message(s.status().message());
  return message.substr(0, message.find(':'));
}

TEST_CASE("autonomy defaults to monitor and full needs a human acknowledgement",
          "[core][patrol][autonomy]") {
  core::AutonomySettings defaults;
  CHECK(core::EffectiveAutonomy(defaults) == AutonomyLevel::kMonitor);
  core::AutonomySettings full = Update(R"({"autonomy_level":"full"})");
  CHECK(full.level == AutonomyLevel::kFull);
  CHECK(core::EffectiveAutonomy(full) == AutonomyLevel::kApproval);
  core::AutonomySettings unlocked =
      Update(R"({"autonomy_level":"full","acknowledgement_id":"ack-7"})");
  CHECK(core::EffectiveAutonomy(unlocked) == AutonomyLevel::kFull);
  REQUIRE(unlocked.acknowledgement.has_value());
  CHECK(unlocked.acknowledgement->actor_id == "tok_human");
  // An agent cannot acknowledge Autopilot for a human.
  CHECK(UpdateError(R"({"autonomy_level":"full","acknowledgement_id":"ack-7"})", false) ==
        "invalid_request");
  // The acknowledgement is kept across later updates.
  CHECK(core::EffectiveAutonomy(Update(R"({"autonomy_level":"full"})", unlocked)) ==
        AutonomyLevel::kFull);

  const std::string json = core::AutonomyToJson(full);
  CHECK(json.find(R"("autonomy_level":"approval")") != std::string::npos);
  CHECK(json.find(R"("requested_autonomy_level":"full")") != std::string::npos);
  CHECK(json.find(R"("full_mode_unlocked":false)") != std::string::npos);
}

TEST_CASE("autonomy updates are strict and clamp the investigation settings",
          "[core][patrol][autonomy]") {
  core::AutonomySettings s = Update(
      R"({"autonomy_level":"assisted","investigation_budget":99,"investigation_timeout_sec":1})");
  CHECK(s.investigation_budget == core::kMaxInvestigationBudget);
  CHECK(s.investigation_timeout_sec == core::kMinInvestigationTimeoutSec);
  CHECK(UpdateError(R"({"autonomy_level":"yolo"})") == "invalid_autonomy_level");
  CHECK(UpdateError(R"({"autonomy_level":7})") == "invalid_autonomy_level");
  CHECK(UpdateError(R"({})") == "invalid_autonomy_level");
  CHECK(UpdateError(R"({"autonomy_level":"monitor","admin":true})") == "invalid_request");
  CHECK(UpdateError("not json") == "invalid_request");
  CHECK(UpdateError(R"({"autonomy_level":"monitor","investigation_budget":"5"})") ==
        "invalid_request");
  CHECK(UpdateError(std::string(10000, ' ') + "{}") == "invalid_request");
}

TEST_CASE("only assisted and full execute automatically, by capability class",
          "[core][patrol][autonomy]") {
  CHECK_FALSE(core::AutoExecutes(AutonomyLevel::kMonitor, AutoAuthorization::kLowRisk));
  CHECK_FALSE(core::AutoExecutes(AutonomyLevel::kApproval, AutoAuthorization::kLowRisk));
  CHECK(core::AutoExecutes(AutonomyLevel::kAssisted, AutoAuthorization::kLowRisk));
  CHECK_FALSE(core::AutoExecutes(AutonomyLevel::kAssisted, AutoAuthorization::kElevated));
  CHECK(core::AutoExecutes(AutonomyLevel::kFull, AutoAuthorization::kElevated));
  CHECK_FALSE(core::AutoExecutes(AutonomyLevel::kFull, AutoAuthorization::kNever));
  CHECK_FALSE(core::Investigates(AutonomyLevel::kMonitor));
  CHECK(core::Investigates(AutonomyLevel::kApproval));
}

TEST_CASE("autonomy settings survive their storage form", "[core][patrol][autonomy]") {
  core::AutonomySettings s;
  s.level = AutonomyLevel::kFull;
  s.acknowledgement = core::AutopilotAcknowledgement{"ack", "tok_1", kNow};
  s.investigation_budget = 7;
  absl::StatusOr<core::AutonomySettings> back =
      core::AutonomySettingsFromStorageJson(core::AutonomySettingsToStorageJson(s));
  REQUIRE(back.ok());
  CHECK(*back == s);
  // A revocation is kept too, reason and all.
  s.acknowledgement.reset();
  s.last_revocation = core::AutopilotRevocation{"ack", "tok_2", kNow, "change freeze"};
  back = core::AutonomySettingsFromStorageJson(core::AutonomySettingsToStorageJson(s));
  REQUIRE(back.ok());
  CHECK(*back == s);
}

TEST_CASE("an Autopilot acknowledgement is recorded once per id and revoked by its id",
          "[core][patrol][autonomy]") {
  core::AutonomySettings full;
  full.level = AutonomyLevel::kFull;
  core::AcknowledgementChange first = core::RecordAcknowledgement(full, "ack-1", "tok_a", kNow);
  CHECK(first.created);
  CHECK(core::EffectiveAutonomy(first.settings) == AutonomyLevel::kFull);
  // The same id again keeps the original actor and time.
  core::AcknowledgementChange again =
      core::RecordAcknowledgement(first.settings, "ack-1", "tok_b", kNow + absl::Hours(1));
  CHECK_FALSE(again.created);
  CHECK(again.settings == first.settings);
  // Another id replaces it.
  core::AcknowledgementChange other =
      core::RecordAcknowledgement(first.settings, "ack-2", "tok_b", kNow + absl::Hours(1));
  CHECK(other.created);
  CHECK(other.settings.acknowledgement->id == "ack-2");
  CHECK(other.settings.acknowledgement->actor_id == "tok_b");

  // Revoking an id that is not recorded changes nothing.
  CHECK(absl::IsNotFound(
      core::RevokeAcknowledgement(other.settings, "ack-1", "tok_a", "", kNow).status()));
  absl::StatusOr<core::AutonomySettings> revoked =
      core::RevokeAcknowledgement(other.settings, "ack-2", "tok_a", "freeze", kNow);
  REQUIRE(revoked.ok());
  CHECK(revoked->level == AutonomyLevel::kFull);
  CHECK(core::EffectiveAutonomy(*revoked) == AutonomyLevel::kApproval);
  REQUIRE(revoked->last_revocation.has_value());
  CHECK(revoked->last_revocation->reason == "freeze");
  CHECK(core::AutonomyToJson(*revoked).find(R"("autopilot_revocation":{)") != std::string::npos);
  CHECK(
      absl::IsNotFound(core::RevokeAcknowledgement(*revoked, "ack-2", "tok_a", "", kNow).status()));
}

TEST_CASE("acknowledgement and revocation bodies are strict", "[core][patrol][autonomy]") {
  CHECK(*core::ParseAcknowledgementRequest(R"({"acknowledgement_id":" ops-1 "})") == "ops-1");
  for (const std::string& bad :
       {std::string(""), std::string("{"), std::string("[]"), std::string("{}"),
        std::string(R"({"acknowledgement_id":""})"), std::string(R"({"acknowledgement_id":"  "})"),
        std::string(R"({"acknowledgement_id":7})"),
        std::string(R"({"acknowledgement_id":"a","admin":true})"),
        std::string(R"({"acknowledgement_id":"a\u0000b"})"),
        std::string(R"({"acknowledgement_id":")") + std::string(200, 'a') + "\"}"}) {
    INFO(bad);
    CHECK(absl::IsInvalidArgument(core::ParseAcknowledgementRequest(bad).status()));
  }
  CHECK(*core::ParseRevocationRequest("") == "");
  CHECK(*core::ParseRevocationRequest("{}") == "");
  CHECK(*core::ParseRevocationRequest(R"({"reason":"freeze"})") == "freeze");
  for (const std::string& bad :
       {std::string("{"), std::string(R"({"reason":1})"), std::string(R"({"why":"x"})"),
        std::string(R"({"reason":")") + std::string(600, 'a') + "\"}"}) {
    INFO(bad);
    CHECK(absl::IsInvalidArgument(core::ParseRevocationRequest(bad).status()));
  }
}

TEST_CASE("the run scope body is optional and strict", "[core][patrol][scope]") {
  CHECK(core::ParsePatrolScopeRequest("")->Full());
  CHECK(core::ParsePatrolScopeRequest("{}")->Full());
  absl::StatusOr<core::PatrolScope> scope = core::ParsePatrolScopeRequest(
      R"({"resource_ids":["vm:101","vm:101","vm:102"],"resource_types":["storage"]})");
  REQUIRE(scope.ok());
  CHECK(scope->resource_ids == std::vector<std::string>{"vm:101", "vm:102"});
  CHECK(scope->Key() == core::ParsePatrolScopeRequest(
                            R"({"resource_types":["storage"],"resource_ids":["vm:102","vm:101"]})")
                            ->Key());
  for (std::string_view bad :
       {R"({"resource_ids":"vm:101"})", R"({"resource_ids":[1]})", R"({"alert_type":"x"})",
        R"({"resource_ids":["  "]})", R"([])", R"({"resource_ids":["a"],)", "\x01"}) {
    absl::StatusOr<core::PatrolScope> s = core::ParsePatrolScopeRequest(bad);
    REQUIRE_FALSE(s.ok());
    CHECK(std::string(s.status().message()).rfind("invalid_patrol_scope", 0) == 0);
  }
  std::string many = R"({"resource_ids":[)";
  for (int i = 0; i < 101; ++i) {
    many += (i ? "," : "") + std::string("\"vm:") + std::to_string(100 + i) + "\"";
  }
  many += "]}";
  CHECK_FALSE(core::ParsePatrolScopeRequest(many).ok());
  CHECK_FALSE(core::ParsePatrolScopeRequest(std::string(40000, 'x')).ok());
}

TEST_CASE("a run record survives its JSON form", "[core][patrol][record]") {
  core::PatrolRunRecord r = contracts::ContractRun("run-1", kNow);
  const std::string json = core::PatrolRunToJson(r);
  CHECK(json.find(R"("duration_ms":3000)") != std::string::npos);
  CHECK(json.find(R"("status":"issues_found")") != std::string::npos);
  absl::StatusOr<core::PatrolRunRecord> back = core::PatrolRunFromJson(json);
  REQUIRE(back.ok());
  CHECK(*back == r);
  CHECK_FALSE(core::PatrolRunFromJson(R"({"id":"x"})").ok());
  CHECK(json.find("fleet_sources") == std::string::npos);  // a fleet of one source
}

TEST_CASE("a run record keeps the fleet's source states through its JSON form",
          "[core][patrol][record]") {
  core::PatrolRunRecord r = contracts::ContractRun("run-2", kNow);
  core::FleetSourceStatus up;
  up.name = "lab";
  up.kind = "demo";
  up.up = true;
  up.resources = 40;
  up.last_ok_at = kNow;
  core::FleetSourceStatus down;
  down.name = "d1";
  down.kind = "docker";
  down.error = "connection refused";
  r.fleet_sources = {up, down};
  const std::string json = core::PatrolRunToJson(r);
  CHECK(json.find(R"("state":"down")") != std::string::npos);
  absl::StatusOr<core::PatrolRunRecord> back = core::PatrolRunFromJson(json);
  REQUIRE(back.ok());
  CHECK(*back == r);
  std::string bad_state = json;
  bad_state.replace(bad_state.find(R"("state":"down")"), 14, R"("state":"gone")");
  CHECK(absl::IsInvalidArgument(core::PatrolRunFromJson(bad_state).status()));
  std::string negative = json;
  negative.replace(negative.find(R"("resources":40)"), 14, R"("resources":-1)");
  CHECK(absl::IsInvalidArgument(core::PatrolRunFromJson(negative).status()));
}

core::FleetStatus Status(std::string id, std::string status,
                         std::map<std::string, std::string> facts) {
  core::FleetStatus s;
  s.resource_id = std::move(id);
  s.status = std::move(status);
  s.facts = std::move(facts);
  return s;
}

core::FleetResource Resource(std::string id, std::string type) {
  core::FleetResource r;
  r.id = std::move(id);
  r.type = std::move(type);
  r.name = r.id;
  return r;
}

std::vector<std::string> Keys(const std::vector<core::FindingReport>& reports) {
  std::vector<std::string> out;
  for (const core::FindingReport& r : reports) {
    out.push_back(r.key);
  }
  return out;
}

TEST_CASE("triage flags failures and thresholds, not healthy or intentional states",
          "[core][patrol][triage]") {
  using V = std::vector<std::string>;
  CHECK(Keys(core::TriageResource(Resource("app-container:a", "app-container"),
                                  Status("app-container:a", "exited", {{"exit_code", "1"}}),
                                  std::nullopt)) == V{"container-exited"});
  // A job container that finished normally is not a problem.
  CHECK(core::TriageResource(Resource("app-container:m", "app-container"),
                             Status("app-container:m", "exited", {{"exit_code", "0"}}),
                             std::nullopt)
            .empty());
  CHECK(Keys(core::TriageResource(
            Resource("service:n/postfix", "service"),
            Status("service:n/postfix", "failed", {{"sub_state", "auto-restart"}}),
            std::nullopt)) == V{"service-crash-loop"});
  CHECK(Keys(core::TriageResource(Resource("backup-job:b", "backup-job"),
                                  Status("backup-job:b", "failed", {}), std::nullopt)) ==
        V{"backup-failed"});
  std::vector<core::FindingReport> vm = core::TriageResource(
      Resource("vm:1", "vm"), Status("vm:1", "running", {{"cpu_pct", "99"}, {"memory_pct", "91"}}),
      std::nullopt);
  REQUIRE(Keys(vm) == V{"cpu-high", "memory-high"});
  CHECK(vm[0].severity == core::Severity::kCritical);
  CHECK(vm[1].severity == core::Severity::kWarning);
  CHECK(vm[1].category == core::Category::kPerformance);
  CHECK(core::TriageResource(Resource("vm:1", "vm"),
                             Status("vm:1", "running", {{"cpu_pct", "89"}, {"memory_pct", "x"}}),
                             std::nullopt)
            .empty());
}

TEST_CASE("triage reads a storage pool's forecast", "[core][patrol][triage]") {
  core::CapacityForecast filling;
  filling.reading = core::ForecastReading::kFilling;
  filling.current_pct = 70;
  filling.daily_change = 1.5;
  filling.days_to_full = 20;
  std::vector<core::FindingReport> r =
      core::TriageResource(Resource("storage:n/p", "storage"),
                           Status("storage:n/p", "available", {{"usage_pct", "70"}}), filling);
  REQUIRE(r.size() == 1);
  CHECK(r[0].key == "storage-capacity");
  CHECK(r[0].category == core::Category::kCapacity);
  CHECK(r[0].evidence.find("full in") != std::string::npos);
  core::CapacityForecast flat;
  flat.reading = core::ForecastReading::kStable;
  flat.current_pct = 31;
  CHECK(core::TriageResource(Resource("storage:n/q", "storage"),
                             Status("storage:n/q", "available", {{"usage_pct", "31"}}), flat)
            .empty());
}

PULSE_PATROL_RUN_STORE_CONTRACT("InMemoryPatrolRunStore", "[core][patrol][contract]",
                                [] { return std::make_unique<InMemoryPatrolRunStore>(); })

}  // namespace
}  // namespace pulse::testing::patrol
