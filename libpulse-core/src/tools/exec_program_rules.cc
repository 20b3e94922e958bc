// The per-program argument rules of the exec classifier: one function per allowlisted
// program, each accepting only read-only forms (see exec_classifier.h for the summary).
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include "exec_rules.h"

namespace pulse::core::exec_internal {
namespace {

Check CatRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-n"}, {"-b"}, {"-A"}, {"-E"}, {"-s"}, {"-T"}, {"-v"}, {"--number"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kReadablePaths, 1, 16);
}

Check WcRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-l"}, {"-c"}, {"-w"}, {"-m"}, {"-L"}, {"--lines"}, {"--bytes"}, {"--words"}, {"--chars"},
      {"--max-line-length"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kReadablePaths, 1, 16);
}

// head and tail share one option set; tail's follow modes (-f, -F, --follow, --retry, -s,
// --pid) are simply not in it.
Check HeadTailRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-n", Val::kSignedCount}, {"-c", Val::kSignedCount}, {"--lines", Val::kSignedCount},
      {"--bytes", Val::kSignedCount}, {"-q"}, {"-v"}, {"--quiet"}, {"--silent"}, {"--verbose"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kReadablePaths, 1, 16);
}

Check LsRule(const Argv& argv) {
  static constexpr std::string_view kSort[] = {"name", "size",    "time",
                                               "none", "version", "extension"};
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-a"}, {"-A"}, {"-l"}, {"-h"}, {"-t"}, {"-r"}, {"-S"}, {"-d"}, {"-R"}, {"-1"}, {"-i"},
      {"-F"}, {"-n"}, {"-s"}, {"-p"}, {"-U"}, {"-X"}, {"-v"}, {"--all"}, {"--almost-all"},
      {"--human-readable"}, {"--reverse"}, {"--recursive"}, {"--directory"}, {"--inode"},
      {"--numeric-uid-gid"}, {"--size"}, {"--full-time"}, {"--sort", Val::kWord, kSort}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kAbsolutePaths, 0, 16);
}

Check StatRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-L"}, {"-f"}, {"-t"}, {"--dereference"}, {"--file-system"}, {"--terse"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kAbsolutePaths, 1, 16);
}

Check DfRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-h"}, {"-H"}, {"-i"}, {"-T"}, {"-a"}, {"-l"}, {"-P"}, {"-k"}, {"-t", Val::kWord},
      {"-x", Val::kWord}, {"--human-readable"}, {"--si"}, {"--inodes"}, {"--print-type"}, {"--all"},
      {"--local"}, {"--portability"}, {"--total"}, {"--type", Val::kWord},
      {"--exclude-type", Val::kWord}, {"--output", Val::kOptional}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kAbsolutePaths, 0, 16);
}

Check DuRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-s"}, {"-h"}, {"-c"}, {"-x"}, {"-a"}, {"-k"}, {"-m"}, {"-b"}, {"-d", Val::kCount},
      {"--max-depth", Val::kCount}, {"--summarize"}, {"--human-readable"}, {"--total"},
      {"--one-file-system"}, {"--all"}, {"--apparent-size"}, {"--bytes"}, {"--si"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kAbsolutePaths, 0, 16);
}

Check LsblkRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-a"}, {"-b"}, {"-d"}, {"-f"}, {"-l"}, {"-m"}, {"-n"}, {"-p"}, {"-P"}, {"-J"}, {"-S"},
      {"-t"}, {"-r"}, {"-i"}, {"-o", Val::kWord}, {"-e", Val::kWord}, {"--all"}, {"--bytes"},
      {"--nodeps"}, {"--fs"}, {"--list"}, {"--perms"}, {"--noheadings"}, {"--paths"}, {"--pairs"},
      {"--json"}, {"--scsi"}, {"--topology"}, {"--raw"}, {"--ascii"}, {"--output", Val::kWord},
      {"--exclude", Val::kWord}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kAbsolutePaths, 0, 16);
}

Check FreeRule(const Argv& argv) {
  // -s/--seconds and -c/--count repeat forever or for a long time: not offered.
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-b"}, {"-k"}, {"-m"}, {"-g"}, {"-h"}, {"-t"}, {"-w"}, {"-l"}, {"-v"}, {"--bytes"},
      {"--kibi"}, {"--mebi"}, {"--gibi"}, {"--human"}, {"--wide"}, {"--total"}, {"--lohi"},
      {"--si"}, {"--committed"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kNone);
}

