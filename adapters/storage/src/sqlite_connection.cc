#include "sqlite_connection.h"

#include "pulse/core/json/utf8.h"

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <limits>
#include <new>

#include "absl/strings/str_cat.h"

namespace pulse::adapters::storage {
namespace {

absl::Status RunTransaction(const SqliteDatabase& database, const char* begin, TransactionBody body,
                            std::string_view what) {
  SqliteDatabase::Connection& connection = database.connection();
  std::lock_guard<std::mutex> lock(connection.mu);
  SQLite::Database& db = *connection.db;
  try {
    db.exec(begin);
  } catch (const std::exception& e) {
    return StatusFromException(e, what);
  }
  absl::Status status;
  try {
    status = body(db);
    if (status.ok()) {
      db.exec("COMMIT");
      return absl::OkStatus();
    }
  } catch (const std::exception& e) {
    status = StatusFromException(e, what);
  }
  // Ignored on purpose: SQLite may have rolled back already (an I/O error or a failed COMMIT),
  // and then ROLLBACK only reports that no transaction is active.
  db.tryExec("ROLLBACK");
  return status;
}

}  // namespace

absl::Status WriteTransaction(const SqliteDatabase& database, TransactionBody body) {
  return RunTransaction(database, "BEGIN IMMEDIATE", body, "write");
}

absl::Status ReadTransaction(const SqliteDatabase& database, TransactionBody body) {
  return RunTransaction(database, "BEGIN", body, "read");
}

absl::Status StatusFromSqliteError(int extended_code, std::string_view detail,
                                   std::string_view what) {
  const std::string message = absl::StrCat("sqlite ", Sv(what), ": ", Sv(detail));
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
    return absl::ResourceExhaustedError(absl::StrCat("sqlite ", Sv(what), ": out of memory"));
  }
  return absl::InternalError(absl::StrCat("sqlite ", Sv(what), ": ", e.what()));
}

absl::StatusOr<std::int64_t> EncodeTime(absl::Time t, std::string_view field) {
  const absl::Time min = absl::FromUnixNanos(std::numeric_limits<std::int64_t>::min());
  const absl::Time max = absl::FromUnixNanos(std::numeric_limits<std::int64_t>::max());
  if (t < min || t > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(field), " is outside the storable time range (years 1678..2261)"));
  }
  const std::int64_t nanos = absl::ToUnixNanos(t);
  if (absl::FromUnixNanos(nanos) != t) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(field), " has a sub-nanosecond part"));
  }
  return nanos;
}

absl::Time DecodeTime(std::int64_t nanos) { return absl::FromUnixNanos(nanos); }

absl::Status CheckText(std::string_view text, std::string_view field) {
  if (text.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(field), " contains a NUL byte"));
  }
  if (!core::IsValidUtf8(text)) {
    return absl::InvalidArgumentError(absl::StrCat(Sv(field), " is not valid UTF-8"));
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
