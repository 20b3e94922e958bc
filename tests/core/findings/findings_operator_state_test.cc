// Operator intent and maintenance shape findings (C-FND-7..12): a report on a resource the
// operator keeps quiet is stored dismissed with its cause, stays dismissed while the cause
// holds, wakes with its history when it lifts, and is never eligible for investigation.
#include <catch2/catch.hpp>
#include <string>

#include "findings_test_support.h"
#include "pulse/core/findings/operator_suppression.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/model/operator_state.h"
#include "pulse/testing/in_memory_operator_state_store.h"

namespace pulse::core::findings_test {
namespace {

struct OperatorFixture : Fixture {
  testing::InMemoryOperatorStateStore operator_state;
  FindingsService quiet{store, clock, verifier, metrics, &operator_state};

  void Declare(const std::string& id, bool offline, MonitoringMode mode = MonitoringMode::kNormal,
               std::optional<absl::Duration> window = std::nullopt) {
    OperatorState s;
    s.resource_id = id;
    s.monitoring_mode = offline ? MonitoringMode::kExpectedOffline : mode;
    s.intentionally_offline = offline;
    if (window.has_value()) {
      s.maintenance_start_at = clock.Now() - absl::Minutes(1);
      s.maintenance_end_at = clock.Now() + *window;
    }
    s.criticality = Criticality::kHigh;
    s.set_at = clock.Now();
    s.set_by = "tok_operator";
    REQUIRE(operator_state.Set(s).ok());
  }

