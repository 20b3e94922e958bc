// pulse-cli on a terminal (a pseudo-terminal from util-linux `script`) and off one: colours and
// tool activity only on a terminal, none when piped, no colours with NO_COLOR; escape sequences
// in server-provided text (model output, finding titles) never reach the terminal as escapes;
// approve asks for confirmation on a terminal. Also the bash completion script, sourced in a
// real bash and asked for candidates the way bash's completion machinery asks.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "pulse/testing/fake_provider_server.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kQueryArgs[] = R"({"action":"get","resource_id":"vm:105"})";
// Window title, clear screen, red text, and a C1 CSI (U+009B) — all from the "model".
constexpr char kHostileText[] =
    "Status: \x1b]0;owned\x07\x1b[2J\x1b[31mALERT\x1b[0m done \xc2\x9b"
    "31m end";

std::vector<std::string> Args(int port, std::vector<std::string> rest) {
  std::vector<std::string> args = ServerArgs(port);
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

// The output with this CLI's own SGR sequences removed: what is left must hold no ESC.
std::string WithoutSgr(const std::string& text) {
  static const std::regex kSgr("\x1b\\[[0-9;]*m");
  return std::regex_replace(text, kSgr, "");
}

bool HasSgr(const std::string& text) { return WithoutSgr(text) != text; }

TEST_CASE("ask shows colours and tool activity on a terminal, neither when piped, no colours "
          "with NO_COLOR",
          "[e2e][cli][tty]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  for (int i = 0; i < 3; ++i) {
    fake.Enqueue(ProviderTurn(ToolTurn("call_q", "pulse_query", kQueryArgs)));
    fake.Enqueue(ProviderTurn(TextTurn("db-01 is at 96 % memory.")));
  }
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url()));
  const std::vector<std::string> ask = Args(server.port(), {"ask", "how is db-01?"});

  const Captured tty = RunCliInPty(ask, {.env = {TokenEnv(token)}});
  INFO(tty.out);
  CHECK(tty.exit_code == 0);
  CHECK(tty.out.find("db-01 is at 96 % memory.") != std::string::npos);
  CHECK(tty.out.find("→ pulse_query") != std::string::npos);
  CHECK(WithoutSgr(tty.out).find("✓ pulse_query") != std::string::npos);
  CHECK(HasSgr(tty.out));

  const Captured piped = RunCli(ask, {.env = {TokenEnv(token)}});
  INFO(piped.out << piped.err);
  CHECK(piped.exit_code == 0);
  CHECK(piped.out == "db-01 is at 96 % memory.\n");
  CHECK(piped.err.find("pulse_query") == std::string::npos);
  CHECK(piped.out.find('\x1b') == std::string::npos);
  CHECK(piped.err.find('\x1b') == std::string::npos);

  const Captured no_color = RunCliInPty(ask, {.env = {TokenEnv(token), "NO_COLOR=1"}});
  INFO(no_color.out);
  CHECK(no_color.exit_code == 0);
  CHECK(no_color.out.find("→ pulse_query") != std::string::npos);
  CHECK(no_color.out.find('\x1b') == std::string::npos);
}

TEST_CASE("findings are coloured by severity on a terminal only", "[e2e][cli][tty]") {
  TempDir dir;
  SeedFindings(dir.path(), {{"vm:105", "critical", "Memory pressure on db-01"}});
  const std::string token = MintToken(dir.path(), "ai:execute");
  ServerProcess server(dir.path());
  const std::vector<std::string> list = Args(server.port(), {"findings"});
  const Captured tty = RunCliInPty(list, {.env = {TokenEnv(token)}});
  INFO(tty.out);
  CHECK(tty.exit_code == 0);
  CHECK(tty.out.find("\x1b[31mcritical\x1b[0m") != std::string::npos);
  const Captured piped = RunCli(list, {.env = {TokenEnv(token)}});
  CHECK(piped.out.find("critical") != std::string::npos);
  CHECK(piped.out.find('\x1b') == std::string::npos);
  const Captured no_color = RunCliInPty(list, {.env = {TokenEnv(token), "NO_COLOR=yes"}});
  CHECK(no_color.out.find("critical") != std::string::npos);
  CHECK(no_color.out.find('\x1b') == std::string::npos);
}

