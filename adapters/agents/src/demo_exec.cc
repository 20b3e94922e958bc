// Answers accepted read-only commands from the demo fleet's simulated state, in roughly the
// shape the real tools print, so an investigation on the demo reads like one on a real host.
// Only commands core::ClassifyExecCommand accepted reach this file.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "demo_model.h"
#include "fmt/format.h"
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::adapters::agents::internal {
namespace {

using Argv = std::vector<std::string>;

struct Ctx {
  const DemoWorld& world;
  const DemoResource& host;
  absl::Time now;
};

core::ExecOutput Out(std::string text, int exit_code = 0) {
  core::ExecOutput out;
  out.exit_code = exit_code;
  out.output = std::move(text);
  return out;
}

bool HasFlag(const Argv& argv, std::string_view flag) {
  return std::find(argv.begin(), argv.end(), flag) != argv.end();
}

// The value of -n N / -nN / --lines=N / --lines N; nullopt when absent.
std::optional<std::int64_t> LineCount(const Argv& argv) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    std::string_view a = argv[i];
    std::string_view value;
    if ((a == "-n" || a == "--lines" || a == "--tail") && i + 1 < argv.size()) {
      value = argv[i + 1];
    } else if (a.rfind("--lines=", 0) == 0) {
      value = a.substr(8);
    } else if (a.rfind("-n", 0) == 0 && a.size() > 2) {
      value = a.substr(2);
    } else {
      continue;
    }
    if (!value.empty() && value.front() == '+') {
      value.remove_prefix(1);
    }
    std::int64_t n = 0;
    for (const char c : value) {
      if (c < '0' || c > '9') {
        return std::nullopt;
      }
      n = n * 10 + (c - '0');
    }
    return n;
  }
  return std::nullopt;
}

// Operands that are not options or option values (approximate, for simulation only).
std::vector<std::string> Operands(const Argv& argv,
                                  std::initializer_list<std::string_view> valued) {
  std::vector<std::string> out;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (std::find(valued.begin(), valued.end(), a) != valued.end()) {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') {
      continue;
    }
    out.push_back(a);
  }
  return out;
}

double Latest(const DemoResource& r, const std::string& metric, double fallback) {
  auto it = r.metrics.find(metric);
  return it == r.metrics.end() || it->second.points.empty() ? fallback
                                                            : it->second.points.back().value;
}

