// Echoes (issue 20 item 7): a secret planted in tool arguments reaches none of the loop's
// outward copies — stream events, the persisted session, the suspended call, audit entries, the
// stored action's reason and the params echoed in results — while the plan keeps the values the
// executor needs.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "loop_test_support.h"
#include "pulse/core/actions/action_json.h"
#include "pulse/core/actions/action_redaction.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/loop/session_record_json.h"

namespace pulse::testing::loop {
namespace {

using core::LoopEventType;
using core::RunEnd;

constexpr char kExecSecret[] = "Zq7plantedExecPw";
constexpr char kReasonSecret[] = "Zq7plantedReasonPw";
constexpr char kParamSecret[] = "Zq7plantedParamPw";
constexpr char kArgSecret[] = "Zq7plantedArgToken";

std::string AllEvents(const RecordingEventSink& sink) {
  std::string all;
  for (const core::LoopEvent& e : sink.events()) {
    all += e.data_json;
    all += "\n";
  }
  return all;
}

TEST_CASE("a planted secret in arguments reaches no event, stored session or audit entry",
          "[core][loop][echoes]") {
  Harness h;
  h.BindDefaults();
  const std::string exec_args = std::string(R"({"action":"exec","resource_id":"vm:101",)") +
                                R"("command":"mysql -p)" + kExecSecret + R"( -e status"})";
  const std::string param_args =
      std::string(R"({"type":"resource","resource_id":"vm:101","capability":"restart",)") +
      R"("params":{"password":")" + kParamSecret + R"("},"reason":"hung"})";
  const std::string control_args =
      std::string(R"({"type":"resource","resource_id":"vm:101","capability":"restart",)") +
      R"("params":{"mode":"graceful"},"reason":"web-01 is hung; password=)" + kReasonSecret +
      R"("})";
  h.provider.Add(ScriptedTurn::Calls(
      {Call("q1", "pulse_query", R"({"action":"get","resource_id":"vm:101"})")}));
  h.provider.Add(ScriptedTurn::Calls({Call("x1", "pulse_read", exec_args)}));
  // An undeclared argument: refused before any handler, so remembered as a denied call.
  h.provider.Add(ScriptedTurn::Calls(
      {Call("d1", "pulse_read",
            std::string(R"({"action":"status","resource_id":"vm:101","token":")") + kArgSecret +
                R"("})")}));
  h.provider.Add(ScriptedTurn::Calls({Call("p1", "pulse_control", param_args)}));
  h.provider.Add(ScriptedTurn::Calls({Call("c1", "pulse_control", control_args)}));
  absl::StatusOr<core::RunOutcome> out = h.Run("restart web-01");
  REQUIRE(out.ok());
  REQUIRE(out->end == RunEnd::kAwaitingApproval);

  // The calls went out with the secrets: the handlers received them.
  bool handler_saw_exec = false;
  for (const auto& [tool, args] : h.log.Calls()) {
    handler_saw_exec = handler_saw_exec || args.find(kExecSecret) != std::string::npos;
  }
  CHECK(handler_saw_exec);

  const core::SessionRecord session = h.Session();
  REQUIRE(session.suspended.has_value());
  const std::string stored = core::SessionRecordToJson(session);
  std::string audit;
  for (const core::AuditEntry& e : h.audit.entries()) {
    audit += e.message + " " + e.code + "\n";
    for (const auto& [k, v] : e.details) {
      audit += k + "=" + v + "\n";
    }
  }
  absl::StatusOr<core::ActionRecord> action = h.action_store.Get(session.suspended->action_id);
  REQUIRE(action.ok());
  const std::string served = core::ActionRecordToJson(core::RedactedActionRecord(*action));
  const std::string events = AllEvents(h.events);
  CHECK(events.find("[REDACTED]") != std::string::npos);
  for (const char* secret : {kExecSecret, kReasonSecret, kParamSecret, kArgSecret}) {
    INFO(secret);
    CHECK(events.find(secret) == std::string::npos);
    CHECK(stored.find(secret) == std::string::npos);
    CHECK(audit.find(secret) == std::string::npos);
    CHECK(served.find(secret) == std::string::npos);
  }
  // The stored action never held the reason's secret (redacted before planning), and what an
  // operator needs survives.
  CHECK(action->request.reason.find("web-01 is hung") != std::string::npos);
  CHECK(stored.find("mysql -p[REDACTED]") != std::string::npos);
  // Denied calls are remembered by digest only.
  REQUIRE_FALSE(session.suspended->denied_fingerprints.empty());
  for (const std::string& fingerprint : session.suspended->denied_fingerprints) {
    CHECK(fingerprint.rfind("sha256:", 0) == 0);
  }
}

TEST_CASE("params are masked by secret-like name at any depth and strings are redacted",
          "[core][actions][echoes]") {
  CHECK(core::RedactParamsJson(R"({"mode":"graceful","password":"p1"})") ==
        R"({"mode":"graceful","password":"[REDACTED]"})");
  CHECK(core::RedactParamsJson(R"({"db":{"api_key":7,"opts":["Bearer abcdefghijklmnop"]}})") ==
        R"({"db":{"api_key":"[REDACTED]","opts":["Bearer [REDACTED]"]}})");
  CHECK(core::RedactParamsJson("not json password=p2").find("p2") == std::string::npos);
  CHECK(core::RedactParamsJson("{}") == "{}");
  core::ActionRecord record;
  record.request.reason = "rotate; token=abc123";
  record.plan.params_json = R"({"secret":"s"})";
  record.plan.action_id = "act_1";
  const core::ActionRecord shown = core::RedactedActionRecord(record);
  CHECK(shown.request.reason == "rotate; token=[REDACTED]");
  CHECK(shown.plan.params_json == R"({"secret":"[REDACTED]"})");
  CHECK(shown.id() == "act_1");
  // The original keeps its values: the executor needs them.
  CHECK(record.plan.params_json == R"({"secret":"s"})");
}

}  // namespace
}  // namespace pulse::testing::loop
