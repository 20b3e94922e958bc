// Group commit (WriteTransaction): writes that arrive while another commits share the next
// COMMIT, one fsync for many, and each still behaves as its own transaction: an acknowledged
// write is stored, a failing one rolls back alone, and a COMMIT that fails stores none of the
// writes it held (and says so to each caller). Real SQLite files in a temporary directory; the
// cases hold the writer inside one body while the others queue, and count the commits with
// SQLite's commit hook.
#include <SQLiteCpp/Database.h>
#include <sqlite3.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "sqlite_connection.h"
#include "storage_test_support.h"

namespace pulse::testing::storage {
namespace {

using adapters::storage::SqliteDatabase;
using adapters::storage::WriteTransaction;

int CountCommit(void* commits) {
  static_cast<std::atomic<int>*>(commits)->fetch_add(1);
  return 0;  // 0: let the COMMIT proceed
}

// Counts the writer's commits from now on.
void HookCommits(SqliteDatabase& db, std::atomic<int>& commits) {
  absl::MutexLock lock(&db.connection().mu);
  sqlite3_commit_hook(db.connection().db->getHandle(), &CountCommit, &commits);
}

void UnhookCommits(SqliteDatabase& db) {
  absl::MutexLock lock(&db.connection().mu);
  sqlite3_commit_hook(db.connection().db->getHandle(), nullptr, nullptr);
}

std::size_t QueuedWrites(SqliteDatabase& db) {
  absl::MutexLock lock(&db.connection().group.mu);
  return db.connection().group.queue.size();
}

// Waits (up to 20 s) until `n` writes wait for the next commit.
bool AwaitQueued(SqliteDatabase& db, std::size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (QueuedWrites(db) < n) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// The rows as another connection sees them: only what was committed.
std::vector<std::string> CommittedRows(const std::string& path) {
  SQLite::Database reader(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(reader, "SELECT name FROM group_commit_rows ORDER BY name");
  std::vector<std::string> names;
  while (q.executeStep()) {
    names.push_back(q.getColumn(0).getString());
  }
  return names;
}

absl::Status InsertRow(SQLite::Database& db, const std::string& name) {
  SQLite::Statement insert(db, "INSERT INTO group_commit_rows (name, parent) VALUES (?, ?)");
  insert.bind(1, name);
  insert.bind(2, name == "orphan" ? "no-such-parent" : "root");
  insert.exec();
  return absl::OkStatus();
}

// A database with the test's table (its parent reference checked at COMMIT) and one writer
// held inside a body until `release`; `queued` more writes then run `body(i)` from their own
// threads and queue behind it. Returns each queued write's status.
struct Held {
  TempDir dir;
  std::string path = dir.File("pulse.db");
  std::unique_ptr<SqliteDatabase> db = MustOpen(path);

  Held() {
    REQUIRE(WriteTransaction(*db, [](SQLite::Database& d) {
              d.exec(
                  "CREATE TABLE group_commit_parents (name TEXT PRIMARY KEY);"
                  "INSERT INTO group_commit_parents VALUES ('root');"
                  "CREATE TABLE group_commit_rows (name TEXT PRIMARY KEY, parent TEXT NOT NULL "
                  "REFERENCES group_commit_parents (name) DEFERRABLE INITIALLY DEFERRED)");
              return absl::OkStatus();
            }).ok());
  }

  template <typename Body>
  std::vector<absl::Status> RunQueued(int queued, Body body) {
    absl::Notification holding;
    absl::Notification release;
    absl::Status first;
    std::thread holder([&] {
      first = WriteTransaction(*db, [&](SQLite::Database& d) {
        holding.Notify();
        release.WaitForNotification();
        return InsertRow(d, "held");
      });
    });
    holding.WaitForNotification();
    std::vector<absl::Status> statuses(static_cast<std::size_t>(queued));
    std::vector<std::thread> threads;
    for (int i = 0; i < queued; ++i) {
      threads.emplace_back([&, i] {
        statuses[static_cast<std::size_t>(i)] =
            WriteTransaction(*db, [&](SQLite::Database& d) { return body(d, i); });
      });
    }
    const bool all_queued = AwaitQueued(*db, static_cast<std::size_t>(queued));
    release.Notify();
    holder.join();
    for (std::thread& t : threads) {
      t.join();
    }
    UnhookCommits(*db);
    CHECK(all_queued);
    CHECK(first.ok());
    return statuses;
  }
};

TEST_CASE("writes queued behind a commit share the next one and are all stored",
          "[storage][group_commit]") {
  Held held;
  std::atomic<int> commits{0};
  HookCommits(*held.db, commits);
  const std::vector<absl::Status> statuses = held.RunQueued(
      8, [](SQLite::Database& d, int i) { return InsertRow(d, absl::StrCat("w", i)); });
  for (const absl::Status& s : statuses) {
    CHECK(s.ok());
  }
  // The held write's own commit, then one for the 8 that queued behind it.
  CHECK(commits.load() == 2);
  CHECK(CommittedRows(held.path) ==
        std::vector<std::string>{"held", "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"});
}

TEST_CASE("a failing write in a shared commit rolls back alone", "[storage][group_commit]") {
  Held held;
  std::atomic<int> commits{0};
  HookCommits(*held.db, commits);
  const std::vector<absl::Status> statuses =
      held.RunQueued(6, [](SQLite::Database& d, int i) -> absl::Status {
        absl::Status inserted = InsertRow(d, absl::StrCat("w", i));
        if (i == 1) {
          return absl::InvalidArgumentError("refused after writing");  // its row goes
        }
        if (i == 3) {
          d.exec("INSERT INTO group_commit_rows (name, parent) VALUES ('held', 'root')");
        }
        if (i == 4) {
          throw std::runtime_error("a body that throws");
        }
        return inserted;
      });
  CHECK(statuses[0].ok());
  CHECK(statuses[1].code() == absl::StatusCode::kInvalidArgument);
  CHECK(statuses[2].ok());
  CHECK(statuses[3].code() == absl::StatusCode::kAborted);  // the constraint, as alone
  CHECK(statuses[4].code() == absl::StatusCode::kInternal);
  CHECK(statuses[5].ok());
  CHECK(commits.load() == 2);
  CHECK(CommittedRows(held.path) == std::vector<std::string>{"held", "w0", "w2", "w5"});
}

TEST_CASE("a commit that fails stores none of the writes it held and fails each of them",
          "[storage][group_commit]") {
  Held held;
  std::atomic<int> commits{0};
  HookCommits(*held.db, commits);
  // The third write's row names no parent: the deferred check fails the shared COMMIT.
  const std::vector<absl::Status> statuses = held.RunQueued(4, [](SQLite::Database& d, int i) {
    return InsertRow(d, i == 2 ? std::string("orphan") : absl::StrCat("w", i));
  });
  for (const absl::Status& s : statuses) {
    CHECK(s.code() == absl::StatusCode::kAborted);  // SQLITE_CONSTRAINT at COMMIT
  }
  CHECK(CommittedRows(held.path) == std::vector<std::string>{"held"});
  // The writer is usable again: the next write commits alone.
  CHECK(WriteTransaction(*held.db, [](SQLite::Database& d) { return InsertRow(d, "after"); }).ok());
  CHECK(CommittedRows(held.path) == std::vector<std::string>{"after", "held"});
}

TEST_CASE("many threads writing at once all get their rows stored", "[storage][group_commit]") {
  TempDir dir;
  const std::string path = dir.File("pulse.db");
  auto db = MustOpen(path);
  REQUIRE(WriteTransaction(*db, [](SQLite::Database& d) {
            d.exec(
                "CREATE TABLE group_commit_counts (thread INTEGER NOT NULL, n INTEGER NOT NULL)");
            return absl::OkStatus();
          }).ok());
  constexpr int kThreads = 16;
  constexpr int kWrites = 40;
  std::atomic<int> commits{0};
  HookCommits(*db, commits);
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int n = 0; n < kWrites; ++n) {
        const absl::Status s = WriteTransaction(*db, [&](SQLite::Database& d) {
          SQLite::Statement insert(d, "INSERT INTO group_commit_counts VALUES (?, ?)");
          insert.bind(1, t);
          insert.bind(2, n);
          insert.exec();
          return absl::OkStatus();
        });
        failed.fetch_add(s.ok() ? 0 : 1);
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  UnhookCommits(*db);
  CHECK(failed.load() == 0);
  SQLite::Database reader(path, SQLite::OPEN_READONLY);
  CHECK(reader.execAndGet("SELECT COUNT(*) FROM group_commit_counts").getInt() ==
        kThreads * kWrites);
  CHECK(reader.execAndGet("SELECT COUNT(DISTINCT thread * 1000 + n) FROM group_commit_counts")
            .getInt() == kThreads * kWrites);
  // Never more commits than writes (how many fewer depends on the scheduler).
  CHECK(commits.load() <= kThreads * kWrites);
}

}  // namespace
}  // namespace pulse::testing::storage
