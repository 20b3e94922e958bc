// The notification outbox in SQLite (migration 13): the finding, action and Patrol run stores
// queue a notification in the same transaction as the write that caused it (and a write that
// does not commit queues nothing); one row per channel that wants the event, never two per
// (channel, event key); rows move pending -> delivered | dead only; channel secrets are sealed
// and kept across a PUT that does not name them.
#include "pulse/adapters/storage/sqlite_notification_outbox.h"

#include <SQLiteCpp/Database.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "contracts/action_store_contract.h"
#include "pulse/adapters/storage/secret_box.h"
#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/adapters/storage/sqlite_credential_store.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/adapters/storage/sqlite_notification_channels.h"
#include "pulse/adapters/storage/sqlite_operator_state_store.h"
#include "pulse/adapters/storage/sqlite_patrol_run_store.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/json/json.h"
#include "pulse/core/model/operator_state.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_finding_verifier.h"
#include "pulse/testing/in_memory_metrics_history.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::NotificationChannelWrite;
using adapters::storage::SecretBox;
using adapters::storage::SqliteCredentialStore;
using adapters::storage::SqliteDatabase;
using adapters::storage::SqliteFindingStore;
using adapters::storage::SqliteNotificationChannels;
using adapters::storage::SqliteNotificationOutbox;

