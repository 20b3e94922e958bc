// A strict reader of one JSON object, for decoders that treat their input as hostile: every
// member must be expected, appear once, and have its declared type, bounds and text rule. The
// first problem found wins and is kept as a value (JsonReadError: what went wrong, in which
// object and member); the reader's renderer turns it into an absl::Status, so each codec keeps
// its own wording. Accessors never fail: they return nullopt (or a default) and record the
// problem. Not thread-safe; borrows the value, which must outlive the reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "pulse/core/json/json_time.h"
#include "rapidjson/document.h"

namespace pulse::core {

enum class JsonPresence {
  kOptional,  // absent and null are the same: nothing is read
  kRequired,  // absent or null is kMissing; a required string must also be non-empty
};

// What every string member (and string array item) must be.
enum class JsonTextRule {
  kUtf8,       // IsValidUtf8: NUL and control characters are data
  kCleanText,  // IsCleanText: no NUL, DEL or controls other than tab and newline
};

enum class JsonReadProblem {
  kNotObject,        // the value itself is not an object (member is empty)
  kUnknownMember,    // member is not one the decoder expects (member is the raw name)
  kDuplicateMember,  // member appears more than once (member is the raw name)
  kMissing,          // a required member is absent or null
  kEmpty,            // a required string is empty
  kNotString,
  kTooLong,  // a string over `high` bytes
  kBadText,  // a string that breaks the reader's JsonTextRule
  kNotInteger,
  kOutOfRange,  // an integer outside [low, high]
  kNotBoolean,
  kNotNumber,
  kNotFinite,
  kNotTimeString,
  kBadTime,       // not RFC 3339, or outside the limits (low is the earliest year)
  kUnknownValue,  // a string the member's vocabulary does not know
  kNotArray,
  kTooManyItems,  // an array of more than `high` items
  kBadItem,       // an array item that is not a string within `high` bytes and the text rule
  kInvalid,       // a problem the decoder found itself; `detail` words it
};

struct JsonReadError {
  JsonReadProblem problem = JsonReadProblem::kInvalid;
  std::string path;    // the object, as the decoder names it: "finding", "lifecycle[3]"
  std::string member;  // as spelled in the document (untrusted for unknown and duplicate)
  std::int64_t low = 0;
  std::int64_t high = 0;
  std::string detail;
};

// The default wording, for InvalidArgument: "<path> must be a JSON object",
// "<path> has an unknown member \"<name>\"", "<path> has a duplicate member \"<name>\"" (names
// cut to 64 bytes, ill-formed UTF-8 replaced), otherwise "<path>.<member> <problem>" with
// JsonMemberProblemText.
[[nodiscard]] std::string JsonReadErrorText(const JsonReadError& error);
// The <problem> part: "is required", "must not be empty", "must be a string", "is longer than
// N bytes", "is not valid UTF-8", "must be an integer", "must be between L and H", "must be a
// boolean", "must be a number", "must be finite", "must be an RFC 3339 string", "is not an
// RFC 3339 time in years L..9999", "is not a known value", "must be an array of strings",
// "has more than N items", "must hold bounded, valid UTF-8 strings", or the detail.
[[nodiscard]] std::string JsonMemberProblemText(const JsonReadError& error);
// InvalidArgument with JsonReadErrorText.
[[nodiscard]] absl::Status RenderJsonReadError(const JsonReadError& error);

using JsonErrorRenderer = absl::Status (*)(const JsonReadError& error);

struct JsonReaderOptions {
  JsonTextRule text = JsonTextRule::kUtf8;
  Rfc3339Limits time = {};
  JsonErrorRenderer render = &RenderJsonReadError;
};

struct JsonStringRule {
  std::size_t max_bytes = 0;
  JsonPresence presence = JsonPresence::kOptional;
  // Strip surrounding ASCII whitespace after the bound and text checks; a required member
  // must then still be non-empty.
  bool trim = false;
};

class JsonObjectReader {
 public:
  // `path` names the object in errors. A value that is not an object is kNotObject. Unless
  // ExpectMembers() is called first, a repeated member name is kDuplicateMember (the second
  // occurrence, in document order).
  JsonObjectReader(const rapidjson::Value& value, std::string path,
                   const JsonReaderOptions& options = {});
  JsonObjectReader(const JsonObjectReader&) = delete;
  JsonObjectReader& operator=(const JsonObjectReader&) = delete;

