// FakeFleet: a scriptable Fleet. Tests add resources with their current capability catalogue,
// relationships, statuses, logs, configs, metric series and read-only command outputs; script
// the dispatch receipt and the postcondition observation; inject an error per method; and count
// dispatches (every call and every distinct attempt that ran) and command runs. A dispatch hook
// runs inside Dispatch, outside the lock, so a test can block a dispatch in flight or change the
// fleet as the capability's effect; a metric read hook likewise delays or blocks
// ReadMetricHistory. Thread-safe.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <deque>
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
#include "absl/time/time.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::testing {

class FakeFleet final : public core::Fleet {
 public:
  enum class Method {
    kListResources,
    kGetResource,
    kGetTopology,
    kGetStatus,
    kReadLogs,
    kReadConfig,
    kReadMetricHistory,
    kListCapabilities,
    kDispatch,
    kObservePostcondition,
    kRunReadOnlyCommand,
  };

  FakeFleet() {
    receipt_.status = core::ExecutionStatus::kSucceeded;
    receipt_.summary = "done";
    receipt_.executor_id = "agent:fake";
    receipt_.executor_trust_domain = "agent";
    observation_.status = core::VerificationStatus::kConfirmed;
    observation_.observer_id = "observer:control-plane";
    observation_.observer_trust_domain = "control-plane";
    observation_.summary = "the intended state holds";
  }

  // ---- scripting ------------------------------------------------------------------------

  // Adds or replaces a resource and its current catalogue.
  void PutResource(core::FleetResource resource, std::vector<core::Capability> catalogue = {}) {
    absl::MutexLock lock(&mu_);
    const std::string id = resource.id;
    resources_[id] = std::move(resource);
    catalogues_[id] = std::move(catalogue);
  }
  void RemoveResource(std::string_view id) {
    absl::MutexLock lock(&mu_);
    resources_.erase(std::string(id));
    catalogues_.erase(std::string(id));
  }
  // GetStatus of this one resource answers `status` (e.g. its source is down).
  void SetStatusError(std::string_view id, absl::Status status) {
    absl::MutexLock lock(&mu_);
    status_errors_[std::string(id)] = std::move(status);
  }
  // What SourceStatuses answers (empty: a fleet of one source).
  void SetSourceStatuses(std::vector<core::FleetSourceStatus> sources) {
    absl::MutexLock lock(&mu_);
    sources_ = std::move(sources);
  }
  // Keeps only the newest `n` changes of the feed, as a bounded change stream does.
  void KeepNewestChanges(std::size_t n) {
    absl::MutexLock lock(&mu_);
    while (changes_.size() > n) {
      changes_.erase(changes_.begin());
    }
  }
  // Appends a change to the feed (ChangesSince) with the next sequence number, which it returns.
  std::uint64_t AddChange(core::FleetChange change) {
    absl::MutexLock lock(&mu_);
    change.seq = next_change_++;
    changes_.push_back(std::move(change));
    return changes_.back().seq;
  }
  void SetCatalogue(std::string_view id, std::vector<core::Capability> catalogue) {
    absl::MutexLock lock(&mu_);
    catalogues_[std::string(id)] = std::move(catalogue);
  }
  // Edits a resource in place (e.g. its status or revision). No-op for an unknown id.
  void EditResource(std::string_view id, const std::function<void(core::FleetResource&)>& edit) {
    absl::MutexLock lock(&mu_);
    auto it = resources_.find(std::string(id));
    if (it != resources_.end()) {
      edit(it->second);
    }
  }
  void AddRelationship(core::FleetRelationship relationship) {
    absl::MutexLock lock(&mu_);
    relationships_.push_back(std::move(relationship));
  }
  void SetStatus(core::FleetStatus status) {
    absl::MutexLock lock(&mu_);
    statuses_[status.resource_id] = std::move(status);
  }
  void SetLogs(std::string_view id, std::vector<std::string> lines) {
    absl::MutexLock lock(&mu_);
    logs_[std::string(id)] = std::move(lines);
  }
  void SetConfig(std::string_view id, core::FleetConfig config) {
    absl::MutexLock lock(&mu_);
    configs_[std::string(id)] = std::move(config);
  }
  void SetMetricSeries(core::FleetMetricSeries series) {
    absl::MutexLock lock(&mu_);
    const std::string key = series.resource_id + "#" + series.metric;
    metrics_[key] = std::move(series);
  }

  // What RunReadOnlyCommand answers for exactly `command` on `id`. An accepted command with no
  // script answers exit 0 and a one-line note.
  void SetExecOutput(std::string_view id, std::string_view command, core::ExecOutput output) {
    absl::MutexLock lock(&mu_);
    exec_outputs_[std::string(id) + "#" + std::string(command)] = std::move(output);
  }