std::int64_t Attr(const DemoResource& r, const std::string& key, std::int64_t fallback) {
  auto it = r.base.attributes.find(key);
  if (it == r.base.attributes.end()) {
    return fallback;
  }
  std::int64_t n = 0;
  for (const char c : it->second) {
    if (c < '0' || c > '9') {
      return fallback;
    }
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string AttrText(const DemoResource& r, const std::string& key, const std::string& fallback) {
  auto it = r.base.attributes.find(key);
  return it == r.base.attributes.end() ? fallback : it->second;
}

std::string ShortTime(absl::Time at) {
  return absl::FormatTime("%b %d %H:%M:%S", at, absl::UTCTimeZone());
}

// Resources of `kind` whose parent is `parent_id`.
std::vector<const DemoResource*> Children(const DemoWorld& world, const std::string& parent_id,
                                          Kind kind) {
  std::vector<const DemoResource*> out;
  for (const auto& [id, r] : world.resources) {
    if (r.kind == kind && r.base.parent_id == parent_id) {
      out.push_back(&r);
    }
  }
  return out;
}

// The units visible from `host` (only nodes run the demo's systemd units).
const DemoResource* FindUnit(const Ctx& c, std::string_view name) {
  for (const DemoResource* s : Children(c.world, c.host.base.id, Kind::kService)) {
    if (s->unit == name || s->base.name == name) {
      return s;
    }
  }
  return nullptr;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) {
    out += l;
    out += '\n';
  }
  return out;
}

std::vector<std::string> Tail(std::vector<std::string> lines, std::optional<std::int64_t> n) {
  if (n.has_value() && static_cast<std::size_t>(*n) < lines.size()) {
    lines.erase(lines.begin(), lines.end() - *n);
  }
  return lines;
}

// Journal lines of one resource ("Mon DD HH:MM:SS host ident: text").
std::vector<std::string> JournalOf(const Ctx& c, const DemoResource& r) {
  std::vector<std::string> out;
  const std::string ident = r.kind == Kind::kService ? r.unit : r.base.name;
  for (const TimedLine& line : r.logs) {
    out.push_back(
        fmt::format("{} {} {}: {}", ShortTime(line.at), c.host.base.name, ident, line.text));
  }
  return out;
}

// The host's own log merged with its units' logs, oldest first (what /var/log/syslog shows).
std::vector<std::string> Syslog(const Ctx& c) {
  std::vector<std::pair<absl::Time, std::string>> merged;
  auto add = [&](const DemoResource& r) {
    const std::string ident = r.kind == Kind::kService ? r.unit : r.base.name;
    for (const TimedLine& line : r.logs) {
      merged.emplace_back(line.at, fmt::format("{} {} {}: {}", ShortTime(line.at), c.host.base.name,
                                               ident, line.text));
    }
  };
  add(c.host);
  for (const DemoResource* s : Children(c.world, c.host.base.id, Kind::kService)) {
    add(*s);
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  out.reserve(merged.size());
  for (auto& [at, text] : merged) {
    out.push_back(std::move(text));
  }
  return out;
}

std::string ServiceStatusBlock(const Ctx& c, const DemoResource& s) {
  const std::string status = EffectiveStatus(s);
  const std::string sub =
      status == "active" ? "running"
      : status == "failed"
          ? (s.faults.count(DemoFaultKind::kCrashLoop) != 0 ? "auto-restart" : "failed")
      : status == "inactive" ? "dead"
                             : status;
  std::string text = fmt::format(
      "{} {} - {}\n     Loaded: loaded (/lib/systemd/system/{}; enabled; preset: enabled)\n"
      "     Active: {} ({})",
      status == "active" ? "●" : "×", s.unit, s.base.name, s.unit, status, sub);
  if (status == "active") {
    text += fmt::format(" since {} UTC", absl::FormatTime("%a %Y-%m-%d %H:%M:%S", s.started_at,
                                                          absl::UTCTimeZone()));
  }
  text += "\n";
  for (const std::string& line : Tail(JournalOf(c, s), 5)) {
    text += line + "\n";
  }
  return text;
}

core::ExecOutput Systemctl(const Ctx& c, const Argv& argv) {
  const std::vector<std::string> ops = Operands(argv, {"-t", "--type", "--state", "-n", "--lines",
                                                       "-p", "--property", "-P", "-o", "--output"});
  const std::string verb = ops.empty() ? "list-units" : ops[0];
  std::vector<const DemoResource*> units;
  bool missing = false;
  std::string missing_name;
  for (std::size_t i = 1; i < ops.size(); ++i) {
    if (const DemoResource* s = FindUnit(c, ops[i])) {
      units.push_back(s);
    } else {
      missing = true;
      missing_name = ops[i];
    }
  }
  if (verb == "list-units" || verb == "list-unit-files" || verb == "list-timers" ||
      verb == "list-sockets") {
    std::string text = "UNIT                     LOAD   ACTIVE   SUB     DESCRIPTION\n";
    int n = 0;
    for (const DemoResource* s : Children(c.world, c.host.base.id, Kind::kService)) {
      const std::string status = EffectiveStatus(*s);
      if (HasFlag(argv, "--failed") && status != "failed") {
        continue;
      }
      text += fmt::format("{:<24} loaded {:<8} {:<7} {}\n", s->unit, status,
                          status == "active" ? "running" : "dead", s->base.name);
      ++n;
    }
    return Out(text + fmt::format("\n{} loaded units listed.\n", n));
  }
  if (units.empty() && !missing && verb == "status") {
    bool degraded = false;
    for (const DemoResource* s : Children(c.world, c.host.base.id, Kind::kService)) {
      degraded = degraded || EffectiveStatus(*s) == "failed";
    }
    return Out(
        fmt::format("● {}\n    State: {}\n", c.host.base.name, degraded ? "degraded" : "running"));
  }
  if (missing) {
    return Out(fmt::format("Unit {} could not be found.\n", missing_name), 4);
  }
  std::string text;
  int exit_code = 0;
  for (const DemoResource* s : units) {
    const std::string status = EffectiveStatus(*s);
    if (verb == "status") {
      text += ServiceStatusBlock(c, *s);
      exit_code = status == "active" ? exit_code : 3;
    } else if (verb == "is-active") {
      text += status + "\n";
      exit_code = status == "active" ? exit_code : 3;
    } else if (verb == "is-failed") {
      text += status + "\n";
      exit_code = status == "failed" ? exit_code : 1;
    } else if (verb == "is-enabled") {
      text += "enabled\n";
    } else if (verb == "show") {
      text += fmt::format("Id={}\nActiveState={}\nSubState={}\nNRestarts={}\n", s->unit, status,
                          status == "active" ? "running" : "dead", s->restart_count);
    }
  }
  return Out(text, exit_code);
}

core::ExecOutput Df(const Ctx& c, const Argv& argv) {
  const bool human = HasFlag(argv, "-h") || HasFlag(argv, "-H") || HasFlag(argv, "-hT");
  std::string text = human ? "Filesystem        Size  Used Avail Use% Mounted on\n"
                           : "Filesystem     1K-blocks      Used Available Use% Mounted on\n";
  auto row = [&](const std::string& fs, double size_gb, double pct, const std::string& mount) {
    const double used = size_gb * pct / 100.0;
    if (human) {
      text += fmt::format("{:<16} {:>4.0f}G {:>4.0f}G {:>4.0f}G {:>3.0f}% {}\n", fs, size_gb, used,
                          size_gb - used, pct, mount);
    } else {
      const auto kb = [](double gb) { return static_cast<std::int64_t>(gb * 1048576.0); };
      text += fmt::format("{:<14} {:>10} {:>9} {:>9} {:>3.0f}% {}\n", fs, kb(size_gb), kb(used),
                          kb(size_gb - used), pct, mount);
    }
  };
  row("/dev/root", 64, Latest(c.host, "disk", 38.0), "/");
  if (c.host.kind == Kind::kNode) {
    for (const DemoResource* s : Children(c.world, c.host.base.id, Kind::kStorage)) {
      row(s->base.name, static_cast<double>(Attr(*s, "size_gb", 1000)), Latest(*s, "usage", 0),
          "/mnt/pve/" + s->base.name);
    }
  }
  return Out(text);
}

core::ExecOutput Free(const Ctx& c, const Argv& argv) {
  const std::int64_t total_mb =
      Attr(c.host, "memory_mb", c.host.kind == Kind::kContainer ? 2048 : 8192);
  const std::int64_t used_mb = static_cast<std::int64_t>(static_cast<double>(total_mb) *
                                                         Latest(c.host, "memory", 50) / 100.0);
  const bool human = HasFlag(argv, "-h") || HasFlag(argv, "--human");
  const bool mebi = HasFlag(argv, "-m") || HasFlag(argv, "--mebi");
  auto fmt_mb = [&](std::int64_t mb) {
    return human  ? fmt::format("{:.1f}Gi", static_cast<double>(mb) / 1024.0)
           : mebi ? std::to_string(mb)
                  : std::to_string(mb * 1024);
  };
  return Out(fmt::format(
      "               total        used        free      shared  buff/cache   available\n"
      "Mem:    {:>12} {:>11} {:>11} {:>11} {:>11} {:>11}\n"
      "Swap:   {:>12} {:>11} {:>11}\n",
      fmt_mb(total_mb), fmt_mb(used_mb), fmt_mb(total_mb - used_mb), fmt_mb(0), fmt_mb(0),
      fmt_mb(total_mb - used_mb), fmt_mb(0), fmt_mb(0), fmt_mb(0)));
}

std::string LoadAverage(const Ctx& c) {
  const double cpus = static_cast<double>(Attr(c.host, "cpus", Attr(c.host, "cores", 4)));
  const double load = cpus * Latest(c.host, "cpu", 10) / 100.0;
  return fmt::format("{:.2f} {:.2f} {:.2f}", load, load * 0.95, load * 0.9);
}

core::ExecOutput Uptime(const Ctx& c) {
  const std::int64_t minutes =
      std::max<std::int64_t>(0, absl::ToInt64Minutes(c.now - c.host.started_at));
  return Out(fmt::format(" {} up {} days, {:2}:{:02},  0 users,  load average: {}\n",
                         absl::FormatTime("%H:%M:%S", c.now, absl::UTCTimeZone()), minutes / 1440,
                         (minutes % 1440) / 60, minutes % 60, [&] {
                           std::string l = LoadAverage(c);
                           std::replace(l.begin(), l.end(), ' ', ',');
                           return l;
                         }()));
}

std::string Kernel(const Ctx& c) {
  return AttrText(c.host, "kernel", c.host.kind == Kind::kNode ? "6.8.12-4-pve" : "6.1.0-28-amd64");
}

// The VM whose Proxmox config file `path` is (/etc/pve/qemu-server/<vmid>.conf), when `c.host`
// is the node it runs on; nullptr otherwise.
const DemoResource* GuestConfigFile(const Ctx& c, std::string_view path) {
  constexpr std::string_view kDir = "/etc/pve/qemu-server/";
  constexpr std::string_view kSuffix = ".conf";
  if (c.host.kind != Kind::kNode || path.size() <= kDir.size() + kSuffix.size() ||
      path.substr(0, kDir.size()) != kDir || path.substr(path.size() - kSuffix.size()) != kSuffix) {
    return nullptr;
  }
  const std::string_view vmid =
      path.substr(kDir.size(), path.size() - kDir.size() - kSuffix.size());
  for (const DemoResource* vm : Children(c.world, c.host.base.id, Kind::kVm)) {
    if (std::to_string(vm->vmid) == vmid) {
      return vm;
    }
  }
  return nullptr;
}

core::ExecOutput ReadFile(const Ctx& c, const Argv& argv) {
  const std::vector<std::string> paths = Operands(argv, {"-n", "-c", "--lines", "--bytes"});
  std::vector<std::string> lines;
  for (const std::string& path : paths) {
    if (path == "/etc/hostname") {
      lines.push_back(c.host.base.name);
    } else if (path == "/etc/os-release") {
      lines.push_back(fmt::format("PRETTY_NAME=\"{}\"",
                                  AttrText(c.host, "os", "Debian GNU/Linux 12 (bookworm)")));
      lines.push_back("ID=debian");
    } else if (path == "/proc/loadavg") {
      lines.push_back(LoadAverage(c) + " 1/312 4242");
    } else if (path == "/proc/meminfo") {
      const std::int64_t total_kb = Attr(c.host, "memory_mb", 8192) * 1024;
      const auto free_kb = static_cast<std::int64_t>(
          static_cast<double>(total_kb) * (100.0 - Latest(c.host, "memory", 50)) / 100.0);
      lines.push_back(fmt::format("MemTotal:       {:>10} kB", total_kb));
      lines.push_back(fmt::format("MemFree:        {:>10} kB", free_kb));
      lines.push_back(fmt::format("MemAvailable:   {:>10} kB", free_kb));
    } else if (path == "/var/log/syslog" || path == "/var/log/messages") {
      for (std::string& l : Syslog(c)) {
        lines.push_back(std::move(l));
      }
    } else if (const DemoResource* vm = GuestConfigFile(c, path)) {
      std::string_view config = vm->config_json;
      while (!config.empty()) {
        const std::size_t end = std::min(config.find('\n'), config.size());
        lines.emplace_back(config.substr(0, end));
        config.remove_prefix(std::min(end + 1, config.size()));
      }
    } else {
      return Out(fmt::format("{}: {}: No such file or directory\n", argv[0], path), 1);
    }
  }
  if (argv[0] == "head") {
    const std::size_t n = static_cast<std::size_t>(LineCount(argv).value_or(10));
    if (n < lines.size()) {
      lines.resize(n);
    }
  } else if (argv[0] == "tail") {
    lines = Tail(std::move(lines), LineCount(argv).value_or(10));
  } else if (argv[0] == "wc") {
    return Out(fmt::format("{} {}\n", lines.size(), paths.empty() ? "" : paths[0]));
  }
  return Out(Join(lines));
}

core::ExecOutput Journalctl(const Ctx& c, const Argv& argv) {
  std::vector<std::string> lines;
  std::string unit;
  for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-u" || argv[i] == "--unit") {
      unit = argv[i + 1];
    }
  }
  for (const std::string& a : argv) {
    if (a.rfind("--unit=", 0) == 0) {
      unit = a.substr(7);
    }
  }
  if (!unit.empty()) {
    const DemoResource* s = FindUnit(c, unit);
    if (s == nullptr) {
      return Out("-- No entries --\n");
    }
    lines = JournalOf(c, *s);
  } else {
    lines = Syslog(c);
  }
  lines = Tail(std::move(lines), LineCount(argv).value_or(200));
  if (HasFlag(argv, "-r") || HasFlag(argv, "--reverse")) {
    std::reverse(lines.begin(), lines.end());
  }
  return Out(Join(lines));
}

