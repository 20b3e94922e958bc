// Private to adapters/storage: who may reach the data dir and the database files. The data dir
// holds operator notes, chat transcripts and key files, so it must be a directory owned by this
// user that group and others cannot enter (no bit of 077): anything else is refused with the
// command that fixes it, like the key files (key_file.h). The database file and its
// write-ahead log and shared-memory index (pulse.db, pulse.db-wal, pulse.db-shm) are 0600:
// a missing database file is created 0600 before SQLite opens it (SQLite gives the log and the
// index the database file's mode when it creates them), and an existing one readable by group
// or others is changed to 0600, which each repair reports. Not thread-safe against another
// process changing the same files; call before the database is opened.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pulse::adapters::storage {

// OK when `dir` is a directory owned by this user with no group or other permission bits.
// FailedPrecondition naming the mode or the owner and the fix (`chmod 700 <dir>`) otherwise;
// Unavailable when it cannot be examined.
[[nodiscard]] absl::Status CheckPrivateDirectory(const std::string& dir);

// Makes `database_path`, `database_path`-wal and `database_path`-shm mode 0600: creates the
// database file (empty, a valid empty database) when missing, and changes an existing file
// that group or others may access. Returns one sentence per changed file ("<path> had mode
// 0644; changed to 0600 ..."). FailedPrecondition for a file that is a symbolic link or not a
// regular file; Unavailable when a file cannot be created, examined or changed (another
// owner, permissions).
[[nodiscard]] absl::StatusOr<std::vector<std::string>> SecureDatabaseFiles(
    const std::string& database_path);

}  // namespace pulse::adapters::storage
