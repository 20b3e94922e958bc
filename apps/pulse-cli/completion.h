// Shell completion generated from the CLI11 definition itself, so it cannot drift from the
// commands: every subcommand path, its subcommands and options, the options that take a value
// (so their value is not mistaken for a subcommand), and the fixed choices of an option's
// value. Pure; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace pulse::cli {

// Option -> the values it accepts (IsMember sets), for value completion.
using CompletionChoices = std::map<const CLI::Option*, std::vector<std::string>>;

// A bash script defining _pulse_cli and `complete -F _pulse_cli <program>`.
std::string BashCompletion(const CLI::App& app, const CompletionChoices& choices,
                           const std::string& program);

}  // namespace pulse::cli
