#include "pulse/core/json/utf8.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pulse::core {
namespace {

using namespace std::string_literals;  // NOLINT: byte strings with embedded NULs

// An independent reference: decode by code point arithmetic and reject what RFC 3629 rejects.
bool ReferenceValid(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    }
    if ((lead & 0xE0) == 0xC0) {
      n = 2;
      cp = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      n = 3;
      cp = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      n = 4;
      cp = lead & 0x07;
    } else {
      return false;
    }
    if (i + n > s.size()) {
      return false;
    }
    for (std::size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (c & 0x3F);
    }
    const std::uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n;
  }
  return true;
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) {
    s.push_back(static_cast<char>(b));
  }
  return s;
}

TEST_CASE("valid UTF-8 is exactly what RFC 3629 allows, at every boundary", "[core][json]") {
  // Shortest and longest form of each sequence length, and the edges of the surrogate gap.
  for (const std::string& ok :
       {Bytes({0x00}), Bytes({0x7F}), Bytes({0xC2, 0x80}), Bytes({0xDF, 0xBF}),
        Bytes({0xE0, 0xA0, 0x80}), Bytes({0xED, 0x9F, 0xBF}), Bytes({0xEE, 0x80, 0x80}),
        Bytes({0xEF, 0xBF, 0xBF}), Bytes({0xF0, 0x90, 0x80, 0x80}), Bytes({0xF4, 0x8F, 0xBF, 0xBF}),
        "h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80"s}) {
    INFO(ok.size() << " bytes");
    CHECK(IsValidUtf8(ok));
  }
  const std::string refused[] = {
      // overlong forms
      Bytes({0xC0, 0x80}), Bytes({0xC1, 0xBF}), Bytes({0xE0, 0x80, 0x80}),
      Bytes({0xE0, 0x9F, 0xBF}), Bytes({0xF0, 0x80, 0x80, 0x80}), Bytes({0xF0, 0x8F, 0xBF, 0xBF}),
      // UTF-16 surrogates
      Bytes({0xED, 0xA0, 0x80}), Bytes({0xED, 0xBF, 0xBF}),
      // beyond U+10FFFF
      Bytes({0xF4, 0x90, 0x80, 0x80}), Bytes({0xF5, 0x80, 0x80, 0x80}), Bytes({0xFF}),
      // truncated sequences and stray continuation bytes
      Bytes({0xC3}), Bytes({0xE2, 0x82}), Bytes({0xF0, 0x9F, 0x98}), Bytes({0x80}),
      "ok" + Bytes({0xE2, 0x82}), Bytes({0xE2, 0x28, 0xA1})};
  for (const std::string& bad : refused) {
    INFO(SanitizeUtf8(bad).size() << " replacement bytes");
    CHECK_FALSE(IsValidUtf8(bad));
  }
}

TEST_CASE("the validator agrees with a code point decoder on every short sequence",
          "[core][json]") {
  std::size_t disagreements = 0;
  std::string s(2, '\0');
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      s[0] = static_cast<char>(a);
      s[1] = static_cast<char>(b);
      disagreements += IsValidUtf8(s) != ReferenceValid(s);
    }
  }
  s.assign(3, '\0');
  for (int a = 0xC0; a < 0x100; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (int c = 0; c < 256; ++c) {
        s[0] = static_cast<char>(a);
        s[1] = static_cast<char>(b);
        s[2] = static_cast<char>(c);
        disagreements += IsValidUtf8(s) != ReferenceValid(s);
      }
    }
  }
  s.assign(4, '\0');
  for (int a = 0xF0; a < 0xF8; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (int c : {0x41, 0x80, 0xBF, 0xC0}) {
        for (int d : {0x41, 0x80, 0xBF, 0xC0}) {
          s = Bytes({a, b, c, d});
          disagreements += IsValidUtf8(s) != ReferenceValid(s);
        }
      }
    }
  }
  CHECK(disagreements == 0);
}

