// Disk full, injected: the path that needs no mount. A VFS shim, registered as SQLite's
// default in this test process, fails every write to a database or journal file with
// SQLITE_FULL while `full` is set — what SQLite reports when write(2) gets ENOSPC. The action
// service runs over the real SQLite storage and a FakeFleet: a write during the fault is an
// Unavailable error with nothing written and nothing dispatched; everything acknowledged before
// stays; after the fault the same writes succeed once and the file passes integrity_check.
#include <sqlite3.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "action_test_support.h"
#include "fault_support.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/actions/action_service.h"

namespace pulse::testing::fault {
namespace {

using core::ActionRecord;
using core::ActionState;
using namespace testing::actions;  // NOLINT: test fixtures

// ---- the shim: forwards everything to the default VFS, fails writes while `full` ----

std::atomic<bool> g_full{false};
sqlite3_vfs* g_real = nullptr;

struct ShimFile {
  sqlite3_file base;
  sqlite3_file* real;  // allocated right after this struct (szOsFile covers both)
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<ShimFile*>(f)->real; }

int ShimClose(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int ShimRead(sqlite3_file* f, void* p, int n, sqlite3_int64 off) {
  return Real(f)->pMethods->xRead(Real(f), p, n, off);
}
int ShimWrite(sqlite3_file* f, const void* p, int n, sqlite3_int64 off) {
  if (g_full.load()) {
    return SQLITE_FULL;
  }
  return Real(f)->pMethods->xWrite(Real(f), p, n, off);
}
int ShimTruncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int ShimSync(sqlite3_file* f, int flags) { return Real(f)->pMethods->xSync(Real(f), flags); }
int ShimFileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int ShimLock(sqlite3_file* f, int l) { return Real(f)->pMethods->xLock(Real(f), l); }
int ShimUnlock(sqlite3_file* f, int l) { return Real(f)->pMethods->xUnlock(Real(f), l); }
int ShimCheckReserved(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int ShimFileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int ShimSectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int ShimDevice(sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); }
int ShimShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), page, size, extend, out);
}
int ShimShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShimShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShimShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }
int ShimFetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), off, n, out);
}
int ShimUnfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), off, p);
}

const sqlite3_io_methods kShimMethods = {3,
                                         ShimClose,
                                         ShimRead,
                                         ShimWrite,
                                         ShimTruncate,
                                         ShimSync,
                                         ShimFileSize,
                                         ShimLock,
                                         ShimUnlock,
                                         ShimCheckReserved,
                                         ShimFileControl,
                                         ShimSectorSize,
                                         ShimDevice,
                                         ShimShmMap,
                                         ShimShmLock,
                                         ShimShmBarrier,
                                         ShimShmUnmap,
                                         ShimFetch,
                                         ShimUnfetch};

int ShimOpen(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  auto* shim = reinterpret_cast<ShimFile*>(file);
  shim->real = reinterpret_cast<sqlite3_file*>(shim + 1);
  const int rc = g_real->xOpen(g_real, name, shim->real, flags, out_flags);
  file->pMethods = (rc == SQLITE_OK && shim->real->pMethods != nullptr) ? &kShimMethods : nullptr;
  return rc;
}

// Registers the shim as the default VFS once per process (every SQLite connection opened later,
// including the storage adapter's, goes through it).
void InstallShim() {
  static sqlite3_vfs shim = [] {
    g_real = sqlite3_vfs_find(nullptr);
    REQUIRE(g_real != nullptr);
    sqlite3_vfs v = *g_real;
    v.szOsFile = static_cast<int>(sizeof(ShimFile)) + g_real->szOsFile;
    v.zName = "pulse-fault-full";
    v.pAppData = nullptr;
    v.xOpen = ShimOpen;
    return v;
  }();
  static const int registered = sqlite3_vfs_register(&shim, 1);
  REQUIRE(registered == SQLITE_OK);
}

