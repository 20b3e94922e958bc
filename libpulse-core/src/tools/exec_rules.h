// Internal to the exec classifier (pulse/core/tools/exec_classifier.h): the vocabulary its
// three files share — refusal problems, the GNU-style option parser and the per-program rule
// table. Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pulse/core/tools/exec_classifier.h"

namespace pulse::core::exec_internal {

// absl::StrCat takes absl::string_view, which Debian's Abseil keeps distinct from
// std::string_view, so messages are joined here.
inline void Append(std::string& out, std::string_view text) { out.append(text); }
inline void Append(std::string& out, std::size_t number) { out.append(std::to_string(number)); }

template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (Append(out, parts), ...);
  return out;
}

// Why a command is refused; a rule answers nullopt when it accepts.
struct Problem {
  ExecRefusal code = ExecRefusal::kUnsafeArgument;
  std::string reason;
};
using Check = std::optional<Problem>;

inline Problem Unsafe(std::string reason) {
  return {ExecRefusal::kUnsafeArgument, std::move(reason)};
}

using Argv = std::vector<std::string>;

bool StartsWith(std::string_view s, std::string_view prefix);
// 1..9 ASCII digits.
bool IsDigits(std::string_view s);
// An absolute path without empty, "." or ".." components (one trailing '/' tolerated).
bool IsAbsolutePath(std::string_view path);

// ---- option parsing ---------------------------------------------------------------------

enum class Val {
  kNone,         // a flag
  kCount,        // digits
  kSignedCount,  // digits with an optional + or - sign
  kWord,         // any word (the next word, or attached)
  kOptional,     // optional value, attached only (-Ivalue, --opt=value); never the next word
};

struct Opt {
  std::string_view name;  // "-n" or "--lines"
  Val val = Val::kNone;
  std::span<const std::string_view> choices = {};  // allowed values, empty = any
};

// Splits argv[first..] into allowlisted options (validated) and operands, GNU getopt style:
// options may follow operands, short flags may be grouped (-alh), a short option's value is
// attached (-n20) or the next word, a long option's value follows '=' or is the next word, and
// "--" ends the options. Any option not in `opts` is refused (so are abbreviations).
// `options`, when given, receives each accepted option with its value ("" for a flag or an
// absent optional value), in order.
Check SplitArgs(const Argv& argv, std::size_t first, std::span<const Opt> opts,
                std::vector<std::string>* operands,
                std::vector<std::pair<std::string, std::string>>* options = nullptr);

// min <= operands <= max, else a refusal naming the program.
Check OperandCount(std::string_view program, const std::vector<std::string>& operands,
                   std::size_t min, std::size_t max);

Problem NotAllowed(std::string_view program, std::string_view option);

enum class Operands { kNone, kReadablePaths, kAbsolutePaths, kWords };

// Options from `opts`, then min..max operands (none for kNone) obeying the operand rule.
Check Simple(const Argv& argv, std::span<const Opt> opts, Operands kind, std::size_t min = 0,
             std::size_t max = 0);

// ---- programs ---------------------------------------------------------------------------

using Rule = Check (*)(const Argv&);

struct Program {
  std::string_view name;
  Rule rule;
};

// The allowlist, sorted by name.
std::span<const Program> Programs();

// Classifies a tokenized command; `nested` is true inside a timeout wrapper.
Check ClassifyArgv(const Argv& argv, bool nested);

// The index of the program an accepted argv runs: 0, or the word after a timeout's options
// and duration (argv.size() when there is none).
std::size_t ProgramIndex(const Argv& argv);

}  // namespace pulse::core::exec_internal
