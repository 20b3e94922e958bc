// The exec classifier's path rules (which files cat/head/tail/wc may read) and the masking of
// what an accepted command prints (exec_classifier.h).
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "exec_rules.h"
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::core {
namespace exec_internal {
namespace {

// Splits an absolute path into components; nullopt unless it is absolute and normalized (no
// empty, "." or ".." component; one trailing '/' is tolerated).
std::optional<std::vector<std::string_view>> Components(std::string_view path) {
  if (path.empty() || path.front() != '/') {
    return std::nullopt;
  }
  std::vector<std::string_view> parts;
  std::size_t start = 1;
  while (start < path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    const std::string_view part = path.substr(start, end - start);
    const bool trailing = slash != std::string_view::npos && slash + 1 == path.size();
    if (part.empty() || part == "." || part == "..") {
      return std::nullopt;
    }
    parts.push_back(part);
    if (slash == std::string_view::npos || trailing) {
      break;
    }
    start = slash + 1;
  }
  return parts;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Endings of backup, package-manager, editor and rotated copies: `shadow.bak`, `shadow-`,
// `gshadow.dpkg-old`, `debian.cnf~` and `shadow.1.gz` hold what the original holds.
constexpr std::array<std::string_view, 23> kCopySuffixes = {
    "~",        ".bak",      ".old",  ".orig",   ".save",    ".sav",    ".swp",     ".swo",
    ".tmp",     ".new",      ".dist", ".backup", ".rpmsave", ".rpmnew", ".rpmorig", ".ucf-old",
    ".ucf-new", ".ucf-dist", ".gz",   ".xz",     ".bz2",     ".zst",    "-"};

// `part` (lowercase) without its copy endings.
std::string_view Original(std::string_view part) {
  for (bool changed = true; changed && !part.empty();) {
    changed = false;
    const std::size_t dpkg = part.find(".dpkg-");
    if (dpkg != std::string_view::npos && dpkg > 0) {
      part = part.substr(0, dpkg);
      changed = true;
      continue;
    }
    for (std::string_view suffix : kCopySuffixes) {
      if (part.size() > suffix.size() && EndsWith(part, suffix)) {
        part.remove_suffix(suffix.size());
        changed = true;
        break;
      }
    }
    // A numbered rotation: `.1`, `.12`.
    const std::size_t dot = part.rfind('.');
    if (!changed && dot != std::string_view::npos && dot > 0 && dot + 1 < part.size() &&
        IsDigits(part.substr(dot + 1))) {
      part = part.substr(0, dot);
      changed = true;
    }
  }
  return part;
}

// Names that hold credentials wherever they are.
// clang-format off
constexpr std::array<std::string_view, 36> kNamed = {
    "shadow", "gshadow", "sudoers", "sudoers.d", "private", "priv", "secrets", "wireguard",
    "credstore", "credstore.encrypted", "opasswd", "keyring", ".netrc", "_netrc", ".pgpass",
    "pgpass", "debian.cnf", ".my.cnf", "k3s.yaml", "rke2.yaml", "kubeconfig", ".kube", ".docker",
    "auth.json", "system-connections", "wpa_supplicant", "wpa_supplicant.conf", "hostapd.conf",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", "authkey",
    "ipsec.secrets"};
// clang-format on
constexpr std::array<std::string_view, 6> kContains = {"secret",     "token",   "password",
                                                       "credential", "private", "passwd"};
constexpr std::array<std::string_view, 14> kSuffixes = {
    ".key", "_key",     "-key",      ".pem", ".p12",  ".pfx", ".keytab",
    ".gpg", ".keyring", ".keystore", ".jks", ".kdbx", ".p8",  ".ovpn"};
// /etc directories that are credentials as a whole: cluster admin kubeconfigs, k3s/rke2
// tokens and their PKI.
constexpr std::array<std::string_view, 2> kSecretEtcDirs = {"kubernetes", "rancher"};
// Under /proc: views of a process's memory, environment and descriptors, and the links that
// lead out of the readable roots (a process's working directory, root and executable; the
// child that reads `/proc/self/cwd/x` reads `/x`).
constexpr std::array<std::string_view, 17> kProcViews = {
    "environ",    "mem",       "kcore", "kmsg",    "pagemap", "fd",
    "fdinfo",     "map_files", "auxv",  "syscall", "stack",   "sysrq-trigger",
    "clear_refs", "cwd",       "root",  "exe",     "ns"};

bool IsSensitiveComponent(std::string_view raw, std::string_view parent) {
  const std::string lower = Lower(raw);
  const std::string_view part = Original(lower);
  if (std::find(kNamed.begin(), kNamed.end(), part) != kNamed.end()) {
    return true;
  }
  for (std::string_view word : kContains) {
    // /etc/passwd (and its backups) names accounts, not their passwords.
    if (part.find(word) != std::string_view::npos && !(word == "passwd" && part == "passwd")) {
      return true;
    }
  }
  for (std::string_view suffix : kSuffixes) {
    if (EndsWith(part, suffix)) {
      return true;
    }
  }
  // A docker client configuration holds registry credentials ("auth", "identitytoken").
  const std::string parent_name = Lower(parent);
  return part == "config.json" && (parent_name == "docker" || parent_name == ".docker");
}

}  // namespace

bool IsAbsolutePath(std::string_view path) { return Components(path).has_value(); }

}  // namespace exec_internal

bool IsSensitiveExecPath(std::string_view path) {
  using exec_internal::Components;
  std::optional<std::vector<std::string_view>> parts = Components(path);
  if (!parts.has_value()) {
    return true;  // not even a normalized path: treat as unsafe
  }
  for (std::size_t i = 0; i < parts->size(); ++i) {
    if (exec_internal::IsSensitiveComponent((*parts)[i], i == 0 ? "" : (*parts)[i - 1])) {
      return true;
    }
  }
  if (parts->size() >= 2 && (*parts)[0] == "etc") {
    const std::string dir = exec_internal::Lower((*parts)[1]);
    if (std::find(exec_internal::kSecretEtcDirs.begin(), exec_internal::kSecretEtcDirs.end(),
                  dir) != exec_internal::kSecretEtcDirs.end()) {
      return true;
    }
  }
  if (!parts->empty() && (*parts)[0] == "proc") {
    for (std::string_view part : *parts) {
      if (std::find(exec_internal::kProcViews.begin(), exec_internal::kProcViews.end(), part) !=
          exec_internal::kProcViews.end()) {
        return true;
      }
    }
  }
  return false;
}

bool IsReadableExecPath(std::string_view path) {
  std::optional<std::vector<std::string_view>> parts = exec_internal::Components(path);
  if (!parts.has_value() || parts->empty() || path.back() == '/') {
    return false;
  }
  const std::string_view root = (*parts)[0];
  const bool under_root = root == "proc" || root == "sys" || root == "etc" ||
                          (root == "var" && parts->size() >= 2 && (*parts)[1] == "log");
  const std::size_t min_depth = root == "var" ? 3 : 2;
  return under_root && parts->size() >= min_depth && !IsSensitiveExecPath(path);
}

std::string MaskExecOutput(const std::vector<std::string>& argv, std::string_view output) {
  const std::size_t program = exec_internal::ProgramIndex(argv);
  if (program >= argv.size() || argv[program] != "systemctl") {
    return std::string(output);
  }
  // `systemctl show` prints one Name=value property a line. These values hold secrets.
  static constexpr std::array<std::string_view, 4> kMasked = {
      "Environment=", "EnvironmentFiles=", "SetCredential=", "SetCredentialEncrypted="};
  std::string out;
  out.reserve(output.size());
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    end = end == std::string_view::npos ? output.size() : end + 1;
    const std::string_view line = output.substr(start, end - start);
    const auto masked = std::find_if(kMasked.begin(), kMasked.end(), [&](std::string_view name) {
      return exec_internal::StartsWith(line, name);
    });
    if (masked == kMasked.end()) {
      out.append(line);
    } else {
      const bool empty = line.size() == masked->size() || line[masked->size()] == '\n';
      out.append(*masked);
      out.append(empty ? "" : "***");
      if (line.back() == '\n') {
        out.push_back('\n');
      }
    }
    start = end;
  }
  return out;
}

}  // namespace pulse::core
