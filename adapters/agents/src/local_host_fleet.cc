#include "pulse/adapters/agents/local_host_fleet.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <utility>

#include "absl/time/clock.h"
#include "fleet_queries.h"
#include "fmt/format.h"
#include "local_host_internal.h"
#include "local_probes.h"
#include "process_runner.h"
#include "pulse/core/status_macros.h"

namespace pulse::adapters::agents {
namespace {

using internal::FsUsage;
using internal::MountEntry;
using internal::UnitInfo;

class RealClock final : public core::Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

constexpr std::size_t kMaxSamplesPerSeries = 2048;
// systemctl is a process spawn per call: its unit list is reused this long (a dispatch resets it).
constexpr absl::Duration kUnitListingTtl = absl::Seconds(2);
constexpr std::size_t kMaxUnitListingBytes = 8 << 20;

// [A-Za-z0-9._-] kept, anything else '-'; "localhost" when nothing is left.
std::string SanitizeLocal(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    out.push_back(keep ? c : '-');
  }
  return out.empty() ? "localhost" : out.substr(0, 64);
}

// "/" -> rootfs, "/var/lib/docker" -> var/lib/docker (each component sanitized).
std::string MountKey(const std::string& mountpoint) {
  if (mountpoint == "/") {
    return "rootfs";
  }
  std::string out;
  std::size_t start = 1;
  while (start <= mountpoint.size()) {
    std::size_t end = mountpoint.find('/', start);
    if (end == std::string::npos) {
      end = mountpoint.size();
    }
    if (end > start) {
      out += (out.empty() ? "" : "/") + SanitizeLocal(mountpoint.substr(start, end - start));
    }
    start = end + 1;
  }
  return out.empty() ? "rootfs" : out;
}

bool SystemdRunning() {
  struct stat st {};
  return stat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

// A host name the node id carries unchanged (SanitizeLocal keeps it whole): a letter or digit,
// then letters, digits, '.', '_' or '-', at most 64 bytes. The agent protocol's host names
// (docs/agent.md) all pass.
bool IsHostName(std::string_view name) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  return !name.empty() && name.size() <= 64 && alnum(name[0]) &&
         std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

std::string UnitName(std::string_view name) {
  const std::string_view suffix = ".service";
  if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
    return std::string(name);
  }
  return std::string(name) + std::string(suffix);
}

bool IsPlainUnitName(std::string_view name) {
  return !name.empty() && name.size() <= 128 && name[0] != '-' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-' || c == '@' || c == ':';
         });
}

std::string ServiceStatus(const UnitInfo& u) {
  return u.active.empty() ? "unknown" : u.active;  // active, inactive, failed, activating, ...
}

core::Capability Capability(std::string name, core::AutoAuthorization auto_class,
                            core::ActionRisk risk) {
  core::Capability c;
  c.description = fmt::format("systemctl {} the unit on this host.", name);
  c.name = std::move(name);
  c.minimum_approval = core::ApprovalLevel::kAdmin;
  c.auto_authorization = auto_class;
  c.risk = risk;
  return c;
}

}  // namespace

LocalHostFleet::LocalHostFleet(LocalHostFleetOptions options,
                               std::unique_ptr<core::Clock> owned_clock, std::string host_name)
    : options_(std::move(options)),
      owned_clock_(std::move(owned_clock)),
      clock_(options_.clock != nullptr ? *options_.clock : *owned_clock_),
      host_name_(std::move(host_name)),
      node_id_("node:" + SanitizeLocal(host_name_)) {}

LocalHostFleet::~LocalHostFleet() = default;

