// Internal to FindingsService's implementation files: the transition context a change
// function edits, the result of a mutation, and small input helpers. Not public API.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
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

// `text` without surrounding ASCII whitespace.
std::string Trimmed(std::string_view text);

// InvalidArgument (invalid_finding_request, details {field: problem}) when `value` is empty
// but required, longer than `max_bytes`, or not UTF-8.
absl::Status CheckField(std::string_view field, std::string_view value, std::size_t max_bytes,
                        bool required);

}  // namespace pulse::core::findings_internal
