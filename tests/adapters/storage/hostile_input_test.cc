// Hostile input through every SQLite adapter: quotes and SQL injection strings are stored and
// read back exactly and stay inert; NUL bytes, ill-formed UTF-8 and oversized values are either
// stored exactly or refused with InvalidArgument naming the problem — never silently altered
// (the audit log, which must never lose an entry, is the documented exception: it sanitizes).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "contracts/action_store_contract.h"
#include "contracts/finding_store_contract.h"
#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/adapters/storage/sqlite_audit_log.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/adapters/storage/sqlite_metrics_history.h"
#include "pulse/adapters/storage/sqlite_operator_state_store.h"
#include "pulse/adapters/storage/sqlite_token_store.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using namespace adapters::storage;  // NOLINT: the adapters under test

const std::string kInjection = "x'); DROP TABLE findings; DROP TABLE actions; --";
const std::string kQuotes = R"(it's "quoted" `back` \slash %wild_ ;)";
const std::string kNul = std::string("before\0after", 12);
const std::string kBadUtf8 = "bad \xC3\x28 \xFF\xFE \xED\xA0\x80 end";
const std::string kMiB(1 << 20, 'm');

// Every table the schema creates is still there, and the file is sound.
void RequireSchemaIntact(SqliteDatabase& db) {
  CHECK(db.CheckIntegrity().ok());
  absl::StatusOr<int> version = db.SchemaVersion();
  REQUIRE(version.ok());
  CHECK(*version == kSchemaVersion);
}

TEST_CASE(
    "findings: quotes, injection and NULs round-trip exactly, bad UTF-8 and 1 MiB "
    "text are refused",
    "[adapters][storage][hostile]") {
  auto db = MustOpen(":memory:");
  auto store = *SqliteFindingStore::Open(*db);
  core::Finding f = contracts::FullFinding(kInjection);
  f.title = kQuotes;
  f.description = kInjection;
  f.resource_id = "vm:' OR '1'='1";
  REQUIRE(store->Put(f, 0).ok());
  auto got = store->Get(kInjection);
  REQUIRE(got.ok());
  CHECK(got->finding == f);
  core::FindingFilter by_resource;
  by_resource.resource_id = "vm:' OR '1'='1";
  auto listed = store->List(by_resource);
  REQUIRE(listed.ok());
  CHECK(listed->size() == 1);
  by_resource.resource_id = "' OR 1=1 --";
  listed = store->List(by_resource);
  REQUIRE(listed.ok());
  CHECK(listed->empty());
  CHECK(absl::IsNotFound(store->Get("' OR '1'='1").status()));

  struct Case {
    const char* what;
    core::Finding finding;
  };
  // A NUL travels escaped (\u0000) inside the stored JSON, so it reads back exactly.
  core::Finding nul = contracts::SimpleFinding("nul", "vm:1", core::Category::kGeneral);
  nul.title = kNul;
  nul.user_note = kNul + kQuotes;
  REQUIRE(store->Put(nul, 0).ok());
  auto nul_back = store->Get("nul");
  REQUIRE(nul_back.ok());
  CHECK(nul_back->finding == nul);

  std::vector<Case> refused;
  core::Finding bad = contracts::SimpleFinding("bad", "vm:1", core::Category::kGeneral);
  bad.description = kBadUtf8;
  refused.push_back({"ill-formed UTF-8", bad});
  core::Finding bad_id = contracts::SimpleFinding(kBadUtf8, "vm:1", core::Category::kGeneral);
  refused.push_back({"ill-formed UTF-8 id", bad_id});
  core::Finding huge = contracts::SimpleFinding("huge", "vm:1", core::Category::kGeneral);
  huge.evidence = kMiB;
  refused.push_back({"1 MiB evidence", huge});
  core::Finding huge_id = contracts::SimpleFinding(kMiB, "vm:1", core::Category::kGeneral);
  refused.push_back({"1 MiB id", huge_id});
  for (const Case& c : refused) {
    INFO(c.what);
    absl::StatusOr<std::int64_t> put = store->Put(c.finding, 0);
    REQUIRE_FALSE(put.ok());
    CHECK(absl::IsInvalidArgument(put.status()));
    CHECK_FALSE(put.status().message().empty());
    CHECK(absl::IsNotFound(store->Get(c.finding.id).status()));
  }
  core::SuppressionRule rule =
      contracts::Rule("vm:'; DELETE FROM suppression_rules; --", core::Category::kBackup);
  rule.description = kQuotes;
  REQUIRE(store->PutSuppressionRule(rule).ok());
  auto rules = store->ListSuppressionRules();
  REQUIRE(rules.ok());
  REQUIRE(rules->size() == 1);
  CHECK(rules->front() == rule);
  core::SuppressionRule bad_rule = rule;
  bad_rule.description = kBadUtf8;
  CHECK(absl::IsInvalidArgument(store->PutSuppressionRule(bad_rule)));
  RequireSchemaIntact(*db);
}

