// Disk full on the data dir: pulse-server runs with its data dir on a small tmpfs (mounted by
// the test; it needs CAP_SYS_ADMIN, which CI's root container has). After some acknowledged
// writes the test fills the filesystem with a plain file and drives more writes: each one is
// either acknowledged (and then fully there) or refused with 503 and a stable code (and then
// not there at all); the server stays up and keeps serving reads, the file passes
// PRAGMA integrity_check, and once the space is freed the same writes succeed, once each, and
// survive a restart.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "fault_support.h"

namespace pulse::testing::fault {
namespace {

using e2e::Json;
using e2e::Reply;
using e2e::Str;

constexpr std::uint64_t kTmpfsBytes = 8u << 20;
constexpr int kWritesWhileFull = 12;

std::int64_t RowsForRequest(const std::string& data_dir, const std::string& request_id) {
  return CountRows(data_dir,
                   "SELECT count(*) FROM actions WHERE request_id = '" + request_id + "'");
}

TEST_CASE("a full disk under the data dir refuses writes cleanly and loses nothing",
          "[fault][disk]") {
  TmpfsMount mount(kTmpfsBytes);
  if (!mount.ok()) {
    // Only a machine without CAP_SYS_ADMIN gets here; see docs/testing.md, Fault injection.
    WARN("skipped: cannot mount a tmpfs for the data dir (" << mount.error() << ")");
    return;
  }
  const std::string data = mount.path() + "/data";
  REQUIRE(::mkdir(data.c_str(), 0700) == 0);
  const std::string token = e2e::MintToken(
      data, "actions:plan,actions:execute,actions:approve,monitoring:read,monitoring:write");
  e2e::ServerProcess server(data);
  const int port = server.port();

  // Acknowledged before the fault: two plans and one executed action.
  std::map<std::string, std::string> acknowledged;  // request id -> action id
  for (const std::string request : {"before-1", "before-2"}) {
    const Reply r = PlanAction(port, token, request, "vm:101", "restart", R"({"mode":"reset"})");
    REQUIRE(r.status == 200);
    acknowledged[request] = Str(Json(r.body), "actionId");
  }
  const Reply grafana = PlanAction(port, token, "before-exec", "app-container:grafana", "restart");
  REQUIRE(grafana.status == 200);
  const std::string executed_id = Str(Json(grafana.body), "actionId");
  acknowledged["before-exec"] = executed_id;
  const Reply ran = ExecuteAction(port, token, executed_id);
  INFO(ran.body);
  REQUIRE(ran.status == 200);
  REQUIRE(Str(Json(ran.body), "state") == "completed");

  // Fill the filesystem, then write.
  const std::string filler = mount.path() + "/filler";
  FillUntilFull(filler);
  std::vector<std::string> refused;
  for (int i = 0; i < kWritesWhileFull; ++i) {
    const std::string request = "full-" + std::to_string(i);
    const Reply r = PlanAction(port, token, request, "vm:101", "restart", R"({"mode":"reset"})");
    INFO(request << ": " << r.status << " " << r.body);
    if (r.status == 200) {
      acknowledged[request] = Str(Json(r.body), "actionId");
      continue;
    }
    CHECK(r.status == 503);
    CHECK(e2e::ErrorCode(r.body) == "service_unavailable");
    refused.push_back(request);
  }
  INFO(server.Log());
  CHECK_FALSE(refused.empty());
  REQUIRE(server.Running());
  // Reads still work, the file is sound, refused writes left nothing behind.
  const Reply read = e2e::Send(port, "GET", "/api/actions/" + executed_id, token);
  CHECK(read.status == 200);
  CHECK(IntegrityCheck(data) == "ok");
  for (const std::string& request : refused) {
    CHECK(RowsForRequest(data, request) == 0);
  }
  for (const auto& [request, id] : acknowledged) {
    INFO(request);
    const ActionRows rows = ReadActionRows(data, id);
    CHECK_FALSE(rows.state.empty());
    CHECK(rows.audit_planned == 1);
  }

  // Free the space: the server continues, each refused write now succeeds once.
  REQUIRE(std::remove(filler.c_str()) == 0);
  for (const std::string& request : refused) {
    const Reply r = PlanAction(port, token, request, "vm:101", "restart", R"({"mode":"reset"})");
    INFO(request << ": " << r.body);
    REQUIRE(r.status == 200);
    acknowledged[request] = Str(Json(r.body), "actionId");
  }
  const Reply again = PlanAction(port, token, "after-exec", "app-container:grafana", "restart");
  INFO(again.body);
  REQUIRE(again.status == 200);
  const std::string second_id = Str(Json(again.body), "actionId");
  const Reply second_run = ExecuteAction(port, token, second_id);
  INFO(second_run.body);
  REQUIRE(second_run.status == 200);
  CHECK(Str(Json(second_run.body), "state") == "completed");
  CHECK(server.Stop() == "exited 0");
  CHECK(IntegrityCheck(data) == "ok");

  // Everything acknowledged is there after a restart, exactly once.
  e2e::ServerProcess restarted(data);
  for (const auto& [request, id] : acknowledged) {
    INFO(request);
    CHECK(RowsForRequest(data, request) == 1);
    const Reply r = e2e::Send(restarted.port(), "GET", "/api/actions/" + id, token);
    CHECK(r.status == 200);
  }
  for (const std::string& id : {executed_id, second_id}) {
    CheckRanOnce(data, id, "completed", "");
  }
  CHECK(restarted.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::fault