core::ExecOutput Ps(const Ctx& c) {
  std::string text = "  PID USER     %CPU %MEM COMMAND\n";
  int pid = 1;
  auto row = [&](std::string_view user, double cpu, double mem, const std::string& command) {
    text += fmt::format("{:>5} {:<8} {:>4.1f} {:>4.1f} {}\n", pid, user, cpu, mem, command);
    pid += 97;
  };
  if (c.host.kind == Kind::kContainer) {
    row("root", Latest(c.host, "cpu", 1), Latest(c.host, "memory", 5), c.host.image);
    return Out(text);
  }
  row("root", 0.0, 0.1, "/sbin/init");
  for (const DemoResource* s : Children(c.world, c.host.base.id, Kind::kService)) {
    if (EffectiveStatus(*s) == "active") {
      row("root", 0.3, 0.4, "/usr/sbin/" + s->base.name);
    }
  }
  for (const DemoResource* vm : Children(c.world, c.host.base.id, Kind::kVm)) {
    if (EffectiveStatus(*vm) == "running") {
      row("root", Latest(*vm, "cpu", 5), Latest(*vm, "memory", 5) / 8,
          fmt::format("/usr/bin/kvm -id {} -name {}", vm->vmid, vm->base.name));
    }
  }
  for (const DemoResource* ct : Children(c.world, c.host.base.id, Kind::kContainer)) {
    if (EffectiveStatus(*ct) == "running") {
      row("root", Latest(*ct, "cpu", 1), Latest(*ct, "memory", 5) / 4,
          "containerd-shim -namespace moby -id " + ct->base.name);
    }
  }
  return Out(text);
}