TEST_CASE("actions: injection and 1 MiB event text round-trip, NULs and bad UTF-8 are refused",
          "[adapters][storage][hostile]") {
  using namespace action_store_contract;  // NOLINT: record builders
  auto db = MustOpen(":memory:");
  auto store = *SqliteActionStore::Open(*db);
  core::ActionRecord r = NewRecord("hostile", false);
  r.request.reason = kQuotes + kInjection;
  r.plan.message = kInjection;
  r.plan.preflight.intended_change = kQuotes;
  MustInsert(store, r);
  auto got = store->Get(r.id());
  REQUIRE(got.ok());
  CHECK(*got == r);

  core::ActionTransition t = Move(r, core::ActionState::kExecuting, T0() + absl::Seconds(1));
  t.events.front().message = kMiB + kInjection;
  const core::ActionRecord moved = MustMove(store, t);
  auto events = store->ListEvents(r.id());
  REQUIRE(events.ok());
  REQUIRE(events->size() == 2);
  CHECK(events->back().message == kMiB + kInjection);

  for (const std::string& text : {kNul, kBadUtf8}) {
    core::ActionTransition bad = Move(moved, core::ActionState::kFailed, T0() + absl::Seconds(2));
    bad.result = Result(core::ExecutionStatus::kFailed, T0() + absl::Seconds(2));
    bad.result->execution.summary = text;
    CHECK(absl::IsInvalidArgument(store->Transition(bad).status()));
    core::ActionTransition bad_event = bad;
    bad_event.result->execution.summary = "fine";
    bad_event.events.front().message = text;
    CHECK(absl::IsInvalidArgument(store->Transition(bad_event).status()));
  }
  RequireUnchanged(store, moved, 2);

  core::ActionRecord bad_reason = NewRecord("badreason", false);
  bad_reason.request.reason = kBadUtf8;
  CHECK(absl::IsInvalidArgument(
      store->InsertIfAbsent(bad_reason, InitialEvents(bad_reason)).status()));
  core::ActionRecord nul_reason = NewRecord("nulreason", false);
  nul_reason.request.reason = kNul;
  auto nul_insert = store->InsertIfAbsent(nul_reason, InitialEvents(nul_reason));
  if (nul_insert.ok()) {
    // Stored only if it reads back exactly.
    auto back = store->Get(nul_reason.id());
    REQUIRE(back.ok());
    CHECK(back->request.reason == kNul);
  } else {
    CHECK(absl::IsInvalidArgument(nul_insert.status()));
  }
  core::ActionRecord huge = NewRecord("huge", false);
  huge.request.reason = kMiB;
  CHECK(absl::IsInvalidArgument(store->InsertIfAbsent(huge, InitialEvents(huge)).status()));
  CHECK(absl::IsNotFound(store->Get(huge.id()).status()));
  CHECK(absl::IsNotFound(store->Get("act_x' OR '1'='1").status()));
  CHECK(absl::IsNotFound(store->ListEvents(kInjection).status()));
  RequireSchemaIntact(*db);
}

