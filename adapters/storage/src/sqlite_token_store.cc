#include "pulse/adapters/storage/sqlite_token_store.h"

#include <SQLiteCpp/Statement.h>
#include <sodium/crypto_generichash.h>
#include <sodium/randombytes.h>
#include <sodium/utils.h>

#include <array>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "key_binding.h"
#include "key_file.h"
#include "pulse/core/auth/api_token.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

constexpr char kPurpose[] = "api_tokens";
constexpr char kColumns[] =
    "id, token_hash, name, scopes, created_at_ns, last_used_at_ns, expires_at_ns, kind";

absl::Status Unauthenticated() { return absl::UnauthenticatedError("API token is not valid"); }

struct Row {
  core::ApiTokenInfo info;
  std::string hash;
};

Row ReadRow(SQLite::Statement& q) {
  Row row;
  row.info.id = q.getColumn(0).getString();
  const SQLite::Column hash = q.getColumn(1);
  row.hash.assign(static_cast<const char*>(hash.getBlob()),
                  static_cast<std::size_t>(hash.getBytes()));
  row.info.name = q.getColumn(2).getString();
  const std::string scopes = q.getColumn(3).getString();
  row.info.scopes = absl::StrSplit(scopes, ',', absl::SkipEmpty());
  row.info.created_at = DecodeTime(q.getColumn(4).getInt64());
  row.info.last_used_at = OptionalTime(q.getColumn(5));
  row.info.expires_at = OptionalTime(q.getColumn(6));
  // The column's CHECK admits only the three kinds; anything else reads as the least
  // privileged one rather than as a human.
  row.info.kind =
      core::ParseApiTokenKind(q.getColumn(7).getString()).value_or(core::ApiTokenKind::kAgent);
  return row;
}

// The row whose keyed hash is `hash`, confirmed with a constant-time comparison.
std::optional<Row> FindByHash(SQLite::Database& db, const std::string& hash) {
  Prepared prepared_q(db,
                      absl::StrCat("SELECT ", kColumns, " FROM api_tokens WHERE token_hash = ?"));
  SQLite::Statement& q = *prepared_q;
  q.bind(1, hash.data(), static_cast<int>(hash.size()));
  if (!q.executeStep()) {
    return std::nullopt;
  }
  Row row = ReadRow(q);
  if (row.hash.size() != hash.size() ||
      sodium_memcmp(row.hash.data(), hash.data(), hash.size()) != 0) {
    return std::nullopt;
  }
  return row;
}

std::string Base64Url(const unsigned char* bytes, std::size_t size) {
  std::string out(sodium_base64_ENCODED_LEN(size, sodium_base64_VARIANT_URLSAFE_NO_PADDING), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes, size, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  out.resize(out.find('\0'));
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteTokenStore>> SqliteTokenStore::Open(
    SqliteDatabase& database, const std::string& key_path, KeyFileMode mode) {
  absl::StatusOr<std::unique_ptr<SecretKey>> key = SecretKey::LoadOrCreate(key_path, mode);
  if (!key.ok()) {
    return key.status();
  }
  if (absl::Status s =
          BindKey(database, kPurpose, (*key)->Id(kPurpose), "api_tokens", kTokenKeyFileName);
      !s.ok()) {
    return s;
  }
  return std::make_unique<SqliteTokenStore>(database, *std::move(key));
}

SqliteTokenStore::SqliteTokenStore(SqliteDatabase& database, std::unique_ptr<SecretKey> key)
    : database_(database), key_(std::move(key)) {}

SqliteTokenStore::~SqliteTokenStore() = default;

std::string SqliteTokenStore::Hash(std::string_view token) const {
  std::array<unsigned char, crypto_generichash_BYTES> digest{};
  crypto_generichash(digest.data(), digest.size(),
                     reinterpret_cast<const unsigned char*>(token.data()), token.size(),
                     key_->data(), SecretKey::kBytes);
  return std::string(digest.begin(), digest.end());
}

absl::StatusOr<core::IssuedApiToken> SqliteTokenStore::Create(const core::NewApiToken& request) {
  absl::StatusOr<std::vector<std::string>> scopes = core::ValidateNewApiToken(request);
  if (!scopes.ok()) {
    return scopes.status();
  }
  absl::StatusOr<std::int64_t> created_ns = EncodeTime(request.created_at, "created_at");
  if (!created_ns.ok()) {
    return created_ns.status();
  }
  std::optional<std::int64_t> expires_ns;
  if (request.expires_at.has_value()) {
    absl::StatusOr<std::int64_t> e = EncodeTime(*request.expires_at, "expires_at");
    if (!e.ok()) {
      return e.status();
    }
    expires_ns = *e;
  }
  std::array<unsigned char, core::kApiTokenRandomBytes> secret{};
  randombytes_buf(secret.data(), secret.size());
  std::array<unsigned char, 8> id_bytes{};
  randombytes_buf(id_bytes.data(), id_bytes.size());

  core::IssuedApiToken issued;
  issued.token = std::string(core::kApiTokenPrefix) + Base64Url(secret.data(), secret.size());
  sodium_memzero(secret.data(), secret.size());
  issued.info.id = std::string(core::kApiTokenIdPrefix) + ToHex(id_bytes.data(), id_bytes.size());
  issued.info.name = request.name;
  issued.info.kind = request.kind;
  issued.info.scopes = *std::move(scopes);
  issued.info.created_at = request.created_at;
  issued.info.expires_at = request.expires_at;
  const std::string hash = Hash(issued.token);
  absl::Status status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_insert(db,
                             "INSERT INTO api_tokens (id, token_hash, name, scopes, "
                             "created_at_ns, last_used_at_ns, expires_at_ns, kind) "
                             "VALUES (?, ?, ?, ?, ?, NULL, ?, ?)");
    SQLite::Statement& insert = *prepared_insert;
    insert.bind(1, issued.info.id);
    insert.bind(2, hash.data(), static_cast<int>(hash.size()));
    insert.bind(3, issued.info.name);
    insert.bind(4, absl::StrJoin(issued.info.scopes, ","));
    insert.bind(5, static_cast<std::int64_t>(*created_ns));
    BindOptionalTime(insert, 6, expires_ns);
    insert.bind(7, std::string(core::ToString(issued.info.kind)));
    insert.exec();
    return absl::OkStatus();
  });
  if (!status.ok()) {
    sodium_memzero(issued.token.data(), issued.token.size());
    return status;
  }
  return issued;
}

