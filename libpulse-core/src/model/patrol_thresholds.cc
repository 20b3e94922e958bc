#include "pulse/core/model/patrol_thresholds.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/string_view.h"

namespace pulse::core {
namespace {

struct MetricField {
  std::string_view name;
  std::optional<ThresholdLevels> ThresholdSet::*field;
};

constexpr std::array<MetricField, 4> kMetrics = {{
    {"cpu", &ThresholdSet::cpu},
    {"memory", &ThresholdSet::memory},
    {"disk", &ThresholdSet::disk},
    {"storage", &ThresholdSet::storage},
}};

// A member name as a message may show it: printable ASCII, at most 64 bytes, quoted.
std::string QuoteForMessage(std::string_view text) {
  std::string out = "\"";
  for (const char c : text.substr(0, 64)) {
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  out += text.size() > 64 ? "...\"" : "\"";
  return out;
}

absl::Status Invalid(std::string_view where, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(where), ": ", ToAbsl(what)));
}

// Refuses a member given twice (which one counts would be the parser's choice).
absl::Status NoRepeats(const rapidjson::Value& object, std::string_view where) {
  std::vector<std::string_view> seen;
  for (const auto& member : object.GetObject()) {
    const std::string_view name = StringViewOf(member.name);
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return Invalid(where, absl::StrCat(QuoteForMessage(name), " is given more than once"));
    }
    seen.push_back(name);
  }
  return absl::OkStatus();
}

absl::StatusOr<double> Percent(const rapidjson::Value& levels, const char* name,
                               std::string_view where) {
  const rapidjson::Value* v = GetMember(levels, name);
  if (v == nullptr) {
    return Invalid(where, absl::StrCat(name, " is missing"));
  }
  if (!v->IsNumber() || !std::isfinite(v->GetDouble()) || v->GetDouble() < 0 ||
      v->GetDouble() > 100) {
    return Invalid(where, absl::StrCat(name, " must be a number from 0 to 100"));
  }
  return v->GetDouble();
}

absl::StatusOr<ThresholdLevels> ParseLevels(const rapidjson::Value& v, std::string_view where) {
  if (!v.IsObject()) {
    return Invalid(where, "must be an object { warning, critical }");
  }
  if (absl::Status s = NoRepeats(v, where); !s.ok()) {
    return s;
  }
  for (const auto& member : v.GetObject()) {
    const std::string_view name = StringViewOf(member.name);
    if (name != "warning" && name != "critical") {
      return Invalid(where, absl::StrCat("unknown member ", QuoteForMessage(name)));
    }
  }
  absl::StatusOr<double> warning = Percent(v, "warning", where);
  if (!warning.ok()) {
    return warning.status();
  }
  absl::StatusOr<double> critical = Percent(v, "critical", where);
  if (!critical.ok()) {
    return critical.status();
  }
  if (*warning >= *critical) {
    return Invalid(where, "warning must be below critical");
  }
  return ThresholdLevels{*warning, *critical};
}

absl::StatusOr<ThresholdSet> ParseSet(const rapidjson::Value& v, std::string_view where,
                                      bool allow_empty) {
  if (!v.IsObject()) {
    return Invalid(where, "must be an object of cpu, memory, disk, storage");
  }
  if (absl::Status s = NoRepeats(v, where); !s.ok()) {
    return s;
  }
  ThresholdSet set;
  for (const auto& member : v.GetObject()) {
    const std::string_view name = StringViewOf(member.name);
    const auto metric = std::find_if(kMetrics.begin(), kMetrics.end(),
                                     [&](const MetricField& m) { return m.name == name; });
    if (metric == kMetrics.end()) {
      return Invalid(where, absl::StrCat("unknown metric ", QuoteForMessage(name),
                                         " (cpu, memory, disk, storage)"));
    }
    absl::StatusOr<ThresholdLevels> levels =
        ParseLevels(member.value, absl::StrCat(ToAbsl(where), ".", ToAbsl(name)));
    if (!levels.ok()) {
      return levels.status();
    }
    set.*(metric->field) = *levels;
  }
  if (!allow_empty && set == ThresholdSet{}) {
    return Invalid(where, "an override names at least one metric");
  }
  return set;
}

