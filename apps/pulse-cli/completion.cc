#include "completion.h"

#include <algorithm>
#include <set>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace pulse::cli {
namespace {

constexpr std::size_t kMaxCandidates = 500;
constexpr std::size_t kMaxCandidateBytes = 256;

// A word a shell can take as it is: no space, control character, quote or shell syntax.
bool Plain(std::string_view word) {
  if (word.empty() || word.size() > kMaxCandidateBytes) {
    return false;
  }
  return std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == ':' || c == '/' || c == '@' || c == '+' || c == ',' ||
           c == '=';
  });
}

bool Visible(const CLI::App* app) {
  return !app->get_name().empty() && !app->get_disabled() && !app->get_group().empty();
}

// A flag (--json, --yes) expects no item even though CLI11 gives it a type size of 1.
bool TakesValue(const CLI::Option& opt) {
  return opt.nonpositional() && opt.get_items_expected_min() > 0;
}

// The option `name` (with its dashes) of `app` or, as options fall through, of a parent.
const CLI::Option* FindOption(const CLI::App* app, const std::string& name) {
  for (; app != nullptr; app = app->get_parent()) {
    if (const CLI::Option* opt = app->get_option_no_throw(name)) {
      return opt;
    }
  }
  return nullptr;
}

const CLI::App* FindSubcommand(const CLI::App* app, const std::string& word) {
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App* a) { return Visible(a); })) {
    if (sub->check_name(word)) {
      return sub;
    }
  }
  return nullptr;
}

std::vector<const CLI::Option*> Positionals(const CLI::App* app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* opt :
       app->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    out.push_back(opt);
  }
  return out;
}

class Collector {
 public:
  explicit Collector(std::string_view prefix) : prefix_(prefix) {}
  void Add(std::string_view word) {
    if (out_.size() < kMaxCandidates && Plain(word) && word.substr(0, prefix_.size()) == prefix_ &&
        seen_.insert(std::string(word)).second) {
      out_.emplace_back(word);
    }
  }
  std::vector<std::string> Take() { return std::move(out_); }

 private:
  std::string_view prefix_;
  std::set<std::string> seen_;
  std::vector<std::string> out_;
};

}  // namespace

std::vector<std::string> Complete(const CLI::App& app, const CompletionChoices& choices,
                                  const DynamicValues& dynamic,
                                  const std::vector<std::string>& words,
                                  const ValueFetcher& fetch) {
  if (words.empty()) {
    return {};
  }
  const CLI::App* at = &app;
  std::vector<std::string> positionals;
  const CLI::Option* value_of = nullptr;  // the option whose value the next word is
  ValueRequest request;
  bool only_positionals = false;
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& word = words[i];
    if (value_of != nullptr) {
      if (value_of->check_lname("server")) {
        request.server = word;
      } else if (value_of->check_lname("context")) {
        request.context = word;
      }
      value_of = nullptr;
      continue;
    }
    if (!only_positionals && word == "--") {
      only_positionals = true;
      continue;
    }
    if (!only_positionals && word.size() > 1 && word[0] == '-') {
      const std::size_t eq = word.find('=');
      const CLI::Option* opt = FindOption(at, word.substr(0, eq));
      if (opt != nullptr && TakesValue(*opt)) {
        if (eq == std::string::npos) {
          value_of = opt;
        } else if (opt->check_lname("server")) {
          request.server = word.substr(eq + 1);
        } else if (opt->check_lname("context")) {
          request.context = word.substr(eq + 1);
        }
      }
      continue;
    }
    if (const CLI::App* sub = only_positionals ? nullptr : FindSubcommand(at, word)) {
      at = sub;
      positionals.clear();
      continue;
    }
    positionals.push_back(word);
  }
  const std::string& cur = words.back();
  Collector out(cur);
  auto values = [&](const CLI::Option* opt) {
    if (const auto it = choices.find(opt); it != choices.end()) {
      for (const std::string& v : it->second) {
        out.Add(v);
      }
    }
    if (const auto it = dynamic.find(opt); it != dynamic.end()) {
      request.source = it->second;
      request.positionals = positionals;
      for (const std::string& v : fetch(request)) {
        out.Add(v);
      }
    }
  };
  if (value_of != nullptr) {
    values(value_of);
    return out.Take();
  }
  if (!only_positionals && !cur.empty() && cur[0] == '-') {
    for (const CLI::App* a = at; a != nullptr; a = a->get_parent()) {
      for (const CLI::Option* opt : a->get_options()) {
        if (!opt->nonpositional()) {
          continue;
        }
        for (const std::string& l : opt->get_lnames()) {
          out.Add("--" + l);
        }
        for (const std::string& s : opt->get_snames()) {
          out.Add("-" + s);
        }
      }
    }
    return out.Take();
  }
  if (!only_positionals) {
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App* a) { return Visible(a); })) {
      out.Add(sub->get_name());
    }
  }
  const std::vector<const CLI::Option*> slots = Positionals(at);
  if (positionals.size() < slots.size()) {
    values(slots[positionals.size()]);
  }
  return out.Take();
}