absl::Time T0() { return absl::FromUnixSeconds(1'800'000'000); }

// A database with its credential store, channels and outbox.
struct Fixture {
  TempDir dir;
  std::unique_ptr<SqliteDatabase> db = MustOpen(dir.File("pulse.db"));
  std::unique_ptr<SecretBox> box = *SecretBox::Open(dir.File("secret.key"));
  SqliteCredentialStore credentials{*db, *box};
  SqliteNotificationChannels channels{*db, credentials};
  SqliteNotificationOutbox outbox{*db};

  void SetChannels(std::vector<NotificationChannelWrite> writes) {
    REQUIRE(channels.Replace(writes, T0(), "tester").ok());
  }
  std::vector<core::OutboxEntry> All() {
    absl::StatusOr<std::vector<core::OutboxEntry>> rows = outbox.List(std::nullopt, 1000);
    REQUIRE(rows.ok());
    return *rows;
  }
};

NotificationChannelWrite Webhook(const std::string& name,
                                 core::Severity floor = core::Severity::kWarning,
                                 std::vector<core::NotificationEventKind> events = {}) {
  NotificationChannelWrite w;
  w.channel.name = name;
  w.channel.kind = core::NotificationChannelKind::kWebhook;
  w.channel.min_severity = floor;
  w.channel.events = std::move(events);
  w.url = "http://127.0.0.1:9/" + name;
  return w;
}

core::Finding MakeFinding(const std::string& id, core::Severity severity) {
  core::Finding f;
  f.id = id;
  f.key = "k-" + id;
  f.severity = severity;
  f.category = core::Category::kReliability;
  f.resource_id = "vm:101";
  f.title = "finding " + id;
  f.detected_at = T0();
  f.last_seen_at = T0();
  f.times_raised = 1;
  return f;
}

TEST_CASE("a finding write queues its notification for each channel that wants it, once",
          "[adapters][storage][notifications]") {
  Fixture fx;
  SqliteFindingStore findings(*fx.db);
  // No channel: nothing is queued.
  REQUIRE(findings.Put(MakeFinding("quiet", core::Severity::kCritical), 0).ok());
  CHECK(fx.All().empty());

  fx.SetChannels({Webhook("ops"), Webhook("all", core::Severity::kInfo),
                  Webhook("regress", core::Severity::kInfo,
                          {core::NotificationEventKind::kFindingRegressed})});
  core::Finding f = MakeFinding("f1", core::Severity::kWarning);
  REQUIRE(findings.Put(f, 0).ok());
  std::vector<core::OutboxEntry> rows = fx.All();
  REQUIRE(rows.size() == 2);  // ops and all; not regress
  for (const core::OutboxEntry& row : rows) {
    CHECK(row.event.kind == core::NotificationEventKind::kFindingCreated);
    CHECK(row.event.key == "finding.created:f1");
    CHECK(row.event.subject_id == "f1");
    CHECK(row.state == core::OutboxState::kPending);
    CHECK(row.attempts == 0);
    CHECK(row.idempotency_key == core::NotificationIdempotencyKey(row.channel, row.event.key));
    rapidjson::Document payload = *core::ParseJson(row.payload_json);
    CHECK(core::StringViewOf(payload["idempotency_key"]) == row.idempotency_key);
  }

  // A heartbeat (same severity) and a lost compare queue nothing.
  f.last_seen_at += absl::Minutes(1);
  REQUIRE(findings.Put(f, 1).ok());
  CHECK_FALSE(findings.Put(f, 1).ok());  // stale version: Aborted, nothing written
  CHECK(fx.All().size() == 2);

  // Escalation: once per severity.
  f.severity = core::Severity::kCritical;
  REQUIRE(findings.Put(f, 2).ok());
  CHECK(fx.All().size() == 4);
  f.severity = core::Severity::kWarning;
  REQUIRE(findings.Put(f, 3).ok());
  f.severity = core::Severity::kCritical;
  REQUIRE(findings.Put(f, 4).ok());
  CHECK(fx.All().size() == 4);  // the same escalation key: not again

  // Resolved, then detected again: a regression, for all three channels.
  f.resolved_at = T0() + absl::Hours(1);
  REQUIRE(findings.Put(f, 5).ok());
  CHECK(fx.All().size() == 4);
  f.resolved_at.reset();
  f.regression_count = 1;
  REQUIRE(findings.Put(f, 6).ok());
  rows = fx.All();
  REQUIRE(rows.size() == 7);
  CHECK(rows[0].event.kind == core::NotificationEventKind::kFindingRegressed);
  CHECK(rows[0].event.key == "finding.regressed:f1:1");

  // An info finding passes only the info floor.
  REQUIRE(findings.Put(MakeFinding("f2", core::Severity::kInfo), 0).ok());
  rows = fx.All();
  REQUIRE(rows.size() == 8);
  CHECK(rows[0].channel == "all");
}

// The findings service over the SQLite finding and operator state stores: what Patrol's
// reports go through in pulse-server.
struct IntentFixture : Fixture {
  testing::FakeClock clock{T0()};
  testing::FakeFindingVerifier verifier;
  testing::InMemoryMetricsHistory metrics;
  SqliteFindingStore findings{*db};
  adapters::storage::SqliteOperatorStateStore operator_state{*db};
  core::FindingsService service{findings, clock, verifier, metrics, &operator_state};

  // Declares `resource_id` quiet for `cause` (docs/patrol.md "Operator intent and maintenance").
  void Quiet(const std::string& resource_id, core::OperatorStateCause cause) {
    core::OperatorState s;
    s.resource_id = resource_id;
    if (cause == core::OperatorStateCause::kIntentionallyOffline) {
      s.intentionally_offline = true;
      s.monitoring_mode = core::MonitoringMode::kExpectedOffline;
    } else if (cause == core::OperatorStateCause::kMuted) {
      s.monitoring_mode = core::MonitoringMode::kMuted;
    } else {
      s.maintenance_start_at = clock.Now() - absl::Minutes(1);
      s.maintenance_end_at = clock.Now() + absl::Hours(2);
    }
    s.set_at = clock.Now();
    s.set_by = "tok_operator";
    REQUIRE(operator_state.Set(s).ok());
  }

  core::ReportOutcome Report(const std::string& resource_id, core::Severity severity) {
    core::FindingReport r;
    r.resource_id = resource_id;
    r.resource_name = resource_id;
    r.resource_type = "vm";
    r.category = core::Category::kPerformance;
    r.severity = severity;
    r.key = "cpu-high";
    r.title = "High CPU usage on " + resource_id;
    r.description = "CPU has been above 95% for 40 minutes.";
    r.recommendation = "Check the top processes.";
    r.evidence = "pulse_metrics: cpu 97% avg over 40m";
    absl::StatusOr<core::ReportOutcome> outcome = service.Report(r);
    REQUIRE(outcome.ok());
    return *outcome;
  }
};

TEST_CASE(
    "a finding operator intent keeps dismissed queues no notification, created or escalated, "
    "until the intent lifts",
    "[adapters][storage][notifications][operator_state]") {
  IntentFixture fx;
  fx.SetChannels({Webhook("ops", core::Severity::kInfo)});

  // Created dismissed (expected_behavior, operator_state_cause) under each cause: no row.
  fx.Quiet("vm:201", core::OperatorStateCause::kMaintenanceWindow);
  fx.Quiet("vm:202", core::OperatorStateCause::kIntentionallyOffline);
  fx.Quiet("vm:203", core::OperatorStateCause::kMuted);
  for (const char* id : {"vm:201", "vm:202", "vm:203"}) {
    INFO(id);
    CHECK(fx.Report(id, core::Severity::kCritical).disposition ==
          core::ReportDisposition::kDismissedByOperatorState);
  }
  CHECK(fx.All().empty());

  // The same report on a resource without intent is announced: the outbox is listening.
  const std::string active = fx.Report("vm:101", core::Severity::kWarning).finding_id;
  std::vector<core::OutboxEntry> rows = fx.All();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].event.key == "finding.created:" + active);

  // An active finding whose resource goes into maintenance, reported worse: it is dismissed in
  // the write that raises its severity, which escalates nothing; nor do later sightings.
  fx.clock.Advance(absl::Minutes(5));
  fx.Quiet("vm:101", core::OperatorStateCause::kMaintenanceWindow);
  CHECK(fx.Report("vm:101", core::Severity::kCritical).disposition ==
        core::ReportDisposition::kDismissedByOperatorState);
  fx.clock.Advance(absl::Minutes(5));
  CHECK(fx.Report("vm:101", core::Severity::kCritical).disposition ==
        core::ReportDisposition::kSeenWhileSuppressed);
  CHECK(fx.All().size() == 1);

  // Once the intent lifts, a finding still detected wakes and becomes active: one created dismissed
  // (never announced) is announced now; the one announced before is not announced again.
  for (const char* id : {"vm:101", "vm:202"}) {
    REQUIRE(fx.operator_state.Clear(id).ok());
  }
  fx.clock.Advance(absl::Minutes(5));
  const core::ReportOutcome woke = fx.Report("vm:202", core::Severity::kCritical);
  CHECK(woke.disposition == core::ReportDisposition::kReactivated);
  CHECK(fx.Report("vm:101", core::Severity::kCritical).disposition ==
        core::ReportDisposition::kReactivated);
  rows = fx.All();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].event.key == "finding.created:" + woke.finding_id);
  CHECK(rows[0].event.title == "Finding active again: High CPU usage on vm:202");
  CHECK(rows[0].event.severity == core::Severity::kCritical);
}

