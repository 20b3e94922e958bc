// Dynamic completion (docs/cli.md, "completion"): the hidden `pulse-cli __complete WORD...`
// prints the candidates for the last word, one a line — subcommands, options, fixed values and
// the server's ids, resources and capabilities — and nothing at all when the server cannot be
// asked. The bash, zsh and fish scripts only call it; each at least parses in its shell (zsh
// and fish only where installed).
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "pulse/testing/fake_provider_server.h"

namespace pulse::testing::e2e {
namespace {

using Words = std::set<std::string>;

Words Lines(const std::string& text) {
  Words out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out.insert(line);
  }
  return out;
}

// __complete WORDS with `env`; REQUIREs exit 0 and nothing on stderr.
Words Complete(std::vector<std::string> words, const std::vector<std::string>& env = {}) {
  words.insert(words.begin(), "__complete");
  const Captured c = RunCli(words, {.env = env, .timeout = absl::Seconds(20)});
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(c.err.empty());
  return Lines(c.out);
}

const std::string kNowhere = "PULSE_SERVER=http://127.0.0.1:1";

TEST_CASE("__complete offers subcommands, options and fixed values without a server",
          "[e2e][cli][completion]") {
  CHECK(Complete({"f"}, {kNowhere}) == Words{"findings", "fleet"});
  CHECK(Complete({"con"}, {kNowhere}) == Words{"context"});
  CHECK(Complete({"ag"}, {kNowhere}) == Words{"agents"});
  // Hidden from the candidates: __complete itself.
  CHECK(Complete({"_"}, {kNowhere}).empty());
  CHECK(Complete({"findings", "--a"}, {kNowhere}) == Words{"--all"});
  CHECK(Complete({"--json", "patrol", "autonomy", "set", ""}, {kNowhere}) ==
        Words{"monitor", "approval", "assisted", "full"});
  CHECK(Complete({"sessions", "resume", "x", "--control-level", "c"}, {kNowhere}) ==
        Words{"controlled"});
  CHECK(Complete({"completion", ""}, {kNowhere}) == Words{"bash", "zsh", "fish"});
  // A value option swallows the next word; an on/off flag does not.
  CHECK(Complete({"--timeout", ""}, {kNowhere}).empty());
  CHECK(Complete({"--json", "st"}, {kNowhere}) == Words{"status"});
  CHECK(Complete({"--server", "http://x", "st"}, {kNowhere}) == Words{"status"});
}

TEST_CASE("__complete offers the server's ids, resources, types and capabilities",
          "[e2e][cli][completion]") {
  TempDir dir;
  const std::vector<std::string> seeded =
      SeedFindings(dir.path(), {{"vm:105", "critical", "Memory pressure on db-01"},
                                {"vm:101", "warning", "Disk filling on web-01"}});
  const std::string token = MintToken(dir.path(), "*");
  ServerProcess server(dir.path());
  const std::vector<std::string> env = {TokenEnv(token), "PULSE_SERVER=http://127.0.0.1:" +
                                                             std::to_string(server.port())};

  CHECK(Complete({"findings", "ack", ""}, env) == Words(seeded.begin(), seeded.end()));
  CHECK(Complete({"findings", "snooze", seeded[0].substr(0, 6)}, env) == Words{seeded[0]});
  const Words vms = Complete({"fleet", "show", "vm:10"}, env);
  CHECK(vms.count("vm:105") == 1);
  CHECK(std::all_of(vms.begin(), vms.end(), [](const std::string& v) { return v.rfind("vm:10", 0) == 0; }));
  CHECK(Complete({"fleet", "--type", ""}, env).count("vm") == 1);
  CHECK(Complete({"patrol", "run", "--resource", "vm:105"}, env) == Words{"vm:105"});
  CHECK(Complete({"actions", "plan", "vm:105", "re"}, env) == Words{"restart"});
  CHECK(Complete({"actions", "plan", "vm:105", "restart", ""}, env).empty());

  // A planned action's id is offered to approve.
  const Captured plan =
      RunCli({"--json", "actions", "plan", "vm:105", "restart", "--reason", "complete test"},
             {.env = env});
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  const Words actions = Complete({"actions", "approve", "act_"}, env);
  REQUIRE(actions.size() == 1);
  CHECK(plan.out.find(*actions.begin()) != std::string::npos);

  // bash, as its completion machinery asks: the word split at ':' (COMP_WORDBREAKS), the reply
  // is what follows the colon.
  std::ofstream(dir.File("c.bash")) << RunCli({"completion", "bash"}).out;
  const std::string line = CliBinary() + " fleet show vm:10";
  const Captured bash = RunCommand(
      {"/usr/bin/env", env[0], env[1], "/bin/bash", "--norc", "--noprofile", "-c",
       "source \"$1\" && COMP_LINE=\"$2\" && COMP_POINT=${#COMP_LINE} && "
       "COMP_WORDS=(\"$3\" fleet show vm : 10) && COMP_CWORD=5 && _pulse_cli && "
       "printf '%s\\n' \"${COMPREPLY[@]}\"",
       "bash", dir.File("c.bash"), line, CliBinary()});
  INFO(bash.err);
  CHECK(Lines(bash.out).count("105") == 1);

  // --server on the line is the server asked; --context names are the config file's.
  const std::vector<std::string> no_server = {TokenEnv(token), kNowhere};
  CHECK(Complete({"--server", "http://127.0.0.1:" + std::to_string(server.port()), "findings",
                  "ack", ""},
                 no_server)
            .size() == 2);
  const std::string xdg = "XDG_CONFIG_HOME=" + dir.File("config");
  REQUIRE(RunCli({"context", "add", "lab", "--server", "http://127.0.0.1:1"}, {.env = {xdg}})
              .exit_code == 0);
  CHECK(Complete({"--context", ""}, {xdg}) == Words{"lab"});
  CHECK(Complete({"context", "use", "l"}, {xdg}) == Words{"lab"});
}

TEST_CASE("__complete prints nothing when the server cannot be asked", "[e2e][cli][completion]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*");
  // Nothing listens.
  CHECK(Complete({"findings", "ack", ""}, {TokenEnv(token), kNowhere}).empty());
  // A server that refuses the token, and one that answers garbage with control characters.
  ServerProcess server(dir.path());
  const std::string url = "PULSE_SERVER=http://127.0.0.1:" + std::to_string(server.port());
  CHECK(Complete({"actions", "show", ""}, {TokenEnv("pulse_wrong"), url}).empty());
  auto fake = FakeProviderServer::Start();
  REQUIRE(fake.ok());
  ScriptedResponse hostile;
  hostile.path = "/api/agent/fleet-context";
  hostile.status = 200;
  hostile.content_type = "application/json";
  hostile.framing = BodyFraming::kContentLength;
  hostile.chunks = {Chunk(R"({"resources":[{"canonicalId":"vm:1\n--evil"},)"
                          R"({"canonicalId":"vm:2\u001b[2J"},{"canonicalId":"vm:3 x"},)"
                          R"({"canonicalId":"vm:4;rm"},{"canonicalId":7},{"canonicalId":"vm:ok"}]})")};
  (**fake).Enqueue(hostile);
  CHECK(Complete({"fleet", "show", ""}, {TokenEnv("t"), "PULSE_SERVER=" + (**fake).base_url()}) ==
        Words{"vm:ok"});
  // Hostile words on the line cost nothing.
  CHECK(Complete({std::string(100000, 'f')}, {kNowhere}).empty());
  CHECK(Complete({"--", "findings", ""}, {kNowhere}).empty());
  CHECK(Complete({"\x1b[2J", ""}, {kNowhere}).size() > 5);
  const Captured bare = RunCli({"__complete"});
  CHECK(bare.exit_code == 0);
  CHECK(bare.out.empty());
}

bool Installed(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

TEST_CASE("each completion script parses in its shell", "[e2e][cli][completion]") {
  TempDir dir;
  for (const std::string shell : {"bash", "zsh", "fish"}) {
    const Captured script = RunCli({"completion", shell});
    REQUIRE(script.exit_code == 0);
    CHECK(script.out.find("__complete") != std::string::npos);
    const std::string file = dir.File("pulse-cli." + shell);
    std::ofstream(file) << script.out;
    const std::string binary = "/usr/bin/" + shell;
    if (!Installed(binary)) {
      WARN(shell << " is not installed: its script is not parsed here");
      continue;
    }
    const Captured parsed = RunCommand({binary, "-n", file});
    INFO(shell << ": " << parsed.err);
    CHECK(parsed.exit_code == 0);
  }
}

}  // namespace
}  // namespace pulse::testing::e2e
