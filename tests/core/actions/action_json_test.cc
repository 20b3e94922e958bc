#include "pulse/core/actions/action_json.h"

#include <catch2/catch.hpp>
#include <string>

#include "action_test_support.h"
#include "pulse/core/json/json.h"

namespace pulse::core {
namespace {

using namespace testing::actions;  // NOLINT: test fixtures

ActionRecord CompletedRecord() {
  Harness h;
  h.clock.Advance(absl::Milliseconds(1234) + absl::Nanoseconds(5));
  const ActionRecord approved = ApprovedRestart(h);
  return MustExecute(h, Execution(approved, Human("alice"))).record;
}

TEST_CASE("records round-trip through their wire JSON exactly", "[core][actions]") {
  Harness h;
  const ActionRecord pending = MustPlan(h, Request("restart", "{}", Agent("assistant")));
  const ActionRecord completed = CompletedRecord();
  for (const ActionRecord& r : {pending, completed}) {
    const std::string json = ActionRecordToJson(r);
    absl::StatusOr<ActionRecord> back = ParseActionRecordJson(json);
    INFO(json);
    REQUIRE(back.ok());
    CHECK(*back == r);
    CHECK(ActionRecordToJson(*back) == json);
  }
}

TEST_CASE("the record JSON uses the wire names", "[core][actions]") {
  const ActionRecord r = CompletedRecord();
  absl::StatusOr<rapidjson::Document> doc = ParseJson(ActionRecordToJson(r));
  REQUIRE(doc.ok());
  CHECK(GetString(*doc, "state") == "completed");
  CHECK(GetString(*doc, "id") == r.id());
  const rapidjson::Value* plan = GetMember(*doc, "plan");
  REQUIRE(plan != nullptr);
  CHECK(GetString(*plan, "planHash") == r.plan.plan_hash);
  CHECK(GetString(*plan, "approvalPolicy") == "admin");
  CHECK(GetBool(*plan, "requiresApproval") == true);
  CHECK(GetMember(*plan, "preflight") != nullptr);
  const rapidjson::Value* request = GetMember(*doc, "request");
  REQUIRE(request != nullptr);
  CHECK(GetString(*request, "requestedBy") == "assistant");
  const rapidjson::Value* params = GetMember(*request, "params");
  REQUIRE(params != nullptr);
  CHECK(params->IsObject());
  const rapidjson::Value* result = GetMember(*doc, "result");
  REQUIRE(result != nullptr);
  CHECK(GetInt64(*result, "version") == 2);
  CHECK(GetString(*GetMember(*result, "execution"), "status") == "succeeded");
  CHECK(GetString(*GetMember(*result, "verification"), "evidenceClass") == "independent");
  CHECK(GetString(*GetMember(*doc, "verificationOutcome"), "status") == "verified");
  CHECK(GetString(*doc, "createdAt") == "2027-01-15T08:00:01.234000005Z");
}

TEST_CASE("a decision has one codec: the audit form names the actor, the decide form does not",
          "[core][actions]") {
  ApprovalRecord a;
  a.actor = ActionActor{ActorKind::kHuman, "tok_1", "Alice \"ops\""};
  a.outcome = DecisionOutcome::kApproved;
  a.at = absl::FromUnixSeconds(1700000000) + absl::Milliseconds(250);
  a.plan_hash = "sha256:ab";
  const auto write = [&](ApprovalActorName name) {
    JsonWriter w;
    WriteApprovalJson(w, a, name);
    return w.Take();
  };
  CHECK(write(ApprovalActorName::kWithName) ==
        R"({"actor":{"kind":"human","id":"tok_1","name":"Alice \"ops\""},"outcome":"approved",)"
        R"("timestamp":"2023-11-14T22:13:20.25Z","planHash":"sha256:ab"})");
  CHECK(write(ApprovalActorName::kWithoutName) ==
        R"({"actor":{"kind":"human","id":"tok_1"},"outcome":"approved",)"
        R"("timestamp":"2023-11-14T22:13:20.25Z","planHash":"sha256:ab"})");
  // The audit record embeds exactly the audit form, reason included when there is one.
  const ActionRecord completed = CompletedRecord();
  REQUIRE_FALSE(completed.approvals.empty());
  JsonWriter w;
  WriteApprovalJson(w, completed.approvals.front(), ApprovalActorName::kWithName);
  CHECK(ActionRecordToJson(completed).find(w.Take()) != std::string::npos);
}