Check UptimeRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-p"}, {"-s"}, {"--pretty"}, {"--since"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kNone);
}

Check UnameRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-a"}, {"-s"}, {"-n"}, {"-r"}, {"-v"}, {"-m"}, {"-p"}, {"-i"}, {"-o"}, {"--all"},
      {"--kernel-name"}, {"--nodename"}, {"--kernel-release"}, {"--kernel-version"}, {"--machine"},
      {"--processor"}, {"--hardware-platform"}, {"--operating-system"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kNone);
}

Check HostnameRule(const Argv& argv) {
  // Never an operand: `hostname NAME` sets the host name.
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-f"}, {"-s"}, {"-i"}, {"-I"}, {"-d"}, {"-A"}, {"--fqdn"}, {"--long"}, {"--short"},
      {"--domain"}, {"--ip-address"}, {"--all-ip-addresses"}, {"--all-fqdns"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kNone);
}

Check NoArgsRule(const Argv& argv) { return Simple(argv, {}, Operands::kNone); }

Check NprocRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"--all"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kNone);
}

Check LscpuRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-e", Val::kOptional}, {"-p", Val::kOptional}, {"-J"}, {"-x"}, {"-a"}, {"-b"}, {"-c"},
      {"-y"}, {"--json"}, {"--hex"}, {"--all"}, {"--online"}, {"--offline"},
      {"--extended", Val::kOptional}, {"--parse", Val::kOptional}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kNone);
}

Check VmstatRule(const Argv& argv) {
  // No operands: a delay makes vmstat run until killed.
  static constexpr std::string_view kUnits[] = {"k", "K", "m", "M"};
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-a"}, {"-f"}, {"-m"}, {"-s"}, {"-d"}, {"-D"}, {"-w"}, {"-t"}, {"-S", Val::kWord, kUnits},
      {"--active"}, {"--forks"}, {"--slabs"}, {"--stats"}, {"--disk"}, {"--disk-sum"}, {"--wide"},
      {"--timestamp"}, {"--unit", Val::kWord, kUnits}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kNone);
}

Check IdRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-u"}, {"-g"}, {"-G"}, {"-n"}, {"-r"}, {"-z"}, {"--user"}, {"--group"}, {"--groups"},
      {"--name"}, {"--real"}, {"--zero"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kWords, 0, 1);
}

Check DateRule(const Argv& argv) {
  // Never -s/--set (sets the clock) or -f/--file.
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-u"}, {"--utc"}, {"--universal"}, {"-R"}, {"--rfc-email"}, {"-I", Val::kOptional},
      {"--iso-8601", Val::kOptional}, {"--rfc-3339", Val::kWord}, {"-d", Val::kWord},
      {"--date", Val::kWord}};
  // clang-format on
  std::vector<std::string> operands;
  if (Check bad = SplitArgs(argv, 1, kOpts, &operands)) {
    return bad;
  }
  if (Check bad = OperandCount(argv[0], operands, 0, 1)) {
    return bad;
  }
  if (!operands.empty() && operands[0].front() != '+') {
    return Unsafe("date: the only operand accepted is +FORMAT (an operand sets the clock)");
  }
  return std::nullopt;
}

Check PsRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-e"}, {"-A"}, {"-a"}, {"-d"}, {"-f"}, {"-F"}, {"-l"}, {"-j"}, {"-y"}, {"-H"}, {"-w"},
      {"-L"}, {"-T"}, {"--forest"}, {"--no-headers"}, {"--headers"}, {"-u", Val::kWord},
      {"-U", Val::kWord}, {"-g", Val::kWord}, {"-G", Val::kWord}, {"-p", Val::kWord},
      {"-C", Val::kWord}, {"-t", Val::kWord}, {"-o", Val::kWord}, {"-O", Val::kWord},
      {"--format", Val::kWord}, {"--sort", Val::kWord}, {"--pid", Val::kWord},
      {"--ppid", Val::kWord}, {"--user", Val::kWord}};
  // clang-format on
  std::vector<std::string> operands;
  if (Check bad = SplitArgs(argv, 1, kOpts, &operands)) {
    return bad;
  }
  if (Check bad = OperandCount(argv[0], operands, 0, 1)) {
    return bad;
  }
  // BSD-style selectors (ps aux). The e modifier prints every process's environment.
  for (const std::string& o : operands) {
    for (const char c : o) {
      if (c == 'e') {
        return Unsafe("ps: the e modifier shows process environments, which hold secrets");
      }
      if (std::string_view("auxwfjlrTHvmSc").find(c) == std::string_view::npos) {
        return Unsafe(Cat("ps: selector ", o, " is not allowed"));
      }
    }
  }
  return std::nullopt;
}

