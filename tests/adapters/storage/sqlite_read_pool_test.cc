// SqliteDatabase's read pool: reads of a file database run on read-only connections, so they
// neither queue behind a write that waits for another process's write lock nor behind each
// other; they see every write committed before they start; the pool keeps its bound, falls
// back to the writer when a reader cannot be opened, and ":memory:" reads stay on the writer.
// Real SQLite files in a temporary directory. Some cases block inside a transaction body or
// watch the writer mutex, so they use the library's private transaction runners.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "contracts/finding_store_contract.h"
#include "contracts/operator_state_store_contract.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/adapters/storage/sqlite_operator_state_store.h"
#include "pulse/adapters/storage/sqlite_token_store.h"
#include "sqlite_connection.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::Durability;
using adapters::storage::ReadTransaction;
using adapters::storage::SqliteDatabase;
using adapters::storage::SqliteFindingStore;
using adapters::storage::SqliteOperatorStateStore;
using adapters::storage::SqliteOptions;
using adapters::storage::SqliteTokenStore;
using adapters::storage::WriteTransaction;
using contracts::Ids;
using contracts::SimpleFinding;
using Clock = std::chrono::steady_clock;

std::unique_ptr<SqliteFindingStore> Findings(SqliteDatabase& db) {
  auto store = SqliteFindingStore::Open(db);
  REQUIRE(store.ok());
  return *std::move(store);
}

