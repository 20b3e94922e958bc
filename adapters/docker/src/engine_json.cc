#include <charconv>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pulse/adapters/docker/engine_types.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/string_view.h"

namespace pulse::docker {
namespace {

// Engine answers are small; a list of many containers is the largest (about 2 KiB each).
core::JsonLimits AnswerLimits() {
  core::JsonLimits limits;
  limits.max_bytes = std::size_t{16} << 20;
  limits.max_depth = 32;
  return limits;
}

// Reads members of one object, remembering the first problem. A missing optional member is
// fine; a member of the wrong type never is.
class Fields {
 public:
  Fields(const rapidjson::Value& object, std::string_view where, absl::Status* error)
      : object_(object), where_(where), error_(error) {}

  std::string Str(std::string_view key, bool required = false) {
    const rapidjson::Value* v = Find(key, required);
    if (v == nullptr || v->IsNull()) {
      return "";
    }
    if (!v->IsString()) {
      return Fail(key, "a string"), "";
    }
    return std::string(core::StringViewOf(*v));
  }
  bool Bool(std::string_view key) {
    const rapidjson::Value* v = Find(key, false);
    if (v == nullptr || v->IsNull()) {
      return false;
    }
    if (!v->IsBool()) {
      return Fail(key, "a boolean"), false;
    }
    return v->GetBool();
  }
  std::int64_t Int(std::string_view key, bool required = false) {
    const rapidjson::Value* v = Find(key, required);
    if (v == nullptr || v->IsNull()) {
      return 0;
    }
    if (!v->IsInt64()) {
      return Fail(key, "an integer"), 0;
    }
    return v->GetInt64();
  }
  std::uint64_t Uint(std::string_view key) {
    const rapidjson::Value* v = Find(key, false);
    if (v == nullptr || v->IsNull()) {
      return 0;
    }
    if (!v->IsUint64()) {
      return Fail(key, "a non-negative integer"), 0;
    }
    return v->GetUint64();
  }
  // An object member (nullptr when absent or null).
  const rapidjson::Value* Object(std::string_view key, bool required = false) {
    const rapidjson::Value* v = Find(key, required);
    if (v == nullptr || v->IsNull()) {
      return nullptr;
    }
    if (!v->IsObject()) {
      return Fail(key, "an object"), nullptr;
    }
    return v;
  }
  const rapidjson::Value* Array(std::string_view key) {
    const rapidjson::Value* v = Find(key, false);
    if (v == nullptr || v->IsNull()) {
      return nullptr;
    }
    if (!v->IsArray()) {
      return Fail(key, "an array"), nullptr;
    }
    return v;
  }
  // An RFC 3339 member; nullopt when absent, empty or Go's zero time (year 1).
  std::optional<absl::Time> Time(std::string_view key) {
    const std::string text = Str(key);
    if (text.empty() || text.rfind("0001-01-01T", 0) == 0) {
      return std::nullopt;
    }
    auto time = core::ParseRfc3339(text);
    if (!time.has_value()) {
      Fail(key, "an RFC 3339 time");
    }
    return time;
  }
  Labels StringMap(std::string_view key) {
    Labels out;
    const rapidjson::Value* v = Object(key);
    if (v == nullptr) {
      return out;
    }
    for (const auto& m : v->GetObject()) {
      if (!m.value.IsString()) {
        Fail(key, "an object of strings");
        return {};
      }
      out.emplace(core::StringViewOf(m.name), core::StringViewOf(m.value));
    }
    return out;
  }

 private:
  const rapidjson::Value* Find(std::string_view key, bool required) {
    const rapidjson::Value* v = core::GetMember(object_, key);
    if (v == nullptr && required) {
      Fail(key, "present");
    }
    return v;
  }
  void Fail(std::string_view key, std::string_view should) {
    if (error_->ok()) {
      *error_ = absl::DataLossError(
          absl::StrCat("the Docker Engine answered malformed JSON: ", core::ToAbsl(where_), ".",
                       core::ToAbsl(key), " should be ", core::ToAbsl(should)));
    }
  }