Check SsRule(const Argv& argv) {
  // Never -K/--kill (closes sockets), -D/--diag (writes a file), -F/--filter (reads a file)
  // or -N/--net (enters another namespace).
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-t"}, {"-u"}, {"-l"}, {"-n"}, {"-a"}, {"-p"}, {"-s"}, {"-4"}, {"-6"}, {"-x"}, {"-w"},
      {"-e"}, {"-m"}, {"-i"}, {"-o"}, {"-r"}, {"-H"}, {"-O"}, {"--tcp"}, {"--udp"}, {"--unix"},
      {"--raw"}, {"--listening"}, {"--numeric"}, {"--all"}, {"--processes"}, {"--summary"},
      {"--no-header"}, {"--oneline"}, {"--info"}, {"--extended"}, {"--memory"}, {"--options"},
      {"--resolve"}, {"--ipv4"}, {"--ipv6"}, {"-f", Val::kWord}, {"--family", Val::kWord},
      {"-A", Val::kWord}, {"--query", Val::kWord}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kWords, 0, 16);
}

Check IpRule(const Argv& argv) {
  // Never -b/-batch (runs commands from a file), -n/-netns, -force.
  static constexpr std::array<std::string_view, 14> kFlags = {
      "-4",     "-6", "-s",    "-stats", "-d",      "-details", "-br",
      "-brief", "-j", "-json", "-p",     "-pretty", "-o",       "-oneline"};
  static constexpr std::array<std::string_view, 10> kObjects = {
      "addr", "address", "a", "route", "r", "link", "l", "neigh", "neighbor", "neighbour"};
  static constexpr std::array<std::string_view, 3> kShow = {"show", "list", "ls"};
  std::size_t i = 1;
  while (i < argv.size() && !argv[i].empty() && argv[i][0] == '-') {
    if (std::find(kFlags.begin(), kFlags.end(), argv[i]) == kFlags.end()) {
      return NotAllowed("ip", argv[i]);
    }
    ++i;
  }
  if (i == argv.size() || std::find(kObjects.begin(), kObjects.end(), argv[i]) == kObjects.end()) {
    return Unsafe("ip: only addr, route, link and neigh can be shown");
  }
  ++i;
  if (i == argv.size()) {
    return std::nullopt;  // the object's default is show
  }
  if (std::find(kShow.begin(), kShow.end(), argv[i]) == kShow.end()) {
    return Unsafe(Cat("ip: only show/list is allowed, not ", argv[i]));
  }
  // After show, ip reads the rest as filters (dev X, table Y, a device name).
  if (argv.size() - i - 1 > 8) {
    return Problem{ExecRefusal::kTooManyArguments, "ip: at most 8 filter words"};
  }
  return std::nullopt;
}

Check MountRule(const Argv& argv) {
  if (argv.size() > 1) {
    return Problem{ExecRefusal::kTooManyArguments,
                   "mount: only the bare listing is allowed (arguments mount things)"};
  }
  return std::nullopt;
}

Check DmesgRule(const Argv& argv) {
  // Never -c/-C (clear the ring), -D/-E/-n (console), -w/-W (follow forever).
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-T"}, {"-t"}, {"-k"}, {"-x"}, {"-r"}, {"-u"}, {"-l", Val::kWord}, {"-f", Val::kWord},
      {"--level", Val::kWord}, {"--facility", Val::kWord}, {"--ctime"}, {"--notime"}, {"--kernel"},
      {"--userspace"}, {"--decode"}, {"--raw"}, {"--nopager"}, {"--time-format", Val::kWord},
      {"--since", Val::kWord}, {"--until", Val::kWord}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kNone);
}