absl::StatusOr<std::unique_ptr<LocalHostFleet>> LocalHostFleet::Open(
    LocalHostFleetOptions options) {
  for (std::string& unit : options.action_allowlist) {
    if (!IsPlainUnitName(unit)) {
      return absl::InvalidArgumentError(fmt::format("'{}' is not a plain systemd unit name", unit));
    }
    unit = UnitName(unit);
  }
  if (!options.host_name.empty() && !IsHostName(options.host_name)) {
    return absl::InvalidArgumentError(
        "host_name must be a letter or digit, then letters, digits, '.', '_' or '-' (at most 64 "
        "bytes)");
  }
  if (!options.systemctl_path.empty() &&
      (options.systemctl_path[0] != '/' || access(options.systemctl_path.c_str(), X_OK) != 0)) {
    return absl::InvalidArgumentError(
        fmt::format("systemctl_path '{}' is not an absolute path to an executable file",
                    options.systemctl_path));
  }
  std::unique_ptr<core::Clock> owned;
  if (options.clock == nullptr) {
    owned = std::make_unique<RealClock>();
  }
  std::array<char, HOST_NAME_MAX + 1> name{};
  std::string host = gethostname(name.data(), name.size()) == 0 ? name.data() : "localhost";
  if (!options.host_name.empty()) {
    host = options.host_name;
  }
  std::unique_ptr<LocalHostFleet> fleet(
      new LocalHostFleet(std::move(options), std::move(owned), std::move(host)));
  PULSE_RETURN_IF_ERROR(fleet->Probe().status());
  return fleet;
}

absl::Time LocalHostFleet::Now() const { return clock_.Now(); }

absl::StatusOr<internal::ProcessResult> LocalHostFleet::RunSystemctl(std::vector<std::string> args,
                                                                     absl::Duration timeout,
                                                                     std::size_t max_output) const {
  if (options_.systemctl_path.empty()) {
    args.insert(args.begin(), "systemctl");
    return internal::RunInstalledProgram(args, timeout, max_output);
  }
  args.insert(args.begin(), options_.systemctl_path);
  return internal::RunProcess(args, timeout, max_output);
}

bool LocalHostFleet::UnitsAvailable() const {
  return !options_.systemctl_path.empty() || SystemdRunning();
}

std::string LocalHostFleet::UnitListing() {
  const absl::Time now = Now();
  {
    absl::MutexLock lock(&mu_);
    if (now - unit_listing_at_ < kUnitListingTtl) {
      return unit_listing_;
    }
  }
  absl::StatusOr<internal::ProcessResult> listed =
      RunSystemctl({"list-units", "--type=service", "--all", "--output=json", "--no-pager"},
                   options_.command_timeout, kMaxUnitListingBytes);
  std::string listing;
  if (listed.ok() && listed->exit_code == 0 && !listed->truncated) {
    listing = std::move(listed->output);
  }
  absl::MutexLock lock(&mu_);
  unit_listing_ = listing;
  unit_listing_at_ = now;
  return listing;
}

