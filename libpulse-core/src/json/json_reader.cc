#include "pulse/core/json/json_reader.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "fmt/format.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

std::string_view TrimAsciiWhitespace(std::string_view text) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(ToAbsl(text));
  return ToStd(trimmed);
}

}  // namespace

std::string JsonMemberProblemText(const JsonReadError& e) {
  using P = JsonReadProblem;
  switch (e.problem) {
    case P::kMissing:
      return "is required";
    case P::kEmpty:
      return "must not be empty";
    case P::kNotString:
      return "must be a string";
    case P::kTooLong:
      return fmt::format("is longer than {} bytes", e.high);
    case P::kBadText:
      return "is not valid UTF-8";
    case P::kNotInteger:
      return "must be an integer";
    case P::kOutOfRange:
      return fmt::format("must be between {} and {}", e.low, e.high);
    case P::kNotBoolean:
      return "must be a boolean";
    case P::kNotNumber:
      return "must be a number";
    case P::kNotFinite:
      return "must be finite";
    case P::kNotTimeString:
      return "must be an RFC 3339 string";
    case P::kBadTime:
      return fmt::format("is not an RFC 3339 time in years {}..9999", e.low);
    case P::kUnknownValue:
      return "is not a known value";
    case P::kNotArray:
      return "must be an array of strings";
    case P::kTooManyItems:
      return fmt::format("has more than {} items", e.high);
    case P::kBadItem:
      return "must hold bounded, valid UTF-8 strings";
    case P::kNotObject:
    case P::kUnknownMember:
    case P::kDuplicateMember:
    case P::kInvalid:
      break;
  }
  return e.detail;
}

std::string JsonReadErrorText(const JsonReadError& e) {
  switch (e.problem) {
    case JsonReadProblem::kNotObject:
      return fmt::format("{} must be a JSON object", e.path);
    case JsonReadProblem::kUnknownMember:
      return fmt::format("{} has an unknown member \"{}\"", e.path,
                         SanitizeUtf8(TruncateUtf8(e.member, 64)));
    case JsonReadProblem::kDuplicateMember:
      return fmt::format("{} has a duplicate member \"{}\"", e.path,
                         SanitizeUtf8(TruncateUtf8(e.member, 64)));
    default:
      return fmt::format("{}.{} {}", e.path, e.member, JsonMemberProblemText(e));
  }
}

absl::Status RenderJsonReadError(const JsonReadError& error) {
  return absl::InvalidArgumentError(JsonReadErrorText(error));
}

JsonObjectReader::JsonObjectReader(const rapidjson::Value& value, std::string path,
                                   const JsonReaderOptions& options)
    : value_(value), path_(std::move(path)), options_(options) {
  if (!value_.IsObject()) {
    Record(JsonReadProblem::kNotObject, {});
    return;
  }
  // The first member (document order) whose name an earlier one has: the names sorted with
  // their positions, so equal names sit together in document order, one allocation in all.
  std::vector<std::pair<std::string_view, std::size_t>> names;
  names.reserve(value_.MemberCount());
  for (const auto& m : value_.GetObject()) {
    names.emplace_back(StringViewOf(m.name), names.size());
  }
  std::sort(names.begin(), names.end());
  std::size_t first_repeat = names.size();
  for (std::size_t i = 1; i < names.size(); ++i) {
    if (names[i].first == names[i - 1].first) {
      first_repeat = std::min(first_repeat, names[i].second);
    }
  }
  if (first_repeat < names.size()) {
    Record(JsonReadProblem::kDuplicateMember,
           StringViewOf((value_.MemberBegin() + static_cast<std::ptrdiff_t>(first_repeat))->name));
    duplicate_from_constructor_ = true;
  }
}

absl::Status JsonObjectReader::ExpectMembers(std::initializer_list<std::string_view> allowed) {
  // Every member is checked against `allowed` below, so Finish has nothing left to find and
  // the accessors need not note their keys.
  members_declared_ = true;
  if (!value_.IsObject()) {
    return status();
  }
  if (duplicate_from_constructor_) {
    // The declared scan below decides which member is reported.
    error_.reset();
    duplicate_from_constructor_ = false;
  }
  std::vector<bool> seen(allowed.size(), false);
  for (const auto& m : value_.GetObject()) {
    const std::string_view name = StringViewOf(m.name);
    std::size_t index = 0;
    for (std::string_view candidate : allowed) {
      if (candidate == name) {
        break;
      }
      ++index;
    }
    if (index == allowed.size()) {
      Record(JsonReadProblem::kUnknownMember, name);
      break;
    }
    if (seen[index]) {
      Record(JsonReadProblem::kDuplicateMember, name);
      break;
    }
    seen[index] = true;
  }
  return status();
}

const rapidjson::Value* JsonObjectReader::Member(std::string_view key, JsonPresence presence) {
  if (!members_declared_) {
    expected_.emplace(key);
  }
  if (!value_.IsObject()) {
    return nullptr;
  }
  const rapidjson::Value* v = GetMember(value_, key);
  if (v == nullptr || v->IsNull()) {
    if (presence == JsonPresence::kRequired) {
      Record(JsonReadProblem::kMissing, key);
    }
    return nullptr;
  }
  return v;
}