core::ExecOutput Docker(const Ctx& c, const Argv& argv) {
  const std::vector<const DemoResource*> containers =
      Children(c.world, c.host.base.id, Kind::kContainer);
  if (argv[1] == "ps") {
    std::string text = "CONTAINER ID   IMAGE                          STATUS       NAMES\n";
    for (const DemoResource* ct : containers) {
      const std::string status = EffectiveStatus(*ct);
      if (status != "running" && !HasFlag(argv, "-a") && !HasFlag(argv, "--all")) {
        continue;
      }
      text += fmt::format("{:012x}   {:<30} {:<12} {}\n",
                          std::hash<std::string>{}(ct->base.id) & 0xffffffffffffULL, ct->image,
                          status == "running" ? "Up" : "Exited (1)", ct->base.name);
    }
    return Out(text);
  }
  if (argv[1] == "logs" || argv[1] == "top") {
    const std::string& name = argv.back();
    for (const DemoResource* ct : containers) {
      if (ct->base.name == name) {
        if (argv[1] == "top") {
          return Out(fmt::format("UID   PID    CMD\nroot  4242   {}\n", ct->image));
        }
        std::vector<std::string> lines;
        for (const TimedLine& l : ct->logs) {
          lines.push_back(l.text);
        }
        return Out(Join(Tail(std::move(lines), LineCount(argv))));
      }
    }
    return Out(fmt::format("Error response from daemon: No such container: {}\n", name), 1);
  }
  return Out(fmt::format("(demo fleet: `docker {}` has no simulated output)\n", argv[1]));
}

