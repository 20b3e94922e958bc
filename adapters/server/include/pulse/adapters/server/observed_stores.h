// Store decorators that tell the server what the core services changed, without the services
// knowing: ObservedActionStore reports every action created and every transition committed,
// ObservedFindingStore every finding created (and, for the Patrol stream, every finding written),
// ObservedPatrolRunStore every run record written. The server hangs the agent event stream
// (approval.pending, action.completed, finding.created) and the action metrics on them, so an
// event is published exactly when the durable change happened, whichever path caused it (the
// HTTP routes, the Assistant's tools, a resume). Observers run on the writer's thread after the
// store call returned (no store lock is held); they must be quick and must not throw.
// Thread-safe when the wrapped store is. Both borrow the wrapped store.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "pulse/core/ports/action_store.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/finding_store.h"
#include "pulse/core/ports/patrol_run_store.h"

namespace pulse::server {

struct ActionChange {
  const core::ActionRecord& record;  // as stored after the change
  bool created = false;              // InsertIfAbsent created it (else: a transition)
  // The transition's expected states (the record was in one of them); empty when created.
  std::vector<core::ActionState> from_states;
};
using ActionObserver = std::function<void(const ActionChange&)>;

class ObservedActionStore final : public core::ActionStore {
 public:
  ObservedActionStore(core::ActionStore& inner, ActionObserver observer)
      : inner_(inner), observer_(std::move(observer)) {}

  absl::StatusOr<core::ActionInsertOutcome> InsertIfAbsent(
      const core::ActionRecord& record,
      const std::vector<core::ActionLifecycleEvent>& initial_events) override;
  absl::StatusOr<core::ActionRecord> Get(std::string_view action_id) override {
    return inner_.Get(action_id);
  }
  absl::StatusOr<core::ActionRecord> Transition(const core::ActionTransition& transition) override;
  absl::StatusOr<std::vector<core::ActionLifecycleEvent>> ListEvents(
      std::string_view action_id) override {
    return inner_.ListEvents(action_id);
  }
  absl::StatusOr<std::vector<core::ActionRecord>> ListByState(
      const std::vector<core::ActionState>& states, std::size_t limit) override {
    return inner_.ListByState(states, limit);
  }
  absl::StatusOr<std::vector<core::ActionRecord>> ListPage(
      const core::ActionPageQuery& query) override {
    return inner_.ListPage(query);
  }
  std::optional<std::uint64_t> WriteGeneration() const override { return inner_.WriteGeneration(); }

 private:
  core::ActionStore& inner_;
  ActionObserver observer_;
};

// Called with a finding the store just created (Put with expected version 0).
using FindingObserver = std::function<void(const core::Finding&)>;
// Called with every finding the store just wrote; `created` as above.
using FindingWriteObserver = std::function<void(const core::Finding&, bool created)>;

class ObservedFindingStore final : public core::FindingStore {
 public:
  ObservedFindingStore(core::FindingStore& inner, FindingObserver on_created,
                       FindingWriteObserver on_written = nullptr)
      : inner_(inner), on_created_(std::move(on_created)), on_written_(std::move(on_written)) {}

  absl::StatusOr<core::StoredFinding> Get(std::string_view id) const override {
    return inner_.Get(id);
  }
  absl::StatusOr<std::vector<core::StoredFinding>> GetBatch(
      const std::vector<std::string>& ids) const override {
    return inner_.GetBatch(ids);
  }
  absl::StatusOr<std::vector<core::StoredFinding>> List(
      const core::FindingFilter& filter) const override {
    return inner_.List(filter);
  }
  absl::StatusOr<std::vector<core::StoredFinding>> ListPage(
      const core::FindingPageQuery& query) const override {
    return inner_.ListPage(query);
  }
  absl::StatusOr<std::vector<core::ActiveFindingCounts>> CountActiveByResource(
      absl::Time now, const std::vector<std::string>& resource_ids) const override {
    return inner_.CountActiveByResource(now, resource_ids);
  }
  absl::StatusOr<std::vector<core::ActiveFindingKey>> ListActiveKeys(
      absl::Time now) const override {
    return inner_.ListActiveKeys(now);
  }
  absl::StatusOr<std::vector<core::StoredFinding>> ListAwaitingFixOutcome() const override {
    return inner_.ListAwaitingFixOutcome();
  }
  absl::StatusOr<core::PatrolFindingCounts> CountPatrolFindings(absl::Time since,
                                                                absl::Time now) const override {
    return inner_.CountPatrolFindings(since, now);
  }

  // The inner store's, unchanged: every write through this decorator reaches it.
  std::optional<std::uint64_t> WriteGeneration() const override { return inner_.WriteGeneration(); }
  absl::StatusOr<std::optional<absl::Time>> NextSnoozeEnd(
      const core::FindingPageQuery& query,
      const std::optional<core::FindingPagePosition>& through) const override {
    return inner_.NextSnoozeEnd(query, through);
  }
  absl::StatusOr<core::ActiveFindingCountsUntil> CountActiveUntilChange(
      absl::Time now, const std::vector<std::string>& resource_ids) const override {
    return inner_.CountActiveUntilChange(now, resource_ids);
  }
  absl::StatusOr<std::int64_t> Put(const core::Finding& finding,
                                   std::int64_t expected_version) override;
  absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> PutBatch(
      const std::vector<core::FindingWrite>& writes) override;
  absl::StatusOr<std::vector<core::SuppressionRule>> ListSuppressionRules() const override {
    return inner_.ListSuppressionRules();
  }
  absl::Status PutSuppressionRule(const core::SuppressionRule& rule) override {
    return inner_.PutSuppressionRule(rule);
  }
  absl::Status DeleteSuppressionRule(std::string_view id) override {
    return inner_.DeleteSuppressionRule(id);
  }

 private:
  core::FindingStore& inner_;
  FindingObserver on_created_;
  FindingWriteObserver on_written_;
};

// Called with every run record the store just wrote (a run starting, a run ending).
using PatrolRunObserver = std::function<void(const core::PatrolRunRecord&)>;

class ObservedPatrolRunStore final : public core::PatrolRunStore {
 public:
  ObservedPatrolRunStore(core::PatrolRunStore& inner, PatrolRunObserver on_stored)
      : inner_(inner), on_stored_(std::move(on_stored)) {}

  absl::Status Put(const core::PatrolRunRecord& record) override;
  absl::StatusOr<core::PatrolRunRecord> Get(std::string_view id) const override {
    return inner_.Get(id);
  }
  absl::StatusOr<std::vector<core::PatrolRunRecord>> List(std::size_t limit) const override {
    return inner_.List(limit);
  }
  absl::StatusOr<core::AutonomySettings> LoadAutonomy() const override {
    return inner_.LoadAutonomy();
  }
  absl::Status SaveAutonomy(const core::AutonomySettings& settings) override {
    return inner_.SaveAutonomy(settings);
  }
  absl::StatusOr<core::PatrolThresholdSettings> LoadThresholds() const override {
    return inner_.LoadThresholds();
  }
  absl::Status SaveThresholds(const core::PatrolThresholdSettings& settings) override {
    return inner_.SaveThresholds(settings);
  }

 private:
  core::PatrolRunStore& inner_;
  PatrolRunObserver on_stored_;
};

}  // namespace pulse::server
