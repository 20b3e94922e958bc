// Shell completion through the hidden `pulse-cli __complete WORD...` command (docs/cli.md,
// "completion"): the bash, zsh and fish scripts only hand it the words typed so far (the last
// one is being completed, "" for a new word) and show what it prints, one candidate a line. It
// walks the CLI11 definition itself, so it cannot drift from the commands: subcommands at every
// level, options (global ones anywhere), an option that takes a value swallows the next word
// (an on/off flag does not), the fixed choices of a value, and values only the server knows
// (finding, action and session ids, resources and their capabilities) or the config file
// knows (contexts), through a fetcher that prints nothing when the server cannot be asked.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace pulse::cli {

// Option -> the values it accepts (IsMember sets), for value completion.
using CompletionChoices = std::map<const CLI::Option*, std::vector<std::string>>;

// Where an option's (or a positional's) values come from when they are not fixed.
enum class ValueSource {
  kFindingId,
  kActionId,
  kSessionId,
  kResourceId,
  kResourceType,
  kTechnology,
  kCapability,  // of the resource given as the command's first positional
  kContext,
};
using DynamicValues = std::map<const CLI::Option*, ValueSource>;

struct ValueRequest {
  ValueSource source = ValueSource::kResourceId;
  std::vector<std::string> positionals;  // the command's positionals typed so far
  std::string server;                    // --server as typed, "" when not
  std::string context;                   // --context as typed, "" when not
};
// Values for a request; empty when they cannot be had (no server, no token, a bad reply).
using ValueFetcher = std::function<std::vector<std::string>(const ValueRequest&)>;

// The candidates for the last of `words` (the command line after the program name), filtered
// by what that word starts with. At most 500; never a word with a control character, a space
// or shell syntax in it. Pure apart from `fetch`.
std::vector<std::string> Complete(const CLI::App& app, const CompletionChoices& choices,
                                  const DynamicValues& dynamic,
                                  const std::vector<std::string>& words, const ValueFetcher& fetch);

// The script for `shell` (bash, zsh or fish) that completes `program` through __complete; ""
// for another shell.
std::string CompletionScript(std::string_view shell, const std::string& program);

}  // namespace pulse::cli