// IsValidUtf8 skips eight ASCII bytes at a time: a sequence, well-formed or not, is judged the
// same wherever it falls relative to those words, and wherever the text ends.
TEST_CASE("the validator judges a sequence the same at every offset in ASCII text",
          "[core][json]") {
  const std::vector<std::string> sequences = {
      "\xC3\xA9",     "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xFF",     "\x80",
      "\xC3",         "\xE2\x82",     "\xED\xA0\x80",     "\xC0\xAF", "\xF4\x90\x80\x80",
      "\xF0\x9F\x98", "\x7F"};
  std::size_t disagreements = 0;
  for (const std::string& sequence : sequences) {
    for (std::size_t before = 0; before < 20; ++before) {
      for (std::size_t after : {0, 1, 7, 8, 9, 16}) {
        const std::string s = std::string(before, 'a') + sequence + std::string(after, 'z');
        disagreements += IsValidUtf8(s) != ReferenceValid(s);
      }
    }
  }
  CHECK(disagreements == 0);
  CHECK(IsValidUtf8(std::string(1000, 'x')));
  CHECK_FALSE(IsValidUtf8(std::string(999, 'x') + "\xFF"));
}

TEST_CASE("sanitizing replaces each ill-formed byte and keeps valid text", "[core][json]") {
  CHECK(SanitizeUtf8("plain \xC3\xA9") == "plain \xC3\xA9");
  CHECK(SanitizeUtf8("a\xC3(b") == "a\xEF\xBF\xBD(b");
  CHECK(SanitizeUtf8(Bytes({0xE2, 0x82})) == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(SanitizeUtf8(Bytes({0xED, 0xA0, 0x80})) == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(SanitizeUtf8("nul\0ok"s) == "nul\0ok"s);
  std::string s(2, '\0');
  for (int a = 0; a < 256; ++a) {
    for (int b = 0x70; b < 0xD0; ++b) {
      s[0] = static_cast<char>(a);
      s[1] = static_cast<char>(b);
      REQUIRE(IsValidUtf8(SanitizeUtf8(s)));
    }
  }
}

TEST_CASE("truncation cuts on a code point boundary, as late as it can", "[core][json]") {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z";  // 1, 2, 3, 4 and 1 bytes
  CHECK(TruncateUtf8(text, 100) == text);
  CHECK(TruncateUtf8(text, 0).empty());
  CHECK(TruncateUtf8(text, 2) == "a");
  CHECK(TruncateUtf8(text, 3) == "a\xC3\xA9");
  CHECK(TruncateUtf8(text, 5) == "a\xC3\xA9");
  CHECK(TruncateUtf8(text, 6) == "a\xC3\xA9\xE2\x82\xAC");
  CHECK(TruncateUtf8(text, 9) == "a\xC3\xA9\xE2\x82\xAC");
  for (std::size_t max = 0; max <= text.size(); ++max) {
    const std::string cut = TruncateUtf8(text, max);
    INFO("max " << max);
    CHECK(cut.size() <= max);
    CHECK(cut.size() + 4 > max);
    CHECK(text.compare(0, cut.size(), cut) == 0);
    CHECK(IsValidUtf8(cut));
  }
}

TEST_CASE("clean text refuses NUL, DEL and controls other than tab and newline", "[core][json]") {
  CHECK(IsCleanText("line one\n\tindented \xC3\xA9"));
  CHECK(IsCleanText(""));
  CHECK(IsCleanText("\xC2\x85"));  // U+0085 is not an ASCII control
  for (const std::string& bad :
       {"a\0b"s, "cr\r"s, "bell\x07"s, "del\x7F"s, "esc\x1B"s, "bad \xC3("s}) {
    CHECK_FALSE(IsCleanText(bad));
  }
}

TEST_CASE("bounded clean text replaces what is unclean and never splits a character",
          "[core][json]") {
  CHECK(BoundedCleanText("ok\x01\xFF tail", 100) == "ok?? tail");
  CHECK(BoundedCleanText("tab\tnl\n", 100) == "tab\tnl\n");
  CHECK(BoundedCleanText("ab\xE2\x82\xAC", 4) == "ab");
  CHECK(BoundedCleanText("ab\xE2\x82\xAC", 5) == "ab\xE2\x82\xAC");
  CHECK(BoundedCleanText(std::string(10, 'x'), 3) == "xxx");
  CHECK(IsCleanText(BoundedCleanText("\0\x7F\xC0\xAF\xED\xA0\x80"s, 64)));
}

}  // namespace
}  // namespace pulse::core