Check JournalctlRule(const Argv& argv) {
  static constexpr std::string_view kOutputs[] = {
      "short",      "short-iso",  "short-iso-precise", "short-precise", "short-monotonic",
      "short-unix", "short-full", "verbose",           "json",          "json-pretty",
      "cat",        "with-unit"};
  // Never -f/--follow, --vacuum-*, --rotate, --flush, --sync, --relinquish-var,
  // --setup-keys, --update-catalog, -D/--directory, --file, --root, --image, -m/--merge.
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-u", Val::kWord}, {"--unit", Val::kWord}, {"-n", Val::kCount}, {"--lines", Val::kCount},
      {"-p", Val::kWord}, {"--priority", Val::kWord}, {"-b", Val::kOptional},
      {"--boot", Val::kOptional}, {"-k"}, {"--dmesg"}, {"-S", Val::kWord}, {"--since", Val::kWord},
      {"-U", Val::kWord}, {"--until", Val::kWord}, {"-o", Val::kWord, kOutputs},
      {"--output", Val::kWord, kOutputs}, {"--no-pager"}, {"-r"}, {"--reverse"}, {"-x"},
      {"--catalog"}, {"-q"}, {"--quiet"}, {"--utc"}, {"-t", Val::kWord},
      {"--identifier", Val::kWord}, {"--list-boots"}, {"--disk-usage"}, {"--no-hostname"}, {"-a"},
      {"--all"}, {"--system"}, {"-g", Val::kWord}, {"--grep", Val::kWord},
      {"--case-sensitive", Val::kOptional}, {"--no-full"}};
  // clang-format on
  std::vector<std::string> operands;
  if (Check bad = SplitArgs(argv, 1, kOpts, &operands)) {
    return bad;
  }
  if (Check bad = OperandCount(argv[0], operands, 0, 8)) {
    return bad;
  }
  // Operands are field matches (_SYSTEMD_UNIT=nginx.service); a path operand would select an
  // executable's messages but is refused to keep the rule simple.
  for (const std::string& o : operands) {
    const std::size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0 ||
        !std::all_of(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
          return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        })) {
      return Unsafe(Cat("journalctl: operand ", o, " is not a FIELD=VALUE match"));
    }
  }
  return std::nullopt;
}

bool NamesSecretProperty(std::string_view property) {
  std::string lower(property);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; });
  return lower.find("environment") != std::string::npos ||
         lower.find("credential") != std::string::npos;
}

// `--value` (and -P, which is -p NAME --value) prints property values without their names, so
// the output can no longer be masked by name (MaskExecOutput): allowed only for properties
// named explicitly, none of them an environment or credential property.
Check ValueOnlyProperties(const std::vector<std::pair<std::string, std::string>>& options) {
  bool value_only = false;
  for (const auto& option : options) {
    value_only = value_only || option.first == "--value" || option.first == "-P";
  }
  if (!value_only) {
    return std::nullopt;  // every property is printed with its name, so it is masked by name
  }
  bool named = false;
  for (const auto& [name, value] : options) {
    if (name != "-p" && name != "--property" && name != "-P") {
      continue;
    }
    std::string_view list = value;
    while (!list.empty()) {
      const std::size_t comma = list.find(',');
      const std::string_view property = list.substr(0, comma);
      if (!property.empty()) {
        named = true;
      }
      if (NamesSecretProperty(property)) {
        return Unsafe(Cat("systemctl: property ", property,
                          " holds secrets; it is shown only masked (without --value or -P)"));
      }
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
  }
  if (!named) {
    return Unsafe(
        "systemctl: --value prints every property unnamed (environment values unmasked); "
        "name the properties with -p");
  }
  return std::nullopt;
}

Check SystemctlRule(const Argv& argv) {
  static constexpr std::string_view kOutputs[] = {
      "short", "short-iso", "short-precise", "cat", "json", "json-pretty", "verbose", "with-unit"};
  // Never --user, -H/--host, -M/--machine, --now, --force, --root.
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"--no-pager"}, {"-a"}, {"--all"}, {"-t", Val::kWord}, {"--type", Val::kWord},
      {"--state", Val::kWord}, {"--failed"}, {"--plain"}, {"--no-legend"}, {"-l"}, {"--full"},
      {"-n", Val::kCount}, {"--lines", Val::kCount}, {"-p", Val::kWord}, {"--property", Val::kWord},
      {"-P", Val::kWord}, {"--value"}, {"-o", Val::kWord, kOutputs},
      {"--output", Val::kWord, kOutputs}, {"-q"}, {"--quiet"}, {"--system"}, {"-r"},
      {"--recursive"}};
  // clang-format on
  static constexpr std::array<std::string_view, 9> kVerbs = {
      "status",       "show",      "list-units", "list-unit-files", "list-timers",
      "list-sockets", "is-active", "is-enabled", "is-failed"};
  std::vector<std::string> operands;
  std::vector<std::pair<std::string, std::string>> options;
  if (Check bad = SplitArgs(argv, 1, kOpts, &operands, &options)) {
    return bad;
  }
  if (Check bad = ValueOnlyProperties(options)) {
    return bad;
  }
  // With no verb systemctl lists units, which is read-only.
  if (!operands.empty() && std::find(kVerbs.begin(), kVerbs.end(), operands[0]) == kVerbs.end()) {
    return Unsafe(
        Cat("systemctl: only status, show, list-*, is-active, is-enabled "
            "and is-failed are read-only, not ",
            operands[0]));
  }
  return OperandCount(argv[0], operands, 0, 17);
}

