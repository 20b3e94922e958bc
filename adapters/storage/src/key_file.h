// Private to adapters/storage: 32-byte keys kept in files of the data dir (secret.key,
// token.key). A key file must be a regular file owned by this user with mode 0600 (no group or
// other bits); anything else is refused with a message saying how to fix it. A missing file is
// created atomically (written to a 0600 temporary with O_CREAT|O_EXCL, fsynced, then linked
// into place, so a crash never leaves a short key and two processes agree on one key). In
// memory the key lives in sodium_malloc'd, mlocked, read-only pages, zeroed when freed.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/storage/key_file_mode.h"

namespace pulse::adapters::storage {

class SecretKey {
 public:
  static constexpr std::size_t kBytes = 32;

  // Loads the key at `path`, or creates it when missing and `mode` allows. Errors:
  // FailedPrecondition (missing under kMustExist; group/other permissions; not owned by this
  // user; not a regular file or a symlink; wrong size), Unavailable (cannot be read or
  // created: directory missing, permissions), Internal (libsodium failed to initialize).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SecretKey>> LoadOrCreate(
      const std::string& path, KeyFileMode mode);

  ~SecretKey();
  SecretKey(const SecretKey&) = delete;
  SecretKey& operator=(const SecretKey&) = delete;

  const unsigned char* data() const { return key_; }

  // A public fingerprint of the key for `purpose`: 32 hex digits of a keyed BLAKE2b hash of a
  // fixed message. It identifies the key without revealing it.
  std::string Id(std::string_view purpose) const;

 private:
  explicit SecretKey(unsigned char* key) : key_(key) {}
  unsigned char* key_;  // sodium_malloc'd, read-only; owned
};

// sodium_init(), once per process: Internal when libsodium cannot initialize.
[[nodiscard]] absl::Status InitSodium();

std::string ToHex(const unsigned char* bytes, std::size_t size);

}  // namespace pulse::adapters::storage