TEST_CASE("inconsistent or tampered record JSON is refused", "[core][actions]") {
  const ActionRecord r = CompletedRecord();
  auto tamper = [&](const std::string& from, const std::string& to) {
    std::string json = ActionRecordToJson(r);
    const std::size_t at = json.find(from);
    REQUIRE(at != std::string::npos);
    json.replace(at, from.size(), to);
    return ParseActionRecordJson(json).status();
  };
  CHECK(absl::IsInvalidArgument(tamper("\"decisionRevision\":1", "\"decisionRevision\":2")));
  CHECK(absl::IsInvalidArgument(tamper("\"status\":\"verified\"", "\"status\":\"unknown\"")));
  CHECK(absl::IsInvalidArgument(tamper("\"state\":\"completed\"", "\"state\":\"done\"")));
  CHECK(absl::IsInvalidArgument(tamper("\"requestedBy\":\"assistant\"", "\"requestedBy\":\"x\"")));
  CHECK(absl::IsInvalidArgument(tamper("\"id\":\"act_", "\"id\":\"act_0")));
  CHECK(absl::IsInvalidArgument(
      tamper("\"state\":\"completed\"", "\"state\":\"completed\",\"extra\":1")));
  CHECK(absl::IsInvalidArgument(
      tamper("\"state\":\"completed\"", "\"state\":\"completed\",\"state\":\"failed\"")));
  CHECK(absl::IsInvalidArgument(tamper("\"version\":2", "\"version\":3")));
  CHECK(absl::IsInvalidArgument(ParseActionRecordJson("[]").status()));
  CHECK(absl::IsInvalidArgument(ParseActionRecordJson("{").status()));
}

TEST_CASE("plan_action bodies are strict and never trust requestedBy", "[core][actions]") {
  const ActionActor alice = Human("alice");
  absl::StatusOr<ActionRequest> ok =
      ParsePlanActionBody(R"({"requestId":"r1","resourceId":"vm:101","capabilityName":"restart",)"
                          R"("params":{"mode":"force"},"reason":"patch","requestedBy":"mallory"})",
                          alice);
  REQUIRE(ok.ok());
  CHECK(ok->actor == alice);
  CHECK(ok->params_json == R"({"mode":"force"})");
  absl::StatusOr<ActionRequest> no_params = ParsePlanActionBody(
      R"({"requestId":"r1","resourceId":"vm:101","capabilityName":"restart","reason":"x"})", alice);
  REQUIRE(no_params.ok());
  CHECK(no_params->params_json == "{}");
  const std::string base =
      R"("requestId":"r1","resourceId":"vm:101","capabilityName":"restart","reason":"x")";
  for (const std::string& bad : {
           std::string("{") + base + R"(,"unknown":1})",
           std::string("{") + base + R"(,"params":[1]})",
           std::string("{") + base + R"(,"params":"{}"})",
           std::string("{") + base + R"(,"requestedBy":7})",
           std::string("{") + base + R"(,"reason":"y"})",
           std::string(R"({"requestId":"r1","resourceId":"vm:101","capabilityName":"restart"})"),
           std::string(
               R"({"requestId":1,"resourceId":"vm:101","capabilityName":"r","reason":"x"})"),
           std::string(
               R"({"requestId":"","resourceId":"vm:101","capabilityName":"r","reason":"x"})"),
           std::string("{") + base + "} {}",
           std::string("[") + "{" + base + "}]",
           std::string("{\"requestId\":\"r1\",\"resourceId\":\"vm:101\",\"capabilityName\":"
                       "\"r\",\"reason\":\"\xC3\x28\"}"),
           std::string(70000, ' '),
       }) {
    INFO(bad.substr(0, 200));
    CHECK(absl::IsInvalidArgument(ParsePlanActionBody(bad, alice).status()));
  }
}

TEST_CASE("decision and execute bodies are strict", "[core][actions]") {
  absl::StatusOr<DecisionBody> d =
      ParseDecisionBody(R"({"outcome":"approved","reason":"ok","planHash":"sha256:ab"})");
  REQUIRE(d.ok());
  CHECK(d->outcome == DecisionOutcome::kApproved);
  CHECK(d->reason == "ok");
  CHECK(d->plan_hash == std::optional<std::string>("sha256:ab"));
  CHECK(ParseDecisionBody(R"({"outcome":"rejected","planHash":null})")->plan_hash == std::nullopt);
  for (const char* bad : {R"({})", R"({"outcome":"approve"})", R"({"outcome":"APPROVED"})",
                          R"({"outcome":true})", R"({"outcome":"approved","x":1})",
                          R"({"outcome":"approved","reason":{"a":1}})", "", "null"}) {
    INFO(bad);
    CHECK_FALSE(ParseDecisionBody(bad).ok());
  }
  CHECK(ParseExecuteBody("").ok());
  CHECK(ParseExecuteBody(" \n").ok());
  CHECK(ParseExecuteBody("{}").ok());
  CHECK(ParseExecuteBody(R"({"reason":"go","planHash":"sha256:1"})")->plan_hash ==
        std::optional<std::string>("sha256:1"));
  for (const char* bad : {"[]", R"({"force":true})", R"({"reason":1})", "{", R"({"reason":"a")"}) {
    INFO(bad);
    CHECK_FALSE(ParseExecuteBody(bad).ok());
  }
}

