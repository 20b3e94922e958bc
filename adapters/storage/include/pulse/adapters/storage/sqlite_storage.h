// SqliteStorage: everything adapters/storage keeps in one data dir, opened together for the
// apps' wiring — the database file (pulse.db), the secret box (secret.key), the token key
// (token.key) and one adapter per store port. The data dir is created with mode 0700 when
// missing.
// Thread-safety: the members are as documented on each adapter. Lifetime: the stores borrow
// `database` and `secrets`, which the struct declares first so they are destroyed last.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "pulse/adapters/storage/secret_box.h"
#include "pulse/adapters/storage/sqlite_action_store.h"
#include "pulse/adapters/storage/sqlite_ai_settings_store.h"
#include "pulse/adapters/storage/sqlite_audit_log.h"
#include "pulse/adapters/storage/sqlite_credential_store.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/adapters/storage/sqlite_finding_store.h"
#include "pulse/adapters/storage/sqlite_host_agent_store.h"
#include "pulse/adapters/storage/sqlite_metrics_history.h"
#include "pulse/adapters/storage/sqlite_notification_channels.h"
#include "pulse/adapters/storage/sqlite_notification_outbox.h"
#include "pulse/adapters/storage/sqlite_operator_state_store.h"
#include "pulse/adapters/storage/sqlite_patrol_run_store.h"
#include "pulse/adapters/storage/sqlite_session_store.h"
#include "pulse/adapters/storage/sqlite_token_store.h"

namespace pulse::adapters::storage {

struct SqliteStorage {
  std::unique_ptr<SqliteDatabase> database;
  std::unique_ptr<SecretBox> secrets;
  std::unique_ptr<SqliteFindingStore> findings;
  std::unique_ptr<SqliteActionStore> actions;
  std::unique_ptr<SqliteAuditLog> audit;
  std::unique_ptr<SqliteOperatorStateStore> operator_state;
  std::unique_ptr<SqliteMetricsHistory> metrics;
  std::unique_ptr<SqliteSessionStore> sessions;
  std::unique_ptr<SqliteTokenStore> tokens;
  std::unique_ptr<SqliteCredentialStore> credentials;
  std::unique_ptr<SqlitePatrolRunStore> patrol_runs;
  std::unique_ptr<SqliteHostAgentStore> host_agents;
  std::unique_ptr<SqliteAiSettingsStore> ai_settings;
  std::unique_ptr<SqliteNotificationOutbox> notifications;
  std::unique_ptr<SqliteNotificationChannels> notification_channels;
};

// Opens (creating what is missing) the storage of `data_dir`. Errors: those of
// SqliteDatabase::Open, SecretBox::Open, SqliteTokenStore::Open and
// SqliteCredentialStore::Open; Unavailable when the directory cannot be created.
[[nodiscard]] absl::StatusOr<std::unique_ptr<SqliteStorage>> OpenSqliteStorage(
    const std::string& data_dir, const SqliteOptions& options = {});

}  // namespace pulse::adapters::storage