TEST_CASE("a batch that rolls back queues nothing, and a batch's lost compares queue nothing",
          "[adapters][storage][notifications]") {
  Fixture fx;
  SqliteFindingStore findings(*fx.db);
  fx.SetChannels({Webhook("ops")});
  REQUIRE(findings.Put(MakeFinding("a", core::Severity::kWarning), 0).ok());
  absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> batch =
      findings.PutBatch({{MakeFinding("a", core::Severity::kCritical), 7},  // stale: Aborted
                         {MakeFinding("b", core::Severity::kWarning), 0}});
  REQUIRE(batch.ok());
  CHECK_FALSE((*batch)[0].ok());
  CHECK((*batch)[1].ok());
  std::vector<core::OutboxEntry> rows = fx.All();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].event.key == "finding.created:b");
  CHECK(rows[1].event.key == "finding.created:a");
}

TEST_CASE("actions entering pending_approval or a terminal state queue their notifications",
          "[adapters][storage][notifications]") {
  namespace c = action_store_contract;
  Fixture fx;
  adapters::storage::SqliteActionStore actions(*fx.db);
  fx.SetChannels({Webhook("ops", core::Severity::kInfo)});
  const core::ActionRecord pending = c::NewRecord("p1", true);
  REQUIRE(actions.InsertIfAbsent(pending, c::InitialEvents(pending)).ok());
  REQUIRE(actions.InsertIfAbsent(pending, c::InitialEvents(pending)).ok());  // idempotent
  std::vector<core::OutboxEntry> rows = fx.All();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].event.kind == core::NotificationEventKind::kApprovalPending);
  CHECK(rows[0].event.severity == core::Severity::kCritical);  // a high-risk plan
  CHECK(rows[0].event.subject_id == "act_p1");
  CHECK(rows[0].event.resource_id == "vm:101");

  // A planned action needs nobody: nothing; its move to expired neither.
  const core::ActionRecord planned = c::NewRecord("p2", false);
  REQUIRE(actions.InsertIfAbsent(planned, c::InitialEvents(planned)).ok());
  REQUIRE(actions.Transition(c::Move(planned, core::ActionState::kExpired, T0())).ok());
  CHECK(fx.All().size() == 1);
}

