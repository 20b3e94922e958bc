#include "sqlite_connection.h"

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <limits>
#include <new>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/ports/no_blocking.h"
#include "pulse/core/status_macros.h"

namespace pulse::adapters::storage {
namespace {

// The transactions this thread is running, innermost first. A body that calls back into a
// store of the same database must not wait for a connection its own thread holds (the writer
// mutex, or the last free reader), so ReadTransaction runs it inline and WriteTransaction
// refuses it. The stores never do this today: with one mutex it would have deadlocked.
struct ActiveTransaction {
  const SqliteDatabase::Connection* connection;
  SQLite::Database* db;
  StatementCache* statements;  // the connection's (Prepared finds it here)
  const ActiveTransaction* outer;
};
thread_local const ActiveTransaction* t_active = nullptr;

const ActiveTransaction* FindActive(const SqliteDatabase::Connection& connection) {
  for (const ActiveTransaction* a = t_active; a != nullptr; a = a->outer) {
    if (a->connection == &connection) {
      return a;
    }
  }
  return nullptr;
}

class ActiveScope {
 public:
  explicit ActiveScope(const ActiveTransaction* active) : outer_(t_active) { t_active = active; }
  ~ActiveScope() { t_active = outer_; }
  ActiveScope(const ActiveScope&) = delete;
  ActiveScope& operator=(const ActiveScope&) = delete;

