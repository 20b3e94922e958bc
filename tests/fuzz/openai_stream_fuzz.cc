// libFuzzer target: the OpenAI chat-completions stream (SSE) through OpenAiProtocol's decoder.
// The harness and its invariants are in provider_stream_fuzz.h.
#include <cstddef>
#include <cstdint>

#include "provider_stream_fuzz.h"
#include "pulse/adapters/providers/openai_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const pulse::adapters::providers::OpenAiProtocol protocol(
      pulse::adapters::providers::OpenAiProtocolOptions{.model = "gpt-fuzz", .api_key = "k"});
  return pulse::fuzz::FuzzProviderStream(protocol, data, size);
}