  // Every call of `method` answers `status` until ClearError(method).
  void SetError(Method method, absl::Status status) {
    absl::MutexLock lock(&mu_);
    errors_[method] = std::move(status);
  }
  void ClearError(Method method) {
    absl::MutexLock lock(&mu_);
    errors_.erase(method);
  }

  void SetDispatchReceipt(core::DispatchReceipt receipt) {
    absl::MutexLock lock(&mu_);
    receipt_ = std::move(receipt);
  }
  // Runs on every first attempt of an attempt id, outside the lock, before the receipt is
  // returned. It may block, or edit the fleet to model the capability's effect.
  void SetDispatchHook(std::function<void(const core::DispatchRequest&)> hook) {
    absl::MutexLock lock(&mu_);
    dispatch_hook_ = std::move(hook);
  }
  // Runs at the start of every ReadMetricHistory, outside the lock: a test can make reads slow
  // (a remote source) or block one in flight.
  void SetMetricReadHook(std::function<void(std::string_view id)> hook) {
    absl::MutexLock lock(&mu_);
    metric_read_hook_ = std::move(hook);
  }
  void SetObservation(core::PostconditionObservation observation) {
    absl::MutexLock lock(&mu_);
    observation_ = std::move(observation);
  }

  // ---- inspection -----------------------------------------------------------------------

