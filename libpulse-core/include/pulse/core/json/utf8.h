// UTF-8 checks and repairs for text that crosses a JSON boundary. "Valid" is the strict
// definition of RFC 3629: no overlong forms, no UTF-16 surrogates (U+D800..U+DFFF), nothing
// above U+10FFFF and no truncated sequence. "Clean text" is what free-form fields may hold:
// valid UTF-8 without NUL, DEL or ASCII controls other than tab and newline. Pure functions;
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pulse::core {

// True when `text` is well-formed UTF-8. NUL and control characters are valid here.
[[nodiscard]] bool IsValidUtf8(std::string_view text);

// `text` with every byte that does not begin a well-formed sequence replaced by U+FFFD (one
// replacement per byte); well-formed text comes back unchanged.
[[nodiscard]] std::string SanitizeUtf8(std::string_view text);

// The first `max_bytes` bytes of `text`, shortened further so the cut never falls inside a
// multi-byte sequence. Only continuation bytes are stepped over: ill-formed input is cut, not
// repaired (pair with SanitizeUtf8 for that).
[[nodiscard]] std::string TruncateUtf8(std::string_view text, std::size_t max_bytes);

// True when `text` is clean text (see above).
[[nodiscard]] bool IsCleanText(std::string_view text);

// At most `max_bytes` bytes of clean text made from `text`: each ill-formed byte and each
// disallowed control character becomes '?', and the cut never splits a character.
[[nodiscard]] std::string BoundedCleanText(std::string_view text, std::size_t max_bytes);

}  // namespace pulse::core
