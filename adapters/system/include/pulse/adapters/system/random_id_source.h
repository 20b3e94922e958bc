// RandomIdSource: the IdSource port over libsodium's CSPRNG (randombytes_buf): 128 random bits
// as 32 lowercase hex digits, so ids are unguessable and never collide in practice.
// Thread-safe (libsodium's generator is).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "pulse/core/ports/id_source.h"

namespace pulse::adapters::system {

class RandomIdSource final : public core::IdSource {
 public:
  // Initializes libsodium. Unavailable when it cannot be initialized.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<RandomIdSource>> Open();

  std::string NewId() override;

 private:
  RandomIdSource() = default;
};

}  // namespace pulse::adapters::system
