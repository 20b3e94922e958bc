#include "statement_cache.h"

#include <exception>
#include <utility>

namespace pulse::adapters::storage {

StatementCache::StatementCache(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

StatementCache::~StatementCache() {
  // Every lender's scope ends before its connection's transaction, and so before this.
  lent_.clear();
  by_sql_.clear();
  entries_.clear();
}

SQLite::Statement* StatementCache::Acquire(SQLite::Database& db, std::string_view sql) {
  if (handle_ == nullptr) {
    handle_ = db.getHandle();
  } else if (handle_ != db.getHandle()) {
    return nullptr;
  }
  if (const auto found = by_sql_.find(sql); found != by_sql_.end()) {
    const Entries::iterator entry = found->second;
    if (entry->lent) {
      return nullptr;
    }
    entries_.splice(entries_.begin(), entries_, entry);
    entry->lent = true;
    lent_.emplace(entry->statement.get(), entry);
    return entry->statement.get();
  }
  // Prepared before anything is recorded: a statement SQLite refuses leaves the cache as it was.
  auto statement = std::make_unique<SQLite::Statement>(db, std::string(sql));
  ++prepared_;
  EvictIdleBeyond(capacity_ - 1);
  entries_.push_front(Entry{std::string(sql), std::move(statement), true});
  const Entries::iterator entry = entries_.begin();
  by_sql_.emplace(entry->sql, entry);
  lent_.emplace(entry->statement.get(), entry);
  return entry->statement.get();
}

void StatementCache::Release(SQLite::Statement* statement) noexcept {
  const auto found = lent_.find(statement);
  if (found == lent_.end()) {
    return;
  }
  const Entries::iterator entry = found->second;
  lent_.erase(found);
  entry->lent = false;
  // tryReset answers the last step's error, which its caller has seen already.
  static_cast<void>(statement->tryReset());
  try {
    statement->clearBindings();  // sqlite3_clear_bindings cannot fail; SQLiteCpp still checks
  } catch (const std::exception&) {
    by_sql_.erase(entry->sql);  // not reused with bindings of an earlier caller
    entries_.erase(entry);
  }
}

void StatementCache::Clear() noexcept { EvictIdleBeyond(0); }

void StatementCache::EvictIdleBeyond(std::size_t keep) noexcept {
  // From the least recently used end; a lent statement stays (its lender holds it).
  auto it = entries_.end();
  while (entries_.size() > keep && it != entries_.begin()) {
    --it;
    if (it->lent) {
      continue;
    }
    by_sql_.erase(it->sql);
    it = entries_.erase(it);
  }
}

Prepared::Prepared(SQLite::Database& db, std::string_view sql) {
  if (StatementCache* cache = ActiveStatementCache(db); cache != nullptr) {
    statement_ = cache->Acquire(db, sql);
    if (statement_ != nullptr) {
      cache_ = cache;
      return;
    }
  }
  own_.emplace(db, std::string(sql));
  statement_ = &*own_;
}

Prepared::~Prepared() {
  if (cache_ != nullptr) {
    cache_->Release(statement_);
  }
}

}  // namespace pulse::adapters::storage
