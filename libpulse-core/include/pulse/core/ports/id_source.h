// IdSource: fresh identifiers for sessions, questions, action requests and tool calls a
// provider left unnamed. The core has no randomness of its own.
// Real implementation: adapters/system RandomIdSource (128 random bits, hex); tests use
// pulse::testing::SequentialIdSource.
// Thread-safety: implementations must be safe to call concurrently (tool handlers running in
// parallel ask for ids).
// NewId cannot fail: an implementation that cannot produce ids fails at construction.
#pragma once

#include <string>

namespace pulse::core {

class IdSource {
 public:
  virtual ~IdSource() = default;

  // A new id of 1..64 characters from [a-z0-9], never returned before by this source.
  virtual std::string NewId() = 0;
};

}  // namespace pulse::core
