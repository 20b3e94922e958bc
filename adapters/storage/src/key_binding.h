// Private to adapters/storage: which key each secret-bearing table was written under
// (key_bindings), so a data dir opened with the wrong key file fails at Open with a message.
#pragma once

#include <SQLiteCpp/Database.h>

#include <string>

#include "absl/status/status.h"
#include "pulse/adapters/storage/sqlite_database.h"

namespace pulse::adapters::storage {

// Binds `purpose` to `key_id`. When another key is recorded and `table` still has rows:
// FailedPrecondition naming `key_file` and both fingerprints. When the table is empty, the
// binding moves to the new key (nothing is lost).
[[nodiscard]] absl::Status BindKey(const SqliteDatabase& database, const std::string& purpose,
                                   const std::string& key_id, const std::string& table,
                                   const std::string& key_file);

}  // namespace pulse::adapters::storage
