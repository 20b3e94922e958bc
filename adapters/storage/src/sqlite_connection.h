// Private to adapters/storage: the guarded connection behind SqliteDatabase, transaction
// runners that turn SQLiteCpp exceptions into absl::Status at this boundary, and the value
// encodings every store shares (times as int64 nanoseconds, text checks).
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_database.h"

namespace pulse::adapters::storage {

struct SqliteDatabase::Connection {
  std::mutex mu;
  std::unique_ptr<SQLite::Database> db;
};

using TransactionBody = absl::FunctionRef<absl::Status(SQLite::Database&)>;

// Runs `body` inside BEGIN IMMEDIATE ... COMMIT holding the connection mutex. A non-OK status
// or an exception from `body` rolls back; exceptions become statuses (StatusFromException).
[[nodiscard]] absl::Status WriteTransaction(const SqliteDatabase& database, TransactionBody body);

// The same for reads: BEGIN (deferred) gives `body` one consistent snapshot.
[[nodiscard]] absl::Status ReadTransaction(const SqliteDatabase& database, TransactionBody body);

// SQLite's error as a status: BUSY/LOCKED/IOERR/CANTOPEN/FULL/READONLY/PERM -> Unavailable,
// CORRUPT/NOTADB -> DataLoss, TOOBIG -> InvalidArgument, CONSTRAINT -> Aborted, anything else
// -> Internal. `what` names the operation.
absl::Status StatusFromSqliteError(int extended_code, std::string_view detail,
                                   std::string_view what);
absl::Status StatusFromException(const std::exception& e, std::string_view what);

// std::string_view as absl::string_view (Debian's Abseil keeps them distinct types).
inline absl::string_view Sv(std::string_view v) { return {v.data(), v.size()}; }

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
