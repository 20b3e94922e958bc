// Database busy/locked: a second connection (what an operator's `sqlite3 pulse.db` would be)
// holds the write lock on the server's SQLite file with BEGIN EXCLUSIVE while the server
// handles writes. A write either waits and succeeds once the lock is released within the busy
// timeout (5 s), or fails with 503 and a stable code and leaves nothing half-written; reads work
// under the foreign lock (WAL), also while a server write is waiting for it (reads run on the
// storage's read-only connections, not behind the writer); after the release every write works
// and none is lost or duplicated.
#include <SQLiteCpp/SQLiteCpp.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "fault_support.h"

namespace pulse::testing::fault {
namespace {

using e2e::Json;
using e2e::Reply;
using e2e::Str;

constexpr char kScopes[] =
    "actions:plan,actions:execute,actions:approve,monitoring:read,monitoring:write";

// Holds SQLite's write lock on the data dir's database until Release or destruction.
class WriteLock {
 public:
  explicit WriteLock(const std::string& data_dir)
      : db_(DatabasePath(data_dir), SQLite::OPEN_READWRITE) {
    db_.exec("BEGIN EXCLUSIVE");
    held_ = true;
  }
  ~WriteLock() { Release(); }
  void Release() {
    if (held_) {
      db_.exec("COMMIT");
      held_ = false;
    }
  }

 private:
  SQLite::Database db_;
  bool held_ = false;
};

std::int64_t RowsForRequest(const std::string& data_dir, const std::string& request_id) {
  return CountRows(data_dir,
                   "SELECT count(*) FROM actions WHERE request_id = '" + request_id + "'");
}

bool IsUnavailableCode(const std::string& code) {
  return code == "service_unavailable" || code == "action_execution_unavailable";
}

TEST_CASE("a write blocked by another connection's lock succeeds once the lock is released",
          "[fault][database]") {
  e2e::TempDir dir;
  const std::string token = e2e::MintToken(dir.path(), kScopes);
  e2e::ServerProcess server(dir.path());
  const int port = server.port();
  const Reply before =
      PlanAction(port, token, "busy-0", "vm:101", "restart", R"({"mode":"reset"})");
  REQUIRE(before.status == 200);
  const std::string first_id = Str(Json(before.body), "actionId");

  auto lock = std::make_unique<WriteLock>(dir.path());
  // Reads are not blocked by another connection's write lock (WAL).
  const Reply read = e2e::Send(port, "GET", "/api/actions/" + first_id, token);
  CHECK(read.status == 200);
  std::atomic<bool> answered{false};
  Reply planned;
  const auto started = std::chrono::steady_clock::now();
  std::chrono::milliseconds waited{0};
  std::thread writer([&] {
    planned = PlanAction(port, token, "busy-1", "app-container:grafana", "restart");
    waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    answered.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // While the plan waits for the lock, authenticated reads still answer at once: they do not
  // queue behind the waiting write (with one connection they waited until the lock went).
  for (const std::string& path : {"/api/actions/" + first_id, std::string("/api/actions")}) {
    const auto read_started = std::chrono::steady_clock::now();
    const Reply during = e2e::Send(port, "GET", path, token);
    const auto read_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - read_started);
    INFO(path << " answered " << during.status << " after " << read_ms.count() << " ms");
    CHECK(during.status == 200);
    CHECK(read_ms.count() < 1000);
  }
  // The waiting plan has written nothing yet.
  CHECK(RowsForRequest(dir.path(), "busy-1") == 0);
  std::this_thread::sleep_until(started + std::chrono::milliseconds(1500));
  // Still waiting for the lock.
  CHECK_FALSE(answered.load());
  lock->Release();
  writer.join();
  INFO(server.Log());
  INFO("answered after " << waited.count() << " ms");
  INFO(planned.body);
  REQUIRE(planned.status == 200);
  CHECK(RowsForRequest(dir.path(), "busy-0") == 1);
  CHECK(RowsForRequest(dir.path(), "busy-1") == 1);
  const std::string id = Str(Json(planned.body), "actionId");
  CHECK(ReadActionRows(dir.path(), id).audit_planned == 1);
  CHECK(IntegrityCheck(dir.path()) == "ok");
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("writes that outlast the busy timeout fail with 503 and leave nothing half-written",
          "[fault][database]") {
  e2e::TempDir dir;
  const std::string token = e2e::MintToken(dir.path(), kScopes);
  e2e::ServerProcess server(dir.path());
  const int port = server.port();
  // An approval-free plan, ready to execute.
  const Reply ready = PlanAction(port, token, "busy-exec", "app-container:grafana", "restart");
  INFO(ready.body);
  REQUIRE(ready.status == 200);
  const std::string action_id = Str(Json(ready.body), "actionId");
  REQUIRE(Str(Json(ready.body), "state") == "planned");

  Reply planned;
  Reply executed;
  {
    WriteLock lock(dir.path());
    // Two writes at once; each waits out the busy timeout (the server has one writer
    // connection, so they wait in turn).
    std::thread plan([&] {
      planned = PlanAction(port, token, "busy-2", "vm:101", "restart", R"({"mode":"reset"})");
    });
    std::thread execute([&] { executed = ExecuteAction(port, token, action_id); });
    plan.join();
    execute.join();
  }
  INFO(planned.body);
  INFO(executed.body);
  CHECK(planned.status == 503);
  CHECK(IsUnavailableCode(e2e::ErrorCode(planned.body)));
  CHECK(executed.status == 503);
  CHECK(IsUnavailableCode(e2e::ErrorCode(executed.body)));

  // Nothing half-written: no plan, and the action was never admitted.
  CHECK(RowsForRequest(dir.path(), "busy-2") == 0);
  ActionRows rows = ReadActionRows(dir.path(), action_id);
  CHECK(rows.state == "planned");
  CHECK(rows.dispatches == 0);
  CHECK(rows.executing_events == 0);
  CHECK(rows.audit_dispatch_started == 0);
  CHECK(IntegrityCheck(dir.path()) == "ok");

  // After the release the same requests work, each exactly once.
  const Reply replanned =
      PlanAction(port, token, "busy-2", "vm:101", "restart", R"({"mode":"reset"})");
  INFO(replanned.body);
  CHECK(replanned.status == 200);
  const Reply reexecuted = ExecuteAction(port, token, action_id);
  INFO(reexecuted.body);
  REQUIRE(reexecuted.status == 200);
  CHECK(Str(Json(reexecuted.body), "state") == "completed");
  CHECK(Json(reexecuted.body)["dispatched"].GetBool());
  const Reply state_again =
      e2e::Send(port, "PUT", "/api/resources/vm:102/operator-state", token,
                R"({"intentionallyOffline":true,"neverAutoRemediate":false,"note":"fault suite"})");
  INFO(state_again.body);
  CHECK(state_again.status == 200);
  CHECK(RowsForRequest(dir.path(), "busy-2") == 1);
  CHECK(RowsForRequest(dir.path(), "busy-exec") == 1);
  CheckRanOnce(dir.path(), action_id, "completed", "");
  CHECK(CountRows(dir.path(), "SELECT count(*) FROM operator_state") == 1);
  CHECK(IntegrityCheck(dir.path()) == "ok");
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::fault