 private:
  const ActiveTransaction* outer_;
};

// Runs one statement that returns no rows, kept by the connection of the transaction this
// thread runs on `db` (BEGIN, COMMIT, SAVEPOINT and RELEASE are the same few texts on every
// transaction). Called inside the ActiveScope that names the connection's cache.
void ExecKept(SQLite::Database& db, std::string_view sql) { Prepared(db, sql)->exec(); }

// BEGIN ... COMMIT on `db`, which the caller holds exclusively (the writer under its mutex, or
// a leased reader), with `statements` its connection's cache.
absl::Status RunTransaction(const SqliteDatabase::Connection& connection, SQLite::Database& db,
                            StatementCache& statements, std::string_view begin,
                            TransactionBody body, std::string_view what) {
  const ActiveTransaction active{&connection, &db, &statements, t_active};
  ActiveScope scope(&active);
  try {
    ExecKept(db, begin);
  } catch (const std::exception& e) {
    return StatusFromException(e, what);
  }
  absl::Status status;
  try {
    status = body(db);
    if (status.ok()) {
      ExecKept(db, "COMMIT");
      return absl::OkStatus();
    }
  } catch (const std::exception& e) {
    status = StatusFromException(e, what);
  }
  // Ignored on purpose: SQLite may have rolled back already (an I/O error or a failed COMMIT),
  // and then ROLLBACK only reports that no transaction is active. A reader still inside a
  // transaction after this is closed, not reused (ReaderPool::Return).
  db.tryExec("ROLLBACK");
  return status;
}

absl::Status RunOnWriter(SqliteDatabase::Connection& connection, std::string_view begin,
                         TransactionBody body, std::string_view what) {
  absl::MutexLock lock(&connection.mu);
  return RunTransaction(connection, *connection.db, connection.statements, begin, body, what);
}

// One pending write inside the open transaction, in its own savepoint. OK when the body
// succeeded and was released into the transaction; otherwise its changes are undone (or SQLite
// has rolled back the whole transaction: the caller checks autocommit).
absl::Status RunInSavepoint(SQLite::Database& db, PendingWrite& write) {
  absl::Status status;
  try {
    ExecKept(db, "SAVEPOINT pulse_write");
    status = write.body(db);
    if (status.ok()) {
      ExecKept(db, "RELEASE pulse_write");
      return absl::OkStatus();
    }
  } catch (const std::exception& e) {
    status = StatusFromException(e, "write");
  }
  if (sqlite3_get_autocommit(db.getHandle()) == 0) {
    // Ignored on purpose: when the savepoint itself never opened, these only report that.
    db.tryExec("ROLLBACK TO pulse_write");
    db.tryExec("RELEASE pulse_write");
  }
  return status;
}

// Runs the batch's bodies in order in as few transactions as possible (one, unless SQLite rolls
// one back under a body) and sets each one's status. Holds the writer mutex throughout.
void RunBatch(SqliteDatabase::Connection& connection, const std::vector<PendingWrite*>& batch) {
  absl::MutexLock lock(&connection.mu);
  SQLite::Database& db = *connection.db;
  if (batch.size() == 1) {  // alone: exactly the transaction it would have had
    batch.front()->status = RunTransaction(connection, db, connection.statements, "BEGIN IMMEDIATE",
                                           batch.front()->body, "write");
    return;
  }
  const ActiveTransaction active{&connection, &db, &connection.statements, t_active};
  ActiveScope scope(&active);
  std::size_t next = 0;
  std::vector<PendingWrite*> applied;
  try {
    applied.reserve(batch.size());
  } catch (const std::bad_alloc&) {
    for (PendingWrite* write : batch) {
      write->status = absl::ResourceExhaustedError("sqlite write: out of memory");
    }
    return;
  }
  while (next < batch.size()) {
    try {
      ExecKept(db, "BEGIN IMMEDIATE");
    } catch (const std::exception& e) {
      const absl::Status status = StatusFromException(e, "write");
      for (; next < batch.size(); ++next) {
        batch[next]->status = status;
      }
      return;
    }
    applied.clear();
    bool rolled_back = false;
    while (next < batch.size() && !rolled_back) {
      PendingWrite& write = *batch[next++];
      write.status = RunInSavepoint(db, write);
      if (write.status.ok()) {
        applied.push_back(&write);
      } else if (sqlite3_get_autocommit(db.getHandle()) != 0) {
        // SQLite rolled the whole transaction back: the writes before this one went with it.
        const absl::Status lost(
            write.status.code(),
            absl::StrCat("sqlite write: rolled back with the transaction it shared: ",
                         write.status.message()));
        for (PendingWrite* w : applied) {
          w->status = lost;
        }
        rolled_back = true;  // the rest start a new transaction
      }
    }
    if (rolled_back) {
      continue;
    }
    try {
      ExecKept(db, "COMMIT");
      continue;
    } catch (const std::exception& e) {
      const absl::Status status = StatusFromException(e, "write");
      for (PendingWrite* w : applied) {
        w->status = status;
      }
    }
    db.tryExec("ROLLBACK");  // as in RunTransaction: may report that none is active
  }
}

}  // namespace

StatementCache* ActiveStatementCache(const SQLite::Database& db) {
  for (const ActiveTransaction* a = t_active; a != nullptr; a = a->outer) {
    if (a->db == &db) {
      return a->statements;
    }
  }
  return nullptr;
}

ReaderPool::ReaderPool(std::string path, int max_readers, int busy_timeout_ms)
    : path_(std::move(path)), max_readers_(max_readers), busy_timeout_ms_(busy_timeout_ms) {
  // Return never allocates, so it cannot throw from a destructor.
  idle_.reserve(static_cast<std::size_t>(max_readers_));
}

ReaderPool::~ReaderPool() {
  absl::MutexLock lock(&mu_);
  idle_.clear();
}

ReaderPool::Lease::~Lease() {
  if (pool_ != nullptr && reader_ != nullptr) {
    pool_->Return(std::move(reader_));
  }
}

ReaderPool::Lease ReaderPool::Acquire(bool wait) {
  {
    absl::MutexLock lock(&mu_);
    if (max_readers_ == 0) {
      return Lease();
    }
    while (idle_.empty() && open_ >= max_readers_) {
      if (!wait) {
        return Lease();
      }
      returned_.Wait(&mu_);
    }
    if (!idle_.empty()) {
      std::unique_ptr<Reader> reader = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(reader));
    }
    // Open outside the lock (it touches the file system); the slot is reserved meanwhile.
    ++open_;
  }
  std::string error;
  try {
    std::unique_ptr<Reader> reader = OpenReader();
    return Lease(this, std::move(reader));
  } catch (const std::exception& e) {
    error = e.what();
  }
  // The read still works on the writer, as every read did before there were readers; the
  // failure is counted and kept for Stats() (the file is open, so this is rare: out of file
  // descriptors or memory). The next Acquire tries again.
  {
    absl::MutexLock lock(&mu_);
    --open_;
    ++writer_fallbacks_;
    last_open_error_ = std::move(error);
  }
  returned_.Signal();
  return Lease();
}

