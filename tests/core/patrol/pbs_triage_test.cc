// The Proxmox Backup Server triage rules (docs/patrol.md, "Proxmox Backup Server rules"): a
// datastore nearly full, a failed garbage collection / verification / prune job or a snapshot
// that failed verification, and a backup group whose newest snapshot is older than allowed —
// as pure rules over the facts the proxmox-backup source reports.
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

std::vector<core::FindingReport> Triage(const core::FleetResource& r, Facts facts) {
  core::FleetStatus s;
  s.resource_id = r.id;
  s.status = r.status;
  s.summary = "listed";
  s.facts = std::move(facts);
  return core::TriageResource(r, s, std::nullopt);
}

Keys KeysOf(const std::vector<core::FindingReport>& reports) {
  Keys out;
  for (const core::FindingReport& r : reports) {
    out.push_back(r.key);
  }
  return out;
}

const core::FleetResource kStore =
    Res("datastore:pbs/main", "datastore", "main", "available", "pbs:pbs");
const core::FleetResource kGroup =
    Res("backup-group:pbs/main/vm/101", "backup-group", "vm/101 on main", "stale");

TEST_CASE("a PBS datastore at the storage threshold is nearly full, at 95 % critical",
          "[core][patrol][triage][pbs]") {
  CHECK(Triage(kStore, {{"usage_pct", "84.9"}}).empty());
  std::vector<core::FindingReport> warn = Triage(kStore, {{"usage_pct", "85.0"}});
  REQUIRE(KeysOf(warn) == Keys{"pbs-datastore-full"});
  CHECK(warn[0].severity == Severity::kWarning);
  CHECK(warn[0].category == Category::kCapacity);
  CHECK(warn[0].resource_id == "datastore:pbs/main");
  std::vector<core::FindingReport> full = Triage(kStore, {{"usage_pct", "96.5"}});
  REQUIRE(KeysOf(full) == Keys{"pbs-datastore-full"});
  CHECK(full[0].severity == Severity::kCritical);
  CHECK(full[0].evidence.find("usage_pct=96.5") != std::string::npos);
  // An unreadable datastore reports no usage: no guess.
  CHECK(Triage(kStore, {{"error", "datastore is not mounted"}}).empty());
}

TEST_CASE("a failed PBS job or verification is a backup finding naming it",
          "[core][patrol][triage][pbs]") {
  CHECK(Triage(kStore, {{"gc_status", "OK"},
                        {"verify_job_status", "WARNINGS: 2"},
                        {"prune_job_status", "unknown"},
                        {"failed_verifications", "0"}})
            .empty());
  std::vector<core::FindingReport> r =
      Triage(kStore, {{"gc_status", "OK"}, {"verify_job_status", "verification failed"}});
  REQUIRE(KeysOf(r) == Keys{"pbs-job-failed"});
  CHECK(r[0].category == Category::kBackup);
  CHECK(r[0].severity == Severity::kWarning);
  CHECK(r[0].description.find("verify_job_status=verification failed") != std::string::npos);
  r = Triage(kStore, {{"prune_job_status", "prune failed: EIO"}, {"failed_verifications", "2"}});
  REQUIRE(KeysOf(r) == Keys{"pbs-job-failed"});
  CHECK(r[0].description.find("prune_job_status=prune failed: EIO") != std::string::npos);
  CHECK(r[0].description.find("failed_verifications=2") != std::string::npos);
  CHECK(KeysOf(Triage(kStore, {{"gc_status", "TASK ERROR: no space left on device"}})) ==
        Keys{"pbs-job-failed"});
}

TEST_CASE("a backup older than its allowed age is stale, past twice that critical",
          "[core][patrol][triage][pbs]") {
  const Facts base = {{"guest", "vm:101"}, {"backup_max_age_seconds", "93600"}};
  Facts fresh = base;
  fresh["last_backup_age_seconds"] = "93600";
  CHECK(Triage(kGroup, fresh).empty());
  Facts late = base;
  late["last_backup_age_seconds"] = "93601";
  std::vector<core::FindingReport> r = Triage(kGroup, late);
  REQUIRE(KeysOf(r) == Keys{"pbs-backup-stale"});
  CHECK(r[0].severity == Severity::kWarning);
  CHECK(r[0].category == Category::kBackup);
  CHECK(r[0].title.find("vm:101") != std::string::npos);
  Facts old = base;
  old["last_backup_age_seconds"] = "259200";
  r = Triage(kGroup, old);
  REQUIRE(KeysOf(r) == Keys{"pbs-backup-stale"});
  CHECK(r[0].severity == Severity::kCritical);
  // Without an allowed age (or with a broken one) nothing is judged.
  CHECK(Triage(kGroup, {{"last_backup_age_seconds", "999999"}}).empty());
  CHECK(Triage(kGroup, {{"last_backup_age_seconds", "999999"}, {"backup_max_age_seconds", "x"}})
            .empty());
  // The same facts on another type are not a backup group's.
  CHECK(Triage(Res("vm:101", "vm", "web", "running"), old).empty());
}

TEST_CASE("the PBS keys are triage keys the verifier can re-check", "[core][patrol][triage][pbs]") {
  CHECK(core::IsTriageKey("pbs-datastore-full"));
  CHECK(core::IsTriageKey("pbs-job-failed"));
  CHECK(core::IsTriageKey("pbs-backup-stale"));
  CHECK_FALSE(core::IsTriageKey("pbs-other"));
}

}  // namespace
}  // namespace pulse::testing::patrol
