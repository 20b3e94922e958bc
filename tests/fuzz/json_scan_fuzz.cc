// Fuzzes ScanJson (pulse/core/json/json_scan.h), which pulse-mcp runs on every successful reply
// of pulse-server: its own scan of the common subset of JSON, with RapidJSON's reader for the
// rest. Invariant: it accepts exactly what ParseJson accepts, with the same error code when it
// refuses and the same root type and top-level count when it accepts. Input: byte 0 picks the
// nesting limit (1-16), the rest is the text (the scan reads it in eight-byte words: the
// sanitizers see any read past its end).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pulse::fuzz::Input input(data, size);
  const pulse::core::JsonLimits limits{.max_bytes = 1 << 20, .max_depth = 1 + input.Byte() % 16u};
  const std::string text(input.Rest());  // its own allocation, exactly the text's length
  const auto scanned = pulse::core::ScanJson(text, limits);
  const auto parsed = pulse::core::ParseJson(text, limits);
  PULSE_FUZZ_CHECK(scanned.ok() == parsed.ok(), "ScanJson and ParseJson disagree");
  if (!parsed.ok()) {
    PULSE_FUZZ_CHECK(scanned.status().code() == parsed.status().code(), "different codes");
    return 0;
  }
  PULSE_FUZZ_CHECK(scanned->type == parsed->GetType(), "different root types");
  const std::size_t count =
      parsed->IsObject() ? parsed->MemberCount() : (parsed->IsArray() ? parsed->Size() : 0);
  PULSE_FUZZ_CHECK(scanned->size == count, "different top-level counts");
  return 0;
}
