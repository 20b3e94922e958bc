#include "json_output.h"

#include <cmath>

#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "rapidjson/encodings.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace pulse::cli {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

void RepairStrings(rapidjson::Value& value, Allocator& alloc) {
  if (value.IsString()) {
    const std::string_view text = core::StringViewOf(value);
    if (!core::IsValidUtf8(text)) {
      const std::string fixed = core::SanitizeUtf8(text);
      value.SetString(fixed.data(), static_cast<rapidjson::SizeType>(fixed.size()), alloc);
    }
  } else if (value.IsArray()) {
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      RepairStrings(value[i], alloc);
    }
  } else if (value.IsObject()) {
    for (rapidjson::SizeType i = 0; i < value.MemberCount(); ++i) {
      auto& member = *(value.MemberBegin() + i);
      RepairStrings(member.name, alloc);
      RepairStrings(member.value, alloc);
    }
  }
}

}  // namespace

absl::StatusOr<rapidjson::Document> ParseReplyJson(std::string_view body) {
  core::JsonLimits limits;
  limits.max_bytes = kMaxReplyBytes;
  limits.max_depth = 64;
  return core::ParseJson(body, limits);
}

std::string OutputJson(const rapidjson::Value& value) {
  rapidjson::Document copy;
  copy.CopyFrom(value, copy.GetAllocator());
  RepairStrings(copy, copy.GetAllocator());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::ASCII<>> writer(buffer);
  if (!copy.Accept(writer)) {
    return "null";  // unreachable: every string is valid UTF-8 and numbers are finite
  }
  return std::string(buffer.GetString(), buffer.GetSize());
}

const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view key) {
  return object.IsObject() ? core::GetMember(object, key) : nullptr;
}

std::string Str(const rapidjson::Value& object, std::string_view key) {
  const rapidjson::Value* v = Member(object, key);
  return v != nullptr && v->IsString() ? std::string(core::StringViewOf(*v)) : std::string();
}

std::optional<std::int64_t> Int(const rapidjson::Value& object, std::string_view key) {
  const rapidjson::Value* v = Member(object, key);
  if (v == nullptr || !v->IsNumber()) {
    return std::nullopt;
  }
  if (v->IsInt64()) {
    return v->GetInt64();
  }
  const double d = v->GetDouble();
  if (!std::isfinite(d) || std::fabs(d) > 9e18) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(d);
}

std::optional<bool> Bool(const rapidjson::Value& object, std::string_view key) {
  const rapidjson::Value* v = Member(object, key);
  return v != nullptr && v->IsBool() ? std::optional<bool>(v->GetBool()) : std::nullopt;
}

std::string ScalarText(const rapidjson::Value& value) {
  if (value.IsString()) {
    return std::string(core::StringViewOf(value));
  }
  if (value.IsNull()) {
    return "-";
  }
  return OutputJson(value);
}

}  // namespace pulse::cli
