#include "pulse/adapters/server/observed_stores.h"

namespace pulse::server {

absl::StatusOr<core::ActionInsertOutcome> ObservedActionStore::InsertIfAbsent(
    const core::ActionRecord& record,
    const std::vector<core::ActionLifecycleEvent>& initial_events) {
  absl::StatusOr<core::ActionInsertOutcome> out = inner_.InsertIfAbsent(record, initial_events);
  if (out.ok() && out->created && observer_) {
    observer_(ActionChange{out->record, true, {}});
  }
  return out;
}

absl::StatusOr<core::ActionRecord> ObservedActionStore::Transition(
    const core::ActionTransition& transition) {
  absl::StatusOr<core::ActionRecord> out = inner_.Transition(transition);
  if (out.ok() && observer_) {
    observer_(ActionChange{*out, false, transition.expected_states});
  }
  return out;
}

absl::StatusOr<std::int64_t> ObservedFindingStore::Put(const core::Finding& finding,
                                                       std::int64_t expected_version) {
  absl::StatusOr<std::int64_t> out = inner_.Put(finding, expected_version);
  if (out.ok() && expected_version == 0 && on_created_) {
    on_created_(finding);
  }
  if (out.ok() && on_written_) {
    on_written_(finding, expected_version == 0);
  }
  return out;
}

absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> ObservedFindingStore::PutBatch(
    const std::vector<core::FindingWrite>& writes) {
  absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> out = inner_.PutBatch(writes);
  if (!out.ok() || (!on_created_ && !on_written_)) {
    return out;
  }
  for (std::size_t i = 0; i < writes.size() && i < out->size(); ++i) {
    if (!(*out)[i].ok()) {
      continue;
    }
    const bool created = writes[i].expected_version == 0;
    if (created && on_created_) {
      on_created_(writes[i].finding);
    }
    if (on_written_) {
      on_written_(writes[i].finding, created);
    }
  }
  return out;
}

absl::Status ObservedPatrolRunStore::Put(const core::PatrolRunRecord& record) {
  absl::Status out = inner_.Put(record);
  if (out.ok() && on_stored_) {
    on_stored_(record);
  }
  return out;
}

}  // namespace pulse::server
