// SqliteHostAgentStore: the HostAgentStore port (core/ports/host_agent_store.h) on the shared
// SQLite database, table host_agents (docs/storage.md). The host is the primary key and the
// token id is UNIQUE, so the one-token-one-host rule holds in the schema as well as in the
// code; every Bind and SaveReport is one write transaction (BEGIN IMMEDIATE), so two callers
// racing to bind the same host see one winner and one FailedPrecondition.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/ports/host_agent_store.h"

namespace pulse::adapters::storage {

// The longest agent_version SaveReport stores (the protocol's bound, adapters/hostagent).
inline constexpr std::size_t kMaxAgentVersionBytes = 64;

class SqliteHostAgentStore final : public core::HostAgentStore {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteHostAgentStore>> Open(
      SqliteDatabase& database);

  explicit SqliteHostAgentStore(SqliteDatabase& database) : database_(database) {}

  absl::StatusOr<core::HostAgentRecord> Bind(
      std::string_view host, std::string_view token_id, absl::Time at,
      std::optional<std::string_view> replacing_token_id = std::nullopt) override;
  absl::StatusOr<core::HostAgentRecord> Get(std::string_view host) override;
  absl::StatusOr<core::HostAgentRecord> FindByToken(std::string_view token_id) override;
  absl::StatusOr<std::uint64_t> SaveReport(std::string_view host, std::string_view token_id,
                                           std::string_view agent_version,
                                           std::string_view report_json, absl::Time at) override;
  absl::StatusOr<std::vector<core::HostAgentRecord>> List() override;
  absl::StatusOr<std::vector<core::HostAgentRecord>> ListBindings() override;

 private:
  SqliteDatabase& database_;
};

}  // namespace pulse::adapters::storage
