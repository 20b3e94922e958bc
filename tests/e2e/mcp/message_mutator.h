// Deterministic damage to valid MCP messages, for the fuzz tests of pulse-mcp: a seed message
// from a small corpus (every method pulse-mcp serves, notifications, a client response), then
// byte-level damage (flipped, inserted and deleted bytes, truncation, spliced JSON tokens and
// bytes that are not UTF-8, repeated ranges, two messages joined) or structural damage that
// keeps the JSON valid (a value anywhere replaced by one of another type, a member removed or
// added), sometimes both. The same seed gives the same sequence. Not thread-safe.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace pulse::testing::e2e {

// The valid messages mutations start from, one JSON-RPC message each.
const std::vector<std::string>& MutationCorpus();

class MessageMutator {
 public:
  explicit MessageMutator(std::uint32_t seed) : random_(seed) {}

  // The next damaged message: one line (never a newline in it), rarely still valid.
  std::string Next();

 private:
  std::string Bytes(std::string message);
  std::string Structure(const std::string& message);

  std::mt19937 random_;
};

}  // namespace pulse::testing::e2e
