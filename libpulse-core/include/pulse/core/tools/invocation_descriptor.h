// An invocation descriptor says how a tool's calls are classified: either one static class
// for every call, or one string argument (the discriminator) whose value selects the class.
// Descriptors are plain values (deep-copied on every copy); validation and classification
// are pure functions, safe to call from any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "pulse/core/tools/tool_kind.h"
#include "rapidjson/document.h"

namespace pulse::core {

// Exactly one of the two shapes is valid:
//  * static:        `static_class` set, `discriminator` empty, `cases` empty;
//  * discriminator: `static_class` unset, `discriminator` names a string argument whose
//                   schema enum equals the key set of `cases` (keys are normalized: trimmed,
//                   ASCII lowercase).
// Anything else (both, neither) is refused by ValidateDescriptor and classifies fail-closed.
struct InvocationDescriptor {
  std::optional<InvocationClass> static_class;
  std::string discriminator;
  std::map<std::string, InvocationClass> cases;

  friend bool operator==(const InvocationDescriptor&, const InvocationDescriptor&) = default;
};

// A static descriptor: every call is `c`.
InvocationDescriptor StaticDescriptor(InvocationClass c);

// A discriminator descriptor over argument `argument` with the given case table.
InvocationDescriptor DiscriminatorDescriptor(std::string argument,
                                             std::map<std::string, InvocationClass> cases);

// True when both fields of `c` are members of their closed sets and the pair is coherent:
// a write names what it mutates (pulse_state or infrastructure); resolve, read and
// user_input mutate nothing.
bool IsValidInvocationClass(InvocationClass c);

// Trim ASCII whitespace, then ASCII-lowercase: the normal form of discriminator values and
// case keys.
std::string NormalizeDiscriminatorValue(std::string_view value);

// Checks `descriptor` against the tool's parsed input schema. Returns InvalidArgument when
// the descriptor is both or neither shape, a class is invalid, a case key is empty or not
// normalized, the discriminator is not a declared property with a non-empty all-string
// `enum`, or the case set differs from the normalized enum set (the message lists the
// missing and the extra cases, each sorted).
[[nodiscard]] absl::Status ValidateDescriptor(const InvocationDescriptor& descriptor,
                                              const rapidjson::Value& input_schema);

// Classifies one call. Static: the static class, whatever the arguments. Discriminator:
// `args` must be an object holding the discriminator exactly once as a string whose
// normalized value is a case; anything else (missing, repeated, null, number, unknown
// value, non-object args) and any malformed descriptor yields kFailClosedClass.
InvocationClass Classify(const InvocationDescriptor& descriptor, const rapidjson::Value& args);

}  // namespace pulse::core
