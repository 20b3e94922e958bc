// Console: where pulse-cli writes and how its output may look. Human output goes to `out`
// (stdout), diagnostics, progress and prompts to `err` (stderr). Colour is used on a stream only
// when it is a terminal, NO_COLOR is unset or empty and TERM is not "dumb"; progress (tool
// activity) only when stderr is a terminal and the output is not --json. Tests build a Console
// over strings. Not thread-safe: one command writes at a time.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace pulse::cli {

enum class Style { kBold, kDim, kRed, kGreen, kYellow, kBlue, kMagenta, kCyan };

struct ConsoleTraits {
  bool json = false;         // --json: stdout carries exactly the JSON output
  bool out_tty = false;      // stdout is a terminal
  bool color_out = false;    // SGR colours on stdout
  bool color_err = false;    // SGR colours on stderr
  bool progress = false;     // tool activity and progress lines on stderr
  bool interactive = false;  // stdin is a terminal: a confirmation may be asked
  // The terminal's width in columns when stdout is one (or COLUMNS says), 0 when unknown: tables
  // are fitted to it.
  std::size_t columns = 0;
};

struct ConsoleSinks {
  std::function<void(std::string_view)> out;
  std::function<void(std::string_view)> err;
  // One line from stdin without its newline; nullopt at end of input.
  std::function<std::optional<std::string>()> read_line;
};

class Console {
 public:
  Console(ConsoleSinks sinks, ConsoleTraits traits) : sinks_(std::move(sinks)), traits_(traits) {}

  void Out(std::string_view text) const { sinks_.out(text); }
  void Err(std::string_view text) const { sinks_.err(text); }
  std::optional<std::string> ReadLine() const {
    return sinks_.read_line ? sinks_.read_line() : std::nullopt;
  }

  // `text` wrapped in the SGR sequence of `style` when that stream is coloured. `text` must
  // already be safe (SafeText): painting never sanitizes.
  std::string PaintOut(Style style, std::string_view text) const;
  std::string PaintErr(Style style, std::string_view text) const;

  // This console with its stdout output sent to stderr instead (what a --json command shows a
  // human while stdout is reserved for the JSON document).
  Console ToStderr() const;

  const ConsoleTraits& traits() const { return traits_; }
  bool json() const { return traits_.json; }

 private:
  ConsoleSinks sinks_;
  ConsoleTraits traits_;
};

// The traits of this process's stdin/stdout/stderr and environment.
ConsoleTraits DetectConsoleTraits(bool json);

// A Console over the process's stdin, stdout and stderr (each write is flushed).
Console StdConsole(const ConsoleTraits& traits);

// `text` in `style` when `enabled`.
std::string Paint(bool enabled, Style style, std::string_view text);

}  // namespace pulse::cli
