#include "pulse/core/json/json.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "json_bytes.h"
#include "pulse/core/json/json_scan.h"
#include "rapidjson/encodedstream.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::core {
namespace {

constexpr unsigned kParseFlags =
    rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag;

void WriteCanonical(const rapidjson::Value& value, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  // Recursion depth is bounded by the caller's depth limit.
  if (value.IsObject()) {
    std::vector<const rapidjson::Value::ConstMemberIterator::value_type*> members;
    members.reserve(value.MemberCount());
    for (const auto& m : value.GetObject()) {
      members.push_back(&m);
    }
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    w.StartObject();
    for (const auto* m : members) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      WriteCanonical(m->value, w);
    }
    w.EndObject();
    return;
  }
  if (value.IsArray()) {
    w.StartArray();
    for (const auto& v : value.GetArray()) {
      WriteCanonical(v, w);
    }
    w.EndArray();
    return;
  }
  value.Accept(w);
}

}  // namespace

absl::StatusOr<rapidjson::Document> ParseJson(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON body is ", text.size(), " bytes; the limit is ", limits.max_bytes));
  }
  rapidjson::Document doc;
  doc.Parse<kParseFlags>(text.data(), text.size());
  if (doc.HasParseError()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON at byte ", doc.GetErrorOffset(), ": ",
                     rapidjson::GetParseError_En(doc.GetParseError())));
  }
  if (JsonDepth(doc) > limits.max_depth) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON nesting is deeper than the limit of ", limits.max_depth));
  }
  return doc;
}

namespace {

// The SAX handler of ScanJson: the root's type and top-level count, and the nesting bound.
class ShapeHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, ShapeHandler> {
 public:
  explicit ShapeHandler(std::size_t max_depth) : max_depth_(max_depth) {}

  bool Default() { return Scalar(rapidjson::kNumberType); }
  bool Null() { return Scalar(rapidjson::kNullType); }
  bool Bool(bool b) { return Scalar(b ? rapidjson::kTrueType : rapidjson::kFalseType); }
  bool String(const char*, rapidjson::SizeType, bool) { return Scalar(rapidjson::kStringType); }
  bool Key(const char*, rapidjson::SizeType, bool) { return true; }
  bool StartObject() { return Open(rapidjson::kObjectType); }
  bool StartArray() { return Open(rapidjson::kArrayType); }
  bool EndObject(rapidjson::SizeType) { return Close(); }
  bool EndArray(rapidjson::SizeType) { return Close(); }

  const JsonShape& shape() const { return shape_; }
  bool too_deep() const { return too_deep_; }

 private:
  bool Scalar(rapidjson::Type type) {
    if (depth_ == 0) {
      shape_.type = type;
    }
    Count();
    return true;
  }
  bool Open(rapidjson::Type type) {
    if (depth_ == 0) {
      shape_.type = type;
    }
    Count();
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;  // stops the reader: ScanJson reports the depth
    }
    return true;
  }
  bool Close() {
    --depth_;
    return true;
  }
  // A value directly inside the root object or array.
  void Count() {
    if (depth_ == 1) {
      ++shape_.size;
    }
  }

  std::size_t max_depth_;
  std::size_t depth_ = 0;
  bool too_deep_ = false;
  JsonShape shape_;
};

// ScanJson's fast path: a scan of the common subset of JSON (no NUL byte, numbers without an
// exponent and at most kMaxFastNumber characters, no \u escape of a UTF-16 surrogate) that
// answers true, with the shape, only for a text RapidJSON's reader accepts with the same shape
// within `max_depth`. Anything else, valid or not, answers false and goes to RapidJSON, which
// decides and words the error (issue 29: RapidJSON's reader spent ~35 µs on a 15 KB fleet
// context, most of it copying every string to its stack for a handler that ignores them).
class FastScan {
 public:
  FastScan(std::string_view text, std::size_t max_depth)
      : p_(text.data()), end_(text.data() + text.size()), max_depth_(max_depth) {}

