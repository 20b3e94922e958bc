#include "pulse/adapters/storage/secret_box.h"

#include <sodium/crypto_secretbox.h>
#include <sodium/randombytes.h>
#include <sodium/utils.h>

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "key_file.h"

namespace pulse::adapters::storage {
namespace {

constexpr unsigned char kVersion = 1;
constexpr std::size_t kIdBytes = 16;
constexpr std::size_t kHeaderBytes = 1 + kIdBytes + crypto_secretbox_NONCEBYTES;
constexpr char kPurpose[] = "secret box";

std::string RawId(const SecretKey& key) {
  std::string hex = key.Id(kPurpose);
  std::string raw(kIdBytes, '\0');
  std::size_t len = 0;
  sodium_hex2bin(reinterpret_cast<unsigned char*>(raw.data()), raw.size(), hex.data(), hex.size(),
                 nullptr, &len, nullptr);
  return raw;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SecretBox>> SecretBox::Open(const std::string& key_path,
                                                           KeyFileMode mode) {
  absl::StatusOr<std::unique_ptr<SecretKey>> key = SecretKey::LoadOrCreate(key_path, mode);
  if (!key.ok()) {
    return key.status();
  }
  return std::make_unique<SecretBox>(*std::move(key));
}

SecretBox::SecretBox(std::unique_ptr<SecretKey> key)
    : key_(std::move(key)), key_id_(key_->Id(kPurpose)) {}

SecretBox::~SecretBox() = default;

std::string SecretBox::Seal(std::string_view plaintext) const {
  std::string out(kHeaderBytes + crypto_secretbox_MACBYTES + plaintext.size(), '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  bytes[0] = kVersion;
  const std::string id = RawId(*key_);
  std::copy(id.begin(), id.end(), bytes + 1);
  unsigned char* nonce = bytes + 1 + kIdBytes;
  randombytes_buf(nonce, crypto_secretbox_NONCEBYTES);
  crypto_secretbox_easy(bytes + kHeaderBytes,
                        reinterpret_cast<const unsigned char*>(plaintext.data()), plaintext.size(),
                        nonce, key_->data());
  return out;
}

absl::StatusOr<std::string> SecretBox::Unseal(std::string_view sealed) const {
  if (sealed.size() < kHeaderBytes + crypto_secretbox_MACBYTES ||
      static_cast<unsigned char>(sealed[0]) != kVersion) {
    return absl::DataLossError("not a sealed secret (wrong format or version)");
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(sealed.data());
  const std::string id = RawId(*key_);
  if (sodium_memcmp(bytes + 1, id.data(), kIdBytes) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the secret was sealed under a different key (key ",
                     ToHex(bytes + 1, kIdBytes), "); this key is ", key_id_,
                     ". Restore the secret.key it was sealed with, or store the secret again"));
  }
  const std::size_t cipher_size = sealed.size() - kHeaderBytes;
  std::string plain(cipher_size - crypto_secretbox_MACBYTES, '\0');
  if (crypto_secretbox_open_easy(reinterpret_cast<unsigned char*>(plain.data()),
                                 bytes + kHeaderBytes, cipher_size, bytes + 1 + kIdBytes,
                                 key_->data()) != 0) {
    sodium_memzero(plain.data(), plain.size());
    return absl::DataLossError(
        "the sealed secret was altered or corrupted (authentication failed)");
  }
  return plain;
}

}  // namespace pulse::adapters::storage