bool IsResourceType(std::string_view type) {
  if (type.empty() || type.size() > 32 || type.front() < 'a' || type.front() > 'z') {
    return false;
  }
  return std::all_of(type.begin(), type.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

absl::Status ParseOverrides(const rapidjson::Value& v, std::string_view section, std::size_t max,
                            bool (*valid_key)(std::string_view), std::string_view key_rule,
                            std::map<std::string, ThresholdSet>& out) {
  if (!v.IsObject()) {
    return Invalid(section, "must be an object");
  }
  if (absl::Status s = NoRepeats(v, section); !s.ok()) {
    return s;
  }
  if (v.MemberCount() > max) {
    return Invalid(section, absl::StrCat("at most ", max, " overrides"));
  }
  for (const auto& member : v.GetObject()) {
    const std::string_view key = StringViewOf(member.name);
    if (!valid_key(key)) {
      return Invalid(section, absl::StrCat(QuoteForMessage(key), " is not ", ToAbsl(key_rule)));
    }
    absl::StatusOr<ThresholdSet> set =
        ParseSet(member.value, absl::StrCat(ToAbsl(section), ".", QuoteForMessage(key)), false);
    if (!set.ok()) {
      return set.status();
    }
    out.emplace(std::string(key), *std::move(set));
  }
  return absl::OkStatus();
}

void WriteSet(JsonWriter& w, const ThresholdSet& set) {
  w.StartObject();
  for (const MetricField& m : kMetrics) {
    if (const std::optional<ThresholdLevels>& levels = set.*(m.field); levels.has_value()) {
      w.Key(m.name);
      w.StartObject();
      w.Key("warning");
      w.Double(levels->warning);
      w.Key("critical");
      w.Double(levels->critical);
      w.EndObject();
    }
  }
  w.EndObject();
}

}  // namespace

ThresholdSet PatrolThresholdSettings::BuiltinDefaults() {
  ThresholdSet set;
  set.cpu = ThresholdLevels{90, 98};
  set.memory = ThresholdLevels{90, 98};
  set.disk = ThresholdLevels{85, 95};
  set.storage = ThresholdLevels{85, 95};
  return set;
}

std::string PatrolThresholdsToJson(const PatrolThresholdSettings& settings) {
  JsonWriter w;
  w.StartObject();
  w.Key("defaults");
  WriteSet(w, settings.defaults);
  const auto write_overrides = [&w](std::string_view section,
                                    const std::map<std::string, ThresholdSet>& overrides) {
    w.Key(section);
    w.StartObject();
    for (const auto& [key, set] : overrides) {
      w.Key(key);
      WriteSet(w, set);
    }
    w.EndObject();
  };
  write_overrides("resource_types", settings.resource_types);
  write_overrides("resources", settings.resources);
  w.TimeMemberIfSet("updated_at", settings.updated_at);
  w.MemberIfNotEmpty("updated_by", settings.updated_by);
  w.EndObject();
  return w.Take();
}

absl::StatusOr<PatrolThresholdSettings> PatrolThresholdsFromJson(std::string_view json,
                                                                 bool with_meta) {
  absl::StatusOr<rapidjson::Document> doc = ParseJson(json);
  if (!doc.ok()) {
    return absl::InvalidArgumentError("the thresholds must be a JSON object");
  }
  if (!doc->IsObject()) {
    return absl::InvalidArgumentError("the thresholds must be a JSON object");
  }
  const rapidjson::Value& root = *doc;
  if (absl::Status s = NoRepeats(root, "thresholds"); !s.ok()) {
    return s;
  }
  PatrolThresholdSettings out;
  for (const auto& member : root.GetObject()) {
    const std::string_view name = StringViewOf(member.name);
    const bool meta = name == "updated_at" || name == "updated_by";
    if (name != "defaults" && name != "resource_types" && name != "resources" &&
        !(meta && with_meta)) {
      return Invalid("thresholds", absl::StrCat("unknown member ", QuoteForMessage(name)));
    }
  }
  if (const rapidjson::Value* v = GetMember(root, "defaults"); v != nullptr) {
    absl::StatusOr<ThresholdSet> set = ParseSet(*v, "defaults", true);
    if (!set.ok()) {
      return set.status();
    }
    // Metrics the body leaves out keep the built-in levels.
    for (const MetricField& m : kMetrics) {
      if ((*set.*(m.field)).has_value()) {
        out.defaults.*(m.field) = *set.*(m.field);
      }
    }
  }
  if (const rapidjson::Value* v = GetMember(root, "resource_types"); v != nullptr) {
    if (absl::Status s =
            ParseOverrides(*v, "resource_types", kMaxThresholdTypeOverrides, IsResourceType,
                           "a resource type ([a-z][a-z0-9-]{0,31})", out.resource_types);
        !s.ok()) {
      return s;
    }
  }
  if (const rapidjson::Value* v = GetMember(root, "resources"); v != nullptr) {
    if (absl::Status s =
            ParseOverrides(*v, "resources", kMaxThresholdResourceOverrides, IsCanonicalResourceId,
                           "a canonical resource id (type:local-id)", out.resources);
        !s.ok()) {
      return s;
    }
  }
  if (with_meta) {
    if (std::optional<std::string_view> at = GetString(root, "updated_at"); at.has_value()) {
      out.updated_at = ParseRfc3339(*at);
      if (!out.updated_at.has_value()) {
        return Invalid("thresholds", "updated_at is not an RFC 3339 time");
      }
    }
    if (std::optional<std::string_view> by = GetString(root, "updated_by"); by.has_value()) {
      out.updated_by = std::string(*by);
    }
  }
  return out;
}

}  // namespace pulse::core
