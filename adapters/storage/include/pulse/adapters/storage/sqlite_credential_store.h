// SqliteCredentialStore: provider credentials (API keys) at rest in the shared SQLite
// database, each sealed by a SecretBox and bound to its provider name (a sealed value copied
// to another provider's row does not open). The database records which key sealed them
// (key_bindings), so opening it with another secret.key fails at Open with a message instead
// of at first use. Plaintext is never written, logged or listed.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database and the box.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/adapters/storage/secret_box.h"
#include "pulse/adapters/storage/sqlite_database.h"

namespace pulse::adapters::storage {

struct CredentialInfo {
  std::string provider;
  absl::Time updated_at;

  friend bool operator==(const CredentialInfo&, const CredentialInfo&) = default;
};

class SqliteCredentialStore final {
 public:
  // FailedPrecondition when stored credentials were sealed under another key than `box`'s.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteCredentialStore>> Open(
      SqliteDatabase& database, const SecretBox& box);

  SqliteCredentialStore(SqliteDatabase& database, const SecretBox& box)
      : database_(database), box_(box) {}

  // Seals and stores (or replaces) the provider's secret. InvalidArgument for an empty or
  // ill-formed provider name (1..64 of [a-z0-9._-]) or an empty secret.
  [[nodiscard]] absl::Status Put(std::string_view provider, std::string_view secret,
                                 absl::Time now);

  // The provider's secret in plaintext. NotFound when none is stored; FailedPrecondition when
  // it was sealed under another key; DataLoss when it was altered.
  [[nodiscard]] absl::StatusOr<std::string> Get(std::string_view provider) const;

  // Removes the provider's secret. NotFound when none is stored.
  [[nodiscard]] absl::Status Delete(std::string_view provider);

  // Which providers have a stored secret, by name. Never the secrets.
  [[nodiscard]] absl::StatusOr<std::vector<CredentialInfo>> List() const;

 private:
  SqliteDatabase& database_;
  const SecretBox& box_;
};

}  // namespace pulse::adapters::storage
