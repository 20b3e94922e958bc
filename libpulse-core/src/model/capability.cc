#include "pulse/core/model/capability.h"

#include <array>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/model/action_codec.h"
#include "pulse/core/string_view.h"
#include "rapidjson/internal/regex.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<ApprovalLevel>, 4> kApprovalLevels = {{
    {ApprovalLevel::kNone, "none"},
    {ApprovalLevel::kAdmin, "admin"},
    {ApprovalLevel::kMfa, "mfa"},
    {ApprovalLevel::kDryRunOnly, "dry_run_only"},
}};

constexpr std::array<WireName<AutoAuthorization>, 3> kAutoAuthorizations = {{
    {AutoAuthorization::kNever, "never"},
    {AutoAuthorization::kLowRisk, "low_risk"},
    {AutoAuthorization::kElevated, "elevated"},
}};

constexpr std::array<WireName<ActionRisk>, 3> kRisks = {{
    {ActionRisk::kLow, "low"},
    {ActionRisk::kMedium, "medium"},
    {ActionRisk::kHigh, "high"},
}};

// Canonical spellings first: WireNameOf returns the first match.
constexpr std::array<WireName<ParamType>, 12> kParamTypes = {{
    {ParamType::kString, "string"},
    {ParamType::kBoolean, "boolean"},
    {ParamType::kInteger, "integer"},
    {ParamType::kNumber, "number"},
    {ParamType::kObject, "object"},
    {ParamType::kArray, "array"},
    {ParamType::kAny, "any"},
    {ParamType::kBoolean, "bool"},
    {ParamType::kInteger, "int"},
    {ParamType::kNumber, "float"},
    {ParamType::kNumber, "float64"},
    {ParamType::kObject, "map"},
}};

bool IsNameChar(char c, bool allow_upper) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' ||
         (allow_upper && c >= 'A' && c <= 'Z');
}

bool IsValidName(std::string_view name, bool allow_upper) {
  if (name.empty() || name.size() > 64) {
    return false;
  }
  const char first = name.front();
  if (!((first >= 'a' && first <= 'z') || (allow_upper && first >= 'A' && first <= 'Z'))) {
    return false;
  }
  for (char c : name) {
    if (!IsNameChar(c, allow_upper)) {
      return false;
    }
  }
  return true;
}

// Upper bound on the NFA states RapidJSON's regex builds for `pattern`: counted quantifiers
// clone their operand, so nested counts multiply. Saturates far above any accepted limit.
constexpr std::size_t kMaxPatternStates = 4096;
constexpr std::size_t kSaturated = kMaxPatternStates * 1024;

std::size_t SatAdd(std::size_t a, std::size_t b) { return a + b > kSaturated ? kSaturated : a + b; }
std::size_t SatMul(std::size_t a, std::size_t b) {
  return (b != 0 && a > kSaturated / b) ? kSaturated : a * b;
}

// Returns false when the pattern is structurally unbounded or too large to compile safely.
bool PatternWithinBounds(std::string_view pattern) {
  struct Frame {
    std::size_t total = 0;
    std::size_t last_atom = 0;
  };
  std::vector<Frame> stack(1);
  std::size_t i = 0;
  auto atom = [&](std::size_t size) {
    stack.back().total = SatAdd(stack.back().total, size);
    stack.back().last_atom = size;
  };
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == '\\') {
      i += 2;
      atom(1);
      continue;
    }
    if (c == '[') {
      ++i;
      while (i < pattern.size() && pattern[i] != ']') {
        i += pattern[i] == '\\' ? 2 : 1;
      }
      if (i >= pattern.size()) {
        return false;  // unterminated class
      }
      ++i;
      atom(1);
      continue;
    }
    if (c == '(') {
      if (stack.size() > 16) {
        return false;
      }
      stack.emplace_back();
      ++i;
      continue;
    }
    if (c == ')') {
      if (stack.size() == 1) {
        return false;
      }
      const std::size_t group = SatAdd(stack.back().total, 1);
      stack.pop_back();
      atom(group);
      ++i;
      continue;
    }
    if (c == '{') {
      std::size_t j = i + 1;
      std::size_t n = 0;
      std::size_t m = 0;
      bool have_digit = false;
      while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') {
        n = SatAdd(SatMul(n, 10), static_cast<std::size_t>(pattern[j] - '0'));
        have_digit = true;
        ++j;
      }
      m = n;
      if (j < pattern.size() && pattern[j] == ',') {
        ++j;
        std::size_t upper = 0;
        bool have_upper = false;
        while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') {
          upper = SatAdd(SatMul(upper, 10), static_cast<std::size_t>(pattern[j] - '0'));
          have_upper = true;
          ++j;
        }
        if (have_upper) {
          m = upper;
        }
      }
      if (!have_digit || n > 1000 || m > 1000) {
        return false;
      }
      const std::size_t copies = (m > n ? m : n) + 1;
      Frame& f = stack.back();
      f.total = SatAdd(f.total, SatMul(f.last_atom, copies));
      f.last_atom = SatMul(f.last_atom, copies);
      i = j + 1;
      continue;
    }
    if (c == '?' || c == '*' || c == '+' || c == '|') {
      atom(1);
      ++i;
      continue;
    }
    atom(1);
    ++i;
  }
  if (stack.size() != 1) {
    return false;  // unbalanced '(' (the engine would silently accept it)
  }
  return stack.back().total <= kMaxPatternStates;
}

