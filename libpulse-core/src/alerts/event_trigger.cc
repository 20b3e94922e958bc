#include "pulse/core/alerts/event_trigger.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "pulse/core/json/json_time.h"

namespace pulse::core {

bool IsTriggeringChange(const FleetChange& change) {
  if (change.resource_id.empty()) {
    return false;
  }
  const std::string kind = absl::AsciiStrToLower(change.kind);
  if (kind == "die" || kind == "oom" || kind == "kill" || kind == "stop" || kind == "task_failed" ||
      kind == "backup_failed" || kind == "storage_threshold") {
    return true;
  }
  return kind == "health_status" &&
         absl::AsciiStrToLower(change.detail).find("unhealthy") != std::string::npos;
}

PatrolEventTrigger::PatrolEventTrigger(const Clock& clock, StartRun start_run,
                                       EventTriggerOptions options)
    : clock_(clock), start_run_(std::move(start_run)), options_(options) {}

void PatrolEventTrigger::Record(TriggerLedgerEntry entry) {
  ledger_.push_back(std::move(entry));
  while (ledger_.size() > kTriggerLedgerSize) {
    ledger_.pop_front();
  }
}

void PatrolEventTrigger::Offer(const FleetChange& change) {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  if (!IsTriggeringChange(change)) {
    TriggerLedgerEntry entry{
        now, change.seq, change.resource_id, change.kind, change.detail, "ignored", "", ""};
    entry.reason = change.resource_id.empty()
                       ? "a change about a whole source starts no investigation"
                       : absl::StrCat("a ", change.kind, " change starts no investigation");
    Record(std::move(entry));
    return;
  }
  if (pending_.empty()) {
    window_opened_ = now;
  }
  pending_.push_back(change);
}

std::string PatrolEventTrigger::Tick() {
  absl::MutexLock tick(&tick_mu_);
  const absl::Time now = clock_.Now();
  std::vector<FleetChange> changes;
  // Per change (by index): a decision made before the run (cooldown, rate_limited), or none.
  std::vector<std::pair<std::string, std::string>> decided;
  PatrolScope scope;
  {
    absl::MutexLock lock(&mu_);
    if (pending_.empty() || now - window_opened_ < options_.window) {
      return "";
    }
    changes = std::move(pending_);
    pending_.clear();
    decided.resize(changes.size());
    while (!started_.empty() && now - started_.front() >= absl::Hours(1)) {
      started_.pop_front();
    }
    for (auto it = cooled_until_.begin(); it != cooled_until_.end();) {
      it = it->second <= now ? cooled_until_.erase(it) : std::next(it);
    }
    for (std::size_t i = 0; i < changes.size(); ++i) {
      const FleetChange& c = changes[i];
      if (const auto cooled = cooled_until_.find(c.resource_id); cooled != cooled_until_.end()) {
        decided[i] = {"cooldown",
                      absl::StrCat("an event-triggered run looked at it; its cooldown lasts "
                                   "until ",
                                   FormatRfc3339(cooled->second))};
      } else if (std::find(scope.resource_ids.begin(), scope.resource_ids.end(), c.resource_id) ==
                 scope.resource_ids.end()) {
        scope.resource_ids.push_back(c.resource_id);
      }
    }
    if (!scope.resource_ids.empty() &&
        static_cast<int>(started_.size()) >= options_.max_runs_per_hour) {
      for (auto& d : decided) {
        if (d.first.empty()) {
          d = {"rate_limited", absl::StrCat(started_.size(),
                                            " event-triggered runs started in the last hour, the "
                                            "limit; scheduled and manual runs still look at it")};
        }
      }
      scope.resource_ids.clear();
    }
  }
  std::string run_id;
  std::string decision = "started";
  std::string why;
  if (!scope.resource_ids.empty()) {
    absl::StatusOr<std::string> run = start_run_(scope);
    if (run.ok()) {
      run_id = *run;
      why = absl::StrCat("one scoped run over ", scope.resource_ids.size(),
                         " resource(s) for the changes of the last ",
                         absl::FormatDuration(options_.window));
    } else if (absl::IsFailedPrecondition(run.status())) {
      decision = "already_running";
      why = std::string(run.status().message());
    } else {
      decision = "failed";
      why = std::string(run.status().message());
    }
  }
  absl::MutexLock lock(&mu_);
  if (!run_id.empty()) {
    started_.push_back(now);
    for (const std::string& id : scope.resource_ids) {
      cooled_until_[id] = now + options_.cooldown;
    }
  }
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const FleetChange& c = changes[i];
    TriggerLedgerEntry entry{now, c.seq, c.resource_id, c.kind, c.detail, decision, why, run_id};
    if (!decided[i].first.empty()) {
      entry.decision = decided[i].first;
      entry.reason = decided[i].second;
      entry.run_id.clear();
    }
    Record(std::move(entry));
  }
  return run_id;
}

std::vector<TriggerLedgerEntry> PatrolEventTrigger::Ledger() const {
  absl::MutexLock lock(&mu_);
  return {ledger_.begin(), ledger_.end()};
}

int PatrolEventTrigger::RunsInLastHour() const {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  return static_cast<int>(std::count_if(started_.begin(), started_.end(),
                                        [now](absl::Time t) { return now - t < absl::Hours(1); }));
}

}  // namespace pulse::core
