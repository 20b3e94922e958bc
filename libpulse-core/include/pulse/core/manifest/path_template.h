// Route path templates of the agent surface ("/api/actions/{actionId}/decision") and the one
// percent-encoding rule both ends of a call share (docs/api.md): a client encodes
// every placeholder value as a single path segment, the server decodes each segment on its
// own, so "/" inside an id can never change which route a request reaches. Pure functions;
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pulse::core {

// Longest decoded path parameter accepted (ids are far shorter).
inline constexpr std::size_t kMaxPathParamBytes = 256;

struct PathSegment {
  std::string text;          // the literal, or the placeholder name without braces
  bool placeholder = false;  // "{name}"

  friend bool operator==(const PathSegment&, const PathSegment&) = default;
};

// Parses a template: it starts with "/", its segments are separated by single slashes, none is
// empty, each is either a literal of [A-Za-z0-9._-] or a whole-segment placeholder "{name}"
// with name matching [a-zA-Z][a-zA-Z0-9]*, and no placeholder name repeats. InvalidArgument
// naming the first problem otherwise. "/" alone is the root, with no segment.
[[nodiscard]] absl::StatusOr<std::vector<PathSegment>> ParsePathTemplate(std::string_view path);

// The placeholder names of a template, in order; empty when it does not parse.
std::vector<std::string> PathPlaceholders(std::string_view path);

// Every byte outside the unreserved set A-Za-z0-9 - . _ ~ as %XX with uppercase hex
// (":" -> "%3A", "/" -> "%2F", " " -> "%20").
std::string PercentEncode(std::string_view raw);

// Decodes %XX escapes (hex digits of either case); every other byte is kept as it is.
// InvalidArgument for a "%" not followed by two hex digits and for an escape that decodes to
// NUL. Nothing else is judged here (see CheckPathParamValue).
[[nodiscard]] absl::StatusOr<std::string> PercentDecode(std::string_view encoded);

// The rule for a decoded opaque id (action, session, run, question ids): non-empty, at most
// kMaxPathParamBytes, valid UTF-8, no C0 control or DEL, no "/" or "\", and not "." or "..".
// InvalidArgument otherwise (the message never echoes the value).
[[nodiscard]] absl::Status CheckPathParamValue(std::string_view value);

// The placeholder every route uses for a resource id.
inline constexpr std::string_view kResourceIdPathParam = "resourceId";

// The rule for the decoded value of the placeholder `name`: a resource id
// (kResourceIdPathParam) must be a canonical resource id (actions/resource_id.h), which may
// hold "/" between real name segments ("service:pve1/nginx", "storage:pve1/local-zfs") — the
// client sent it as one %2F-encoded segment and the router decoded it exactly once; any other
// placeholder follows CheckPathParamValue. InvalidArgument otherwise, never echoing the value.
[[nodiscard]] absl::Status CheckPathParam(std::string_view name, std::string_view value);

}  // namespace pulse::core
