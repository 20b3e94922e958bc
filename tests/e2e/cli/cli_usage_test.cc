// pulse-cli's usage answers for a newcomer (docs/cli.md): `help [command...]` prints that
// command's help, a mistyped command gets "did you mean", a missing one lists the choices, and
// each of these is exit 2 with nothing on stdout, except help itself (exit 0, stdout).
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "cli_harness.h"

namespace pulse::testing::e2e {
namespace {

TEST_CASE("help prints the help of the command it names, on stdout", "[e2e][cli][usage]") {
  const Captured top = RunCli({"help"});
  CHECK(top.exit_code == 0);
  CHECK(top.err.empty());
  CHECK(top.out == RunCli({"--help"}).out);

  const Captured snooze = RunCli({"help", "findings", "snooze"});
  CHECK(snooze.exit_code == 0);
  CHECK(snooze.out.find("Usage: pulse-cli findings snooze") != std::string::npos);
  CHECK(snooze.out.find("--hours") != std::string::npos);
  CHECK(snooze.out.find("Examples:\n  pulse-cli findings snooze 7c1e --hours 24") !=
        std::string::npos);

  const Captured typo = RunCli({"help", "findigns"});
  CHECK(typo.exit_code == 2);
  CHECK(typo.out.empty());
  CHECK(typo.err.find("did you mean 'findings'?") != std::string::npos);
}

TEST_CASE("a mistyped command gets did-you-mean and exit 2, at any depth", "[e2e][cli][usage]") {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{
           {{"findigns"}, "unknown command 'findigns'; did you mean 'findings'?"},
           {{"--json", "--server", "http://127.0.0.1:1", "actoins", "list"},
            "unknown command 'actoins'; did you mean 'actions'?"},
           {{"findings", "lsit"}, "unknown command 'findings lsit'; did you mean 'findings list'?"},
           {{"patrol", "rnu"}, "unknown command 'patrol rnu'; did you mean 'patrol run'?"},
           {{"zzzzzz"}, "unknown command 'zzzzzz'; commands: ask, findings, actions"}}) {
    const Captured r = RunCli(c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("pulse-cli: usage: " + c.expected, 0) == 0);
  }
  // Hostile words are shown, never passed to the terminal raw, and cost no more than a short one.
  const Captured hostile = RunCli({"find\x1b[2Jings"});
  CHECK(hostile.exit_code == 2);
  CHECK(hostile.err.find('\x1b') == std::string::npos);
  const Captured huge = RunCli({std::string(100000, 'f')});
  CHECK(huge.exit_code == 2);
}

TEST_CASE("a missing command lists the commands to choose from", "[e2e][cli][usage]") {
  const Captured bare = RunCli({});
  CHECK(bare.exit_code == 2);
  CHECK(bare.out.empty());
  CHECK(bare.err.rfind("pulse-cli: usage: a command is required: ask, findings, actions", 0) == 0);
  CHECK(bare.err.find("Run 'pulse-cli help' for more.") != std::string::npos);

  const Captured patrol = RunCli({"patrol"});
  CHECK(patrol.exit_code == 2);
  CHECK(patrol.err.rfind("pulse-cli: usage: 'pulse-cli patrol' needs a command: run, runs, "
                         "status, autonomy",
                         0) == 0);
  // The default subcommands still run without one (findings lists), and --help still answers.
  CHECK(RunCli({"patrol", "--help"}).exit_code == 0);
  CHECK(RunCli({"--version"}).exit_code == 0);
}

}  // namespace
}  // namespace pulse::testing::e2e
