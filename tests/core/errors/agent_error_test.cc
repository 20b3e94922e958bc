#include "pulse/core/errors/agent_error.h"

#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <string>

namespace pulse::core {
namespace {

TEST_CASE("agent error codes are unique snake_case strings that round trip", "[core][errors]") {
  std::set<std::string> seen;
  const std::regex snake("^[a-z][a-z0-9]*(_[a-z0-9]+)*$");
  for (AgentErrorCode code : AllAgentErrorCodes()) {
    std::string name(ToString(code));
    INFO(name);
    CHECK(std::regex_match(name, snake));
    CHECK(seen.insert(name).second);
    CHECK(ParseAgentErrorCode(name) == code);
    int status = HttpStatusFor(code);
    CHECK(status >= 400);
    CHECK(status <= 599);
  }
  CHECK_FALSE(ParseAgentErrorCode("Resource_Not_Found").has_value());
  CHECK_FALSE(ParseAgentErrorCode("raw_command_retired").has_value());
  // The reference's internal-only queue and encode codes have no path here: list_actions is
  // the queue (action_list_failed) and the JSON writer cannot fail (json_writer.h).
  for (const char* absent :
       {"action_queue_unavailable", "action_queue_query_failed", "action_queue_encode_failed",
        "action_list_encode_failed", "action_detail_encode_failed"}) {
    CHECK_FALSE(ParseAgentErrorCode(absent).has_value());
  }
}

TEST_CASE("declared code sets match the wire surface", "[core][errors]") {
  auto names = [](const std::vector<AgentErrorCode>& codes) {
    std::vector<std::string> out;
    for (auto c : codes) {
      out.emplace_back(ToString(c));
    }
    return out;
  };
  CHECK(names(FindingErrorCodes()) ==
        std::vector<std::string>{"invalid_finding_request", "finding_not_found",
                                 "finding_action_not_allowed", "patrol_unavailable"});
  CHECK(names(PlanErrorCodes()) ==
        std::vector<std::string>{"invalid_action_request", "mock_mode_enabled",
                                 "action_actor_unavailable", "resource_not_found",
                                 "capability_not_found", "action_execution_unavailable",
                                 "action_refresh_not_allowed"});
  CHECK(DecideErrorCodes().size() == 21);
  CHECK(ExecuteErrorCodes().size() == 20);
  CHECK(names(DecideErrorCodes()).front() == "mock_mode_enabled");
  CHECK(names(ExecuteErrorCodes()).back() == "action_replan_required");
}

TEST_CASE("transport codes carry their HTTP statuses", "[core][errors]") {
  std::vector<std::pair<std::string, int>> got;
  for (AgentErrorCode code : TransportErrorCodes()) {
    got.emplace_back(std::string(ToString(code)), HttpStatusFor(code));
  }
  CHECK(got == std::vector<std::pair<std::string, int>>{{"invalid_request", 400},
                                                        {"unauthorized", 401},
                                                        {"missing_scope", 403},
                                                        {"route_not_found", 404},
                                                        {"method_not_allowed", 405},
                                                        {"request_too_large", 413},
                                                        {"uri_too_long", 414},
                                                        {"internal_error", 500},
                                                        {"service_unavailable", 503},
                                                        {"unsupported_media_type", 415},
                                                        {"too_many_streams", 429},
                                                        {"request_header_too_large", 431},
                                                        {"request_timeout", 408},
                                                        {"csrf_rejected", 403}});
}

TEST_CASE("the envelope omits empty details and round trips", "[core][errors]") {
  AgentError e = MakeAgentError(AgentErrorCode::kResourceNotFound, "Resource not found");
  CHECK(e.ToJson() == R"({"error":"resource_not_found","message":"Resource not found"})");
  e.details["resource_id"] = "vm:999";
  CHECK(e.ToJson() == R"({"error":"resource_not_found","message":"Resource not found",)"
                      R"("details":{"resource_id":"vm:999"}})");
  auto parsed = ParseAgentError(e.ToJson());
  REQUIRE(parsed.ok());
  CHECK(parsed->code == AgentErrorCode::kResourceNotFound);
  CHECK(parsed->message == "Resource not found");
  CHECK(parsed->details == e.details);
}

TEST_CASE("missing_scope carries requiredScope at the top level", "[core][errors]") {
  AgentError e = MissingScopeError("ai:execute");
  std::string json = e.ToJson();
  CHECK(json.find(R"("error":"missing_scope")") != std::string::npos);
  CHECK(json.find(R"("requiredScope":"ai:execute")") != std::string::npos);
  CHECK(HttpStatusFor(e.code) == 403);
  auto parsed = ParseAgentError(R"({"error":"missing_scope","message":"m","requiredScope":"x"})");
  REQUIRE(parsed.ok());
  CHECK(parsed->details.at("requiredScope") == "x");
}

TEST_CASE("envelope decoding rejects malformed and hostile bodies", "[core][errors]") {
  for (const char* body : {
           "",
           "null",
           "[]",
           "\"resource_not_found\"",
           "{}",
           R"({"error":"resource_not_found"})",
           R"({"error":"resource_not_found","message":""})",
           R"({"error":"","message":"m"})",
           R"({"error":"not_a_code","message":"m"})",
           R"({"code":"resource_not_found","error":"Resource not found"})",
           R"({"error":42,"message":"m"})",
           R"({"error":"resource_not_found","message":"m","details":[]})",
           R"({"error":"resource_not_found","message":"m","details":{"k":1}})",
           R"({"error":"resource_not_found","message":"m"} trailing)",
       }) {
    INFO(body);
    CHECK_FALSE(ParseAgentError(body).ok());
  }
  CHECK_FALSE(ParseAgentError(std::string(200000, '[')).ok());
  CHECK_FALSE(ParseAgentError(std::string(1 << 20, ' ')).ok());
}

}  // namespace
}  // namespace pulse::core
