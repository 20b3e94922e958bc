// The local host's file reads (issue 19, item 1): a canary file outside the readable roots never
// reaches a reader, whether through a /proc link, a symbolic link, an operand that cannot be
// resolved or a link swapped in between the check and the read; what a reader may read it reads
// through the descriptor that was checked, under the name the command gave.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "process_runner.h"
#include "pulse/adapters/agents/local_host_fleet.h"

namespace pulse::adapters::agents {
namespace {

// A temporary directory (removed with its contents) holding a canary file.
class CanaryDir {
 public:
  CanaryDir() {
    std::string pattern = "/tmp/pulse-19a-XXXXXX";
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
    canary_ = path_ + "/canary.txt";
    content_ = "CANARY-" + path_.substr(path_.size() - 6) + "-do-not-leak";
    std::ofstream(canary_) << content_ << "\n";
  }
  ~CanaryDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  const std::string& canary() const { return canary_; }
  const std::string& content() const { return content_; }

 private:
  std::string path_;
  std::string canary_;
  std::string content_;
};

std::unique_ptr<LocalHostFleet> OpenLocal() {
  absl::StatusOr<std::unique_ptr<LocalHostFleet>> fleet = LocalHostFleet::Open({});
  REQUIRE(fleet.ok());
  return std::move(*fleet);
}

TEST_CASE("a canary outside the roots is not read through /proc links of the reader",
          "[adapters][agents][local][reads]") {
  CanaryDir dir;
  auto fleet = OpenLocal();
  // The test runs outside "/", so a check in this process's frame misses what the child
  // (which runs in "/") would read.
  REQUIRE(std::filesystem::current_path() != "/");
  for (const std::string& command :
       {"cat /proc/self/cwd" + dir.canary(), "cat /proc/thread-self/cwd" + dir.canary(),
        "cat /proc/self/root" + dir.canary(), "head -n 1 /proc/self/cwd" + dir.canary(),
        "timeout 5 cat /proc/self/cwd" + dir.canary(), "wc -c /proc/self/cwd" + dir.canary(),
        "cat /etc/hostname /proc/self/cwd" + dir.canary()}) {
    INFO(command);
    absl::StatusOr<core::ExecOutput> out = fleet->RunReadOnlyCommand(fleet->node_id(), command);
    if (out.ok()) {
      FAIL_CHECK("ran and printed: " << out->output);
      CHECK(out->output.find(dir.content()) == std::string::npos);
      continue;
    }
    CHECK(absl::IsPermissionDenied(out.status()));
    CHECK(std::string(out.status().message()).find("sensitive_path") != std::string::npos);
    CHECK(std::string(out.status().message()).find(dir.content()) == std::string::npos);
  }
}

TEST_CASE("a reader's operand that cannot be resolved is refused, not passed on",
          "[adapters][agents][local][reads]") {
  auto fleet = OpenLocal();
  absl::StatusOr<core::ExecOutput> out =
      fleet->RunReadOnlyCommand(fleet->node_id(), "cat /etc/pulse-no-such-file-19a");
  REQUIRE_FALSE(out.ok());
  CHECK(absl::IsPermissionDenied(out.status()));
  CHECK(std::string(out.status().message()).find("cannot be resolved") != std::string::npos);
  // A link that stays in the roots is followed: /etc/mtab -> ../proc/self/mounts.
  out = fleet->RunReadOnlyCommand(fleet->node_id(), "cat /etc/mtab");
  REQUIRE(out.ok());
  CHECK(out->exit_code == 0);
  CHECK_FALSE(out->output.empty());
}

TEST_CASE("readers read the checked file under the name the command gave",
          "[adapters][agents][local][reads]") {
  auto fleet = OpenLocal();
  std::ifstream in("/etc/hostname");
  std::string hostname;
  if (!in) {
    WARN("no /etc/hostname on this host");
    return;
  }
  std::getline(in, hostname);
  absl::StatusOr<core::ExecOutput> out =
      fleet->RunReadOnlyCommand(fleet->node_id(), "cat /etc/hostname");
  REQUIRE(out.ok());
  CHECK(out->output.rfind(hostname, 0) == 0);
  out = fleet->RunReadOnlyCommand(fleet->node_id(), "wc -l /etc/hostname /proc/loadavg");
  REQUIRE(out.ok());
  INFO(out->output);
  CHECK(out->exit_code == 0);
  CHECK(out->output.find("/etc/hostname") != std::string::npos);
  CHECK(out->output.find("/proc/loadavg") != std::string::npos);
  CHECK(out->output.find("/proc/self/fd/") == std::string::npos);
  out = fleet->RunReadOnlyCommand(fleet->node_id(), "head -v -n 1 /proc/loadavg");
  REQUIRE(out.ok());
  CHECK(out->output.rfind("==> /proc/loadavg <==", 0) == 0);
}

// The predicate's directory, for the captureless predicates below.
std::string g_allowed_dir;

bool UnderAllowedDir(std::string_view canonical) {
  return canonical.rfind(g_allowed_dir + "/", 0) == 0;
}

TEST_CASE("a checked file is opened in the child's frame without following a swapped link",
          "[adapters][agents][local][reads]") {
  CanaryDir dir;
  g_allowed_dir = dir.path() + "/allowed";
  std::filesystem::create_directories(g_allowed_dir + "/logs");
  std::ofstream(g_allowed_dir + "/logs/app.log") << "fine\n";
  std::filesystem::create_symlink(dir.canary(), g_allowed_dir + "/logs/escape.log");

  // Relative operands start at "/", the child's working directory, not this process's.
  absl::StatusOr<internal::CheckedFile> file =
      internal::OpenCheckedFile(g_allowed_dir.substr(1) + "/logs/app.log", UnderAllowedDir);
  REQUIRE(file.ok());
  CHECK(file->path == g_allowed_dir + "/logs/app.log");
  CHECK(file->fd.get() >= 0);

  // A link out of the allowed place is refused with where it leads.
  file = internal::OpenCheckedFile(g_allowed_dir + "/logs/escape.log", UnderAllowedDir);
  REQUIRE_FALSE(file.ok());
  CHECK(absl::IsPermissionDenied(file.status()));
  CHECK(std::string(file.status().message()).find("resolves to " + dir.canary()) !=
        std::string::npos);

  // Unresolvable is a refusal.
  file = internal::OpenCheckedFile(g_allowed_dir + "/logs/missing.log", UnderAllowedDir);
  REQUIRE_FALSE(file.ok());
  CHECK(std::string(file.status().message()).find("cannot be resolved") != std::string::npos);

  // A directory, or anything but a regular file, is not handed to a reader.
  file = internal::OpenCheckedFile(g_allowed_dir + "/logs", UnderAllowedDir);
  REQUIRE_FALSE(file.ok());
  CHECK(std::string(file.status().message()).find("not a regular file") != std::string::npos);

  // The race: right after the check, logs/ is swapped for a link to the canary's directory,
  // which holds an app.log of its own (the canary). The open walks the checked path without
  // following links, so it fails instead of reading that.
  static std::string swap_target;
  swap_target = dir.path();
  const auto swap_after_check = [](std::string_view canonical) {
    if (!UnderAllowedDir(canonical)) {
      return false;
    }
    std::filesystem::rename(g_allowed_dir + "/logs", g_allowed_dir + "/logs.old");
    std::filesystem::create_symlink(swap_target, g_allowed_dir + "/logs");
    return true;
  };
  std::filesystem::copy_file(dir.canary(), dir.path() + "/app.log");
  file = internal::OpenCheckedFile(g_allowed_dir + "/logs/app.log", swap_after_check);
  REQUIRE_FALSE(file.ok());
  CHECK(absl::IsPermissionDenied(file.status()));
  CHECK(std::string(file.status().message()).find("without following a link") != std::string::npos);
}

TEST_CASE("a child reads exactly the descriptors it was handed", "[adapters][agents][local]") {
  CanaryDir dir;
  const int fd = open(dir.canary().c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  internal::UniqueFd owned(fd);
  const std::optional<std::string> cat = internal::FindProgram("cat");
  REQUIRE(cat.has_value());
  absl::StatusOr<internal::ProcessResult> run = internal::RunProcess(
      {*cat, internal::PassedFdPath(0)}, absl::Seconds(5), 4096, {owned.get()});
  REQUIRE(run.ok());
  CHECK(run->exit_code == 0);
  CHECK(run->output == dir.content() + "\n");
  // Nothing else leaks into the child: the next descriptor number is closed there.
  run = internal::RunProcess({*cat, internal::PassedFdPath(1)}, absl::Seconds(5), 4096,
                             {owned.get()});
  REQUIRE(run.ok());
  CHECK(run->exit_code != 0);
  CHECK(run->output.find(dir.content()) == std::string::npos);
}

}  // namespace
}  // namespace pulse::adapters::agents
