// `pulse-cli ask -i` (docs/cli.md, "ask"): one conversation from stdin — every line the next
// question in the same session, blank lines skipped, until EOF or /exit — against the real
// server and the loopback fake model provider scripted turn by turn.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "pulse/testing/fake_provider_server.h"

namespace pulse::testing::e2e {
namespace {

std::vector<std::string> Args(int port, std::vector<std::string> rest) {
  std::vector<std::string> args = ServerArgs(port);
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

std::size_t Count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

TEST_CASE("ask -i holds one conversation from stdin until /exit", "[e2e][cli][ask]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(ProviderTurn(TextTurn("db-01 is at 96 % memory.")));
  fake.Enqueue(ProviderTurn(TextTurn("db-02 is fine.")));
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url()));

  const Captured c = RunCli(Args(server.port(), {"ask", "-i"}),
                            {.env = {TokenEnv(token)},
                             .stdin_text = "how is db-01?\n\n   \nand db-02?\n/exit\nnever sent\n"});
  INFO(c.err);
  CHECK(c.exit_code == 0);
  CHECK(c.out == "db-01 is at 96 % memory.\ndb-02 is fine.\n");
  // Piped: no prompt on stderr.
  CHECK(c.err.find("> ") == std::string::npos);

  // One session holds both questions, and nothing after /exit.
  const Captured sessions = RunCli(Args(server.port(), {"--json", "sessions"}), {.env = {TokenEnv(token)}});
  REQUIRE(sessions.exit_code == 0);
  CHECK(Count(sessions.out, "\"id\":") == 1);
  // Each turn names the session on stderr ("session <id> — continue with: ..."): the same one.
  const std::size_t at = c.err.find("session ");
  REQUIRE(at != std::string::npos);
  const std::string session = c.err.substr(at + 8, c.err.find(' ', at + 8) - at - 8);
  CHECK(Count(c.err, "--session " + session) == 2);
  const Captured shown =
      RunCli(Args(server.port(), {"sessions", "show", session}), {.env = {TokenEnv(token)}});
  INFO(shown.out << shown.err);
  CHECK(shown.out.find("how is db-01?") != std::string::npos);
  CHECK(shown.out.find("and db-02?") != std::string::npos);
  CHECK(shown.out.find("never sent") == std::string::npos);
}

TEST_CASE("ask -i takes a first question, continues --session and ends at EOF",
          "[e2e][cli][ask]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  for (const char* text : {"one.", "two.", "three."}) {
    fake.Enqueue(ProviderTurn(TextTurn(text)));
  }
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url()));

  // --json: NDJSON of every turn's events; the first question from the command line.
  const Captured json = RunCli(Args(server.port(), {"--json", "ask", "-i", "first?"}),
                               {.env = {TokenEnv(token)}, .stdin_text = "second?"});
  INFO(json.err);
  CHECK(json.exit_code == 0);
  CHECK(Count(json.out, "\"type\":\"done\"") == 2);
  const std::size_t at = json.out.find("\"session_id\":\"");
  REQUIRE(at != std::string::npos);
  const std::string session = json.out.substr(at + 14, json.out.find('"', at + 14) - at - 14);

  // --session continues that conversation.
  const Captured more = RunCli(Args(server.port(), {"ask", "-i", "--session", session}),
                               {.env = {TokenEnv(token)}, .stdin_text = "third?\n"});
  CHECK(more.exit_code == 0);
  CHECK(more.out == "three.\n");
  const Captured sessions = RunCli(Args(server.port(), {"--json", "sessions"}), {.env = {TokenEnv(token)}});
  CHECK(Count(sessions.out, "\"id\":") == 1);

  // Nothing to ask: empty stdin ends at once; ask without a question or -i is usage.
  CHECK(RunCli(Args(server.port(), {"ask", "-i"}), {.env = {TokenEnv(token)}, .stdin_text = ""})
            .exit_code == 0);
  const Captured usage = RunCli(Args(server.port(), {"ask"}), {.env = {TokenEnv(token)}});
  CHECK(usage.exit_code == 2);
  CHECK(usage.err.find("ask needs a question (or -i") != std::string::npos);
}

TEST_CASE("ask -i on a terminal says how to end and prompts for each question",
          "[e2e][cli][ask][tty]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(ProviderTurn(TextTurn("db-01 is fine.")));
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url()));
  const Captured c = RunCliInPty(Args(server.port(), {"ask", "-i"}),
                                 {.env = {TokenEnv(token)}, .stdin_text = "how is db-01?\n/exit\n"});
  INFO(c.out);
  CHECK(c.exit_code == 0);
  CHECK(c.out.find("/exit or Ctrl-D ends it") != std::string::npos);
  CHECK(c.out.find("db-01 is fine.") != std::string::npos);
  CHECK(Count(c.out, "> ") >= 2);  // before the question and before /exit
}

TEST_CASE("ask -i stops at the first failing turn with its exit code", "[e2e][cli][ask]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path());  // no Assistant configured
  const Captured c = RunCli(Args(server.port(), {"ask", "-i"}),
                            {.env = {TokenEnv(token)}, .stdin_text = "hello?\nagain?\n"});
  CHECK(c.exit_code != 0);
  CHECK(Count(c.err, "pulse-cli: ") == 1);
}

}  // namespace
}  // namespace pulse::testing::e2e