  // Declares every member the object may hold, before any is read. The first member in
  // document order that is not in `allowed`, or repeats one, is the error (kUnknownMember or
  // kDuplicateMember). Returns status().
  [[nodiscard]] absl::Status ExpectMembers(std::initializer_list<std::string_view> allowed);

  // Each accessor marks `key` as expected and returns nullopt (StringArray: empty) when the
  // member is absent, null or breaks its rule; a missing required member and a broken rule are
  // recorded.

  // The member as it is; the caller checks it.
  const rapidjson::Value* Member(std::string_view key,
                                 JsonPresence presence = JsonPresence::kOptional);
  std::optional<std::string> String(std::string_view key, const JsonStringRule& rule);
  // A JSON integer that fits int64 (1.0 and 1e3 are not integers), within [low, high].
  std::optional<std::int64_t> Int(std::string_view key, std::int64_t low, std::int64_t high,
                                  JsonPresence presence = JsonPresence::kOptional);
  std::optional<bool> Bool(std::string_view key, JsonPresence presence = JsonPresence::kOptional);
  // Any finite number.
  std::optional<double> Number(std::string_view key,
                               JsonPresence presence = JsonPresence::kOptional);
  // An RFC 3339 string within the reader's Rfc3339Limits.
  std::optional<absl::Time> Time(std::string_view key,
                                 JsonPresence presence = JsonPresence::kOptional);
  // At most `max_items` strings of at most `max_item_bytes` each; empty when absent or wrong.
  std::vector<std::string> StringArray(std::string_view key, std::size_t max_items,
                                       std::size_t max_item_bytes,
                                       JsonPresence presence = JsonPresence::kOptional);

  // A string member parsed by `parse` (std::string_view -> std::optional<E>): the exact
  // string, with no bound or text rule of its own.
  template <class Parse>
  auto Enum(std::string_view key, Parse parse, JsonPresence presence = JsonPresence::kOptional)
      -> std::invoke_result_t<Parse, std::string_view> {
    const rapidjson::Value* v = Member(key, presence);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->IsString()) {
      Record(JsonReadProblem::kNotString, key);
      return std::nullopt;
    }
    auto parsed = parse(std::string_view(v->GetString(), v->GetStringLength()));
    if (!parsed.has_value()) {
      Record(JsonReadProblem::kUnknownValue, key);
    }
    return parsed;
  }

  // As above, but read as String(key, rule) first; an empty optional string is absent.
  template <class Parse>
  auto Enum(std::string_view key, Parse parse, const JsonStringRule& rule)
      -> std::invoke_result_t<Parse, std::string_view> {
    std::optional<std::string> text = String(key, rule);
    if (!text.has_value() || text->empty()) {
      return std::nullopt;
    }
    auto parsed = parse(std::string_view(*text));
    if (!parsed.has_value()) {
      Record(JsonReadProblem::kUnknownValue, key);
    }
    return parsed;
  }

  // Records a problem the caller found with member `key` (kInvalid; `problem` is the detail).
  void Fail(std::string_view key, std::string_view problem);

  [[nodiscard]] bool ok() const { return !error_.has_value(); }
  // The first problem, rendered; OK when there is none.
  [[nodiscard]] absl::Status status() const;
  // The first problem so far, or else the first member (document order) that no accessor or
  // ExpectMembers named. Call after the last accessor.
  [[nodiscard]] absl::Status Finish();
  // The first problem, unrendered; nullptr when there is none.
  const JsonReadError* error() const { return error_ ? &*error_ : nullptr; }

 private:
  void Record(JsonReadProblem problem, std::string_view member, std::int64_t low = 0,
              std::int64_t high = 0, std::string_view detail = {});
  bool TextAllowed(std::string_view text) const;

  const rapidjson::Value& value_;
  std::string path_;
  JsonReaderOptions options_;
  std::set<std::string, std::less<>> expected_;
  std::optional<JsonReadError> error_;
  bool duplicate_from_constructor_ = false;
  bool members_declared_ = false;  // ExpectMembers was called: it checked every member
};

}  // namespace pulse::core
