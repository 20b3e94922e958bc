// SqliteTokenStore: the TokenStore port on the shared SQLite database. A raw token is 32 bytes
// from libsodium's CSPRNG, base64url-encoded behind "pulse_", returned once by Create and
// never stored: the table keeps crypto_generichash(token, server key) (keyed BLAKE2b-256; the
// key is <data-dir>/token.key, a 0600 key file separate from the secret box's). Authenticate
// looks the keyed hash up through its unique index and confirms the match with sodium_memcmp;
// an index probe on a keyed hash tells a timing observer nothing about the token, because
// without the server key nobody can aim at a hash. The database records which token key
// issued the tokens, so a replaced token.key fails at Open instead of rejecting every token.
// Thread-safety: safe from any thread (SqliteDatabase). Borrows the database.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/storage/key_file_mode.h"
#include "pulse/adapters/storage/sqlite_database.h"
#include "pulse/core/ports/token_store.h"

namespace pulse::adapters::storage {

class SecretKey;

class SqliteTokenStore final : public core::TokenStore {
 public:
  // Loads (or creates) the server key at `key_path`; errors as SecretBox::Open, plus
  // FailedPrecondition when the stored tokens were issued under another key.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteTokenStore>> Open(
      SqliteDatabase& database, const std::string& key_path,
      KeyFileMode mode = KeyFileMode::kCreateIfMissing);

  SqliteTokenStore(SqliteDatabase& database, std::unique_ptr<SecretKey> key);
  ~SqliteTokenStore() override;

  absl::StatusOr<core::IssuedApiToken> Create(const core::NewApiToken& request) override;
  absl::StatusOr<core::ApiTokenInfo> Authenticate(std::string_view token, absl::Time now) override;
  absl::StatusOr<std::vector<core::ApiTokenInfo>> List() override;
  absl::Status Revoke(std::string_view id) override;

 private:
  std::string Hash(std::string_view token) const;

  SqliteDatabase& database_;
  std::unique_ptr<SecretKey> key_;
};

}  // namespace pulse::adapters::storage