std::optional<std::string> JsonObjectReader::String(std::string_view key,
                                                    const JsonStringRule& rule) {
  const rapidjson::Value* v = Member(key, rule.presence);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->IsString()) {
    Record(JsonReadProblem::kNotString, key);
    return std::nullopt;
  }
  std::string_view text = StringViewOf(*v);
  if (text.size() > rule.max_bytes) {
    Record(JsonReadProblem::kTooLong, key, 0, static_cast<std::int64_t>(rule.max_bytes));
    return std::nullopt;
  }
  if (!TextAllowed(text)) {
    Record(JsonReadProblem::kBadText, key);
    return std::nullopt;
  }
  if (rule.trim) {
    text = TrimAsciiWhitespace(text);
  }
  if (rule.presence == JsonPresence::kRequired && text.empty()) {
    Record(JsonReadProblem::kEmpty, key);
    return std::nullopt;
  }
  return std::string(text);
}

std::optional<std::int64_t> JsonObjectReader::Int(std::string_view key, std::int64_t low,
                                                  std::int64_t high, JsonPresence presence) {
  const rapidjson::Value* v = Member(key, presence);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->IsInt64()) {
    Record(JsonReadProblem::kNotInteger, key);
    return std::nullopt;
  }
  const std::int64_t n = v->GetInt64();
  if (n < low || n > high) {
    Record(JsonReadProblem::kOutOfRange, key, low, high);
    return std::nullopt;
  }
  return n;
}

std::optional<bool> JsonObjectReader::Bool(std::string_view key, JsonPresence presence) {
  const rapidjson::Value* v = Member(key, presence);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->IsBool()) {
    Record(JsonReadProblem::kNotBoolean, key);
    return std::nullopt;
  }
  return v->GetBool();
}

std::optional<double> JsonObjectReader::Number(std::string_view key, JsonPresence presence) {
  const rapidjson::Value* v = Member(key, presence);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->IsNumber()) {
    Record(JsonReadProblem::kNotNumber, key);
    return std::nullopt;
  }
  const double d = v->GetDouble();
  if (!std::isfinite(d)) {
    Record(JsonReadProblem::kNotFinite, key);
    return std::nullopt;
  }
  return d;
}

std::optional<absl::Time> JsonObjectReader::Time(std::string_view key, JsonPresence presence) {
  const rapidjson::Value* v = Member(key, presence);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->IsString()) {
    Record(JsonReadProblem::kNotTimeString, key);
    return std::nullopt;
  }
  std::optional<absl::Time> t = ParseRfc3339(StringViewOf(*v), options_.time);
  if (!t.has_value()) {
    Record(JsonReadProblem::kBadTime, key, options_.time.min_year, 9999);
  }
  return t;
}

std::vector<std::string> JsonObjectReader::StringArray(std::string_view key, std::size_t max_items,
                                                       std::size_t max_item_bytes,
                                                       JsonPresence presence) {
  std::vector<std::string> out;
  const rapidjson::Value* v = Member(key, presence);
  if (v == nullptr) {
    return out;
  }
  if (!v->IsArray()) {
    Record(JsonReadProblem::kNotArray, key);
    return out;
  }
  if (v->Size() > max_items) {
    Record(JsonReadProblem::kTooManyItems, key, 0, static_cast<std::int64_t>(max_items));
    return out;
  }
  for (const rapidjson::Value& item : v->GetArray()) {
    if (!item.IsString() || item.GetStringLength() > max_item_bytes ||
        !TextAllowed(StringViewOf(item))) {
      Record(JsonReadProblem::kBadItem, key, 0, static_cast<std::int64_t>(max_item_bytes));
      return {};
    }
    out.emplace_back(StringViewOf(item));
  }
  return out;
}

void JsonObjectReader::Fail(std::string_view key, std::string_view problem) {
  Record(JsonReadProblem::kInvalid, key, 0, 0, problem);
}

absl::Status JsonObjectReader::status() const {
  return error_.has_value() ? options_.render(*error_) : absl::OkStatus();
}

absl::Status JsonObjectReader::Finish() {
  if (!error_.has_value() && !members_declared_) {
    for (const auto& m : value_.GetObject()) {
      const std::string_view name = StringViewOf(m.name);
      if (expected_.find(name) == expected_.end()) {
        Record(JsonReadProblem::kUnknownMember, name);
        break;
      }
    }
  }
  return status();
}

void JsonObjectReader::Record(JsonReadProblem problem, std::string_view member, std::int64_t low,
                              std::int64_t high, std::string_view detail) {
  if (error_.has_value()) {
    return;
  }
  error_ = JsonReadError{problem, path_, std::string(member), low, high, std::string(detail)};
}

bool JsonObjectReader::TextAllowed(std::string_view text) const {
  return options_.text == JsonTextRule::kCleanText ? IsCleanText(text) : IsValidUtf8(text);
}

}  // namespace pulse::core
