#include "pulse/core/json/json.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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

}  // namespace

absl::StatusOr<JsonShape> ScanJson(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON body is ", text.size(), " bytes; the limit is ", limits.max_bytes));
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