Check FindRule(const Argv& argv) {
  static constexpr std::array<std::string_view, 20> kTests = {
      "-print",    "-print0",     "-ls",    "-empty",    "-xdev",   "-mount",  "-readable",
      "-writable", "-executable", "-true",  "-false",    "-not",    "-a",      "-and",
      "-o",        "-or",         "-depth", "-daystart", "-nouser", "-nogroup"};
  static constexpr std::array<std::string_view, 17> kWithValue = {
      "-name",  "-iname",  "-path",  "-ipath",  "-wholename", "-iwholename",
      "-regex", "-iregex", "-lname", "-ilname", "-type",      "-xtype",
      "-user",  "-group",  "-perm",  "-size",   "-regextype"};
  static constexpr std::array<std::string_view, 13> kWithNumber = {
      "-maxdepth", "-mindepth", "-mtime", "-mmin", "-atime", "-amin", "-ctime",
      "-cmin",     "-links",    "-uid",   "-gid",  "-inum",  "-used"};
  std::size_t i = 1;
  while (i < argv.size() && (argv[i] == "-H" || argv[i] == "-L" || argv[i] == "-P")) {
    ++i;
  }
  std::size_t paths = 0;
  for (; i < argv.size() && argv[i].front() != '-'; ++i, ++paths) {
    if (!IsAbsolutePath(argv[i])) {
      return Unsafe(Cat("find: start path ", argv[i],
                        " is not a normalized absolute "
                        "path"));
    }
  }
  if (paths == 0) {
    return Unsafe("find: give at least one absolute start path");
  }
  for (; i < argv.size(); ++i) {
    const std::string_view a = argv[i];
    if (std::find(kTests.begin(), kTests.end(), a) != kTests.end()) {
      continue;
    }
    const bool takes_value = std::find(kWithValue.begin(), kWithValue.end(), a) != kWithValue.end();
    const bool takes_number =
        std::find(kWithNumber.begin(), kWithNumber.end(), a) != kWithNumber.end();
    const bool takes_path = a == "-newer";
    if (!takes_value && !takes_number && !takes_path) {
      return Unsafe(Cat("find: ", a,
                        " is not an allowed test (no -exec, -execdir, "
                        "-ok, -delete, -fprint or -fls)"));
    }
    if (i + 1 >= argv.size()) {
      return Unsafe(Cat("find: ", a, " needs a value"));
    }
    const std::string_view value = argv[++i];
    if (takes_number) {
      const std::string_view digits =
          (value.front() == '+' || value.front() == '-') ? value.substr(1) : value;
      if (!IsDigits(digits)) {
        return Unsafe(Cat("find: ", a, " takes a number"));
      }
    }
    if (takes_path && !IsAbsolutePath(value)) {
      return Unsafe("find: -newer takes a normalized absolute path");
    }
  }
  return std::nullopt;
}

Check ProxmoxGuestRule(const Argv& argv) {
  if (argv.size() == 2 && argv[1] == "list") {
    return std::nullopt;
  }
  if (argv.size() == 3 && (argv[1] == "status" || argv[1] == "config") && IsDigits(argv[2])) {
    return std::nullopt;
  }
  return Unsafe(Cat(argv[0], ": only list, status <id> and config <id> are allowed"));
}

