#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "findings_test_support.h"
#include "pulse/core/findings/finding_identity.h"

namespace pulse::core::findings_test {
namespace {

using E = LifecycleEventType;

// Creates one active finding and returns its id.
std::string Seed(Fixture& fx) { return fx.ReportOk(Fixture::MakeReport()); }

void ExpectNotAllowed(const absl::Status& status) {
  INFO(status.ToString());
  CHECK(absl::IsFailedPrecondition(status));
  CHECK(CodeOf(status) == AgentErrorCode::kFindingActionNotAllowed);
}

TEST_CASE("acknowledge stamps the finding once and keeps it active", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  auto acked = fx.service.Acknowledge(id);
  REQUIRE(acked.ok());
  CHECK(acked->acknowledged_at == fx.clock.Now());
  CHECK(IsActive(*acked, fx.clock.Now()));
  CHECK(EventTypes(*acked) == std::vector<E>{E::kDetected, E::kAcknowledged});
  CHECK_FALSE(acked->lifecycle.back().from.has_value());  // no state change
  const std::int64_t puts = fx.store.put_count();
  fx.clock.Advance(absl::Minutes(1));
  auto again = fx.service.Acknowledge(id);
  REQUIRE(again.ok());
  CHECK(again->acknowledged_at == fx.clock.Now() - absl::Minutes(1));
  CHECK(fx.store.put_count() == puts);  // a no-op writes nothing
  CHECK(EventTypes(fx.Stored(id)).size() == 2);
}

TEST_CASE("operations on an unknown finding are finding_not_found", "[core][findings]") {
  Fixture fx;
  for (const absl::Status& status :
       {fx.service.Acknowledge("missing").status(), fx.service.Snooze("missing", 1).status(),
        fx.service.Unsnooze("missing").status(),
        fx.service.Dismiss("missing", DismissReason::kNotAnIssue, "").status(),
        fx.service.Undismiss("missing").status(), fx.service.Resolve("missing", "").status(),
        fx.service.Suppress("missing").status(), fx.service.SetNote("missing", "x").status(),
        fx.service.Get("missing").status()}) {
    INFO(status.ToString());
    CHECK(absl::IsNotFound(status));
    auto error = ToFindingAgentError(status);
    REQUIRE(error.has_value());
    CHECK(error->code == AgentErrorCode::kFindingNotFound);
    CHECK(error->details.at("finding_id") == "missing");
  }
}

TEST_CASE("snooze accepts 1 to 168 hours and nothing else", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  for (std::int64_t hours : {0, -1, 169, 1000000}) {
    INFO(hours);
    auto refused = fx.service.Snooze(id, hours);
    REQUIRE_FALSE(refused.ok());
    CHECK(absl::IsInvalidArgument(refused.status()));
    auto error = ToFindingAgentError(refused.status());
    REQUIRE(error.has_value());
    CHECK(error->code == AgentErrorCode::kInvalidFindingRequest);
    CHECK(error->details.at("duration_hours") == "must be between 1 and 168");
  }
  CHECK(EventTypes(fx.Stored(id)) == std::vector<E>{E::kDetected});
  for (std::int64_t hours : {1, 168}) {
    INFO(hours);
    auto snoozed = fx.service.Snooze(id, hours);
    REQUIRE(snoozed.ok());
    CHECK(snoozed->snoozed_until == fx.clock.Now() + absl::Hours(hours));
  }
}

TEST_CASE("a snoozed finding is inactive until the snooze ends", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  auto snoozed = fx.service.Snooze(id, 2);
  REQUIRE(snoozed.ok());
  CHECK(snoozed->loop_state == LoopState::kSnoozed);
  const LifecycleEvent& e = snoozed->lifecycle.back();
  CHECK(e.type == E::kSnoozed);
  CHECK(e.from == LoopState::kDetected);
  CHECK(e.to == LoopState::kSnoozed);
  CHECK(e.metadata.count("until") == 1);
  CHECK(e.message == "Finding snoozed for 2 hours");
  CHECK(fx.service.List({})->empty());
  fx.clock.Advance(absl::Hours(2) - absl::Nanoseconds(1));
  CHECK_FALSE(IsActive(fx.Stored(id), fx.clock.Now()));
  fx.clock.Advance(absl::Nanoseconds(1));
  CHECK(IsActive(fx.Stored(id), fx.clock.Now()));
  CHECK(fx.service.List({})->size() == 1);
}

TEST_CASE("a snooze keeps its note on the finding in the same write", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  auto snoozed = fx.service.Snooze(id, 4, "  waiting for the vendor patch  ");
  REQUIRE(snoozed.ok());
  CHECK(snoozed->user_note == "waiting for the vendor patch");
  CHECK(snoozed->lifecycle.back().type == E::kUserNoteUpdated);
  CHECK(fx.Stored(id).user_note == "waiting for the vendor patch");
  // Without a note the one already there stays; an oversized one changes nothing at all.
  REQUIRE(fx.service.Unsnooze(id).ok());
  REQUIRE(fx.service.Snooze(id, 1).ok());
  CHECK(fx.Stored(id).user_note == "waiting for the vendor patch");
  REQUIRE(fx.service.Unsnooze(id).ok());
  const std::size_t events = fx.Stored(id).lifecycle.size();
  CHECK_FALSE(fx.service.Snooze(id, 1, std::string(kMaxNoteBytes + 1, 'n')).ok());
  CHECK(fx.Stored(id).lifecycle.size() == events);
  CHECK_FALSE(fx.Stored(id).snoozed_until.has_value());
}

TEST_CASE("unsnooze wakes a snoozed finding and refuses one that is not snoozed",
          "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  ExpectNotAllowed(fx.service.Unsnooze(id).status());
  REQUIRE(fx.service.Snooze(id, 5).ok());
  auto woken = fx.service.Unsnooze(id);
  REQUIRE(woken.ok());
  CHECK(IsActive(*woken, fx.clock.Now()));
  CHECK(woken->lifecycle.back().type == E::kUnsnoozed);
  CHECK(woken->lifecycle.back().metadata.count("previous_until") == 1);
  CHECK(woken->lifecycle.back().to == LoopState::kDetected);
}

TEST_CASE("resolved findings cannot be snoozed, dismissed, suppressed or resolved again",
          "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  REQUIRE(fx.service.Resolve(id, "").ok());
  const std::size_t events = fx.Stored(id).lifecycle.size();
  ExpectNotAllowed(fx.service.Snooze(id, 1).status());
  ExpectNotAllowed(fx.service.Unsnooze(id).status());
  ExpectNotAllowed(fx.service.Dismiss(id, DismissReason::kExpectedBehavior, "").status());
  ExpectNotAllowed(fx.service.Suppress(id).status());
  ExpectNotAllowed(fx.service.Resolve(id, "").status());
  CHECK(fx.Stored(id).lifecycle.size() == events);
  CHECK(fx.service.Acknowledge(id).ok());  // acknowledge applies to any finding
}

TEST_CASE("dismissing as not an issue suppresses without creating a rule", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  auto dismissed = fx.service.Dismiss(id, DismissReason::kNotAnIssue, "  benign  ");
  REQUIRE(dismissed.ok());
  CHECK(dismissed->dismissed_reason == DismissReason::kNotAnIssue);
  CHECK(dismissed->suppressed);
  CHECK(dismissed->user_note == "benign");
  CHECK(dismissed->acknowledged_at == fx.clock.Now());
  CHECK(dismissed->loop_state == LoopState::kSuppressed);
  CHECK(dismissed->lifecycle.back().type == E::kDismissed);
  CHECK(dismissed->lifecycle.back().metadata.at("reason") == "not_an_issue");
  CHECK(fx.service.ListSuppressionRules()->empty());
  // Another finding on the same resource and category is still reported.
  CHECK(fx.service
            .Report(Fixture::MakeReport("vm:100", Category::kPerformance, "load-high",
                                        "Load average high"))
            ->disposition == ReportDisposition::kCreated);
}

TEST_CASE("dismissing as expected behavior keeps no reminder", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  auto dismissed = fx.service.Dismiss(id, DismissReason::kExpectedBehavior, "");
  REQUIRE(dismissed.ok());
  CHECK_FALSE(dismissed->suppressed);
  CHECK_FALSE(dismissed->remind_at.has_value());
  CHECK(dismissed->loop_state == LoopState::kDismissed);
  CHECK(dismissed->user_note.empty());
}

TEST_CASE("will fix later reminds at exactly seven days", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  const absl::Time dismissed_at = fx.clock.Now();
  auto dismissed = fx.service.Dismiss(id, DismissReason::kWillFixLater, "next sprint");
  REQUIRE(dismissed.ok());
  CHECK(dismissed->remind_at == dismissed_at + absl::Hours(168));
  CHECK(dismissed->lifecycle.back().metadata.count("remind_at") == 1);

  fx.clock.Set(dismissed_at + absl::Hours(168) - absl::Seconds(1));
  auto early = fx.service.SweepReminders();
  REQUIRE(early.ok());
  CHECK(early->empty());
  CHECK_FALSE(IsActive(fx.Stored(id), fx.clock.Now()));

  fx.clock.Set(dismissed_at + absl::Hours(168));
  auto due = fx.service.SweepReminders();
  REQUIRE(due.ok());
  CHECK(*due == std::vector<std::string>{id});
  const Finding f = fx.Stored(id);
  CHECK(IsActive(f, fx.clock.Now()));
  CHECK(f.remind_count == 1);
  CHECK(f.user_note == "next sprint");
  CHECK_FALSE(f.dismissed_reason.has_value());
  CHECK(f.lifecycle.back().type == E::kReminded);
  CHECK(f.lifecycle.back().from == LoopState::kDismissed);
  CHECK(f.lifecycle.back().to == LoopState::kDetected);
  CHECK(fx.service.SweepReminders()->empty());  // only once
}

TEST_CASE("the internal suppressed reason cannot be given to dismiss", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  auto refused = fx.service.Dismiss(id, DismissReason::kSuppressed, "");
  REQUIRE_FALSE(refused.ok());
  CHECK(absl::IsInvalidArgument(refused.status()));
  CHECK(ToFindingAgentError(refused.status())->details.count("reason") == 1);
  CHECK(
      absl::IsInvalidArgument(fx.service.Dismiss(id, static_cast<DismissReason>(17), "").status()));
}

TEST_CASE("undismiss reopens a dismissed finding and keeps the note", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  ExpectNotAllowed(fx.service.Undismiss(id).status());
  REQUIRE(fx.service.Dismiss(id, DismissReason::kWillFixLater, "keep me").ok());
  auto reopened = fx.service.Undismiss(id);
  REQUIRE(reopened.ok());
  CHECK(IsActive(*reopened, fx.clock.Now()));
  CHECK_FALSE(reopened->remind_at.has_value());
  CHECK_FALSE(reopened->acknowledged_at.has_value());
  CHECK(reopened->user_note == "keep me");
  CHECK(reopened->lifecycle.back().type == E::kUndismissed);
  CHECK(reopened->lifecycle.back().metadata.at("reason") == "will_fix_later");
}

TEST_CASE("the transition table governs snooze and dismiss of each other", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  REQUIRE(fx.service.Snooze(id, 3).ok());
  auto dismissed = fx.service.Dismiss(id, DismissReason::kExpectedBehavior, "");
  REQUIRE(dismissed.ok());  // snoozed -> dismissed is allowed and ends the snooze
  CHECK_FALSE(dismissed->snoozed_until.has_value());
  CHECK(dismissed->lifecycle.back().from == LoopState::kSnoozed);
  CHECK(dismissed->lifecycle.back().to == LoopState::kDismissed);
  ExpectNotAllowed(fx.service.Snooze(id, 3).status());    // dismissed -> snoozed is not
  REQUIRE(fx.service.Suppress(id).ok());                  // dismissed -> suppressed is
  ExpectNotAllowed(fx.service.Snooze(id, 3).status());    // suppressed -> snoozed is not
  ExpectNotAllowed(fx.service.Resolve(id, "").status());  // suppressed -> resolved is not
}

TEST_CASE("an operator resolve records the note and closes the finding", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  REQUIRE(fx.service.Snooze(id, 1).ok());
  auto resolved = fx.service.Resolve(id, " replaced the fan ");
  REQUIRE(resolved.ok());
  CHECK(resolved->resolved_at == fx.clock.Now());
  CHECK_FALSE(resolved->auto_resolved);
  CHECK(resolved->user_note == "replaced the fan");
  CHECK_FALSE(resolved->snoozed_until.has_value());
  CHECK(resolved->loop_state == LoopState::kResolved);
  CHECK(resolved->lifecycle.back().type == E::kResolved);
  CHECK(resolved->lifecycle.back().message == "replaced the fan");
  CHECK(resolved->lifecycle.back().from == LoopState::kSnoozed);
  CHECK_FALSE(IsActive(*resolved, fx.clock.Now()));
}

TEST_CASE("an operator may resolve a dismissed finding and the dismissal ends",
          "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  REQUIRE(fx.service.Dismiss(id, DismissReason::kWillFixLater, "").ok());
  auto resolved = fx.service.Resolve(id, "");
  REQUIRE(resolved.ok());
  CHECK_FALSE(resolved->dismissed_reason.has_value());
  CHECK_FALSE(resolved->remind_at.has_value());
  CHECK(resolved->lifecycle.back().from == LoopState::kDismissed);
}

TEST_CASE("suppress hides the finding and blocks new ones for its resource and category",
          "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  auto outcome = fx.service.Suppress(id);
  REQUIRE(outcome.ok());
  CHECK(outcome->finding.suppressed);
  CHECK(outcome->finding.dismissed_reason == DismissReason::kSuppressed);
  CHECK(outcome->finding.loop_state == LoopState::kSuppressed);
  CHECK(outcome->finding.lifecycle.back().type == E::kSuppressed);
  CHECK(outcome->rule.resource_id == "vm:100");
  CHECK(outcome->rule.category == Category::kPerformance);
  CHECK(outcome->rule.created_from == SuppressionOrigin::kSuppress);
  CHECK(outcome->rule.finding_id == id);
  CHECK(outcome->finding.lifecycle.back().metadata.at("rule_id") == outcome->rule.id);
  auto blocked = fx.service.Report(
      Fixture::MakeReport("vm:100", Category::kPerformance, "load-high", "Load high"));
  REQUIRE(blocked.ok());
  CHECK(blocked->disposition == ReportDisposition::kBlockedBySuppressionRule);

  // Suppressing again changes nothing and keeps the one rule.
  const std::int64_t puts = fx.store.put_count();
  auto again = fx.service.Suppress(id);
  REQUIRE(again.ok());
  CHECK(again->rule == outcome->rule);
  CHECK(fx.store.put_count() == puts);
  CHECK(fx.service.ListSuppressionRules()->size() == 1);

  // Undismissing reopens the finding but leaves the rule in place.
  REQUIRE(fx.service.Undismiss(id).ok());
  CHECK(fx.service.ListSuppressionRules()->size() == 1);
}

TEST_CASE("suppressing again restores a rule whose write failed without a second event",
          "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  fx.store.FailNext(absl::UnavailableError("disk full"), "PutSuppressionRule");
  auto failed = fx.service.Suppress(id);
  REQUIRE_FALSE(failed.ok());
  CHECK(absl::IsUnavailable(failed.status()));
  CHECK(CodeOf(failed.status()) == AgentErrorCode::kPatrolUnavailable);
  CHECK(fx.Stored(id).suppressed);  // the finding write had already happened
  CHECK(fx.service.ListSuppressionRules()->empty());
  const std::size_t events = fx.Stored(id).lifecycle.size();
  auto repaired = fx.service.Suppress(id);
  REQUIRE(repaired.ok());
  CHECK(repaired->rule.id == SuppressionRuleIdFor("vm:100", Category::kPerformance));
  CHECK(fx.service.ListSuppressionRules()->size() == 1);
  CHECK(fx.Stored(id).lifecycle.size() == events);
}

TEST_CASE("set note replaces the note with one event and ignores an unchanged note",
          "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  auto noted = fx.service.SetNote(id, "waiting on vendor");
  REQUIRE(noted.ok());
  CHECK(noted->user_note == "waiting on vendor");
  CHECK(noted->lifecycle.back().type == E::kUserNoteUpdated);
  const std::size_t events = noted->lifecycle.size();
  CHECK(fx.service.SetNote(id, "waiting on vendor")->lifecycle.size() == events);
  CHECK(fx.service.SetNote(id, "")->user_note.empty());
  CHECK(absl::IsInvalidArgument(
      fx.service.SetNote(id, std::string(kMaxNoteBytes + 1, 'n')).status()));
}

TEST_CASE("operators cannot change the Patrol runtime finding", "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport(
      "ai-service", Category::kReliability, "ai-patrol-error", "Patrol provider failing"));
  ExpectNotAllowed(fx.service.Acknowledge(id).status());
  ExpectNotAllowed(fx.service.Snooze(id, 1).status());
  ExpectNotAllowed(fx.service.Dismiss(id, DismissReason::kNotAnIssue, "").status());
  ExpectNotAllowed(fx.service.Resolve(id, "").status());
  ExpectNotAllowed(fx.service.Suppress(id).status());
  CHECK(EventTypes(fx.Stored(id)) == std::vector<E>{E::kDetected});
  CHECK(fx.service.ListSuppressionRules()->empty());
}