absl::StatusOr<LocalHostFleet::Snapshot> LocalHostFleet::Probe() {
  Snapshot s;
  PULSE_ASSIGN_OR_RETURN(std::string stat_text, internal::ReadTextFile("/proc/stat", 1 << 16));
  PULSE_ASSIGN_OR_RETURN(std::string mem_text, internal::ReadTextFile("/proc/meminfo", 1 << 16));
  const std::optional<internal::CpuTimes> cpu = internal::ParseProcStat(stat_text);
  const std::optional<internal::MemInfo> mem = internal::ParseMeminfo(mem_text);
  if (!cpu.has_value() || !mem.has_value()) {
    return absl::UnavailableError("/proc/stat or /proc/meminfo is not in the Linux format");
  }
  s.memory = *mem;
  if (absl::StatusOr<std::string> text = internal::ReadTextFile("/proc/loadavg", 4096); text.ok()) {
    s.load = internal::ParseLoadavg(*text);
  }
  if (absl::StatusOr<std::string> text = internal::ReadTextFile("/proc/uptime", 4096); text.ok()) {
    s.uptime_seconds = std::atoll(text->c_str());
  }

  core::FleetResource node;
  node.id = node_id_;
  node.type = "node";
  node.name = host_name_;
  node.status = "online";
  node.technology = "linux";
  node.attributes["cpus"] = std::to_string(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  node.attributes["memory_mb"] = std::to_string(mem->total_kb / 1024);
  if (absl::StatusOr<std::string> os = internal::ReadTextFile("/etc/os-release", 1 << 14);
      os.ok()) {
    for (const std::string& line : internal::SplitLines(*os)) {
      if (line.rfind("PRETTY_NAME=", 0) == 0) {
        std::string value = line.substr(12);
        value.erase(std::remove(value.begin(), value.end(), '"'), value.end());
        node.attributes["os"] = value;
      }
    }
  }
  if (absl::StatusOr<std::string> kernel =
          internal::ReadTextFile("/proc/sys/kernel/osrelease", 256);
      kernel.ok()) {
    node.attributes["kernel"] =
        internal::SplitLines(*kernel).empty() ? "" : internal::SplitLines(*kernel)[0];
  }
  s.resources.emplace(node.id, node);

  const std::string local = node_id_.substr(5);
  std::vector<MountEntry> mount_entries;
  if (absl::StatusOr<std::string> mounts = internal::ReadTextFile("/proc/mounts", 1 << 20);
      mounts.ok()) {
    mount_entries = internal::ParseMounts(*mounts);
  }
  // The root filesystem always exists, even where /proc/mounts does not list "/" (a chroot,
  // some sandboxes): fall back to statvfs("/") with an unknown device and type.
  if (std::none_of(mount_entries.begin(), mount_entries.end(),
                   [](const MountEntry& m) { return m.mountpoint == "/"; })) {
    mount_entries.insert(mount_entries.begin(), MountEntry{"rootfs", "/", "unknown", ""});
  }
  {
    for (const MountEntry& m : mount_entries) {
      struct stat st {};
      if (stat(m.mountpoint.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        continue;  // bind-mounted files (/etc/hosts in a container) are not filesystems here
      }
      const std::string id = fmt::format("storage:{}/{}", local, MountKey(m.mountpoint));
      if (s.resources.count(id) != 0) {
        continue;
      }
      core::FleetResource r;
      r.id = id;
      r.type = "storage";
      r.name = m.mountpoint;
      r.technology = m.fstype;
      r.parent_id = node_id_;
      r.attributes = {{"mountpoint", m.mountpoint}, {"device", m.device}, {"fstype", m.fstype}};
      absl::StatusOr<FsUsage> usage = internal::StatFs(m.mountpoint);
      r.status = usage.ok() ? "available" : "unavailable";
      if (usage.ok()) {
        r.attributes["size_bytes"] = std::to_string(usage->size_bytes);
        s.usage[id] = *usage;
      }
      s.mounts[id] = m;
      s.resources.emplace(id, std::move(r));
      s.relationships.push_back({id, node_id_, "member_of"});
    }
  }

  s.systemd = SystemdRunning();
  if (UnitsAvailable()) {
    const std::string listing = UnitListing();
    if (!listing.empty()) {
      if (absl::StatusOr<std::vector<UnitInfo>> units = internal::ParseSystemctlUnits(listing);
          units.ok()) {
        for (UnitInfo& u : *units) {
          const std::string base = u.unit.substr(0, u.unit.size() - 8);
          const std::string id = fmt::format("service:{}/{}", local, SanitizeLocal(base));
          core::FleetResource r;
          r.id = id;
          r.type = "service";
          r.name = base;
          r.status = ServiceStatus(u);
          r.technology = "systemd";
          r.parent_id = node_id_;
          r.revision = u.sub;
          r.attributes = {{"unit", u.unit}, {"description", u.description}};
          s.resources.emplace(id, std::move(r));
          s.relationships.push_back({id, node_id_, "runs_on"});
          s.units.emplace(id, std::move(u));
        }
      }
    }
  }

  // CPU since the previous probe, and the metric samples.
  const absl::Time now = Now();
  absl::MutexLock lock(&mu_);
  std::optional<internal::CpuTimes> before;
  if (last_cpu_.has_value()) {
    before = internal::CpuTimes{last_cpu_->first, last_cpu_->second};
  }
  if (!last_cpu_.has_value() || cpu->total != last_cpu_->first) {
    last_cpu_pct_ = internal::CpuBusyPct(before, *cpu);
    last_cpu_ = std::make_pair(cpu->total, cpu->idle);
  }
  s.cpu_pct = last_cpu_pct_;
  if (now - last_sample_at_ >= options_.sample_interval) {
    last_sample_at_ = now;
    auto record = [&](const std::string& id, const std::string& metric, double value)
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
                        std::deque<core::FleetMetricPoint>& series = samples_[id + "#" + metric];
                        series.push_back({now, value});
                        while (series.size() > kMaxSamplesPerSeries) {
                          series.pop_front();
                        }
                      };
    record(node_id_, "cpu", s.cpu_pct);
    record(node_id_, "memory",
           100.0 * (1.0 - static_cast<double>(s.memory.available_kb) /
                              static_cast<double>(s.memory.total_kb)));
    if (s.load.has_value()) {
      record(node_id_, "load", s.load->one);
    }
    for (const auto& [id, usage] : s.usage) {
      record(id, "usage", usage.used_pct);
    }
  }
  return s;
}

std::vector<core::Capability> LocalHostFleet::CatalogueFor(const Snapshot& snapshot,
                                                           std::string_view id) const {
  auto unit = snapshot.units.find(std::string(id));
  if (!options_.allow_local_actions || unit == snapshot.units.end() ||
      std::find(options_.action_allowlist.begin(), options_.action_allowlist.end(),
                unit->second.unit) == options_.action_allowlist.end()) {
    return {};
  }
  const std::string status = ServiceStatus(unit->second);
  if (status == "active") {
    return {Capability("restart", core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow),
            Capability("stop", core::AutoAuthorization::kElevated, core::ActionRisk::kMedium)};
  }
  if (status == "inactive" || status == "failed") {
    return {Capability("start", core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow),
            Capability("restart", core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow)};
  }
  return {};  // activating, deactivating, reloading: wait for it to settle
}

// ---- reads ------------------------------------------------------------------------------

absl::StatusOr<std::vector<core::FleetResource>> LocalHostFleet::ListResources(
    const core::FleetResourceQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateResourceQuery(query));
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  std::vector<core::FleetResource> out;
  for (auto& [id, r] : s.resources) {
    if (internal::MatchesQuery(r, query)) {
      out.push_back(std::move(r));
      if (out.size() == query.limit) {
        break;
      }
    }
  }
  return out;
}

