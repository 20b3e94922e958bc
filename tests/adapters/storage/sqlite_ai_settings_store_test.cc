// SqliteAiSettingsStore: the runtime AI settings are one row that survives a reopen of its
// file, a bad value is refused with nothing written, a row no Save would write reads as
// DataLoss, and migration 11 adds the table to a version-10 file; the metered spend adds up per
// calendar month (migration 12).
#include "pulse/adapters/storage/sqlite_ai_settings_store.h"

#include <SQLiteCpp/Database.h>

#include <catch2/catch.hpp>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::kSchemaVersion;
using adapters::storage::SqliteAiSettingsStore;
using adapters::storage::StoredAiSettings;

absl::Time T0() { return absl::FromUnixSeconds(1'800'000'000); }

StoredAiSettings Sample() {
  StoredAiSettings s;
  s.provider = "openai-compatible";
  s.base_url = "http://127.0.0.1:9/v1";
  s.model = "chat-model";
  s.patrol_model = "patrol-model";
  s.monthly_budget_usd = 120.5;
  s.session_budget_usd = 2.25;
  s.updated_at = T0();
  s.updated_by = "tok_0123456789abcdef";
  return s;
}

TEST_CASE("the AI settings are absent until saved, then read back as saved and survive a reopen",
          "[adapters][storage][ai_settings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  {
    auto db = MustOpen(path);
    SqliteAiSettingsStore store(*db);
    absl::StatusOr<std::optional<StoredAiSettings>> none = store.Load();
    REQUIRE(none.ok());
    CHECK_FALSE(none->has_value());
    REQUIRE(store.Save(Sample()).ok());
    StoredAiSettings second = Sample();
    second.model = "another-model";
    second.patrol_model = "";
    second.monthly_budget_usd = 0;
    second.updated_at = T0() + absl::Seconds(5);
    REQUIRE(store.Save(second).ok());  // replaces: still one row
  }
  auto db = MustOpen(path);
  SqliteAiSettingsStore store(*db);
  absl::StatusOr<std::optional<StoredAiSettings>> loaded = store.Load();
  REQUIRE(loaded.ok());
  REQUIRE(loaded->has_value());
  StoredAiSettings expected = Sample();
  expected.model = "another-model";
  expected.patrol_model = "";
  expected.monthly_budget_usd = 0;
  expected.updated_at = T0() + absl::Seconds(5);
  CHECK(**loaded == expected);
  db.reset();
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(raw.execAndGet("SELECT COUNT(*) FROM ai_settings").getInt() == 1);
}

TEST_CASE("AI settings with no provider or a bad spend cap are refused and nothing is written",
          "[adapters][storage][ai_settings]") {
  TempDir dir;
  auto db = MustOpen(dir.File("pulse.db"));
  SqliteAiSettingsStore store(*db);
  REQUIRE(store.Save(Sample()).ok());
  for (double bad : {-0.01, 1000000.5, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    StoredAiSettings s = Sample();
    s.model = "changed";
    s.session_budget_usd = bad;
    CHECK(store.Save(s).code() == absl::StatusCode::kInvalidArgument);
    s.session_budget_usd = 1;
    s.monthly_budget_usd = bad;
    CHECK(store.Save(s).code() == absl::StatusCode::kInvalidArgument);
  }
  StoredAiSettings no_provider = Sample();
  no_provider.provider = "";
  CHECK(store.Save(no_provider).code() == absl::StatusCode::kInvalidArgument);
  CHECK(**store.Load() == Sample());
}

TEST_CASE("a stored AI settings row no Save would write reads as DataLoss",
          "[adapters][storage][ai_settings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  MustOpen(path).reset();
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec(
        "INSERT INTO ai_settings VALUES (1, 'openai', '', 'm', '', 1e300 * 1e300, 0, 0, 'tok')");
  }
  auto db = MustOpen(path);
  SqliteAiSettingsStore store(*db);
  CHECK(store.Load().status().code() == absl::StatusCode::kDataLoss);
}

TEST_CASE("a version-10 database gains the AI settings table on open",
          "[adapters][storage][ai_settings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  MustOpen(path).reset();
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    UndoAwaitingFixColumn(raw);  // migration 17 (first: its indexes name older columns)
    UndoActionPageIndexes(raw);  // migration 16
    UndoNotifications(raw);      // migration 13
    UndoAiSpend(raw);            // migration 12
    UndoAiSettings(raw);
    UndoPatrolCountColumns(raw);  // migration 15
    raw.exec("DELETE FROM schema_version WHERE version >= 11");
  }
  auto db = MustOpen(path);
  CHECK(*db->SchemaVersion() == kSchemaVersion);
  SqliteAiSettingsStore store(*db);
  CHECK_FALSE(store.Load()->has_value());
  REQUIRE(store.Save(Sample()).ok());
  CHECK(**store.Load() == Sample());
}

TEST_CASE("the metered spend adds up per calendar month and survives a reopen",
          "[adapters][storage][ai_settings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  {
    auto db = MustOpen(path);
    SqliteAiSettingsStore store(*db);
    CHECK(*store.MonthSpend("2026-12") == 0);
    REQUIRE(store.AddSpend("2026-12", 0.25).ok());
    REQUIRE(store.AddSpend("2026-12", 0.5).ok());
    REQUIRE(store.AddSpend("2027-01", 1).ok());
  }
  auto db = MustOpen(path);
  SqliteAiSettingsStore store(*db);
  CHECK(*store.MonthSpend("2026-12") == Approx(0.75));
  CHECK(*store.MonthSpend("2027-01") == Approx(1));
  CHECK(*store.MonthSpend("2026-11") == 0);
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(raw.execAndGet("SELECT calls FROM ai_spend WHERE month = '2026-12'").getInt() == 2);
}

TEST_CASE("a malformed month or cost is refused and nothing is written",
          "[adapters][storage][ai_settings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  auto db = MustOpen(path);
  SqliteAiSettingsStore store(*db);
  for (const char* month : {"", "2026-1", "2026-13", "2026-00", "2026/12", "26-12-01", "abcd-ef",
                            "2026-12'; DROP TABLE ai_spend; --"}) {
    INFO(month);
    CHECK(store.AddSpend(month, 1).code() == absl::StatusCode::kInvalidArgument);
    CHECK(store.MonthSpend(month).status().code() == absl::StatusCode::kInvalidArgument);
  }
  for (double bad : {-0.01, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN(), 1e7}) {
    INFO(bad);
    CHECK(store.AddSpend("2026-12", bad).code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(*store.MonthSpend("2026-12") == 0);
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(raw.execAndGet("SELECT COUNT(*) FROM ai_spend").getInt() == 0);
}

TEST_CASE("a spend row no AddSpend would write reads as DataLoss",
          "[adapters][storage][ai_settings]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  MustOpen(path).reset();
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("INSERT INTO ai_spend (month, cost_usd, calls) VALUES ('2026-12', 1e999, 1)");
  }
  auto db = MustOpen(path);
  SqliteAiSettingsStore store(*db);
  CHECK(store.MonthSpend("2026-12").status().code() == absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace pulse::testing::storage