absl::Status ValidatePattern(std::string_view pattern) {
  if (pattern.size() > kMaxParamPatternBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("pattern is longer than ", kMaxParamPatternBytes, " bytes"));
  }
  if (!IsValidUtf8(pattern) || pattern.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("pattern must be valid UTF-8 without NUL");
  }
  if (!PatternWithinBounds(pattern)) {
    return absl::InvalidArgumentError("pattern is too large or nests too deeply");
  }
  const std::string text(pattern);
  rapidjson::internal::Regex regex(text.c_str());
  if (!regex.IsValid()) {
    return absl::InvalidArgumentError("pattern uses syntax the regex subset does not support");
  }
  return absl::OkStatus();
}

// Every string in `root` (member names included) is valid UTF-8, NUL-free and bounded.
bool AllStringsClean(const rapidjson::Value& root) {
  std::vector<const rapidjson::Value*> stack = {&root};
  auto clean = [](std::string_view s) {
    return s.size() <= kMaxParamStringBytes && s.find('\0') == std::string_view::npos &&
           IsValidUtf8(s);
  };
  while (!stack.empty()) {
    const rapidjson::Value* v = stack.back();
    stack.pop_back();
    if (v->IsString() && !clean(StringViewOf(*v))) {
      return false;
    }
    if (v->IsObject()) {
      for (const auto& m : v->GetObject()) {
        if (!clean(StringViewOf(m.name))) {
          return false;
        }
        stack.push_back(&m.value);
      }
    } else if (v->IsArray()) {
      for (const auto& e : v->GetArray()) {
        stack.push_back(&e);
      }
    }
  }
  return true;
}

bool HasType(const rapidjson::Value& v, ParamType type) {
  switch (type) {
    case ParamType::kString:
      return v.IsString();
    case ParamType::kBoolean:
      return v.IsBool();
    case ParamType::kInteger:
      return v.IsInt64() || v.IsUint64();
    case ParamType::kNumber:
      return v.IsNumber();
    case ParamType::kObject:
      return v.IsObject();
    case ParamType::kArray:
      return v.IsArray();
    case ParamType::kAny:
      return !v.IsNull();
  }
  return false;
}

// The map key for an error about a submitted name: the name itself when it is a plausible
// param name, else "params" (hostile names are never echoed).
std::string ErrorKey(std::string_view name) {
  return IsValidName(name, true) ? std::string(name) : std::string("params");
}

}  // namespace

std::string_view ToString(ApprovalLevel level) { return WireNameOf(kApprovalLevels, level); }
std::optional<ApprovalLevel> ParseApprovalLevel(std::string_view text) {
  return WireValueOf(kApprovalLevels, text);
}
std::string_view ToString(AutoAuthorization value) {
  return WireNameOf(kAutoAuthorizations, value);
}
std::optional<AutoAuthorization> ParseAutoAuthorization(std::string_view text) {
  return WireValueOf(kAutoAuthorizations, text);
}
std::string_view ToString(ActionRisk risk) { return WireNameOf(kRisks, risk); }
std::optional<ActionRisk> ParseActionRisk(std::string_view text) {
  return WireValueOf(kRisks, text);
}
std::string_view ToString(ParamType type) { return WireNameOf(kParamTypes, type); }
std::optional<ParamType> ParseParamType(std::string_view text) {
  return WireValueOf(kParamTypes, text);
}

absl::Status ValidateCapability(const Capability& capability) {
  if (!IsValidName(capability.name, false)) {
    return absl::InvalidArgumentError("capability name must match [a-z][a-z0-9_.-]{0,63}");
  }
  const std::string where = absl::StrCat("capability '", capability.name, "': ");
  if (capability.description.size() > kMaxCapabilityTextBytes ||
      !IsCleanText(capability.description)) {
    return absl::InvalidArgumentError(where + "description must be bounded, clean text");
  }
  if (capability.params.size() > kMaxCapabilityParams) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "declares more than ", kMaxCapabilityParams, " params"));
  }
  std::set<std::string_view> names;
  for (const CapabilityParam& p : capability.params) {
    if (!IsValidName(p.name, true)) {
      return absl::InvalidArgumentError(where +
                                        "param names must match [A-Za-z][A-Za-z0-9_.-]{0,63}");
    }
    const std::string at = absl::StrCat(where, "param '", p.name, "' ");
    if (!names.insert(p.name).second) {
      return absl::InvalidArgumentError(at + "is declared twice");
    }
    if (p.description.size() > kMaxCapabilityTextBytes || !IsCleanText(p.description)) {
      return absl::InvalidArgumentError(at + "description must be bounded, clean text");
    }
    if ((!p.enum_values.empty() || !p.pattern.empty()) && p.type != ParamType::kString) {
      return absl::InvalidArgumentError(at + "may declare enum or pattern only as a string");
    }
    if (p.enum_values.size() > kMaxParamEnumValues) {
      return absl::InvalidArgumentError(at + "declares too many enum values");
    }
    std::set<std::string_view> values;
    for (const std::string& v : p.enum_values) {
      if (v.size() > kMaxParamStringBytes || v.find('\0') != std::string::npos || !IsValidUtf8(v) ||
          !values.insert(v).second) {
        return absl::InvalidArgumentError(at + "enum values must be unique, bounded UTF-8");
      }
    }
    if (!p.pattern.empty()) {
      absl::Status s = ValidatePattern(p.pattern);
      if (!s.ok()) {
        return absl::InvalidArgumentError(at + std::string(s.message()));
      }
    }
  }
  return absl::OkStatus();
}

