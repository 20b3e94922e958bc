// Loads the demo fleet file (schema: docs/demo-fleet.md). Validation is strict and names the
// JSON path of the first problem, because a hand-edited demo file should fail loudly at
// startup rather than half-load: unknown fields, malformed or duplicate canonical ids, ids
// that disagree with their coordinates, dangling references, unknown statuses, bad series
// and faults that do not apply to their resource are all InvalidArgument.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "demo_model.h"
#include "fmt/format.h"
#include "pulse/core/json/json.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/status_macros.h"
#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"

namespace pulse::adapters::agents::internal {
namespace {

constexpr std::size_t kMaxDemoFileBytes = 4 << 20;
constexpr std::size_t kMaxDemoResources = 1000;
constexpr std::size_t kMaxLogLineBytes = 1024;
constexpr absl::Duration kInitialUptime = absl::Hours(72);

absl::Status Bad(const std::string& path, const std::string& message) {
  return absl::InvalidArgumentError(fmt::format("demo fleet {}: {}", path, message));
}

std::string Index(const std::string& path, std::size_t i) { return fmt::format("{}[{}]", path, i); }

bool IsPrintable(std::string_view text) {
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) {
      return false;
    }
  }
  return true;
}

// Reads the members of one JSON object and remembers which were read, so Finish() can refuse
// the unknown ones.
class Fields {
 public:
  Fields(const rapidjson::Value& object, std::string path)
      : object_(object), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  std::string At(std::string_view key) const { return fmt::format("{}.{}", path_, key); }

  const rapidjson::Value* Get(std::string_view key) {
    seen_.insert(std::string(key));
    auto it = object_.FindMember(rapidjson::StringRef(key.data(), key.size()));
    return it == object_.MemberEnd() ? nullptr : &it->value;
  }

  absl::StatusOr<std::string> String(std::string_view key, bool required,
                                     std::size_t max_bytes = 256) {
    const rapidjson::Value* v = Get(key);
    if (v == nullptr) {
      if (required) {
        return Bad(At(key), "is required");
      }
      return std::string();
    }
    if (!v->IsString()) {
      return Bad(At(key), "must be a string");
    }
    std::string s(v->GetString(), v->GetStringLength());
    if (s.empty() || s.size() > max_bytes || !IsPrintable(s)) {
      return Bad(At(key), fmt::format("must be 1..{} printable bytes", max_bytes));
    }
    return s;
  }

  absl::StatusOr<std::optional<double>> Number(std::string_view key) {
    const rapidjson::Value* v = Get(key);
    if (v == nullptr) {
      return std::optional<double>();
    }
    if (!v->IsNumber() || !std::isfinite(v->GetDouble())) {
      return Bad(At(key), "must be a finite number");
    }
    return std::optional<double>(v->GetDouble());
  }

  absl::StatusOr<std::optional<std::int64_t>> Int(std::string_view key, std::int64_t min,
                                                  std::int64_t max) {
    const rapidjson::Value* v = Get(key);
    if (v == nullptr) {
      return std::optional<std::int64_t>();
    }
    if (!v->IsInt64() || v->GetInt64() < min || v->GetInt64() > max) {
      return Bad(At(key), fmt::format("must be an integer in {}..{}", min, max));
    }
    return std::optional<std::int64_t>(v->GetInt64());
  }

  absl::Status Finish() const {
    for (auto it = object_.MemberBegin(); it != object_.MemberEnd(); ++it) {
      const std::string name(it->name.GetString(), it->name.GetStringLength());
      if (seen_.count(name) == 0) {
        return Bad(path_, fmt::format("unknown field '{}'", IsPrintable(name) ? name : "?"));
      }
    }
    return absl::OkStatus();
  }

 private:
  const rapidjson::Value& object_;
  std::string path_;
  std::set<std::string> seen_;
};

absl::StatusOr<Fields> ObjectAt(const rapidjson::Value& v, const std::string& path) {
  if (!v.IsObject()) {
    return Bad(path, "must be an object");
  }
  return Fields(v, path);
}

// Deterministic pseudo-noise in [-1, 1]: splitmix64 over a per-series seed and the index.
double Noise(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
}

std::uint64_t SeedOf(std::string_view text) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (const char c : text) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return h;
}