Check PvesmRule(const Argv& argv) {
  if (argv.size() == 2 && argv[1] == "status") {
    return std::nullopt;
  }
  return Unsafe("pvesm: only `pvesm status` is allowed");
}

Check PveversionRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-v"}, {"--verbose"}};
  // clang-format on
  return Simple(argv, kOpts, Operands::kNone);
}

Check DockerRule(const Argv& argv) {
  if (argv.size() < 2) {
    return Unsafe("docker: give a read-only subcommand (ps, images, logs, top, stats)");
  }
  const std::string_view sub = argv[1];
  std::vector<std::string> operands;
  Check bad;
  if (sub == "ps") {
    // clang-format off
    static constexpr Opt kOpts[] = {
        {"-a"}, {"--all"}, {"-q"}, {"--quiet"}, {"--no-trunc"}, {"-l"}, {"--latest"}, {"-s"},
        {"--size"}, {"-n", Val::kCount}, {"--last", Val::kCount}, {"-f", Val::kWord},
        {"--filter", Val::kWord}};
    // clang-format on
    bad = SplitArgs(argv, 2, kOpts, &operands);
    if (!bad) {
      bad = OperandCount("docker ps", operands, 0, 0);
    }
  } else if (sub == "images") {
    // clang-format off
    static constexpr Opt kOpts[] = {
        {"-a"}, {"--all"}, {"-q"}, {"--quiet"}, {"--no-trunc"}};
    // clang-format on
    bad = SplitArgs(argv, 2, kOpts, &operands);
    if (!bad) {
      bad = OperandCount("docker images", operands, 0, 1);
    }
  } else if (sub == "logs") {
    // Never -f/--follow.
    // clang-format off
    static constexpr Opt kOpts[] = {
        {"--tail", Val::kWord}, {"-n", Val::kWord}, {"-t"}, {"--timestamps"},
        {"--since", Val::kWord}, {"--until", Val::kWord}, {"--details"}};
    // clang-format on
    bad = SplitArgs(argv, 2, kOpts, &operands);
    if (!bad) {
      bad = OperandCount("docker logs", operands, 1, 1);
    }
  } else if (sub == "top") {
    bad = OperandCount("docker top", Argv(argv.begin() + 2, argv.end()), 1, 1);
    if (!bad && argv[2].front() == '-') {
      bad = Unsafe("docker top: give a container name");
    }
  } else if (sub == "stats") {
    // clang-format off
    static constexpr Opt kOpts[] = {
        {"--no-stream"}, {"--no-trunc"}, {"-a"}, {"--all"}};
    // clang-format on
    bad = SplitArgs(argv, 2, kOpts, &operands);
    if (!bad && std::find(argv.begin(), argv.end(), "--no-stream") == argv.end()) {
      bad = Unsafe("docker stats: --no-stream is required (it streams forever otherwise)");
    }
    if (!bad) {
      bad = OperandCount("docker stats", operands, 0, 16);
    }
  } else {
    bad = Unsafe(Cat("docker: ", sub, " is not a read-only subcommand"));
  }
  return bad;
}

// ---- health probes (C-CLS-10, B-POL-9) -----------------------------------------------------

// A number in [lo, hi].
bool InRange(std::string_view s, int lo, int hi) {
  if (!IsDigits(s) || s.size() > 3) {
    return false;
  }
  int n = 0;
  for (const char c : s) {
    n = n * 10 + (c - '0');
  }
  return n >= lo && n <= hi;
}

// One http:// or https:// URL with a host: the only operand a probe takes.
Check ProbeUrl(std::string_view program, const std::vector<std::string>& operands) {
  if (operands.size() != 1) {
    return operands.empty()
               ? Unsafe(Cat(program, ": give one http:// or https:// URL"))
               : Problem{ExecRefusal::kTooManyArguments, Cat(program, ": probes exactly one URL")};
  }
  std::string_view url = operands[0];
  if (StartsWith(url, "http://")) {
    url.remove_prefix(7);
  } else if (StartsWith(url, "https://")) {
    url.remove_prefix(8);
  } else {
    return Unsafe(Cat(program, ": only an http:// or https:// URL is probed, not ", operands[0]));
  }
  if (url.empty() || url.front() == '/' || url.front() == ':' || url.front() == '@' ||
      url.find(' ') != std::string_view::npos) {
    return Unsafe(Cat(program, ": the URL ", operands[0], " has no host"));
  }
  return std::nullopt;
}