TEST_CASE("escape sequences in server-provided text are neutralised on a terminal",
          "[e2e][cli][tty][hostile]") {
  TempDir dir;
  SeedFindings(dir.path(), {{"vm:105", "critical", "\x1b[5mBLINK\x1b[0m on db-01\x1b]0;t\x07"}});
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(ProviderTurn(TextTurn(kHostileText)));
  fake.Enqueue(ProviderTurn(TextTurn(kHostileText)));
  const std::string token = MintToken(dir.path(), "ai:chat,ai:execute");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url()));

  const Captured answer =
      RunCliInPty(Args(server.port(), {"ask", "status?"}), {.env = {TokenEnv(token)}});
  INFO(answer.out);
  CHECK(answer.exit_code == 0);
  CHECK(WithoutSgr(answer.out).find('\x1b') == std::string::npos);
  CHECK(answer.out.find("\xc2\x9b") == std::string::npos);
  CHECK(answer.out.find('\x07') == std::string::npos);
  // Still readable: the injected bytes are shown, not executed.
  CHECK(answer.out.find("Status: ^[]0;owned^G^[[2J^[[31mALERT^[[0m done") != std::string::npos);

  const Captured findings =
      RunCliInPty(Args(server.port(), {"findings"}), {.env = {TokenEnv(token)}});
  INFO(findings.out);
  CHECK(findings.exit_code == 0);
  CHECK(WithoutSgr(findings.out).find('\x1b') == std::string::npos);
  CHECK(findings.out.find("^[[5mBLINK^[[0m on db-01") != std::string::npos);

  // --json on a terminal: pure ASCII, every control escaped as \uXXXX.
  const Captured json =
      RunCliInPty(Args(server.port(), {"--json", "ask", "status?"}), {.env = {TokenEnv(token)}});
  INFO(json.out);
  CHECK(json.exit_code == 0);
  CHECK(std::all_of(json.out.begin(), json.out.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x80 && c != '\x1b';
  }));
  CHECK(json.out.find("\\u001B]0;owned") != std::string::npos);
}

TEST_CASE("approve asks for confirmation on a terminal", "[e2e][cli][tty][actions]") {
  TempDir dir;
  // Two tokens: whoever plans an admin-floor action may not approve it (requester separation).
  const std::string planner = MintToken(dir.path(), "actions:plan", "planner");
  const std::string token = MintToken(dir.path(), "actions:approve", "approver");
  ServerProcess server(dir.path());
  const Reply planned =
      Send(server.port(), "POST", "/api/actions/plan", planner,
           R"({"requestId":"tty","resourceId":"vm:101","capabilityName":"restart",)"
           R"("params":{},"reason":"cli e2e","requestedBy":"e2e"})");
  REQUIRE(planned.status == 200);
  const std::string action_id = Str(Json(planned.body), "actionId");
  const std::string plan_hash = Str(Json(planned.body), "planHash");
  const std::vector<std::string> approve = Args(server.port(), {"actions", "approve", action_id});

  const Captured declined = RunCliInPty(approve, {.env = {TokenEnv(token)}, .stdin_text = "n\n"});
  INFO(declined.out);
  CHECK(declined.exit_code == 1);
  CHECK(declined.out.find(plan_hash) != std::string::npos);
  CHECK(declined.out.find("[y/N]") != std::string::npos);
  CHECK(declined.out.find("not_confirmed") != std::string::npos);
  CHECK(Str(Json(Send(server.port(), "GET", "/api/actions/" + action_id, token).body)["audit"],
            "state") == "pending_approval");

  const Captured accepted = RunCliInPty(approve, {.env = {TokenEnv(token)}, .stdin_text = "y\n"});
  INFO(accepted.out);
  CHECK(accepted.exit_code == 0);
  CHECK(WithoutSgr(accepted.out).find("is now approved") != std::string::npos);
  CHECK(Str(Json(Send(server.port(), "GET", "/api/actions/" + action_id, token).body)["audit"],
            "state") == "approved");
}

// ---- bash completion ----

