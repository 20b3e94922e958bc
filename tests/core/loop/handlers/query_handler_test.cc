// pulse_query over the Fleet port and the action lifecycle: search, list, get, topology and
// action results; the semantic checks beyond the schema; bounded lists.
#include <catch2/catch.hpp>
#include <string>

#include "handlers_test_support.h"

namespace pulse::testing::handlers {
namespace {

using core::GetBool;
using core::GetInt64;
using core::kToolPulseQuery;
using core::ToJsonString;

TEST_CASE("pulse_query search finds resources by name fragment and describes each briefly",
          "[core][handlers][query]") {
  Fixture f;
  rapidjson::Document r = f.Ok(kToolPulseQuery, R"({"action":"search","query":" web "})");
  CHECK(Str(r, "action") == "search");
  CHECK(Str(r, "query") == "web");
  CHECK(GetInt64(r, "count") == 1);
  CHECK(GetBool(r, "truncated") == false);
  const rapidjson::Value& resources = Member(r, "resources");
  REQUIRE(resources.Size() == 1);
  CHECK(ToJsonString(resources[0]) ==
        R"({"id":"vm:101","type":"vm","name":"web-01","status":"running",)"
        R"("technology":"proxmox","parent_id":"node:pve1"})");
  CHECK(core::GetMember(r, "resources_omitted") == nullptr);
}

TEST_CASE("pulse_query list filters by type and says when more resources exist than the limit",
          "[core][handlers][query]") {
  Fixture f;
  rapidjson::Document all = f.Ok(kToolPulseQuery, R"({"action":"list","resource_type":"vm"})");
  CHECK(GetInt64(all, "count") == 2);
  CHECK(Str(all, "resource_type") == "vm");
  CHECK(Str(Member(all, "resources")[0], "id") == "vm:101");
  CHECK(Str(Member(all, "resources")[1], "id") == "vm:102");

  rapidjson::Document one = f.Ok(kToolPulseQuery, R"({"action":"list","limit":1})");
  CHECK(GetInt64(one, "count") == 1);
  CHECK(GetBool(one, "truncated") == true);
  CHECK(GetInt64(one, "resources_omitted") == 1);
}

TEST_CASE("pulse_query get returns the resource with redacted attributes and its capabilities",
          "[core][handlers][query]") {
  Fixture f;
  rapidjson::Document node = f.Ok(kToolPulseQuery, R"({"action":"get","resource_id":"node:pve1"})");
  const rapidjson::Value& resource = Member(node, "resource");
  CHECK(Str(resource, "id") == "node:pve1");
  CHECK(ToJsonString(Member(resource, "attributes")) ==
        R"({"api_token":"[REDACTED]","ip":"10.0.0.11","os":"Proxmox VE 8.3"})");
  CHECK(Member(node, "capabilities").Size() == 0);

  rapidjson::Document vm = f.Ok(kToolPulseQuery, R"({"action":"get","resource_id":"vm:101"})");
  CHECK(Str(Member(vm, "resource"), "revision") == "r1");
  const rapidjson::Value& caps = Member(vm, "capabilities");
  REQUIRE(caps.Size() == 5);
  CHECK(ToJsonString(caps[0]) ==
        R"({"name":"restart","description":"Restart the guest","risk":"medium",)"
        R"("requires_approval":true,"approval_floor":"admin","auto_authorization":"never",)"
        R"("supports_rollback":false,"params":[{"name":"mode","type":"string",)"
        R"("required":false,"enum":["graceful","force"],"description":"how"},)"
        R"({"name":"timeout","type":"integer","required":false,"description":"seconds"}]})");
  CHECK(GetBool(vm, "truncated") == false);
}

TEST_CASE("pulse_query topology shows the root's neighbourhood and its edges",
          "[core][handlers][query]") {
  Fixture f;
  rapidjson::Document r =
      f.Ok(kToolPulseQuery, R"({"action":"topology","resource_id":"node:pve1"})");
  CHECK(Str(r, "root_id") == "node:pve1");
  CHECK(Member(r, "resources").Size() == 5);
  const rapidjson::Value& edges = Member(r, "relationships");
  REQUIRE(edges.Size() == 4);
  CHECK(ToJsonString(edges[0]) == R"({"from":"vm:101","to":"node:pve1","kind":"runs_on"})");
  CHECK(GetBool(r, "truncated") == false);

  rapidjson::Document capped = f.Ok(kToolPulseQuery, R"({"action":"topology","limit":2})");
  CHECK(Member(capped, "resources").Size() == 2);
  CHECK(GetBool(capped, "truncated") == true);
}

TEST_CASE("pulse_query action reads a recorded action with its decisions and events",
          "[core][handlers][query]") {
  Fixture f;
  rapidjson::Document planned =
      f.Ok(core::kToolPulseControl,
           R"({"type":"resource","resource_id":"vm:101","capability":"restart",)"
           R"("params":{"mode":"graceful"},"reason":"web-01 is hung"})");
  const std::string action_id = Str(Member(planned, "approval_needed"), "action_id");
  REQUIRE_FALSE(action_id.empty());

  rapidjson::Document r =
      f.Ok(kToolPulseQuery, std::string(R"({"action":"action","action_id":")") + action_id + "\"}");
  CHECK(Str(r, "action_id") == action_id);
  const rapidjson::Value& record = Member(r, "record");
  CHECK(Str(record, "state") == "pending_approval");
  CHECK(Str(record, "capability") == "restart");
  CHECK(Member(r, "decisions").Size() == 0);
  CHECK(core::GetMember(r, "result") == nullptr);
  const rapidjson::Value& events = Member(r, "events");
  REQUIRE(events.Size() >= 1);
  CHECK(Str(events[0], "state") == "planned");
  CHECK(Str(events[events.Size() - 1], "state") == "pending_approval");
}

TEST_CASE("pulse_query answers NOT_FOUND for unknown resources and actions",
          "[core][handlers][query]") {
  Fixture f;
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"get","resource_id":"vm:999"})") == "NOT_FOUND");
  CHECK(Contains(f.last_error, "vm:999"));
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"topology","resource_id":"vm:999"})") ==
        "NOT_FOUND");
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"action","action_id":"act_nope"})") == "NOT_FOUND");
}

