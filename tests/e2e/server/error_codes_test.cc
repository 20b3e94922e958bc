// (c) Error codes against the real binary: every code a capability declares is provoked at
// least once (the demo fleet, two human tokens, an agent-kind token, seeded findings and
// a database write lock held from outside stand in for the conditions), and every code any
// capability call answered with is one it declares (or a transport code, which can meet any
// call). Codes no request can provoke in this build are listed in kUnreachable with the reason;
// the test fails if one of them is ever seen, so the list cannot go stale. The same ledger for
// the tool-result codes a chat answers with (tool_error.h) closes the file.
#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/adapters/system/system_clock.h"
#include "pulse/core/errors/agent_error.h"
#include "pulse/core/errors/tool_error.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/manifest/capability_manifest.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

// Declared codes no request to this build can provoke, and why. Each stays declared because
// the manifest's code sets are the Pulse wire contract (pinned by the core's agent_error and
// manifest tests) that MCP clients written against Pulse branch on.
const std::map<std::string, std::string>& Unreachable() {
  static const std::map<std::string, std::string> reasons = {
      {"mock_mode_enabled", "this build has no mock mode"},
      {"action_actor_unavailable",
       "the HTTP layer always supplies the authenticated token as the actor; only an embedder "
       "calling ActionService without one can meet it"},
      {"action_execution_unavailable",
       "needs the fleet to be unreadable at plan/approve/execute time; the demo and local "
       "fleets are in-process and always answer"},
      {"action_refresh_not_allowed", "this build serves no refresh route"},
      {"missing_id",
       "an empty action id segment never reaches the handler: the HTTP layer answers it "
       "(route_not_found / invalid_request, checked below)"},
      {"action_plan_expired",
       "needs the 5-minute plan TTL to pass; the core's action tests cover it with a fake "
       "clock"},
      {"action_step_up_unavailable",
       "needs a capability with an MFA approval floor; the demo and local catalogues have none"},
      {"action_replan_required", "no code path of this build emits it"},
      {"action_emergency_stop", "this build has no emergency stop"},
      {"action_dry_run_only",
       "needs a dry-run-only capability; the demo and local catalogues have none (and decide "
       "never emits it)"},
      {"action_executor_unavailable", "this build has no separate executor registry"},
      {"action_execution_availability_failed", "this build has no separate executor registry"},
      {"action_not_executing",
       "a race between the result commit and another writer of the same action inside one "
       "process; not reproducible from outside"},
  };
  return reasons;
}

// Declared codes provoked by another test case of this file (named), kept apart because each
// provocation waits out the server's 5 s SQLite busy timeout, and running them beside the
// rest keeps the suite fast under ctest -j.
const std::map<std::string, std::set<std::string>>& ProvokedElsewhere() {
  static const std::map<std::string, std::set<std::string>> codes = {
      {"acknowledge_finding", {"patrol_unavailable"}},
      {"snooze_finding", {"patrol_unavailable"}},
      {"dismiss_finding", {"patrol_unavailable"}},
      {"resolve_finding", {"patrol_unavailable"}},
  };
  return codes;
}

bool IsTransport(const std::string& code) {
  for (core::AgentErrorCode c : core::TransportErrorCodes()) {
    if (core::ToString(c) == code) {
      return true;
    }
  }
  return false;
}

class Recorder {
 public:
  explicit Recorder(int port) : port_(port) {}

  // Calls `capability` and records the code it answered with (none for 2xx).
  Reply Call(const std::string& capability, const std::string& method, const std::string& path,
             const std::string& token, const std::string& body = "",
             const httplib::Headers& headers = {}) {
    Reply reply = Send(port_, method, path, token, body, headers);
    if (reply.status >= 400) {
      seen_[capability].insert(ErrorCode(reply.body));
    }
    return reply;
  }

  // Calls and expects `code` (an empty code: success).
  Reply Expect(const std::string& code, const std::string& capability, const std::string& method,
               const std::string& path, const std::string& token, const std::string& body = "",
               const httplib::Headers& headers = {}) {
    Reply reply = Call(capability, method, path, token, body, headers);
    INFO(capability << " " << method << " " << path << " " << body << " -> " << reply.status << " "
                    << reply.body);
    if (code.empty()) {
      CHECK(reply.status / 100 == 2);
    } else {
      CHECK(ErrorCode(reply.body) == code);
      const std::optional<core::AgentErrorCode> parsed = core::ParseAgentErrorCode(code);
      REQUIRE(parsed.has_value());
      CHECK(reply.status == core::HttpStatusFor(*parsed));
    }
    return reply;
  }

  const std::map<std::string, std::set<std::string>>& seen() const { return seen_; }
  int port() const { return port_; }

 private:
  int port_;
  std::map<std::string, std::set<std::string>> seen_;
};