  // Every Dispatch call, including refused and repeated ones.
  int dispatch_calls() const {
    absl::MutexLock lock(&mu_);
    return dispatch_calls_;
  }
  // Distinct attempts that actually ran (reached the hook and the receipt).
  int executions() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(executed_.size());
  }
  std::vector<core::DispatchRequest> dispatched() const {
    absl::MutexLock lock(&mu_);
    return dispatched_;
  }
  int observe_calls() const {
    absl::MutexLock lock(&mu_);
    return observe_calls_;
  }
  // Every RunReadOnlyCommand call (refused ones included), as "<id>#<command>", in order.
  std::vector<std::string> exec_calls() const {
    absl::MutexLock lock(&mu_);
    return exec_calls_;
  }

  // ---- core::Fleet ----------------------------------------------------------------------

  absl::StatusOr<std::vector<core::FleetResource>> ListResources(
      const core::FleetResourceQuery& query) override {
    absl::MutexLock lock(&mu_);
    if (auto e = ErrorLocked(Method::kListResources)) {
      return *e;
    }
    if (query.limit == 0 || query.limit > core::kFleetMaxResults) {
      return absl::InvalidArgumentError("limit must be 1..1000");
    }
    std::vector<core::FleetResource> out;
    for (const auto& [id, r] : resources_) {
      if (!Matches(query.type, r.type) || !Matches(query.status, r.status) ||
          !Matches(query.technology, r.technology)) {
        continue;
      }
      if (!query.text.empty() && Lower(r.id).find(Lower(query.text)) == std::string::npos &&
          Lower(r.name).find(Lower(query.text)) == std::string::npos) {
        continue;
      }
      out.push_back(r);
      if (out.size() == query.limit) {
        break;
      }
    }
    return out;
  }

  absl::StatusOr<core::FleetResource> GetResource(std::string_view id) override {
    absl::MutexLock lock(&mu_);
    if (auto e = ErrorLocked(Method::kGetResource)) {
      return *e;
    }
    auto it = resources_.find(std::string(id));
    if (it == resources_.end()) {
      return absl::NotFoundError("no such resource");
    }
    return it->second;
  }

  absl::StatusOr<core::FleetTopology> GetTopology(const core::FleetTopologyQuery& query) override {
    absl::MutexLock lock(&mu_);
    if (auto e = ErrorLocked(Method::kGetTopology)) {
      return *e;
    }
    if (query.depth < 1 || query.depth > 8 || query.max_resources == 0 ||
        query.max_resources > core::kFleetMaxResults) {
      return absl::InvalidArgumentError("topology bounds out of range");
    }
    core::FleetTopology out;
    std::set<std::string> included;
    if (query.root_id.empty()) {
      for (const auto& [id, r] : resources_) {
        included.insert(id);
      }
    } else {
      if (resources_.find(query.root_id) == resources_.end()) {
        return absl::NotFoundError("no such resource");
      }
      std::deque<std::pair<std::string, int>> frontier = {{query.root_id, 0}};
      included.insert(query.root_id);
      while (!frontier.empty()) {
        auto [id, d] = frontier.front();
        frontier.pop_front();
        if (d == query.depth) {
          continue;
        }
        for (const core::FleetRelationship& rel : relationships_) {
          const std::string* next = rel.from_id == id ? &rel.to_id
                                    : rel.to_id == id ? &rel.from_id
                                                      : nullptr;
          if (next != nullptr && included.insert(*next).second) {
            frontier.emplace_back(*next, d + 1);
          }
        }
      }
    }
    for (const std::string& id : included) {
      if (out.resources.size() == query.max_resources) {
        out.truncated = true;
        break;
      }
      auto it = resources_.find(id);
      if (it != resources_.end()) {
        out.resources.push_back(it->second);
      }
    }
    for (const core::FleetRelationship& rel : relationships_) {
      if (included.count(rel.from_id) && included.count(rel.to_id)) {
        out.relationships.push_back(rel);
      }
    }
    return out;
  }

  absl::StatusOr<core::FleetStatus> GetStatus(std::string_view id) override {
    absl::MutexLock lock(&mu_);
    if (auto e = ErrorLocked(Method::kGetStatus)) {
      return *e;
    }
    auto failing = status_errors_.find(std::string(id));
    if (failing != status_errors_.end()) {
      return failing->second;
    }
    auto it = statuses_.find(std::string(id));
    if (it != statuses_.end()) {
      return it->second;
    }
    auto r = resources_.find(std::string(id));
    if (r == resources_.end()) {
      return absl::NotFoundError("no such resource");
    }
    core::FleetStatus status;
    status.resource_id = r->second.id;
    status.status = r->second.status;
    status.summary = r->second.name + " is " + r->second.status;
    return status;
  }

  absl::StatusOr<core::FleetLogExcerpt> ReadLogs(std::string_view id,
                                                 const core::FleetLogQuery& query) override {
    absl::MutexLock lock(&mu_);
    if (auto e = ErrorLocked(Method::kReadLogs)) {
      return *e;
    }
    if (query.max_lines == 0 || query.max_lines > core::kFleetMaxLogLines || query.max_bytes == 0 ||
        query.max_bytes > core::kFleetMaxLogBytes) {
      return absl::InvalidArgumentError("log bounds out of range");
    }
    if (resources_.find(std::string(id)) == resources_.end()) {
      return absl::NotFoundError("no such resource");
    }
    core::FleetLogExcerpt out;
    const std::vector<std::string>& lines = logs_[std::string(id)];
    std::size_t bytes = 0;
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      if (out.lines.size() == query.max_lines || bytes + it->size() > query.max_bytes) {
        out.truncated = true;
        break;
      }
      bytes += it->size();
      out.lines.insert(out.lines.begin(), *it);
    }
    return out;
  }

  absl::StatusOr<core::FleetConfig> ReadConfig(std::string_view id) override {
    absl::MutexLock lock(&mu_);
    if (auto e = ErrorLocked(Method::kReadConfig)) {
      return *e;
    }
    auto it = configs_.find(std::string(id));
    if (it == configs_.end()) {
      return absl::NotFoundError("no config for this resource");
    }
    return it->second;
  }

  absl::StatusOr<core::FleetMetricSeries> ReadMetricHistory(
      std::string_view id, const core::FleetMetricQuery& query) override {
    std::function<void(std::string_view)> hook;
    {
      absl::MutexLock lock(&mu_);
      hook = metric_read_hook_;
    }
    if (hook) {
      hook(id);
    }
    absl::MutexLock lock(&mu_);
    if (auto e = ErrorLocked(Method::kReadMetricHistory)) {
      return *e;
    }
    if (query.max_points == 0 || query.max_points > core::kFleetMaxMetricPoints ||
        !(query.start < query.end)) {
      return absl::InvalidArgumentError("metric query out of range");
    }
    auto it = metrics_.find(std::string(id) + "#" + query.metric);
    if (it == metrics_.end()) {
      return absl::NotFoundError("no such metric");
    }
    core::FleetMetricSeries out = it->second;
    out.points.clear();
    for (const core::FleetMetricPoint& p : it->second.points) {
      if (p.at >= query.start && p.at < query.end && out.points.size() < query.max_points) {
        out.points.push_back(p);
      }
    }
    return out;
  }

  absl::StatusOr<std::vector<core::Capability>> ListCapabilities(std::string_view id) override {
    absl::MutexLock lock(&mu_);
    if (auto e = ErrorLocked(Method::kListCapabilities)) {
      return *e;
    }
    auto it = catalogues_.find(std::string(id));
    if (it == catalogues_.end()) {
      return absl::NotFoundError("no such resource");
    }
    return it->second;
  }

  absl::StatusOr<core::DispatchReceipt> Dispatch(const core::DispatchRequest& request) override {
    std::function<void(const core::DispatchRequest&)> hook;
    {
      absl::MutexLock lock(&mu_);
      ++dispatch_calls_;
      dispatched_.push_back(request);
      if (auto e = ErrorLocked(Method::kDispatch)) {
        return *e;
      }
      auto done = executed_.find(request.attempt_id);
      if (done != executed_.end()) {
        return done->second;  // idempotent: an attempt never runs twice
      }
      if (!running_.insert(request.attempt_id).second) {
        return absl::AbortedError("this attempt is already running");
      }
      if (resources_.find(request.resource_id) == resources_.end()) {
        running_.erase(request.attempt_id);
        return absl::NotFoundError("no such resource");
      }
      hook = dispatch_hook_;
    }
    if (hook) {
      hook(request);
    }
    absl::MutexLock lock(&mu_);
    running_.erase(request.attempt_id);
    executed_[request.attempt_id] = receipt_;
    return receipt_;
  }

  absl::StatusOr<core::PostconditionObservation> ObservePostcondition(
      const core::PostconditionQuery& /*query*/) override {
    absl::MutexLock lock(&mu_);
    ++observe_calls_;
    if (auto e = ErrorLocked(Method::kObservePostcondition)) {
      return *e;
    }
    return observation_;
  }

  // Re-classifies like a real adapter must: a refused command is PermissionDenied.
  absl::StatusOr<core::ExecOutput> RunReadOnlyCommand(std::string_view id,
                                                      std::string_view command) override {
    absl::MutexLock lock(&mu_);
    const std::string key = std::string(id) + "#" + std::string(command);
    exec_calls_.push_back(key);
    if (auto e = ErrorLocked(Method::kRunReadOnlyCommand)) {
      return *e;
    }
    const core::ExecVerdict verdict = core::ClassifyExecCommand(command);
    if (!verdict.allowed) {
      return absl::PermissionDeniedError(std::string(core::ToString(verdict.refusal)) + ": " +
                                         verdict.reason);
    }
    if (resources_.find(std::string(id)) == resources_.end()) {
      return absl::NotFoundError("no such resource");
    }
    auto it = exec_outputs_.find(key);
    if (it != exec_outputs_.end()) {
      return it->second;
    }
    core::ExecOutput out;
    out.output = "(fake fleet: no scripted output for `" + std::string(command) + "`)\n";
    out.simulated = true;
    return out;
  }

  std::vector<core::FleetSourceStatus> SourceStatuses() override {
    absl::MutexLock lock(&mu_);
    return sources_;
  }

  std::vector<core::FleetChange> ChangesSince(std::uint64_t after_seq, std::size_t max) override {
    absl::MutexLock lock(&mu_);
    std::vector<core::FleetChange> out;
    for (const core::FleetChange& c : changes_) {
      if (c.seq > after_seq && out.size() < max) {
        out.push_back(c);
      }
    }
    return out;
  }

 private:
  static std::string Lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  }
  static bool Matches(const std::string& filter, const std::string& value) {
    return filter.empty() || Lower(filter) == Lower(value);
  }

  std::optional<absl::Status> ErrorLocked(Method method) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = errors_.find(method);
    if (it == errors_.end()) {
      return std::nullopt;
    }
    return it->second;
  }

  mutable absl::Mutex mu_;
  std::map<std::string, core::FleetResource> resources_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<core::Capability>> catalogues_ ABSL_GUARDED_BY(mu_);
  std::vector<core::FleetSourceStatus> sources_ ABSL_GUARDED_BY(mu_);
  std::vector<core::FleetChange> changes_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_change_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, absl::Status> status_errors_ ABSL_GUARDED_BY(mu_);
  std::vector<core::FleetRelationship> relationships_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::FleetStatus> statuses_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<std::string>> logs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::FleetConfig> configs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::FleetMetricSeries> metrics_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::ExecOutput> exec_outputs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> exec_calls_ ABSL_GUARDED_BY(mu_);
  std::map<Method, absl::Status> errors_ ABSL_GUARDED_BY(mu_);
  core::DispatchReceipt receipt_ ABSL_GUARDED_BY(mu_);
  core::PostconditionObservation observation_ ABSL_GUARDED_BY(mu_);
  std::function<void(const core::DispatchRequest&)> dispatch_hook_ ABSL_GUARDED_BY(mu_);
  std::function<void(std::string_view)> metric_read_hook_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, core::DispatchReceipt> executed_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> running_ ABSL_GUARDED_BY(mu_);
  std::vector<core::DispatchRequest> dispatched_ ABSL_GUARDED_BY(mu_);
  int dispatch_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int observe_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pulse::testing