void WriteRedacted(const rapidjson::Value& v, rapidjson::PrettyWriter<rapidjson::StringBuffer>& w,
                   bool* redacted) {
  if (v.IsObject()) {
    w.StartObject();
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      const std::string_view name(it->name.GetString(), it->name.GetStringLength());
      w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
      if (IsSecretKey(name) && !it->value.IsObject() && !it->value.IsArray()) {
        w.String("***");
        *redacted = true;
      } else {
        WriteRedacted(it->value, w, redacted);
      }
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const rapidjson::Value& item : v.GetArray()) {
      WriteRedacted(item, w, redacted);
    }
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

class Loader {
 public:
  explicit Loader(absl::Time end) : end_(end) {}

  absl::StatusOr<DemoWorld> Load(std::string_view json);

 private:
  absl::Status Section(Fields& top, std::string_view key, Kind kind, bool required);
  absl::Status Resource(const rapidjson::Value& v, const std::string& path, Kind kind);
  absl::Status Common(Fields& f, Kind kind, DemoResource& r);
  absl::Status Specific(Fields& f, DemoResource& r);
  absl::Status Metrics(const rapidjson::Value& v, const std::string& path, DemoResource& r);
  absl::Status OneSeries(const rapidjson::Value& v, const std::string& path,
                         const std::string& metric, DemoResource& r);
  absl::StatusOr<std::string> Reference(Fields& f, std::string_view key,
                                        std::initializer_list<Kind> kinds);
  absl::Status Faults(Fields& top);
  void Relate(const std::string& from, const std::string& to, std::string kind) {
    world_.relationships.push_back({from, to, std::move(kind)});
  }

  absl::Time end_;
  DemoWorld world_;
};

absl::StatusOr<DemoWorld> Loader::Load(std::string_view json) {
  if (json.size() > kMaxDemoFileBytes) {
    return Bad("$", "the file is larger than 4 MiB");
  }
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json, {kMaxDemoFileBytes, 32});
  if (!doc.ok()) {
    return Bad("$", std::string(doc.status().message()));
  }
  absl::StatusOr<Fields> top = ObjectAt(*doc, "$");
  if (!top.ok()) {
    return top.status();
  }
  absl::StatusOr<std::optional<std::int64_t>> version = top->Int("schema_version", 1, 1);
  if (!version.ok()) {
    return version.status();
  }
  if (!version->has_value()) {
    return Bad("$.schema_version", "is required (1)");
  }
  for (std::string_view key : {"name", "description"}) {
    absl::StatusOr<std::string> text = top->String(key, false, 1024);
    if (!text.ok()) {
      return text.status();
    }
  }
  // Sections in dependency order: a reference always points to an earlier section.
  PULSE_RETURN_IF_ERROR(Section(*top, "nodes", Kind::kNode, true));
  PULSE_RETURN_IF_ERROR(Section(*top, "vms", Kind::kVm, false));
  PULSE_RETURN_IF_ERROR(Section(*top, "containers", Kind::kContainer, false));
  PULSE_RETURN_IF_ERROR(Section(*top, "storage", Kind::kStorage, false));
  PULSE_RETURN_IF_ERROR(Section(*top, "services", Kind::kService, false));
  PULSE_RETURN_IF_ERROR(Section(*top, "backup_jobs", Kind::kBackupJob, false));
  PULSE_RETURN_IF_ERROR(Faults(*top));
  PULSE_RETURN_IF_ERROR(top->Finish());
  return std::move(world_);
}

absl::Status Loader::Section(Fields& top, std::string_view key, Kind kind, bool required) {
  const std::string path = top.At(key);
  const rapidjson::Value* v = top.Get(key);
  if (v == nullptr) {
    return required ? Bad(path, "is required") : absl::OkStatus();
  }
  if (!v->IsArray() || (required && v->Empty())) {
    return Bad(path, required ? "must be a non-empty array" : "must be an array");
  }
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    if (world_.resources.size() == kMaxDemoResources) {
      return Bad(Index(path, i), "more than 1000 resources");
    }
    PULSE_RETURN_IF_ERROR(Resource((*v)[i], Index(path, i), kind));
  }
  return absl::OkStatus();
}