std::string Plan(const std::string& request_id, const std::string& resource,
                 const std::string& capability, const std::string& params = "{}") {
  return R"({"requestId":")" + request_id + R"(","resourceId":")" + resource +
         R"(","capabilityName":")" + capability + R"(","params":)" + params +
         R"(,"reason":"e2e","requestedBy":"ignored"})";
}

// Plans and returns the action id; REQUIREs success.
std::string Planned(Recorder& r, const std::string& token, const std::string& body) {
  const Reply reply = r.Expect("", "plan_action", "POST", "/api/actions/plan", token, body);
  REQUIRE(reply.status == 200);
  return Str(Json(reply.body), "actionId");
}

std::string Decision(const std::string& outcome) {
  return R"({"outcome":")" + outcome + R"(","reason":"e2e"})";
}

// Reports the findings the lifecycle routes act on, straight into the data dir's store.
std::vector<std::string> SeedFindings(const std::string& data_dir) {
  auto storage = adapters::storage::OpenSqliteStorage(data_dir);
  REQUIRE(storage.ok());
  adapters::system::SystemClock clock;
  FakeFindingVerifier verifier;
  core::FindingsService findings(*(*storage)->findings, clock, verifier, *(*storage)->metrics);
  std::vector<std::string> ids;
  for (const char* resource : {"vm:105", "vm:106", "vm:107"}) {
    core::FindingReport report;
    report.resource_id = resource;
    report.category = core::Category::kPerformance;
    report.severity = core::Severity::kWarning;
    report.title = std::string("Memory pressure on ") + resource;
    report.description = "Memory use stays above 90 %.";
    report.recommendation = "Restart the VM or give it more memory.";
    report.evidence = "memory_pct 96";
    absl::StatusOr<core::ReportOutcome> out = findings.Report(report);
    REQUIRE(out.ok());
    ids.push_back(out->finding_id);
  }
  // The synthetic Patrol runtime finding, as Patrol records a provider failure.
  core::FindingReport runtime;
  runtime.resource_id = core::kRuntimeFindingResourceId;
  runtime.resource_name = "Pulse Patrol";
  runtime.category = core::Category::kReliability;
  runtime.key = core::kRuntimeFindingKey;
  runtime.title = "Patrol could not reach its model provider";
  runtime.description = "The last Patrol run failed before it could look at the fleet.";
  runtime.recommendation = "Check the provider settings.";
  runtime.evidence = "provider_unavailable";
  absl::StatusOr<core::ReportOutcome> out = findings.Report(runtime);
  REQUIRE(out.ok());
  ids.push_back(out->finding_id);
  return ids;
}

// Context views and operator state. Leaves vm:102 under a remediation lock.
void ProvokeContextCodes(Recorder& r, const std::string& alice) {
  const std::string ops = "/api/resources/vm%3A102/operator-state";
  r.Expect("", "get_fleet_context", "GET", "/api/agent/fleet-context?hasFindings=true", alice);
  r.Expect("", "get_patrol_control_status", "GET", "/api/agent/patrol-control/status", alice);
  r.Expect("", "get_resource_context", "GET", "/api/agent/resource-context/vm%3A101", alice);
  r.Expect("resource_not_found", "get_resource_context", "GET",
           "/api/agent/resource-context/vm%3A99999", alice);
  r.Expect("", "list_resource_capabilities", "GET", "/api/agent/resource-capabilities/vm%3A101",
           alice);
  r.Expect("resource_not_found", "list_resource_capabilities", "GET",
           "/api/agent/resource-capabilities/nothing%3Ahere", alice);
  CHECK(SendFirstChunk(r.port(), "GET", "/api/agent/events", alice).status == 200);

  // ---- operator state ----
  r.Expect("operator_state_not_set", "get_operator_state", "GET", ops, alice);
  r.Expect("operator_state_invalid", "set_operator_state", "PUT", ops, alice,
           R"({"intentionallyOffline":"no","neverAutoRemediate":true})");
  r.Expect(
      "operator_state_invalid", "set_operator_state", "PUT", ops, alice,
      R"({"intentionallyOffline":false,"neverAutoRemediate":true,)"
      R"("maintenanceStartAt":"2030-01-02T00:00:00Z","maintenanceEndAt":"2030-01-01T00:00:00Z"})");
  r.Expect("", "set_operator_state", "PUT", ops, alice,
           R"({"intentionallyOffline":false,"neverAutoRemediate":true})");
  r.Expect("", "get_operator_state", "GET", ops, alice);
}