  bool Run(JsonShape& shape) {
    SkipWhitespace();
    bool value_next = true;  // else: just after a value
    while (true) {
      if (value_next) {
        const char c = Peek();
        if (c == '{' || c == '[') {
          ++p_;
          Counted(c == '{' ? rapidjson::kObjectType : rapidjson::kArrayType);
          open_.push_back(c);
          if (open_.size() > max_depth_) {
            return false;  // RapidJSON's path words the depth error
          }
          SkipWhitespace();
          if (Peek() == Closing(c)) {
            ++p_;
            open_.pop_back();
          } else if (c == '{' && !Key()) {
            return false;
          } else {
            continue;  // the first element, or the first member's value
          }
        } else if (!Scalar()) {
          return false;
        }
      }
      SkipWhitespace();
      if (open_.empty()) {
        if (p_ != end_) {
          return false;  // more after the root value
        }
        shape = shape_;
        return true;
      }
      const char c = Peek();
      if (c == ',') {
        ++p_;
        SkipWhitespace();
        if (open_.back() == '{' && !Key()) {
          return false;
        }
        value_next = true;
      } else if (c == Closing(open_.back())) {
        ++p_;
        open_.pop_back();
        value_next = false;
      } else {
        return false;
      }
    }
  }

 private:
  static constexpr std::size_t kMaxFastNumber = 100;

  static char Closing(char open) { return open == '{' ? '}' : ']'; }

  char Peek() const { return p_ == end_ ? '\0' : *p_; }

  void SkipWhitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
      ++p_;
    }
  }

  // A value that is not an object or an array.
  bool Scalar() {
    switch (Peek()) {
      case '"':
        Counted(rapidjson::kStringType);
        return String();
      case 't':
        Counted(rapidjson::kTrueType);
        return Literal("true");
      case 'f':
        Counted(rapidjson::kFalseType);
        return Literal("false");
      case 'n':
        Counted(rapidjson::kNullType);
        return Literal("null");
      default:
        Counted(rapidjson::kNumberType);
        return Number();
    }
  }

  // A member's key and its colon, leaving the cursor on the value.
  bool Key() {
    if (Peek() != '"' || !String()) {
      return false;
    }
    SkipWhitespace();
    if (Peek() != ':') {
      return false;
    }
    ++p_;
    SkipWhitespace();
    return true;
  }

  // A value about to be read: the root's type, and the count directly inside the root.
  void Counted(rapidjson::Type type) {
    if (open_.empty()) {
      shape_.type = type;
    } else if (open_.size() == 1) {
      ++shape_.size;
    }
  }

  bool Literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() ||
        std::string_view(p_, word.size()) != word) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  static bool Digit(char c) { return c >= '0' && c <= '9'; }

  bool Number() {
    const char* const start = p_;
    if (Peek() == '-') {
      ++p_;
    }
    if (Peek() == '0') {
      ++p_;
    } else if (Digit(Peek())) {
      while (Digit(Peek())) {
        ++p_;
      }
    } else {
      return false;
    }
    if (Peek() == '.') {
      ++p_;
      if (!Digit(Peek())) {
        return false;
      }
      while (Digit(Peek())) {
        ++p_;
      }
    }
    // An exponent, or a number long enough to leave double's range, is RapidJSON's to judge.
    return Peek() != 'e' && Peek() != 'E' && static_cast<std::size_t>(p_ - start) <= kMaxFastNumber;
  }

  // From the opening quote to past the closing one. Sixteen bytes (SSE2), then eight, at a time
  // while none of them is a quote, a backslash or a control character (bytes from 0x80 are taken
  // as they are, as RapidJSON's reader takes them without its encoding check); the sixteen-byte
  // step goes straight to the first such byte (8.0 -> 6.7 us for the 15 KB fleet context).
  bool String() {
    ++p_;
    while (true) {
#if defined(__SSE2__)
      while (end_ - p_ >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
        const auto stop = static_cast<unsigned>(_mm_movemask_epi8(
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                      _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                         _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v))));
        if (stop != 0) {
          p_ += __builtin_ctz(stop);
          break;
        }
        p_ += 16;
      }
