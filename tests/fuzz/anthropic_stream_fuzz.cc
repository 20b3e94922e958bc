// libFuzzer target: the Anthropic Messages stream (named SSE events) through AnthropicProtocol's
// decoder. The harness and its invariants are in provider_stream_fuzz.h.
#include <cstddef>
#include <cstdint>

#include "provider_stream_fuzz.h"
#include "pulse/adapters/providers/anthropic_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const pulse::adapters::providers::AnthropicProtocol protocol("claude-fuzz", "k");
  return pulse::fuzz::FuzzProviderStream(protocol, data, size);
}
