#include "pulse/core/model/finding_types.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "pulse/core/model/finding.h"
#include "pulse/core/ports/finding_verifier.h"

namespace pulse::core {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST_CASE("finding vocabularies round trip exactly and reject near misses", "[core][findings]") {
  std::set<std::string> severities;
  for (Severity s : AllSeverities()) {
    CHECK(ParseSeverity(ToString(s)) == s);
    severities.emplace(ToString(s));
  }
  CHECK(severities == std::set<std::string>{"info", "watch", "warning", "critical"});
  std::set<std::string> categories;
  for (Category c : AllCategories()) {
    CHECK(ParseCategory(ToString(c)) == c);
    categories.emplace(ToString(c));
  }
  CHECK(categories == std::set<std::string>{"performance", "capacity", "reliability", "backup",
                                            "security", "general"});
  for (LoopState s : AllLoopStates()) {
    CHECK(ParseLoopState(ToString(s)) == s);
  }
  CHECK(AllLoopStates().size() == 11);
  for (LifecycleEventType t : AllLifecycleEventTypes()) {
    CHECK(ParseLifecycleEventType(ToString(t)) == t);
  }
  CHECK(AllLifecycleEventTypes().size() == 18);
  CHECK_FALSE(ParseCategory("Capacity").has_value());
  CHECK_FALSE(ParseCategory(" capacity").has_value());
  CHECK_FALSE(ParseCategory("storage").has_value());
  CHECK_FALSE(ParseSeverity("high").has_value());
  CHECK_FALSE(ParseLifecycleEventType("created").has_value());
  CHECK(ParseAssessVerdict("uncertain") == AssessVerdict::kUncertain);
  CHECK_FALSE(ParseAssessVerdict("unknown").has_value());
  CHECK(ParseInvestigationOutcome("fix_verification_unknown") ==
        InvestigationOutcome::kFixVerificationUnknown);
  CHECK(ParseInvestigationOutcome("fix_not_admitted") == InvestigationOutcome::kFixNotAdmitted);
  CHECK(ParseInvestigationStatus("needs_attention") == InvestigationStatus::kNeedsAttention);
  CHECK(ParseVerifierVerdict("signal_gone") == VerifierVerdict::kSignalGone);
  CHECK(ToString(static_cast<Category>(42)) == "unknown");
}

TEST_CASE("severity ranks order info below watch below warning below critical",
          "[core][findings]") {
  CHECK(SeverityRank(Severity::kInfo) == 0);
  CHECK(SeverityRank(Severity::kWatch) == 1);
  CHECK(SeverityRank(Severity::kWarning) == 2);
  CHECK(SeverityRank(Severity::kCritical) == 3);
  CHECK(SeverityRank(static_cast<Severity>(9)) == -1);
}

TEST_CASE("operators may dismiss with three reasons but never as suppressed", "[core][findings]") {
  CHECK(ParseOperatorDismissReason("not_an_issue") == DismissReason::kNotAnIssue);
  CHECK(ParseOperatorDismissReason("expected_behavior") == DismissReason::kExpectedBehavior);
  CHECK(ParseOperatorDismissReason("will_fix_later") == DismissReason::kWillFixLater);
  CHECK_FALSE(ParseOperatorDismissReason("suppressed").has_value());
  CHECK(ParseDismissReason("suppressed") == DismissReason::kSuppressed);
}

TEST_CASE("only performance and capacity findings may resolve by absence", "[core][findings]") {
  for (Category c : AllCategories()) {
    INFO(ToString(c));
    CHECK(CategorySupportsStaleAutoResolve(c) ==
          (c == Category::kPerformance || c == Category::kCapacity));
  }
}

TEST_CASE("a finding is active unless resolved, snoozed, suppressed or dismissed",
          "[core][findings]") {
  Finding f;
  CHECK(IsActive(f, kNow));
  Finding resolved = f;
  resolved.resolved_at = kNow;
  CHECK_FALSE(IsActive(resolved, kNow));
  Finding snoozed = f;
  snoozed.snoozed_until = kNow + absl::Seconds(1);
  CHECK_FALSE(IsActive(snoozed, kNow));
  snoozed.snoozed_until = kNow;  // lapses exactly at the instant
  CHECK(IsActive(snoozed, kNow));
  Finding suppressed = f;
  suppressed.suppressed = true;
  CHECK_FALSE(IsActive(suppressed, kNow));
  Finding dismissed = f;
  dismissed.dismissed_reason = DismissReason::kExpectedBehavior;
  CHECK_FALSE(IsActive(dismissed, kNow));
}

TEST_CASE("loop state derivation follows the wire precedence", "[core][findings]") {
  Finding f;
  CHECK(DeriveLoopState(f, kNow) == LoopState::kDetected);

  Finding all = f;
  all.suppressed = true;
  all.resolved_at = kNow;
  all.snoozed_until = kNow + absl::Hours(1);
  all.dismissed_reason = DismissReason::kNotAnIssue;
  all.investigation_status = InvestigationStatus::kRunning;
  CHECK(DeriveLoopState(all, kNow) == LoopState::kSuppressed);
  all.suppressed = false;
  CHECK(DeriveLoopState(all, kNow) == LoopState::kResolved);
  all.resolved_at.reset();
  CHECK(DeriveLoopState(all, kNow) == LoopState::kSnoozed);
  all.snoozed_until.reset();
  CHECK(DeriveLoopState(all, kNow) == LoopState::kDismissed);
  all.dismissed_reason.reset();
  CHECK(DeriveLoopState(all, kNow) == LoopState::kInvestigating);
  all.investigation_status = InvestigationStatus::kNeedsAttention;
  all.investigation_outcome = InvestigationOutcome::kFixQueued;
  CHECK(DeriveLoopState(all, kNow) == LoopState::kNeedsAttention);

  Finding outcome = f;
  const std::pair<InvestigationOutcome, LoopState> table[] = {
      {InvestigationOutcome::kFixQueued, LoopState::kRemediationPlanned},
      {InvestigationOutcome::kFixExecuted, LoopState::kRemediating},
      {InvestigationOutcome::kFixFailed, LoopState::kRemediationFailed},
      {InvestigationOutcome::kFixVerificationFailed, LoopState::kRemediationFailed},
      {InvestigationOutcome::kFixRejected, LoopState::kNeedsAttention},
      {InvestigationOutcome::kFixVerificationUnknown, LoopState::kNeedsAttention},
      {InvestigationOutcome::kFixNotAdmitted, LoopState::kNeedsAttention},
      {InvestigationOutcome::kNeedsAttention, LoopState::kNeedsAttention},
      {InvestigationOutcome::kCannotFix, LoopState::kNeedsAttention},
      {InvestigationOutcome::kTimedOut, LoopState::kTimedOut},
      {InvestigationOutcome::kFixVerified, LoopState::kResolved},
      {InvestigationOutcome::kResolved, LoopState::kDetected},
  };
  for (const auto& [value, state] : table) {
    INFO(ToString(value));
    outcome.investigation_outcome = value;
    CHECK(DeriveLoopState(outcome, kNow) == state);
  }
}

TEST_CASE("allowed loop transitions match the wire table exactly", "[core][findings]") {
  const std::set<std::pair<LoopState, LoopState>> restricted_allowed = {
      {LoopState::kResolved, LoopState::kDetected},
      {LoopState::kSuppressed, LoopState::kDetected},
      {LoopState::kDismissed, LoopState::kDetected},
      {LoopState::kDismissed, LoopState::kSuppressed},
      {LoopState::kDismissed, LoopState::kResolved},
      {LoopState::kSnoozed, LoopState::kDetected},
      {LoopState::kSnoozed, LoopState::kResolved},
      {LoopState::kSnoozed, LoopState::kSuppressed},
      {LoopState::kSnoozed, LoopState::kDismissed},
  };
  const std::set<LoopState> restricted = {LoopState::kResolved, LoopState::kSuppressed,
                                          LoopState::kDismissed, LoopState::kSnoozed};
  int checked = 0;
  for (LoopState from : AllLoopStates()) {
    for (LoopState to : AllLoopStates()) {
      INFO(ToString(from) << " -> " << ToString(to));
      bool expected = true;
      if (from != to && restricted.count(from) > 0) {
        expected = restricted_allowed.count({from, to}) > 0;
      }
      CHECK(IsLoopTransitionAllowed(from, to) == expected);
      ++checked;
    }
  }
  CHECK(checked == 121);
  CHECK_FALSE(IsLoopTransitionAllowed(static_cast<LoopState>(77), LoopState::kDetected));
}

TEST_CASE("the lifecycle log keeps only the newest fifty events", "[core][findings]") {
  Finding f;
  for (int i = 0; i < 73; ++i) {
    LifecycleEvent e;
    e.at = kNow + absl::Seconds(i);
    e.message = std::to_string(i);
    AppendLifecycleEvent(f, e);
    CHECK(f.lifecycle.size() == std::min<std::size_t>(static_cast<std::size_t>(i) + 1, 50));
  }
  REQUIRE(f.lifecycle.size() == kMaxLifecycleEvents);
  CHECK(f.lifecycle.front().message == "23");
  CHECK(f.lifecycle.back().message == "72");
}

TEST_CASE("the runtime finding is recognized by resource and key", "[core][findings]") {
  Finding f;
  f.resource_id = "ai-service";
  f.key = "ai-patrol-error";
  CHECK(IsRuntimeFinding(f));
  f.key = "cpu-high";
  CHECK_FALSE(IsRuntimeFinding(f));
}

}  // namespace
}  // namespace pulse::core