// The finding lifecycle over the seeded findings: [0] and [2] active, [1] resolved here, [3]
// the Patrol runtime finding.
void ProvokeFindingCodes(Recorder& r, const std::string& alice,
                         const std::vector<std::string>& findings) {
  r.Expect("", "list_findings", "GET", "/api/ai/patrol/findings", alice);
  r.Expect("invalid_finding_request", "list_findings", "GET", "/api/ai/patrol/findings?limit=-1",
           alice);
  r.Expect("invalid_action_list_cursor", "list_actions", "GET", "/api/actions?cursor=a1.AAAA",
           alice);
  r.Expect("invalid_finding_request", "list_findings", "GET",
           "/api/ai/patrol/findings?cursor=f1.AAAA", alice);
  r.Expect("invalid_finding_request", "list_findings", "GET",
           "/api/ai/patrol/findings?cursor=not-a-cursor", alice);
  r.Expect("invalid_finding_request", "acknowledge_finding", "POST", "/api/ai/patrol/acknowledge",
           alice, R"({"finding_id":7})");
  r.Expect("finding_not_found", "acknowledge_finding", "POST", "/api/ai/patrol/acknowledge", alice,
           R"({"finding_id":"no-such-finding"})");
  r.Expect("", "acknowledge_finding", "POST", "/api/ai/patrol/acknowledge", alice,
           R"({"finding_id":")" + findings[0] + "\"}");
  r.Expect("invalid_finding_request", "snooze_finding", "POST", "/api/ai/patrol/snooze", alice,
           R"({"finding_id":")" + findings[0] + R"(","duration_hours":0})");
  r.Expect("finding_not_found", "snooze_finding", "POST", "/api/ai/patrol/snooze", alice,
           R"({"finding_id":"no-such-finding","duration_hours":2})");
  r.Expect("invalid_finding_request", "dismiss_finding", "POST", "/api/ai/patrol/dismiss", alice,
           R"({"finding_id":")" + findings[0] + R"(","reason":"bored"})");
  r.Expect("finding_not_found", "dismiss_finding", "POST", "/api/ai/patrol/dismiss", alice,
           R"({"finding_id":"no-such-finding","reason":"expected_behavior"})");
  r.Expect("invalid_finding_request", "resolve_finding", "POST", "/api/ai/patrol/resolve", alice,
           R"({"resolution_note":"x"})");
  r.Expect("finding_not_found", "resolve_finding", "POST", "/api/ai/patrol/resolve", alice,
           R"({"finding_id":"no-such-finding"})");
  r.Expect("", "resolve_finding", "POST", "/api/ai/patrol/resolve", alice,
           R"({"finding_id":")" + findings[1] + "\"}");
  // A resolved finding can be neither resolved again, nor snoozed, acknowledged or dismissed.
  r.Expect("finding_action_not_allowed", "resolve_finding", "POST", "/api/ai/patrol/resolve", alice,
           R"({"finding_id":")" + findings[1] + "\"}");
  r.Expect("finding_action_not_allowed", "snooze_finding", "POST", "/api/ai/patrol/snooze", alice,
           R"({"finding_id":")" + findings[1] + R"(","duration_hours":2})");
  r.Expect("finding_action_not_allowed", "dismiss_finding", "POST", "/api/ai/patrol/dismiss", alice,
           R"({"finding_id":")" + findings[1] + R"(","reason":"not_an_issue"})");
  r.Call("acknowledge_finding", "POST", "/api/ai/patrol/acknowledge", alice,
         R"({"finding_id":")" + findings[1] + "\"}");
  r.Expect("", "snooze_finding", "POST", "/api/ai/patrol/snooze", alice,
           R"({"finding_id":")" + findings[2] + R"(","duration_hours":2})");
  r.Expect("", "dismiss_finding", "POST", "/api/ai/patrol/dismiss", alice,
           R"({"finding_id":")" + findings[0] + R"(","reason":"expected_behavior"})");
  // The Patrol runtime finding cannot be changed by hand.
  r.Expect("finding_action_not_allowed", "acknowledge_finding", "POST",
           "/api/ai/patrol/acknowledge", alice, R"({"finding_id":")" + findings[3] + "\"}");
}

void ProvokePlanCodes(Recorder& r, const std::string& alice) {
  r.Expect("invalid_action_request", "plan_action", "POST", "/api/actions/plan", alice,
           R"({"requestId":"r-bad","resourceId":"vm:101","capabilityName":"restart"})");
  r.Expect("invalid_action_request", "plan_action", "POST", "/api/actions/plan", alice,
           Plan("r-params", "vm:101", "restart", R"({"mode":"explode"})"));
  r.Expect("resource_not_found", "plan_action", "POST", "/api/actions/plan", alice,
           Plan("r-missing", "vm:99999", "restart"));
  r.Expect("capability_not_found", "plan_action", "POST", "/api/actions/plan", alice,
           Plan("r-cap", "vm:101", "teleport"));
}

// Actions the execute checks go on with: one approved, one pending under a lock.
struct DecidedActions {
  std::string approved;
  std::string locked_pending;
};

