// Private to adapters/storage: the versioned schema. Migration N turns a version N-1 schema
// into version N; each runs in its own write transaction together with its schema_version
// row, so a crash leaves the file at N-1 or N, never in between. Never edit a released
// migration: append a new one and raise kSchemaVersion.
#pragma once

#include <span>

namespace pulse::adapters::storage {

struct Migration {
  int version;
  const char* description;
  const char* sql;  // one or more statements
};

// Every migration, in version order; the last one's version is kSchemaVersion.
std::span<const Migration> Migrations();

// PRAGMA application_id of a Pulse database: "PULS".
inline constexpr int kApplicationId = 0x50554C53;

}  // namespace pulse::adapters::storage
