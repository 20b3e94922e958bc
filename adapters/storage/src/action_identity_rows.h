// Private to adapters/storage: an action's immutable identity as rows (migration 8,
// docs/storage.md) — the identity columns of `actions` and its 1:1 `action_identities` row.
// Encoding is checked before a transaction starts (InvalidArgument, nothing written); decoding
// is strict (DataLoss when a stored value is not one EncodeIdentity writes). None of it is the
// API's wire JSON, so renaming a wire member never touches a stored action.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/core/model/action_types.h"

namespace pulse::adapters::storage {

// The bound of one identity's text: every text field and list item together. The ids and the
// reason also keep the model's own bounds (core::kMaxActionIdBytes, core::kMaxActionTextBytes).
inline constexpr std::size_t kMaxIdentityBytes = 1 << 20;

struct IdentityRow {
  std::int64_t created_at_ns = 0;
  std::int64_t planned_at_ns = 0;
  std::int64_t expires_at_ns = 0;
  // The plan's string lists as JSON arrays of strings (the storage's encoding of a list).
  std::string predicted_blast_radius;
  std::string safety_checks;
  std::string verification_steps;
  const core::ActionRecord* record = nullptr;
};

// The identity of `record` as it will be stored, or InvalidArgument naming the field when it
// cannot be stored exactly: a text that is not UTF-8 without NUL (CheckText), an id or the
// reason over the model's bound, the identity over kMaxIdentityBytes, a quorum outside 1..16,
// a time EncodeTime refuses, or a plan whose request id, resource, capability or params differ
// from the request's (each is stored once).
[[nodiscard]] absl::StatusOr<IdentityRow> EncodeIdentity(const core::ActionRecord& record);

// Writes the action_identities row of the `actions` row inserted just before, in the same
// transaction. Throws SQLite::Exception like every statement (the transaction runner converts).
void InsertIdentity(SQLite::Database& db, const IdentityRow& row);

// The columns ReadIdentity reads, in its order, for a SELECT over
// `actions a LEFT JOIN action_identities i ON i.action_id = a.id`.
extern const char kIdentityColumns[];

// Fills record.request, record.plan and record.created_at from the columns of `q` from `first`
// on (kIdentityColumns). DataLoss when the identity row is missing or a value is not one
// EncodeIdentity writes: an unknown enum string, a flag other than 0 or 1, a quorum outside
// 1..16, a non-integer time, or a list that is not a JSON array of UTF-8 strings.
[[nodiscard]] absl::Status ReadIdentity(const SQLite::Statement& q, int first,
                                        core::ActionRecord& record);

}  // namespace pulse::adapters::storage