TEST_CASE("the lifecycle log stays bounded to fifty through many transitions", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  for (int i = 0; i < 40; ++i) {
    REQUIRE(fx.service.Snooze(id, 1).ok());
    REQUIRE(fx.service.Unsnooze(id).ok());
  }
  const Finding f = fx.Stored(id);
  REQUIRE(f.lifecycle.size() == kMaxLifecycleEvents);
  CHECK(f.lifecycle.front().type == E::kSnoozed);  // `detected` has aged out
  CHECK(f.lifecycle.back().type == E::kUnsnoozed);
}

TEST_CASE("a concurrent write between read and write is retried, not lost", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  fx.store.SetBeforePut([&] { REQUIRE(fx.service.SetNote(id, "from another writer").ok()); });
  auto snoozed = fx.service.Snooze(id, 2);
  REQUIRE(snoozed.ok());
  const Finding f = fx.Stored(id);
  CHECK(f.user_note == "from another writer");
  CHECK(IsSnoozed(f, fx.clock.Now()));
  CHECK(EventTypes(f) == std::vector<E>{E::kDetected, E::kUserNoteUpdated, E::kSnoozed});
}

// A store whose Put, and every write of a PutBatch, always reports a version clash.
class ClashingStore final : public FindingStore {
 public:
  explicit ClashingStore(FindingStore& inner) : inner_(inner) {}
  absl::StatusOr<StoredFinding> Get(std::string_view id) const override { return inner_.Get(id); }
  absl::StatusOr<std::vector<StoredFinding>> GetBatch(
      const std::vector<std::string>& ids) const override {
    return inner_.GetBatch(ids);
  }
  absl::StatusOr<std::vector<StoredFinding>> List(const FindingFilter& f) const override {
    return inner_.List(f);
  }
  absl::StatusOr<std::vector<StoredFinding>> ListPage(const FindingPageQuery& q) const override {
    return inner_.ListPage(q);
  }
  absl::StatusOr<std::vector<ActiveFindingCounts>> CountActiveByResource(
      absl::Time now, const std::vector<std::string>& resource_ids) const override {
    return inner_.CountActiveByResource(now, resource_ids);
  }
  absl::StatusOr<std::vector<ActiveFindingKey>> ListActiveKeys(absl::Time now) const override {
    return inner_.ListActiveKeys(now);
  }
  absl::StatusOr<std::vector<StoredFinding>> ListAwaitingFixOutcome() const override {
    return inner_.ListAwaitingFixOutcome();
  }
  absl::StatusOr<PatrolFindingCounts> CountPatrolFindings(absl::Time since,
                                                          absl::Time now) const override {
    return inner_.CountPatrolFindings(since, now);
  }

