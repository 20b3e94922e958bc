// The exec classifier: tokenizing, the refusal table and the public entry points. Per-program
// rules live in exec_program_rules.cc, the option parser in exec_options.cc, the path rules and
// output masking in exec_paths.cc.
#include "pulse/core/tools/exec_classifier.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "exec_rules.h"
#include "pulse/core/json/wire_enum.h"

namespace pulse::core {
namespace exec_internal {
namespace {

ExecVerdict Refused(Problem problem) {
  ExecVerdict verdict;
  verdict.allowed = false;
  verdict.refusal = problem.code;
  verdict.reason = std::move(problem.reason);
  return verdict;
}

// A byte as messages may show it: itself when printable, else its hex code.
std::string Printable(unsigned char c) {
  if (c >= 0x21 && c <= 0x7e) {
    return Cat("'", std::string(1, static_cast<char>(c)), "'");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  return Cat("byte 0x", std::string(1, kHex[c >> 4]), std::string(1, kHex[c & 0xf]));
}

// ---- tokenizing -------------------------------------------------------------------------

bool IsWordChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
    return true;
  }
  switch (c) {
    case '-':
    case '_':
    case '.':
    case '/':
    case ':':
    case '=':
    case ',':
    case '+':
    case '@':
    case '%':
      return true;
    default:
      return false;
  }
}

// Words allowed to hold characters outside the word set, exactly as written: curl's
// `-w '%{http_code}'` (a probe's status code). Nothing executes a shell, and no word here has
// a comma, so brace expansion is moot even for a reader who pastes it into one.
constexpr std::array<std::string_view, 1> kLiteralWords = {"%{http_code}"};

bool IsLiteralWord(std::string_view word) {
  return std::find(kLiteralWords.begin(), kLiteralWords.end(), word) != kLiteralWords.end();
}

// The length of the literal word at text[i] (unquoted, ending at a space or the end), or 0.
std::size_t LiteralWordAt(std::string_view text, std::size_t i) {
  for (std::string_view literal : kLiteralWords) {
    if (text.substr(i, literal.size()) == literal &&
        (i + literal.size() == text.size() || text[i + literal.size()] == ' ')) {
      return literal.size();
    }
  }
  return 0;
}

Check Tokenize(std::string_view text, std::vector<std::string>* words) {
  if (text.size() > kMaxExecCommandBytes) {
    return Problem{ExecRefusal::kTooLong,
                   Cat("the command is longer than ", kMaxExecCommandBytes, " bytes")};
  }
  // Byte classes first, so a control or non-ASCII byte is named for what it is wherever it is.
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      return Problem{ExecRefusal::kControlCharacter,
                     Cat("control character (", Printable(c), ") in the command")};
    }
    if (c >= 0x80) {
      return Problem{ExecRefusal::kNonAscii,
                     "non-ASCII text in the command (only plain ASCII is accepted)"};
    }
  }
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    std::string word;
    if (text[i] == '\'' || text[i] == '"') {
      const char quote = text[i];
      const std::size_t close = text.find(quote, i + 1);
      if (close == std::string_view::npos) {
        return Problem{ExecRefusal::kMalformedQuoting, "unterminated quote"};
      }
      word = std::string(text.substr(i + 1, close - i - 1));
      if (word.empty()) {
        return Problem{ExecRefusal::kMalformedQuoting, "empty quoted argument"};
      }
      for (const char c : word) {
        if (c != ' ' && !IsWordChar(c) && !IsLiteralWord(word)) {
          return Problem{ExecRefusal::kShellSyntax,
                         Cat("shell metacharacter or unsupported character ",
                             Printable(static_cast<unsigned char>(c)))};
        }
      }
      i = close + 1;
      if (i < text.size() && text[i] != ' ') {
        return Problem{ExecRefusal::kMalformedQuoting, "a quote must close at the end of a word"};
      }
    } else if (const std::size_t literal = LiteralWordAt(text, i); literal > 0) {
      word = std::string(text.substr(i, literal));
      i += literal;
    } else {
      while (i < text.size() && text[i] != ' ') {
        const char c = text[i];
        if (c == '\'' || c == '"') {
          return Problem{ExecRefusal::kMalformedQuoting,
                         "a quote must open at the start of a word"};
        }
        if (!IsWordChar(c)) {
          return Problem{ExecRefusal::kShellSyntax,
                         Cat("shell metacharacter or unsupported character ",
                             Printable(static_cast<unsigned char>(c)))};
        }
        word.push_back(c);
        ++i;
      }
    }
    if (word.size() > kMaxExecArgBytes) {
      return Problem{ExecRefusal::kTooLong,
                     Cat("an argument is longer than ", kMaxExecArgBytes, " bytes")};
    }
    if (words->size() == kMaxExecArgs) {
      return Problem{ExecRefusal::kTooLong, Cat("more than ", kMaxExecArgs, " arguments")};
    }
    words->push_back(std::move(word));
  }
  if (words->empty()) {
    return Problem{ExecRefusal::kEmpty, "empty command"};
  }
  return std::nullopt;
}

}  // namespace

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

