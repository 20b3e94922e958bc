#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "findings_test_support.h"
#include "pulse/core/findings/finding_identity.h"

namespace pulse::core::findings_test {
namespace {

using E = LifecycleEventType;

std::string SeedCategory(Fixture& fx, Category category, std::string key,
                         std::string resource = "vm:100") {
  FindingReport r = Fixture::MakeReport(resource, category, key, "Problem " + key);
  r.resource_name = resource;
  return fx.ReportOk(r);
}

FindingReport Explicit(std::string resource, std::string name, std::string type, Category category,
                       std::string key, std::string title, std::string description) {
  FindingReport r =
      Fixture::MakeReport(std::move(resource), category, std::move(key), std::move(title));
  r.resource_name = std::move(name);
  r.resource_type = std::move(type);
  r.description = std::move(description);
  return r;
}

TEST_CASE("a present verdict refreshes evidence and last seen without an event",
          "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  fx.clock.Advance(absl::Minutes(15));
  auto outcome = fx.service.Assess(id, AssessVerdict::kPresent, "cpu still 98%");
  REQUIRE(outcome.ok());
  CHECK(outcome->applied);
  CHECK(outcome->verdict == AssessVerdict::kPresent);
  const Finding f = fx.Stored(id);
  CHECK(f.evidence == "cpu still 98%");
  CHECK(f.last_seen_at == fx.clock.Now());
  CHECK(f.times_raised == 2);
  CHECK(EventTypes(f) == std::vector<E>{E::kDetected});
}

TEST_CASE("an uncertain verdict changes nothing", "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  const Finding before = fx.Stored(id);
  const std::int64_t puts = fx.store.put_count();
  auto outcome = fx.service.Assess(id, AssessVerdict::kUncertain, "metrics unavailable");
  REQUIRE(outcome.ok());
  CHECK(outcome->applied);
  CHECK(fx.store.put_count() == puts);
  CHECK(fx.Stored(id) == before);
}

TEST_CASE("assessments are refused for bad input, unknown or inactive findings",
          "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  CHECK(absl::IsInvalidArgument(fx.service.Assess(id, AssessVerdict::kPresent, " ").status()));
  CHECK(absl::IsInvalidArgument(
      fx.service.Assess(id, static_cast<AssessVerdict>(8), "evidence").status()));
  CHECK(absl::IsNotFound(fx.service.Assess("nope", AssessVerdict::kPresent, "e").status()));
  REQUIRE(fx.service.Snooze(id, 1).ok());
  auto inactive = fx.service.Assess(id, AssessVerdict::kPresent, "e");
  CHECK(absl::IsFailedPrecondition(inactive.status()));
  CHECK(CodeOf(inactive.status()) == AgentErrorCode::kFindingActionNotAllowed);
}

TEST_CASE(
    "metric findings resolve only when the verifier's re-check confirms, never on the "
    "model's evidence",
    "[core][findings]") {
  for (Category category : {Category::kPerformance, Category::kCapacity}) {
    INFO(ToString(category));
    Fixture fx;
    const std::string id = SeedCategory(fx, category, "cpu-high");
    const Finding before = fx.Stored(id);
    // No verifier for the key: the model's "cpu 12%" is a claim, not evidence.
    auto unverified = fx.service.ResolveByPatrol(id, "load dropped", "cpu 12% for 30m");
    REQUIRE(unverified.ok());
    CHECK_FALSE(unverified->resolved);
    CHECK(unverified->refusal == ResolveRefusal::kNoVerifier);
    CHECK(fx.Stored(id) == before);
    fx.verifier.Script("cpu-high", VerifierVerdict::kSignalPresent);
    auto present = fx.service.ResolveByPatrol(id, "load dropped", "cpu 12% for 30m");
    REQUIRE(present.ok());
    CHECK(present->refusal == ResolveRefusal::kSignalStillPresent);
    CHECK(fx.Stored(id) == before);

    fx.verifier.Script("cpu-high", VerifierVerdict::kSignalGone);
    auto outcome = fx.service.ResolveByPatrol(id, "load dropped", "cpu 12% for 30m");
    REQUIRE(outcome.ok());
    CHECK(outcome->resolved);
    CHECK_FALSE(outcome->refusal.has_value());
    CHECK(fx.verifier.verified_ids().size() == 2);
    const Finding f = fx.Stored(id);
    CHECK(f.resolved_at == fx.clock.Now());
    CHECK(f.auto_resolved);
    CHECK(f.resolve_reason == "load dropped");
    const LifecycleEvent& e = f.lifecycle.back();
    CHECK(e.type == E::kAutoResolved);
    CHECK(e.metadata.at("verification") == "verifier_confirmed");
    CHECK(e.metadata.at("evidence") == "cpu 12% for 30m");
    CHECK(e.from == LoopState::kDetected);
    CHECK(e.to == LoopState::kResolved);
  }
}

TEST_CASE("event categories resolve only when the verifier confirms the signal is gone",
          "[core][findings]") {
  for (Category category :
       {Category::kBackup, Category::kReliability, Category::kSecurity, Category::kGeneral}) {
    INFO(ToString(category));
    Fixture fx;
    const std::string id = SeedCategory(fx, category, "backup-failed");
    const Finding before = fx.Stored(id);
    const std::int64_t puts = fx.store.put_count();

    auto expect_refused = [&](ResolveRefusal reason) {
      auto outcome = fx.service.ResolveByPatrol(id, "looks fixed", "latest job ok");
      REQUIRE(outcome.ok());
      CHECK_FALSE(outcome->resolved);
      CHECK(outcome->refusal == reason);
      CHECK_FALSE(outcome->message.empty());
      CHECK(fx.store.put_count() == puts);
      CHECK(fx.Stored(id) == before);
    };
    expect_refused(ResolveRefusal::kNoVerifier);
    fx.verifier.Script("backup-failed", VerifierVerdict::kSignalPresent);
    expect_refused(ResolveRefusal::kSignalStillPresent);
    fx.verifier.Script("backup-failed", VerifierVerdict::kInconclusive);
    expect_refused(ResolveRefusal::kVerifierInconclusive);
    fx.verifier.Script("backup-failed", absl::DeadlineExceededError("verifier timed out"));
    expect_refused(ResolveRefusal::kVerifierError);
    fx.verifier.Script("backup-failed", absl::UnavailableError("executor down"));
    expect_refused(ResolveRefusal::kVerifierError);

    fx.verifier.Script("backup-failed", VerifierVerdict::kSignalGone);
    auto confirmed = fx.service.ResolveByPatrol(id, "looks fixed", "latest job ok");
    REQUIRE(confirmed.ok());
    CHECK(confirmed->resolved);
    const Finding f = fx.Stored(id);
    CHECK(f.auto_resolved);
    CHECK(f.lifecycle.back().type == E::kAutoResolved);
    CHECK(f.lifecycle.back().metadata.at("verification") == "verifier_confirmed");
    CHECK(fx.verifier.verified_ids().size() == 5);
  }
}

TEST_CASE("a resolved verdict goes through the same gate", "[core][findings]") {
  Fixture fx;
  const std::string id = SeedCategory(fx, Category::kBackup, "backup-stale");
  auto refused = fx.service.Assess(id, AssessVerdict::kResolved, "job ran", "fixed");
  REQUIRE(refused.ok());
  CHECK_FALSE(refused->applied);
  CHECK(refused->refusal == ResolveRefusal::kNoVerifier);
  CHECK(IsActive(fx.Stored(id), fx.clock.Now()));
  fx.verifier.Script("backup-stale", VerifierVerdict::kSignalGone);
  auto applied = fx.service.Assess(id, AssessVerdict::kResolved, "job ran", "fixed");
  REQUIRE(applied.ok());
  CHECK(applied->applied);
  CHECK(fx.Stored(id).resolve_reason == "fixed");
}

TEST_CASE("a Patrol resolve needs a reason and evidence and an active finding",
          "[core][findings]") {
  Fixture fx;
  const std::string id = SeedCategory(fx, Category::kPerformance, "cpu-high");
  CHECK(absl::IsInvalidArgument(fx.service.ResolveByPatrol(id, "", "e").status()));
  CHECK(absl::IsInvalidArgument(fx.service.ResolveByPatrol(id, "r", "").status()));
  CHECK(absl::IsNotFound(fx.service.ResolveByPatrol("nope", "r", "e").status()));
  fx.verifier.Script("cpu-high", VerifierVerdict::kSignalGone);
  REQUIRE(fx.service.ResolveByPatrol(id, "r", "e")->resolved);
  CHECK(absl::IsFailedPrecondition(fx.service.ResolveByPatrol(id, "r", "e").status()));
}

TEST_CASE("a presented finding without a verdict is a run error", "[core][findings]") {
  FindingRunLedger ledger;
  ledger.AddPresented("a");
  ledger.AddPresented("b");
  ledger.AddPresented("c");
  REQUIRE(ledger.RecordVerdict("a", AssessVerdict::kPresent).ok());
  ledger.RecordReported("b", /*is_new=*/false);  // a re-report is b's outcome
  absl::Status missing = ledger.CheckAllAssessed();
  REQUIRE_FALSE(missing.ok());
  CHECK(absl::IsFailedPrecondition(missing));
  CHECK(std::string(missing.message()).find("c") != std::string::npos);
  CHECK(ToFindingAgentError(missing)->details.at("missing_count") == "1");
  REQUIRE(ledger.RecordVerdict("c", AssessVerdict::kUncertain).ok());
  CHECK(ledger.CheckAllAssessed().ok());

  const std::vector<std::string> presented = {"x", "y"};
  VerdictMap verdicts = {{"x", AssessVerdict::kResolved}};
  CHECK(absl::IsFailedPrecondition(CheckAllAssessed(presented, verdicts)));
  verdicts.emplace("y", AssessVerdict::kPresent);
  CHECK(CheckAllAssessed(presented, verdicts).ok());
  CHECK(CheckAllAssessed({}, {}).ok());
}

TEST_CASE("a finding gets one verdict per run", "[core][findings]") {
  FindingRunLedger ledger;
  REQUIRE(ledger.RecordVerdict("a", AssessVerdict::kUncertain).ok());
  absl::Status second = ledger.RecordVerdict("a", AssessVerdict::kResolved);
  CHECK(absl::IsFailedPrecondition(second));
  CHECK(ledger.VerdictFor("a") == AssessVerdict::kUncertain);
  CHECK_FALSE(ledger.VerdictFor("b").has_value());
  ledger.RecordReported("n", /*is_new=*/true);
  CHECK(ledger.WasReportedNew("n"));
  CHECK(ledger.WasReported("n"));
  ledger.RecordReported("old", /*is_new=*/false);
  CHECK(ledger.WasReported("old"));
  CHECK_FALSE(ledger.WasReportedNew("old"));
  CHECK_FALSE(ledger.WasReported("a"));
}

TEST_CASE("stale reconciliation resolves only unseen performance and capacity findings",
          "[core][findings]") {
  Fixture fx;
  const std::string perf = SeedCategory(fx, Category::kPerformance, "cpu-high");
  const std::string cap = SeedCategory(fx, Category::kCapacity, "disk-high");
  const std::string rel = SeedCategory(fx, Category::kReliability, "service-down");
  const std::string bak = SeedCategory(fx, Category::kBackup, "backup-failed");
  const std::string sec = SeedCategory(fx, Category::kSecurity, "ssh-root");
  const std::string gen = SeedCategory(fx, Category::kGeneral, "misc");
  const std::string seen = SeedCategory(fx, Category::kPerformance, "memory-high");
  const std::string unsure = SeedCategory(fx, Category::kCapacity, "inode-high");
  FindingRunLedger ledger;
  for (const std::string& id : {perf, cap, rel, bak, sec, gen, seen, unsure}) {
    ledger.AddSeeded(id);
  }
  ledger.RecordReported(seen, false);
  REQUIRE(ledger.RecordVerdict(unsure, AssessVerdict::kUncertain).ok());
  fx.clock.Advance(absl::Minutes(15));

  auto result = fx.service.ReconcileStale(ledger);
  REQUIRE(result.ok());
  std::vector<std::string> expected_resolved = {perf, cap};
  std::sort(expected_resolved.begin(), expected_resolved.end());
  CHECK(result->resolved == expected_resolved);
  CHECK(result->verified_resolved.empty());
  CHECK(result->kept.size() == 4);
  for (const std::string& id : {perf, cap}) {
    const Finding f = fx.Stored(id);
    CHECK(f.resolve_reason == "No longer detected by patrol");
    CHECK(f.auto_resolved);
    CHECK(f.lifecycle.back().type == E::kAutoResolved);
  }
  for (const std::string& id : {rel, bak, sec, gen, seen, unsure}) {
    CHECK(IsActive(fx.Stored(id), fx.clock.Now()));
  }
}

TEST_CASE("stale reconciliation resolves other categories only on verified absence",
          "[core][findings]") {
  Fixture fx;
  const std::string gone = SeedCategory(fx, Category::kBackup, "backup-failed", "vm:1");
  const std::string present = SeedCategory(fx, Category::kReliability, "guest-unreachable", "vm:2");
  const std::string erroring = SeedCategory(fx, Category::kSecurity, "smart-failure", "vm:3");
  fx.verifier.Script("backup-failed", VerifierVerdict::kSignalGone);
  fx.verifier.Script("guest-unreachable", VerifierVerdict::kSignalPresent);
  fx.verifier.Script("smart-failure", absl::DeadlineExceededError("30 s"));
  FindingRunLedger ledger;
  for (const std::string& id : {gone, present, erroring}) {
    ledger.AddSeeded(id);
  }
  auto result = fx.service.ReconcileStale(ledger);
  REQUIRE(result.ok());
  CHECK(result->verified_resolved == std::vector<std::string>{gone});
  CHECK(result->kept.size() == 2);
  CHECK(fx.Stored(gone).resolve_reason == "Deterministic verification confirmed the issue cleared");
  CHECK(IsActive(fx.Stored(present), fx.clock.Now()));
  CHECK(IsActive(fx.Stored(erroring), fx.clock.Now()));
}

TEST_CASE("stale verifications are capped per run and the rest deferred", "[core][findings]") {
  Fixture fx;
  fx.verifier.Script("backup-failed", VerifierVerdict::kSignalGone);
  FindingRunLedger ledger;
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(SeedCategory(fx, Category::kBackup, "backup-failed", "vm:" + std::to_string(i)));
    ledger.AddSeeded(ids.back());
  }
  auto result = fx.service.ReconcileStale(ledger);
  REQUIRE(result.ok());
  CHECK(result->verified_resolved.size() == kMaxVerifiedStaleResolvesPerRun);
  CHECK(result->deferred.size() == 5 - kMaxVerifiedStaleResolvesPerRun);
  CHECK(fx.verifier.verified_ids().size() == kMaxVerifiedStaleResolvesPerRun);
  // The next run picks up the deferred ones.
  auto next = fx.service.ReconcileStale(ledger);
  REQUIRE(next.ok());
  CHECK(next->verified_resolved == result->deferred);
}

TEST_CASE("a run with a missing verdict resolves nothing by absence", "[core][findings]") {
  Fixture fx;
  const std::string perf = SeedCategory(fx, Category::kPerformance, "cpu-high");
  FindingRunLedger ledger;
  ledger.AddPresented(perf);
  auto result = fx.service.ReconcileStale(ledger);
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsFailedPrecondition(result.status()));
  CHECK(IsActive(fx.Stored(perf), fx.clock.Now()));
}

