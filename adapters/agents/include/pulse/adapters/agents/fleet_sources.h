// Fleet sources: a fleet is a list of sources, each with a unique name, a kind and the kind's
// settings, written as {"sources": [{"name": "lab", "kind": "demo"}, ...]} in pulse.json's
// "fleet" member or in a file given as --fleet FILE (docs/fleet.md). A FleetSourceRegistry maps
// each kind to the factory that opens it; the kinds built in are `demo` and `local`
// (RegisterBuiltinFleetSources), and a new adapter (docker, ...) registers its own.
// Thread-safety: parsing is pure; a registry is filled once, then only read.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::adapters::agents {

inline constexpr std::size_t kMaxFleetSources = 32;
inline constexpr std::size_t kMaxFleetSourceNameBytes = 32;
inline constexpr std::size_t kMaxFleetSourcesBytes = 1 << 20;

// One source as written. `json` is the source's whole object in canonical JSON (name and kind
// included), for the kind's factory to read its settings from strictly.
struct FleetSourceSpec {
  std::string name;  // [a-z0-9][a-z0-9-]{0,31}
  std::string kind;  // [a-z][a-z0-9-]{0,31}
  std::string json;

  friend bool operator==(const FleetSourceSpec&, const FleetSourceSpec&) = default;
};

// True for a valid source name: 1..32 bytes of [a-z0-9-], starting with a letter or digit.
bool IsFleetSourceName(std::string_view name);

// True when `json` is a JSON object with a top-level "sources" member: a sources document, as
// opposed to a demo fleet file (whose top-level members are nodes, vms, ...).
bool IsFleetSourcesDocument(std::string_view json);

// Parses {"sources": [...]} strictly. InvalidArgument naming the place ("fleet.sources[2].name")
// for malformed JSON, other top-level members, no sources or more than kMaxFleetSources, a
// source that is not an object, a missing or bad name or kind, or a name used twice. Kinds
// are not checked here (FleetSourceRegistry::Open does).
[[nodiscard]] absl::StatusOr<std::vector<FleetSourceSpec>> ParseFleetSources(std::string_view json);

// Opens one source of its kind from its spec. InvalidArgument for settings the kind does not
// take or cannot use, naming the source.
using FleetSourceFactory =
    std::function<absl::StatusOr<std::unique_ptr<core::Fleet>>(const FleetSourceSpec&)>;

class FleetSourceRegistry {
 public:
  // AlreadyExists when the kind is registered; InvalidArgument for a bad kind or no factory.
  [[nodiscard]] absl::Status Register(std::string kind, FleetSourceFactory factory);
  bool Has(std::string_view kind) const;
  // The registered kinds, sorted.
  std::vector<std::string> Kinds() const;
  // InvalidArgument naming the source and the known kinds for an unknown kind; otherwise the
  // factory's answer, its message prefixed with the source's name.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<core::Fleet>> Open(
      const FleetSourceSpec& spec) const;

 private:
  std::map<std::string, FleetSourceFactory, std::less<>> factories_;
};

// What the built-in kinds start from; a source's settings override these.
struct BuiltinFleetSourceOptions {
  DemoFleetOptions demo;
  LocalHostFleetOptions local;
};

// Registers the kinds `demo` (settings: "file", a demo fleet file; default the shipped one)
// and `local` (settings: "allow_actions" boolean, "action_allowlist" array of unit names,
// "allow_exec" boolean). Borrows nothing beyond what `options` borrows (clocks).
[[nodiscard]] absl::Status RegisterBuiltinFleetSources(FleetSourceRegistry& registry,
                                                       const BuiltinFleetSourceOptions& options);

}  // namespace pulse::adapters::agents
