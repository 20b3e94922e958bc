#include "pulse/adapters/storage/sqlite_storage.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "file_modes.h"

namespace pulse::adapters::storage {
namespace {

// Creates `dir` 0700 when missing; an existing one must already be private (file_modes.h).
absl::Status EnsureDirectory(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) == 0) {
    // mkdir's mode passes through the umask, which can only take bits away; state it exactly.
    if (chmod(dir.c_str(), 0700) != 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot set the mode of data dir ", dir, ": ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  if (errno == EEXIST) {
    return CheckPrivateDirectory(dir);
  }
  return absl::UnavailableError(
      absl::StrCat("cannot create data dir ", dir, ": ", std::strerror(errno)));
}

template <class T>
absl::Status Take(absl::StatusOr<std::unique_ptr<T>> opened, std::unique_ptr<T>& into) {
  if (!opened.ok()) {
    return opened.status();
  }
  into = *std::move(opened);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStorage>> OpenSqliteStorage(const std::string& data_dir,
                                                                 const SqliteOptions& options) {
  if (data_dir.empty()) {
    return absl::InvalidArgumentError("data dir is empty");
  }
  if (absl::Status s = EnsureDirectory(data_dir); !s.ok()) {
    return s;
  }
  const auto file = [&](const char* name) { return absl::StrCat(data_dir, "/", name); };
  auto storage = std::make_unique<SqliteStorage>();
  if (absl::Status s =
          Take(SqliteDatabase::Open(file(kDatabaseFileName), options), storage->database);
      !s.ok()) {
    return s;
  }
  SqliteDatabase& db = *storage->database;
  absl::Status status = Take(SecretBox::Open(file(kSecretKeyFileName)), storage->secrets);
  if (status.ok()) {
    status = Take(SqliteFindingStore::Open(db), storage->findings);
  }
  if (status.ok()) {
    status = Take(SqliteActionStore::Open(db), storage->actions);
  }
  if (status.ok()) {
    status = Take(SqliteAuditLog::Open(db), storage->audit);
  }
  if (status.ok()) {
    status = Take(SqliteOperatorStateStore::Open(db), storage->operator_state);
  }
  if (status.ok()) {
    status = Take(SqliteMetricsHistory::Open(db), storage->metrics);
  }
  if (status.ok()) {
    status = Take(SqliteSessionStore::Open(db), storage->sessions);
  }
  if (status.ok()) {
    status = Take(SqliteTokenStore::Open(db, file(kTokenKeyFileName)), storage->tokens);
  }
  if (status.ok()) {
    status = Take(SqliteCredentialStore::Open(db, *storage->secrets), storage->credentials);
  }
  if (status.ok()) {
    status = Take(SqlitePatrolRunStore::Open(db), storage->patrol_runs);
  }
  if (status.ok()) {
    status = Take(SqliteHostAgentStore::Open(db), storage->host_agents);
  }
  if (status.ok()) {
    status = Take(SqliteAiSettingsStore::Open(db), storage->ai_settings);
  }
  if (status.ok()) {
    status = Take(SqliteNotificationOutbox::Open(db), storage->notifications);
  }
  if (status.ok()) {
    status = Take(SqliteNotificationChannels::Open(db, *storage->credentials),
                  storage->notification_channels);
  }
  if (!status.ok()) {
    return status;
  }
  return storage;
}

}  // namespace pulse::adapters::storage