TEST_CASE("a Patrol run recorded with an error queues patrol.run_error once",
          "[adapters][storage][notifications]") {
  Fixture fx;
  adapters::storage::SqlitePatrolRunStore runs(*fx.db);
  fx.SetChannels({Webhook("ops")});
  core::PatrolRunRecord run;
  run.id = "run-1";
  run.started_at = T0();
  REQUIRE(runs.Put(run).ok());
  CHECK(fx.All().empty());
  run.status = core::PatrolRunStatus::kError;
  run.completed_at = T0() + absl::Seconds(3);
  run.error_summary = "the provider refused the key";
  REQUIRE(runs.Put(run).ok());
  REQUIRE(runs.Put(run).ok());
  const std::vector<core::OutboxEntry> rows = fx.All();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].event.kind == core::NotificationEventKind::kPatrolRunError);
  CHECK(rows[0].event.title.find("the provider refused the key") != std::string::npos);
}

TEST_CASE("outbox rows move from pending to delivered or dead, and only from pending",
          "[adapters][storage][notifications]") {
  Fixture fx;
  fx.SetChannels({Webhook("a"), Webhook("b")});
  core::NotificationEvent e;
  e.kind = core::NotificationEventKind::kProviderUnusable;
  e.key = "provider.unusable:x:0";
  e.severity = core::Severity::kCritical;
  e.title = "provider unusable";
  e.occurred_at = T0();
  absl::StatusOr<int> added = fx.outbox.Enqueue(e, T0());
  REQUIRE(added.ok());
  CHECK(*added == 2);
  CHECK(*fx.outbox.Enqueue(e, T0()) == 0);  // the same key again: nothing

  std::vector<core::OutboxEntry> due = *fx.outbox.Due(T0(), 10);
  REQUIRE(due.size() == 2);
  CHECK(**fx.outbox.NextDue() == T0());
  // a: fails, retried in a minute; b: delivered.
  REQUIRE(fx.outbox.MarkFailed(due[0].id, "refused", T0() + absl::Minutes(1)).ok());
  REQUIRE(fx.outbox.MarkDelivered(due[1].id, T0() + absl::Seconds(1)).ok());
  CHECK(fx.outbox.Due(T0() + absl::Seconds(30), 10)->empty());
  due = *fx.outbox.Due(T0() + absl::Minutes(1), 10);
  REQUIRE(due.size() == 1);
  CHECK(due[0].attempts == 1);
  CHECK(due[0].last_error == "refused");
  // Deferred without counting an attempt.
  REQUIRE(fx.outbox.Defer(due[0].id, T0() + absl::Hours(1)).ok());
  CHECK(**fx.outbox.NextDue() == T0() + absl::Hours(1));
  CHECK(fx.outbox.Due(T0() + absl::Hours(1), 10)->at(0).attempts == 1);
  // Dead: never due again, and nothing moves it back.
  REQUIRE(fx.outbox.MarkFailed(due[0].id, "gave up", std::nullopt).ok());
  CHECK_FALSE(fx.outbox.NextDue()->has_value());
  CHECK(absl::IsFailedPrecondition(fx.outbox.MarkDelivered(due[0].id, T0())));
  CHECK(absl::IsFailedPrecondition(fx.outbox.Defer(due[0].id, T0())));
  CHECK(absl::IsNotFound(fx.outbox.MarkDelivered(999, T0())));
  const core::OutboxCounts counts = *fx.outbox.Counts();
  CHECK(counts == core::OutboxCounts{0, 1, 1});
  const std::vector<core::OutboxEntry> dead = *fx.outbox.List(core::OutboxState::kDead, 10);
  REQUIRE(dead.size() == 1);
  CHECK(dead[0].attempts == 2);
  CHECK(dead[0].last_error == "gave up");
}

