// Readers of this machine's state for LocalHostFleet: /proc/stat, /proc/meminfo, /proc/loadavg,
// /proc/mounts (+ statvfs), /proc/<pid>/stat, and systemd's unit list. Each Parse* function is
// pure (text in, values out); the Read* functions do the I/O. Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pulse::adapters::agents::internal {

struct CpuTimes {
  std::uint64_t total = 0;
  std::uint64_t idle = 0;  // idle + iowait
};
// The aggregate "cpu" line of /proc/stat.
std::optional<CpuTimes> ParseProcStat(std::string_view text);
// Busy percentage between two readings (since boot when `before` is empty).
double CpuBusyPct(const std::optional<CpuTimes>& before, const CpuTimes& now);

struct MemInfo {
  std::uint64_t total_kb = 0;
  std::uint64_t available_kb = 0;
};
std::optional<MemInfo> ParseMeminfo(std::string_view text);

struct LoadAvg {
  double one = 0, five = 0, fifteen = 0;
};
std::optional<LoadAvg> ParseLoadavg(std::string_view text);

struct MountEntry {
  std::string device;
  std::string mountpoint;  // octal escapes (\040) decoded
  std::string fstype;
  std::string options;
};
// Real filesystems only: pseudo and virtual types (proc, sysfs, tmpfs, cgroup, overlay except
// at /, squashfs, ...) and mounts under /proc, /sys, /dev and /run are skipped; a mountpoint
// mounted twice keeps its last entry.
std::vector<MountEntry> ParseMounts(std::string_view text);

struct FsUsage {
  std::uint64_t size_bytes = 0;
  std::uint64_t used_bytes = 0;
  std::uint64_t available_bytes = 0;
  double used_pct = 0;  // used / (used + available), as df reports
};
absl::StatusOr<FsUsage> StatFs(const std::string& mountpoint);

struct ProcessInfo {
  int pid = 0;
  std::string command;  // comm, at most 15 bytes
  double cpu_seconds = 0;
  std::uint64_t rss_bytes = 0;
};
// One /proc/<pid>/stat line.
std::optional<ProcessInfo> ParsePidStat(std::string_view text, long ticks_per_second,
                                        long page_size);
// Every process readable now.
std::vector<ProcessInfo> ListProcesses(const std::string& proc_root);

struct UnitInfo {
  std::string unit;    // nginx.service
  std::string active;  // active, inactive, failed, activating, ...
  std::string sub;     // running, dead, exited, auto-restart, ...
  std::string description;
};
// `systemctl list-units --type=service --all --output=json` output; units that are not
// services are dropped.
absl::StatusOr<std::vector<UnitInfo>> ParseSystemctlUnits(std::string_view json);

// The whole file (at most max_bytes); NotFound / PermissionDenied / Unavailable.
absl::StatusOr<std::string> ReadTextFile(const std::string& path, std::size_t max_bytes = 1 << 20);
// The last lines of a (possibly large) file: reads at most max_bytes from its end.
absl::StatusOr<std::vector<std::string>> ReadLastLines(const std::string& path,
                                                       std::size_t max_lines,
                                                       std::size_t max_bytes);

// `text` split at '\n' (no empty last line for a trailing newline).
std::vector<std::string> SplitLines(const std::string& text);

}  // namespace pulse::adapters::agents::internal