  const rapidjson::Value& object_;
  std::string_view where_;
  absl::Status* error_;
};

absl::StatusOr<rapidjson::Document> ParseAnswer(std::string_view body, std::string_view what,
                                                bool want_object) {
  auto doc = core::ParseJson(body, AnswerLimits());
  if (!doc.ok()) {
    return absl::DataLossError(absl::StrCat("the Docker Engine's ", core::ToAbsl(what),
                                            " answer is not valid JSON: ", doc.status().message()));
  }
  if (want_object ? !doc->IsObject() : !doc->IsArray()) {
    return absl::DataLossError(absl::StrCat("the Docker Engine's ", core::ToAbsl(what),
                                            " answer is not a JSON ",
                                            want_object ? "object" : "array"));
  }
  return doc;
}

std::string StripSlash(std::string name) {
  if (!name.empty() && name.front() == '/') {
    name.erase(0, 1);
  }
  return name;
}

}  // namespace

std::string ApiVersion::ToString() const { return absl::StrCat(major, ".", minor); }

absl::StatusOr<ApiVersion> ParseApiVersion(std::string_view text) {
  const std::size_t dot = text.find('.');
  ApiVersion v;
  if (dot == std::string_view::npos || text.size() > 16 ||
      !absl::SimpleAtoi(core::ToAbsl(text.substr(0, dot)), &v.major) ||
      !absl::SimpleAtoi(core::ToAbsl(text.substr(dot + 1)), &v.minor) || v.major < 0 ||
      v.minor < 0 || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return absl::InvalidArgumentError("an Engine API version is two numbers, as in 1.41");
  }
  return v;
}

absl::StatusOr<EngineVersion> ParseVersionJson(std::string_view body) {
  auto doc = ParseAnswer(body, "/version", true);
  if (!doc.ok()) {
    return doc.status();
  }
  absl::Status error;
  Fields f(*doc, "version", &error);
  EngineVersion out;
  out.version = f.Str("Version", true);
  const std::string api = f.Str("ApiVersion", true);
  const std::string min_api = f.Str("MinAPIVersion");
  out.os = f.Str("Os");
  out.arch = f.Str("Arch");
  out.kernel = f.Str("KernelVersion");
  if (!error.ok()) {
    return error;
  }
  auto parsed = ParseApiVersion(api);
  auto parsed_min =
      min_api.empty() ? absl::StatusOr<ApiVersion>(ApiVersion{1, 12}) : ParseApiVersion(min_api);
  if (!parsed.ok() || !parsed_min.ok()) {
    return absl::DataLossError("the Docker Engine's /version answer has a malformed ApiVersion");
  }
  out.api = *parsed;
  out.min_api = *parsed_min;
  return out;
}

absl::StatusOr<EngineInfo> ParseInfoJson(std::string_view body) {
  auto doc = ParseAnswer(body, "/info", true);
  if (!doc.ok()) {
    return doc.status();
  }
  absl::Status error;
  Fields f(*doc, "info", &error);
  EngineInfo out;
  out.name = f.Str("Name", true);
  out.operating_system = f.Str("OperatingSystem");
  out.server_version = f.Str("ServerVersion");
  out.cpus = f.Int("NCPU");
  out.memory_bytes = f.Int("MemTotal");
  if (!error.ok()) {
    return error;
  }
  return out;
}

absl::StatusOr<std::vector<ContainerSummary>> ParseContainerListJson(std::string_view body) {
  auto doc = ParseAnswer(body, "container list", false);
  if (!doc.ok()) {
    return doc.status();
  }
  std::vector<ContainerSummary> out;
  absl::Status error;
  for (const auto& item : doc->GetArray()) {
    if (!item.IsObject()) {
      return absl::DataLossError("the Docker Engine's container list holds a non-object");
    }
    Fields f(item, "containers[]", &error);
    ContainerSummary c;
    c.id = f.Str("Id", true);
    if (const rapidjson::Value* names = f.Array("Names"); names != nullptr && !names->Empty()) {
      if (!(*names)[0].IsString()) {
        return absl::DataLossError("the Docker Engine's container list has a non-string name");
      }
      c.name = StripSlash(std::string(core::StringViewOf((*names)[0])));
    }
    c.image = f.Str("Image");
    c.image_id = f.Str("ImageID");
    c.state = f.Str("State");
    c.status = f.Str("Status");
    c.created = absl::FromUnixSeconds(f.Int("Created"));
    c.labels = f.StringMap("Labels");
    if (!error.ok()) {
      return error;
    }
    out.push_back(std::move(c));
  }
  return out;
}

absl::StatusOr<ContainerDetails> ParseContainerJson(std::string_view body) {
  auto doc = ParseAnswer(body, "container inspect", true);
  if (!doc.ok()) {
    return doc.status();
  }
  absl::Status error;
  Fields f(*doc, "container", &error);
  ContainerDetails c;
  c.id = f.Str("Id", true);
  c.name = StripSlash(f.Str("Name"));
  c.image_id = f.Str("Image");
  c.restart_count = f.Int("RestartCount");
  c.created = f.Time("Created").value_or(absl::InfinitePast());
  if (const rapidjson::Value* state = f.Object("State", true); state != nullptr) {
    Fields s(*state, "State", &error);
    c.state = s.Str("Status", true);
    c.running = s.Bool("Running");
    c.restarting = s.Bool("Restarting");
    c.oom_killed = s.Bool("OOMKilled");
    c.exit_code = s.Int("ExitCode");
    c.pid = s.Int("Pid");
    c.started_at = s.Time("StartedAt");
    c.finished_at = s.Time("FinishedAt");
    if (const rapidjson::Value* health = s.Object("Health"); health != nullptr) {
      c.health = Fields(*health, "State.Health", &error).Str("Status");
    }
  }
  if (const rapidjson::Value* config = f.Object("Config"); config != nullptr) {
    Fields cf(*config, "Config", &error);
    c.image = cf.Str("Image");
    c.tty = cf.Bool("Tty");
    c.labels = cf.StringMap("Labels");
  }
  if (const rapidjson::Value* host = f.Object("HostConfig"); host != nullptr) {
    Fields h(*host, "HostConfig", &error);
    c.memory_limit = h.Int("Memory");
    if (const rapidjson::Value* policy = h.Object("RestartPolicy"); policy != nullptr) {
      c.restart_policy = Fields(*policy, "HostConfig.RestartPolicy", &error).Str("Name");
    }
  }
  if (!error.ok()) {
    return error;
  }
  return c;
}

absl::StatusOr<ContainerStats> ParseStatsJson(std::string_view body) {
  auto doc = ParseAnswer(body, "stats", true);
  if (!doc.ok()) {
    return doc.status();
  }
  absl::Status error;
  Fields f(*doc, "stats", &error);
  ContainerStats s;
  s.read = f.Time("read").value_or(absl::InfinitePast());
  // CPU: cpu_delta / system_cpu_delta * online CPUs * 100, against the previous sample.
  std::uint64_t total = 0, pre_total = 0, system = 0, pre_system = 0;
  std::int64_t percpu = 0;
  if (const rapidjson::Value* cpu = f.Object("cpu_stats"); cpu != nullptr) {
    Fields c(*cpu, "cpu_stats", &error);
    system = c.Uint("system_cpu_usage");
    s.online_cpus = c.Int("online_cpus");
    if (const rapidjson::Value* usage = c.Object("cpu_usage"); usage != nullptr) {
      Fields u(*usage, "cpu_stats.cpu_usage", &error);
      total = u.Uint("total_usage");
      if (const rapidjson::Value* list = u.Array("percpu_usage"); list != nullptr) {
        percpu = static_cast<std::int64_t>(list->Size());
      }
    }
  }
  if (const rapidjson::Value* cpu = f.Object("precpu_stats"); cpu != nullptr) {
    Fields c(*cpu, "precpu_stats", &error);
    pre_system = c.Uint("system_cpu_usage");
    if (const rapidjson::Value* usage = c.Object("cpu_usage"); usage != nullptr) {
      pre_total = Fields(*usage, "precpu_stats.cpu_usage", &error).Uint("total_usage");
    }
  }
  if (s.online_cpus <= 0) {
    s.online_cpus = percpu;
  }
  if (pre_system != 0 && system > pre_system && total >= pre_total && s.online_cpus > 0) {
    s.cpu_percent = static_cast<double>(total - pre_total) /
                    static_cast<double>(system - pre_system) * static_cast<double>(s.online_cpus) *
                    100.0;
  }
  // Memory: usage minus inactive file pages (cgroup v1: total_inactive_file; v2:
  // inactive_file), as the Engine API documents used memory.
  if (const rapidjson::Value* mem = f.Object("memory_stats"); mem != nullptr) {
    Fields m(*mem, "memory_stats", &error);
    const std::uint64_t usage = m.Uint("usage");
    s.memory_limit = m.Uint("limit");
    std::uint64_t cache = 0;
    if (const rapidjson::Value* detail = m.Object("stats"); detail != nullptr) {
      Fields d(*detail, "memory_stats.stats", &error);
      cache = core::GetMember(*detail, "total_inactive_file") != nullptr
                  ? d.Uint("total_inactive_file")
                  : d.Uint("inactive_file");
    }
    s.memory_used = cache < usage ? usage - cache : usage;
    if (s.memory_limit > 0) {
      s.memory_percent =
          static_cast<double>(s.memory_used) / static_cast<double>(s.memory_limit) * 100.0;
    }
  }
  if (const rapidjson::Value* nets = f.Object("networks"); nets != nullptr) {
    for (const auto& n : nets->GetObject()) {
      if (!n.value.IsObject()) {
        return absl::DataLossError(
            "the Docker Engine answered malformed JSON: stats.networks should hold objects");
      }
      Fields nf(n.value, "stats.networks", &error);
      s.net_rx_bytes += nf.Uint("rx_bytes");
      s.net_tx_bytes += nf.Uint("tx_bytes");
    }
  }
  if (const rapidjson::Value* blkio = f.Object("blkio_stats"); blkio != nullptr) {
    Fields b(*blkio, "blkio_stats", &error);
    if (const rapidjson::Value* list = b.Array("io_service_bytes_recursive"); list != nullptr) {
      for (const auto& entry : list->GetArray()) {
        if (!entry.IsObject()) {
          return absl::DataLossError(
              "the Docker Engine answered malformed JSON: blkio entries should be objects");
        }
        Fields e(entry, "blkio_stats.io_service_bytes_recursive[]", &error);
        const std::string op = e.Str("op");
        const std::uint64_t value = e.Uint("value");
        if (op == "Read" || op == "read") {
          s.block_read_bytes += value;
        } else if (op == "Write" || op == "write") {
          s.block_write_bytes += value;
        }
      }
    }
  }
  if (const rapidjson::Value* pids = f.Object("pids_stats"); pids != nullptr) {
    s.pids = Fields(*pids, "pids_stats", &error).Uint("current");
  }
  if (!error.ok()) {
    return error;
  }
  return s;
}

absl::StatusOr<EngineEvent> ParseEventJson(std::string_view line) {
  auto doc = ParseAnswer(line, "event", true);
  if (!doc.ok()) {
    return doc.status();
  }
  absl::Status error;
  Fields f(*doc, "event", &error);
  EngineEvent e;
  e.type = f.Str("Type", true);
  e.action = f.Str("Action", true);
  if (const rapidjson::Value* actor = f.Object("Actor"); actor != nullptr) {
    Fields a(*actor, "event.Actor", &error);
    e.actor_id = a.Str("ID");
    e.attributes = a.StringMap("Attributes");
  }
  const std::int64_t nanos = f.Int("timeNano");
  e.time = nanos != 0 ? absl::FromUnixNanos(nanos) : absl::FromUnixSeconds(f.Int("time"));
  if (!error.ok()) {
    return error;
  }
  return e;
}

std::string ParseErrorMessage(std::string_view body) {
  core::JsonLimits limits;
  limits.max_bytes = 64 * 1024;
  limits.max_depth = 8;
  auto doc = core::ParseJson(body, limits);
  if (!doc.ok() || !doc->IsObject()) {
    return "";
  }
  auto message = core::GetString(*doc, "message");
  if (!message.has_value()) {
    return "";
  }
  return std::string(message->substr(0, 512));
}

}  // namespace pulse::docker
