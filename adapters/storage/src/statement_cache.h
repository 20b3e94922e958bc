// Private to adapters/storage: prepared statements kept per connection and reused. Preparing a
// statement (parsing and planning its SQL) was about a fifth of pulse-server's CPU on a read
// route such as the fleet context, where every store read prepared its statements again
// (docs/storage.md, "Prepared statements").
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

struct sqlite3;

namespace pulse::adapters::storage {

// The statements prepared on one connection, by SQL text, the most recently used kept up to a
// bound. It belongs to its connection: it is used only by whoever holds the connection (the
// writer under its mutex, a reader while leased), and it is destroyed before the connection
// closes (a connection with statements left open cannot close, and its WAL would stay).
class StatementCache {
 public:
  static constexpr std::size_t kDefaultCapacity = 64;

  explicit StatementCache(std::size_t capacity = kDefaultCapacity);
  ~StatementCache();
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  // A statement for `sql` on `db`, reset and without bindings, lent until Release. Prepared on
  // the first use of the text (SQLiteCpp's exception on an error), reused after that. nullptr
  // when the statement for `sql` is lent already (a body running the same SQL inside its own
  // loop over rows) or `db` is not this cache's connection: the caller prepares its own.
  SQLite::Statement* Acquire(SQLite::Database& db, std::string_view sql);
  // Gives back a statement Acquire lent: reset (a read statement stepped only part way holds
  // its snapshot until reset) and its bindings cleared. Never throws.
  void Release(SQLite::Statement* statement) noexcept;
  // Finalizes every statement that is not lent (e.g. before the schema changes).
  void Clear() noexcept;

  std::size_t size() const { return entries_.size(); }
  // How many statements this cache has prepared; reuses do not count.
  std::uint64_t prepared() const { return prepared_; }

 private:
  struct Entry {
    std::string sql;
    std::unique_ptr<SQLite::Statement> statement;
    bool lent = false;
  };
  using Entries = std::list<Entry>;  // most recently used first; iterators stay valid

  void EvictIdleBeyond(std::size_t keep) noexcept;

  const std::size_t capacity_;
  sqlite3* handle_ = nullptr;  // the connection, set on first use
  Entries entries_;
  std::unordered_map<std::string_view, Entries::iterator> by_sql_;  // views into Entry::sql
  std::unordered_map<const SQLite::Statement*, Entries::iterator> lent_;
  std::uint64_t prepared_ = 0;
};

// One statement for the length of a scope: the one the connection's cache keeps for `sql` when
// `db` is the connection of a transaction running on this thread (ReadTransaction and
// WriteTransaction bodies), otherwise one prepared for this scope alone. Use it as the
// statement (`*p`, `p->`); bind, step and read columns as with SQLite::Statement, and do not
// keep column values past the scope. Throws as SQLite::Statement's constructor does.
class Prepared {
 public:
  Prepared(SQLite::Database& db, std::string_view sql);
  ~Prepared();
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;

  SQLite::Statement& operator*() const { return *statement_; }
  SQLite::Statement* operator->() const { return statement_; }

 private:
  StatementCache* cache_ = nullptr;  // set when statement_ is lent by it
  SQLite::Statement* statement_ = nullptr;
  std::optional<SQLite::Statement> own_;
};

// The cache of the transaction this thread runs on `db`, or nullptr (sqlite_connection.cc).
StatementCache* ActiveStatementCache(const SQLite::Database& db);

}  // namespace pulse::adapters::storage
