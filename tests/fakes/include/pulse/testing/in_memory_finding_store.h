// InMemoryFindingStore: a FindingStore held in memory, faithful to the port's contract
// (tests/contracts/finding_store_contract.h). By default every record is encoded to JSON and
// decoded back when it is written, like a trip through a real store, so a field the codec loses
// is caught by every service test; reads copy the decoded record (decoding every record on
// every List made a test that reports a thousand findings quadratic in JSON parsing). Thread-safe
// (one absl::Mutex). Test hooks: FailNext injects one error into any or one named method;
// SetBeforePut runs a callback before the next Put commits (to simulate a concurrent writer).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/findings/finding_json.h"
#include "pulse/core/model/suppression_rule.h"
#include "pulse/core/ports/finding_store.h"

namespace pulse::testing {

class InMemoryFindingStore final : public core::FindingStore {
 public:
  struct Options {
    // Store the JSON encoding and decode it on every read (a persistence round trip).
    bool round_trip_json = true;
  };

  InMemoryFindingStore() = default;
  explicit InMemoryFindingStore(Options options) : options_(options) {}

  absl::StatusOr<core::StoredFinding> Get(std::string_view id) const override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("Get"); !injected.ok()) {
      return injected;
    }
    auto it = findings_.find(std::string(id));
    if (it == findings_.end()) {
      return absl::NotFoundError("no finding " + std::string(id));
    }
    return Load(it->second);
  }

  absl::StatusOr<std::vector<core::StoredFinding>> GetBatch(
      const std::vector<std::string>& ids) const override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("GetBatch"); !injected.ok()) {
      return injected;
    }
    ++get_batch_count_;
    std::vector<core::StoredFinding> out;
    out.reserve(ids.size());
    for (const std::string& id : ids) {
      auto it = findings_.find(id);
      if (it != findings_.end()) {
        out.push_back(Load(it->second));
      }
    }
    return out;
  }

  absl::StatusOr<std::vector<core::StoredFinding>> List(
      const core::FindingFilter& filter) const override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("List"); !injected.ok()) {
      return injected;
    }
    std::vector<core::StoredFinding> out;
    for (const auto& [id, record] : findings_) {
      const core::Finding& f = record.finding;
      if (filter.resource_id.has_value() && f.resource_id != *filter.resource_id) {
        continue;
      }
      if (filter.category.has_value() && f.category != *filter.category) {
        continue;
      }
      if (filter.active_at.has_value() && !core::IsActive(f, *filter.active_at)) {
        continue;
      }
      if (filter.related_to.has_value() && !core::MatchesRelatedResource(*filter.related_to, f)) {
        continue;
      }
      out.push_back(Load(record));
    }
    return out;
  }

  absl::StatusOr<std::vector<core::StoredFinding>> ListPage(
      const core::FindingPageQuery& query) const override {
    if (query.after.has_value() && query.after->id.empty()) {
      return absl::InvalidArgumentError("page position without an id");
    }
    absl::StatusOr<std::vector<core::StoredFinding>> all = List(core::FindingFilter{});
    if (!all.ok()) {
      return all.status();
    }
    std::vector<core::StoredFinding> out;
    for (core::StoredFinding& s : *all) {
      if (!core::InFindingPage(query, s.finding)) {
        continue;
      }
      if (query.after.has_value() &&
          !core::FindingPageOrder(*query.after, core::PagePositionOf(s.finding))) {
        continue;
      }
      out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(),
              [](const core::StoredFinding& a, const core::StoredFinding& b) {
                return core::FindingPageOrder(core::PagePositionOf(a.finding),
                                              core::PagePositionOf(b.finding));
              });
    if (out.size() > query.limit) {
      out.resize(query.limit);
    }
    return out;
  }

  absl::StatusOr<std::vector<core::ActiveFindingCounts>> CountActiveByResource(
      absl::Time now, const std::vector<std::string>& resource_ids) const override {
    const std::set<std::string> wanted(resource_ids.begin(), resource_ids.end());
    core::FindingFilter active;
    active.active_at = now;
    absl::StatusOr<std::vector<core::StoredFinding>> all = List(active);
    if (!all.ok()) {
      return all.status();
    }
    std::map<std::string, core::ActiveFindingCounts> counts;
    for (const core::StoredFinding& s : *all) {
      if (wanted.count(s.finding.resource_id) == 0) {
        continue;
      }
      core::ActiveFindingCounts& c = counts[s.finding.resource_id];
      c.resource_id = s.finding.resource_id;
      switch (s.finding.severity) {
        case core::Severity::kCritical:
          ++c.critical;
          break;
        case core::Severity::kWarning:
          ++c.warning;
          break;
        case core::Severity::kWatch:
          ++c.watch;
          break;
        case core::Severity::kInfo:
          ++c.info;
          break;
      }
    }
    std::vector<core::ActiveFindingCounts> out;
    out.reserve(counts.size());
    for (auto& [id, c] : counts) {
      out.push_back(std::move(c));
    }
    return out;
  }

  absl::StatusOr<std::vector<core::ActiveFindingKey>> ListActiveKeys(
      absl::Time now) const override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("ListActiveKeys"); !injected.ok()) {
      return injected;
    }
    std::vector<core::ActiveFindingKey> out;
    for (const auto& [id, record] : findings_) {
      const core::Finding& f = record.finding;
      if (core::IsActive(f, now)) {
        out.push_back(core::ActiveFindingKey{f.id, f.resource_id, f.severity});
      }
    }
    return out;
  }

  absl::StatusOr<std::vector<core::StoredFinding>> ListAwaitingFixOutcome() const override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("ListAwaitingFixOutcome"); !injected.ok()) {
      return injected;
    }
    std::vector<core::StoredFinding> out;
    for (const auto& [id, record] : findings_) {
      if (core::AwaitsFixOutcome(record.finding)) {
        out.push_back(Load(record));
      }
    }
    return out;
  }

  absl::StatusOr<core::PatrolFindingCounts> CountPatrolFindings(absl::Time since,
                                                                absl::Time now) const override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("CountPatrolFindings"); !injected.ok()) {
      return injected;
    }
    core::PatrolFindingCounts c;
    for (const auto& [id, record] : findings_) {
      const core::Finding& f = record.finding;
      if (core::IsRuntimeFinding(f)) {
        continue;
      }
      const bool issue =
          core::SeverityRank(f.severity) >= core::SeverityRank(core::Severity::kWarning);
      if (f.last_seen_at >= since) {
        ++c.seen_since;
        c.issues_seen_since += issue ? 1 : 0;
      }
      c.active_issues += issue && core::IsActive(f, now) ? 1 : 0;
    }
    return c;
  }

  absl::StatusOr<std::int64_t> Put(const core::Finding& finding,
                                   std::int64_t expected_version) override {
    RunBeforePut();
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("Put"); !injected.ok()) {
      return injected;
    }
    return PutLocked(finding, expected_version);
  }

  absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> PutBatch(
      const std::vector<core::FindingWrite>& writes) override {
    RunBeforePut();
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("PutBatch"); !injected.ok()) {
      return injected;  // a store failure: nothing of the batch is written
    }
    std::vector<absl::StatusOr<std::int64_t>> results;
    results.reserve(writes.size());
    for (const core::FindingWrite& write : writes) {
      results.push_back(PutLocked(write.finding, write.expected_version));
    }
    ++batch_count_;
    return results;
  }

  absl::StatusOr<std::vector<core::SuppressionRule>> ListSuppressionRules() const override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("ListSuppressionRules"); !injected.ok()) {
      return injected;
    }
    std::vector<core::SuppressionRule> out;
    for (const auto& [id, json] : rules_) {
      absl::StatusOr<core::SuppressionRule> rule = core::SuppressionRuleFromJson(json);
      if (!rule.ok()) {
        return absl::InternalError("stored rule does not decode: " +
                                   std::string(rule.status().message()));
      }
      out.push_back(*std::move(rule));
    }
    return out;
  }

  absl::Status PutSuppressionRule(const core::SuppressionRule& rule) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("PutSuppressionRule"); !injected.ok()) {
      return injected;
    }
    if (rule.id.empty()) {
      return absl::InvalidArgumentError("rule id is empty");
    }
    rules_[rule.id] = core::SuppressionRuleToJson(rule);
    return absl::OkStatus();
  }

  absl::Status DeleteSuppressionRule(std::string_view id) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status injected = TakeInjected("DeleteSuppressionRule"); !injected.ok()) {
      return injected;
    }
    if (rules_.erase(std::string(id)) == 0) {
      return absl::NotFoundError("no suppression rule " + std::string(id));
    }
    return absl::OkStatus();
  }

  // --- Test hooks ---

  // The next call of `method` ("Get", "GetBatch", "List", "ListActiveKeys",
  // "ListAwaitingFixOutcome", "CountPatrolFindings", "Put", "PutBatch", "ListSuppressionRules",
  // "PutSuppressionRule", "DeleteSuppressionRule"; empty = any method) returns `status` instead of
  // doing its work.
  void FailNext(absl::Status status, std::string method = "") {
    absl::MutexLock lock(&mu_);
    injected_ = std::move(status);
    injected_method_ = std::move(method);
  }

  // Runs `hook` (once) at the start of the next Put or PutBatch, before its version checks.
  void SetBeforePut(std::function<void()> hook) {
    absl::MutexLock lock(&mu_);
    before_put_ = std::move(hook);
  }

  // Successful writes so far (Put, and each write of a PutBatch).
  std::int64_t put_count() const {
    absl::MutexLock lock(&mu_);
    return put_count_;
  }

  // PutBatch calls that reached the store (an injected failure aside).
  std::int64_t batch_count() const {
    absl::MutexLock lock(&mu_);
    return batch_count_;
  }

  // GetBatch calls that reached the store (an injected failure aside).
  std::int64_t get_batch_count() const {
    absl::MutexLock lock(&mu_);
    return get_batch_count_;
  }

  std::size_t size() const {
    absl::MutexLock lock(&mu_);
    return findings_.size();
  }

 private:
  struct Record {
    std::int64_t version = 0;
    core::Finding finding;  // as decoded from its JSON encoding when round-tripping
  };

  static core::StoredFinding Load(const Record& record) {
    core::StoredFinding stored;
    stored.version = record.version;
    stored.finding = record.finding;
    return stored;
  }

  void RunBeforePut() ABSL_LOCKS_EXCLUDED(mu_) {
    std::function<void()> hook;
    {
      absl::MutexLock lock(&mu_);
      hook = std::exchange(before_put_, nullptr);
    }
    if (hook) {
      hook();  // outside the lock: it may write through this store
    }
  }

  absl::StatusOr<std::int64_t> PutLocked(const core::Finding& finding,
                                         std::int64_t expected_version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finding.id.empty()) {
      return absl::InvalidArgumentError("finding id is empty");
    }
    if (expected_version < 0) {
      return absl::InvalidArgumentError("expected_version is negative");
    }
    auto it = findings_.find(finding.id);
    const std::int64_t current = it == findings_.end() ? 0 : it->second.version;
    if (current != expected_version) {
      return absl::AbortedError("finding " + finding.id + " is at version " +
                                std::to_string(current) + ", not " +
                                std::to_string(expected_version));
    }
    Record record;
    record.version = current + 1;
    if (options_.round_trip_json) {
      absl::StatusOr<core::Finding> decoded = core::FindingFromJson(core::FindingToJson(finding));
      if (!decoded.ok()) {
        return absl::InternalError("finding does not decode from its own encoding: " +
                                   std::string(decoded.status().message()));
      }
      record.finding = *std::move(decoded);
    } else {
      record.finding = finding;
    }
    findings_[finding.id] = std::move(record);
    ++put_count_;
    return current + 1;
  }

  absl::Status TakeInjected(std::string_view method) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!injected_.has_value() || (!injected_method_.empty() && injected_method_ != method)) {
      return absl::OkStatus();
    }
    absl::Status status = std::move(*injected_);
    injected_.reset();
    return status;
  }

  const Options options_{};
  mutable absl::Mutex mu_;
  std::map<std::string, Record> findings_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> rules_ ABSL_GUARDED_BY(mu_);
  mutable std::optional<absl::Status> injected_ ABSL_GUARDED_BY(mu_);
  std::string injected_method_ ABSL_GUARDED_BY(mu_);
  std::function<void()> before_put_ ABSL_GUARDED_BY(mu_);
  std::int64_t put_count_ ABSL_GUARDED_BY(mu_) = 0;
  std::int64_t batch_count_ ABSL_GUARDED_BY(mu_) = 0;
  mutable std::int64_t get_batch_count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pulse::testing