TEST_CASE("pruning deletes old delivered and dead rows and never a pending one",
          "[adapters][storage][notifications]") {
  Fixture fx;
  fx.SetChannels({Webhook("a")});
  const auto queue = [&fx](const std::string& key, absl::Time at) {
    core::NotificationEvent e;
    e.kind = core::NotificationEventKind::kProviderUnusable;
    e.key = key;
    e.severity = core::Severity::kCritical;
    e.title = "t";
    e.occurred_at = at;
    REQUIRE(*fx.outbox.Enqueue(e, at) == 1);
    return fx.outbox.List(std::nullopt, 1)->at(0).id;
  };
  // Queued on day 0: one delivered on day 0, one dead, one pending forever; and on day 9 one
  // delivered then.
  const std::int64_t old_delivered = queue("k:1", T0());
  const std::int64_t dead = queue("k:2", T0());
  const std::int64_t pending = queue("k:3", T0());
  const std::int64_t recent = queue("k:4", T0() + absl::Hours(24 * 9));
  REQUIRE(fx.outbox.MarkDelivered(old_delivered, T0()).ok());
  REQUIRE(fx.outbox.MarkFailed(dead, "gave up", std::nullopt).ok());
  REQUIRE(fx.outbox.MarkDelivered(recent, T0() + absl::Hours(24 * 9)).ok());
  // Day 10, keeping delivered rows 7 days and dead ones 30: only the old delivered one goes.
  const absl::Time day10 = T0() + absl::Hours(24 * 10);
  CHECK(*fx.outbox.Prune(day10 - absl::Hours(24 * 7), day10 - absl::Hours(24 * 30)) == 1);
  CHECK(*fx.outbox.Counts() == core::OutboxCounts{1, 1, 1});
  // Day 40: the dead one and the recent delivered one too; the pending row stays.
  const absl::Time day40 = T0() + absl::Hours(24 * 40);
  CHECK(*fx.outbox.Prune(day40 - absl::Hours(24 * 7), day40 - absl::Hours(24 * 30)) == 2);
  CHECK(*fx.outbox.Counts() == core::OutboxCounts{1, 0, 0});
  CHECK(fx.outbox.List(std::nullopt, 10)->at(0).id == pending);
  CHECK(*fx.outbox.Prune(absl::InfiniteFuture(), absl::InfiniteFuture()) == 0);
}