// Alice plans; bob approves (requester separation is on: alice may not approve her own
// admin-floor plan); robot is an agent-kind token.
DecidedActions ProvokeDecideCodes(Recorder& r, const std::string& alice, const std::string& bob,
                                  const std::string& robot) {
  const std::string a1 = Planned(r, alice, Plan("r-a1", "vm:101", "restart"));
  r.Expect("invalid_id", "decide_action", "POST", "/api/actions/act.bad/decision", alice,
           Decision("approved"));
  r.Expect("action_not_found", "decide_action", "POST", "/api/actions/act_0000/decision", alice,
           Decision("approved"));
  r.Expect("invalid_action_decision", "decide_action", "POST", "/api/actions/" + a1 + "/decision",
           alice, R"({"outcome":"maybe"})");
  r.Expect("action_plan_identity_mismatch", "decide_action", "POST",
           "/api/actions/" + a1 + "/decision", alice,
           R"({"outcome":"approved","planHash":"sha256:)" + std::string(64, '0') + "\"}");
  r.Expect("action_approval_forbidden", "decide_action", "POST", "/api/actions/" + a1 + "/decision",
           robot, Decision("approved"));
  r.Expect("action_separation_required", "decide_action", "POST",
           "/api/actions/" + a1 + "/decision", alice, Decision("approved"));
  r.Expect("", "decide_action", "POST", "/api/actions/" + a1 + "/decision", bob,
           Decision("approved"));
  r.Expect("action_decision_conflict", "decide_action", "POST", "/api/actions/" + a1 + "/decision",
           bob, Decision("rejected"));
  r.Expect("action_not_pending", "decide_action", "POST", "/api/actions/" + a1 + "/decision", alice,
           Decision("approved"));
  // The operator's remediation lock on vm:102 refuses the approval.
  const std::string locked = Planned(r, alice, Plan("r-lock", "vm:102", "restart"));
  r.Expect("resource_remediation_locked", "decide_action", "POST",
           "/api/actions/" + locked + "/decision", bob, Decision("approved"));
  // Drift: vm:110 is stopped by another action after the restart was planned.
  const std::string drifting = Planned(r, alice, Plan("r-drift", "vm:110", "restart"));
  const std::string stop = Planned(r, alice, Plan("r-stop", "vm:110", "stop"));
  r.Expect("", "decide_action", "POST", "/api/actions/" + stop + "/decision", bob,
           Decision("approved"));
  r.Expect("", "execute_action", "POST", "/api/actions/" + stop + "/execute", alice, "{}");
  r.Expect("action_plan_drift", "decide_action", "POST", "/api/actions/" + drifting + "/decision",
           bob, Decision("approved"));
  // An empty id segment is answered by the HTTP layer, never by the handler.
  const Reply empty_id =
      r.Call("decide_action", "POST", "/api/actions//decision", alice, Decision("approved"));
  CHECK((ErrorCode(empty_id.body) == "route_not_found" ||
         ErrorCode(empty_id.body) == "invalid_request"));
  return {a1, locked};
}

void ProvokeExecuteCodes(Recorder& r, const std::string& alice, const std::string& bob,
                         const std::string& robot, const DecidedActions& decided) {
  const std::string& a1 = decided.approved;
  const std::string& locked = decided.locked_pending;
  r.Expect("invalid_id", "execute_action", "POST", "/api/actions/act%20bad/execute", alice, "{}");
  r.Expect("action_not_found", "execute_action", "POST", "/api/actions/act_0000/execute", alice,
           "{}");
  r.Expect("invalid_action_execution", "execute_action", "POST", "/api/actions/" + a1 + "/execute",
           alice, R"({"reason":5})");
  r.Expect("action_plan_identity_mismatch", "execute_action", "POST",
           "/api/actions/" + a1 + "/execute", alice,
           R"({"planHash":"sha256:)" + std::string(64, '0') + "\"}");
  r.Expect("action_not_approved", "execute_action", "POST", "/api/actions/" + locked + "/execute",
           alice, "{}");
  // Rejected is final.
  const std::string rejected = Planned(r, alice, Plan("r-reject", "vm:104", "restart"));
  r.Expect("", "decide_action", "POST", "/api/actions/" + rejected + "/decision", bob,
           Decision("rejected"));
  r.Expect("action_execution_final", "execute_action", "POST",
           "/api/actions/" + rejected + "/execute", alice, "{}");
  // An approval-free plan a human made cannot be run by an agent.
  const std::string free_plan =
      Planned(r, alice, Plan("r-free", "app-container:grafana", "restart"));
  r.Expect("action_execution_forbidden", "execute_action", "POST",
           "/api/actions/" + free_plan + "/execute", robot, "{}");
  // While the first execute is still running (the demo fleet lands a change after 300 ms), a
  // second one is refused.
  {
    Reply first;
    std::thread runner([&] {
      first = Send(r.port(), "POST", "/api/actions/" + free_plan + "/execute", alice, "{}");
    });
    // The second execute goes once the first is under way (the action reads "executing"), so
    // on a loaded machine the second cannot overtake the first and run the action itself.
    bool executing = false;
    for (int i = 0; i < 1000 && !executing; ++i) {
      executing = Send(r.port(), "GET", "/api/actions/" + free_plan, alice)
                      .body.find("\"state\":\"executing\"") != std::string::npos;
      if (!executing) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    const Reply second =
        r.Call("execute_action", "POST", "/api/actions/" + free_plan + "/execute", bob, "{}");
    runner.join();
    CHECK(executing);
    CHECK(first.status == 200);
    CHECK(ErrorCode(second.body) == "action_already_executing");
  }
  // Approved, then the resource drifts before the execute.
  const std::string late = Planned(r, alice, Plan("r-late", "vm:106", "restart"));
  r.Expect("", "decide_action", "POST", "/api/actions/" + late + "/decision", bob,
           Decision("approved"));
  const std::string stop2 = Planned(r, alice, Plan("r-stop2", "vm:106", "stop"));
  r.Expect("", "decide_action", "POST", "/api/actions/" + stop2 + "/decision", bob,
           Decision("approved"));
  r.Expect("", "execute_action", "POST", "/api/actions/" + stop2 + "/execute", alice, "{}");
  r.Expect("action_plan_drift", "execute_action", "POST", "/api/actions/" + late + "/execute",
           alice, "{}");
  // Approved, then locked by the operator before the execute.
  const std::string then_locked = Planned(r, alice, Plan("r-then-lock", "vm:107", "restart"));
  r.Expect("", "decide_action", "POST", "/api/actions/" + then_locked + "/decision", bob,
           Decision("approved"));
  r.Expect("", "set_operator_state", "PUT", "/api/resources/vm%3A107/operator-state", alice,
           R"({"intentionallyOffline":false,"neverAutoRemediate":true})");
  r.Expect("resource_remediation_locked", "execute_action", "POST",
           "/api/actions/" + then_locked + "/execute", alice, "{}");
}

