// Fuzzes the structural classifier of `pulse_read action=exec` (core/tools/exec_classifier.h)
// with the raw input as the command text. Beyond "no crash", it checks the documented
// contract: an accepted command is short printable ASCII without a shell metacharacter, its
// argv is made of allowlisted-program words only, re-quoting that argv is accepted with the
// same argv, a refusal's reason is printable, and the path predicates agree with each other.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "pulse/core/tools/exec_classifier.h"

namespace {

using pulse::core::ClassifyExecCommand;
using pulse::core::ExecRefusal;
using pulse::core::ExecVerdict;

// curl's -w status format: the one word accepted with characters outside the word set.
constexpr std::string_view kStatusFormat = "%{http_code}";

bool Printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

// The word alphabet of the header: [A-Za-z0-9] and - _ . / : = , + @ %.
bool WordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-_./:=,+@%").find(c) != std::string_view::npos;
}

void CheckAccepted(std::string_view command, const ExecVerdict& verdict) {
  PULSE_FUZZ_CHECK(verdict.refusal == ExecRefusal::kNone, "allowed exactly when kNone");
  PULSE_FUZZ_CHECK(verdict.reason == "read-only", "an accepted reason is read-only");
  PULSE_FUZZ_CHECK(command.size() <= pulse::core::kMaxExecCommandBytes, "accepted too long");
  PULSE_FUZZ_CHECK(Printable(command), "accepted a control or non-ASCII byte");
  // No chaining, piping, redirection, substitution, expansion or globbing, quoted or not; the
  // one word allowed braces is curl's status format, whole.
  std::string unbraced(command);
  for (std::size_t at = unbraced.find(kStatusFormat); at != std::string::npos;
       at = unbraced.find(kStatusFormat)) {
    unbraced.replace(at, kStatusFormat.size(), "status");
  }
  PULSE_FUZZ_CHECK(unbraced.find_first_of(";&|`$()<>\\!*?[]{}~#^\t\n\r") == std::string::npos,
                   "accepted a shell metacharacter");
  PULSE_FUZZ_CHECK(!verdict.argv.empty(), "accepted without an argv");
  PULSE_FUZZ_CHECK(verdict.argv.size() <= pulse::core::kMaxExecArgs, "too many words");
  const auto& programs = pulse::core::ExecAllowedPrograms();
  PULSE_FUZZ_CHECK(std::find(programs.begin(), programs.end(), verdict.argv[0]) != programs.end(),
                   "the program is not allowlisted");
  PULSE_FUZZ_CHECK(verdict.argv[0].find('/') == std::string::npos, "a path as the program");
  std::string requoted;
  for (const std::string& word : verdict.argv) {
    PULSE_FUZZ_CHECK(!word.empty() && word.size() <= pulse::core::kMaxExecArgBytes,
                     "a word is empty or too long");
    PULSE_FUZZ_CHECK(
        word == kStatusFormat ||
            std::all_of(word.begin(), word.end(), [](char c) { return c == ' ' || WordChar(c); }),
        "a word holds a character outside the word set");
    if (!requoted.empty()) {
      requoted.push_back(' ');
    }
    const bool quote = word.find(' ') != std::string::npos;
    requoted += quote ? "'" + word + "'" : word;
  }
  // The argv is what runs: written back with the header's quoting it means the same thing.
  if (requoted.size() <= pulse::core::kMaxExecCommandBytes) {
    const ExecVerdict again = ClassifyExecCommand(requoted);
    PULSE_FUZZ_CHECK(again.allowed, "the re-quoted argv is refused");
    PULSE_FUZZ_CHECK(again.argv == verdict.argv, "the re-quoted argv splits differently");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view command(reinterpret_cast<const char*>(data), size);
  const ExecVerdict verdict = ClassifyExecCommand(command);
  if (verdict.allowed) {
    CheckAccepted(command, verdict);
  } else {
    PULSE_FUZZ_CHECK(verdict.refusal != ExecRefusal::kNone, "refused with kNone");
    PULSE_FUZZ_CHECK(verdict.argv.empty(), "a refusal carries an argv");
    PULSE_FUZZ_CHECK(Printable(verdict.reason), "a refusal reason echoes raw bytes");
    PULSE_FUZZ_CHECK(!pulse::core::ToString(verdict.refusal).empty(), "unnamed refusal");
  }
  const ExecVerdict again = ClassifyExecCommand(command);
  PULSE_FUZZ_CHECK(again.allowed == verdict.allowed && again.refusal == verdict.refusal &&
                       again.argv == verdict.argv,
                   "the classifier is not deterministic");

  // The same bytes as a path: readable implies absolute, normalized and not sensitive.
  if (pulse::core::IsReadableExecPath(command)) {
    PULSE_FUZZ_CHECK(!pulse::core::IsSensitiveExecPath(command), "readable yet sensitive");
    PULSE_FUZZ_CHECK(!command.empty() && command.front() == '/', "readable yet relative");
    PULSE_FUZZ_CHECK(command.find("//") == std::string_view::npos &&
                         command.find("/./") == std::string_view::npos &&
                         command.find("/../") == std::string_view::npos,
                     "readable yet not normalized");
  }
  return 0;
}
