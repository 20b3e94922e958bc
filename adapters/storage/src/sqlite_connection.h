// Private to adapters/storage: the connections behind SqliteDatabase (one guarded writer and a
// pool of read-only readers), transaction runners that turn SQLiteCpp exceptions into
// absl::Status at this boundary, and the value encodings every store shares (times as int64
// nanoseconds, text checks).
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/string_view.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {

// Read-only connections to one database file, opened on demand up to a bound and reused.
// Acquire hands a free reader to one caller at a time, opening one when none is free and the
// bound allows, and otherwise waits until another caller returns one. Thread-safe. Readers
// closed by the destructor; none may be leased then (the stores borrow the database).
class ReaderPool {
 public:
  // `path` is the file every reader opens (SQLite's absolute name of the writer's file);
  // `max_readers` 0 makes every Acquire answer "use the writer".
  ReaderPool(std::string path, int max_readers, int busy_timeout_ms);
  ~ReaderPool();
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  // One read-only connection and the statements prepared on it (destroyed before it).
  struct Reader {
    std::unique_ptr<SQLite::Database> db;
    StatementCache statements;
  };

  // A reader lent to one caller; returned to the pool on destruction (or closed, when it was
  // left inside a transaction). get() is null when the read must use the writer: the pool is
  // off (max_readers 0), or opening a reader failed (counted and kept in Stats()).
  class Lease {
   public:
    Lease() = default;
    Lease(ReaderPool* pool, std::unique_ptr<Reader> reader)
        : pool_(pool), reader_(std::move(reader)) {}
    ~Lease();
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    SQLite::Database* get() const { return reader_ == nullptr ? nullptr : reader_->db.get(); }
    StatementCache* statements() const {
      return reader_ == nullptr ? nullptr : &reader_->statements;
    }

   private:
    ReaderPool* pool_ = nullptr;  // null when there is nothing to return
    std::unique_ptr<Reader> reader_;
  };

  // An idle reader, else a new one while fewer than max_readers are open, else the first one
  // returned (waiting). Without `wait`, a null lease instead of waiting when every reader is
  // lent (a thread that must not wait, core::NoBlockingScope).
  [[nodiscard]] Lease Acquire(bool wait = true);

  SqliteReadPoolStats Stats() const;

 private:
  void Return(std::unique_ptr<Reader> reader);
  std::unique_ptr<Reader> OpenReader() const;

  const std::string path_;
  const int max_readers_;
  const int busy_timeout_ms_;
  mutable absl::Mutex mu_;
  absl::CondVar returned_;
  std::vector<std::unique_ptr<Reader>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle + lent + being opened
  std::int64_t writer_fallbacks_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_open_error_ ABSL_GUARDED_BY(mu_);
};

using TransactionBody = absl::FunctionRef<absl::Status(SQLite::Database&)>;

// One WriteTransaction waiting for its group commit: the caller's body (which the caller keeps
// alive: it waits until `done`), and its status once the commit that held it has ended.
struct PendingWrite {
  explicit PendingWrite(TransactionBody b) : body(b) {}
  TransactionBody body;
  absl::Status status = absl::InternalError("sqlite write: not run");
  bool done = false;
};

// Group commit: WriteTransaction calls that arrive while another thread commits queue here; the
// next leader runs every queued body in one transaction, each in its own savepoint, so the
// bodies share one COMMIT (one fsync of the WAL) instead of paying one each.
struct GroupCommit {
  absl::Mutex mu;
  absl::CondVar changed;  // a batch ended: its callers are done, and the next may lead
  std::vector<PendingWrite*> queue ABSL_GUARDED_BY(mu);
  bool leading ABSL_GUARDED_BY(mu) = false;
};

struct SqliteDatabase::Connection {
  // Readers close before the writer, so the writer is the file's last connection in this
  // process and its close can checkpoint the WAL and remove it, as before there were readers.
  ~Connection() { readers.reset(); }

  absl::Mutex mu;
  // The one writer (and the reader of ":memory:").
  std::unique_ptr<SQLite::Database> db ABSL_PT_GUARDED_BY(mu);
  // The writer's prepared statements; declared after `db`, so destroyed before it closes.
  StatementCache statements ABSL_GUARDED_BY(mu);
  std::unique_ptr<ReaderPool> readers;  // never null after Open
  GroupCommit group;
};

// Runs `body` inside BEGIN IMMEDIATE ... COMMIT on the writer, holding the writer mutex. A
// non-OK status or an exception from `body` rolls back; exceptions become statuses
// (StatusFromException). Internal, without waiting, when this thread is already inside a
// transaction on the same database (a body called back into a store): waiting would deadlock.
// Group commit: bodies of concurrent calls may run in one transaction, in arrival order, each
// inside its own SAVEPOINT (a failing body rolls back to it, alone), and share its COMMIT; the
// body may then run on another caller's thread (the caller waits). A call returns only after
// the COMMIT that holds its write has ended, so an OK status is as durable as before. A COMMIT
// that fails fails every body in it, and an error that makes SQLite roll back the whole
// transaction (an I/O error, a full disk) fails the bodies before it too; nothing of them is
// written. A caller already inside a transaction on another database runs alone.
[[nodiscard]] absl::Status WriteTransaction(const SqliteDatabase& database, TransactionBody body);

// The same for reads: BEGIN (deferred) ... COMMIT gives `body` one consistent snapshot, which
// includes every transaction committed before the call. It runs on a reader from the pool, so
// it waits neither for the writer mutex nor for another process's write lock; on the writer
// (under its mutex) when the pool has no readers (":memory:", max_readers 0) or one could not
// be opened. On a thread that must not wait (core::NoBlockingScope) a read that would wait for
// a reader or for the writer refuses (Unavailable, the scope marked) instead, and so does every
// WriteTransaction, before it queues or writes anything. Called from inside a transaction on the
// same database on this thread, `body` runs inline in that transaction (and sees its uncommitted
// writes) instead of waiting for a connection its own thread holds.
[[nodiscard]] absl::Status ReadTransaction(const SqliteDatabase& database, TransactionBody body);

// SQLite's error as a status: BUSY/LOCKED/IOERR/CANTOPEN/FULL/READONLY/PERM -> Unavailable,
// CORRUPT/NOTADB -> DataLoss, TOOBIG -> InvalidArgument, CONSTRAINT -> Aborted, anything else
// -> Internal. `what` names the operation.
absl::Status StatusFromSqliteError(int extended_code, std::string_view detail,
                                   std::string_view what);
absl::Status StatusFromException(const std::exception& e, std::string_view what);

// std::string_view as absl::string_view (Debian's Abseil keeps them distinct types).
using core::ToAbsl;

// ---- value encodings ----------------------------------------------------------------------

// absl::Time as nanoseconds since the Unix epoch. InvalidArgument when the time is outside
// int64 nanoseconds (years 1678..2261) or has a sub-nanosecond part: the store keeps times
// exactly or refuses them.
[[nodiscard]] absl::StatusOr<std::int64_t> EncodeTime(absl::Time t, std::string_view field);
absl::Time DecodeTime(std::int64_t nanos);

// Text columns hold well-formed UTF-8 without NUL bytes: what every SQL text type (and the
// JSON codecs) can hold exactly, so a PostgreSQL adapter keeps the same semantics.
// InvalidArgument naming `field` otherwise.
[[nodiscard]] absl::Status CheckText(std::string_view text, std::string_view field);
// Invalid sequences and NULs replaced by U+FFFD (for text the store must never refuse).
std::string SanitizeText(std::string_view text);

// Binds helpers: NULL for nullopt.
void BindOptionalTime(SQLite::Statement& statement, int index, std::optional<std::int64_t> nanos);
std::optional<absl::Time> OptionalTime(const SQLite::Column& column);

}  // namespace pulse::adapters::storage