#endif
      while (end_ - p_ >= 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, p_, sizeof word);
        if (json_internal::AnyEscaped(word)) {
          break;
        }
        p_ += sizeof word;
      }
      while (p_ != end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20) {
        ++p_;
      }
      if (p_ == end_ || static_cast<unsigned char>(*p_) < 0x20) {
        return false;  // unterminated, or a control character (NUL included)
      }
      if (*p_++ == '"') {
        return true;
      }
      const char e = Peek();  // after a backslash
      if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
          e == 't') {
        ++p_;
        continue;
      }
      if (e != 'u' || end_ - p_ < 5) {
        return false;
      }
      for (int i = 1; i <= 4; ++i) {
        if (!absl::ascii_isxdigit(static_cast<unsigned char>(p_[i]))) {
          return false;
        }
      }
      // A UTF-16 surrogate (D800-DFFF: 'D', then 8-F): RapidJSON pairs them or refuses.
      if ((p_[1] == 'd' || p_[1] == 'D') && !(p_[2] >= '0' && p_[2] <= '7')) {
        return false;
      }
      p_ += 5;
    }
  }

  const char* p_;
  const char* const end_;
  const std::size_t max_depth_;
  std::vector<char> open_;  // '{' or '[' of each open container, innermost last
  JsonShape shape_;
};

}  // namespace

absl::StatusOr<JsonShape> ScanJson(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON body is ", text.size(), " bytes; the limit is ", limits.max_bytes));
  }
  // A NUL byte anywhere makes the fast path answer false (RapidJSON's streams end a text there).
  if (JsonShape shape; FastScan(text, limits.max_depth).Run(shape)) {
    return shape;
  }
  // The input streams Document::Parse uses for a (pointer, length) text.
  rapidjson::MemoryStream ms(text.data(), text.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> is(ms);
  rapidjson::Reader reader;
  ShapeHandler handler(limits.max_depth);
  const rapidjson::ParseResult result = reader.Parse<kParseFlags>(is, handler);
  if (handler.too_deep()) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON nesting is deeper than the limit of ", limits.max_depth));
  }
  if (result.IsError()) {
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON at byte ", result.Offset(), ": ",
                                                   rapidjson::GetParseError_En(result.Code())));
  }
  return handler.shape();
}

std::size_t JsonDepth(const rapidjson::Value& value) {
  std::size_t max_depth = 0;
  std::vector<std::pair<const rapidjson::Value*, std::size_t>> stack;
  stack.emplace_back(&value, 0);
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (v->IsObject()) {
      max_depth = std::max(max_depth, depth + 1);
      for (const auto& m : v->GetObject()) {
        stack.emplace_back(&m.value, depth + 1);
      }
    } else if (v->IsArray()) {
      max_depth = std::max(max_depth, depth + 1);
      for (const auto& e : v->GetArray()) {
        stack.emplace_back(&e, depth + 1);
      }
    }
  }
  return max_depth;
}

std::string ToJsonString(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string CanonicalJson(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  WriteCanonical(value, writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

const rapidjson::Value* GetMember(const rapidjson::Value& object, std::string_view key) {
  if (!object.IsObject()) {
    return nullptr;
  }
  auto it = object.FindMember(rapidjson::Value(rapidjson::StringRef(key.data(), key.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::optional<std::string_view> GetString(const rapidjson::Value& object, std::string_view key) {
  const rapidjson::Value* v = GetMember(object, key);
  if (v == nullptr || !v->IsString()) {
    return std::nullopt;
  }
  return std::string_view(v->GetString(), v->GetStringLength());
}

std::optional<bool> GetBool(const rapidjson::Value& object, std::string_view key) {
  const rapidjson::Value* v = GetMember(object, key);
  if (v == nullptr || !v->IsBool()) {
    return std::nullopt;
  }
  return v->GetBool();
}

std::optional<std::int64_t> GetInt64(const rapidjson::Value& object, std::string_view key) {
  const rapidjson::Value* v = GetMember(object, key);
  if (v == nullptr || !v->IsInt64()) {
    return std::nullopt;
  }
  return v->GetInt64();
}

}  // namespace pulse::core
