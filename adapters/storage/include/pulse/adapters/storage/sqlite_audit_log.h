// SqliteAuditLog: the AuditLog port on the shared SQLite database, append-only (a trigger
// refuses UPDATE and DELETE). Before an entry is stored, its free text (message, detail keys
// and values) passes the secret redactor (core/auth/secret_redactor.h), a detail whose key
// names a secret (`api_key`, `password`, ...) keeps only the placeholder, and every text field is
// made storable (ill-formed UTF-8 and NUL bytes become U+FFFD): an audit entry is never lost to
// odd bytes in a refused request, and never keeps a credential that slipped into a message.
// Thread-safety: safe from any thread (SqliteDatabase); entries keep their append order
// (a growing sequence number). Borrows the database.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/ports/audit_log.h"

namespace pulse::adapters::storage {

struct StoredAuditEntry {
  std::int64_t sequence = 0;  // 1, 2, ... in append order
  core::AuditEntry entry;     // as stored: redacted and sanitized
};

struct AuditQuery {
  std::int64_t after_sequence = 0;        // entries with a larger sequence
  std::optional<std::string> subject_id;  // only this subject
  std::size_t limit = 100;                // 1..1000
};

class SqliteAuditLog final : public core::AuditLog {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteAuditLog>> Open(
      SqliteDatabase& database);

  explicit SqliteAuditLog(SqliteDatabase& database) : database_(database) {}

  // InvalidArgument for an entry without category or event, or with a time outside int64
  // nanoseconds; Unavailable when the database cannot be written.
  absl::Status Append(const core::AuditEntry& entry) override;

  // Entries in append order. InvalidArgument for a limit outside 1..1000.
  [[nodiscard]] absl::StatusOr<std::vector<StoredAuditEntry>> List(const AuditQuery& query) const;

 private:
  SqliteDatabase& database_;
};

}  // namespace pulse::adapters::storage
