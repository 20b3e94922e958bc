#include <algorithm>
#include <string>

#include "exec_rules.h"

namespace pulse::core::exec_internal {

bool IsDigits(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

namespace {

Check CheckValue(std::string_view program, const Opt& opt, std::string_view value, bool separate) {
  if (value.empty()) {
    return Unsafe(Cat(program, ": option ", opt.name, " needs a value"));
  }
  if (opt.val == Val::kCount && !IsDigits(value)) {
    return Unsafe(Cat(program, ": option ", opt.name, " takes a number"));
  }
  if (opt.val == Val::kSignedCount) {
    const std::string_view digits =
        (value.front() == '+' || value.front() == '-') ? value.substr(1) : value;
    if (!IsDigits(digits)) {
      return Unsafe(Cat(program, ": option ", opt.name, " takes a number"));
    }
    return std::nullopt;
  }
  if (separate && value.front() == '-') {
    return Unsafe(
        Cat(program, ": option ", opt.name, " is followed by an option instead of its value"));
  }
  if (!opt.choices.empty() &&
      std::find(opt.choices.begin(), opt.choices.end(), value) == opt.choices.end()) {
    return Unsafe(Cat(program, ": value ", value, " is not allowed for ", opt.name));
  }
  return std::nullopt;
}

const Opt* FindOpt(std::span<const Opt> opts, std::string_view name) {
  for (const Opt& o : opts) {
    if (o.name == name) {
      return &o;
    }
  }
  return nullptr;
}

}  // namespace

Problem NotAllowed(std::string_view program, std::string_view option) {
  return Unsafe(Cat(program, ": option ", option, " is not allowed"));
}

Check SplitArgs(const Argv& argv, std::size_t first, std::span<const Opt> opts,
                std::vector<std::string>* operands,
                std::vector<std::pair<std::string, std::string>>* options) {
  const auto seen = [options](std::string_view name, std::string_view value) {
    if (options != nullptr) {
      options->emplace_back(std::string(name), std::string(value));
    }
  };
  const std::string_view program = argv[0];
  bool options_done = false;
  for (std::size_t i = first; i < argv.size(); ++i) {
    const std::string_view a = argv[i];
    if (!options_done && a == "--") {
      options_done = true;
      continue;
    }
    if (options_done || a.size() < 2 || a[0] != '-') {
      operands->emplace_back(a);
      continue;
    }
    if (a[1] == '-') {
      const std::size_t eq = a.find('=');
      const std::string_view name = a.substr(0, eq);
      const Opt* opt = FindOpt(opts, name);
      if (opt == nullptr) {
        return NotAllowed(program, name);
      }
      if (opt->val == Val::kNone) {
        if (eq != std::string_view::npos) {
          return Unsafe(Cat(program, ": option ", name, " takes no value"));
        }
        seen(name, "");
        continue;
      }
      if (eq != std::string_view::npos) {
        if (Check bad = CheckValue(program, *opt, a.substr(eq + 1), false)) {
          return bad;
        }
        seen(name, a.substr(eq + 1));
        continue;
      }
      if (opt->val == Val::kOptional) {
        seen(name, "");
        continue;
      }
      if (i + 1 >= argv.size()) {
        return Unsafe(Cat(program, ": option ", name, " needs a value"));
      }
      if (Check bad = CheckValue(program, *opt, argv[++i], true)) {
        return bad;
      }
      seen(name, argv[i]);
      continue;
    }
    for (std::size_t j = 1; j < a.size(); ++j) {
      const std::string name = Cat("-", a.substr(j, 1));
      const Opt* opt = FindOpt(opts, name);
      if (opt == nullptr) {
        return NotAllowed(program, name);
      }
      if (opt->val == Val::kNone) {
        seen(name, "");
        continue;
      }
      const std::string_view rest = a.substr(j + 1);
      if (!rest.empty()) {
        if (Check bad = CheckValue(program, *opt, rest, false)) {
          return bad;
        }
        seen(name, rest);
      } else if (opt->val != Val::kOptional) {
        if (i + 1 >= argv.size()) {
          return Unsafe(Cat(program, ": option ", name, " needs a value"));
        }
        if (Check bad = CheckValue(program, *opt, argv[++i], true)) {
          return bad;
        }
        seen(name, argv[i]);
      } else {
        seen(name, "");
      }
      break;
    }
  }
  return std::nullopt;
}

Check OperandCount(std::string_view program, const std::vector<std::string>& operands,
                   std::size_t min, std::size_t max) {
  if (operands.size() < min) {
    return Unsafe(Cat(program, " needs at least ", min, " operand(s)"));
  }
  if (operands.size() > max) {
    return Problem{ExecRefusal::kTooManyArguments,
                   max == 0 ? Cat(program, " takes no operands here")
                            : Cat(program, " takes at most ", max, " operand(s)")};
  }
  return std::nullopt;
}

namespace {

Check ReadablePaths(std::string_view program, const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    if (!IsReadableExecPath(p)) {
      return Problem{ExecRefusal::kSensitivePath,
                     Cat(program, ": ", p,
                         " is not a readable path (absolute and normalized, under "
                         "/proc, /sys, /etc or /var/log, and not a secret)")};
    }
  }
  return std::nullopt;
}

Check AbsolutePaths(std::string_view program, const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    if (!IsAbsolutePath(p)) {
      return Unsafe(Cat(program, ": ", p, " is not a normalized absolute path"));
    }
  }
  return std::nullopt;
}

}  // namespace

Check Simple(const Argv& argv, std::span<const Opt> opts, Operands kind, std::size_t min,
             std::size_t max) {
  std::vector<std::string> operands;
  if (Check bad = SplitArgs(argv, 1, opts, &operands)) {
    return bad;
  }
  if (kind == Operands::kNone) {
    max = 0;
  }
  if (Check bad = OperandCount(argv[0], operands, min, max)) {
    return bad;
  }
  if (kind == Operands::kReadablePaths) {
    return ReadablePaths(argv[0], operands);
  }
  if (kind == Operands::kAbsolutePaths) {
    return AbsolutePaths(argv[0], operands);
  }
  return std::nullopt;
}

}  // namespace pulse::core::exec_internal
