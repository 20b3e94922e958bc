#include "pulse/adapters/system/random_id_source.h"

#include <sodium.h>

#include <array>

namespace pulse::adapters::system {

absl::StatusOr<std::unique_ptr<RandomIdSource>> RandomIdSource::Open() {
  if (sodium_init() < 0) {
    return absl::UnavailableError("libsodium could not be initialized");
  }
  return std::unique_ptr<RandomIdSource>(new RandomIdSource());
}

std::string RandomIdSource::NewId() {
  std::array<unsigned char, 16> bytes{};
  randombytes_buf(bytes.data(), bytes.size());
  std::array<char, 2 * 16 + 1> hex{};
  sodium_bin2hex(hex.data(), hex.size(), bytes.data(), bytes.size());
  return std::string(hex.data(), 2 * bytes.size());
}

}  // namespace pulse::adapters::system