// Sets the fault for one scope.
struct DiskFull {
  DiskFull() { g_full.store(true); }
  ~DiskFull() { g_full.store(false); }
  DiskFull(const DiskFull&) = delete;
  DiskFull& operator=(const DiskFull&) = delete;
};

TEST_CASE("an injected SQLITE_FULL refuses writes cleanly and loses nothing", "[fault][disk]") {
  InstallShim();
  e2e::TempDir dir;
  FakeClock clock;
  FakeFleet fleet;
  fleet.PutResource(Node(), {});
  fleet.PutResource(Vm101(), VmCatalogue());
  fleet.AddRelationship({"vm:101", "node:pve1", "runs_on"});
  auto opened = adapters::storage::OpenSqliteStorage(dir.path());
  REQUIRE(opened.ok());
  std::unique_ptr<adapters::storage::SqliteStorage> storage = *std::move(opened);
  core::ActionService service(*storage->actions, fleet, *storage->operator_state, *storage->audit,
                              clock);

  // Acknowledged before the fault: an approved plan and one approval-free plan.
  auto first = service.Plan(Request("restart", R"({"mode":"graceful"})", Agent("assistant")));
  REQUIRE(first.ok());
  REQUIRE_FALSE(first->refused());
  auto approved = service.Decide(Approve(first->value().record, Human("alice")));
  REQUIRE(approved.ok());
  REQUIRE_FALSE(approved->refused());
  const ActionRecord ready = approved->value().record;
  auto snapshot = service.Plan(Request("snapshot", "{}", Human("alice"), "vm:101", "req-snapshot"));
  REQUIRE(snapshot.ok());
  REQUIRE_FALSE(snapshot->refused());

  {
    DiskFull full;
    // A new plan fails as Unavailable and writes nothing.
    auto during = service.Plan(Request("stop", "{}", Human("alice"), "vm:101", "req-full"));
    REQUIRE_FALSE(during.ok());
    CHECK(absl::IsUnavailable(during.status()));
    // Executing cannot commit its admission, so nothing is dispatched.
    auto executed = service.Execute(Execution(ready, Human("alice")));
    REQUIRE_FALSE(executed.ok());
    CHECK(absl::IsUnavailable(executed.status()));
    CHECK(fleet.dispatch_calls() == 0);
  }
  CHECK(IntegrityCheck(dir.path()) == "ok");
  CHECK(CountRows(dir.path(), "SELECT count(*) FROM actions WHERE request_id = 'req-full'") == 0);
  ActionRows rows = ReadActionRows(dir.path(), ready.id());
  CHECK(rows.state == "approved");
  CHECK(rows.dispatches == 0);
  CHECK(rows.audit_planned == 1);
  CHECK(ReadActionRows(dir.path(), snapshot->value().record.id()).audit_planned == 1);

  // Space is back: the same writes succeed, once each.
  auto again = service.Plan(Request("stop", "{}", Human("alice"), "vm:101", "req-full"));
  REQUIRE(again.ok());
  REQUIRE_FALSE(again->refused());
  auto executed = service.Execute(Execution(ready, Human("alice")));
  REQUIRE(executed.ok());
  REQUIRE_FALSE(executed->refused());
  CHECK(executed->value().record.state == ActionState::kCompleted);
  CHECK(fleet.dispatch_calls() == 1);
  rows = ReadActionRows(dir.path(), ready.id());
  CHECK(rows.state == "completed");
  CHECK(rows.dispatches == 1);
  CHECK(rows.executing_events == 1);
  CHECK(rows.terminal_events == 1);
  CHECK(rows.audit_dispatch_started == 1);
  CHECK(CountRows(dir.path(), "SELECT count(*) FROM actions WHERE request_id = 'req-full'") == 1);
  storage.reset();
  CHECK(IntegrityCheck(dir.path()) == "ok");
}

}  // namespace
}  // namespace pulse::testing::fault
