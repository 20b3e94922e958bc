#include "pre_parse.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "failure.h"
#include "suggest.h"
#include "text_safety.h"

namespace pulse::cli {
namespace {

constexpr char kProgram[] = "pulse-cli";

// The option `name` (with its dashes) of `app` or, as options fall through, of a parent.
const CLI::Option* FindOption(const CLI::App* app, const std::string& name) {
  for (; app != nullptr; app = app->get_parent()) {
    if (const CLI::Option* opt = app->get_option_no_throw(name)) {
      return opt;
    }
  }
  return nullptr;
}

std::vector<std::string> SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

bool HasPositionals(CLI::App& app) {
  return !app.get_options([](CLI::Option* opt) { return opt->get_positional(); }).empty();
}

std::string Words(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const std::string& w : words) {
    out += (out.empty() ? "" : std::string(separator)) + w;
  }
  return out;
}

}  // namespace

// Reads the command words before CLI11 does, for what CLI11 answers badly: `help [command...]`
// (the command's help on stdout, exit 0), a mistyped command (did you mean, exit 2) and a
// missing one (the commands to choose from, exit 2). nullopt: let CLI11 parse the line.
std::optional<int> PreParse(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  std::vector<std::string> path;  // the command words so far
  bool help = false;
  bool help_flag = false;  // --help, -h or --version anywhere: CLI11 answers those
  bool positional = false;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") {
      positional = true;
      break;
    }
    if (word.size() > 1 && word[0] == '-') {
      help_flag = help_flag || word == "--help" || word == "-h" || word == "--version";
      const CLI::Option* opt = FindOption(at, word);
      if (word.find('=') == std::string::npos && opt != nullptr &&
          opt->get_items_expected_min() > 0) {
        ++i;  // its value
      }
      continue;
    }
    if (at == &app && path.empty() && !help && word == "help") {
      help = true;
      continue;
    }
    CLI::App* sub = nullptr;
    for (CLI::App* candidate : at->get_subcommands([](CLI::App*) { return true; })) {
      if (candidate->check_name(word)) {
        sub = candidate;
      }
    }
    if (sub != nullptr) {
      at = sub;
      path.push_back(word);
      continue;
    }
    if (!SubcommandNames(*at).empty() && !HasPositionals(*at)) {
      const std::string prefix = Words(path, " ") + (path.empty() ? "" : " ");
      std::string message = absl::StrCat("unknown command '", prefix, word, "'");
      std::vector<std::string> close = Closest(word, SubcommandNames(*at));
      for (std::string& c : close) {
        c = absl::StrCat("'", prefix, c, "'");
      }
      if (!close.empty()) {
        message += "; did you mean " + Words(close, " or ") + "?";
      } else {
        message += "; commands: " + Words(SubcommandNames(*at), ", ");
      }
      std::fprintf(stderr, "pulse-cli: usage: %s\nRun 'pulse-cli help%s%s' for more.\n",
                   SafeText(message, false).c_str(), path.empty() ? "" : " ",
                   Words(path, " ").c_str());
      return static_cast<int>(ExitCode::kUsage);
    }
    positional = true;
    break;
  }
  if (help) {
    // CLI11 names a subcommand alone; its prefix makes the usage line one to copy.
    std::vector<std::string> parents = {kProgram};
    parents.insert(parents.end(), path.begin(), path.end());
    parents.pop_back();
    const std::string text = at == &app ? at->help() : at->help(Words(parents, " "));
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  if (!help_flag && !positional && at->get_require_subcommand_min() > 0) {
    const std::string what = path.empty() ? "a command is required"
                                          : "'pulse-cli " + Words(path, " ") + "' needs a command";
    std::fprintf(stderr, "pulse-cli: usage: %s: %s\nRun 'pulse-cli help%s%s' for more.\n",
                 what.c_str(), Words(SubcommandNames(*at), ", ").c_str(), path.empty() ? "" : " ",
                 Words(path, " ").c_str());
    return static_cast<int>(ExitCode::kUsage);
  }
  return std::nullopt;
}

}  // namespace pulse::cli
