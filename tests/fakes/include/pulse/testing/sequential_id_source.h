// SequentialIdSource: an IdSource that returns "id1", "id2", ... so ids in tests are
// predictable. Thread-safe (an atomic counter).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "pulse/core/ports/id_source.h"

namespace pulse::testing {

class SequentialIdSource final : public core::IdSource {
 public:
  std::string NewId() override { return "id" + std::to_string(++next_); }

  // How many ids were handed out.
  std::uint64_t issued() const { return next_.load(); }

 private:
  std::atomic<std::uint64_t> next_{0};
};

}  // namespace pulse::testing
