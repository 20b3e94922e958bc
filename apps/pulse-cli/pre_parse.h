// What pulse-cli answers before CLI11 parses the line: `help [command...]` (that command's help
// on stdout, exit 0), a mistyped command (did you mean, exit 2) and a missing one (the commands
// to choose from, exit 2). Reads only its arguments; writes stdout or stderr.
#pragma once

#include <optional>

namespace CLI {
class App;
}  // namespace CLI

namespace pulse::cli {

// The exit code when the line is answered here; nullopt: let CLI11 parse it.
std::optional<int> PreParse(CLI::App& app, int argc, char** argv);

}  // namespace pulse::cli
