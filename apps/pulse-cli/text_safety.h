// What pulse-cli does to text the server sent before a terminal sees it. A server (or anything
// it relays: model output, finding titles, tool results) must not be able to move the cursor,
// recolour the screen, retitle the window or hide text, so every control character is made
// visible (ESC becomes "^["), C1 controls, bidirectional overrides and ill-formed UTF-8 become
// U+FFFD, and single-line fields lose their line breaks. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pulse::cli {

// `text` made safe for a terminal. Newlines and tabs are kept when `multiline` (a lone CR
// becomes a newline, CRLF one newline), else each becomes one space.
std::string SafeText(std::string_view text, bool multiline = true);

// SafeText(text, false) shortened to at most `max_columns` terminal columns, ending in "…" when
// cut (never inside a character, and never leaving half of a wide one).
std::string SafeCell(std::string_view text, std::size_t max_columns = 60);

// The terminal columns well-formed UTF-8 `text` takes: each code point as the C library's
// wcwidth counts it under the C.UTF-8 locale (2 for East Asian wide and emoji, 0 for combining
// marks and zero-width characters, 1 for anything it calls unprintable).
std::size_t DisplayWidth(std::string_view text);

// Reassembles UTF-8 text that arrives in pieces, so a character split across two pieces is not
// mistaken for an ill-formed one: Take returns the longest prefix of what it was given so far
// that does not end inside a character and keeps the rest (at most 3 bytes) for the next call.
class Utf8Joiner {
 public:
  std::string Take(std::string_view piece);
  // What is held back (an incomplete character at the end of the text).
  std::string Flush();

 private:
  std::string pending_;
};

}  // namespace pulse::cli