TEST_CASE("channel secrets are sealed, kept when not named, and removed with their channel",
          "[adapters][storage][notifications]") {
  Fixture fx;
  NotificationChannelWrite slack;
  slack.channel.name = "chat";
  slack.channel.kind = core::NotificationChannelKind::kSlack;
  slack.url = "https://hooks.slack.com/services/T0/B0/secretpart";
  NotificationChannelWrite hook = Webhook("ops");
  hook.secret.emplace("hmac-key");
  fx.SetChannels({slack, hook});

  std::vector<adapters::storage::StoredNotificationChannel> listed = *fx.channels.List();
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].channel.name == "chat");
  CHECK(listed[0].url.empty());  // the URL is the credential
  CHECK(listed[0].url_set);
  CHECK_FALSE(listed[0].secret_set);
  CHECK(listed[1].url == "http://127.0.0.1:9/ops");
  CHECK(listed[1].secret_set);
  CHECK(fx.channels.Target("chat")->url == slack.url);
  CHECK(fx.channels.Target("ops")->secret == "hmac-key");
  // Plaintext never reaches the database file.
  const std::string raw =
      ReadFileBytes(fx.dir.File("pulse.db")) + ReadFileBytes(fx.dir.File("pulse.db-wal"));
  CHECK(raw.find("secretpart") == std::string::npos);
  CHECK(raw.find("hmac-key") == std::string::npos);

  // Named again without url or secret: both kept.
  NotificationChannelWrite kept;
  kept.channel = slack.channel;
  NotificationChannelWrite kept_hook;
  kept_hook.channel = hook.channel;
  fx.SetChannels({kept, kept_hook});
  CHECK(fx.channels.Target("chat")->url == slack.url);
  CHECK(fx.channels.Target("ops")->secret == "hmac-key");

  // Refused whole: a new channel without a url, a duplicate name, a bad name.
  NotificationChannelWrite no_url;
  no_url.channel.name = "new";
  CHECK(absl::IsInvalidArgument(fx.channels.Replace({kept, no_url}, T0(), "t")));
  CHECK(absl::IsInvalidArgument(fx.channels.Replace({kept, kept}, T0(), "t")));
  NotificationChannelWrite bad = Webhook("Bad Name");
  CHECK(absl::IsInvalidArgument(fx.channels.Replace({bad}, T0(), "t")));
  CHECK(fx.channels.List()->size() == 2);

  // Removed: its secrets go with it.
  fx.SetChannels({kept});
  CHECK(absl::IsNotFound(fx.channels.Target("ops").status()));
  CHECK(absl::IsNotFound(fx.credentials.Get("notify.ops").status()));
  fx.SetChannels({});
  CHECK(absl::IsNotFound(fx.credentials.Get("notify.chat.url").status()));
}

