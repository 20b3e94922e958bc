#include "text_safety.h"

#include <clocale>
#include <cstdint>
#include <cwchar>

#include "pulse/core/json/utf8.h"

namespace pulse::cli {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the UTF-8 sequence a lead byte starts (1 for ASCII and for stray bytes).
std::size_t SequenceLength(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF4) {
    return 4;
  }
  if (lead >= 0xE0) {
    return lead <= 0xEF ? 3 : 1;
  }
  if (lead >= 0xC2) {
    return 2;
  }
  return 1;
}

std::uint32_t DecodeAt(std::string_view text, std::size_t i, std::size_t len) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  switch (len) {
    case 2:
      return ((byte(0) & 0x1Fu) << 6) | (byte(1) & 0x3Fu);
    case 3:
      return ((byte(0) & 0x0Fu) << 12) | ((byte(1) & 0x3Fu) << 6) | (byte(2) & 0x3Fu);
    case 4:
      return ((byte(0) & 0x07u) << 18) | ((byte(1) & 0x3Fu) << 12) | ((byte(2) & 0x3Fu) << 6) |
             (byte(3) & 0x3Fu);
    default:
      return byte(0);
  }
}

// Code points that reorder or hide the text around them (Trojan-Source style display tricks).
bool IsBidiControl(std::uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x061C ||
         cp == 0x200E || cp == 0x200F;
}

}  // namespace

std::string SafeText(std::string_view raw, bool multiline) {
  const std::string text = core::SanitizeUtf8(raw);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n' || c == '\t') {
        out.push_back(multiline ? static_cast<char>(c) : ' ');
      } else if (c == '\r') {
        const bool crlf = i + 1 < text.size() && text[i + 1] == '\n';
        if (!crlf) {
          out.push_back(multiline ? '\n' : ' ');
        }
      } else if (c < 0x20) {
        out.push_back('^');
        out.push_back(static_cast<char>(c + 0x40));  // ESC -> ^[, NUL -> ^@
      } else if (c == 0x7F) {
        out += "^?";
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // SanitizeUtf8 left only well-formed sequences.
    std::size_t len = SequenceLength(c);
    if (i + len > text.size()) {
      len = text.size() - i;
    }
    const std::uint32_t cp = DecodeAt(text, i, len);
    if ((cp >= 0x80 && cp <= 0x9F) || IsBidiControl(cp)) {
      out += kReplacement;
    } else {
      out.append(text, i, len);
    }
    i += len;
  }
  return out;
}

namespace {

// The code point starting at text[i] (well-formed UTF-8, as SafeText writes it); advances `i`
// past it. A stray continuation or truncated sequence counts as one U+FFFD.
char32_t NextCodePoint(std::string_view text, std::size_t& i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  if (lead < 0x80) {
    length = 1;
  } else if ((lead >> 5) == 0x6) {
    length = 2;
  } else if ((lead >> 4) == 0xE) {
    length = 3;
  } else if ((lead >> 3) == 0x1E) {
    length = 4;
  }
  if (length == 0 || i + length > text.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = length == 1 ? lead : lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  i += length;
  return cp;
}

// wcwidth under C.UTF-8 (built into glibc), whatever the process's own locale is.
int CodePointWidth(char32_t cp) {
  if (cp < 0x7F) {
    return cp >= 0x20 ? 1 : 0;
  }
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  if (utf8 == static_cast<locale_t>(nullptr)) {
    return 1;
  }
  const locale_t previous = uselocale(utf8);
  const int width = wcwidth(static_cast<wchar_t>(cp));
  uselocale(previous);
  return width < 0 ? 1 : width;
}

}  // namespace

std::size_t DisplayWidth(std::string_view text) {
  std::size_t columns = 0;
  for (std::size_t i = 0; i < text.size();) {
    columns += static_cast<std::size_t>(CodePointWidth(NextCodePoint(text, i)));
  }
  return columns;
}

std::string SafeCell(std::string_view text, std::size_t max_columns) {
  std::string safe = SafeText(text, false);
  if (max_columns == 0 || DisplayWidth(safe) <= max_columns) {
    return safe;
  }
  // Keep whole characters while they fit in max_columns - 1 columns, then the ellipsis.
  std::size_t columns = 0;
  std::size_t cut = 0;
  for (std::size_t i = 0; i < safe.size();) {
    const auto width = static_cast<std::size_t>(CodePointWidth(NextCodePoint(safe, i)));
    if (columns + width > max_columns - 1) {
      break;
    }
    columns += width;
    cut = i;
  }
  safe.resize(cut);
  return safe + "\xE2\x80\xA6";  // …
}

std::string Utf8Joiner::Take(std::string_view piece) {
  pending_.append(piece);
  // Find the start of the last character and check whether it is complete.
  std::size_t start = pending_.size();
  std::size_t back = 0;
  while (start > 0 && back < 4) {
    --start;
    ++back;
    if ((static_cast<unsigned char>(pending_[start]) & 0xC0) != 0x80) {
      break;
    }
  }
  std::size_t keep = 0;
  if (start < pending_.size()) {
    const std::size_t need = SequenceLength(static_cast<unsigned char>(pending_[start]));
    const std::size_t have = pending_.size() - start;
    if (need > 1 && have < need) {
      keep = have;
    }
  }
  std::string ready = pending_.substr(0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return ready;
}

std::string Utf8Joiner::Flush() {
  std::string rest = std::move(pending_);
  pending_.clear();
  return rest;
}

}  // namespace pulse::cli
