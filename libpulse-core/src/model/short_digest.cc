#include "pulse/core/model/short_digest.h"

#include <sodium/crypto_hash_sha256.h>

#include <array>
#include <cstddef>

namespace pulse::core::findings_internal {

std::string ShortDigestHex(std::string_view preimage) {
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(preimage.data()),
                     preimage.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(16);
  for (std::size_t i = 0; i < 8; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0x0f]);
  }
  return out;
}

}  // namespace pulse::core::findings_internal