  absl::StatusOr<std::int64_t> Put(const Finding&, std::int64_t) override {
    ++puts;
    return absl::AbortedError("clash");
  }
  absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> PutBatch(
      const std::vector<FindingWrite>& writes) override {
    puts += static_cast<int>(writes.size());
    return std::vector<absl::StatusOr<std::int64_t>>(writes.size(), absl::AbortedError("clash"));
  }
  absl::StatusOr<std::vector<SuppressionRule>> ListSuppressionRules() const override {
    return inner_.ListSuppressionRules();
  }
  absl::Status PutSuppressionRule(const SuppressionRule& r) override {
    return inner_.PutSuppressionRule(r);
  }
  absl::Status DeleteSuppressionRule(std::string_view id) override {
    return inner_.DeleteSuppressionRule(id);
  }
  int puts = 0;

 private:
  FindingStore& inner_;
};

TEST_CASE("endless version clashes give up with Aborted after bounded attempts",
          "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  ClashingStore clashing(fx.store);
  FindingsService service(clashing, fx.clock, fx.verifier, fx.metrics);
  auto acked = service.Acknowledge(id);
  REQUIRE_FALSE(acked.ok());
  CHECK(absl::IsAborted(acked.status()));
  CHECK(CodeOf(acked.status()) == AgentErrorCode::kFindingActionNotAllowed);
  CHECK(clashing.puts == kMaxCasAttempts);
  auto report = service.Report(Fixture::MakeReport("vm:5"));
  CHECK(absl::IsAborted(report.status()));
}