TEST_CASE("stale reconciliation skips findings that are gone or no longer active",
          "[core][findings]") {
  Fixture fx;
  const std::string snoozed = SeedCategory(fx, Category::kPerformance, "cpu-high");
  REQUIRE(fx.service.Snooze(snoozed, 1).ok());
  FindingRunLedger ledger;
  ledger.AddSeeded(snoozed);
  ledger.AddSeeded("deleted-meanwhile");
  auto result = fx.service.ReconcileStale(ledger);
  REQUIRE(result.ok());
  CHECK(result->resolved.empty());
  CHECK(IsSnoozed(fx.Stored(snoozed), fx.clock.Now()));
}

// Seeds `n` performance findings on distinct resources and a ledger that saw none of them.
std::vector<std::string> SeedStale(Fixture& fx, FindingRunLedger& ledger, std::size_t n) {
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < n; ++i) {
    ids.push_back(
        SeedCategory(fx, Category::kPerformance, "cpu-high", "vm:" + std::to_string(1000 + i)));
    ledger.AddSeeded(ids.back());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST_CASE("stale resolves by absence are written a batch to a transaction", "[core][findings]") {
  Fixture fx;
  FindingRunLedger ledger;
  const std::size_t n = 2 * kStaleResolveBatch + 7;
  const std::vector<std::string> ids = SeedStale(fx, ledger, n);
  fx.clock.Advance(absl::Minutes(15));
  const std::int64_t puts = fx.store.put_count();

  auto result = fx.service.ReconcileStale(ledger);
  REQUIRE(result.ok());
  CHECK_FALSE(result->cancelled);
  std::vector<std::string> resolved = result->resolved;
  std::sort(resolved.begin(), resolved.end());
  CHECK(resolved == ids);
  CHECK(fx.store.batch_count() == 3);  // 512 + 512 + 7
  CHECK(fx.store.put_count() == puts + static_cast<std::int64_t>(n));
  for (const std::string& id : {ids.front(), ids[kStaleResolveBatch], ids.back()}) {
    const Finding f = fx.Stored(id);
    CHECK(f.resolved_at == fx.clock.Now());
    CHECK(f.auto_resolved);
    CHECK(f.resolve_reason == "No longer detected by patrol");
    CHECK(EventTypes(f) == std::vector<E>{E::kDetected, E::kAutoResolved});
    CHECK(f.loop_state == LoopState::kResolved);
  }
}

TEST_CASE("a finding changed between its read and its batch is resolved from a fresh read",
          "[core][findings]") {
  Fixture fx;
  FindingRunLedger ledger;
  const std::vector<std::string> ids = SeedStale(fx, ledger, 3);
  fx.clock.Advance(absl::Minutes(15));
  // Another writer adds a note to the first and snoozes the second after they were read.
  fx.store.SetBeforePut([&] {
    REQUIRE(fx.service.SetNote(ids[0], "looking at it").ok());
    REQUIRE(fx.service.Snooze(ids[1], 1).ok());
  });
  auto result = fx.service.ReconcileStale(ledger);
  REQUIRE(result.ok());
  std::vector<std::string> resolved = result->resolved;
  std::sort(resolved.begin(), resolved.end());
  CHECK(resolved == std::vector<std::string>{ids[0], ids[2]});
  const Finding noted = fx.Stored(ids[0]);
  CHECK(noted.user_note == "looking at it");  // the other writer's change is kept
  CHECK(noted.resolved_at.has_value());
  CHECK(EventTypes(noted) == std::vector<E>{E::kDetected, E::kUserNoteUpdated, E::kAutoResolved});
  CHECK(IsSnoozed(fx.Stored(ids[1]), fx.clock.Now()));
  CHECK_FALSE(fx.Stored(ids[1]).resolved_at.has_value());
}

TEST_CASE("a cancelled reconciliation stops between batches and writes no partial batch",
          "[core][findings]") {
  Fixture fx;
  FindingRunLedger ledger;
  const std::vector<std::string> ids = SeedStale(fx, ledger, 3 * kStaleResolveBatch);
  fx.clock.Advance(absl::Minutes(15));
  std::atomic<bool> cancelled{false};
  // Shutdown arrives while the first batch is being written.
  fx.store.SetBeforePut([&] { cancelled.store(true); });
  auto result = fx.service.ReconcileStale(ledger, &cancelled);
  REQUIRE(result.ok());
  CHECK(result->cancelled);
  CHECK(result->resolved.size() == kStaleResolveBatch);
  CHECK(fx.store.batch_count() == 1);
  std::size_t resolved = 0;
  for (const std::string& id : ids) {
    const Finding f = fx.Stored(id);
    if (f.resolved_at.has_value()) {
      ++resolved;
      CHECK(f.lifecycle.back().type == E::kAutoResolved);
    } else {
      CHECK(IsActive(f, fx.clock.Now()));
      CHECK(f.lifecycle.back().type == E::kDetected);
    }
  }
  CHECK(resolved == kStaleResolveBatch);
  // The next run resolves the rest.
  cancelled.store(false);
  auto next = fx.service.ReconcileStale(ledger, &cancelled);
  REQUIRE(next.ok());
  CHECK(next->resolved.size() == 2 * kStaleResolveBatch);
}

TEST_CASE("a store failure during a batch fails the reconciliation and resolves none of it",
          "[core][findings]") {
  Fixture fx;
  FindingRunLedger ledger;
  const std::vector<std::string> ids = SeedStale(fx, ledger, 4);
  fx.clock.Advance(absl::Minutes(15));
  fx.store.FailNext(absl::UnavailableError("disk gone"), "PutBatch");
  auto result = fx.service.ReconcileStale(ledger);
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsUnavailable(result.status()));
  for (const std::string& id : ids) {
    CHECK(IsActive(fx.Stored(id), fx.clock.Now()));
  }
}

