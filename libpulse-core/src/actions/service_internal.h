// Private helpers shared by the ActionService translation units (action_service.cc,
// action_execute.cc) and the reconciler. Not part of the public API.
#pragma once

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/model/action_codec.h"
#include "pulse/core/model/action_transition.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/string_view.h"

namespace pulse::core::action_internal {

// How often a caller re-reads and re-evaluates after losing a CAS before giving up (Aborted).
inline constexpr int kMaxCasAttempts = 16;

// "human:alice", for messages.
inline std::string ActorLabel(const ActionActor& actor) {
  return absl::StrCat(ToAbsl(ToString(actor.kind)), ":", actor.id);
}

// A transition event of `record` into `state`; `actor` may be null (the engine itself).
inline ActionLifecycleEvent MakeEvent(const ActionRecord& record, absl::Time at, ActionState state,
                                      const ActionActor* actor, std::string message) {
  ActionLifecycleEvent e;
  e.action_id = record.id();
  e.at = at;
  e.state = state;
  e.kind = LifecycleEventKind::kTransition;
  if (actor != nullptr) {
    e.actor = *actor;
  }
  e.message = std::move(message);
  return e;
}

// A transition of `record` from `from` into `to`, stamped `at`, that keeps its plan and its
// decision revision (the CAS checks both). The caller adds the result and the events.
inline ActionTransition SameRevisionTransition(const ActionRecord& record, ActionState from,
                                               ActionState to, absl::Time at) {
  ActionTransition t;
  t.action_id = record.id();
  t.expected_states = {from};
  t.expected_plan_hash = record.plan.plan_hash;
  t.expected_decision_revision = record.decision_revision;
  t.new_state = to;
  t.new_decision_revision = record.decision_revision;
  t.updated_at = at;
  return t;
}

}  // namespace pulse::core::action_internal