std::unique_ptr<ReaderPool::Reader> ReaderPool::OpenReader() const {
  // Read-only: a read body that tried to write fails (SQLITE_READONLY) instead of writing
  // outside BEGIN IMMEDIATE. WAL is a property of the file, synchronous and foreign_keys only
  // matter to writes; the busy timeout matters to readers in WAL's rare locking cases (another
  // process recovering the WAL index).
  auto reader = std::make_unique<Reader>();
  reader->db = std::make_unique<SQLite::Database>(path_, SQLite::OPEN_READONLY, busy_timeout_ms_);
  reader->db->exec("PRAGMA trusted_schema = OFF");
  return reader;
}

void ReaderPool::Return(std::unique_ptr<Reader> reader) {
  // A reader left inside a transaction (its ROLLBACK failed) would serve an old snapshot to
  // the next caller: close it instead.
  const bool reusable = sqlite3_get_autocommit(reader->db->getHandle()) != 0;
  if (!reusable) {
    reader.reset();
  }
  {
    absl::MutexLock lock(&mu_);
    if (reusable) {
      idle_.push_back(std::move(reader));
    } else {
      --open_;
    }
  }
  returned_.Signal();
}

SqliteReadPoolStats ReaderPool::Stats() const {
  absl::MutexLock lock(&mu_);
  SqliteReadPoolStats stats;
  stats.max_readers = max_readers_;
  stats.open_readers = open_;
  stats.writer_fallbacks = writer_fallbacks_;
  stats.last_open_error = last_open_error_;
  return stats;
}

absl::Status WriteTransaction(const SqliteDatabase& database, TransactionBody body) {
  PULSE_RETURN_IF_ERROR(core::RefuseIfNoBlocking("a SQLite write"));
  SqliteDatabase::Connection& connection = database.connection();
  if (FindActive(connection) != nullptr) {
    return absl::InternalError(
        "sqlite write: a write transaction cannot start inside another transaction on the same "
        "database");
  }
  if (t_active != nullptr) {
    // Inside a transaction on another database: its body may read that one inline, which only
    // works on this thread.
    return RunOnWriter(connection, "BEGIN IMMEDIATE", body, "write");
  }
  GroupCommit& group = connection.group;
  PendingWrite mine(body);
  std::vector<PendingWrite*> batch;
  {
    absl::MutexLock lock(&group.mu);
    group.queue.push_back(&mine);
    while (!mine.done && group.leading) {
      group.changed.Wait(&group.mu);
    }
    if (mine.done) {  // a leader ran it
      return mine.status;
    }
    group.leading = true;  // lead one batch: everything queued now, this call's write included
    batch.swap(group.queue);
  }
  // Ends the batch however RunBatch returns (an allocation failure may throw from it): its
  // callers are released and the next may lead.
  struct EndBatch {
    GroupCommit& group;
    const std::vector<PendingWrite*>& batch;
    ~EndBatch() {
      {
        absl::MutexLock lock(&group.mu);
        for (PendingWrite* write : batch) {
          write->done = true;  // a waiter may return (and free it) once the lock is released
        }
        group.leading = false;
      }
      group.changed.SignalAll();
    }
  } end{group, batch};
  RunBatch(connection, batch);
  return mine.status;
}

