// Internal to the findings feature: the short deterministic digest behind finding ids and
// suppression-rule ids. Not part of the public API.
#pragma once

#include <string>
#include <string_view>

namespace pulse::core::findings_internal {

// The first 8 bytes of sha256(preimage) as 16 lowercase hex digits.
std::string ShortDigestHex(std::string_view preimage);

}  // namespace pulse::core::findings_internal
