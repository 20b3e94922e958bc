// The Patrol soak: 200 scheduled runs over the shipped demo fleet at autonomy `assisted`, with
// faults injected at random (fixed seed) between runs, on the real SQLite stores and a fake
// clock (the demo lands changes at once, so the whole soak takes seconds). A programmed model
// answers the Watch pass and proposes the obvious fix in each investigation. After every run:
// one active finding per problem; overall: no capability dispatched twice, and every
// dispatched action carries a verification outcome.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/patrol/patrol_service.h"
#include "pulse/core/patrol/triage.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/forwarding_fleet.h"
#include "pulse/testing/inline_task_runner.h"
#include "pulse/testing/sequential_id_source.h"

namespace pulse::testing::patrol {
namespace {

namespace agents = adapters::agents;

// A Fleet that forwards to the demo and records every dispatch attempt id.
class RecordingFleet final : public ForwardingFleet {
 public:
  using ForwardingFleet::ForwardingFleet;

  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override {
    dispatched.push_back(request);
    return ForwardingFleet::Dispatch(request);
  }

  std::vector<core::DispatchRequest> dispatched;  // Patrol runs on one thread here
};

bool HasTool(const core::LlmRequest& request, std::string_view name) {
  for (const core::ToolDefinition& t : request.tools) {
    if (t.name == name) {
      return true;
    }
  }
  return false;
}

// Watch: "nothing to add". Investigation: one proposal for the resource the finding names,
// chosen by its type and key, then a summary.
class ProgrammedModel final : public core::LlmProvider {
 public:
  absl::Status Stream(const core::LlmRequest& request,
                      absl::FunctionRef<void(const core::LlmStreamEvent&)> on_event) override {
    const bool investigation = HasTool(request, "patrol_propose_action");
    bool answered_tool = false;
    std::string ask;
    for (const core::Message& m : request.messages) {
      answered_tool = answered_tool || m.role == core::MessageRole::kTool;
      if (m.role == core::MessageRole::kUser && ask.empty()) {
        ask = m.content;
      }
    }
    std::optional<core::ToolCall> call;
    if (investigation && !answered_tool) {
      call = Proposal(ask);
    }
    if (call.has_value()) {
      on_event(core::LlmStreamEvent::ToolCallDone(*std::move(call)));
      on_event(core::LlmStreamEvent::Usage(400, 60));
      on_event(core::LlmStreamEvent::Finish(core::FinishReason::kToolCalls));
    } else {
      on_event(core::LlmStreamEvent::ContentDelta("Checked; summary recorded."));
      on_event(core::LlmStreamEvent::Usage(300, 20));
      on_event(core::LlmStreamEvent::Finish(core::FinishReason::kStop));
    }
    return absl::OkStatus();
  }

 private:
  static std::optional<core::ToolCall> Proposal(const std::string& ask) {
    const std::size_t on = ask.find(" on ");
    const std::size_t colon = ask.find(": ", on);
    if (on == std::string::npos || colon == std::string::npos) {
      return std::nullopt;
    }
    const std::string resource = ask.substr(on + 4, colon - on - 4);
    std::string capability;
    std::string params = "{}";
    if (resource.rfind("app-container:", 0) == 0) {
      capability = ask.find("has exited") != std::string::npos ? "start" : "restart";
    } else if (resource.rfind("service:", 0) == 0) {
      capability = "restart";
    } else if (resource.rfind("backup-job:", 0) == 0) {
      capability = "run-now";
      params = R"({"mode":"snapshot"})";
    } else if (resource.rfind("vm:", 0) == 0) {
      capability = "restart";  // elevated: assisted never runs it
      params = R"({"mode":"reboot"})";
    } else {
      return std::nullopt;
    }
    return core::ToolCall{"call_p", "patrol_propose_action",
                          R"({"resource_id":")" + resource + R"(","capability":")" + capability +
                              R"(","params":)" + params + R"(,"rationale":"fix the fault"})"};
  }
};

struct FaultChoice {
  const char* resource;
  agents::DemoFaultKind kind;
};

