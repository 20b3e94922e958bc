// The one tool-call classifier shared by the agentic loop, the HTTP surface and MCP: the
// class of a call comes only from a registered tool's invocation descriptor. Anything the
// table does not know fails closed to write/infrastructure; no name or argument heuristic
// ever turns an unknown tool into a read. Pure functions; safe from any thread.
#pragma once

#include <string_view>

#include "pulse/core/tools/tool_kind.h"
#include "pulse/core/tools/tool_registry.h"
#include "rapidjson/document.h"

namespace pulse::core {

// Classifies a call against the built-in catalog. The name is trimmed of ASCII whitespace
// and then matched exactly (case-sensitive); a built-in yields its descriptor's class for
// `args`, anything else kFailClosedClass.
InvocationClass ClassifyToolCall(std::string_view name, const rapidjson::Value& args);

// The same rule over `registry` (built-ins plus extensions): unknown names fail closed.
InvocationClass ClassifyRegistered(const ToolRegistry& registry, std::string_view name,
                                   const rapidjson::Value& args);

// The name as the classifiers look it up: ASCII whitespace trimmed from both ends.
std::string_view TrimToolName(std::string_view name);

}  // namespace pulse::core
