// libFuzzer target: the Ollama native chat stream (NDJSON) through OllamaProtocol's decoder.
// The harness and its invariants are in provider_stream_fuzz.h.
#include <cstddef>
#include <cstdint>

#include "provider_stream_fuzz.h"
#include "pulse/adapters/providers/ollama_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const pulse::adapters::providers::OllamaProtocol protocol("llama-fuzz");
  return pulse::fuzz::FuzzProviderStream(protocol, data, size);
}