// Patrol runs, records and autonomy. Runs execute on the server's Patrol thread, so a start
// right after another start finds the scope busy.
void ProvokePatrolCodes(Recorder& r, const std::string& alice, const std::string& robot) {
  r.Expect("invalid_patrol_scope", "run_patrol", "POST", "/api/ai/patrol/run", alice,
           R"({"alert_type":"x"})");
  r.Expect("patrol_scope_unresolved", "run_patrol", "POST", "/api/ai/patrol/run", alice,
           R"({"resource_ids":["vm:99999"]})");
  bool busy = false;
  for (int i = 0; i < 50 && !busy; ++i) {
    const Reply reply = r.Call("run_patrol", "POST", "/api/ai/patrol/run", alice);
    busy = ErrorCode(reply.body) == "patrol_already_running";
  }
  CHECK(busy);
  r.Expect("", "list_patrol_runs", "GET", "/api/ai/patrol/runs", alice);
  r.Expect("", "get_patrol_status", "GET", "/api/ai/patrol/status", alice);
  r.Expect("patrol_run_not_found", "get_patrol_run", "GET", "/api/ai/patrol/runs/patrol-none",
           alice);
  const Reply runs = Send(r.port(), "GET", "/api/ai/patrol/runs", alice);
  REQUIRE(runs.status == 200);
  rapidjson::Document list = Json(runs.body);
  REQUIRE(list.Size() >= 1);
  r.Expect("", "get_patrol_run", "GET", "/api/ai/patrol/runs/" + Str(list[0], "id"), alice);
  r.Expect("", "get_patrol_autonomy", "GET", "/api/ai/patrol/autonomy", alice);
  r.Expect("invalid_autonomy_level", "set_patrol_autonomy", "PUT", "/api/ai/patrol/autonomy", alice,
           R"({"autonomy_level":"reckless"})");
  r.Expect("", "set_patrol_autonomy", "PUT", "/api/ai/patrol/autonomy", alice,
           R"({"autonomy_level":"monitor"})");
  const std::string acks = "/api/ai/patrol/autonomy/acknowledgements";
  r.Expect("invalid_autopilot_acknowledgement", "acknowledge_patrol_autopilot", "POST", acks, alice,
           R"({"acknowledgement_id":""})");
  r.Expect("autopilot_acknowledgement_forbidden", "acknowledge_patrol_autopilot", "POST", acks,
           robot, R"({"acknowledgement_id":"ack-e2e"})");
  r.Expect("", "acknowledge_patrol_autopilot", "POST", acks, alice,
           R"({"acknowledgement_id":"ack-e2e"})");
  r.Expect("invalid_autopilot_acknowledgement", "revoke_patrol_autopilot", "DELETE",
           acks + "/ack-e2e", alice, R"({"reason":7})");
  r.Expect("autopilot_acknowledgement_forbidden", "revoke_patrol_autopilot", "DELETE",
           acks + "/ack-e2e", robot, "");
  r.Expect("", "revoke_patrol_autopilot", "DELETE", acks + "/ack-e2e", alice);
  r.Expect("autopilot_acknowledgement_not_found", "revoke_patrol_autopilot", "DELETE",
           acks + "/ack-e2e", alice);
}

