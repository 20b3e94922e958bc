#include "local_probes.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "pulse/core/json/json.h"

namespace pulse::adapters::agents::internal {
namespace {

std::vector<std::string_view> SplitWords(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
      ++i;
    }
    if (i > start) {
      out.push_back(line.substr(start, i - start));
    }
  }
  return out;
}

template <typename T>
std::optional<T> ToNumber(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    return std::nullopt;
  }
  return value;
}

std::optional<double> ToDouble(std::string_view text) {
  // The d+.d+ form /proc/loadavg prints; locale-independent, unlike strtod.
  const std::size_t dot = text.find('.');
  const std::optional<std::uint64_t> whole = ToNumber<std::uint64_t>(text.substr(0, dot));
  if (!whole.has_value()) {
    return std::nullopt;
  }
  double value = static_cast<double>(*whole);
  if (dot != std::string_view::npos) {
    double scale = 0.1;
    for (const char c : text.substr(dot + 1)) {
      if (c < '0' || c > '9') {
        return std::nullopt;
      }
      value += (c - '0') * scale;
      scale /= 10;
    }
  }
  return value;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string DecodeMountField(std::string_view field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string_view oct = field.substr(i + 1, 3);
      if (oct.size() == 3 &&
          std::all_of(oct.begin(), oct.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out.push_back(static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

bool IsPseudoFs(std::string_view type) {
  static constexpr std::array<std::string_view, 27> kPseudo = {
      "proc",       "sysfs",           "devtmpfs",   "devpts",
      "tmpfs",      "cgroup",          "cgroup2",    "securityfs",
      "pstore",     "debugfs",         "tracefs",    "mqueue",
      "hugetlbfs",  "configfs",        "fusectl",    "bpf",
      "autofs",     "binfmt_misc",     "rpc_pipefs", "nsfs",
      "squashfs",   "ramfs",           "efivarfs",   "selinuxfs",
      "fuse.lxcfs", "fuse.gvfsd-fuse", "fuse.portal"};
  return std::find(kPseudo.begin(), kPseudo.end(), type) != kPseudo.end();
}

bool UnderPseudoTree(std::string_view mountpoint) {
  for (std::string_view root : {"/proc", "/sys", "/dev", "/run"}) {
    if (mountpoint == root ||
        (mountpoint.size() > root.size() && mountpoint.substr(0, root.size()) == root &&
         mountpoint[root.size()] == '/')) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<CpuTimes> ParseProcStat(std::string_view text) {
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> w = SplitWords(line);
    if (w.empty() || w[0] != "cpu") {
      continue;
    }
    CpuTimes t;
    for (std::size_t i = 1; i < w.size() && i <= 8; ++i) {  // user..steal; guest is in user
      const std::optional<std::uint64_t> v = ToNumber<std::uint64_t>(w[i]);
      if (!v.has_value()) {
        return std::nullopt;
      }
      t.total += *v;
      if (i == 4 || i == 5) {
        t.idle += *v;
      }
    }
    return t;
  }
  return std::nullopt;
}

double CpuBusyPct(const std::optional<CpuTimes>& before, const CpuTimes& now) {
  std::uint64_t total = now.total;
  std::uint64_t idle = now.idle;
  if (before.has_value() && now.total > before->total && now.idle >= before->idle) {
    total = now.total - before->total;
    idle = now.idle - before->idle;
  }
  if (total == 0) {
    return 0;
  }
  return std::clamp(100.0 * (1.0 - static_cast<double>(idle) / static_cast<double>(total)), 0.0,
                    100.0);
}

std::optional<MemInfo> ParseMeminfo(std::string_view text) {
  MemInfo m;
  bool total = false;
  bool available = false;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> w = SplitWords(line);
    if (w.size() < 2) {
      continue;
    }
    const std::optional<std::uint64_t> v = ToNumber<std::uint64_t>(w[1]);
    if (!v.has_value()) {
      continue;
    }
    if (w[0] == "MemTotal:") {
      m.total_kb = *v;
      total = true;
    } else if (w[0] == "MemAvailable:") {
      m.available_kb = *v;
      available = true;
    }
  }
  if (!total || !available || m.total_kb == 0) {
    return std::nullopt;
  }
  return m;
}

std::optional<LoadAvg> ParseLoadavg(std::string_view text) {
  std::vector<std::string_view> w = SplitWords(Lines(text).empty() ? "" : Lines(text)[0]);
  if (w.size() < 3) {
    return std::nullopt;
  }
  const std::optional<double> a = ToDouble(w[0]);
  const std::optional<double> b = ToDouble(w[1]);
  const std::optional<double> c = ToDouble(w[2]);
  if (!a || !b || !c) {
    return std::nullopt;
  }
  return LoadAvg{*a, *b, *c};
}

std::vector<MountEntry> ParseMounts(std::string_view text) {
  std::vector<MountEntry> out;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string_view> w = SplitWords(line);
    if (w.size() < 4) {
      continue;
    }
    MountEntry m{DecodeMountField(w[0]), DecodeMountField(w[1]), std::string(w[2]),
                 std::string(w[3])};
    if (m.mountpoint.empty() || m.mountpoint[0] != '/' || UnderPseudoTree(m.mountpoint)) {
      continue;
    }
    if (IsPseudoFs(m.fstype) || (m.fstype == "overlay" && m.mountpoint != "/")) {
      continue;
    }
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const MountEntry& e) { return e.mountpoint == m.mountpoint; }),
              out.end());
    out.push_back(std::move(m));
  }
  return out;
}

absl::StatusOr<FsUsage> StatFs(const std::string& mountpoint) {
  struct statvfs s {};
  if (statvfs(mountpoint.c_str(), &s) != 0) {
    return absl::UnavailableError("statvfs " + mountpoint + " failed");
  }
  FsUsage u;
  const std::uint64_t frsize = s.f_frsize != 0 ? s.f_frsize : s.f_bsize;
  u.size_bytes = static_cast<std::uint64_t>(s.f_blocks) * frsize;
  u.available_bytes = static_cast<std::uint64_t>(s.f_bavail) * frsize;
  u.used_bytes = static_cast<std::uint64_t>(s.f_blocks - s.f_bfree) * frsize;
  const std::uint64_t denominator = u.used_bytes + u.available_bytes;
  u.used_pct = denominator == 0
                   ? 0
                   : 100.0 * static_cast<double>(u.used_bytes) / static_cast<double>(denominator);
  return u;
}

std::optional<ProcessInfo> ParsePidStat(std::string_view text, long ticks_per_second,
                                        long page_size) {
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  const std::optional<int> pid =
      ToNumber<int>(SplitWords(text.substr(0, open)).empty() ? std::string_view()
                                                             : SplitWords(text.substr(0, open))[0]);
  std::vector<std::string_view> rest = SplitWords(text.substr(close + 1));
  // rest[0] is field 3 (state); utime is field 14, stime 15, rss 24.
  if (!pid.has_value() || rest.size() < 22) {
    return std::nullopt;
  }
  const std::optional<std::uint64_t> utime = ToNumber<std::uint64_t>(rest[11]);
  const std::optional<std::uint64_t> stime = ToNumber<std::uint64_t>(rest[12]);
  const std::optional<std::int64_t> rss = ToNumber<std::int64_t>(rest[21]);
  if (!utime || !stime || !rss) {
    return std::nullopt;
  }
  ProcessInfo p;
  p.pid = *pid;
  p.command = std::string(text.substr(open + 1, close - open - 1));
  p.cpu_seconds = static_cast<double>(*utime + *stime) /
                  static_cast<double>(ticks_per_second > 0 ? ticks_per_second : 100);
  p.rss_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *rss)) *
                static_cast<std::uint64_t>(page_size > 0 ? page_size : 4096);
  return p;
}