const Capability* FindCapability(const std::vector<Capability>& catalogue, std::string_view name) {
  for (const Capability& c : catalogue) {
    if (c.name == name) {
      return &c;
    }
  }
  return nullptr;
}

ParamValidation ValidateParams(const Capability& capability, std::string_view params_json) {
  ParamValidation out;
  const std::string_view text = params_json.empty() ? std::string_view("{}") : params_json;
  absl::StatusOr<rapidjson::Document> doc =
      ParseJson(text, JsonLimits{kMaxParamsJsonBytes, kMaxParamsDepth});
  if (!doc.ok()) {
    out.errors["params"] = absl::StrCat("must be well-formed JSON within ", kMaxParamsJsonBytes,
                                        " bytes and nesting depth ", kMaxParamsDepth);
    return out;
  }
  if (!doc->IsObject()) {
    out.errors["params"] = "must be a JSON object";
    return out;
  }
  if (doc->MemberCount() > kMaxCapabilityParams) {
    out.errors["params"] = absl::StrCat("has more than ", kMaxCapabilityParams, " members");
    return out;
  }
  if (!AllStringsClean(*doc)) {
    out.errors["params"] = absl::StrCat("strings must be valid UTF-8 without NUL and at most ",
                                        kMaxParamStringBytes, " bytes");
    return out;
  }
  std::set<std::string_view> seen;
  const rapidjson::Value& root = *doc;  // const iteration: no ambiguous C++20 comparisons
  for (const auto& m : root.GetObject()) {
    const std::string_view name = StringViewOf(m.name);
    if (!seen.insert(name).second) {
      out.errors[ErrorKey(name)] = "appears more than once";
      continue;
    }
    const CapabilityParam* decl = nullptr;
    for (const CapabilityParam& p : capability.params) {
      if (p.name == name) {
        decl = &p;
        break;
      }
    }
    if (decl == nullptr) {
      const bool untrimmed = !name.empty() && (name.front() == ' ' || name.back() == ' ' ||
                                               name.front() == '\t' || name.back() == '\t');
      out.errors[ErrorKey(name)] =
          untrimmed ? "has surrounding whitespace" : "is not declared by the capability";
      continue;
    }
    const rapidjson::Value& v = m.value;
    if (!HasType(v, decl->type)) {
      out.errors[decl->name] = absl::StrCat("must be of type ", ToAbsl(ToString(decl->type)));
      continue;
    }
    if (!v.IsString()) {
      continue;
    }
    const std::string_view s = StringViewOf(v);
    if (!decl->enum_values.empty()) {
      bool found = false;
      for (const std::string& allowed : decl->enum_values) {
        found = found || allowed == s;
      }
      if (!found) {
        out.errors[decl->name] = "is not one of the declared values";
        continue;
      }
    }
    if (!decl->pattern.empty()) {
      absl::StatusOr<bool> matched = PatternSearch(decl->pattern, s);
      if (!matched.ok()) {
        out.errors[decl->name] = "has an invalid declared pattern";
      } else if (!*matched) {
        out.errors[decl->name] = "does not match the declared pattern";
      }
    }
  }
  for (const CapabilityParam& p : capability.params) {
    if (p.required && !seen.count(p.name)) {
      out.errors[p.name] = "is required";
    }
  }
  if (out.errors.empty()) {
    out.canonical_params = CanonicalJson(*doc);
  }
  return out;
}

absl::StatusOr<bool> PatternSearch(std::string_view pattern, std::string_view subject) {
  absl::Status valid = ValidatePattern(pattern);
  if (!valid.ok()) {
    return valid;
  }
  // The engine stops at NUL and at a byte it cannot decode, so either would let a prefix
  // decide the match: such subjects never match.
  if (subject.find('\0') != std::string_view::npos || !IsValidUtf8(subject)) {
    return false;
  }
  const std::string p(pattern);
  const std::string s(subject);
  rapidjson::internal::Regex regex(p.c_str());
  return regex.Search(s.c_str());
}

}  // namespace pulse::core
