#include "key_binding.h"

#include <SQLiteCpp/Statement.h>

#include "absl/strings/str_cat.h"
#include "sqlite_connection.h"

namespace pulse::adapters::storage {

absl::Status BindKey(const SqliteDatabase& database, const std::string& purpose,
                     const std::string& key_id, const std::string& table,
                     const std::string& key_file) {
  return WriteTransaction(database, [&](SQLite::Database& db) -> absl::Status {
    SQLite::Statement current(db, "SELECT key_id FROM key_bindings WHERE purpose = ?");
    current.bind(1, purpose);
    if (current.executeStep()) {
      const std::string bound = current.getColumn(0).getString();
      if (bound == key_id) {
        return absl::OkStatus();
      }
      // `table` is one of this library's constant table names, never input.
      const bool has_rows =
          db.execAndGet(absl::StrCat("SELECT EXISTS (SELECT 1 FROM ", table, ")")).getInt() != 0;
      if (has_rows) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the ", table, " in this database were written under another ", key_file, " (key ",
            bound, "); the key file now present is ", key_id, ". Restore the original ", key_file,
            " from a backup; nothing was changed"));
      }
    }
    SQLite::Statement bind(db,
                           "INSERT INTO key_bindings (purpose, key_id) VALUES (?, ?) "
                           "ON CONFLICT (purpose) DO UPDATE SET key_id = excluded.key_id");
    bind.bind(1, purpose);
    bind.bind(2, key_id);
    bind.exec();
    return absl::OkStatus();
  });
}

}  // namespace pulse::adapters::storage