core::ExecOutput Qm(const Ctx& c, const Argv& argv) {
  if (c.host.kind != Kind::kNode) {
    return Out("qm: command not found on this guest\n", 127);
  }
  const std::vector<const DemoResource*> vms = Children(c.world, c.host.base.id, Kind::kVm);
  if (argv[1] == "list") {
    std::string text = "      VMID NAME                 STATUS     MEM(MB)\n";
    for (const DemoResource* vm : vms) {
      text += fmt::format("{:>10} {:<20} {:<10} {:>7}\n", vm->vmid, vm->base.name,
                          EffectiveStatus(*vm), Attr(*vm, "memory_mb", 8192));
    }
    return Out(text);
  }
  for (const DemoResource* vm : vms) {
    if (std::to_string(vm->vmid) == argv[2]) {
      return argv[1] == "status" ? Out(fmt::format("status: {}\n", EffectiveStatus(*vm)))
                                 : Out(vm->config_json + "\n");
    }
  }
  return Out(fmt::format("Configuration file 'nodes/{}/qemu-server/{}.conf' does not exist\n",
                         c.host.base.name, argv[2]),
             2);
}

core::ExecOutput Pvesm(const Ctx& c) {
  std::string text = "Name             Type     Status           Total            Used   %\n";
  for (const DemoResource* s : Children(c.world, c.host.base.id, Kind::kStorage)) {
    const double size_kb = static_cast<double>(Attr(*s, "size_gb", 1000)) * 1048576.0;
    const double pct = Latest(*s, "usage", 0);
    text += fmt::format("{:<16} {:<8} {:<9} {:>15.0f} {:>15.0f} {:.2f}%\n", s->base.name,
                        AttrText(*s, "type", "dir"),
                        EffectiveStatus(*s) == "available" ? "active" : "inactive", size_kb,
                        size_kb * pct / 100.0, pct);
  }
  return Out(text);
}

