// ToolRegistry: the append-only set of tools a surface may execute, each with a validated
// closed schema (compiled once) and invocation descriptor. Built-ins come only from the
// catalog with their canonical descriptors; extensions bring their own and may not take a
// built-in, retired or reserved name. Not internally synchronized for registration: register
// while constructing, then share it const; all const methods are safe to call concurrently.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/core/tools/invocation_descriptor.h"
#include "pulse/core/tools/tool_catalog.h"
#include "pulse/core/tools/tool_schema.h"
#include "rapidjson/document.h"

namespace pulse::core {

// Longest tool name any provider accepts.
inline constexpr std::size_t kMaxToolNameLength = 64;

// Argument names reserved for approval metadata the server attaches itself. A model can
// never send them (enforcement refuses a call carrying one at any depth) and no tool schema
// may declare them (registration refuses it), so forged approval state never reaches a
// handler. Reserved: every name starting with '_', and these names in any ASCII casing.
inline constexpr std::array<std::string_view, 8> kReservedArgumentNames = {
    "approval",        "approval_id", "approval_token", "approval_decision",
    "approval_status", "approved",    "approved_by",    "plan_hash",
};

// True when `name` starts with '_' or equals a kReservedArgumentNames entry ignoring ASCII
// case.
bool IsReservedArgumentName(std::string_view name);

class ToolRegistry {
 public:
  ToolRegistry();
  ~ToolRegistry();
  ToolRegistry(ToolRegistry&&) noexcept;
  ToolRegistry& operator=(ToolRegistry&&) noexcept;
  ToolRegistry(const ToolRegistry&) = delete;
  ToolRegistry& operator=(const ToolRegistry&) = delete;

  // A registry holding every built-in tool, in catalog order. Fails only if the catalog
  // itself is invalid (the catalog test proves it is not).
  [[nodiscard]] static absl::StatusOr<ToolRegistry> WithBuiltins();

  // Registers a built-in tool. InvalidArgument when `spec.name` is not a built-in, its
  // descriptor, placement hints or traits differ from the catalog's (no overrides), or its schema
  // or descriptor is invalid (including a schema that declares a reserved argument name at any
  // level); AlreadyExists when the name is already registered.
  [[nodiscard]] absl::Status RegisterBuiltin(const ToolSpec& spec);

  // Registers an extension tool. InvalidArgument when the name is malformed (must match
  // [A-Za-z0-9_-]{1,64}), built-in, retired, or uses a reserved prefix ("pulse_",
  // "patrol_"), the description is empty, the schema is malformed or not closed or declares
  // a reserved argument name at any level, the descriptor is invalid for the schema, or the spec
  // declares traits (built-ins only);
  // AlreadyExists when the name is taken.
  [[nodiscard]] absl::Status RegisterExtension(ToolSpec spec);

  // A deep copy of the tool registered exactly as `name`, or nullopt. Mutating the copy
  // never changes the registry.
  std::optional<ToolSpec> Find(std::string_view name) const;
  // A deep copy of the descriptor of the tool registered as `name`, or nullopt.
  std::optional<InvocationDescriptor> FindDescriptor(std::string_view name) const;
  bool Contains(std::string_view name) const;
  // The traits of the tool registered as `name` (tool_traits.h); the default traits for an
  // extension or an unknown name. No copy of the spec is made.
  ToolTraits Traits(std::string_view name) const;
  // Registered names in registration order.
  std::vector<std::string> Names() const;
  std::size_t Size() const { return entries_.size(); }

  // Validates a call's arguments against the tool's schema. NotFound for an unknown tool;
  // InvalidArgument when `args` fails CheckArgumentStructure (tool_schema.h), names an
  // undeclared argument (`undeclared tool argument "<k>"`), misses a required one
  // (`required tool argument "<k>" is missing`), or violates another schema keyword (the
  // message names the keyword, the argument's JSON pointer and the constraint).
  [[nodiscard]] absl::Status ValidateArguments(std::string_view name,
                                               const rapidjson::Value& args) const;

 private:
  struct Entry;

  const Entry* Lookup(std::string_view name) const;
  [[nodiscard]] absl::Status Register(ToolSpec spec);

  std::vector<std::unique_ptr<Entry>> entries_;
  absl::flat_hash_map<std::string, std::size_t> index_;
};

}  // namespace pulse::core
