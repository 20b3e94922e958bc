#include "console.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pulse::cli {
namespace {

std::string_view SgrCode(Style style) {
  switch (style) {
    case Style::kBold:
      return "1";
    case Style::kDim:
      return "2";
    case Style::kRed:
      return "31";
    case Style::kGreen:
      return "32";
    case Style::kYellow:
      return "33";
    case Style::kBlue:
      return "34";
    case Style::kMagenta:
      return "35";
    case Style::kCyan:
      return "36";
  }
  return "0";
}

void WriteAll(std::FILE* stream, std::string_view text) {
  if (!text.empty()) {
    // A closed pipe (pulse-cli ... | head) fails here; there is nobody left to tell.
    static_cast<void>(std::fwrite(text.data(), 1, text.size(), stream));
  }
  static_cast<void>(std::fflush(stream));
}

}  // namespace

std::string Paint(bool enabled, Style style, std::string_view text) {
  if (!enabled || text.empty()) {
    return std::string(text);
  }
  std::string out = "\x1b[";
  out += SgrCode(style);
  out += "m";
  out += text;
  out += "\x1b[0m";
  return out;
}

std::string Console::PaintOut(Style style, std::string_view text) const {
  return Paint(traits_.color_out, style, text);
}

std::string Console::PaintErr(Style style, std::string_view text) const {
  return Paint(traits_.color_err, style, text);
}

Console Console::ToStderr() const {
  ConsoleSinks sinks = sinks_;
  sinks.out = sinks_.err;
  ConsoleTraits traits = traits_;
  traits.json = false;
  traits.color_out = traits_.color_err;
  return Console(std::move(sinks), traits);
}

ConsoleTraits DetectConsoleTraits(bool json) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  const bool colour_allowed = (no_color == nullptr || no_color[0] == '\0') &&
                              (term == nullptr || std::strcmp(term, "dumb") != 0);
  ConsoleTraits traits;
  traits.json = json;
  traits.out_tty = isatty(STDOUT_FILENO) == 1;
  traits.color_out = colour_allowed && !json && traits.out_tty;
  traits.color_err = colour_allowed && isatty(STDERR_FILENO) == 1;
  traits.progress = !json && isatty(STDERR_FILENO) == 1;
  traits.interactive = isatty(STDIN_FILENO) == 1;
  if (traits.out_tty) {
    winsize size{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
      traits.columns = size.ws_col;
    }
  }
  // COLUMNS (set by shells, and by scripts that want a width) wins when it is a sane number.
  if (const char* env = std::getenv("COLUMNS"); env != nullptr) {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && value >= 20 && value <= 1000) {
      traits.columns = static_cast<std::size_t>(value);
    }
  }
  return traits;
}

Console StdConsole(const ConsoleTraits& traits) {
  ConsoleSinks sinks;
  sinks.out = [](std::string_view text) { WriteAll(stdout, text); };
  sinks.err = [](std::string_view text) { WriteAll(stderr, text); };
  sinks.read_line = []() -> std::optional<std::string> {
    std::string line;
    int c = 0;
    while ((c = std::fgetc(stdin)) != EOF && c != '\n') {
      if (line.size() < 4096) {
        line.push_back(static_cast<char>(c));
      }
    }
    if (c == EOF && line.empty()) {
      return std::nullopt;
    }
    return line;
  };
  return Console(std::move(sinks), traits);
}

}  // namespace pulse::cli
