#include "pulse/core/json/json.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rapidjson/error/en.h"
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