// API token management: humans only, never wider than the caller, ids only for revoke.
void ProvokeTokenCodes(Recorder& r, const std::string& alice, const std::string& robot,
                       const std::string& narrow) {
  const std::string tokens = "/api/security/tokens";
  r.Expect("", "list_api_tokens", "GET", tokens, alice);
  r.Expect("token_management_forbidden", "list_api_tokens", "GET", tokens, robot);
  r.Expect("invalid_token_request", "create_api_token", "POST", tokens, alice,
           R"({"name":"x","scopes":["ai:chat"],"kind":"root"})");
  r.Expect("invalid_token_request", "create_api_token", "POST", tokens, alice,
           R"({"name":"x","scopes":["ai:chat"],"expiresIn":"30x"})");
  r.Expect("invalid_token_request", "create_api_token", "POST", tokens, alice,
           R"({"name":"x","scopes":["relay:mobile:access"]})");
  r.Expect("token_management_forbidden", "create_api_token", "POST", tokens, robot,
           R"({"name":"x","scopes":["ai:chat"]})");
  r.Expect("token_management_forbidden", "create_api_token", "POST", tokens, narrow,
           R"({"name":"x","scopes":["*"]})");
  const Reply created = r.Expect("", "create_api_token", "POST", tokens, alice,
                                 R"({"name":"console","scopes":["ai:chat"],"expiresIn":"1d"})");
  REQUIRE(created.status == 201);
  const std::string id = Str(Json(created.body)["record"], "id");
  r.Expect("token_not_found", "revoke_api_token", "DELETE", tokens + "/tok_0000000000000000",
           alice);
  r.Expect("token_management_forbidden", "revoke_api_token", "DELETE", tokens + "/" + id, robot);
  r.Expect("", "revoke_api_token", "DELETE", tokens + "/" + id, alice);
}

// Every answered code is declared (or transport), every declared code was provoked (here, in
// the locked-store test case, or is listed unreachable), and the list names real codes.
void CheckLedger(const Recorder& r) {
  for (const core::AgentCapability& capability : core::AgentCapabilities()) {
    INFO(capability.name);
    std::set<std::string> declared;
    for (core::AgentErrorCode code : capability.error_codes) {
      declared.insert(std::string(core::ToString(code)));
    }
    auto seen_it = r.seen().find(capability.name);
    const std::set<std::string> seen =
        seen_it == r.seen().end() ? std::set<std::string>() : seen_it->second;
    for (const std::string& code : seen) {
      INFO("answered " << code);
      CHECK((declared.count(code) == 1 || IsTransport(code)));
      CHECK(Unreachable().count(code) == 0);  // reached after all: drop it from the list
    }
    auto elsewhere_it = ProvokedElsewhere().find(capability.name);
    const std::set<std::string> elsewhere =
        elsewhere_it == ProvokedElsewhere().end() ? std::set<std::string>() : elsewhere_it->second;
    for (const std::string& code : declared) {
      INFO("declared " << code);
      CHECK(
          (seen.count(code) == 1 || Unreachable().count(code) == 1 || elsewhere.count(code) == 1));
    }
  }
  // Every allowlisted code is still declared somewhere (the list names real codes).
  for (const auto& [code, reason] : Unreachable()) {
    INFO(code << ": " << reason);
    bool declared = false;
    for (const core::AgentCapability& capability : core::AgentCapabilities()) {
      for (core::AgentErrorCode c : capability.error_codes) {
        declared = declared || core::ToString(c) == code;
      }
    }
    CHECK(declared);
  }
}