namespace {

// Programs refused with a specific reason (everything unlisted is refused generically).
struct Known {
  std::string_view name;
  ExecRefusal code;
  std::string_view why;
};

constexpr std::string_view kInterpreterWhy =
    "is a shell or dual-use interpreter that can run arbitrary code";
constexpr std::string_view kWrapperWhy = "runs another program, which is not classified";
constexpr std::string_view kWriterWhy = "can write files or run commands";
constexpr std::string_view kNetworkWhy = "reaches the network, which is not a read of this host";
constexpr std::string_view kMutatorWhy = "changes the system";

constexpr Known kKnown[] = {
    {"sh", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"bash", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"dash", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"zsh", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"ksh", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"csh", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"tcsh", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"fish", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"busybox", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"node", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"nodejs", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"deno", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"irb", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"tclsh", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"java", ExecRefusal::kInterpreter, kInterpreterWhy},
    {"env", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"sudo", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"su", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"doas", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"pkexec", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"runuser", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"xargs", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"nohup", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"nice", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"ionice", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"watch", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"exec", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"eval", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"command", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"chroot", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"nsenter", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"unshare", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"setsid", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"stdbuf", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"strace", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"script", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"flock", ExecRefusal::kNotAllowlisted, kWrapperWhy},
    {"sed", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"awk", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"gawk", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"mawk", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"tee", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"dd", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"vi", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"vim", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"nano", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"ed", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"less", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"more", ExecRefusal::kNotAllowlisted, kWriterWhy},
    {"ssh", ExecRefusal::kNotAllowlisted, kNetworkWhy},
    {"scp", ExecRefusal::kNotAllowlisted, kNetworkWhy},
    {"nc", ExecRefusal::kNotAllowlisted, kNetworkWhy},
    {"ncat", ExecRefusal::kNotAllowlisted, kNetworkWhy},
    {"socat", ExecRefusal::kNotAllowlisted, kNetworkWhy},
    {"telnet", ExecRefusal::kNotAllowlisted, kNetworkWhy},
    {"rsync", ExecRefusal::kNotAllowlisted, kNetworkWhy},
    {"rm", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"mv", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"cp", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"ln", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"chmod", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"chown", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"touch", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"truncate", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"shred", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"kill", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"pkill", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"killall", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"reboot", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"shutdown", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"poweroff", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"halt", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"mkfs", ExecRefusal::kNotAllowlisted, kMutatorWhy},
    {"crontab", ExecRefusal::kNotAllowlisted, kMutatorWhy},
};

bool IsInterpreterFamily(std::string_view name) {
  static constexpr std::array<std::string_view, 7> kFamilies = {"python", "perl", "ruby", "php",
                                                                "lua",    "pypy", "node"};
  for (std::string_view family : kFamilies) {
    if (StartsWith(name, family)) {
      return true;
    }
  }
  return false;
}

}  // namespace

Check ClassifyArgv(const Argv& argv, bool nested) {
  const std::string_view name = argv[0];
  if (name.find('/') != std::string_view::npos) {
    return Problem{ExecRefusal::kPathCommand,
                   Cat("the program must be a bare allowlisted name, not the path ", name)};
  }
  if (nested && name == "timeout") {
    return Unsafe("timeout: nested timeouts are not allowed");
  }
  for (const Program& p : Programs()) {
    if (p.name == name) {
      return p.rule(argv);
    }
  }
  for (const Known& k : kKnown) {
    if (k.name == name) {
      return Problem{k.code, Cat(name, " ", k.why)};
    }
  }
  if (IsInterpreterFamily(name)) {
    return Problem{ExecRefusal::kInterpreter, Cat(name, " ", kInterpreterWhy)};
  }
  return Problem{ExecRefusal::kNotAllowlisted, Cat(name, " is not in the read-only allowlist")};
}

}  // namespace exec_internal

namespace {

constexpr std::array<WireName<ExecRefusal>, 13> kRefusals = {{
    {ExecRefusal::kNone, "none"},
    {ExecRefusal::kEmpty, "empty"},
    {ExecRefusal::kTooLong, "too_long"},
    {ExecRefusal::kControlCharacter, "control_character"},
    {ExecRefusal::kNonAscii, "non_ascii"},
    {ExecRefusal::kShellSyntax, "shell_syntax"},
    {ExecRefusal::kMalformedQuoting, "malformed_quoting"},
    {ExecRefusal::kTooManyArguments, "too_many_arguments"},
    {ExecRefusal::kPathCommand, "path_command"},
    {ExecRefusal::kInterpreter, "interpreter"},
    {ExecRefusal::kNotAllowlisted, "not_allowlisted"},
    {ExecRefusal::kUnsafeArgument, "unsafe_argument"},
    {ExecRefusal::kSensitivePath, "sensitive_path"},
}};

}  // namespace

std::string_view ToString(ExecRefusal refusal) {
  return WireNameOf(kRefusals, refusal, "not_allowlisted");
}

ExecVerdict ClassifyExecCommand(std::string_view command) {
  using exec_internal::Check;
  std::vector<std::string> words;
  if (Check bad = exec_internal::Tokenize(command, &words)) {
    return exec_internal::Refused(std::move(*bad));
  }
  if (Check bad = exec_internal::ClassifyArgv(words, false)) {
    return exec_internal::Refused(std::move(*bad));
  }
  ExecVerdict verdict;
  verdict.allowed = true;
  verdict.refusal = ExecRefusal::kNone;
  verdict.reason = "read-only";
  // The file readers' operands are exactly their words that start with '/': every operand
  // passed IsReadableExecPath, and their only valued options take counts.
  const std::size_t program = exec_internal::ProgramIndex(words);
  static constexpr std::array<std::string_view, 4> kFileReaders = {"cat", "head", "tail", "wc"};
  if (program < words.size() &&
      std::find(kFileReaders.begin(), kFileReaders.end(), words[program]) != kFileReaders.end()) {
    for (std::size_t i = program + 1; i < words.size(); ++i) {
      if (words[i].front() == '/') {
        verdict.file_operands.push_back(i);
      }
    }
  }
  verdict.argv = std::move(words);
  return verdict;
}

const std::vector<std::string_view>& ExecAllowedPrograms() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const exec_internal::Program& p : exec_internal::Programs()) {
      names.push_back(p.name);
    }
    return names;
  }();
  return kNames;
}

}  // namespace pulse::core