absl::Status Loader::Resource(const rapidjson::Value& v, const std::string& path, Kind kind) {
  absl::StatusOr<Fields> f = ObjectAt(v, path);
  if (!f.ok()) {
    return f.status();
  }
  DemoResource r;
  r.kind = kind;
  PULSE_RETURN_IF_ERROR(Common(*f, kind, r));
  PULSE_RETURN_IF_ERROR(Specific(*f, r));
  if (const rapidjson::Value* metrics = f->Get("metrics")) {
    PULSE_RETURN_IF_ERROR(Metrics(*metrics, f->At("metrics"), r));
  }
  PULSE_RETURN_IF_ERROR(f->Finish());
  r.started_at = end_ - kInitialUptime;
  if (kind == Kind::kBackupJob) {
    r.last_run_at = end_ - absl::Hours(6);
  }
  RecordUp(r, end_);
  const std::string id = r.base.id;
  world_.resources.emplace(id, std::move(r));
  return absl::OkStatus();
}

absl::Status Loader::Common(Fields& f, Kind kind, DemoResource& r) {
  absl::StatusOr<std::string> id = f.String("id", true);
  if (!id.ok()) {
    return id.status();
  }
  std::optional<core::CanonicalResourceId> parsed = core::ParseCanonicalResourceId(*id);
  if (!parsed.has_value() || parsed->type != KindType(kind)) {
    return Bad(f.At("id"), fmt::format("'{}' is not a canonical {} id ({}:<local id>)", *id,
                                       KindType(kind), KindType(kind)));
  }
  if (world_.resources.count(*id) != 0) {
    return Bad(f.At("id"), fmt::format("duplicate id '{}'", *id));
  }
  r.base.id = *id;
  r.base.type = std::string(KindType(kind));
  absl::StatusOr<std::string> name = f.String("name", false, 128);
  if (!name.ok()) {
    return name.status();
  }
  const std::size_t slash = parsed->local.rfind('/');
  r.base.name = !name->empty()               ? *name
                : slash == std::string::npos ? parsed->local
                                             : parsed->local.substr(slash + 1);
  absl::StatusOr<std::string> status = f.String("status", true, 32);
  if (!status.ok()) {
    return status.status();
  }
  static const std::map<Kind, std::vector<std::string>> kStatuses = {
      {Kind::kNode, {"online", "offline"}},
      {Kind::kVm, {"running", "stopped"}},
      {Kind::kContainer, {"running", "exited"}},
      {Kind::kStorage, {"available", "unavailable"}},
      {Kind::kBackupJob, {"ok", "failed"}},
      {Kind::kService, {"active", "inactive", "failed"}}};
  const std::vector<std::string>& allowed = kStatuses.at(kind);
  if (std::find(allowed.begin(), allowed.end(), *status) == allowed.end()) {
    std::string list;
    for (const std::string& s : allowed) {
      list += (list.empty() ? "" : ", ") + s;
    }
    return Bad(f.At("status"), fmt::format("'{}' is not one of {}", *status, list));
  }
  r.base.status = *status;
  absl::StatusOr<std::string> technology = f.String("technology", false, 64);
  if (!technology.ok()) {
    return technology.status();
  }
  static const std::map<Kind, std::string> kTechnology = {
      {Kind::kNode, "proxmox"},    {Kind::kVm, "proxmox"},       {Kind::kContainer, "docker"},
      {Kind::kStorage, "proxmox"}, {Kind::kBackupJob, "vzdump"}, {Kind::kService, "systemd"}};
  r.base.technology = technology->empty() ? kTechnology.at(kind) : *technology;

  if (const rapidjson::Value* attrs = f.Get("attributes")) {
    if (!attrs->IsObject()) {
      return Bad(f.At("attributes"), "must be an object of strings");
    }
    for (auto it = attrs->MemberBegin(); it != attrs->MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      if (!it->value.IsString() || key.empty() || !IsPrintable(key) ||
          !IsPrintable(it->value.GetString())) {
        return Bad(f.At("attributes"), "must be an object of printable strings");
      }
      r.base.attributes[key] = it->value.GetString();
    }
  }
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  if (const rapidjson::Value* config = f.Get("config")) {
    if (!config->IsObject()) {
      return Bad(f.At("config"), "must be an object");
    }
    WriteRedacted(*config, writer, &r.config_redacted);
  } else {
    writer.StartObject();
    for (const auto& [key, value] : r.base.attributes) {
      writer.Key(key.c_str());
      if (IsSecretKey(key)) {
        writer.String("***");
        r.config_redacted = true;
      } else {
        writer.String(value.c_str());
      }
    }
    writer.EndObject();
  }
  r.config_json = buffer.GetString();

  if (const rapidjson::Value* logs = f.Get("logs")) {
    if (!logs->IsArray() || logs->Size() > kDemoMaxStoredLogLines) {
      return Bad(f.At("logs"), "must be an array of at most 500 lines");
    }
    const std::size_t n = logs->Size();
    for (rapidjson::SizeType i = 0; i < n; ++i) {
      const rapidjson::Value& line = (*logs)[i];
      if (!line.IsString() || line.GetStringLength() > kMaxLogLineBytes ||
          !IsPrintable(line.GetString())) {
        return Bad(Index(f.At("logs"), i), "must be a printable string of at most 1024 bytes");
      }
      AppendLog(r, end_ - absl::Minutes(static_cast<double>(n - i)), line.GetString());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Loader::Reference(Fields& f, std::string_view key,
                                              std::initializer_list<Kind> kinds) {
  absl::StatusOr<std::string> ref = f.String(key, true);
  if (!ref.ok()) {
    return ref.status();
  }
  auto it = world_.resources.find(*ref);
  std::string expected;
  for (Kind k : kinds) {
    if (it != world_.resources.end() && it->second.kind == k) {
      return *ref;
    }
    expected += (expected.empty() ? "" : " or ") + std::string(KindType(k));
  }
  return Bad(f.At(key),
             fmt::format("'{}' is not a {} declared earlier in the file", *ref, expected));
}

absl::Status Loader::Specific(Fields& f, DemoResource& r) {
  const std::string local = r.base.id.substr(r.base.id.find(':') + 1);
  switch (r.kind) {
    case Kind::kNode:
      return absl::OkStatus();
    case Kind::kVm: {
      absl::StatusOr<std::optional<std::int64_t>> vmid = f.Int("vmid", 100, 999999999);
      if (!vmid.ok()) {
        return vmid.status();
      }
      if (!vmid->has_value()) {
        return Bad(f.At("vmid"), "is required");
      }
      if (local != std::to_string(**vmid)) {
        return Bad(f.At("id"), fmt::format("must be vm:{} to match the vmid", **vmid));
      }
      r.vmid = **vmid;
      absl::StatusOr<std::string> node = Reference(f, "node", {Kind::kNode});
      if (!node.ok()) {
        return node.status();
      }
      r.base.parent_id = *node;
      Relate(r.base.id, *node, "runs_on");
      return absl::OkStatus();
    }
    case Kind::kContainer: {
      absl::StatusOr<std::string> host = Reference(f, "host", {Kind::kNode, Kind::kVm});
      if (!host.ok()) {
        return host.status();
      }
      absl::StatusOr<std::string> image = f.String("image", true);
      if (!image.ok()) {
        return image.status();
      }
      r.image = *image;
      r.base.parent_id = *host;
      Relate(r.base.id, *host, "runs_on");
      return absl::OkStatus();
    }
    case Kind::kStorage:
    case Kind::kService: {
      absl::StatusOr<std::string> node = Reference(f, "node", {Kind::kNode});
      if (!node.ok()) {
        return node.status();
      }
      const std::string node_local = node->substr(node->find(':') + 1);
      if (local.rfind(node_local + "/", 0) != 0 || local.size() == node_local.size() + 1) {
        return Bad(f.At("id"), fmt::format("must be {}:{}/<name> to match its node",
                                           KindType(r.kind), node_local));
      }
      r.base.parent_id = *node;
      Relate(r.base.id, *node, r.kind == Kind::kService ? "runs_on" : "member_of");
      if (r.kind == Kind::kService) {
        absl::StatusOr<std::string> unit = f.String("unit", false, 128);
        if (!unit.ok()) {
          return unit.status();
        }
        r.unit = unit->empty() ? r.base.name + ".service" : *unit;
        if (r.unit.size() <= 8 || r.unit.substr(r.unit.size() - 8) != ".service" ||
            r.unit.find_first_of(" /") != std::string::npos) {
          return Bad(f.At("unit"), "must be a systemd unit name ending in .service");
        }
      }
      return absl::OkStatus();
    }
    case Kind::kBackupJob: {
      absl::StatusOr<std::string> storage = Reference(f, "storage", {Kind::kStorage});
      if (!storage.ok()) {
        return storage.status();
      }
      r.storage_id = *storage;
      Relate(r.base.id, *storage, "depends_on");
      absl::StatusOr<std::string> schedule = f.String("schedule", false, 64);
      if (!schedule.ok()) {
        return schedule.status();
      }
      r.schedule = schedule->empty() ? "daily" : *schedule;
      const rapidjson::Value* targets = f.Get("targets");
      if (targets == nullptr || !targets->IsArray() || targets->Empty()) {
        return Bad(f.At("targets"), "must be a non-empty array of vm or app-container ids");
      }
      for (rapidjson::SizeType i = 0; i < targets->Size(); ++i) {
        const rapidjson::Value& t = (*targets)[i];
        const std::string path = Index(f.At("targets"), i);
        if (!t.IsString()) {
          return Bad(path, "must be a string");
        }
        auto it = world_.resources.find(t.GetString());
        if (it == world_.resources.end() ||
            (it->second.kind != Kind::kVm && it->second.kind != Kind::kContainer)) {
          return Bad(path, fmt::format("'{}' is not a vm or app-container declared earlier",
                                       IsPrintable(t.GetString()) ? t.GetString() : "?"));
        }
        r.targets.push_back(t.GetString());
        Relate(r.base.id, t.GetString(), "backs_up");
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status Loader::Metrics(const rapidjson::Value& v, const std::string& path, DemoResource& r) {
  if (!v.IsObject()) {
    return Bad(path, "must be an object of metric series");
  }
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    const std::string metric(it->name.GetString(), it->name.GetStringLength());
    const bool well_formed = !metric.empty() && metric.size() <= 32 && metric[0] >= 'a' &&
                             metric[0] <= 'z' &&
                             std::all_of(metric.begin(), metric.end(), [](char c) {
                               return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                             });
    if (!well_formed) {
      return Bad(path, "metric names are [a-z][a-z0-9_]{0,31}");
    }
    if (metric == "up") {
      return Bad(fmt::format("{}.up", path), "is derived from the status and cannot be declared");
    }
    PULSE_RETURN_IF_ERROR(OneSeries(it->value, fmt::format("{}.{}", path, metric), metric, r));
  }
  return absl::OkStatus();
}

absl::Status Loader::OneSeries(const rapidjson::Value& v, const std::string& path,
                               const std::string& metric, DemoResource& r) {
  absl::StatusOr<Fields> f = ObjectAt(v, path);
  if (!f.ok()) {
    return f.status();
  }
  Series series;
  absl::StatusOr<std::string> unit = f->String("unit", false, 32);
  if (!unit.ok()) {
    return unit.status();
  }
  series.unit = unit->empty() ? "percent" : *unit;
  const rapidjson::Value* generator = f->Get("generator");
  const rapidjson::Value* values = f->Get("values");
  if ((generator == nullptr) == (values == nullptr)) {
    return Bad(path, "needs exactly one of generator and values");
  }
  std::vector<double> samples;
  absl::Duration interval = absl::Hours(1);
  if (values != nullptr) {
    if (!values->IsArray() || values->Empty() || values->Size() > kDemoMaxSeriesPoints) {
      return Bad(f->At("values"), "must be an array of 1..5000 numbers");
    }
    for (rapidjson::SizeType i = 0; i < values->Size(); ++i) {
      if (!(*values)[i].IsNumber() || !std::isfinite((*values)[i].GetDouble())) {
        return Bad(Index(f->At("values"), i), "must be a finite number");
      }
      samples.push_back((*values)[i].GetDouble());
    }
  } else {
    absl::StatusOr<Fields> g = ObjectAt(*generator, f->At("generator"));
    if (!g.ok()) {
      return g.status();
    }
    absl::StatusOr<std::optional<double>> start = g->Number("start");
    absl::StatusOr<std::optional<double>> slope = g->Number("slope_per_day");
    absl::StatusOr<std::optional<double>> noise = g->Number("noise");
    absl::StatusOr<std::optional<double>> min = g->Number("min");
    absl::StatusOr<std::optional<double>> max = g->Number("max");
    absl::StatusOr<std::optional<std::int64_t>> count =
        g->Int("samples", 1, static_cast<std::int64_t>(kDemoMaxSeriesPoints));
    absl::StatusOr<std::optional<std::int64_t>> minutes = g->Int("interval_minutes", 1, 1440);
    for (const absl::Status& s : {start.status(), slope.status(), noise.status(), min.status(),
                                  max.status(), count.status(), minutes.status()}) {
      PULSE_RETURN_IF_ERROR(s);
    }
    if (!start->has_value() || !count->has_value()) {
      return Bad(g->path(), "needs start and samples");
    }
    const double lo = min->value_or(0);
    const double hi = max->value_or(100);
    if (noise->value_or(0) < 0 || !(lo < hi)) {
      return Bad(g->path(), "needs noise >= 0 and min < max");
    }
    PULSE_RETURN_IF_ERROR(g->Finish());
    interval = absl::Minutes(static_cast<double>(minutes->value_or(60)));
    const std::uint64_t seed = SeedOf(r.base.id + "#" + metric);
    const double per_sample_days = absl::ToDoubleHours(interval) / 24.0;
    for (std::int64_t i = 0; i < **count; ++i) {
      const double value = **start + slope->value_or(0) * per_sample_days * static_cast<double>(i) +
                           noise->value_or(0) * Noise(seed, static_cast<std::uint64_t>(i));
      samples.push_back(std::clamp(value, lo, hi));
    }
  }
  PULSE_RETURN_IF_ERROR(f->Finish());
  const std::size_t n = samples.size();
  for (std::size_t i = 0; i < n; ++i) {
    series.points.push_back({end_ - interval * static_cast<double>(n - 1 - i), samples[i]});
  }
  series.baseline = samples.back();
  r.metrics[metric] = std::move(series);
  return absl::OkStatus();
}

absl::Status Loader::Faults(Fields& top) {
  const std::string path = top.At("faults");
  const rapidjson::Value* v = top.Get("faults");
  if (v == nullptr) {
    return absl::OkStatus();
  }
  if (!v->IsArray()) {
    return Bad(path, "must be an array");
  }
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    absl::StatusOr<Fields> f = ObjectAt((*v)[i], Index(path, i));
    if (!f.ok()) {
      return f.status();
    }
    absl::StatusOr<std::string> resource = f->String("resource", true);
    absl::StatusOr<std::string> kind_text = f->String("kind", true, 32);
    PULSE_RETURN_IF_ERROR(resource.status());
    PULSE_RETURN_IF_ERROR(kind_text.status());
    bool persistent = false;
    if (const rapidjson::Value* p = f->Get("persistent")) {
      if (!p->IsBool()) {
        return Bad(f->At("persistent"), "must be a boolean");
      }
      persistent = p->GetBool();
    }
    PULSE_RETURN_IF_ERROR(f->Finish());
    auto it = world_.resources.find(*resource);
    if (it == world_.resources.end()) {
      return Bad(f->At("resource"), fmt::format("unknown resource '{}'", *resource));
    }
    std::optional<DemoFaultKind> kind = ParseDemoFaultKind(*kind_text);
    if (!kind.has_value()) {
      return Bad(f->At("kind"),
                 fmt::format("unknown fault kind '{}' ({})", *kind_text, DemoFaultKindNames()));
    }
    if (absl::Status s = CheckFaultApplies(it->second, *kind); !s.ok()) {
      return Bad(f->At("kind"), std::string(s.message()));
    }
    if (it->second.faults.count(*kind) != 0) {
      return Bad(Index(path, i), "duplicate fault");
    }
    ApplyFault(it->second, DemoFault{*resource, *kind, persistent, end_}, end_);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DemoWorld> LoadDemoWorld(std::string_view json, absl::Time history_end) {
  Loader loader(history_end);
  return loader.Load(json);
}

}  // namespace pulse::adapters::agents::internal