TEST_CASE("an email channel keeps its addressing and password, and migration 14 keeps old channels",
          "[adapters][storage][notifications][email]") {
  Fixture fx;
  NotificationChannelWrite mail;
  mail.channel.name = "mail";
  mail.channel.kind = core::NotificationChannelKind::kEmail;
  mail.channel.email =
      core::EmailAddressing{"pulse@lab.example", {"a@lab.example", "b@lab.example"}, "mailer"};
  mail.url = "smtp://mail.lab.example:587";
  mail.secret.emplace("smtp-password-1");
  fx.SetChannels({mail, Webhook("ops")});
  absl::StatusOr<adapters::storage::NotificationTarget> target = fx.channels.Target("mail");
  REQUIRE(target.ok());
  CHECK(target->channel.email == mail.channel.email);
  CHECK(target->url == "smtp://mail.lab.example:587");
  CHECK(target->secret == "smtp-password-1");
  CHECK_FALSE(fx.channels.Target("ops")->channel.email.has_value());
  const std::string raw =
      ReadFileBytes(fx.dir.File("pulse.db")) + ReadFileBytes(fx.dir.File("pulse.db-wal"));
  CHECK(raw.find("smtp-password-1") == std::string::npos);

  // Addressing must match the kind, and hold.
  NotificationChannelWrite without = mail;
  without.channel.email.reset();
  CHECK(absl::IsInvalidArgument(fx.channels.Replace({without}, T0(), "t")));
  NotificationChannelWrite on_webhook = Webhook("ops");
  on_webhook.channel.email = mail.channel.email;
  CHECK(absl::IsInvalidArgument(fx.channels.Replace({on_webhook}, T0(), "t")));
  NotificationChannelWrite bad_to = mail;
  bad_to.channel.email->to = {"x@lab.example\r\nRCPT TO:<e@x.example>"};
  CHECK(absl::IsInvalidArgument(fx.channels.Replace({bad_to}, T0(), "t")));
  CHECK(fx.channels.Target("mail")->channel.email == mail.channel.email);

  // A row whose addressing no longer holds reads as DataLoss, never as a channel.
  {
    SQLite::Database raw_db(fx.dir.File("pulse.db"), SQLite::OPEN_READWRITE);
    raw_db.exec(R"(UPDATE notification_channels SET email_json = '{"from":"x","to":[],)"
                R"("username":""}' WHERE name = 'mail')");
  }
  CHECK(absl::IsDataLoss(fx.channels.List().status()));
  CHECK(absl::IsDataLoss(fx.channels.Replace({Webhook("ops")}, T0(), "t")));  // nothing is lost
  {
    SQLite::Database raw_db(fx.dir.File("pulse.db"), SQLite::OPEN_READWRITE);
    raw_db.exec("DELETE FROM notification_channels WHERE name = 'mail'");
  }
  fx.SetChannels({Webhook("ops")});

  // Rolled back to schema 13 (no email kind, no email_json) with a webhook stored, then
  // reopened: migration 14 rebuilds the table and keeps the channel as it was.
  const std::vector<adapters::storage::StoredNotificationChannel> before = *fx.channels.List();
  {
    SQLite::Database raw_db(fx.dir.File("pulse.db"), SQLite::OPEN_READWRITE);
    pulse::testing::storage::UndoAwaitingFixColumn(
        raw_db);  // migration 17 (first: its indexes name older columns)
    raw_db.exec(R"(CREATE TABLE old_channels (
      name TEXT NOT NULL PRIMARY KEY,
      kind TEXT NOT NULL CHECK (kind IN ('webhook', 'slack', 'discord', 'ntfy', 'gotify')),
      url TEXT NOT NULL, enabled INTEGER NOT NULL, min_severity TEXT NOT NULL,
      events_json TEXT NOT NULL, quiet_json TEXT NOT NULL, rate_per_minute INTEGER NOT NULL,
      updated_at_ns INTEGER NOT NULL, updated_by TEXT NOT NULL))");
    raw_db.exec(
        "INSERT INTO old_channels SELECT name, kind, url, enabled, min_severity, events_json, "
        "quiet_json, rate_per_minute, updated_at_ns, updated_by FROM notification_channels");
    raw_db.exec("DROP TABLE notification_channels");
    raw_db.exec("ALTER TABLE old_channels RENAME TO notification_channels");
    UndoPatrolCountColumns(raw_db);                          // migration 15
    pulse::testing::storage::UndoActionPageIndexes(raw_db);  // migration 16
    raw_db.exec("DELETE FROM schema_version WHERE version >= 14");
  }
  auto reopened = MustOpen(fx.dir.File("pulse.db"));
  CHECK(*reopened->SchemaVersion() == adapters::storage::kSchemaVersion);
  SqliteNotificationChannels channels{*reopened, fx.credentials};
  const std::vector<adapters::storage::StoredNotificationChannel> after = *channels.List();
  REQUIRE(after.size() == before.size());
  CHECK(after[0].channel == before[0].channel);
  CHECK(after[0].url == before[0].url);
  NotificationChannelWrite again = mail;
  REQUIRE(channels.Replace({again}, T0(), "t").ok());
  CHECK(channels.Target("mail")->channel.email == mail.channel.email);
}

}  // namespace
}  // namespace pulse::testing::storage
