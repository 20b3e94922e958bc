// Private to adapters/storage: the row form of action records — encoding checked before a
// transaction starts (text and times; InvalidArgument, nothing written) and decoding of rows
// (DataLoss when a stored value is not one the code writes).
#pragma once

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::storage {

// DataLoss: "stored action <id> has <what>".
absl::Status CorruptAction(std::string_view action_id, std::string_view what);

// The text of `column` parsed by `parse` (a core enum parser); DataLoss naming `what` when the
// text is not one of the enum's strings.
template <class T, class Parse>
absl::StatusOr<T> ParseColumn(const SQLite::Column& column, Parse parse, std::string_view action_id,
                              std::string_view what) {
  const std::optional<T> value = parse(column.getString());
  if (!value.has_value()) {
    return CorruptAction(action_id, absl::StrCat("an unknown ", core::ToAbsl(what), " \"",
                                                 column.getString(), "\""));
  }
  return *value;
}

struct EventRow {
  std::int64_t at_ns = 0;
  const core::ActionLifecycleEvent* event = nullptr;
};

struct ApprovalRow {
  std::int64_t at_ns = 0;
  const core::ApprovalRecord* approval = nullptr;
};

struct ResultRow {
  std::optional<std::int64_t> observed_at_ns;
  std::optional<std::int64_t> started_at_ns;
  std::int64_t finished_at_ns = 0;
  const core::ActionExecutionResult* result = nullptr;
};

[[nodiscard]] absl::StatusOr<std::vector<EventRow>> EncodeEvents(
    const std::vector<core::ActionLifecycleEvent>& events);
[[nodiscard]] absl::StatusOr<ApprovalRow> EncodeApproval(const core::ApprovalRecord& approval);
[[nodiscard]] absl::StatusOr<ResultRow> EncodeResult(const core::ActionExecutionResult& result);

// Appends `events` with sequences first_sequence, first_sequence + 1, ...
void InsertEvents(SQLite::Database& db, const std::string& action_id, std::int64_t first_sequence,
                  const std::vector<EventRow>& events);
void InsertApproval(SQLite::Database& db, const std::string& action_id, std::uint32_t revision,
                    const ApprovalRow& row);
void InsertResult(SQLite::Database& db, const std::string& action_id, const ResultRow& row);

// The record with this id; NotFound when absent.
[[nodiscard]] absl::StatusOr<core::ActionRecord> LoadActionRecord(SQLite::Database& db,
                                                                  const std::string& action_id);

// The action's events in sequence order (empty for an unknown id).
[[nodiscard]] absl::StatusOr<std::vector<core::ActionLifecycleEvent>> LoadActionEvents(
    SQLite::Database& db, const std::string& action_id);

}  // namespace pulse::adapters::storage