// Waits (up to 20 s) until another thread holds the database's writer mutex: a write that
// cannot get SQLite's write lock holds it while it waits out the busy timeout. False on timeout
// (checked, not required, so the test still joins its threads).
bool AwaitWriterMutexHeld(SqliteDatabase& db) {
  absl::Mutex& writer = db.connection().mu;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (writer.TryLock()) {
    writer.Unlock();
    if (Clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

std::int64_t Count(SQLite::Database& db, const std::string& sql) {
  return db.execAndGet(sql).getInt64();
}

// Another process on the same file (pulse-cli, a backup tool): it holds SQLite's write lock
// with an uncommitted change that deletes every finding and every token.
class ForeignWriter {
 public:
  explicit ForeignWriter(const std::string& path) : db_(path, SQLite::OPEN_READWRITE) {
    db_.exec("BEGIN IMMEDIATE");
    db_.exec("DELETE FROM findings");
    db_.exec("DELETE FROM api_tokens");
  }
  ~ForeignWriter() { db_.tryExec("ROLLBACK"); }
  ForeignWriter(const ForeignWriter&) = delete;
  ForeignWriter& operator=(const ForeignWriter&) = delete;

  void Rollback() { db_.exec("ROLLBACK"); }

 private:
  SQLite::Database db_;
};

TEST_CASE("reads answer promptly while a write waits for another process's write lock",
          "[adapters][storage][read_pool]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  SqliteOptions options;
  options.busy_timeout = absl::Seconds(10);
  auto db = MustOpen(path, options);
  auto findings = Findings(*db);
  auto tokens = SqliteTokenStore::Open(*db, dir.File("token.key"));
  REQUIRE(tokens.ok());
  REQUIRE(findings->Put(SimpleFinding("f-committed", "vm:1", core::Category::kGeneral), 0).ok());
  core::NewApiToken request;
  request.name = "ci";
  request.scopes = {"monitoring:read"};
  request.created_at = absl::FromUnixSeconds(1'800'000'000);
  auto issued = (*tokens)->Create(request);
  REQUIRE(issued.ok());
  // The first use records last_used_at; later uses within a minute only read.
  REQUIRE((*tokens)->Authenticate(issued->token, request.created_at).ok());

  ForeignWriter foreign(path);
  std::atomic<bool> write_done{false};
  absl::Status write_status;
  std::thread writer([&] {
    write_status =
        findings->Put(SimpleFinding("f-waiting", "vm:2", core::Category::kGeneral), 0).status();
    write_done.store(true);
  });
  CHECK(AwaitWriterMutexHeld(*db));

  const auto started = Clock::now();
  auto listed = findings->List({});
  auto got = findings->Get("f-committed");
  auto authenticated =
      (*tokens)->Authenticate(issued->token, request.created_at + absl::Seconds(1));
  const auto took = Clock::now() - started;
  // The write is still waiting: the reads above ran while it held the writer.
  CHECK_FALSE(write_done.load());
  foreign.Rollback();
  writer.join();

  INFO("reads took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                     << " ms; the busy timeout is 10 s");
  CHECK(took < std::chrono::seconds(2));
  // Nothing of the uncommitted deletes is visible.
  REQUIRE(listed.ok());
  CHECK(Ids(*listed) == std::vector<std::string>{"f-committed"});
  CHECK(got.ok());
  CHECK(authenticated.ok());
  // Once the foreign lock is gone the waiting write goes through.
  INFO(write_status.ToString());
  CHECK(write_status.ok());
  listed = findings->List({});
  REQUIRE(listed.ok());
  CHECK(Ids(*listed) == std::vector<std::string>{"f-committed", "f-waiting"});
}

TEST_CASE("with max_readers 0 every read queues behind the waiting write, as before the pool",
          "[adapters][storage][read_pool]") {
  // The single-connection path the pool replaced: the case above fails this way without it.
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  SqliteOptions options;
  options.busy_timeout = absl::Seconds(2);
  options.max_readers = 0;
  auto db = MustOpen(path, options);
  CHECK(db->ReadPoolStats().max_readers == 0);
  auto findings = Findings(*db);
  REQUIRE(findings->Put(SimpleFinding("f-committed", "vm:1", core::Category::kGeneral), 0).ok());

  ForeignWriter foreign(path);
  absl::Status write_status;
  std::thread writer([&] {
    write_status =
        findings->Put(SimpleFinding("f-waiting", "vm:2", core::Category::kGeneral), 0).status();
  });
  CHECK(AwaitWriterMutexHeld(*db));
  const auto started = Clock::now();
  auto listed = findings->List({});
  const auto took = Clock::now() - started;
  writer.join();
  // The read got the connection only after the write gave up on the busy timeout.
  CHECK(absl::IsUnavailable(write_status));
  CHECK(took > std::chrono::milliseconds(1000));
  REQUIRE(listed.ok());
  CHECK(Ids(*listed) == std::vector<std::string>{"f-committed"});
  CHECK(db->ReadPoolStats().open_readers == 0);
}

TEST_CASE("a write committed on one thread is seen by the next read on another thread",
          "[adapters][storage][read_pool]") {
  TempDir dir;
  SqliteOptions options;
  options.durability = Durability::kNormal;  // visibility does not depend on fsync; keeps it fast
  auto db = MustOpen(dir.File("pulse.db"), options);
  auto opened = SqliteOperatorStateStore::Open(*db);
  REQUIRE(opened.ok());
  SqliteOperatorStateStore& store = **opened;

  constexpr int kRounds = 300;
  std::mutex mu;
  std::condition_variable cv;
  int written = -1;  // the last round committed, guarded by mu
  int checked = -1;  // the last round read back, guarded by mu
  std::atomic<int> mismatches{0};
  std::string first_mismatch;
  std::thread reader([&] {
    for (int round = 0; round < kRounds; ++round) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return written >= round; });
      }
      absl::StatusOr<core::OperatorState> got = store.Get("vm:101");
      const std::string want = absl::StrCat("round ", round);
      if (!got.ok() || got->note != want) {
        if (mismatches.fetch_add(1) == 0) {
          first_mismatch = got.ok() ? got->note + " instead of " + want : got.status().ToString();
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        checked = round;
      }
      cv.notify_all();
    }
  });
  core::OperatorState state = operator_state_contract::LockedState("vm:101");
  for (int round = 0; round < kRounds; ++round) {
    state.note = absl::StrCat("round ", round);
    // Checked, not required: the reader thread waits for every round (a failed Set shows up
    // there as a mismatch).
    CHECK(store.Set(state).ok());
    {
      std::lock_guard<std::mutex> lock(mu);
      written = round;
    }
    cv.notify_all();
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return checked >= round; });
  }
  reader.join();
  INFO(first_mismatch);
  CHECK(mismatches.load() == 0);
  // One reader served every round: a kept reader starts each read on a fresh snapshot.
  CHECK(db->ReadPoolStats().open_readers == 1);
}

