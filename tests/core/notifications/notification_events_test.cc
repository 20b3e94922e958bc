// Which writes are notifications (core/notifications/notification_events.h), the channel
// filter, the idempotency key and the retry schedule: pure functions, tested on values.
#include "pulse/core/notifications/notification_events.h"

#include <catch2/catch.hpp>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "pulse/core/json/json.h"
#include "pulse/core/model/notification.h"

namespace pulse::core {
namespace {

absl::Time T0() { return absl::FromUnixSeconds(1'800'000'000); }

Finding Open(Severity severity) {
  Finding f;
  f.id = "f-1";
  f.title = "disk almost full";
  f.severity = severity;
  f.resource_id = "vm:101";
  f.resource_name = "db-01";
  f.detected_at = T0();
  f.last_seen_at = T0() + absl::Minutes(3);
  return f;
}

TEST_CASE("a created finding is announced once by its id, the runtime finding as provider.unusable",
          "[core][notifications]") {
  const std::optional<NotificationEvent> created =
      FindingWriteEvent(std::nullopt, Open(Severity::kWarning));
  REQUIRE(created.has_value());
  CHECK(created->kind == NotificationEventKind::kFindingCreated);
  CHECK(created->key == "finding.created:f-1");
  CHECK(created->severity == Severity::kWarning);
  CHECK(created->resource_id == "vm:101");
  CHECK(created->subject_id == "f-1");
  CHECK(created->occurred_at == T0() + absl::Minutes(3));
  CHECK(created->message.find("db-01 (vm:101)") != std::string::npos);

  Finding runtime = Open(Severity::kWarning);
  runtime.resource_id = kRuntimeFindingResourceId;
  runtime.key = kRuntimeFindingKey;
  const std::optional<NotificationEvent> provider = FindingWriteEvent(std::nullopt, runtime);
  REQUIRE(provider.has_value());
  CHECK(provider->kind == NotificationEventKind::kProviderUnusable);
  CHECK(provider->severity == Severity::kCritical);

  // Created already suppressed, resolved or dismissed: nothing to tell.
  Finding suppressed = Open(Severity::kCritical);
  suppressed.suppressed = true;
  CHECK_FALSE(FindingWriteEvent(std::nullopt, suppressed).has_value());
  Finding resolved = Open(Severity::kCritical);
  resolved.resolved_at = T0();
  CHECK_FALSE(FindingWriteEvent(std::nullopt, resolved).has_value());
}

TEST_CASE("regressions and escalations are events, heartbeats and de-escalations are not",
          "[core][notifications]") {
  const FindingBefore open_warning{Severity::kWarning, false, 0};
  CHECK_FALSE(FindingWriteEvent(open_warning, Open(Severity::kWarning)).has_value());
  CHECK_FALSE(
      FindingWriteEvent(FindingBefore{Severity::kCritical, false, 0}, Open(Severity::kWarning))
          .has_value());
  const std::optional<NotificationEvent> up =
      FindingWriteEvent(open_warning, Open(Severity::kCritical));
  REQUIRE(up.has_value());
  CHECK(up->kind == NotificationEventKind::kFindingEscalated);
  CHECK(up->key == "finding.escalated:f-1:critical:0");
  CHECK(up->severity == Severity::kCritical);

  Finding again = Open(Severity::kWarning);
  again.regression_count = 2;
  const std::optional<NotificationEvent> regressed =
      FindingWriteEvent(FindingBefore{Severity::kWarning, true, 1}, again);
  REQUIRE(regressed.has_value());
  CHECK(regressed->kind == NotificationEventKind::kFindingRegressed);
  CHECK(regressed->key == "finding.regressed:f-1:2");
  // Resolving is not announced.
  Finding resolving = Open(Severity::kWarning);
  resolving.resolved_at = T0();
  CHECK_FALSE(FindingWriteEvent(open_warning, resolving).has_value());
}

TEST_CASE("a dismissed finding made active again is announced under its created key",
          "[core][notifications]") {
  const FindingBefore dismissed{Severity::kWarning, false, 0, true};
  // Still dismissed (operator intent holds, a sighting): nothing, whatever its severity.
  Finding still = Open(Severity::kCritical);
  still.dismissed_reason = DismissReason::kExpectedBehavior;
  CHECK_FALSE(FindingWriteEvent(dismissed, still).has_value());
  // Woken at the same severity: finding.created, once per finding by its key.
  const std::optional<NotificationEvent> woken =
      FindingWriteEvent(dismissed, Open(Severity::kWarning));
  REQUIRE(woken.has_value());
  CHECK(woken->kind == NotificationEventKind::kFindingCreated);
  CHECK(woken->key == "finding.created:f-1");
  CHECK(woken->title == "Finding active again: disk almost full");
  // Woken worse: the escalation says more.
  const std::optional<NotificationEvent> worse =
      FindingWriteEvent(dismissed, Open(Severity::kCritical));
  REQUIRE(worse.has_value());
  CHECK(worse->kind == NotificationEventKind::kFindingEscalated);
}

ActionRecord Action(ActionState state) {
  ActionRecord r;
  r.plan.action_id = "act_1";
  r.request.resource_id = "vm:101";
  r.request.capability_name = "restart";
  r.request.reason = "hung";
  r.plan.risk = ActionRisk::kMedium;
  r.state = state;
  r.updated_at = T0();
  return r;
}

TEST_CASE("actions are announced when they wait for approval and when they end",
          "[core][notifications]") {
  const std::optional<NotificationEvent> pending =
      ActionWriteEvent(ActionState::kPlanned, Action(ActionState::kPendingApproval));
  REQUIRE(pending.has_value());
  CHECK(pending->kind == NotificationEventKind::kApprovalPending);
  CHECK(pending->key == "approval.pending:act_1:0");
  CHECK(pending->severity == Severity::kWarning);
  CHECK_FALSE(ActionWriteEvent(ActionState::kPendingApproval, Action(ActionState::kPendingApproval))
                  .has_value());
  CHECK_FALSE(
      ActionWriteEvent(ActionState::kPendingApproval, Action(ActionState::kApproved)).has_value());

  ActionRecord done = Action(ActionState::kCompleted);
  done.result.emplace();
  done.result->execution.status = ExecutionStatus::kSucceeded;
  done.result->verification.status = VerificationStatus::kConfirmed;
  CHECK(ActionWriteEvent(ActionState::kExecuting, done)->kind ==
        NotificationEventKind::kActionCompleted);
  CHECK(ActionWriteEvent(ActionState::kExecuting, done)->severity == Severity::kInfo);
  done.result->verification.status = VerificationStatus::kInconclusive;
  CHECK(ActionWriteEvent(ActionState::kExecuting, done)->kind ==
        NotificationEventKind::kActionInconclusive);
  ActionRecord failed = Action(ActionState::kFailed);
  failed.result.emplace();
  failed.result->execution.status = ExecutionStatus::kFailed;
  failed.result->error_message = "exit 1";
  const std::optional<NotificationEvent> f = ActionWriteEvent(ActionState::kExecuting, failed);
  REQUIRE(f.has_value());
  CHECK(f->kind == NotificationEventKind::kActionFailed);
  CHECK(f->key == "action.failed:act_1");
  CHECK(f->message.find("exit 1") != std::string::npos);
}

TEST_CASE("a channel wants an event at or above its floor, of a kind it lists",
          "[core][notifications]") {
  NotificationChannel c;
  c.name = "ops";
  NotificationEvent e;
  e.kind = NotificationEventKind::kFindingCreated;
  e.severity = Severity::kWarning;
  CHECK(ChannelWants(c, e));
  e.severity = Severity::kWatch;
  CHECK_FALSE(ChannelWants(c, e));
  c.min_severity = Severity::kInfo;
  CHECK(ChannelWants(c, e));
  c.events = {NotificationEventKind::kApprovalPending};
  CHECK_FALSE(ChannelWants(c, e));
  c.enabled = false;
  e.kind = NotificationEventKind::kApprovalPending;
  CHECK_FALSE(ChannelWants(c, e));
  CHECK(ValidateChannelName("ops-1_a").ok());
  for (const char* bad : {"", "Ops", "a b", "../x", "a\n", "x.y"}) {
    CHECK_FALSE(ValidateChannelName(bad).ok());
  }
  CHECK_FALSE(ValidateChannelName(std::string(49, 'a')).ok());
}

TEST_CASE("an email address is a bare addr-spec that cannot end an SMTP command or a header",
          "[core][notifications][email]") {
  for (const char* good : {"ops@lab.example", "a.b+tag@x-y.example", "o@localhost", "x@1.2.3.4"}) {
    INFO(good);
    CHECK(ValidateEmailAddress(good).ok());
  }
  for (const std::string& bad :
       std::vector<std::string>{"",
                                "ab",
                                "ops",
                                "@lab.example",
                                "ops@",
                                "a@@b.c",
                                "a@b@c.d",
                                "<ops@lab.example>",
                                "ops@lab.example>",
                                "a b@lab.example",
                                "a@lab .example",
                                "a\r\n@lab.example",
                                "ops@lab.example\r\nRCPT TO:<evil@x.example>",
                                "\"a\"@lab.example",
                                "a,b@lab.example",
                                "a;b@lab.example",
                                "a(b)@lab.example",
                                "a\\b@lab.example",
                                "a:b@lab.example",
                                "ops@.lab.example",
                                "ops@lab.example.",
                                "ops@lab..example",
                                "ops@lab_x.example",
                                "ops@[127.0.0.1]",
                                "\xc3\xa9@lab.example",
                                std::string(65, 'a') + "@lab.example",
                                "a@" + std::string(253, 'b')}) {
    INFO(bad);
    CHECK(absl::IsInvalidArgument(ValidateEmailAddress(bad)));
  }
  EmailAddressing ok{"pulse@lab.example", {"a@lab.example"}, "user"};
  CHECK(ValidateEmailAddressing(ok).ok());
  EmailAddressing none = ok;
  none.to.clear();
  CHECK_FALSE(ValidateEmailAddressing(none).ok());
  EmailAddressing twice = ok;
  twice.to.push_back("a@lab.example");
  CHECK_FALSE(ValidateEmailAddressing(twice).ok());
  EmailAddressing many = ok;
  many.to.clear();
  for (int i = 0; i <= 10; ++i) {
    many.to.push_back("r" + std::to_string(i) + "@lab.example");
  }
  CHECK_FALSE(ValidateEmailAddressing(many).ok());
  many.to.pop_back();
  CHECK(ValidateEmailAddressing(many).ok());
  EmailAddressing control = ok;
  control.username = "user\r\nAUTH";
  CHECK_FALSE(ValidateEmailAddressing(control).ok());
  EmailAddressing bad_from = ok;
  bad_from.from = "pulse";
  CHECK(std::string(ValidateEmailAddressing(bad_from).message()).rfind("email.from", 0) == 0);
}

TEST_CASE("the idempotency key is stable per channel and event key, and the payload carries it",
          "[core][notifications]") {
  const std::string k = NotificationIdempotencyKey("ops", "finding.created:f-1");
  CHECK(k == NotificationIdempotencyKey("ops", "finding.created:f-1"));
  CHECK(k.size() == 4 + 32);
  CHECK(k.rfind("ntf_", 0) == 0);
  std::set<std::string> keys = {k, NotificationIdempotencyKey("ops2", "finding.created:f-1"),
                                NotificationIdempotencyKey("ops", "finding.created:f-2"),
                                NotificationIdempotencyKey("op", "sfinding.created:f-1")};
  CHECK(keys.size() == 4);
  NotificationEvent e;
  e.kind = NotificationEventKind::kFindingCreated;
  e.key = "finding.created:f-1";
  e.title = "t \"quoted\"";
  e.occurred_at = T0();
  rapidjson::Document payload = *ParseJson(NotificationPayloadJson("ops", k, e));
  CHECK(StringViewOf(payload["idempotency_key"]) == k);
  CHECK(StringViewOf(payload["event"]) == "finding.created");
  CHECK(StringViewOf(payload["title"]) == "t \"quoted\"");
  CHECK(StringViewOf(payload["occurred_at"]) == "2027-01-15T08:00:00Z");
}

TEST_CASE("retries back off exponentially with bounded jitter, then the row is dead",
          "[core][notifications]") {
  const RetryPolicy policy;  // 8 attempts, 2 s, at most 10 min
  CHECK(*RetryDelay(policy, 1, 0.999999) <= absl::Seconds(2));
  CHECK(*RetryDelay(policy, 1, 0.0) == absl::Seconds(1));
  CHECK(*RetryDelay(policy, 3, 1.0) == absl::Seconds(8));
  absl::Duration previous = absl::ZeroDuration();
  for (int n = 1; n < policy.max_attempts; ++n) {
    const absl::Duration d = *RetryDelay(policy, n, 1.0);
    CHECK(d >= previous);
    CHECK(d <= policy.max_delay);
    CHECK(*RetryDelay(policy, n, 0.0) >= d / 2);
    previous = d;
  }
  CHECK_FALSE(RetryDelay(policy, policy.max_attempts, 0.5).has_value());
  RetryPolicy tiny{3, absl::Minutes(8), absl::Minutes(10)};
  CHECK(*RetryDelay(tiny, 2, 1.0) == absl::Minutes(10));  // capped
  CHECK(*RetryDelay(policy, 1, std::numeric_limits<double>::quiet_NaN()) == absl::Seconds(1));
}

}  // namespace
}  // namespace pulse::core
