// The Proxmox VE triage rules (docs/patrol.md, "Proxmox VE"): a node offline or unreachable, a
// guest stopped while the HA manager wants it started, and a storage whose forecast starts
// from a day of PVE's rrddata history — as pure rules and through PatrolService's finding
// lifecycle (found, then resolved by the verifier once the signal is gone).
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "patrol_test_support.h"

namespace pulse::testing::patrol {
namespace {

using core::Category;
using core::Severity;
using Facts = std::map<std::string, std::string>;
using Keys = std::vector<std::string>;

core::FleetStatus State(std::string state, Facts facts = {}) {
  core::FleetStatus s;
  s.status = std::move(state);
  s.summary = "it is " + s.status;
  s.facts = std::move(facts);
  return s;
}

Keys KeysOf(const std::vector<core::FindingReport>& reports) {
  Keys out;
  for (const core::FindingReport& r : reports) {
    out.push_back(r.key);
  }
  return out;
}

std::vector<core::FindingReport> Triage(const core::FleetResource& r, const core::FleetStatus& s) {
  return core::TriageResource(r, s, std::nullopt);
}

TEST_CASE("a node the cluster lost is critical, one whose API does not answer a warning",
          "[core][patrol][triage][proxmox]") {
  const core::FleetResource node = Res("node:pve2", "node", "pve2", "offline");
  std::vector<core::FindingReport> offline = Triage(node, State("offline"));
  REQUIRE(KeysOf(offline) == Keys{"node-offline"});
  CHECK(offline[0].severity == Severity::kCritical);
  CHECK(offline[0].category == Category::kReliability);
  CHECK(offline[0].title == "Node pve2 is offline");
  CHECK(offline[0].resource_id == "node:pve2");
  std::vector<core::FindingReport> unreachable =
      Triage(node, State("unreachable", {{"api_error", "596 Broken pipe"}}));
  REQUIRE(KeysOf(unreachable) == Keys{"node-offline"});
  CHECK(unreachable[0].severity == Severity::kWarning);
  CHECK(unreachable[0].description.find("596 Broken pipe") != std::string::npos);
  CHECK(Triage(node, State("online", {{"cpu_pct", "10"}})).empty());
  // Only nodes: a guest or a storage "offline" is not a node outage.
  CHECK(Triage(Res("vm:101", "vm", "web", "offline"), State("offline")).empty());
  CHECK(core::IsTriageKey("node-offline"));
  CHECK(core::IsTriageKey("guest-ha-stopped"));
}

TEST_CASE("a guest stopped while HA wants it started is found, a deliberate stop is not",
          "[core][patrol][triage][proxmox]") {
  const core::FleetResource vm = Res("vm:101", "vm", "web", "stopped", "node:pve1");
  std::vector<core::FindingReport> r = Triage(vm, State("stopped", {{"ha_state", "started"}}));
  REQUIRE(KeysOf(r) == Keys{"guest-ha-stopped"});
  CHECK(r[0].severity == Severity::kWarning);
  CHECK(r[0].category == Category::kReliability);
  CHECK(r[0].evidence.find("ha_state=started") != std::string::npos);
  const core::FleetResource ct = Res("lxc:201", "lxc", "dns", "stopped", "node:pve1");
  CHECK(KeysOf(Triage(ct, State("stopped", {{"ha_state", "started"}}))) ==
        Keys{"guest-ha-stopped"});
  CHECK(Triage(vm, State("running", {{"ha_state", "started"}})).empty());
  CHECK(Triage(vm, State("stopped", {{"ha_state", "stopped"}})).empty());
  CHECK(Triage(vm, State("stopped")).empty());  // not HA-managed
}

TEST_CASE("a guest lock held for hours is found, a fresh one is not",
          "[core][patrol][triage][proxmox]") {
  const core::FleetResource vm = Res("vm:101", "vm", "web", "running", "node:pve1");
  const Facts stuck = {{"lock", "backup"},
                       {"locked_seconds", "14400"},
                       {"lock_since", "2026-12-02T20:00:00Z"},
                       {"lock_task", "UPID:pve1:00001000:00007000:6A4E1B00:vzdump:101:root@pam:"}};
  std::vector<core::FindingReport> r = Triage(vm, State("running", stuck));
  REQUIRE(KeysOf(r) == Keys{"guest-locked"});
  CHECK(r[0].severity == Severity::kWarning);
  CHECK(r[0].category == Category::kReliability);
  CHECK(r[0].title == "Guest web has been locked (backup) for 4.0 hours");
  CHECK(r[0].description.find("2026-12-02T20:00:00Z") != std::string::npos);
  CHECK(r[0].recommendation.find("vzdump:101") != std::string::npos);
  CHECK(KeysOf(Triage(Res("lxc:201", "lxc", "dns", "stopped"), State("stopped", stuck))) ==
        Keys{"guest-locked"});
  // Under three hours, a lock without a known start, or a locked_seconds without a lock: none.
  CHECK(Triage(vm, State("running", {{"lock", "backup"}, {"locked_seconds", "10799"}})).empty());
  CHECK(Triage(vm, State("running", {{"lock", "migrate"}})).empty());
  CHECK(Triage(vm, State("running", {{"locked_seconds", "99999"}})).empty());
  CHECK(Triage(vm, State("running", {{"lock", "backup"}, {"locked_seconds", "x"}})).empty());
}

TEST_CASE("a backup job an hour past its scheduled run is overdue, a failed one has failed",
          "[core][patrol][triage][proxmox]") {
  const core::FleetResource job =
      Res("backup-job:pve/backup-6a1b2c3d-0e1f", "backup-job", "nightly", "ok");
  std::vector<core::FindingReport> late =
      Triage(job, State("ok", {{"overdue_seconds", "7200"},
                               {"schedule", "21:00"},
                               {"next_run_at", "2026-12-02T21:00:00Z"},
                               {"last_result", "ok"}}));
  REQUIRE(KeysOf(late) == Keys{"backup-overdue"});
  CHECK(late[0].category == Category::kBackup);
  CHECK(late[0].severity == Severity::kWarning);
  CHECK(late[0].description.find("2026-12-02T21:00:00Z, 2.0 hours ago") != std::string::npos);
  CHECK(Triage(job, State("ok", {{"overdue_seconds", "3599"}})).empty());
  CHECK(Triage(job, State("running", {{"overdue_seconds", "7200"}})).empty());
  CHECK(Triage(job, State("disabled", {{"overdue_seconds", "7200"}})).empty());
  // The source's failed run is the general backup-failed rule; late and failed are both said.
  CHECK(KeysOf(Triage(job,
                      State("failed", {{"last_result", "failed"}, {"overdue_seconds", "7200"}}))) ==
        Keys{"backup-overdue", "backup-failed"});
  CHECK(core::IsTriageKey("guest-locked"));
  CHECK(core::IsTriageKey("backup-overdue"));
}

TEST_CASE("a storage forecast starts from a day of rrddata history",
          "[core][patrol][triage][proxmox]") {
  // What the sample recorder copies from a proxmox-ve source on its first round: a day of rows
  // at 30-minute steps, 50 % used and rising 2.1 points a day (50 / 2.1 = 23.8 days).
  InMemoryMetricsHistory history;
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  for (int i = 0; i <= 48; ++i) {
    history.Add("storage:pve1/data", "usage",
                {now - absl::Minutes(30 * (48 - i)), 47.9 + 2.1 * i / 48.0});
  }
  const core::FleetResource data = Res("storage:pve1/data", "storage", "data", "available");
  const std::optional<core::CapacityForecast> forecast = core::StorageForecast(data, history, now);
  REQUIRE(forecast.has_value());
  CHECK(forecast->reading == core::ForecastReading::kFilling);
  REQUIRE(forecast->days_to_full.has_value());
  CHECK(*forecast->days_to_full == 24);
  std::vector<core::FindingReport> r =
      core::TriageResource(data, State("available", {{"usage_pct", "50.0"}}), forecast);
  REQUIRE(KeysOf(r) == Keys{"storage-capacity"});
  CHECK(r[0].severity == Severity::kWarning);
  CHECK(r[0].title == "Storage data is filling up");
  CHECK(r[0].description.find("full in about 24 days") != std::string::npos);
}

TEST_CASE("Patrol raises node-offline and guest-ha-stopped and resolves them when they recover",
          "[core][patrol][triage][proxmox]") {
  Fixture f;
  f.fleet.PutResource(Res("node:pve2", "node", "pve2", "online"));
  f.fleet.PutResource(Res("vm:102", "vm", "db", "running", "node:pve2"));
  f.SetFacts("node:pve2", "online", {{"cpu_pct", "5.0"}});
  f.SetFacts("vm:102", "running", {{"ha_state", "started"}});
  const std::string node_id =
      Fixture::Id("node:pve2", Category::kReliability, std::string(core::kTriageKeyNodeOffline));
  const std::string ha_id =
      Fixture::Id("vm:102", Category::kReliability, std::string(core::kTriageKeyGuestHaStopped));
  core::PatrolRunRecord quiet = f.Run();
  CHECK(std::count(quiet.new_finding_ids.begin(), quiet.new_finding_ids.end(), node_id) == 0);

  f.SetFacts("node:pve2", "offline", {});
  f.SetFacts("vm:102", "stopped", {{"ha_state", "started"}});
  core::PatrolRunRecord lost = f.Run();
  CHECK(std::count(lost.new_finding_ids.begin(), lost.new_finding_ids.end(), node_id) == 1);
  CHECK(std::count(lost.new_finding_ids.begin(), lost.new_finding_ids.end(), ha_id) == 1);
  REQUIRE(f.findings.Get(node_id).ok());
  CHECK(f.findings.Get(node_id)->severity == Severity::kCritical);

  // The node is back and HA started the guest: the verifier sees both signals gone.
  f.clock.Advance(absl::Minutes(10));
  f.SetFacts("node:pve2", "online", {{"cpu_pct", "5.0"}});
  f.SetFacts("vm:102", "running", {{"ha_state", "started"}});
  core::PatrolRunRecord back = f.Run();
  CHECK(std::count(back.resolved_finding_ids.begin(), back.resolved_finding_ids.end(), node_id) ==
        1);
  CHECK(std::count(back.resolved_finding_ids.begin(), back.resolved_finding_ids.end(), ha_id) == 1);
}

}  // namespace
}  // namespace pulse::testing::patrol
