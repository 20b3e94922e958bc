#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "findings_test_support.h"
#include "pulse/core/findings/finding_identity.h"

namespace pulse::core::findings_test {
namespace {

using E = LifecycleEventType;

TEST_CASE("a new report creates an active finding with one detected event", "[core][findings]") {
  Fixture fx;
  auto outcome = fx.service.Report(Fixture::MakeReport());
  REQUIRE(outcome.ok());
  CHECK(outcome->is_new);
  CHECK(outcome->disposition == ReportDisposition::kCreated);
  CHECK(outcome->events == std::vector<E>{E::kDetected});
  CHECK(outcome->finding_id == FindingIdFor("vm:100", Category::kPerformance, "cpu-high"));
  CHECK(outcome->finding_id == "e555c612e91fa75b");
  const Finding f = fx.Stored(outcome->finding_id);
  CHECK(f.key == "cpu-high");
  CHECK(f.detected_at == fx.clock.Now());
  CHECK(f.last_seen_at == fx.clock.Now());
  CHECK(f.times_raised == 1);
  CHECK(f.source == "ai-analysis");
  CHECK(f.loop_state == LoopState::kDetected);
  CHECK(IsActive(f, fx.clock.Now()));
  REQUIRE(f.lifecycle.size() == 1);
  CHECK(f.lifecycle[0].type == E::kDetected);
  CHECK(f.lifecycle[0].to == LoopState::kDetected);
}

TEST_CASE("equivalent keys and a missing key map to one stable id", "[core][findings]") {
  Fixture fx;
  FindingReport a = Fixture::MakeReport();
  a.key = "  High_CPU ";  // normalizes and aliases to cpu-high
  FindingReport b = Fixture::MakeReport();
  b.key = "cpu-high";
  CHECK(fx.ReportOk(a) == fx.ReportOk(b));
  FindingReport untitled = Fixture::MakeReport("vm:7", Category::kBackup, "", "Backup Job Failed");
  const std::string id = fx.ReportOk(untitled);
  CHECK(id == FindingIdFor("vm:7", Category::kBackup, "backup-job-failed"));
  CHECK(fx.Stored(id).key == "backup-job-failed");
}

TEST_CASE("an identical re-detection is a heartbeat without an event", "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  fx.clock.Advance(absl::Minutes(15));
  auto again = fx.service.Report(Fixture::MakeReport());
  REQUIRE(again.ok());
  CHECK_FALSE(again->is_new);
  CHECK(again->disposition == ReportDisposition::kHeartbeat);
  CHECK(again->events.empty());
  const Finding f = fx.Stored(id);
  CHECK(f.times_raised == 2);
  CHECK(f.last_seen_at == fx.clock.Now());
  CHECK(f.detected_at == fx.clock.Now() - absl::Minutes(15));
  CHECK(EventTypes(f) == std::vector<E>{E::kDetected});
}

TEST_CASE("a rephrased re-detection refreshes the text without an event", "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  FindingReport rephrased = Fixture::MakeReport();
  rephrased.title = "CPU usage high on web-1";
  rephrased.severity = Severity::kCritical;
  rephrased.evidence = "cpu 99%";
  auto outcome = fx.service.Report(rephrased);
  REQUIRE(outcome.ok());
  CHECK(outcome->disposition == ReportDisposition::kHeartbeat);
  const Finding f = fx.Stored(id);
  CHECK(f.title == "CPU usage high on web-1");
  CHECK(f.severity == Severity::kCritical);
  CHECK(f.evidence == "cpu 99%");
  CHECK(EventTypes(f) == std::vector<E>{E::kDetected});
}

TEST_CASE("a same-id report with an unrelated title records content_replaced", "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  FindingReport replaced = Fixture::MakeReport();
  replaced.title = "Kernel soft lockups logged";
  auto outcome = fx.service.Report(replaced);
  REQUIRE(outcome.ok());
  CHECK(outcome->disposition == ReportDisposition::kContentReplaced);
  CHECK(outcome->events == std::vector<E>{E::kContentReplaced});
  const Finding f = fx.Stored(id);
  CHECK(f.title == "Kernel soft lockups logged");
  REQUIRE(f.lifecycle.size() == 2);
  CHECK(f.lifecycle[1].metadata.at("previous_title") == "High CPU usage on web-1");
  CHECK(f.lifecycle[1].metadata.at("new_title") == "Kernel soft lockups logged");
  CHECK(f.times_raised == 2);
}

TEST_CASE("re-detecting a resolved finding regresses it as a new occurrence", "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  REQUIRE(fx.service.Acknowledge(id).ok());
  Finding with_record = fx.Stored(id);
  with_record.investigation_session_id = "inv-1";
  with_record.investigation_status = InvestigationStatus::kCompleted;
  with_record.investigation_attempts = 2;
  with_record.investigation_record_json = R"({"proposed_fix":{"description":"Restart nginx"}})";
  REQUIRE(fx.store.Put(with_record, fx.store.Get(id)->version).ok());
  REQUIRE(fx.service.Resolve(id, "fixed by hand").ok());
  fx.clock.Advance(absl::Hours(3));

  auto outcome = fx.service.Report(Fixture::MakeReport());
  REQUIRE(outcome.ok());
  CHECK(outcome->disposition == ReportDisposition::kRegressed);
  CHECK(outcome->events == std::vector<E>{E::kRegressed});
  const Finding f = fx.Stored(id);
  CHECK(IsActive(f, fx.clock.Now()));
  CHECK_FALSE(f.resolved_at.has_value());
  CHECK_FALSE(f.acknowledged_at.has_value());
  CHECK(f.regression_count == 1);
  CHECK(f.last_regression_at == fx.clock.Now());
  CHECK(f.previous_resolved_fix_summary == "Restart nginx");
  CHECK(f.investigation_session_id.empty());
  CHECK_FALSE(f.investigation_status.has_value());
  CHECK(f.investigation_attempts == 0);
  CHECK(f.investigation_record_json.empty());
  CHECK(f.loop_state == LoopState::kDetected);
  const LifecycleEvent& regressed = f.lifecycle.back();
  CHECK(regressed.from == LoopState::kResolved);
  CHECK(regressed.to == LoopState::kDetected);
  CHECK(regressed.metadata.at("previous_acknowledged") == "true");
  CHECK(regressed.metadata.count("previous_resolved_at") == 1);
}

TEST_CASE("a regression with an unrelated title records content_replaced and regressed",
          "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  REQUIRE(fx.service.Resolve(id, "").ok());
  FindingReport replaced = Fixture::MakeReport();
  replaced.title = "Kernel soft lockups logged";
  auto outcome = fx.service.Report(replaced);
  REQUIRE(outcome.ok());
  CHECK(outcome->disposition == ReportDisposition::kRegressed);
  CHECK(outcome->events == std::vector<E>{E::kContentReplaced, E::kRegressed});
  CHECK(EventTypes(fx.Stored(id)) ==
        std::vector<E>{E::kDetected, E::kResolved, E::kContentReplaced, E::kRegressed});
}

TEST_CASE("a report without evidence or recommendation is refused and nothing is stored",
          "[core][findings]") {
  auto refused = [](FindingReport r, const std::string& field) {
    Fixture fx;
    auto outcome = fx.service.Report(r);
    INFO(field);
    REQUIRE_FALSE(outcome.ok());
    CHECK(absl::IsInvalidArgument(outcome.status()));
    auto error = ToFindingAgentError(outcome.status());
    REQUIRE(error.has_value());
    CHECK(error->code == AgentErrorCode::kInvalidFindingRequest);
    CHECK(error->details.count(field) == 1);
    CHECK(fx.store.size() == 0);
    CHECK(fx.store.put_count() == 0);
  };
  FindingReport r = Fixture::MakeReport();
  r.evidence = "   ";
  refused(r, "evidence");
  r = Fixture::MakeReport();
  r.recommendation.clear();
  refused(r, "recommendation");
  r = Fixture::MakeReport();
  r.title.clear();
  refused(r, "title");
  r = Fixture::MakeReport();
  r.description.clear();
  refused(r, "description");
  r = Fixture::MakeReport();
  r.resource_id = "\t";
  refused(r, "resource_id");
  r = Fixture::MakeReport();
  r.title = std::string(kMaxReportTitleBytes + 1, 't');
  refused(r, "title");
  r = Fixture::MakeReport();
  r.evidence = "bad \xC3(";
  refused(r, "evidence");
  r = Fixture::MakeReport();
  r.category = static_cast<Category>(99);
  refused(r, "category");
  r = Fixture::MakeReport();
  r.severity = static_cast<Severity>(-1);
  refused(r, "severity");
}

TEST_CASE("a suppression rule blocks new findings for its resource and category",
          "[core][findings]") {
  Fixture fx;
  SuppressionRuleRequest rule;
  rule.resource_id = "vm:100";
  rule.category = Category::kPerformance;
  rule.description = "batch host, CPU is always high";
  REQUIRE(fx.service.AddSuppressionRule(rule).ok());
  auto blocked = fx.service.Report(Fixture::MakeReport());
  REQUIRE(blocked.ok());
  CHECK(blocked->disposition == ReportDisposition::kBlockedBySuppressionRule);
  CHECK_FALSE(blocked->is_new);
  CHECK(fx.store.size() == 0);
  // Other categories on the resource and other resources still report.
  CHECK(fx.service.Report(Fixture::MakeReport("vm:100", Category::kSecurity, "ssh-open"))
            ->disposition == ReportDisposition::kCreated);
  CHECK(fx.service.Report(Fixture::MakeReport("vm:101"))->disposition ==
        ReportDisposition::kCreated);
}

TEST_CASE("a broad suppression rule blocks every match", "[core][findings]") {
  Fixture fx;
  SuppressionRuleRequest rule;
  rule.category = Category::kSecurity;
  rule.description = "security is handled elsewhere";
  rule.allow_broad_scope = true;
  REQUIRE(fx.service.AddSuppressionRule(rule).ok());
  CHECK(fx.service.Report(Fixture::MakeReport("vm:1", Category::kSecurity, "a"))->disposition ==
        ReportDisposition::kBlockedBySuppressionRule);
  CHECK(fx.service.Report(Fixture::MakeReport("vm:2", Category::kSecurity, "b"))->disposition ==
        ReportDisposition::kBlockedBySuppressionRule);
  CHECK(fx.service.Report(Fixture::MakeReport("vm:2", Category::kBackup, "c"))->disposition ==
        ReportDisposition::kCreated);
}

TEST_CASE("a suppressed finding seen again records one seen_while_suppressed", "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  REQUIRE(fx.service.Suppress(id).ok());
  for (int i = 0; i < 3; ++i) {
    fx.clock.Advance(absl::Minutes(15));
    auto outcome = fx.service.Report(Fixture::MakeReport());
    REQUIRE(outcome.ok());
    CHECK(outcome->disposition == ReportDisposition::kSeenWhileSuppressed);
    CHECK(outcome->events == (i == 0 ? std::vector<E>{E::kSeenWhileSuppressed} : std::vector<E>{}));
  }
  const Finding f = fx.Stored(id);
  CHECK(f.suppressed);
  CHECK(f.times_raised == 4);
  CHECK(f.last_seen_at == fx.clock.Now());
  CHECK(EventTypes(f) == std::vector<E>{E::kDetected, E::kSuppressed, E::kSeenWhileSuppressed});
}

TEST_CASE("a dismissed finding wakes only when its severity escalates", "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  REQUIRE(fx.service.Dismiss(id, DismissReason::kExpectedBehavior, "nightly batch").ok());
  auto same = fx.service.Report(Fixture::MakeReport());
  REQUIRE(same.ok());
  CHECK(same->disposition == ReportDisposition::kSeenWhileSuppressed);
  CHECK_FALSE(IsActive(fx.Stored(id), fx.clock.Now()));
  FindingReport worse = Fixture::MakeReport();
  worse.severity = Severity::kCritical;
  auto woken = fx.service.Report(worse);
  REQUIRE(woken.ok());
  CHECK(woken->disposition == ReportDisposition::kReactivated);
  CHECK(woken->events == std::vector<E>{E::kUndismissed});
  const Finding f = fx.Stored(id);
  CHECK(IsActive(f, fx.clock.Now()));
  CHECK(f.severity == Severity::kCritical);
  CHECK(f.user_note == "nightly batch");  // a woken finding keeps the operator's note
  CHECK_FALSE(f.acknowledged_at.has_value());
  CHECK(f.lifecycle.back().metadata.at("cause") == "severity_escalated");
  CHECK(f.lifecycle.back().metadata.at("previous_severity") == "warning");
}

TEST_CASE("a will-fix-later finding re-detected after its reminder is reminded",
          "[core][findings]") {
  Fixture fx;
  const std::string id = fx.ReportOk(Fixture::MakeReport());
  REQUIRE(fx.service.Dismiss(id, DismissReason::kWillFixLater, "after the migration").ok());
  fx.clock.Advance(kWillFixLaterRemindAfter - absl::Seconds(1));
  CHECK(fx.service.Report(Fixture::MakeReport())->disposition ==
        ReportDisposition::kSeenWhileSuppressed);
  fx.clock.Advance(absl::Seconds(1));
  auto outcome = fx.service.Report(Fixture::MakeReport());
  REQUIRE(outcome.ok());
  CHECK(outcome->disposition == ReportDisposition::kReactivated);
  CHECK(outcome->events == std::vector<E>{E::kReminded});
  const Finding f = fx.Stored(id);
  CHECK(IsActive(f, fx.clock.Now()));
  CHECK(f.remind_count == 1);
  CHECK(f.user_note == "after the migration");
  CHECK_FALSE(f.remind_at.has_value());
}

FindingReport PoolReport(std::string resource_id, Category category, std::string key,
                         std::string title, std::string description) {
  FindingReport r =
      Fixture::MakeReport(std::move(resource_id), category, std::move(key), std::move(title));
  r.resource_name = "local-zfs";
  r.resource_type = "storage";
  r.description = std::move(description);
  return r;
}

TEST_CASE("an equivalent active sibling absorbs a new report once per duplicate id",
          "[core][findings]") {
  Fixture fx;
  const std::string pool_id =
      fx.ReportOk(PoolReport("storage:pve1:local-zfs", Category::kCapacity, "pool-usage-high",
                             "Pool local-zfs nearly full", "Usage at 91%, 180 GB free"));
  FindingReport broader =
      PoolReport("storage:pve1:local-zfs", Category::kReliability, "storage-risk",
                 "Storage local-zfs at risk", "Pool usage 92% and growing");
  broader.severity = Severity::kCritical;
  for (int i = 0; i < 2; ++i) {
    auto outcome = fx.service.Report(broader);
    REQUIRE(outcome.ok());
    CHECK(outcome->disposition == ReportDisposition::kMerged);
    CHECK(outcome->finding_id == pool_id);
    CHECK(outcome->reported_id ==
          FindingIdFor("storage:pve1:local-zfs", Category::kReliability, "storage-risk"));
    CHECK(outcome->events == (i == 0 ? std::vector<E>{E::kDuplicateMerged} : std::vector<E>{}));
  }
  CHECK(fx.store.size() == 1);
  const Finding f = fx.Stored(pool_id);
  CHECK(f.severity == Severity::kCritical);  // the merge keeps the highest severity
  CHECK(f.title == "Storage local-zfs at risk");
  CHECK(f.times_raised == 3);
  CHECK(f.category == Category::kCapacity);
  const LifecycleEvent& merged = f.lifecycle.back();
  CHECK(merged.type == E::kDuplicateMerged);
  CHECK(merged.metadata.at("duplicate_id") ==
        FindingIdFor("storage:pve1:local-zfs", Category::kReliability, "storage-risk"));
  CHECK(merged.metadata.at("duplicate_key") == "storage-risk");
  CHECK(merged.metadata.at("duplicate_severity") == "critical");
}

TEST_CASE(
    "siblings are still found by resource id and storage identity, not by name, among many "
    "unrelated findings",
    "[core][findings]") {
  Fixture fx;
  // Unrelated active findings, storage ones included, in every category.
  for (int i = 0; i < 300; ++i) {
    FindingReport other =
        Fixture::MakeReport("vm:" + std::to_string(1000 + i), static_cast<Category>(i % 6),
                            "cpu-high", "High CPU usage on vm " + std::to_string(i));
    other.resource_name = "host-" + std::to_string(i);
    if (i % 10 == 0) {
      other = PoolReport("storage:pve9:tank" + std::to_string(i), Category::kCapacity,
                         "pool-usage-high", "Pool tank" + std::to_string(i) + " nearly full",
                         "Usage at 91%");
      other.resource_name = "tank" + std::to_string(i);
    }
    REQUIRE(fx.service.Report(other).ok());
  }
  const std::string cpu_id = fx.ReportOk(Fixture::MakeReport("vm:100"));
  FindingReport same_resource = Fixture::MakeReport("vm:100", Category::kPerformance,
                                                    "cpu-saturation", "High CPU usage on web-1");
  auto by_id = fx.service.Report(same_resource);
  REQUIRE(by_id.ok());
  CHECK(by_id->disposition == ReportDisposition::kMerged);
  CHECK(by_id->finding_id == cpu_id);

  // A display name alone relates nothing: another resource id with the same name is another
  // resource (every node has a `local-zfs`), so its report is a finding of its own.
  FindingReport named =
      Fixture::MakeReport("vm:200", Category::kPerformance, "mem-high", "Memory pressure on db-1");
  named.resource_name = "DB-1";
  const std::string mem_id = fx.ReportOk(named);
  FindingReport same_name =
      Fixture::MakeReport("vm:201", Category::kPerformance, "mem", "Memory pressure on db-1");
  same_name.resource_name = "db-1";
  auto by_name = fx.service.Report(same_name);
  REQUIRE(by_name.ok());
  CHECK(by_name->disposition == ReportDisposition::kCreated);
  CHECK(by_name->finding_id != mem_id);

  const std::string pool_id =
      fx.ReportOk(PoolReport("storage:pve1:local-zfs", Category::kCapacity, "pool-usage-high",
                             "Pool local-zfs nearly full", "Usage at 91%, 180 GB free"));
  FindingReport same_storage = Fixture::MakeReport("pool:pve1/local-zfs", Category::kCapacity,
                                                   "zfs-full", "Pool local-zfs nearly full");
  same_storage.resource_type = "storage";
  auto by_storage = fx.service.Report(same_storage);
  REQUIRE(by_storage.ok());
  CHECK(by_storage->disposition == ReportDisposition::kMerged);
  CHECK(by_storage->finding_id == pool_id);

  // And a report related to nothing is created.
  auto fresh = fx.service.Report(Fixture::MakeReport("vm:999"));
  REQUIRE(fresh.ok());
  CHECK(fresh->disposition == ReportDisposition::kCreated);
}

TEST_CASE("the same names on a second node are reported as findings of their own",
          "[core][findings][identity]") {
  Fixture fx;
  // The demo fleet's pools: pve1's fills, pve2's sits at 85 %; both are called local-zfs.
  const std::string pve1 =
      fx.ReportOk(PoolReport("storage:pve1/local-zfs", Category::kCapacity, "storage-capacity",
                             "Storage local-zfs is filling up", "local-zfs is 88.0% used"));
  auto pve2 = fx.service.Report(PoolReport("storage:pve2/local-zfs", Category::kCapacity,
                                           "storage-capacity", "Storage local-zfs is nearly full",
                                           "local-zfs is 85.1% used"));
  REQUIRE(pve2.ok());
  CHECK(pve2->disposition == ReportDisposition::kCreated);
  CHECK(pve2->finding_id ==
        FindingIdFor("storage:pve2/local-zfs", Category::kCapacity, "storage-capacity"));
  CHECK(pve2->finding_id != pve1);
  // nginx crash-looping on two nodes, reported in the same words.
  for (const char* node : {"pve1", "pve2"}) {
    FindingReport nginx =
        Fixture::MakeReport(absl::StrCat("service:", node, "/nginx"), Category::kReliability,
                            "service-crash-loop", "Service nginx is crash-looping");
    nginx.resource_name = "nginx";
    nginx.resource_type = "service";
    nginx.node = node;
    auto outcome = fx.service.Report(nginx);
    REQUIRE(outcome.ok());
    CHECK(outcome->disposition == ReportDisposition::kCreated);
  }
  CHECK(fx.store.size() == 4);
  // The pve1 pool was not touched by the pve2 report.
  const Finding first = fx.Stored(pve1);
  CHECK(first.times_raised == 1);
  CHECK(first.lifecycle.back().type == E::kDetected);
}

TEST_CASE("a lower-severity duplicate keeps the sibling's severity and text", "[core][findings]") {
  Fixture fx;
  FindingReport strong = PoolReport("storage:pve1:local-zfs", Category::kCapacity, "pool-full",
                                    "Pool local-zfs nearly full", "Usage at 97%");
  strong.severity = Severity::kCritical;
  const std::string id = fx.ReportOk(strong);
  FindingReport weak = PoolReport("storage:pve1:local-zfs", Category::kCapacity, "pool-usage",
                                  "Pool usage high", "Usage at 96% on local-zfs");
  weak.severity = Severity::kWatch;
  auto outcome = fx.service.Report(weak);
  REQUIRE(outcome.ok());
  CHECK(outcome->disposition == ReportDisposition::kMerged);
  const Finding f = fx.Stored(id);
  CHECK(f.severity == Severity::kCritical);
  CHECK(f.title == "Pool local-zfs nearly full");
}

TEST_CASE("distinct problems on one resource are not merged", "[core][findings]") {
  Fixture fx;
  fx.ReportOk(Fixture::MakeReport());
  auto memory = fx.service.Report(Fixture::MakeReport("vm:100", Category::kPerformance,
                                                      "memory-high", "High memory usage on web-1"));
  REQUIRE(memory.ok());
  CHECK(memory->disposition == ReportDisposition::kCreated);
  auto backup =
      fx.service.Report(PoolReport("storage:pve1:local-zfs", Category::kBackup, "backup-failed",
                                   "Backup to local-zfs failed", "No space left, pool 100% used"));
  REQUIRE(backup.ok());
  fx.ReportOk(PoolReport("storage:pve1:local-zfs", Category::kCapacity, "pool-full",
                         "Pool local-zfs full", "100% used"));
  CHECK(fx.store.size() == 4);
}

TEST_CASE("an inactive sibling is never a merge target", "[core][findings]") {
  Fixture fx;
  const std::string id =
      fx.ReportOk(PoolReport("storage:pve1:local-zfs", Category::kCapacity, "pool-usage-high",
                             "Pool local-zfs nearly full", "Usage at 91%"));
  REQUIRE(fx.service.Snooze(id, 4).ok());
  auto outcome =
      fx.service.Report(PoolReport("storage:pve1:local-zfs", Category::kReliability, "storage-risk",
                                   "Storage local-zfs at risk", "Pool usage 92%"));
  REQUIRE(outcome.ok());
  CHECK(outcome->disposition == ReportDisposition::kCreated);
}

TEST_CASE("a create that races a concurrent create becomes a heartbeat", "[core][findings]") {
  Fixture fx;
  const FindingReport report = Fixture::MakeReport();
  fx.store.SetBeforePut([&] {
    // Another writer creates the same finding between our read and our write.
    Finding other;
    other.id = FindingIdFor("vm:100", Category::kPerformance, "cpu-high");
    other.key = "cpu-high";
    other.category = Category::kPerformance;
    other.resource_id = "vm:100";
    other.title = report.title;
    other.detected_at = fx.clock.Now();
    other.last_seen_at = fx.clock.Now();
    other.times_raised = 1;
    REQUIRE(fx.store.Put(other, 0).ok());
  });
  auto outcome = fx.service.Report(report);
  REQUIRE(outcome.ok());
  CHECK(outcome->disposition == ReportDisposition::kHeartbeat);
  CHECK_FALSE(outcome->is_new);
  CHECK(fx.Stored(outcome->finding_id).times_raised == 2);
}

TEST_CASE("a store failure during a report reaches the caller as patrol_unavailable",
          "[core][findings]") {
  Fixture fx;
  fx.store.FailNext(absl::UnavailableError("disk gone"));
  auto outcome = fx.service.Report(Fixture::MakeReport());
  REQUIRE_FALSE(outcome.ok());
  CHECK(absl::IsUnavailable(outcome.status()));
  CHECK(CodeOf(outcome.status()) == AgentErrorCode::kPatrolUnavailable);
  CHECK(fx.store.size() == 0);
}

}  // namespace
}  // namespace pulse::core::findings_test
