#include "pulse/adapters/hostagent/agent_allowlist.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"

namespace pulse::adapters::hostagent {
namespace {

constexpr std::array<std::string_view, 3> kKnownCapabilities = {"restart", "start", "stop"};
constexpr std::size_t kMaxUnitNameBytes = 128;
constexpr std::string_view kServiceSuffix = ".service";

bool IsPlainUnitName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxUnitNameBytes && name[0] != '-' && name[0] != '.' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-' || c == '@' || c == ':';
         });
}

std::string_view WithoutSuffix(std::string_view unit) {
  if (unit.size() > kServiceSuffix.size() &&
      unit.substr(unit.size() - kServiceSuffix.size()) == kServiceSuffix) {
    unit.remove_suffix(kServiceSuffix.size());
  }
  return unit;
}

absl::Status Invalid(std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", kAllowlistInvalid, what));
}

absl::Status RenderAllowlistError(const core::JsonReadError& error) {
  return Invalid(core::JsonReadErrorText(error));
}

// Sorted, each once; a repeated entry is refused rather than folded, as a sign of a typo.
absl::Status SortUnique(std::vector<std::string>& names, std::string_view member) {
  std::sort(names.begin(), names.end());
  auto repeated = std::adjacent_find(names.begin(), names.end());
  if (repeated != names.end()) {
    return Invalid(fmt::format("allow.{} names \"{}\" twice", member, *repeated));
  }
  return absl::OkStatus();
}

}  // namespace

bool AgentAllowlist::AllowsCapability(std::string_view capability) const {
  return std::binary_search(capabilities.begin(), capabilities.end(), capability);
}

bool AgentAllowlist::AllowsService(std::string_view unit) const {
  return std::binary_search(services.begin(), services.end(), WithoutSuffix(unit));
}

AgentAllowlist DefaultAllowlist() { return AgentAllowlist{}; }

absl::StatusOr<AgentAllowlist> DecodeAllowlist(std::string_view json) {
  if (json.size() > kMaxAllowlistBytes) {
    return Invalid(fmt::format("the file is larger than {} bytes", kMaxAllowlistBytes));
  }
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(json, {kMaxAllowlistBytes, 4});
  if (!doc.ok()) {
    return Invalid(std::string(doc.status().message()));
  }
  core::JsonReaderOptions options;
  options.text = core::JsonTextRule::kCleanText;
  options.render = &RenderAllowlistError;
  core::JsonObjectReader reader(*doc, "allow", options);
  AgentAllowlist out;
  out.capabilities = reader.StringArray("capabilities", kMaxAllowlistEntries, 32);
  out.services = reader.StringArray("services", kMaxAllowlistEntries, kMaxUnitNameBytes);
  out.exec = reader.Bool("exec").value_or(true);
  out.docker = reader.Bool("docker").value_or(false);
  if (absl::Status done = reader.Finish(); !done.ok()) {
    return done;
  }
  for (const std::string& c : out.capabilities) {
    if (std::find(kKnownCapabilities.begin(), kKnownCapabilities.end(), c) ==
        kKnownCapabilities.end()) {
      return Invalid(fmt::format(
          "allow.capabilities holds \"{}\"; the agent knows restart, start and stop", c));
    }
  }
  for (std::string& s : out.services) {
    if (!IsPlainUnitName(s)) {
      return Invalid(fmt::format("allow.services holds \"{}\", which is not a plain unit name", s));
    }
    s = std::string(WithoutSuffix(s));
  }
  if (absl::Status st = SortUnique(out.capabilities, "capabilities"); !st.ok()) {
    return st;
  }
  if (absl::Status st = SortUnique(out.services, "services"); !st.ok()) {
    return st;
  }
  return out;
}

absl::StatusOr<AgentAllowlist> LoadAllowlist(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) {
      return DefaultAllowlist();
    }
    const int err = errno;
    if (err == EACCES) {
      return absl::PermissionDeniedError(fmt::format("cannot read {}", path));
    }
    return Invalid(fmt::format("cannot open {}: {}", path, std::strerror(err)));
  }
  struct stat st {};
  std::string text;
  const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  bool read_ok = regular;
  if (regular) {
    std::array<char, 8192> buf{};
    for (;;) {
      const ssize_t n = read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        read_ok = n == 0;
        break;
      }
      text.append(buf.data(), static_cast<std::size_t>(n));
      if (text.size() > kMaxAllowlistBytes) {
        break;
      }
    }
  }
  close(fd);
  if (!regular) {
    return Invalid(fmt::format("{} is not a regular file", path));
  }
  if (!read_ok) {
    return absl::PermissionDeniedError(fmt::format("cannot read {}", path));
  }
  absl::StatusOr<AgentAllowlist> decoded = DecodeAllowlist(text);
  if (!decoded.ok()) {
    // "allowlist_invalid: <path>: <what>": the code stays first, the file is named.
    std::string message(decoded.status().message());
    message.erase(0, std::min(message.size(), kAllowlistInvalid.size() + 2));
    return Invalid(fmt::format("{}: {}", path, message));
  }
  return decoded;
}

}  // namespace pulse::adapters::hostagent
