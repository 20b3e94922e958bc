// Helpers shared by the libFuzzer targets of tests/fuzz: an invariant check that aborts (so
// libFuzzer and the replay runner both report it as a crash with the input saved), and a
// cursor that takes control bytes from the front of an input. Not thread-safe; one per input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

// Aborts with `what` when `cond` is false: a broken invariant is a finding like a crash.
#define PULSE_FUZZ_CHECK(cond, what)                                                              \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      std::fprintf(stderr, "fuzz invariant broken at %s:%d: %s (%s)\n", __FILE__, __LINE__, what, \
                   #cond);                                                                        \
      std::abort();                                                                               \
    }                                                                                             \
  } while (false)

namespace pulse::fuzz {

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  // The next byte, or 0 once the input is used up.
  std::uint8_t Byte() {
    if (rest_.empty()) {
      return 0;
    }
    const auto b = static_cast<std::uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }

  // Everything not taken yet.
  std::string_view Rest() const { return rest_; }

 private:
  std::string_view rest_;
};

}  // namespace pulse::fuzz