TEST_CASE("every declared error code is reachable and every answered code is declared",
          "[e2e][server][codes]") {
  TempDir dir;
  const std::vector<std::string> findings = SeedFindings(dir.path());
  const std::string alice = MintToken(dir.path(), "*", "alice");
  const std::string bob = MintToken(dir.path(), "*", "bob");
  const std::string robot = MintToken(dir.path(), "*", "robot", "agent");
  const std::string narrow = MintToken(dir.path(), "settings:write", "narrow");
  ServerProcess server(dir.path());
  Recorder r(server.port());
  ProvokeContextCodes(r, alice);
  ProvokeFindingCodes(r, alice, findings);
  ProvokePlanCodes(r, alice);
  ProvokeExecuteCodes(r, alice, bob, robot, ProvokeDecideCodes(r, alice, bob, robot));
  r.Expect("", "clear_operator_state", "DELETE", "/api/resources/vm%3A102/operator-state", alice);
  r.Expect("operator_state_not_set", "get_operator_state", "GET",
           "/api/resources/vm%3A102/operator-state", alice);
  ProvokePatrolCodes(r, alice, robot);
  ProvokeTokenCodes(r, alice, robot, narrow);
  CheckLedger(r);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("the findings list pages through X-Next-Cursor without repeats or gaps",
          "[e2e][server][findings]") {
  TempDir dir;
  const std::vector<std::string> findings = SeedFindings(dir.path());
  const std::string token = MintToken(dir.path(), "ai:execute", "operator");
  ServerProcess server(dir.path());
  const Reply whole = Send(server.port(), "GET", "/api/ai/patrol/findings", token);
  REQUIRE(whole.status == 200);
  CHECK(whole.Header("X-Next-Cursor").empty());
  std::string paged = "[";
  std::string path = "/api/ai/patrol/findings?limit=1";
  for (int guard = 0; guard < 20; ++guard) {
    const Reply page = Send(server.port(), "GET", path, token);
    REQUIRE(page.status == 200);
    REQUIRE(page.body.size() > 2);
    paged += (paged.size() > 1 ? "," : "") + page.body.substr(1, page.body.size() - 2);
    const std::string next = page.Header("X-Next-Cursor");
    if (next.empty()) {
      break;
    }
    path = "/api/ai/patrol/findings?limit=1&cursor=" + next;  // web-safe base64: no escaping
  }
  paged += "]";
  CHECK(paged == whole.body);
  const Reply bad = Send(server.port(), "GET", "/api/ai/patrol/findings?cursor=f1.AAAA", token);
  CHECK(bad.status == 400);
  CHECK(ErrorCode(bad.body) == "invalid_finding_request");
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("the findings list answers what a fresh server answers after every lifecycle write",
          "[e2e][server][findings]") {
  // The list is cached between writes (FindingPageCache): served twice, then after each
  // snooze, dismiss, acknowledge and resolve, its bytes are those a server that never served
  // it answers from the same data dir, and a hidden finding is gone at once.
  TempDir dir;
  const std::vector<std::string> findings = SeedFindings(dir.path());
  const std::string token = MintToken(dir.path(), "ai:execute", "operator");
  std::string last;
  {
    ServerProcess server(dir.path());
    const auto list = [&] {
      const Reply reply = Send(server.port(), "GET", "/api/ai/patrol/findings", token);
      REQUIRE(reply.status == 200);
      return reply.body;
    };
    const std::string first = list();
    CHECK(list() == first);
    const std::vector<std::pair<std::string, std::string>> writes = {
        {"snooze", R"({"finding_id":")" + findings[0] + R"(","duration_hours":3})"},
        {"dismiss", R"({"finding_id":")" + findings[1] + R"(","reason":"will_fix_later"})"},
        {"acknowledge", R"({"finding_id":")" + findings[2] + "\"}"},
        {"resolve", R"({"finding_id":")" + findings[2] + "\"}"}};
    std::string before = first;
    for (const auto& [route, body] : writes) {
      INFO(route);
      REQUIRE(Send(server.port(), "POST", "/api/ai/patrol/" + route, token, body).status == 200);
      const std::string after = list();
      CHECK(after != before);
      CHECK(list() == after);
      before = after;
    }
    CHECK(before.find(findings[0]) == std::string::npos);
    CHECK(before.find(findings[1]) == std::string::npos);
    CHECK(before.find(findings[2]) == std::string::npos);
    last = before;
    CHECK(server.Stop() == "exited 0");
  }
  ServerProcess fresh(dir.path());
  const Reply reply = Send(fresh.port(), "GET", "/api/ai/patrol/findings", token);
  REQUIRE(reply.status == 200);
  CHECK(reply.body == last);
  CHECK(fresh.Stop() == "exited 0");
}

TEST_CASE("a finding store locked by another writer fails every lifecycle operation closed",
          "[e2e][server][codes]") {
  TempDir dir;
  const std::vector<std::string> findings = SeedFindings(dir.path());
  const std::string token = MintToken(dir.path(), "ai:execute", "operator");
  ServerProcess server(dir.path());
  const std::string id = findings[0];
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"acknowledge", R"({"finding_id":")" + id + "\"}"},
      {"snooze", R"({"finding_id":")" + id + R"(","duration_hours":3})"},
      {"dismiss", R"({"finding_id":")" + id + R"(","reason":"will_fix_later"})"},
      {"resolve", R"({"finding_id":")" + id + "\"}"}};
  // A first use records the token's last use now, so authentication needs no write below.
  REQUIRE(Send(server.port(), "GET", "/api/ai/patrol/findings", token).status == 200);
  {
    // Longer than the server's busy timeout: each operation waits it out, then fails with
    // patrol_unavailable, and nothing is written.
    SQLite::Database db(dir.File("pulse.db"), SQLite::OPEN_READWRITE);
    db.exec("BEGIN IMMEDIATE");
    for (const auto& [route, body] : calls) {
      const Reply reply = Send(server.port(), "POST", "/api/ai/patrol/" + route, token, body);
      INFO(route << " -> " << reply.body);
      CHECK(reply.status == 503);
      CHECK(ErrorCode(reply.body) == "patrol_unavailable");
    }
    db.exec("ROLLBACK");
  }
  // The lock gone, the same operation succeeds: the failure changed nothing.
  const Reply after = Send(server.port(), "POST", "/api/ai/patrol/acknowledge", token,
                           R"({"finding_id":")" + id + "\"}");
  CHECK(after.status == 200);
  CHECK(server.Stop() == "exited 0");
}