absl::StatusOr<core::ApiTokenInfo> SqliteTokenStore::Authenticate(std::string_view token,
                                                                  absl::Time now) {
  if (!core::HasApiTokenShape(token)) {
    return Unauthenticated();
  }
  const std::string hash = Hash(token);
  std::optional<Row> row;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    row = FindByHash(db, hash);
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  if (!row.has_value()) {
    return Unauthenticated();
  }
  if (core::IsApiTokenExpired(row->info, now)) {
    return absl::UnauthenticatedError("API token has expired");
  }
  if (!core::ShouldRecordApiTokenUse(row->info, now)) {
    return row->info;
  }
  absl::StatusOr<std::int64_t> now_ns = EncodeTime(now, "authentication time");
  if (!now_ns.ok()) {
    return now_ns.status();
  }
  // Record the use under the write lock, against the row as it is now (it may have been
  // revoked or touched by another request meanwhile).
  status = WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    row = FindByHash(db, hash);
    if (!row.has_value()) {
      return Unauthenticated();
    }
    if (!core::ShouldRecordApiTokenUse(row->info, now)) {
      return absl::OkStatus();
    }
    Prepared prepared_touch(db, "UPDATE api_tokens SET last_used_at_ns = ? WHERE id = ?");
    SQLite::Statement& touch = *prepared_touch;
    touch.bind(1, static_cast<std::int64_t>(*now_ns));
    touch.bind(2, row->info.id);
    touch.exec();
    row->info.last_used_at = now;
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return row->info;
}

absl::StatusOr<std::vector<core::ApiTokenInfo>> SqliteTokenStore::List() {
  std::vector<core::ApiTokenInfo> out;
  absl::Status status = ReadTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_q(
        db, absl::StrCat("SELECT ", kColumns, " FROM api_tokens ORDER BY created_at_ns, id"));
    SQLite::Statement& q = *prepared_q;
    while (q.executeStep()) {
      out.push_back(ReadRow(q).info);
    }
    return absl::OkStatus();
  });
  if (!status.ok()) {
    return status;
  }
  return out;
}

absl::Status SqliteTokenStore::Revoke(std::string_view id) {
  return WriteTransaction(database_, [&](SQLite::Database& db) -> absl::Status {
    Prepared prepared_del(db, "DELETE FROM api_tokens WHERE id = ?");
    SQLite::Statement& del = *prepared_del;
    del.bind(1, std::string(id));
    if (del.exec() == 0) {
      return absl::NotFoundError("no such API token");
    }
    return absl::OkStatus();
  });
}

}  // namespace pulse::adapters::storage