absl::StatusOr<core::FleetResource> LocalHostFleet::GetResource(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  auto it = s.resources.find(std::string(id));
  if (it == s.resources.end()) {
    return absl::NotFoundError(fmt::format("no resource with id '{}'", id));
  }
  return it->second;
}

absl::StatusOr<core::FleetTopology> LocalHostFleet::GetTopology(
    const core::FleetTopologyQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateTopologyQuery(query));
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  if (!query.root_id.empty() && s.resources.count(query.root_id) == 0) {
    return absl::NotFoundError(fmt::format("no resource with id '{}'", query.root_id));
  }
  return internal::BuildTopology(s.resources, s.relationships, query);
}

std::vector<LocalProcess> LocalHostFleet::TopProcesses(std::size_t n) {
  std::vector<internal::ProcessInfo> all = internal::ListProcesses("/proc");
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.cpu_seconds != b.cpu_seconds ? a.cpu_seconds > b.cpu_seconds
                                          : a.rss_bytes > b.rss_bytes;
  });
  std::vector<LocalProcess> out;
  for (std::size_t i = 0; i < all.size() && i < n; ++i) {
    out.push_back({all[i].pid, all[i].command, all[i].cpu_seconds, all[i].rss_bytes});
  }
  return out;
}

absl::StatusOr<core::FleetStatus> LocalHostFleet::GetStatus(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  auto it = s.resources.find(std::string(id));
  if (it == s.resources.end()) {
    return absl::NotFoundError(fmt::format("no resource with id '{}'", id));
  }
  core::FleetStatus status;
  status.resource_id = it->first;
  status.status = it->second.status;
  status.observed_at = Now();
  std::map<std::string, std::string>& f = status.facts;
  if (it->second.type == "node") {
    const double mem_pct = 100.0 * (1.0 - static_cast<double>(s.memory.available_kb) /
                                              static_cast<double>(s.memory.total_kb));
    f["cpu_pct"] = fmt::format("{:.1f}", s.cpu_pct);
    f["memory_pct"] = fmt::format("{:.1f}", mem_pct);
    f["memory_total_mb"] = std::to_string(s.memory.total_kb / 1024);
    f["uptime_seconds"] = std::to_string(s.uptime_seconds);
    f["systemd"] = s.systemd ? "running" : "unavailable";
    if (s.load.has_value()) {
      f["load1"] = fmt::format("{:.2f}", s.load->one);
      f["load5"] = fmt::format("{:.2f}", s.load->five);
      f["load15"] = fmt::format("{:.2f}", s.load->fifteen);
    }
    std::vector<internal::ProcessInfo> procs = internal::ListProcesses("/proc");
    f["process_count"] = std::to_string(procs.size());
    auto top = [&](auto better) {
      std::sort(procs.begin(), procs.end(), better);
      std::string text;
      for (std::size_t i = 0; i < procs.size() && i < 5; ++i) {
        text += fmt::format("{}{}[{}] cpu {:.1f}s rss {}MiB", text.empty() ? "" : "; ",
                            procs[i].command, procs[i].pid, procs[i].cpu_seconds,
                            procs[i].rss_bytes >> 20);
      }
      return text;
    };
    f["top_cpu"] = top([](const auto& a, const auto& b) { return a.cpu_seconds > b.cpu_seconds; });
    f["top_memory"] = top([](const auto& a, const auto& b) { return a.rss_bytes > b.rss_bytes; });
    status.summary =
        fmt::format("{} is online: cpu {:.1f}%, memory {:.1f}%{}", host_name_, s.cpu_pct, mem_pct,
                    s.load.has_value() ? fmt::format(", load {:.2f}", s.load->one) : std::string());
  } else if (it->second.type == "storage") {
    auto usage = s.usage.find(it->first);
    if (usage != s.usage.end()) {
      f["usage_pct"] = fmt::format("{:.1f}", usage->second.used_pct);
      f["size_bytes"] = std::to_string(usage->second.size_bytes);
      f["available_bytes"] = std::to_string(usage->second.available_bytes);
    }
    f["mountpoint"] = it->second.name;
    status.summary = usage != s.usage.end() ? fmt::format("{} is {:.1f}% used", it->second.name,
                                                          usage->second.used_pct)
                                            : fmt::format("{} cannot be measured", it->second.name);
  } else {
    const UnitInfo& u = s.units.at(it->first);
    f["unit"] = u.unit;
    f["sub_state"] = u.sub;
    status.summary = fmt::format("{} is {} ({})", u.unit, u.active, u.sub);
  }
  return status;
}

