// SecretBox: secrets at rest (provider API keys) sealed with libsodium's crypto_secretbox
// (XSalsa20-Poly1305) under a 32-byte key kept in a 0600 key file of the data dir
// (<data-dir>/secret.key). Each seal draws a fresh random nonce. A sealed value carries a
// public fingerprint of its key, so opening it with another key is a clear FailedPrecondition
// ("sealed under a different key") rather than a bare MAC failure, and a tampered value is
// DataLoss. There is no plaintext fallback anywhere: a missing or wrong key is an error.
// Thread-safety: immutable after Open; safe from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/storage/key_file_mode.h"

namespace pulse::adapters::storage {

class SecretKey;

class SecretBox final {
 public:
  // Loads (or, under kCreateIfMissing, creates) the key file. Errors as SecretKey: a key file
  // readable by group or others, not owned by this user, a symlink or of the wrong size is
  // FailedPrecondition with a message saying how to fix it; a missing file under kMustExist is
  // FailedPrecondition; I/O problems are Unavailable.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SecretBox>> Open(
      const std::string& key_path, KeyFileMode mode = KeyFileMode::kCreateIfMissing);

  explicit SecretBox(std::unique_ptr<SecretKey> key);
  ~SecretBox();
  SecretBox(const SecretBox&) = delete;
  SecretBox& operator=(const SecretBox&) = delete;

  // `plaintext` sealed: version byte, key fingerprint (16 bytes), nonce (24), ciphertext with
  // its 16-byte MAC. Never fails.
  std::string Seal(std::string_view plaintext) const;

  // The plaintext of a Seal result. FailedPrecondition when it was sealed under another key;
  // DataLoss when it is not a sealed value or was altered.
  [[nodiscard]] absl::StatusOr<std::string> Unseal(std::string_view sealed) const;

  // The public fingerprint of this box's key (32 hex digits).
  const std::string& key_id() const { return key_id_; }

 private:
  std::unique_ptr<SecretKey> key_;
  std::string key_id_;
};

}  // namespace pulse::adapters::storage