  ReportOutcome Report(const FindingReport& r) {
    absl::StatusOr<ReportOutcome> outcome = quiet.Report(r);
    REQUIRE(outcome.ok());
    return *outcome;
  }
};

const LifecycleEvent& Last(const Finding& f) {
  REQUIRE(!f.lifecycle.empty());
  return f.lifecycle.back();
}

std::string Meta(const LifecycleEvent& e, const std::string& key) {
  auto it = e.metadata.find(key);
  return it == e.metadata.end() ? std::string() : it->second;
}

TEST_CASE("a new finding on an intentionally offline resource is stored dismissed with its cause",
          "[core][findings][operator_state]") {
  OperatorFixture fx;
  fx.Declare("vm:100", true);
  const ReportOutcome out = fx.Report(Fixture::MakeReport());
  CHECK(out.disposition == ReportDisposition::kDismissedByOperatorState);
  CHECK(ToString(out.disposition) == "dismissed_by_intent");
  CHECK_FALSE(out.is_new);
  const Finding f = fx.Stored(out.finding_id);
  CHECK(f.dismissed_reason == DismissReason::kExpectedBehavior);
  CHECK_FALSE(f.acknowledged_at.has_value());  // no human looked at it
  CHECK(f.resource_criticality == "high");
  CHECK(EventTypes(f) == std::vector<LifecycleEventType>{LifecycleEventType::kDetected,
                                                         LifecycleEventType::kDismissed});
  CHECK(Meta(Last(f), kMetaOperatorStateCause) == "intentionally_offline");
  CHECK(Meta(Last(f), kMetaMaintenanceEndAt).empty());
  CHECK(DeriveLoopState(f, fx.clock.Now()) == LoopState::kDismissed);
  // C-FND-12: the chain report -> auto-dismiss -> not investigable, at any autonomy level.
  CHECK_FALSE(ShouldInvestigate(f, fx.clock.Now()));
  CHECK(OperatorStateDismissCause(f) == "intentionally_offline");
}

TEST_CASE("a maintenance window dismisses with its end and outranks intentionally offline",
          "[core][findings][operator_state]") {
  OperatorFixture fx;
  fx.Declare("vm:100", true, MonitoringMode::kNormal, absl::Hours(2));
  const Finding f = fx.Stored(fx.Report(Fixture::MakeReport()).finding_id);
  CHECK(Meta(Last(f), kMetaOperatorStateCause) == "maintenance_window");
  CHECK(Meta(Last(f), kMetaMaintenanceEndAt) == FormatRfc3339(fx.clock.Now() + absl::Hours(2)));
  fx.Declare("vm:101", false, MonitoringMode::kMuted);
  const Finding muted = fx.Stored(fx.Report(Fixture::MakeReport("vm:101")).finding_id);
  CHECK(Meta(Last(muted), kMetaOperatorStateCause) == "muted");
}

TEST_CASE(
    "an active finding is dismissed when its resource goes quiet and wakes with its "
    "history when the intent lifts",
    "[core][findings][operator_state]") {
  OperatorFixture fx;
  const std::string id = fx.Report(Fixture::MakeReport()).finding_id;
  fx.clock.Advance(absl::Minutes(5));
  fx.Declare("vm:100", true);
  CHECK(fx.Report(Fixture::MakeReport()).disposition ==
        ReportDisposition::kDismissedByOperatorState);
  CHECK(fx.Stored(id).dismissed_reason == DismissReason::kExpectedBehavior);

  // While the intent holds, sightings (even an escalation) never wake it.
  FindingReport worse = Fixture::MakeReport();
  worse.severity = Severity::kCritical;
  fx.clock.Advance(absl::Minutes(5));
  CHECK(fx.Report(worse).disposition == ReportDisposition::kSeenWhileSuppressed);
  CHECK(fx.Report(worse).disposition == ReportDisposition::kSeenWhileSuppressed);
  CHECK_FALSE(IsActive(fx.Stored(id), fx.clock.Now()));

  REQUIRE(fx.operator_state.Clear("vm:100").ok());
  fx.clock.Advance(absl::Minutes(5));
  const ReportOutcome woke = fx.Report(Fixture::MakeReport());
  CHECK(woke.disposition == ReportDisposition::kReactivated);
  const Finding f = fx.Stored(id);
  CHECK(IsActive(f, fx.clock.Now()));
  CHECK(ShouldInvestigate(f, fx.clock.Now()));
  CHECK(f.times_raised == 5);
  CHECK(EventTypes(f) == std::vector<LifecycleEventType>{LifecycleEventType::kDetected,
                                                         LifecycleEventType::kDismissed,
                                                         LifecycleEventType::kSeenWhileSuppressed,
                                                         LifecycleEventType::kSuppressionLifted});
  CHECK(Meta(Last(f), kMetaOperatorStateCause) == "intentionally_offline");
  CHECK(Last(f).to == LoopState::kDetected);
}

TEST_CASE("a window that ended wakes the finding on the next re-detection",
          "[core][findings][operator_state]") {
  OperatorFixture fx;
  fx.Declare("vm:100", false, MonitoringMode::kNormal, absl::Minutes(30));
  const std::string id = fx.Report(Fixture::MakeReport()).finding_id;
  fx.clock.Advance(absl::Minutes(10));
  CHECK(fx.Report(Fixture::MakeReport()).disposition == ReportDisposition::kSeenWhileSuppressed);
  fx.clock.Advance(absl::Minutes(25));  // past the window's end; the state itself is unchanged
  CHECK(fx.Report(Fixture::MakeReport()).disposition == ReportDisposition::kReactivated);
  CHECK(Last(fx.Stored(id)).type == LifecycleEventType::kSuppressionLifted);
  CHECK(Meta(Last(fx.Stored(id)), kMetaOperatorStateCause) == "maintenance_window");
}

TEST_CASE("an operator's own dismissal after the automatic one is never woken by the lift",
          "[core][findings][operator_state]") {
  OperatorFixture fx;
  fx.Declare("vm:100", true);
  const std::string id = fx.Report(Fixture::MakeReport()).finding_id;
  // The operator undismisses it, then dismisses it by hand.
  REQUIRE(fx.quiet.Undismiss(id).ok());
  REQUIRE(fx.quiet.Dismiss(id, DismissReason::kExpectedBehavior, "known").ok());
  CHECK(OperatorStateDismissCause(fx.Stored(id)).empty());
  REQUIRE(fx.operator_state.Clear("vm:100").ok());
  CHECK(fx.Report(Fixture::MakeReport()).disposition == ReportDisposition::kSeenWhileSuppressed);
  CHECK(fx.Stored(id).dismissed_reason == DismissReason::kExpectedBehavior);
}

TEST_CASE("without operator state, or when it cannot be read, reports behave as before",
          "[core][findings][operator_state]") {
  OperatorFixture fx;
  fx.Declare("vm:100", true);
  // The service without the store (suppression is opt-in).
  const ReportOutcome plain = fx.service.Report(Fixture::MakeReport("vm:100")).value();
  CHECK(plain.disposition == ReportDisposition::kCreated);
  CHECK(IsActive(fx.Stored(plain.finding_id), fx.clock.Now()));
  // An unreadable store neither dismisses nor wakes.
  fx.operator_state.FailGets(absl::UnavailableError("disk gone"));
  const ReportOutcome unread = fx.Report(
      Fixture::MakeReport("vm:100", Category::kCapacity, "disk-high", "Disk almost full"));
  CHECK(unread.disposition == ReportDisposition::kCreated);
  CHECK(fx.Report(Fixture::MakeReport("vm:100")).disposition == ReportDisposition::kHeartbeat);
  fx.operator_state.ClearFailGets();
  CHECK(fx.quiet.OperatorStateProjectionFor("vm:100")->intentionally_offline);
  CHECK(fx.quiet.OperatorStateProjectionFor("vm:999")->SuppressionCause() == std::nullopt);
}

}  // namespace
}  // namespace pulse::core::findings_test