absl::StatusOr<core::FleetLogExcerpt> LocalHostFleet::ReadLogs(std::string_view id,
                                                               const core::FleetLogQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateLogQuery(query));
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  auto it = s.resources.find(std::string(id));
  if (it == s.resources.end()) {
    return absl::NotFoundError(fmt::format("no resource with id '{}'", id));
  }
  if (it->second.type == "storage") {
    return absl::NotFoundError(fmt::format("{} has no log", id));
  }
  std::vector<std::string> lines;
  bool found = false;
  const bool is_node = it->second.type == "node";
  if (is_node && (query.source.empty() || query.source == "syslog")) {
    for (const char* path : {"/var/log/syslog", "/var/log/messages"}) {
      absl::StatusOr<std::vector<std::string>> tail =
          internal::ReadLastLines(path, query.max_lines + 1, query.max_bytes);
      if (tail.ok()) {
        lines = std::move(*tail);
        found = true;
        break;
      }
    }
  }
  if (!found && s.systemd) {
    std::vector<std::string> argv = {
        "journalctl", "--no-pager", "-o", "short-iso", "-n", std::to_string(query.max_lines + 1)};
    if (!is_node) {
      argv.insert(argv.end(), {"-u", s.units.at(it->first).unit});
    } else if (!query.source.empty()) {
      argv.insert(argv.end(), {"-u", UnitName(query.source)});
    }
    absl::StatusOr<internal::ProcessResult> run =
        internal::RunInstalledProgram(argv, options_.command_timeout);
    if (run.ok() && run->exit_code == 0) {
      lines = internal::SplitLines(run->output);
      found = true;
    }
  }
  if (!found) {
    return absl::FailedPreconditionError(
        "no log is readable on this host (no /var/log/syslog or /var/log/messages, and no "
        "journal)");
  }
  core::FleetLogExcerpt out;
  std::size_t bytes = 0;
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    if (out.lines.size() == query.max_lines || bytes + line->size() > query.max_bytes) {
      out.truncated = true;
      break;
    }
    bytes += line->size();
    out.lines.push_back(*line);
  }
  std::reverse(out.lines.begin(), out.lines.end());
  return out;
}

