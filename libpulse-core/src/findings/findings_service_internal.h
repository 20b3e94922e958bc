// Internal to FindingsService's implementation files: the transition context a change
// function edits, the result of a mutation, and small input helpers. Not public API.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/findings/findings_service.h"

namespace pulse::core::findings_internal {

// What a change function sees: the finding to edit in place, the instant of the change, and
// the events it appends (stamped with `at`, `from` and `to` by Mutate).
struct Transition {
  Finding& finding;
  absl::Time now;
  std::vector<LifecycleEvent> events;
  // Persist even without an event (a heartbeat or a forecast stamp).
  bool dirty = false;

  // Appends one event; message and metadata values are cut to the decoder's limits.
  void Event(LifecycleEventType type, std::string_view message = {},
             const std::map<std::string, std::string>& metadata = {});
};

struct Mutation {
  Finding finding;  // as written, or as read when nothing changed
  bool written = false;
  std::vector<LifecycleEventType> events;
};

// Applies `change` to a copy of `before` at `now` and stamps it as Mutate writes it: each
// event's from/to when the derived loop state moves, the events appended to the lifecycle log,
// the new loop state. written=false (and the finding as it was) when the change recorded
// nothing. FailedPrecondition (finding_action_not_allowed) when the loop state may not move
// that way. The caller writes the result under `before`'s version.
absl::StatusOr<Mutation> ApplyChange(const Finding& before, absl::Time now,
                                     absl::FunctionRef<absl::Status(Transition&)> change);

// `text` without surrounding ASCII whitespace.
std::string Trimmed(std::string_view text);

// InvalidArgument (invalid_finding_request, details {field: problem}) when `value` is empty
// but required, longer than `max_bytes`, or not UTF-8.
absl::Status CheckField(std::string_view field, std::string_view value, std::size_t max_bytes,
                        bool required);

}  // namespace pulse::core::findings_internal