TEST_CASE("more reading threads than readers, with a writer, all succeed and never go back",
          "[adapters][storage][read_pool]") {
  TempDir dir;
  SqliteOptions options;
  options.durability = Durability::kNormal;
  options.max_readers = 3;
  auto db = MustOpen(dir.File("pulse.db"), options);
  auto findings = Findings(*db);

  constexpr int kWrites = 60;
  constexpr int kReaders = 8;
  std::atomic<int> committed{0};  // findings whose Put has returned
  std::atomic<bool> writing{true};
  std::atomic<int> failures{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([&] {
      std::size_t last = 0;
      bool more = true;
      while (more) {
        more = writing.load();
        const auto at_least = static_cast<std::size_t>(committed.load());
        auto listed = findings->List({});
        reads.fetch_add(1);
        // Every Put that returned before the read started is in it; the count never shrinks.
        if (!listed.ok() || listed->size() < at_least || listed->size() < last) {
          failures.fetch_add(1);
          return;
        }
        last = listed->size();
      }
    });
  }
  for (int i = 0; i < kWrites; ++i) {
    const std::string id = absl::StrCat("f-", 1000 + i);
    const bool put = findings->Put(SimpleFinding(id, "vm:1", core::Category::kGeneral), 0).ok();
    CHECK(put);  // not REQUIRE: the reading threads must still be joined
    if (put) {
      committed.fetch_add(1);
    }
  }
  writing.store(false);
  for (std::thread& t : threads) {
    t.join();
  }
  CHECK(failures.load() == 0);
  CHECK(reads.load() >= kReaders);
  auto listed = findings->List({});
  REQUIRE(listed.ok());
  CHECK(listed->size() == static_cast<std::size_t>(kWrites));
  const adapters::storage::SqliteReadPoolStats stats = db->ReadPoolStats();
  CHECK(stats.max_readers == 3);
  CHECK(stats.open_readers >= 1);
  CHECK(stats.open_readers <= 3);
  CHECK(stats.writer_fallbacks == 0);
}