TEST_CASE("operator state: hostile resource ids are refused or inert, notes round-trip",
          "[adapters][storage][hostile]") {
  auto db = MustOpen(":memory:");
  auto store = *SqliteOperatorStateStore::Open(*db);
  core::OperatorState s;
  s.resource_id = "vm:101";
  s.note = kQuotes + "\n" + kInjection;
  s.set_at = absl::FromUnixSeconds(1'800'000'000);
  s.set_by = "obrien@example.com";
  REQUIRE(store->Set(s).ok());
  auto got = store->Get("vm:101");
  REQUIRE(got.ok());
  CHECK(*got == s);
  core::OperatorState injected = s;
  injected.resource_id = "vm:101' OR '1'='1";
  CHECK(absl::IsInvalidArgument(store->Set(injected)));
  core::OperatorState bad_note = s;
  bad_note.note = kBadUtf8;
  CHECK(absl::IsInvalidArgument(store->Set(bad_note)));
  core::OperatorState quoted_setter = s;
  quoted_setter.set_by = "o'brien";
  CHECK(absl::IsInvalidArgument(store->Set(quoted_setter)));
  core::OperatorState nul_note = s;
  nul_note.note = kNul;
  CHECK(absl::IsInvalidArgument(store->Set(nul_note)));
  core::OperatorState far = s;
  far.set_at = absl::InfiniteFuture();
  CHECK(absl::IsInvalidArgument(store->Set(far)));
  CHECK(absl::IsNotFound(store->Get("' OR 1=1 --").status()));
  CHECK(store->Clear("' OR 1=1 --").ok());
  got = store->Get("vm:101");
  REQUIRE(got.ok());
  CHECK(*got == s);
}

TEST_CASE("metrics: 1 MiB and quoted series names round-trip, NULs and bad UTF-8 are refused",
          "[adapters][storage][hostile]") {
  auto db = MustOpen(":memory:");
  auto history = *SqliteMetricsHistory::Open(*db);
  const absl::Time t = absl::FromUnixSeconds(1'800'000'000);
  const std::string target = kMiB + kInjection;
  REQUIRE(history->Append(target, kQuotes, {t, 42.5}).ok());
  auto samples = history->Samples(target, kQuotes, t, t);
  REQUIRE(samples.ok());
  REQUIRE(samples->size() == 1);
  CHECK(samples->front() == core::MetricSample{t, 42.5});
  CHECK(absl::IsInvalidArgument(history->Append(kNul, "usage", {t, 1})));
  CHECK(absl::IsInvalidArgument(history->Append("vm:1", kBadUtf8, {t, 1})));
  auto none =
      history->Samples("' OR 1=1 --", kQuotes, absl::InfinitePast(), absl::InfiniteFuture());
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("tokens: hostile names round-trip, hostile tokens never authenticate",
          "[adapters][storage][hostile]") {
  TempDir dir;
  auto db = MustOpen(":memory:");
  auto store = *SqliteTokenStore::Open(*db, dir.File("token.key"));
  core::NewApiToken request;
  request.name = "ci'); DELETE FROM api_tokens; --";
  request.scopes = {"ai:chat"};
  request.created_at = absl::FromUnixSeconds(1'800'000'000);
  auto issued = store->Create(request);
  REQUIRE(issued.ok());
  auto listed = store->List();
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK(listed->front().name == request.name);
  for (const std::string& hostile :
       {kInjection, kNul, kBadUtf8, kMiB, std::string("pulse_") + std::string(43, '\'')}) {
    CHECK(absl::IsUnauthenticated(store->Authenticate(hostile, request.created_at).status()));
  }
  CHECK(store->Authenticate(issued->token, request.created_at).ok());
}

TEST_CASE("audit: every entry is kept, NULs and bad UTF-8 become U+FFFD, 1 MiB stays whole",
          "[adapters][storage][hostile]") {
  auto db = MustOpen(":memory:");
  auto log = *SqliteAuditLog::Open(*db);
  core::AuditEntry e;
  e.at = absl::FromUnixSeconds(1'800'000'000);
  e.category = "action";
  e.event = "refused";
  e.subject_id = kInjection;
  e.message = kNul + kBadUtf8;
  e.details = {{"long", kMiB}, {kQuotes, kInjection}};
  REQUIRE(log->Append(e).ok());
  auto stored = log->List({});
  REQUIRE(stored.ok());
  REQUIRE(stored->size() == 1);
  const core::AuditEntry& back = stored->front().entry;
  CHECK(back.subject_id == kInjection);
  CHECK(back.message ==
        "before\xEF\xBF\xBD"
        "after"
        "bad \xEF\xBF\xBD( \xEF\xBF\xBD\xEF\xBF\xBD "
        "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD end");
  CHECK(back.details.at("long") == kMiB);
  CHECK(back.details.at(kQuotes) == kInjection);
  AuditQuery by_subject;
  by_subject.subject_id = "' OR '1'='1";
  auto none = log->List(by_subject);
  REQUIRE(none.ok());
  CHECK(none->empty());
}

}  // namespace
}  // namespace pulse::testing::storage