// An HTTP(S) health probe: status only. Never a request body (-d, -F, -T), a method (-X), a
// config file (-K), a cookie jar (-b, -c), an output file other than /dev/null, headers (-H)
// or a redirect chain (-L). The body never reaches the caller: -o /dev/null or -I is required.
Check CurlRule(const Argv& argv) {
  static constexpr std::string_view kNull[] = {"/dev/null"};
  static constexpr std::string_view kStatus[] = {"%{http_code}"};
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-s"}, {"-S"}, {"--silent"}, {"--show-error"}, {"-I"}, {"--head"},
      {"-o", Val::kWord, kNull}, {"--output", Val::kWord, kNull}, {"-w", Val::kWord, kStatus},
      {"--write-out", Val::kWord, kStatus}, {"-m", Val::kCount}, {"--max-time", Val::kCount}};
  // clang-format on
  std::vector<std::string> operands;
  std::vector<std::pair<std::string, std::string>> options;
  if (Check bad = SplitArgs(argv, 1, kOpts, &operands, &options)) {
    return bad;
  }
  bool discarded = false;
  for (const auto& [name, value] : options) {
    if ((name == "-m" || name == "--max-time") && !InRange(value, 1, 60)) {
      return Unsafe("curl: -m takes 1..60 seconds");
    }
    discarded = discarded || name == "-I" || name == "--head" || name == "-o" || name == "--output";
  }
  if (Check bad = ProbeUrl("curl", operands)) {
    return bad;
  }
  if (!discarded) {
    return Unsafe("curl: a probe discards the body: add -o /dev/null (or -I for the headers)");
  }
  return std::nullopt;
}

// wget only as a spider: it checks the URL and saves nothing.
Check WgetRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"--spider"}, {"-q"}, {"--quiet"}, {"--no-verbose"}, {"-S"}, {"--server-response"},
      {"-T", Val::kCount}, {"--timeout", Val::kCount}, {"-t", Val::kCount},
      {"--tries", Val::kCount}};
  // clang-format on
  std::vector<std::string> operands;
  std::vector<std::pair<std::string, std::string>> options;
  if (Check bad = SplitArgs(argv, 1, kOpts, &operands, &options)) {
    return bad;
  }
  bool spider = false;
  for (const auto& [name, value] : options) {
    if ((name == "-T" || name == "--timeout") && !InRange(value, 1, 60)) {
      return Unsafe("wget: -T takes 1..60 seconds");
    }
    if ((name == "-t" || name == "--tries") && !InRange(value, 1, 3)) {
      return Unsafe("wget: -t takes 1..3 tries");
    }
    spider = spider || name == "--spider";
  }
  if (!spider) {
    return Unsafe("wget: only --spider checks are read-only (anything else saves files)");
  }
  return ProbeUrl("wget", operands);
}

// An IPv4/IPv6 address or a host name: [A-Za-z0-9.:-], not starting with '-' or '.'.
bool IsPingTarget(std::string_view target) {
  if (target.empty() || target.size() > 253 || target.front() == '-' || target.front() == '.') {
    return false;
  }
  return std::all_of(target.begin(), target.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == ':';
  });
}

// A bounded reachability check: -c 1..3 and -W 1..5 both required, one target. Never -f
// (flood), -i (interval), -s (size), -p (pattern), -b (broadcast) or -I (interface).
Check PingRule(const Argv& argv) {
  // clang-format off
  static constexpr Opt kOpts[] = {
      {"-c", Val::kCount}, {"-W", Val::kCount}, {"-n"}, {"-q"}, {"-4"}, {"-6"}};
  // clang-format on
  std::vector<std::string> operands;
  std::vector<std::pair<std::string, std::string>> options;
  if (Check bad = SplitArgs(argv, 1, kOpts, &operands, &options)) {
    return bad;
  }
  bool count = false;
  bool wait = false;
  for (const auto& [name, value] : options) {
    if (name == "-c") {
      if (!InRange(value, 1, 3)) {
        return Unsafe("ping: -c takes 1..3 packets");
      }
      count = true;
    }
    if (name == "-W") {
      if (!InRange(value, 1, 5)) {
        return Unsafe("ping: -W takes 1..5 seconds");
      }
      wait = true;
    }
  }
  if (!count || !wait) {
    return Unsafe("ping: give -c 1..3 and -W 1..5 (it pings forever otherwise)");
  }
  if (Check bad = OperandCount("ping", operands, 1, 1)) {
    return bad;
  }
  if (!IsPingTarget(operands[0])) {
    return Unsafe(Cat("ping: ", operands[0], " is not an address or host name"));
  }
  return std::nullopt;
}

