// Data-dir modes, end to end: the real binary refuses a data dir group or others can enter
// (the server and every subcommand that opens the data dir), naming the chmod that fixes it and
// exiting non-zero; on a fresh data dir it creates the directory 0700 and pulse.db, -wal and
// -shm 0600 even under a permissive umask (stat while it runs); a database file an older
// release left 0644 is made 0600 and the repair is logged.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "child_process.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

unsigned ModeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// The umask for one scope: the children the test starts inherit it. 022 is the usual default
// under which SQLite created the database files 0644.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t old_;
};

struct Ended {
  std::string how;  // "exited 1"; "still running" when it did not stop by itself
  std::string log;
};

// Runs the server on `data` and waits up to 10 s for it to exit by itself (a server that
// starts is stopped, so a regression fails instead of hanging).
Ended RunUntilExit(const std::string& data, const std::string& log_path) {
  ChildProcessOptions child;
  child.argv = {ServerBinary(), "--data-dir", data, "--listen", "127.0.0.1:0"};
  child.log_path = log_path;
  absl::StatusOr<std::unique_ptr<ChildProcess>> started = ChildProcess::Start(child);
  REQUIRE(started.ok());
  ChildProcess& process = **started;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (process.Running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Ended ended;
  ended.how = process.Running() ? "still running" : process.Stop();
  process.Stop();
  ended.log = process.LogTail();
  return ended;
}

TEST_CASE("a data dir others can enter is refused by the server and by token create",
          "[e2e][server][modes]") {
  TempDir root;
  const std::string data = root.File("data");
  REQUIRE(::mkdir(data.c_str(), 0700) == 0);
  REQUIRE(::chmod(data.c_str(), 0755) == 0);

  const Ended server = RunUntilExit(data, root.File("server.log"));
  INFO(server.log);
  CHECK(server.how == "exited 1");
  CHECK(server.log.find("has mode 0755") != std::string::npos);
  CHECK(server.log.find("chmod 700 " + data) != std::string::npos);
  CHECK(server.log.find("listening on") == std::string::npos);

  const Captured token = RunCommand(
      {ServerBinary(), "token", "create", "--data-dir", data, "--name", "admin", "--scopes", "*"});
  CHECK(token.exit_code != 0);
  CHECK(token.out.empty());
  CHECK(token.err.find("chmod 700 " + data) != std::string::npos);
  // Refused before anything was written.
  CHECK_FALSE(std::filesystem::exists(data + "/pulse.db"));
  CHECK(ModeOf(data) == 0755);

  // After the fix the same dir is used.
  REQUIRE(::chmod(data.c_str(), 0700) == 0);
  CHECK_FALSE(MintToken(data, "*").empty());
}

TEST_CASE("a fresh data dir is 0700 and the database files 0600 while the server runs",
          "[e2e][server][modes]") {
  ScopedUmask umask(022);
  TempDir root;
  const std::string data = root.File("fresh");
  // The binary creates the data dir (token create here; the server's log lives in it).
  const std::string token = MintToken(data, "monitoring:read");
  CHECK(ModeOf(data) == 0700);
  ServerProcess server(data);
  // The startup migrations wrote through the log, so all three files exist now.
  CHECK(ModeOf(data) == 0700);
  for (const char* name : {"pulse.db", "pulse.db-wal", "pulse.db-shm", "secret.key", "token.key"}) {
    INFO(name);
    CHECK(ModeOf(data + "/" + name) == 0600);
  }
  // A write while it runs keeps them so.
  CHECK_FALSE(MintToken(data, "ai:chat", "second").empty());
  CHECK(Send(server.port(), "GET", "/api/agent/capabilities", token).status == 200);
  for (const char* name : {"pulse.db", "pulse.db-wal", "pulse.db-shm"}) {
    INFO(name);
    CHECK(ModeOf(data + "/" + name) == 0600);
  }
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("a database file an older release left 0644 is made 0600 and the repair logged",
          "[e2e][server][modes]") {
  ScopedUmask umask(022);
  TempDir root;
  const std::string data = root.File("old");
  MintToken(data, "*");
  const std::string db = data + "/pulse.db";
  REQUIRE(::chmod(db.c_str(), 0644) == 0);
  ServerProcess server(data);
  CHECK(ModeOf(db) == 0600);
  CHECK(ModeOf(db + "-wal") == 0600);
  CHECK(ModeOf(db + "-shm") == 0600);
  const std::string log = server.Log();
  INFO(log);
  CHECK(log.find(db + " had mode 0644") != std::string::npos);
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