std::string CompletionScript(std::string_view shell, const std::string& program) {
  const std::string fn = "_" + absl::StrReplaceAll(program, {{"-", "_"}});
  if (shell == "bash") {
    return absl::StrCat(
        "# bash completion for ", program, " (generated by `", program,
        " completion bash`; do not edit).\n# Install: ", program,
        " completion bash > ~/.local/share/bash-completion/completions/", program, "\n", fn,
        "() {\n"
        "  local line words=() cur colon reply\n"
        "  if [[ -n ${COMP_POINT-} ]]; then\n"
        "    # The line up to the cursor, split at blanks only: ':' stays in vm:105.\n"
        "    line=\"${COMP_LINE:0:COMP_POINT}\"\n"
        "    read -r -a words <<<\"$line\"\n"
        "    [[ -z $line || $line == *[[:blank:]] ]] && words+=(\"\")\n"
        "  else\n"
        "    words=(\"${COMP_WORDS[@]:0:COMP_CWORD+1}\")\n"
        "  fi\n"
        "  (( ${#words[@]} > 1 )) || return 0\n"
        "  cur=\"${words[${#words[@]}-1]}\"\n"
        "  reply=\"$(\"${words[0]}\" __complete \"${words[@]:1}\" 2>/dev/null)\" || return 0\n"
        "  COMPREPLY=()\n"
        "  [[ -n $reply ]] && mapfile -t COMPREPLY <<<\"$reply\"\n"
        "  # bash replaces only what follows the last ':' of the word (COMP_WORDBREAKS).\n"
        "  if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then\n"
        "    colon=\"${cur%\"${cur##*:}\"}\"\n"
        "    COMPREPLY=(\"${COMPREPLY[@]#\"$colon\"}\")\n"
        "  fi\n"
        "  return 0\n"
        "}\n"
        "complete -F ",
        fn, " ", program, "\n");
  }
  if (shell == "zsh") {
    // Named as the file it is installed as (_pulse-cli in $fpath): autoloaded, that file is
    // the function's body and runs the completion; sourced, it registers it with compdef.
    const std::string zfn = "_" + program;
    return absl::StrCat(
        "#compdef ", program, "\n# zsh completion for ", program, " (generated by `", program,
        " completion zsh`; do not edit).\n# Install: ", program,
        " completion zsh > \"${fpath[1]}/_", program, "\"  (or: source <(", program,
        " completion zsh))\n", zfn,
        "() {\n"
        "  local -a candidates\n"
        "  candidates=(${(f)\"$(\"${words[1]}\" __complete \"${(@)words[2,CURRENT]}\" "
        "2>/dev/null)\"})\n"
        "  (( ${#candidates} )) && compadd -Q -- \"${candidates[@]}\"\n"
        "  return 0\n"
        "}\n"
        "if [[ \"${funcstack[1]}\" == \"",
        zfn, "\" ]]; then\n  ", zfn, " \"$@\"\nelse\n  compdef ", zfn, " ", program, "\nfi\n");
  }
  if (shell == "fish") {
    return absl::StrCat("# fish completion for ", program, " (generated by `", program,
                        " completion fish`; do not edit).\n# Install: ", program,
                        " completion fish > ~/.config/fish/completions/", program,
                        ".fish\nfunction _", fn,
                        "_complete\n"
                        "    set -l args (commandline -opc)\n"
                        "    set -l program $args[1]\n"
                        "    set -e args[1]\n"
                        "    $program __complete $args (commandline -ct) 2>/dev/null\n"
                        "end\n"
                        "complete -c ",
                        program, " -f -a '(_", fn, "_complete)'\n");
  }
  return "";
}

}  // namespace pulse::cli