bool IsDuration(std::string_view s) {
  if (s.empty()) {
    return false;
  }
  if (s.back() == 's' || s.back() == 'm' || s.back() == 'h' || s.back() == 'd') {
    s.remove_suffix(1);
  }
  const std::size_t dot = s.find('.');
  if (dot == std::string_view::npos) {
    return IsDigits(s);
  }
  return IsDigits(s.substr(0, dot)) && IsDigits(s.substr(dot + 1));
}

// The index of timeout's duration: past --preserve-status and -k/--kill-after DURATION. Sets
// `bad` to the first option it does not accept.
std::size_t TimeoutDurationIndex(const Argv& argv, std::string_view* bad) {
  std::size_t i = 1;
  while (i < argv.size() && StartsWith(argv[i], "-")) {
    const std::string_view a = argv[i];
    if (a == "--preserve-status" || (StartsWith(a, "--kill-after=") && IsDuration(a.substr(13)))) {
      ++i;
    } else if ((a == "-k" || a == "--kill-after") && i + 1 < argv.size() &&
               IsDuration(argv[i + 1])) {
      i += 2;
    } else {
      *bad = a;
      return i;
    }
  }
  return i;
}

Check TimeoutRule(const Argv& argv) {
  std::string_view bad_option;
  std::size_t i = TimeoutDurationIndex(argv, &bad_option);
  if (!bad_option.empty()) {
    return NotAllowed("timeout", bad_option);
  }
  if (i >= argv.size() || !IsDuration(argv[i])) {
    return Unsafe("timeout: give a duration, then the command it bounds");
  }
  ++i;
  if (i >= argv.size()) {
    return Unsafe("timeout: give the command it bounds");
  }
  return ClassifyArgv(Argv(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end()), true);
}

// Sorted by name.
constexpr Program kPrograms[] = {
    {"arch", NoArgsRule},
    {"cat", CatRule},
    {"curl", CurlRule},
    {"date", DateRule},
    {"df", DfRule},
    {"dmesg", DmesgRule},
    {"docker", DockerRule},
    {"du", DuRule},
    {"find", FindRule},
    {"free", FreeRule},
    {"head", HeadTailRule},
    {"hostname", HostnameRule},
    {"id", IdRule},
    {"ip", IpRule},
    {"journalctl", JournalctlRule},
    {"ls", LsRule},
    {"lsblk", LsblkRule},
    {"lscpu", LscpuRule},
    {"lsmod", NoArgsRule},
    {"mount", MountRule},
    {"nproc", NprocRule},
    {"pct", ProxmoxGuestRule},
    {"ping", PingRule},
    {"ps", PsRule},
    {"pvesm", PvesmRule},
    {"pveversion", PveversionRule},
    {"qm", ProxmoxGuestRule},
    {"ss", SsRule},
    {"stat", StatRule},
    {"systemctl", SystemctlRule},
    {"tail", HeadTailRule},
    {"timeout", TimeoutRule},
    {"uname", UnameRule},
    {"uptime", UptimeRule},
    {"vmstat", VmstatRule},
    {"wc", WcRule},
    {"wget", WgetRule},
    {"whoami", NoArgsRule},
};

}  // namespace

std::span<const Program> Programs() { return kPrograms; }

std::size_t ProgramIndex(const Argv& argv) {
  if (argv.empty() || argv[0] != "timeout") {
    return 0;
  }
  std::string_view bad_option;
  const std::size_t duration = TimeoutDurationIndex(argv, &bad_option);
  return bad_option.empty() && duration < argv.size() ? duration + 1 : argv.size();
}

}  // namespace pulse::core::exec_internal
