// SqliteAuditLog: append order, queries, validation, and the secret redactor applied before an
// entry is persisted (the credential never reaches the file).
#include "pulse/adapters/storage/sqlite_audit_log.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::AuditQuery;
using adapters::storage::SqliteAuditLog;

core::AuditEntry Entry(std::string event, std::string subject, std::string message = "") {
  core::AuditEntry e;
  e.at = absl::FromUnixMillis(1'800'000'000'123) + absl::Nanoseconds(4);
  e.category = "action";
  e.event = std::move(event);
  e.subject_id = std::move(subject);
  e.resource_id = "vm:101";
  e.actor_kind = "human";
  e.actor_id = "alice";
  e.message = std::move(message);
  return e;
}

TEST_CASE("audit entries keep their append order and every field", "[adapters][storage][audit]") {
  auto db = MustOpen(":memory:");
  auto log = *SqliteAuditLog::Open(*db);
  core::AuditEntry planned = Entry("planned", "act_1", "Action plan created.");
  planned.details = {{"risk", "high"}, {"plan_hash", "sha256:abc"}};
  core::AuditEntry refused = Entry("refused", "act_2", "plan_drift: resource vm:101 changed");
  refused.code = "action_plan_drift";
  core::AuditEntry done = Entry("completed", "act_1");
  for (const core::AuditEntry* e : {&planned, &refused, &done}) {
    REQUIRE(log->Append(*e).ok());
  }
  auto all = log->List({});
  REQUIRE(all.ok());
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].entry == planned);
  CHECK((*all)[1].entry == refused);
  CHECK((*all)[2].entry == done);
  CHECK((*all)[0].sequence < (*all)[1].sequence);
  CHECK((*all)[1].sequence < (*all)[2].sequence);

  AuditQuery act1;
  act1.subject_id = "act_1";
  auto mine = log->List(act1);
  REQUIRE(mine.ok());
  REQUIRE(mine->size() == 2);
  CHECK(mine->back().entry.event == "completed");

  AuditQuery page;
  page.after_sequence = (*all)[0].sequence;
  page.limit = 1;
  auto next = log->List(page);
  REQUIRE(next.ok());
  REQUIRE(next->size() == 1);
  CHECK(next->front().entry.event == "refused");

  page.limit = 0;
  CHECK(absl::IsInvalidArgument(log->List(page).status()));
  page.limit = 1001;
  CHECK(absl::IsInvalidArgument(log->List(page).status()));
}

TEST_CASE("an audit entry without category, event or a storable time is refused",
          "[adapters][storage][audit]") {
  auto db = MustOpen(":memory:");
  auto log = *SqliteAuditLog::Open(*db);
  core::AuditEntry no_category = Entry("planned", "act_1");
  no_category.category.clear();
  core::AuditEntry no_event = Entry("", "act_1");
  core::AuditEntry infinite = Entry("planned", "act_1");
  infinite.at = absl::InfiniteFuture();
  for (const core::AuditEntry* e : {&no_category, &no_event, &infinite}) {
    CHECK(absl::IsInvalidArgument(log->Append(*e)));
  }
  auto all = log->List({});
  REQUIRE(all.ok());
  CHECK(all->empty());
}

TEST_CASE("secrets in audit text are redacted before they reach the file",
          "[adapters][storage][audit]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  auto db = MustOpen(path);
  auto log = *SqliteAuditLog::Open(*db);
  const std::string bearer = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcHMifQ.c2lnbmF0dXJl";
  const std::string api_key = "sk-proj-0123456789abcdefghijABCDEFGHIJ";
  const std::string password = "Tr0ub4dor&3";
  core::AuditEntry e =
      Entry("refused", "act_9",
            "curl -H 'Authorization: Bearer " + bearer + "' https://api.example/v1 --password " +
                password + " key=" + api_key);
  e.details = {{"command", "mysql --password=" + password + " -h db"},
               {"aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}};
  REQUIRE(log->Append(e).ok());
  auto all = log->List({});
  REQUIRE(all.ok());
  REQUIRE(all->size() == 1);
  const core::AuditEntry& stored = all->front().entry;
  CHECK(stored.message ==
        "curl -H 'Authorization: Bearer [REDACTED]' https://api.example/v1 --password [REDACTED] "
        "key=[REDACTED]");
  CHECK(stored.details.at("command") == "mysql --password=[REDACTED] -h db");
  CHECK(stored.details.at("aws_secret_access_key") == "[REDACTED]");
  CHECK(stored.subject_id == "act_9");
  const std::string file = ReadFileBytes(path) + ReadFileBytes(path + "-wal");
  for (const std::string& secret :
       {bearer, api_key, password, std::string("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")}) {
    CHECK(file.find(secret) == std::string::npos);
  }
}

TEST_CASE("concurrent appends are all kept with distinct sequence numbers",
          "[adapters][storage][audit]") {
  TempDir dir;
  auto db = MustOpen(dir.File("pulse.db"));
  auto log = *SqliteAuditLog::Open(*db);
  constexpr int kThreads = 8;
  constexpr int kEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        CHECK(log->Append(Entry("planned", "act_" + std::to_string(t))).ok());
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  std::set<std::int64_t> sequences;
  std::int64_t after = 0;
  for (;;) {
    AuditQuery page;
    page.after_sequence = after;
    page.limit = 64;
    auto got = log->List(page);
    REQUIRE(got.ok());
    if (got->empty()) {
      break;
    }
    for (const auto& s : *got) {
      sequences.insert(s.sequence);
      after = s.sequence;
    }
  }
  CHECK(sequences.size() == kThreads * kEach);
}

}  // namespace
}  // namespace pulse::testing::storage
