#include "pulse/core/tools/classify.h"

#include <optional>

#include "pulse/core/tools/invocation_descriptor.h"
#include "pulse/core/tools/tool_catalog.h"

namespace pulse::core {
namespace {

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

std::string_view TrimToolName(std::string_view name) {
  while (!name.empty() && IsAsciiSpace(name.front())) {
    name.remove_prefix(1);
  }
  while (!name.empty() && IsAsciiSpace(name.back())) {
    name.remove_suffix(1);
  }
  return name;
}

InvocationClass ClassifyToolCall(std::string_view name, const rapidjson::Value& args) {
  const std::string_view trimmed = TrimToolName(name);
  for (const ToolSpec& spec : BuiltinTools()) {
    if (spec.name == trimmed) {
      return Classify(spec.descriptor, args);
    }
  }
  return kFailClosedClass;
}

InvocationClass ClassifyRegistered(const ToolRegistry& registry, std::string_view name,
                                   const rapidjson::Value& args) {
  std::optional<InvocationDescriptor> descriptor = registry.FindDescriptor(TrimToolName(name));
  if (!descriptor.has_value()) {
    return kFailClosedClass;
  }
  return Classify(*descriptor, args);
}

}  // namespace pulse::core
