// SqliteSessionStore: the SessionStore port on the shared SQLite database, one row per session
// (sessions): the core's JSON of the record (loop/session_record_json.h) next to the columns
// queries use (revision, status, message_count, created_at_ns, updated_at_ns). Update is a
// compare-and-swap on the revision in SQL. A record is stored only when its JSON decodes back to
// exactly it, and its times must fit int64 nanoseconds; InvalidArgument otherwise.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/ports/session_store.h"

namespace pulse::adapters::storage {

class SqliteSessionStore final : public core::SessionStore {
 public:
  // Never fails today; StatusOr keeps the adapter shape (STYLE rule 4).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteSessionStore>> Open(
      SqliteDatabase& database);

  explicit SqliteSessionStore(SqliteDatabase& database) : database_(database) {}

  absl::StatusOr<core::SessionRecord> Create(const core::SessionRecord& record) override;
  absl::StatusOr<core::SessionRecord> Get(std::string_view id) override;
  absl::StatusOr<core::SessionRecord> Update(const core::SessionRecord& record) override;
  absl::StatusOr<std::vector<core::SessionSummary>> List(
      const core::SessionListQuery& query) override;
  absl::Status Delete(std::string_view id) override;

 private:
  SqliteDatabase& database_;
};

}  // namespace pulse::adapters::storage