// Tool-result codes (tool_error.h) the chat below does not provoke, each with the test that
// does, or why nothing can; seeing one of them over the wire fails the ledger (move it out).
const std::map<std::string, std::string>& ToolCodesElsewhere() {
  static const std::map<std::string, std::string> reasons = {
      {"LOOP_DETECTED", "tests/core/loop/loop_phases_test.cc"},
      {"BUDGET_EXHAUSTED", "tests/core/loop/loop_budget_test.cc"},
      {"NON_INTERACTIVE", "tests/core/policy/decision_test.cc (Patrol profiles only)"},
      {"EXECUTION_FAILED", "tests/core/loop/handlers/read_handler_test.cc (a failing fleet)"},
      {"NO_AGENT", "tests/core/loop/handlers/read_handler_test.cc (a fleet without commands)"},
      {"APPROVAL_REQUIRED",
       "declared, but no path of this build emits it: an approval is the structured "
       "awaiting_approval result with approval_needed, never an error"},
  };
  return reasons;
}

TEST_CASE("every tool error code a chat answers with is declared, exec without a context too",
          "[e2e][server][codes]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  auto enqueue = [&](const std::vector<std::string>& payloads) {
    ScriptedResponse response;
    response.path = "/v1/chat/completions";
    response.chunks = SseChunks(payloads);
    fake.Enqueue(std::move(response));
  };
  auto turn = [&](const std::string& id, const std::string& tool, const std::string& args) {
    enqueue(ToolTurn(id, tool, args));
  };
  // A write before anything is resolved; then reads the engine refuses, each for its reason,
  // with a good read after every two refusals (three failed turns in a row take the tools away).
  constexpr char kGoodRead[] = R"({"action":"status","resource_id":"vm:101"})";
  turn("c1", "pulse_control",
       R"({"type":"resource","resource_id":"vm:101","capability":"restart",)"
       R"("params":{"mode":"reboot"},"reason":"e2e"})");
  turn("c2", "pulse_read",
       R"({"action":"exec","resource_id":"backup-job:nightly",)"
       R"("command":"uptime"})");
  turn("ok1", "pulse_read", kGoodRead);
  turn("c3", "pulse_read", R"({"action":"status","resource_id":"vm:99999"})");
  turn("c4", "pulse_read", R"({"action":"exec","resource_id":"vm:101","command":"rm -rf /"})");
  turn("ok2", "pulse_read", kGoodRead);
  turn("c5", "pulse_read", R"({"action":"status","resource_id":"web-01"})");
  turn("c6", "not_a_tool", "{}");
  enqueue(TextTurn("Nothing could be read."));
  const std::string token = MintToken(dir.path(), "ai:chat,ai:execute", "operator");
  ServerProcess server(
      dir.path(),
      {.args = {"--provider", "openai-compatible", "--provider-base-url", fake.base_url() + "/v1",
                "--model", "test-model", "--control-level", "controlled"}});
  const ChatStream chat = PostStream(server.port(), "/api/ai/chat", token,
                                     R"({"message":"look around","control_level":"controlled"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  std::map<std::string, std::string> code_of;  // tool call id -> the code its result carried
  std::set<std::string> seen;
  for (const ChatEvent& e : chat.events) {
    if (e.type != "tool_end") {
      continue;
    }
    const rapidjson::Document end = Json(e.data_json);
    if (end["success"].GetBool()) {
      continue;
    }
    const std::string code = core::ExtractToolErrorCode(Str(end, "output")).value_or("none");
    INFO(e.data_json);
    CHECK(core::ParseToolErrorCode(code).has_value());  // every refusal has a declared code
    CHECK(ToolCodesElsewhere().count(code) == 0);
    code_of[Str(end, "id")] = code;
    seen.insert(code);
  }
  CHECK(code_of["c1"] == "FSM_BLOCKED");
  // The backup job exists but has nowhere to run a command: nothing ran.
  CHECK(code_of["c2"] == "EXECUTION_CONTEXT_UNAVAILABLE");
  CHECK(code_of["c3"] == "NOT_FOUND");
  CHECK(code_of["c4"] == "POLICY_BLOCKED");
  CHECK(code_of["c5"] == "INVALID_INPUT");
  CHECK(code_of["c6"] == "TOOL_NOT_ADVERTISED");
  CHECK(code_of.count("ok1") == 0);
  // Every declared code was answered here or is covered by the named test.
  for (core::ToolErrorCode code : core::AllToolErrorCodes()) {
    const std::string name(core::ToString(code));
    INFO("declared " << name);
    CHECK((seen.count(name) == 1 || ToolCodesElsewhere().count(name) == 1));
  }
  for (const auto& [name, where] : ToolCodesElsewhere()) {
    CHECK(core::ParseToolErrorCode(name).has_value());  // the list names real codes
  }
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
