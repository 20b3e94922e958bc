// The examples under every pulse-cli command's help (`pulse-cli help findings snooze`,
// `pulse-cli findings snooze --help`), by command path. cli_app.cc appends them to each
// command's footer; tests/e2e/cli/cli_parts_test.cc checks that every command has some and
// that each names its own command. Thread-safe (constant data).
#pragma once

#include <string_view>

namespace pulse::cli {

// The example lines of the command at `path` ("" for the top level, "findings snooze" for a
// subcommand), each a complete command line starting with "pulse-cli"; empty when none.
std::string_view ExamplesFor(std::string_view path);

}  // namespace pulse::cli