class Completion {
 public:
  Completion() {
    const Captured script = RunCli({"completion", "bash"});
    REQUIRE(script.exit_code == 0);
    std::ofstream(dir_.File("pulse-cli.bash")) << script.out;
  }

  // What bash completes for `words` (the last one is being typed). The script runs the program
  // the line names (pulse-cli __complete), so the first word is the binary's path here.
  std::set<std::string> For(std::vector<std::string> words) const {
    words.front() = CliBinary();
    std::string array;
    for (const std::string& w : words) {
      array += " '" + w + "'";
    }
    const std::string program =
        "source \"$1\" || exit 9\n"
        "complete -p pulse-cli >/dev/null || exit 8\n"
        "COMP_WORDS=(" + array + ")\n"
        "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
        "COMP_LINE=\"${COMP_WORDS[*]}\"\n"
        "COMP_POINT=${#COMP_LINE}\n"
        "_pulse_cli\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
    const Captured c = RunCommand({"/bin/bash", "--norc", "--noprofile", "-c", program, "bash",
                                   dir_.File("pulse-cli.bash")});
    INFO(c.err);
    REQUIRE(c.exit_code == 0);
    std::set<std::string> out;
    std::istringstream in(c.out);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) {
        out.insert(line);
      }
    }
    return out;
  }

 private:
  TempDir dir_;
};

using Words = std::set<std::string>;

TEST_CASE("the bash completion script completes subcommands, options and their values",
          "[e2e][cli][completion]") {
  const Completion bash;
  CHECK(bash.For({"pulse-cli", "fi"}) == Words{"findings"});
  CHECK(bash.For({"pulse-cli", "f"}) == Words{"findings", "fleet"});
  CHECK(bash.For({"pulse-cli", "findings", ""}) ==
        Words{"list", "ack", "snooze", "dismiss", "resolve", "unsnooze", "reopen"});
  CHECK(bash.For({"pulse-cli", "actions", "ap"}) == Words{"approve"});
  CHECK(bash.For({"pulse-cli", "ask", "--control-level", ""}) ==
        Words{"read_only", "controlled", "autonomous"});
  CHECK(bash.For({"pulse-cli", "findings", "dismiss", "fnd_1", "--reason", "e"}) ==
        Words{"expected_behavior"});
  CHECK(bash.For({"pulse-cli", "--server", "http://127.0.0.1:7655", "fi"}) == Words{"findings"});
  CHECK(bash.For({"pulse-cli", "actions", "approve", "act_1", "--y"}) == Words{"--yes"});
  CHECK(bash.For({"pulse-cli", "--j"}) == Words{"--json"});
  CHECK(bash.For({"pulse-cli", "findings", "list", "--j"}) == Words{"--json"});
  CHECK(bash.For({"pulse-cli", "--server", ""}).empty());
  CHECK(bash.For({"pulse-cli", "completion", ""}) == Words{"bash", "zsh", "fish"});
}

TEST_CASE("completion goes on after an on/off flag, which takes no value",
          "[e2e][cli][completion]") {
  const Completion bash;
  CHECK(bash.For({"pulse-cli", "--json", "fi"}) == Words{"findings"});
  CHECK(bash.For({"pulse-cli", "findings", "--all", "--r"}) == Words{"--resource"});
  CHECK(bash.For({"pulse-cli", "actions", "approve", "--yes", "--r"}) == Words{"--reason"});
  CHECK(bash.For({"pulse-cli", "fleet", "--has-findings", "--severity", "w"}) == Words{"warning"});
  // An option that takes a value still swallows the next word.
  CHECK(bash.For({"pulse-cli", "--timeout", ""}).empty());
}

TEST_CASE("the completion script offers exactly the subcommands --help lists",
          "[e2e][cli][completion]") {
  const Captured help = RunCli({"--help"});
  REQUIRE(help.exit_code == 0);
  Words listed;
  std::istringstream in(help.out.substr(help.out.find("Subcommands:")));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line) && line.rfind("  ", 0) == 0) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    listed.insert(name);
  }
  REQUIRE(listed.size() >= 10);
  CHECK(Completion().For({"pulse-cli", ""}) == listed);
}

}  // namespace
}  // namespace pulse::testing::e2e
