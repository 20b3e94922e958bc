// Where the interop tests find their third-party peers: the paths cmake/install-node-tools.sh
// installs to, given to the build by tests/interop/CMakeLists.txt. The pinned versions are in
// tests/interop/package.json; docs/testing.md describes the set-up.
#pragma once

#include <string>
#include <string_view>

namespace pulse::testing {

// The node the pinned tools run on (a link to the pinned runtime).
inline constexpr std::string_view kInteropNode = PULSE_INTEROP_NODE;
// tests/interop/node_modules: each tool's files are below it.
inline constexpr std::string_view kInteropNodeModules = PULSE_INTEROP_NODE_MODULES;
// tests/interop/fixtures in the source tree.
inline constexpr std::string_view kInteropFixtures = PULSE_INTEROP_FIXTURES;
// A directory in the build tree for the peers' logs.
inline constexpr std::string_view kInteropLogDir = PULSE_INTEROP_LOG_DIR;

// `relative` below the node_modules directory.
inline std::string InteropModulePath(std::string_view relative) {
  return std::string(kInteropNodeModules) + "/" + std::string(relative);
}

}  // namespace pulse::testing
