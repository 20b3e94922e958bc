// MCP resources over pulse-server: every fleet resource is pulse://resource/<id> (the id
// percent-encoded as one segment), listed from get_fleet_context and read through
// get_resource_context. Stateless functions; thread-safety is the caller's.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pulse/adapters/mcp/pulse_caller.h"

namespace pulse::adapters::mcp {

inline constexpr std::string_view kResourceUriPrefix = "pulse://resource/";

// pulse://resource/<PercentEncode(id)>.
std::string ResourceUri(std::string_view resource_id);

// The resource id of a URI: scheme pulse, host resource, one non-empty percent-encoded segment,
// no query or fragment. InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<std::string> ResourceIdFromUri(std::string_view uri);

// The resources/list result {resources:[{uri, name, description, mimeType}]}. Internal with
// "GET <path>: <status> <code> (<message>)" when pulse-server refuses the fleet context,
// Unavailable when it cannot be reached.
[[nodiscard]] absl::StatusOr<std::string> ListResources(PulseCaller& caller);

// The resources/read result {contents:[{uri, mimeType, text}]} for `uri`. InvalidArgument for a
// bad URI, NotFound when pulse-server does not know the resource, Internal for another refusal.
[[nodiscard]] absl::StatusOr<std::string> ReadResource(PulseCaller& caller, std::string_view uri);

}  // namespace pulse::adapters::mcp