// Drops a `timeout [--preserve-status] [-k D] DURATION` wrapper the classifier accepted.
Argv Unwrap(const Argv& argv) {
  if (argv.empty() || argv[0] != "timeout") {
    return argv;
  }
  std::size_t i = 1;
  while (i < argv.size() && argv[i].rfind('-', 0) == 0) {
    i += (argv[i] == "-k" || argv[i] == "--kill-after") ? 2 : 1;
  }
  return Argv(argv.begin() + static_cast<std::ptrdiff_t>(std::min(i + 1, argv.size())), argv.end());
}

}  // namespace

core::ExecOutput SimulateCommand(const DemoWorld& world, const DemoResource& host,
                                 const std::vector<std::string>& raw_argv, absl::Time now) {
  const Argv argv = Unwrap(raw_argv);
  if (argv.empty()) {
    return Out("", 0);
  }
  const Ctx c{world, host, now};
  const std::string& p = argv[0];
  if (p == "hostname") {
    return Out(host.base.name + "\n");
  }
  if (p == "whoami") {
    return Out("root\n");
  }
  if (p == "id") {
    return Out("uid=0(root) gid=0(root) groups=0(root)\n");
  }
  if (p == "date") {
    return Out(absl::FormatTime("%a %b %e %H:%M:%S UTC %Y\n", now, absl::UTCTimeZone()));
  }
  if (p == "uname") {
    if (HasFlag(argv, "-a") || HasFlag(argv, "--all")) {
      return Out(fmt::format("Linux {} {} #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n",
                             host.base.name, Kernel(c)));
    }
    return Out(HasFlag(argv, "-r") ? Kernel(c) + "\n" : "Linux\n");
  }
  if (p == "uptime") {
    return Uptime(c);
  }
  if (p == "free") {
    return Free(c, argv);
  }
  if (p == "df") {
    return Df(c, argv);
  }
  if (p == "cat" || p == "head" || p == "tail" || p == "wc") {
    return ReadFile(c, argv);
  }
  if (p == "systemctl") {
    return Systemctl(c, argv);
  }
  if (p == "journalctl") {
    return Journalctl(c, argv);
  }
  if (p == "ps") {
    return Ps(c);
  }
  if (p == "docker") {
    return Docker(c, argv);
  }
  if (p == "qm") {
    return Qm(c, argv);
  }
  if (p == "pvesm") {
    return Pvesm(c);
  }
  if (p == "ip") {
    return Out(fmt::format(
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536\n    inet 127.0.0.1/8 scope host lo\n"
        "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500\n    inet {}/24 scope global eth0\n",
        AttrText(host, "ip", "10.0.9.9")));
  }
  // Health probes (the classifier admitted only their bounded forms): the simulated network
  // answers every probe.
  if (p == "curl") {
    const bool status_only = HasFlag(argv, "-w") || HasFlag(argv, "--write-out");
    return Out(status_only ? "200" : "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n");
  }
  if (p == "wget") {
    return Out(
        "Spider mode enabled. Check if remote file exists.\nHTTP request sent, awaiting "
        "response... 200 OK\nRemote file exists.\n");
  }
  if (p == "ping") {
    const std::string& target = argv.back();
    return Out(fmt::format(
        "PING {0} ({0}) 56(84) bytes of data.\n64 bytes from {0}: icmp_seq=1 ttl=64 time=0.4 ms\n"
        "\n--- {0} ping statistics ---\n1 packets transmitted, 1 received, 0% packet loss\n",
        target));
  }
  return Out(
      fmt::format("(demo fleet: `{}` is accepted as read-only but has no simulated "
                  "output)\n",
                  p));
}

}  // namespace pulse::adapters::agents::internal
