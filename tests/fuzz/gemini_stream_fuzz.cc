// libFuzzer target: the Gemini streamGenerateContent stream (SSE) through GeminiProtocol's
// decoder. The harness and its invariants are in provider_stream_fuzz.h.
#include <cstddef>
#include <cstdint>

#include "provider_stream_fuzz.h"
#include "pulse/adapters/providers/gemini_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const pulse::adapters::providers::GeminiProtocol protocol("gemini-fuzz", "k");
  return pulse::fuzz::FuzzProviderStream(protocol, data, size);
}