TEST_CASE("pulse_query refuses arguments that pass the schema but make no sense",
          "[core][handlers][query]") {
  Fixture f;
  // A blank search, and arguments that the chosen action would silently ignore.
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"search","query":"   "})") == "INVALID_INPUT");
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"search","query":"web","resource_id":"vm:101"})") ==
        "INVALID_INPUT");
  CHECK(Contains(f.last_error, R"("argument":"resource_id")"));
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"get","query":"web"})") == "INVALID_INPUT");
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"list","action_id":"act_1"})") == "INVALID_INPUT");
  // Ids that are not canonical: padded, upper case, a display name, a path.
  for (const char* id : {" vm:101", "VM:101", "web-01", "../../etc/passwd", "vm:101;ls"}) {
    INFO(id);
    CHECK(f.Refused(kToolPulseQuery, std::string(R"({"action":"get","resource_id":")") + id +
                                         "\"}") == "INVALID_INPUT");
  }
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"action","action_id":"bad id!"})") ==
        "INVALID_INPUT");
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"action","action_id":"  "})") == "INVALID_INPUT");
}

TEST_CASE("pulse_query keeps a long listing within the result bound", "[core][handlers][query]") {
  Fixture f;
  for (int i = 0; i < 300; ++i) {
    f.fleet.PutResource(Resource("vm:" + std::to_string(1000 + i), "vm",
                                 "guest-with-a-rather-long-descriptive-name-" + std::to_string(i),
                                 "running", "node:pve1"));
  }
  core::ToolCallOutcome outcome = f.Call(kToolPulseQuery, R"({"action":"list","limit":200})");
  REQUIRE(outcome.result.Ok());
  CHECK(outcome.result.content.size() < core::kMaxToolListBytes + 512);
  rapidjson::Document r = ParseText(outcome.result.content);
  CHECK(GetBool(r, "truncated") == true);
  CHECK(GetInt64(r, "count").value_or(0) < 200);
  CHECK(GetInt64(r, "count").value_or(0) + GetInt64(r, "resources_omitted").value_or(0) == 201);
}

TEST_CASE("pulse_query maps fleet failures to stable codes", "[core][handlers][query]") {
  Fixture f;
  f.fleet.SetError(FakeFleet::Method::kListResources, absl::UnavailableError("agent offline"));
  CHECK(f.Refused(kToolPulseQuery, R"({"action":"list"})") == "EXECUTION_FAILED");
  CHECK(Contains(f.last_error, R"("retryable":true)"));
  CHECK(Contains(f.last_error, R"("status":"unavailable")"));
}

}  // namespace
}  // namespace pulse::testing::handlers
