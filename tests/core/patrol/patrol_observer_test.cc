// PatrolService's observer (ports/patrol_observer.h): the phases a run enters and the events of
// its Watch pass, in order and under the run's id — what pulse-server's Patrol stream shows.
#include "pulse/core/ports/patrol_observer.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "patrol_test_support.h"

namespace pulse::testing::patrol {
namespace {

class RecordingObserver final : public core::PatrolObserver {
 public:
  void OnPhase(std::string_view run_id, std::string_view phase) override {
    absl::MutexLock lock(&mu_);
    seen_.emplace_back(std::string(run_id), "phase:" + std::string(phase));
  }
  void OnModelEvent(std::string_view run_id, const core::LoopEvent& event) override {
    absl::MutexLock lock(&mu_);
    seen_.emplace_back(std::string(run_id), std::string(core::ToString(event.type)));
  }
  // What was seen for `run_id`, in order; consecutive content deltas count once.
  std::vector<std::string> For(const std::string& run_id) const {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& [id, what] : seen_) {
      if (id == run_id && (out.empty() || what != "content" || out.back() != "content")) {
        out.push_back(what);
      }
    }
    return out;
  }
  std::size_t size() const {
    absl::MutexLock lock(&mu_);
    return seen_.size();
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::pair<std::string, std::string>> seen_;
};

std::unique_ptr<core::PatrolService> ObservedPatrol(Fixture& f, RecordingObserver& observer,
                                                    bool with_model) {
  std::optional<core::PatrolModel> model;
  if (with_model) {
    model.emplace(core::PatrolModel{f.provider, f.sessions, f.runner, core::ModelRoute{}, nullptr});
  }
  core::PatrolServiceOptions options;
  options.observer = &observer;
  return std::make_unique<core::PatrolService>(f.fleet, f.findings, f.actions, f.operator_state,
                                               f.runs, f.history, f.clock, f.ids, std::move(model),
                                               std::move(options));
}

TEST_CASE("a run tells its observer each phase and its Watch pass's events, in order",
          "[core][patrol][patrol_stream]") {
  Fixture f(/*with_model=*/true);
  RecordingObserver observer;
  std::unique_ptr<core::PatrolService> patrol = ObservedPatrol(f, observer, true);
  f.provider.Add(ScriptedTurn::Calls(
      {Call("c1", "patrol_get_findings", R"({"resource_id":"app-container:worker"})")}));
  f.provider.Add(ScriptedTurn::Text("Nothing new."));
  absl::StatusOr<core::PatrolRunRecord> r =
      patrol->Run(core::PatrolScope{}, core::PatrolTrigger::kManual);
  REQUIRE(r.ok());
  const std::vector<std::string> seen = observer.For(r->id);
  // The loop's workflow_state events may come more or less often; the rest is fixed.
  std::vector<std::string> without_state;
  for (const std::string& s : seen) {
    if (s != "workflow_state") {
      without_state.push_back(s);
    }
  }
  const std::vector<std::string> want = {
      "phase:triage", "phase:watch", "session", "tool_start",      "tool_progress",
      "tool_end",     "content",     "done",    "phase:reconcile", "phase:remediate",
  };
  CHECK(without_state == want);
}

TEST_CASE("a run without a model enters no watch phase and sends no model event",
          "[core][patrol][patrol_stream]") {
  Fixture f;
  RecordingObserver observer;
  std::unique_ptr<core::PatrolService> patrol = ObservedPatrol(f, observer, false);
  absl::StatusOr<core::PatrolRunRecord> r =
      patrol->Run(core::PatrolScope{}, core::PatrolTrigger::kManual);
  REQUIRE(r.ok());
  CHECK(observer.For(r->id) ==
        std::vector<std::string>{"phase:triage", "phase:reconcile", "phase:remediate"});
  CHECK(observer.size() == 3);
}

}  // namespace
}  // namespace pulse::testing::patrol
