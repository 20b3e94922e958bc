// Shared fixture of the agent view tests: AgentViews and ActionService over the in-memory
// fakes with the action tests' small fleet (node:pve1, vm:101, service:pve1/nginx), builders of
// stored findings, and JSON readers that REQUIRE what they read.
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/actions/action_test_support.h"
#include "pulse/core/agent/agent_views.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/in_memory_finding_store.h"

namespace pulse::testing::agent {

using namespace testing::actions;  // NOLINT: the action fixtures

struct ViewsHarness {
  ViewsHarness() {
    fleet.PutResource(Node(), {});
    fleet.PutResource(Vm101(), VmCatalogue());
    fleet.PutResource(Nginx(), NginxCatalogue());
    fleet.AddRelationship({"vm:101", "node:pve1", "runs_on"});
    fleet.AddRelationship({"service:pve1/nginx", "node:pve1", "runs_on"});
  }

  FakeClock clock;
  FakeFleet fleet;
  InMemoryFindingStore findings;
  InMemoryActionStore actions;
  InMemoryOperatorStateStore operator_state;
  InMemoryAuditLog audit;
  core::ActionService action_service{actions, fleet, operator_state, audit, clock};
  core::AgentViews views{fleet, findings, actions, action_service, operator_state, clock};

  // Stores a finding as Patrol would have written it, detected `age` before now.
  core::Finding PutFinding(std::string id, std::string resource_id, core::Severity severity,
                           absl::Duration age = absl::Hours(1),
                           core::Category category = core::Category::kPerformance) {
    core::Finding f;
    f.id = std::move(id);
    f.key = f.id;
    f.resource_id = std::move(resource_id);
    f.resource_name = f.resource_id;
    f.resource_type = "vm";
    f.severity = severity;
    f.category = category;
    f.title = "Finding " + f.id;
    f.description = "What is wrong with " + f.resource_id;
    f.recommendation = "What to do about it";
    f.evidence = "what was seen";
    f.alert_identifier = "private-alert-id";
    f.detected_at = clock.Now() - age;
    f.last_seen_at = clock.Now() - absl::Minutes(1);
    f.times_raised = 1;
    REQUIRE(findings.Put(f, 0).ok());
    return f;
  }

  // Rewrites a stored finding through `edit`.
  void EditFinding(const std::string& id, const std::function<void(core::Finding&)>& edit) {
    absl::StatusOr<core::StoredFinding> stored = findings.Get(id);
    REQUIRE(stored.ok());
    edit(stored->finding);
    REQUIRE(findings.Put(stored->finding, stored->version).ok());
  }

  // Plans through ActionService (the only way records are made) and requires success.
  core::ActionRecord Plan(std::string capability, std::string params_json,
                          std::string resource = "vm:101", std::string request_id = "req-1",
                          core::ActionActor actor = Agent("assistant")) {
    absl::StatusOr<core::Refusable<core::PlanOutcome>> out =
        action_service.Plan(Request(std::move(capability), std::move(params_json), std::move(actor),
                                    std::move(resource), std::move(request_id)));
    REQUIRE(out.ok());
    if (out->refused()) {
      FAIL("plan refused: " << out->refusal().message);
    }
    return out->value().record;
  }

  core::ActionRecord Decide(const core::ActionRecord& record, core::DecisionOutcome outcome) {
    absl::StatusOr<core::Refusable<core::DecideOutcome>> out =
        action_service.Decide(Decision(record, outcome, Human("alice")));
    REQUIRE(out.ok());
    if (out->refused()) {
      FAIL("decision refused: " << out->refusal().message);
    }
    return out->value().record;
  }

  core::ActionRecord Execute(const core::ActionRecord& record) {
    absl::StatusOr<core::Refusable<core::ExecuteOutcome>> out =
        action_service.Execute(Execution(record, Human("alice")));
    REQUIRE(out.ok());
    if (out->refused()) {
      FAIL("execution refused: " << out->refusal().message);
    }
    return out->value().record;
  }

  core::OperatorState Lock(std::string resource_id) {
    core::OperatorState s;
    s.resource_id = std::move(resource_id);
    s.never_auto_remediate = true;
    s.set_at = clock.Now();
    s.set_by = "alice";
    REQUIRE(operator_state.Set(s).ok());
    return s;
  }
};

// The body of a view that must succeed, parsed.
inline rapidjson::Document Body(const absl::StatusOr<std::string>& body) {
  if (!body.ok()) {
    FAIL("view failed: " << body.status().ToString());
  }
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(*body);
  REQUIRE(doc.ok());
  return std::move(*doc);
}

// A JSON literal of the test, parsed.
inline rapidjson::Document Json(std::string_view text) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(text);
  if (!doc.ok()) {
    FAIL("bad test literal: " << doc.status().ToString());
  }
  return std::move(*doc);
}

inline std::string Text(const rapidjson::Value& value) { return core::ToJsonString(value); }

// The member that must be present.
inline const rapidjson::Value& At(const rapidjson::Value& object, std::string_view key) {
  REQUIRE(object.IsObject());
  const rapidjson::Value* member = core::GetMember(object, key);
  if (member == nullptr) {
    FAIL("missing member " << key << " in " << Text(object));
  }
  return *member;
}

// The member names of an object.
inline std::set<std::string> Keys(const rapidjson::Value& object) {
  REQUIRE(object.IsObject());
  std::set<std::string> out;
  for (const auto& m : object.GetObject()) {
    out.insert(std::string(core::StringViewOf(m.name)));
  }
  return out;
}

// `key` (a string member) of every element of an array.
inline std::vector<std::string> Column(const rapidjson::Value& array, std::string_view key) {
  REQUIRE(array.IsArray());
  std::vector<std::string> out;
  for (const auto& item : array.GetArray()) {
    std::optional<std::string_view> value = core::GetString(item, key);
    REQUIRE(value.has_value());
    out.emplace_back(*value);
  }
  return out;
}

}  // namespace pulse::testing::agent
