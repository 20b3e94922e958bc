#include "pulse/adapters/agents/fleet_sources.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/status_macros.h"

namespace pulse::adapters::agents {
namespace {

constexpr core::JsonLimits kSourcesLimits{kMaxFleetSourcesBytes, 8};

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool IsKindName(std::string_view kind) {
  return !kind.empty() && kind.size() <= 32 && kind[0] >= 'a' && kind[0] <= 'z' &&
         std::all_of(kind.begin(), kind.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

// The source's settings object, read strictly: `allowed` lists the settings the kind takes
// (name and kind are always allowed).
absl::StatusOr<rapidjson::Document> ParseSource(const FleetSourceSpec& spec) {
  return core::ParseJson(spec.json, kSourcesLimits);
}

absl::StatusOr<std::unique_ptr<core::Fleet>> OpenDemoSource(const FleetSourceSpec& spec,
                                                            const DemoFleetOptions& base) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseSource(spec));
  core::JsonObjectReader reader(doc, "source");
  PULSE_RETURN_IF_ERROR(reader.ExpectMembers({"name", "kind", "file"}));
  const std::optional<std::string> file = reader.String("file", {4096});
  PULSE_RETURN_IF_ERROR(reader.Finish());
  absl::StatusOr<std::unique_ptr<DemoFleet>> demo =
      file.has_value() ? DemoFleet::Open(*file, base) : DemoFleet::OpenDefault(base);
  if (!demo.ok()) {
    return demo.status();
  }
  return std::unique_ptr<core::Fleet>(*std::move(demo));
}

absl::StatusOr<std::unique_ptr<core::Fleet>> OpenLocalSource(const FleetSourceSpec& spec,
                                                             const LocalHostFleetOptions& base) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseSource(spec));
  core::JsonObjectReader reader(doc, "source");
  PULSE_RETURN_IF_ERROR(
      reader.ExpectMembers({"name", "kind", "allow_actions", "action_allowlist", "allow_exec"}));
  LocalHostFleetOptions options = base;
  if (const std::optional<bool> allow = reader.Bool("allow_actions")) {
    options.allow_local_actions = *allow;
  }
  if (reader.Member("action_allowlist") != nullptr) {
    options.action_allowlist = reader.StringArray("action_allowlist", 256, 256);
  }
  if (const std::optional<bool> exec = reader.Bool("allow_exec")) {
    options.allow_exec = *exec;
  }
  PULSE_RETURN_IF_ERROR(reader.Finish());
  absl::StatusOr<std::unique_ptr<LocalHostFleet>> local = LocalHostFleet::Open(options);
  if (!local.ok()) {
    return local.status();
  }
  return std::unique_ptr<core::Fleet>(*std::move(local));
}

}  // namespace

bool IsFleetSourceName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxFleetSourceNameBytes && IsLowerAlnum(name[0]) &&
         std::all_of(name.begin(), name.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool IsFleetSourcesDocument(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json, kSourcesLimits);
  return doc.ok() && doc->IsObject() && doc->HasMember("sources");
}

absl::StatusOr<std::vector<FleetSourceSpec>> ParseFleetSources(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json, kSourcesLimits);
  if (!doc.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("fleet: not valid JSON: ", doc.status().message()));
  }
  core::JsonObjectReader top(*doc, "fleet");
  PULSE_RETURN_IF_ERROR(top.ExpectMembers({"sources"}));
  const rapidjson::Value* sources = top.Member("sources", core::JsonPresence::kRequired);
  PULSE_RETURN_IF_ERROR(top.Finish());
  if (!sources->IsArray()) {
    return absl::InvalidArgumentError("fleet.sources must be an array of source objects");
  }
  if (sources->Empty()) {
    return absl::InvalidArgumentError("fleet.sources must name at least one source");
  }
  if (sources->Size() > kMaxFleetSources) {
    return absl::InvalidArgumentError(
        absl::StrCat("fleet.sources has more than ", kMaxFleetSources, " sources"));
  }
  std::vector<FleetSourceSpec> out;
  std::set<std::string> names;
  for (rapidjson::SizeType i = 0; i < sources->Size(); ++i) {
    const rapidjson::Value& source = (*sources)[i];
    const std::string path = absl::StrCat("fleet.sources[", i, "]");
    core::JsonObjectReader reader(source, path);
    if (!reader.ok()) {
      return reader.status();
    }
    FleetSourceSpec spec;
    spec.name = reader.String("name", {kMaxFleetSourceNameBytes, core::JsonPresence::kRequired})
                    .value_or("");
    spec.kind = reader.String("kind", {32, core::JsonPresence::kRequired}).value_or("");
    if (!reader.ok()) {
      return reader.status();
    }
    if (!IsFleetSourceName(spec.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path,
                       ".name must be 1..32 characters of a-z, 0-9 and '-', starting "
                       "with a letter or digit"));
    }
    if (!IsKindName(spec.kind)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".kind must be a kind name such as demo, local or docker"));
    }
    if (!names.insert(spec.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".name \"", spec.name, "\" is used by an earlier source"));
    }
    spec.json = core::CanonicalJson(source);
    out.push_back(std::move(spec));
  }
  return out;
}

absl::Status FleetSourceRegistry::Register(std::string kind, FleetSourceFactory factory) {
  if (!IsKindName(kind) || !factory) {
    return absl::InvalidArgumentError("a fleet source kind needs a kind name and a factory");
  }
  if (!factories_.emplace(std::move(kind), std::move(factory)).second) {
    return absl::AlreadyExistsError("this fleet source kind is already registered");
  }
  return absl::OkStatus();
}

bool FleetSourceRegistry::Has(std::string_view kind) const {
  return factories_.find(kind) != factories_.end();
}

std::vector<std::string> FleetSourceRegistry::Kinds() const {
  std::vector<std::string> kinds;
  kinds.reserve(factories_.size());
  for (const auto& [kind, factory] : factories_) {
    kinds.push_back(kind);
  }
  return kinds;
}

absl::StatusOr<std::unique_ptr<core::Fleet>> FleetSourceRegistry::Open(
    const FleetSourceSpec& spec) const {
  const auto it = factories_.find(spec.kind);
  if (it == factories_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("fleet source \"", spec.name, "\": unknown kind \"", spec.kind,
                     "\"; known kinds: ", absl::StrJoin(Kinds(), ", ")));
  }
  absl::StatusOr<std::unique_ptr<core::Fleet>> fleet = it->second(spec);
  if (!fleet.ok()) {
    return absl::Status(fleet.status().code(),
                        absl::StrCat("fleet source \"", spec.name, "\" (", spec.kind,
                                     "): ", fleet.status().message()));
  }
  if (*fleet == nullptr) {
    return absl::InternalError(
        absl::StrCat("fleet source \"", spec.name, "\": its factory returned no fleet"));
  }
  return fleet;
}

absl::Status RegisterBuiltinFleetSources(FleetSourceRegistry& registry,
                                         const BuiltinFleetSourceOptions& options) {
  PULSE_RETURN_IF_ERROR(registry.Register(
      "demo",
      [demo = options.demo](const FleetSourceSpec& spec) { return OpenDemoSource(spec, demo); }));
  return registry.Register("local", [local = options.local](const FleetSourceSpec& spec) {
    return OpenLocalSource(spec, local);
  });
}

}  // namespace pulse::adapters::agents
