#include "pulse/core/json/json_writer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PULSE_JSON_QUOTE_SSSE3 1
#else
#define PULSE_JSON_QUOTE_SSSE3 0
#endif

#include "json_bytes.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/utf8.h"

namespace pulse::core {
namespace {

// A RapidJSON handler that replays a value into a JsonWriter, so its keys and strings pass
// through the same sanitizing as everything else.
class Replay {
 public:
  explicit Replay(JsonWriter& out) : out_(out) {}
  // clang-format off
  bool Null() { out_.Null(); return true; }
  bool Bool(bool b) { out_.Bool(b); return true; }
  bool Int(int i) { out_.Int(i); return true; }
  bool Uint(unsigned u) { out_.Uint(u); return true; }
  bool Int64(std::int64_t i) { out_.Int(i); return true; }
  bool Uint64(std::uint64_t u) { out_.Uint(u); return true; }
  bool Double(double d) { out_.Double(d); return true; }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { out_.RawValue({s, n}); return true; }
  bool String(const char* s, rapidjson::SizeType n, bool) { out_.String({s, n}); return true; }
  bool Key(const char* s, rapidjson::SizeType n, bool) { out_.Key({s, n}); return true; }
  bool StartObject() { out_.StartObject(); return true; }
  bool EndObject(rapidjson::SizeType) { out_.EndObject(); return true; }
  bool StartArray() { out_.StartArray(); return true; }
  bool EndArray(rapidjson::SizeType) { out_.EndArray(); return true; }
  // clang-format on

 private:
  JsonWriter& out_;
};

// How JSON writes each byte of a string: 0 as it is, else the letter after the backslash ('u'
// for \u00XX). Exactly RapidJSON's Writer with its default flags: the control characters, '"'
// and '\\' are escaped; '/', DEL and bytes from 0x80 (UTF-8, already valid) are not.
constexpr std::array<char, 256> kEscape = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) {
    t[c] = 'u';
  }
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}();

// Writes the bytes [in, end) at `p` as the inside of a JSON string, one at a time through
// kEscape; returns the new end of the output.
char* EscapeBytes(char* p, const char* in, const char* const end) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  while (in < end) {
    const auto c = static_cast<unsigned char>(*in++);
    const char e = kEscape[c];
    if (e == 0) {
      *p++ = static_cast<char>(c);
      continue;
    }
    *p++ = '\\';
    *p++ = e;
    if (e == 'u') {
      *p++ = '0';
      *p++ = '0';
      *p++ = kHex[c >> 4];
      *p++ = kHex[c & 0xF];
    }
  }
  return p;
}

#if PULSE_JSON_QUOTE_SSSE3
// For each set of the bytes of an 8-byte group that take a backslash, the PSHUFB control that
// copies the group with a backslash (lane 8 of the source) before each of them: for '"' and
// '\\', the only such bytes the block path meets, the escape is the byte itself.
struct BackslashShuffles {
  alignas(16) std::array<std::array<std::uint8_t, 16>, 256> control;
};
constexpr BackslashShuffles kBackslashShuffles = [] {
  BackslashShuffles s{};
  for (unsigned mask = 0; mask < 256; ++mask) {
    std::size_t out = 0;
    for (std::uint8_t i = 0; i < 8; ++i) {
      if (((mask >> i) & 1U) != 0) {
        s.control[mask][out++] = 8;
      }
      s.control[mask][out++] = i;
    }
    for (; out < 16; ++out) {
      s.control[mask][out] = 0x80;  // zero: past the group's output, overwritten next
    }
  }
  return s;
}();

// Quotes [in, end) sixteen bytes at a time while at least sixteen are left, writing at `p`;
// returns where it stopped (the caller quotes the rest). A block without an escape is copied
// as it is; one whose escapes are only '"' and '\\' is written by two shuffles, eight bytes
// each with a backslash before each escaped byte, and no branch per escape (JSON text written
// as a string has one every few bytes: a branch per escape, mispredicted half the time, was
// what the word-at-a-time loop spent its time on, 9 us for a 15 KB fleet context against 1.9);
// a block with a control character goes byte by byte. `p` has room for 6 bytes per input byte.
__attribute__((target("ssse3,popcnt"))) const char* QuoteBlocks(const char* in,
                                                                const char* const end, char*& p) {
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i last_control = _mm_set1_epi8(0x1F);
  while (end - in >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
    const auto control =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(v, last_control), v)));
    if (control != 0) {
      p = EscapeBytes(p, in, in + 16);
      in += 16;
      continue;
    }
    const auto escaped = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash))));
    if (escaped == 0) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
      p += 16;
      in += 16;
      continue;
    }
    const unsigned low = escaped & 0xFFU;
    const unsigned high = escaped >> 8U;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_shuffle_epi8(_mm_unpacklo_epi64(v, backslash),
                                      _mm_load_si128(reinterpret_cast<const __m128i*>(
                                          kBackslashShuffles.control[low].data()))));
    p += 8 + __builtin_popcount(low);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_shuffle_epi8(_mm_unpackhi_epi64(v, backslash),
                                      _mm_load_si128(reinterpret_cast<const __m128i*>(
                                          kBackslashShuffles.control[high].data()))));
    p += 8 + __builtin_popcount(high);
    in += 16;
  }
  return in;
}

