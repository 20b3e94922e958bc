#include "pulse/adapters/storage/sqlite_credential_store.h"

#include <SQLiteCpp/Statement.h>
#include <sodium/utils.h>

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "key_binding.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

constexpr char kPurpose[] = "provider_credentials";
constexpr std::size_t kMaxProviderBytes = 64;

absl::Status CheckProvider(std::string_view provider) {
  if (provider.empty() || provider.size() > kMaxProviderBytes) {
    return absl::InvalidArgumentError("provider name must be 1..64 characters");
  }
  for (char c : provider) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError("provider name may hold only [a-z0-9._-]");
    }
  }
  return absl::OkStatus();
}

// The sealed plaintext names its provider, so a value moved to another row does not open.
std::string Frame(std::string_view provider, std::string_view secret) {
  std::string framed(provider);
  framed.push_back('\0');
  framed.append(secret);
  return framed;
}

// Wipes a string's bytes before it is released.
class Wiped {
 public:
  explicit Wiped(std::string text) : text_(std::move(text)) {}
  ~Wiped() { sodium_memzero(text_.data(), text_.size()); }
  Wiped(const Wiped&) = delete;
  Wiped& operator=(const Wiped&) = delete;
  const std::string& get() const { return text_; }

 private:
  std::string text_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteCredentialStore>> SqliteCredentialStore::Open(
    SqliteDatabase& database, const SecretBox& box) {
  if (absl::Status s =
          BindKey(database, kPurpose, box.key_id(), "provider_credentials", kSecretKeyFileName);
      !s.ok()) {
    return s;
  }
  return std::make_unique<SqliteCredentialStore>(database, box);
}

absl::Status SqliteCredentialStore::Put(std::string_view provider, std::string_view secret,
                                        absl::Time now) {
  if (absl::Status s = CheckProvider(provider); !s.ok()) {
    return s;
  }
  if (secret.empty()) {
    return absl::InvalidArgumentError("the secret is empty");
  }
  absl::StatusOr<std::int64_t> now_ns = EncodeTime(now, "updated_at");
  if (!now_ns.ok()) {
    return now_ns.status();
  }
  const Wiped framed(Frame(provider, secret));
  const std::string sealed = box_.Seal(framed.get());
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_upsert(
        db,
        "INSERT INTO provider_credentials (provider, sealed, updated_at_ns) VALUES (?, ?, ?) "
        "ON CONFLICT (provider) DO UPDATE SET sealed = excluded.sealed, "
        "updated_at_ns = excluded.updated_at_ns");
    SQLite::Statement& upsert = *prepared_upsert;
    upsert.bind(1, std::string(provider));
    upsert.bind(2, sealed.data(), static_cast<int>(sealed.size()));
    upsert.bind(3, static_cast<std::int64_t>(*now_ns));
    upsert.exec();
    return absl::OkStatus();
  });
}

absl::StatusOr<std::string> SqliteCredentialStore::Get(std::string_view provider) const {
  std::optional<std::string> sealed;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db, "SELECT sealed FROM provider_credentials WHERE provider = ?");
    SQLite::Statement& q = *prepared_q;
    q.bind(1, std::string(provider));
    if (q.executeStep()) {
      const SQLite::Column column = q.getColumn(0);
      sealed = std::string(static_cast<const char*>(column.getBlob()),
                           static_cast<std::size_t>(column.getBytes()));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (!sealed.has_value()) {
    return absl::NotFoundError("no credential is stored for this provider");
  }
  absl::StatusOr<std::string> framed = box_.Unseal(*sealed);
  if (!framed.ok()) {
    return framed.status();
  }
  const Wiped plain(*std::move(framed));
  const std::string expected_prefix = Frame(provider, "");
  if (plain.get().compare(0, expected_prefix.size(), expected_prefix) != 0) {
    return absl::DataLossError("the stored credential was sealed for another provider");
  }
  return plain.get().substr(expected_prefix.size());
}

absl::Status SqliteCredentialStore::Delete(std::string_view provider) {
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_del(db, "DELETE FROM provider_credentials WHERE provider = ?");
    SQLite::Statement& del = *prepared_del;
    del.bind(1, std::string(provider));
    if (del.exec() == 0) {
      return absl::NotFoundError("no credential is stored for this provider");
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<CredentialInfo>> SqliteCredentialStore::List() const {
  std::vector<CredentialInfo> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(db,
                        "SELECT provider, updated_at_ns FROM provider_credentials "
                        "ORDER BY provider");
    SQLite::Statement& q = *prepared_q;
    while (q.executeStep()) {
      out.push_back({q.getColumn(0).getString(), DecodeTime(q.getColumn(1).getInt64())});
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

}  // namespace pulse::adapters::storage