TEST_CASE(
    "200 scheduled runs with random faults: one finding per problem, one dispatch per "
    "action, every dispatch verified",
    "[e2e][patrol][soak]") {
  char dir_template[] = "/tmp/pulse-patrol-soak-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  struct Cleanup {
    std::string path;
    ~Cleanup() { std::filesystem::remove_all(path); }
  } cleanup{dir};

  FakeClock clock(absl::FromUnixSeconds(1'800'000'000));
  agents::DemoFleetOptions options;
  options.dispatch_delay = absl::ZeroDuration();
  options.clock = &clock;
  options.sleep = [&clock](absl::Duration d) { clock.Advance(d); };
  auto demo = agents::DemoFleet::OpenDefault(options);
  REQUIRE(demo.ok());
  agents::DemoFleetMetricsHistory history(**demo);
  RecordingFleet fleet(**demo);

  adapters::storage::SqliteOptions sqlite;
  sqlite.durability = adapters::storage::Durability::kNormal;
  auto storage = adapters::storage::OpenSqliteStorage(dir, sqlite);
  REQUIRE(storage.ok());
  adapters::storage::SqliteStorage& s = **storage;

  core::TriageFindingVerifier verifier(fleet, history, clock);
  core::FindingsService findings(*s.findings, clock, verifier, history);
  core::ActionService actions(*s.actions, fleet, *s.operator_state, *s.audit, clock);
  SequentialIdSource ids;
  InlineTaskRunner runner;
  ProgrammedModel model;
  core::ModelRoute route;
  route.route = core::InferenceRoute::kLocalModelServer;
  core::PatrolService patrol(fleet, findings, actions, *s.operator_state, *s.patrol_runs, history,
                             clock, ids,
                             core::PatrolModel{model, *s.sessions, runner, route, nullptr});
  core::AutonomySettings assisted;
  assisted.level = core::AutonomyLevel::kAssisted;
  REQUIRE(patrol.SetAutonomy(assisted).ok());

  const std::vector<FaultChoice> faults = {
      {"app-container:worker", agents::DemoFaultKind::kExited},
      {"app-container:api", agents::DemoFaultKind::kExited},
      {"app-container:grafana", agents::DemoFaultKind::kHighMemory},
      {"service:pve2/postfix", agents::DemoFaultKind::kCrashLoop},
      {"service:pve3/chrony", agents::DemoFaultKind::kCrashLoop},
      {"backup-job:nightly", agents::DemoFaultKind::kBackupFailed},
      {"backup-job:db-hourly", agents::DemoFaultKind::kBackupFailed},
      {"vm:107", agents::DemoFaultKind::kHighMemory},
      {"app-container:redis", agents::DemoFaultKind::kActionFails},
  };
  std::mt19937 rng(20261130);
  int error_runs = 0;
  int fixes_verified = 0;
  for (int run = 0; run < 200; ++run) {
    if (rng() % 3 == 0) {
      const FaultChoice& f = faults[rng() % faults.size()];
      // Re-injecting an active fault only updates `persistent`; a wrong kind is not staged.
      (**demo).InjectFault(f.resource, f.kind, rng() % 6 == 0).IgnoreError();
    }
    if (rng() % 7 == 0) {
      const FaultChoice& f = faults[rng() % faults.size()];
      (**demo).ClearFault(f.resource, f.kind).IgnoreError();  // NotFound when not active
    }
    clock.Advance(absl::Minutes(15));
    absl::StatusOr<core::PatrolBegin> begun =
        patrol.Begin(core::PatrolScope{}, core::PatrolTrigger::kScheduled);
    REQUIRE(begun.ok());
    REQUIRE(begun->ticket.has_value());
    const core::PatrolRunRecord record = patrol.Execute(*std::move(begun->ticket));
    INFO("run " << run << ": " << core::PatrolRunToJson(record));
    error_runs += record.status == core::PatrolRunStatus::kError;
    for (const core::PatrolRemediation& m : record.remediations) {
      fixes_verified += m.outcome == "fix_verified";
    }

    // One active finding per problem (resource + key).
    absl::StatusOr<std::vector<core::Finding>> active = findings.List(core::FindingQuery{});
    REQUIRE(active.ok());
    std::map<std::pair<std::string, std::string>, int> per_problem;
    for (const core::Finding& f : *active) {
      CHECK(++per_problem[{f.resource_id, f.key}] == 1);
    }
  }
  CHECK(error_runs == 0);
  CHECK(fixes_verified >= 10);

  // Never dispatched twice: one attempt per action, one action per attempt.
  std::set<std::string> attempts;
  std::set<std::string> dispatched_actions;
  for (const core::DispatchRequest& d : fleet.dispatched) {
    CHECK(attempts.insert(d.attempt_id).second);
    CHECK(dispatched_actions.insert(d.action_id).second);
  }
  // The soak really exercised the fix path (41 dispatches, 33 verified with this seed).
  CHECK(dispatched_actions.size() >= 10);
  // Every dispatched action ended with a verification outcome.
  for (const std::string& id : dispatched_actions) {
    absl::StatusOr<core::ActionRecord> record = s.actions->Get(id);
    REQUIRE(record.ok());
    INFO(id);
    CHECK((record->state == core::ActionState::kCompleted ||
           record->state == core::ActionState::kFailed));
    REQUIRE(record->result.has_value());
    CHECK(record->result->dispatched);
    CHECK(record->result->verification.status != core::VerificationStatus::kNotAttempted);
  }
  // Run history is bounded.
  CHECK(s.patrol_runs->List(100)->size() == 100);
}

}  // namespace
}  // namespace pulse::testing::patrol