TEST_CASE("capabilities round-trip and normalize type aliases", "[core][actions]") {
  const Capability restart = RestartCapability();
  absl::StatusOr<Capability> back = ParseCapabilityJson(CapabilityToJson(restart));
  REQUIRE(back.ok());
  CHECK(*back == restart);
  absl::StatusOr<Capability> aliased =
      ParseCapabilityJson(R"({"name":"scale","minimumApprovalLevel":"admin",)"
                          R"("params":[{"name":"replicas","type":"int","required":true},)"
                          R"({"name":"force","type":"bool"},{"name":"ratio","type":"float64"}]})");
  REQUIRE(aliased.ok());
  CHECK(aliased->params[0].type == ParamType::kInteger);
  CHECK(aliased->params[1].type == ParamType::kBoolean);
  CHECK(aliased->params[2].type == ParamType::kNumber);
  CHECK(aliased->auto_authorization == AutoAuthorization::kNever);
  CHECK(aliased->risk == ActionRisk::kMedium);
  for (const char* bad : {
           R"({"name":"x"})",
           R"({"name":"x","minimumApprovalLevel":"root"})",
           R"({"name":"x","minimumApprovalLevel":"none","params":{}})",
           R"({"name":"x","minimumApprovalLevel":"none","params":[{"name":"a","type":"blob"}]})",
           R"({"name":"x","minimumApprovalLevel":"none","params":[{"name":"a","pattern":"\\d"}]})",
           R"({"name":"X","minimumApprovalLevel":"none"})",
           R"({"name":"x","minimumApprovalLevel":"none","shell":"rm -rf /"})",
       }) {
    INFO(bad);
    CHECK_FALSE(ParseCapabilityJson(bad).ok());
  }
  absl::StatusOr<std::vector<Capability>> catalogue = ParseCapabilityCatalogueJson(
      "[" + CapabilityToJson(restart) + "," + CapabilityToJson(ReloadCapability()) + "]");
  REQUIRE(catalogue.ok());
  CHECK(catalogue->size() == 2);
  CHECK_FALSE(ParseCapabilityCatalogueJson("[" + CapabilityToJson(restart) + "," +
                                           CapabilityToJson(restart) + "]")
                  .ok());
  CHECK_FALSE(ParseCapabilityCatalogueJson("{}").ok());
}

TEST_CASE("lifecycle events round-trip", "[core][actions]") {
  ActionLifecycleEvent e;
  e.action_id = "act_abc";
  e.sequence = 3;
  e.at = absl::FromUnixMillis(1'800'000'000'500);
  e.state = ActionState::kApproved;
  e.kind = LifecycleEventKind::kDecision;
  e.decision_revision = 2;
  e.decision = DecisionOutcome::kApproved;
  e.actor = Human("alice");
  e.message = "Approved by human:alice (2 of 2).";
  absl::StatusOr<ActionLifecycleEvent> back = ParseLifecycleEventJson(LifecycleEventToJson(e));
  REQUIRE(back.ok());
  CHECK(*back == e);
  ActionLifecycleEvent bare;
  bare.action_id = "act_abc";
  bare.sequence = 1;
  bare.at = absl::FromUnixSeconds(1'800'000'000);
  absl::StatusOr<ActionLifecycleEvent> bare_back =
      ParseLifecycleEventJson(LifecycleEventToJson(bare));
  REQUIRE(bare_back.ok());
  CHECK(*bare_back == bare);
  CHECK_FALSE(ParseLifecycleEventJson(R"({"actionId":"act_abc","sequence":1,)"
                                      R"("timestamp":"2027-01-15 08:00:00Z","state":"planned",)"
                                      R"("kind":"transition"})")
                  .ok());
}

TEST_CASE("the plan JSON carries the plan_action output fields", "[core][actions]") {
  Harness h;
  const ActionRecord r = MustPlan(h, Request("restart", "{}", Agent("assistant")));
  absl::StatusOr<rapidjson::Document> doc = ParseJson(ActionPlanToJson(r.plan));
  REQUIRE(doc.ok());
  for (const char* key :
       {"actionId", "requestId", "allowed", "requiresApproval", "approvalPolicy",
        "rollbackAvailable", "plannedAt", "expiresAt", "resourceVersion", "policyVersion",
        "planHash", "predictedBlastRadius", "message", "preflight", "approvalRequirement"}) {
    INFO(key);
    CHECK(GetMember(*doc, key) != nullptr);
  }
  CHECK(GetString(*doc, "expiresAt") == "2027-01-15T08:05:00Z");
}

TEST_CASE("refusals become agent error envelopes with their closed codes", "[core][actions]") {
  Harness h;
  const ActionRefusal r = MustRefuse(h.service.Plan(Request("restart", R"({"x":1})", Human("a"))));
  const AgentError e = r.ToAgentError();
  CHECK(e.code == AgentErrorCode::kInvalidActionRequest);
  CHECK(e.details.at("x") == "is not declared by the capability");
  absl::StatusOr<AgentError> parsed = ParseAgentError(e.ToJson());
  REQUIRE(parsed.ok());
  CHECK(ToString(parsed->code) == "invalid_action_request");
}

}  // namespace
}  // namespace pulse::core