absl::StatusOr<core::FleetConfig> LocalHostFleet::ReadConfig(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  auto it = s.resources.find(std::string(id));
  if (it == s.resources.end()) {
    return absl::NotFoundError(fmt::format("no resource with id '{}'", id));
  }
  core::FleetConfig config;
  if (it->second.type == "service") {
    absl::StatusOr<internal::ProcessResult> run =
        RunSystemctl({"cat", "--no-pager", s.units.at(it->first).unit}, options_.command_timeout);
    if (!run.ok() || run->exit_code != 0) {
      return absl::UnavailableError(fmt::format("systemctl cat failed for {}", id));
    }
    config.format = "ini";
    for (std::string& line : internal::SplitLines(run->output)) {
      if (line.rfind("Environment=", 0) == 0 || line.rfind("EnvironmentFile=", 0) == 0) {
        line = line.substr(0, line.find('=') + 1) + "***";
        config.redacted = true;
      }
      config.content += line + "\n";
    }
  } else {
    config.format = "json";
    std::string body;
    for (const auto& [key, value] : it->second.attributes) {
      body += fmt::format("{}  \"{}\": \"{}\"", body.empty() ? "" : ",\n", key, value);
    }
    config.content = "{\n" + body + "\n}\n";
  }
  if (config.content.size() > core::kFleetMaxConfigBytes) {
    config.content.resize(core::kFleetMaxConfigBytes);
    config.truncated = true;
  }
  return config;
}

absl::StatusOr<core::FleetMetricSeries> LocalHostFleet::ReadMetricHistory(
    std::string_view id, const core::FleetMetricQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateMetricQuery(query));
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  if (s.resources.count(std::string(id)) == 0) {
    return absl::NotFoundError(fmt::format("no resource with id '{}'", id));
  }
  absl::MutexLock lock(&mu_);
  auto it = samples_.find(std::string(id) + "#" + query.metric);
  if (it == samples_.end()) {
    return absl::NotFoundError(fmt::format("{} records no metric '{}'", id, query.metric));
  }
  core::FleetMetricSeries out;
  out.resource_id = std::string(id);
  out.metric = query.metric;
  out.unit = query.metric == "load" ? "load" : "percent";
  out.points = internal::SelectPoints({it->second.begin(), it->second.end()}, query);
  return out;
}

absl::StatusOr<std::vector<core::Capability>> LocalHostFleet::ListCapabilities(
    std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  if (s.resources.count(std::string(id)) == 0) {
    return absl::NotFoundError(fmt::format("no resource with id '{}'", id));
  }
  return CatalogueFor(s, id);
}

}  // namespace pulse::adapters::agents