TEST_CASE("the capacity forecast reads the metrics target over the window", "[core][findings]") {
  Fixture fx;
  const absl::Time now = fx.clock.Now();
  // 48 hourly samples rising 2 points a day, plus an old sample outside the 48 h window.
  for (int i = 0; i < 48; ++i) {
    fx.metrics.Add("pool-src-7", "usage", {now - absl::Hours(47 - i), 80 + 2 * (i / 24.0)});
  }
  fx.metrics.Add("pool-src-7", "usage", {now - absl::Hours(100), 0});
  auto forecast = fx.service.ForecastCapacity("pool-src-7", "usage");
  REQUIRE(forecast.ok());
  CHECK(forecast->reading == ForecastReading::kFilling);
  CHECK(forecast->sample_count == 48);
  CHECK(*forecast->daily_change == Approx(2.0));
  CHECK(forecast->days_to_full == 9);  // (100 - 83.92) / 2 = 8.04, rounded up
  auto none = fx.service.ForecastCapacity("storage:pve1:local-zfs", "usage");
  REQUIRE(none.ok());
  CHECK(none->reading == ForecastReading::kNoHistory);
  fx.metrics.FailNext(absl::UnavailableError("tsdb down"));
  CHECK(absl::IsUnavailable(fx.service.ForecastCapacity("pool-src-7", "usage").status()));
  CHECK(absl::IsInvalidArgument(fx.service.ForecastCapacity("", "usage").status()));
  CHECK(absl::IsInvalidArgument(
      fx.service.ForecastCapacity("pool-src-7", "usage", absl::ZeroDuration()).status()));
}