bool HasSsse3() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("popcnt");
  }();
  return has;
}
#endif

// Appends `s` (valid UTF-8) as a quoted JSON string. On x86 with SSSE3, sixteen bytes at a time
// (QuoteBlocks); elsewhere, and for the last few bytes, eight bytes at a time are tested at once
// and, when none needs an escape, copied as one word, the bytes of a word that has one going one
// by one through kEscape. RapidJSON's writer puts and tests every byte on its own, and copying
// each unescaped run with its own memcpy costs a call per run where JSON text (a 15 KB fleet
// context written as a text member, the top of pulse-mcp's profile, issue 29) has a quote every
// few bytes. Input is taken in chunks so the reservation (6 bytes of output per byte of input
// at worst) stays small for a long string.
void AppendQuoted(rapidjson::StringBuffer& out, std::string_view s) {
  static constexpr std::size_t kChunk = 4096;
  *out.Push(1) = '"';
  const char* in = s.data();
  const char* const end = in + s.size();
  while (in < end) {
    const char* const chunk_end = in + std::min<std::size_t>(kChunk, end - in);
    const std::size_t reserved = static_cast<std::size_t>(chunk_end - in) * 6;
    char* const start = out.Push(reserved);
    char* p = start;
#if PULSE_JSON_QUOTE_SSSE3
    if (HasSsse3()) {
      in = QuoteBlocks(in, chunk_end, p);
    }
#endif
    while (in < chunk_end) {
      if (chunk_end - in >= 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, in, sizeof word);
        if (!json_internal::AnyEscaped(word)) {
          std::memcpy(p, in, sizeof word);
          p += sizeof word;
          in += sizeof word;
          continue;
        }
        p = EscapeBytes(p, in, in + sizeof word);
        in += sizeof word;
        continue;
      }
      p = EscapeBytes(p, in, chunk_end);
      in = chunk_end;
    }
    out.Pop(reserved - static_cast<std::size_t>(p - start));
  }
  *out.Push(1) = '"';
}

// A key or string value, sanitized to valid UTF-8: the writer's bookkeeping first (the comma
// or colon before it, a key's place in its object; a key is a string to that bookkeeping too),
// then the quoted bytes.
void WriteQuoted(rapidjson::Writer<rapidjson::StringBuffer>& writer,
                 rapidjson::StringBuffer& buffer, std::string_view value) {
  writer.RawValue("", 0, rapidjson::kStringType);
  if (IsValidUtf8(value)) {
    AppendQuoted(buffer, value);
    return;
  }
  AppendQuoted(buffer, SanitizeUtf8(value));
}

}  // namespace

void JsonWriter::Key(std::string_view key) { WriteQuoted(writer_, buffer_, key); }

void JsonWriter::String(std::string_view value) { WriteQuoted(writer_, buffer_, value); }

void JsonWriter::Double(double value) {
  if (std::isfinite(value)) {
    writer_.Double(value);
  } else {
    writer_.Null();
  }
}

void JsonWriter::Time(absl::Time value) { String(FormatRfc3339(value)); }

void JsonWriter::StringArray(std::span<const std::string> values) {
  StartArray();
  for (const std::string& value : values) {
    String(value);
  }
  EndArray();
}

void JsonWriter::Value(const rapidjson::Value& value) {
  Replay replay(*this);
  value.Accept(replay);
}

void JsonWriter::RawValue(std::string_view json) {
  // The writer's bookkeeping (the comma or colon before the value) without bytes, then the bytes
  // in one copy: RapidJSON's RawValue puts them one at a time, which showed in pulse-mcp's
  // profile for a 15 KB fleet context (issue 29).
  writer_.RawValue("", 0, rapidjson::kObjectType);
  if (!json.empty()) {
    std::memcpy(buffer_.Push(json.size()), json.data(), json.size());
  }
}

void JsonWriter::Member(std::string_view key, std::string_view value) {
  Key(key);
  String(value);
}

void JsonWriter::Member(std::string_view key, bool value) {
  Key(key);
  Bool(value);
}

void JsonWriter::TimeMember(std::string_view key, absl::Time value) {
  Key(key);
  Time(value);
}

void JsonWriter::MemberIfNotEmpty(std::string_view key, std::string_view value) {
  if (!value.empty()) {
    Member(key, value);
  }
}

void JsonWriter::TimeMemberIfSet(std::string_view key, const std::optional<absl::Time>& value) {
  if (value.has_value()) {
    TimeMember(key, *value);
  }
}

void JsonWriter::NumberMemberIfFinite(std::string_view key, const std::optional<double>& value) {
  if (value.has_value() && std::isfinite(*value)) {
    Key(key);
    Double(*value);
  }
}

}  // namespace pulse::core