TEST_CASE("reads run in parallel up to max_readers and wait for a free reader beyond it",
          "[adapters][storage][read_pool]") {
  TempDir dir;
  SqliteOptions options;
  options.max_readers = 2;
  auto db = MustOpen(dir.File("pulse.db"), options);
  CHECK(db->ReadPoolStats().open_readers == 0);  // opened on demand

  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;        // bodies running now, guarded by mu
  int most_inside = 0;   // guarded by mu
  bool release = false;  // guarded by mu
  std::vector<absl::Status> statuses(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < statuses.size(); ++t) {
    threads.emplace_back([&, t] {
      statuses[t] = ReadTransaction(*db, [&](SQLite::Database& conn) -> absl::Status {
        Count(conn, "SELECT count(*) FROM findings");
        std::unique_lock<std::mutex> lock(mu);
        ++inside;
        most_inside = std::max(most_inside, inside);
        cv.notify_all();
        cv.wait(lock, [&] { return release; });
        --inside;
        return absl::OkStatus();
      });
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    // Two reads at once: impossible on one connection.
    const bool two = cv.wait_for(lock, std::chrono::seconds(20), [&] { return inside == 2; });
    CHECK(two);
  }
  // The other two wait for a reader rather than opening a third.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(db->ReadPoolStats().open_readers == 2);
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(inside == 2);
    release = true;
  }
  cv.notify_all();
  for (std::thread& t : threads) {
    t.join();
  }
  for (const absl::Status& s : statuses) {
    CHECK(s.ok());
  }
  CHECK(most_inside == 2);
  CHECK(db->ReadPoolStats().open_readers == 2);
}

TEST_CASE("an in-memory database reads and writes through its one connection",
          "[adapters][storage][read_pool]") {
  auto db = MustOpen(":memory:");
  CHECK(db->ReadPoolStats().max_readers == 0);
  auto findings = Findings(*db);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const std::string id = absl::StrCat("f-", t, "-", i);
        if (!findings->Put(SimpleFinding(id, "vm:1", core::Category::kGeneral), 0).ok() ||
            !findings->Get(id).ok() || !findings->List({}).ok()) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  CHECK(failures.load() == 0);
  auto listed = findings->List({});
  REQUIRE(listed.ok());
  CHECK(listed->size() == 40);
  CHECK(db->ReadPoolStats().open_readers == 0);
  CHECK(db->SchemaVersion().ok());
  CHECK(db->CheckIntegrity().ok());
}

TEST_CASE("a read whose reader cannot be opened runs on the writer instead of failing",
          "[adapters][storage][read_pool]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  auto db = MustOpen(path);
  auto findings = Findings(*db);
  REQUIRE(findings->Put(SimpleFinding("f-1", "vm:1", core::Category::kGeneral), 0).ok());
  REQUIRE(db->ReadPoolStats().open_readers == 0);

  // A reader opens the file by name; the writer keeps its open descriptor.
  REQUIRE(std::rename(path.c_str(), (path + ".away").c_str()) == 0);
  auto listed = findings->List({});
  REQUIRE(std::rename((path + ".away").c_str(), path.c_str()) == 0);
  REQUIRE(listed.ok());
  CHECK(Ids(*listed) == std::vector<std::string>{"f-1"});
  adapters::storage::SqliteReadPoolStats stats = db->ReadPoolStats();
  CHECK(stats.writer_fallbacks == 1);
  CHECK_FALSE(stats.last_open_error.empty());
  CHECK(stats.open_readers == 0);

  // The next read opens a reader.
  REQUIRE(findings->Get("f-1").ok());
  stats = db->ReadPoolStats();
  CHECK(stats.open_readers == 1);
  CHECK(stats.writer_fallbacks == 1);
}

TEST_CASE("a body calling back into its database neither deadlocks nor writes unlocked",
          "[adapters][storage][read_pool]") {
  TempDir dir;
  SqliteOptions options;
  options.max_readers = 1;
  auto db = MustOpen(dir.File("pulse.db"), options);
  auto findings = Findings(*db);
  REQUIRE(findings->Put(SimpleFinding("f-1", "vm:1", core::Category::kGeneral), 0).ok());
  auto count = [](SQLite::Database& conn) { return Count(conn, "SELECT count(*) FROM findings"); };

  SECTION("a read inside a write runs in the write transaction and sees its changes") {
    std::int64_t seen = -1;
    absl::Status nested_write;
    const absl::Status status = WriteTransaction(*db, [&](SQLite::Database& conn) -> absl::Status {
      conn.exec("DELETE FROM findings");
      const absl::Status read = ReadTransaction(*db, [&](SQLite::Database& inner) -> absl::Status {
        seen = count(inner);
        return absl::OkStatus();
      });
      nested_write = WriteTransaction(*db, [](SQLite::Database&) { return absl::OkStatus(); });
      return read.ok() ? absl::AbortedError("roll back") : read;
    });
    CHECK(absl::IsAborted(status));
    CHECK(seen == 0);
    CHECK(absl::IsInternal(nested_write));
    CHECK(findings->Get("f-1").ok());  // rolled back
  }
  SECTION("a read inside a read shares the one reader instead of waiting for it") {
    std::int64_t seen = -1;
    const absl::Status status = ReadTransaction(*db, [&](SQLite::Database&) -> absl::Status {
      return ReadTransaction(*db, [&](SQLite::Database& inner) -> absl::Status {
        seen = count(inner);
        return absl::OkStatus();
      });
    });
    CHECK(status.ok());
    CHECK(seen == 1);
    CHECK(db->ReadPoolStats().open_readers == 1);
  }
  SECTION("a read transaction cannot write") {
    const absl::Status status = ReadTransaction(*db, [&](SQLite::Database& conn) -> absl::Status {
      conn.exec("DELETE FROM findings");
      return absl::OkStatus();
    });
    CHECK(absl::IsUnavailable(status));
    CHECK(findings->Get("f-1").ok());
  }
}

TEST_CASE("closing the database closes its readers, so the WAL is checkpointed and removed",
          "[adapters][storage][read_pool]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  auto db = MustOpen(path);
  auto findings = Findings(*db);
  REQUIRE(findings->Put(SimpleFinding("f-1", "vm:1", core::Category::kGeneral), 0).ok());
  REQUIRE(findings->List({}).ok());
  REQUIRE(db->ReadPoolStats().open_readers == 1);
  CHECK(std::filesystem::exists(path + "-wal"));
  findings.reset();
  db.reset();
  // Only the file's last connection removes the WAL: no reader was left open.
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(Count(raw, "SELECT count(*) FROM findings") == 1);
}

TEST_CASE("a negative max_readers is refused", "[adapters][storage][read_pool]") {
  TempDir dir;
  SqliteOptions options;
  options.max_readers = -1;
  auto db = SqliteDatabase::Open(dir.File("pulse.db"), options);
  CHECK(absl::IsInvalidArgument(db.status()));
}

}  // namespace
}  // namespace pulse::testing::storage