TEST_CASE("operations from several threads on one finding all land", "[core][findings]") {
  Fixture fx;
  const std::string id = Seed(fx);
  constexpr int kOps = 20;
  std::atomic<int> failures{0};
  std::thread acker([&] {
    if (!fx.service.Acknowledge(id).ok()) {
      failures.fetch_add(1);
    }
  });
  std::thread noter([&] {
    for (int i = 0; i < kOps; ++i) {
      if (!fx.service.SetNote(id, "note " + std::to_string(i)).ok()) {
        failures.fetch_add(1);
      }
    }
  });
  std::thread reporter([&] {
    for (int i = 0; i < kOps; ++i) {
      if (!fx.service.Report(Fixture::MakeReport()).ok()) {
        failures.fetch_add(1);
      }
    }
  });
  acker.join();
  noter.join();
  reporter.join();
  CHECK(failures.load() == 0);
  const Finding f = fx.Stored(id);
  CHECK(f.acknowledged_at.has_value());
  CHECK(f.user_note == "note " + std::to_string(kOps - 1));
  CHECK(f.times_raised == 1 + kOps);
  CHECK(f.lifecycle.size() == 1 + 1 + kOps);  // detected, acknowledged, one per note
}

TEST_CASE("manual suppression rules need a description and explicit broad scope",
          "[core][findings]") {
  Fixture fx;
  SuppressionRuleRequest request;
  request.resource_id = "vm:1";
  request.category = Category::kBackup;
  auto no_description = fx.service.AddSuppressionRule(request);
  CHECK(absl::IsInvalidArgument(no_description.status()));
  request.description = "backups handled by the NAS";
  auto rule = fx.service.AddSuppressionRule(request);
  REQUIRE(rule.ok());
  CHECK(rule->created_from == SuppressionOrigin::kManual);
  CHECK(rule->created_at == fx.clock.Now());
  CHECK(rule->id == SuppressionRuleIdFor("vm:1", Category::kBackup));
  fx.clock.Advance(absl::Hours(1));
  auto same = fx.service.AddSuppressionRule(request);
  REQUIRE(same.ok());
  CHECK(*same == *rule);  // one scope, one rule

  SuppressionRuleRequest broad;
  broad.category = Category::kBackup;
  broad.description = "all backups";
  auto refused = fx.service.AddSuppressionRule(broad);
  REQUIRE_FALSE(refused.ok());
  CHECK(ToFindingAgentError(refused.status())->details.count("allow_broad_scope") == 1);
  broad.allow_broad_scope = true;
  REQUIRE(fx.service.AddSuppressionRule(broad).ok());
  SuppressionRuleRequest any_category;
  any_category.resource_id = "vm:2";
  any_category.description = "lab box";
  CHECK(absl::IsInvalidArgument(fx.service.AddSuppressionRule(any_category).status()));

  CHECK(fx.service.ListSuppressionRules()->size() == 2);
  REQUIRE(fx.service.DeleteSuppressionRule(rule->id).ok());
  auto gone = fx.service.DeleteSuppressionRule(rule->id);
  CHECK(absl::IsNotFound(gone));
  CHECK(CodeOf(gone) == AgentErrorCode::kFindingNotFound);
  CHECK(fx.service.ListSuppressionRules()->size() == 1);
}

TEST_CASE("list returns active findings unless inactive ones are asked for", "[core][findings]") {
  Fixture fx;
  const std::string a = fx.ReportOk(Fixture::MakeReport("vm:1"));
  const std::string b = fx.ReportOk(Fixture::MakeReport("vm:2", Category::kBackup, "stale"));
  REQUIRE(fx.service.Resolve(a, "").ok());
  auto active = fx.service.List({});
  REQUIRE(active.ok());
  REQUIRE(active->size() == 1);
  CHECK(active->front().id == b);
  FindingQuery all;
  all.include_inactive = true;
  CHECK(fx.service.List(all)->size() == 2);
  FindingQuery by_category;
  by_category.include_inactive = true;
  by_category.category = Category::kPerformance;
  CHECK(fx.service.List(by_category)->front().id == a);
}

}  // namespace
}  // namespace pulse::core::findings_test