std::vector<ProcessInfo> ListProcesses(const std::string& proc_root) {
  std::vector<ProcessInfo> out;
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) {
    return out;
  }
  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    absl::StatusOr<std::string> stat =
        ReadTextFile(proc_root + "/" + std::string(name) + "/stat", 4096);
    if (!stat.ok()) {
      continue;  // the process exited meanwhile
    }
    if (std::optional<ProcessInfo> p = ParsePidStat(*stat, ticks, page)) {
      out.push_back(std::move(*p));
    }
  }
  closedir(dir);
  return out;
}

absl::StatusOr<std::vector<UnitInfo>> ParseSystemctlUnits(std::string_view json) {
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json, {8 << 20, 16});
  if (!doc.ok()) {
    return doc.status();
  }
  if (!doc->IsArray()) {
    return absl::InvalidArgumentError("systemctl did not print a JSON array");
  }
  std::vector<UnitInfo> out;
  for (const rapidjson::Value& v : doc->GetArray()) {
    if (!v.IsObject()) {
      continue;
    }
    UnitInfo u;
    u.unit = std::string(core::GetString(v, "unit").value_or(""));
    u.active = std::string(core::GetString(v, "active").value_or(""));
    u.sub = std::string(core::GetString(v, "sub").value_or(""));
    u.description = std::string(core::GetString(v, "description").value_or(""));
    const std::string_view suffix = ".service";
    if (u.unit.size() > suffix.size() &&
        u.unit.compare(u.unit.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(std::move(u));
    }
  }
  return out;
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path, std::size_t max_bytes) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == EACCES) {
      return absl::PermissionDeniedError("cannot read " + path);
    }
    return absl::NotFoundError("cannot open " + path);
  }
  std::string out(max_bytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(max_bytes));
  out.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) {
    return absl::UnavailableError("error reading " + path);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ReadLastLines(const std::string& path,
                                                       std::size_t max_lines,
                                                       std::size_t max_bytes) {
  errno = 0;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    if (errno == EACCES) {
      return absl::PermissionDeniedError("cannot read " + path);
    }
    return absl::NotFoundError("cannot open " + path);
  }
  const std::streamoff size = in.tellg();
  const std::streamoff start =
      std::max<std::streamoff>(0, size - static_cast<std::streamoff>(max_bytes));
  in.seekg(start);
  std::string text(static_cast<std::size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  std::vector<std::string> lines;
  for (std::string_view line : Lines(text)) {
    lines.emplace_back(line);
  }
  if (start > 0 && !lines.empty()) {
    lines.erase(lines.begin());  // the first line is probably partial
  }
  if (lines.size() > max_lines) {
    lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(max_lines));
  }
  return lines;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view line : Lines(text)) {
    out.emplace_back(line);
  }
  return out;
}

}  // namespace pulse::adapters::agents::internal