absl::Status ReadTransaction(const SqliteDatabase& database, TransactionBody body) {
  SqliteDatabase::Connection& connection = database.connection();
  if (const ActiveTransaction* active = FindActive(connection); active != nullptr) {
    try {
      return body(*active->db);
    } catch (const std::exception& e) {
      return StatusFromException(e, "read");
    }
  }
  // A thread that must not wait takes a reader only if one is free, and never the writer.
  const bool may_wait = core::NoBlockingScope::Current() == nullptr;
  if (connection.readers != nullptr) {
    ReaderPool::Lease lease = connection.readers->Acquire(may_wait);
    if (lease.get() != nullptr) {
      return RunTransaction(connection, *lease.get(), *lease.statements(), "BEGIN", body, "read");
    }
  }
  if (!may_wait) {
    return core::RefuseIfNoBlocking("a SQLite read with no free reader");
  }
  return RunOnWriter(connection, "BEGIN", body, "read");
}

absl::Status StatusFromSqliteError(int extended_code, std::string_view detail,
                                   std::string_view what) {
  const std::string message = absl::StrCat("sqlite ", ToAbsl(what), ": ", ToAbsl(detail));
  switch (extended_code & 0xFF) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_NOLFS:
    case SQLITE_PROTOCOL:
      return absl::UnavailableError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_TOOBIG:
      return absl::InvalidArgumentError(message);
    case SQLITE_CONSTRAINT:
      return absl::AbortedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status StatusFromException(const std::exception& e, std::string_view what) {
  if (const auto* sqlite = dynamic_cast<const SQLite::Exception*>(&e)) {
    return StatusFromSqliteError(sqlite->getExtendedErrorCode(), sqlite->what(), what);
  }
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("sqlite ", ToAbsl(what), ": out of memory"));
  }
  return absl::InternalError(absl::StrCat("sqlite ", ToAbsl(what), ": ", e.what()));
}

absl::StatusOr<std::int64_t> EncodeTime(absl::Time t, std::string_view field) {
  const absl::Time min = absl::FromUnixNanos(std::numeric_limits<std::int64_t>::min());
  const absl::Time max = absl::FromUnixNanos(std::numeric_limits<std::int64_t>::max());
  if (t < min || t > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(field), " is outside the storable time range (years 1678..2261)"));
  }
  const std::int64_t nanos = absl::ToUnixNanos(t);
  if (absl::FromUnixNanos(nanos) != t) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(field), " has a sub-nanosecond part"));
  }
  return nanos;
}

absl::Time DecodeTime(std::int64_t nanos) { return absl::FromUnixNanos(nanos); }

absl::Status CheckText(std::string_view text, std::string_view field) {
  if (text.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(field), " contains a NUL byte"));
  }
  if (!core::IsValidUtf8(text)) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(field), " is not valid UTF-8"));
  }
  return absl::OkStatus();
}

std::string SanitizeText(std::string_view text) {
  // Ill-formed bytes become U+FFFD (core::SanitizeUtf8); NUL is valid UTF-8 but not storable.
  std::string clean = core::SanitizeUtf8(text);
  if (clean.find('\0') == std::string::npos) {
    return clean;
  }
  std::string out;
  out.reserve(clean.size() + 8);
  for (char c : clean) {
    if (c == '\0') {
      out.append("\xEF\xBF\xBD");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

void BindOptionalTime(SQLite::Statement& statement, int index, std::optional<std::int64_t> nanos) {
  if (nanos.has_value()) {
    statement.bind(index, static_cast<std::int64_t>(*nanos));
  } else {
    statement.bind(index);
  }
}

std::optional<absl::Time> OptionalTime(const SQLite::Column& column) {
  if (column.isNull()) {
    return std::nullopt;
  }
  return DecodeTime(column.getInt64());
}

}  // namespace pulse::adapters::storage
