// pulse-cli's command line: the CLI11 definition of every subcommand and option, parsing,
// dispatch to the commands (commands.h), and the exit-code contract of failure.h. main.cc only
// calls Main. Not thread-safe: one call per process.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pulse/core/manifest/capability_manifest.h"

namespace pulse::cli {

// The same variable pulse-mcp reads.
inline constexpr std::string_view kTokenEnv = core::kMcpTokenEnv;

// Runs pulse-cli; returns the process exit code.
int Main(int argc, char** argv);

// Every command's path, "" (the top level) first, then "ask", "findings", "findings list",
// ... in definition order: what tests walk to check each command's help.
std::vector<std::string> CommandPaths();

}  // namespace pulse::cli