TEST_CASE("a forecast is stamped on capacity findings of the resource without an event",
          "[core][findings]") {
  Fixture fx;
  const std::string cap =
      fx.ReportOk(Explicit("storage:pve1:tank", "tank", "storage", Category::kCapacity, "pool-full",
                           "Tank filling", "Usage 86% and steady"));
  // Storage resources take forecasts whatever the category.
  const std::string rel =
      fx.ReportOk(Explicit("storage:pve1:tank", "tank", "storage", Category::kReliability,
                           "scrub-errors", "Scrub found errors", "3 checksum errors"));
  const std::string vm_perf =
      fx.ReportOk(Explicit("storage:pve1:tank", "tank", "vm", Category::kPerformance, "io-wait",
                           "IO wait high", "iowait 40 ms"));
  const std::string other =
      fx.ReportOk(Explicit("storage:pve1:other", "other", "storage", Category::kCapacity,
                           "pool-full", "Other filling", "Usage 90%"));
  REQUIRE(fx.store.size() == 4);

  CapacityForecast forecast;
  forecast.metric = "usage";
  forecast.reading = ForecastReading::kNoFillTrend;
  forecast.sample_count = 48;
  forecast.current_pct = 86;
  forecast.daily_change = 0.02;
  auto stamped = fx.service.StampCapacityForecast("storage:pve1:tank", forecast);
  REQUIRE(stamped.ok());
  std::vector<std::string> expected = {cap, rel};
  std::sort(expected.begin(), expected.end());
  CHECK(*stamped == expected);
  CHECK(fx.Stored(cap).capacity_forecast == forecast);
  CHECK(EventTypes(fx.Stored(cap)) == std::vector<E>{E::kDetected});
  CHECK_FALSE(fx.Stored(vm_perf).capacity_forecast.has_value());
  CHECK_FALSE(fx.Stored(other).capacity_forecast.has_value());
  const std::int64_t puts = fx.store.put_count();
  auto again = fx.service.StampCapacityForecast("storage:pve1:tank", forecast);
  REQUIRE(again.ok());
  CHECK(again->empty());  // unchanged values are not rewritten
  CHECK(fx.store.put_count() == puts);
}

}  // namespace
}  // namespace pulse::core::findings_test
