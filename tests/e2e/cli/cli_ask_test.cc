// pulse-cli ask (and sessions resume) against the real server and the loopback fake model
// provider: the answer streams as the model writes it, --json is NDJSON of the server's events,
// a plan that needs a decision prints the approval card, the governed flow continues through
// approve and resume, and Ctrl-C stops the run with exit code 130.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <sstream>
#include <thread>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "pulse/testing/fake_provider_server.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kQueryArgs[] = R"({"action":"get","resource_id":"vm:105"})";
constexpr char kRestartArgs[] =
    R"({"type":"resource","resource_id":"vm:105","capability":"restart",)"
    R"("params":{"mode":"reboot"},"reason":"db-01 is at 96% memory"})";
constexpr char kReadArgs[] = R"({"action":"status","resource_id":"vm:105"})";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> Args(int port, std::vector<std::string> rest) {
  std::vector<std::string> args = ServerArgs(port);
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

// The session id from the human footer "session <id> — continue with: ...".
std::string SessionFromFooter(const std::string& err) {
  const std::size_t at = err.find("session ");
  REQUIRE(at != std::string::npos);
  const std::size_t start = at + 8;
  return err.substr(start, err.find(' ', start) - start);
}

TEST_CASE("ask streams the answer while the model is still writing it", "[e2e][cli][ask]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::vector<std::string> first = TextTurn("db-01 is running, ");
  const std::vector<std::string> second = TextTurn("memory is at 96 %.");
  ScriptedResponse turn = ProviderTurn({first[0], second[0], second[1], second[2], second[3]});
  turn.chunks[1].delay_before = absl::Seconds(3);
  fake.Enqueue(turn);
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url()));

  CliProcess cli(Args(server.port(), {"ask", "how is db-01?"}), {TokenEnv(token)});
  REQUIRE(cli.WaitForOutput("db-01 is running, "));
  // The first half is on the screen while the second is not written yet.
  CHECK(cli.out().find("memory") == std::string::npos);
  CHECK(cli.Wait() == 0);
  CHECK(cli.out() == "db-01 is running, memory is at 96 %.\n");
  // Piped: no colours, no tool activity; the session to continue is named on stderr.
  CHECK(cli.out().find('\x1b') == std::string::npos);
  CHECK(cli.err().find('\x1b') == std::string::npos);
  const std::string session = SessionFromFooter(cli.err());
  CHECK(cli.err().find("pulse-cli ask --session " + session) != std::string::npos);

  // The session holds the exchange.
  const Captured shown = RunCli(Args(server.port(), {"sessions", "show", session}),
                                {.env = {TokenEnv(token)}});
  INFO(shown.err);
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("how is db-01?") != std::string::npos);
  CHECK(shown.out.find("memory is at 96 %.") != std::string::npos);
  const Captured listed =
      RunCli(Args(server.port(), {"--json", "sessions"}), {.env = {TokenEnv(token)}});
  REQUIRE(listed.exit_code == 0);
  const rapidjson::Document sessions = Json(listed.out);
  REQUIRE(sessions.IsArray());
  REQUIRE(sessions.Size() == 1);
  CHECK(Str(sessions[0], "id") == session);
}

TEST_CASE("ask --json prints the server's events as NDJSON and --session continues a session",
          "[e2e][cli][ask]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(ProviderTurn(ToolTurn("call_q", "pulse_query", kQueryArgs)));
  fake.Enqueue(ProviderTurn(TextTurn("db-01 is at 96 % memory.")));
  fake.Enqueue(ProviderTurn(TextTurn("Still the same.")));
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url()));

  const Captured c = RunCli(Args(server.port(), {"--json", "ask", "how is db-01?"}),
                            {.env = {TokenEnv(token)}});
  INFO(c.out << c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(c.err.empty());
  const std::vector<std::string> lines = Lines(c.out);
  REQUIRE(lines.size() >= 4);
  std::vector<std::string> types;
  std::string text;
  std::string session;
  for (const std::string& line : lines) {
    const rapidjson::Document event = Json(line);  // every line is one JSON document
    REQUIRE(event.IsObject());
    REQUIRE(event.HasMember("data"));
    types.push_back(Str(event, "type"));
    if (types.back() == "content") {
      text += Str(event["data"], "text");
    }
    if (types.back() == "session") {
      session = Str(event["data"], "id");
    }
  }
  CHECK(types.front() == "session");
  CHECK(types.back() == "done");
  CHECK(std::count(types.begin(), types.end(), "tool_start") == 1);
  CHECK(std::count(types.begin(), types.end(), "tool_end") == 1);
  CHECK(text == "db-01 is at 96 % memory.");
  REQUIRE_FALSE(session.empty());
  CHECK(Str(Json(lines.back())["data"], "outcome") == "answered");

  const Captured next =
      RunCli(Args(server.port(), {"--json", "ask", "--session", session, "and now?"}),
             {.env = {TokenEnv(token)}});
  INFO(next.out << next.err);
  REQUIRE(next.exit_code == 0);
  const std::vector<std::string> next_lines = Lines(next.out);
  REQUIRE_FALSE(next_lines.empty());
  CHECK(Str(Json(next_lines.back())["data"], "session_id") == session);
  const Reply detail =
      Send(server.port(), "GET", "/api/ai/sessions/" + session, token);
  REQUIRE(detail.status == 200);
  CHECK(detail.body.find("and now?") != std::string::npos);
}

TEST_CASE("a plan that needs a decision prints the approval card, and approve then resume "
          "finishes the governed flow",
          "[e2e][cli][ask][approval]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(ProviderTurn(ToolTurn("call_q", "pulse_query", kQueryArgs)));
  fake.Enqueue(ProviderTurn(ToolTurn("call_c", "pulse_control", kRestartArgs)));
  fake.Enqueue(ProviderTurn(ToolTurn("call_r", "pulse_read", kReadArgs)));
  fake.Enqueue(ProviderTurn(TextTurn("db-01 was rebooted and its memory is back to normal.")));
  const std::string operator_token = MintToken(dir.path(), "ai:chat,ai:execute", "operator");
  const std::string approver = MintToken(dir.path(), "actions:approve", "approver");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url(), "controlled"));

  const Captured asked =
      RunCli(Args(server.port(), {"ask", "--control-level", "controlled",
                                  "db-01 is nearly out of memory, please restart it"}),
             {.env = {TokenEnv(operator_token)}});
  INFO(asked.out << asked.err);
  REQUIRE(asked.exit_code == 0);
  const Reply pending = Send(server.port(), "GET", "/api/actions", approver);
  REQUIRE(pending.status == 200);
  const rapidjson::Document queue = Json(pending.body);
  REQUIRE(queue["actions"].Size() == 1);
  const std::string action_id = Str(queue["actions"][0], "id");
  const std::string plan_hash = Str(queue["actions"][0]["plan"], "planHash");
  const std::string session = SessionFromFooter(asked.err);
  // The card: what, where, the plan hash a decision binds to, and what to type next.
  CHECK(asked.out.find("Approval needed") != std::string::npos);
  CHECK(asked.out.find(action_id) != std::string::npos);
  CHECK(asked.out.find("restart") != std::string::npos);
  CHECK(asked.out.find("vm:105") != std::string::npos);
  CHECK(asked.out.find(plan_hash) != std::string::npos);
  CHECK(asked.out.find("Approving authorises exactly this plan") != std::string::npos);
  CHECK(asked.out.find("pulse-cli actions approve " + action_id) != std::string::npos);
  CHECK(asked.out.find("pulse-cli sessions resume " + session) != std::string::npos);

  const Captured approved = RunCli(Args(server.port(), {"actions", "approve", action_id, "--yes"}),
                                   {.env = {TokenEnv(approver)}});
  INFO(approved.out << approved.err);
  REQUIRE(approved.exit_code == 0);
  CHECK(approved.out.find("is now approved") != std::string::npos);

  const Captured resumed = RunCli(Args(server.port(), {"sessions", "resume", session}),
                                  {.env = {TokenEnv(operator_token)}});
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.out.find("db-01 was rebooted and its memory is back to normal.") !=
        std::string::npos);
  const Reply detail = Send(server.port(), "GET", "/api/actions/" + action_id, approver);
  REQUIRE(detail.status == 200);
  CHECK(Str(Json(detail.body)["audit"], "state") == "completed");
}

TEST_CASE("ask --json shows the approval request as an approval_needed event", "[e2e][cli][ask]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(ProviderTurn(ToolTurn("call_q", "pulse_query", kQueryArgs)));
  fake.Enqueue(ProviderTurn(ToolTurn("call_c", "pulse_control", kRestartArgs)));
  const std::string token = MintToken(dir.path(), "ai:chat,ai:execute");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url(), "controlled"));
  const Captured c = RunCli(Args(server.port(), {"--json", "ask", "restart db-01"}),
                            {.env = {TokenEnv(token)}});
  INFO(c.out << c.err);
  REQUIRE(c.exit_code == 0);
  bool saw_approval = false;
  for (const std::string& line : Lines(c.out)) {
    const rapidjson::Document event = Json(line);
    if (Str(event, "type") == "approval_needed") {
      saw_approval = true;
      CHECK(Str(event["data"], "capability") == "restart");
      CHECK(Str(event["data"], "plan_hash").rfind("sha256:", 0) == 0);
    }
  }
  CHECK(saw_approval);
  CHECK(Str(Json(Lines(c.out).back())["data"], "outcome") == "awaiting_approval");
  // No human card on stdout in --json mode.
  CHECK(c.out.find("Approval needed") == std::string::npos);
}

TEST_CASE("a question from the Assistant is shown with its options and answered with answer",
          "[e2e][cli][ask]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(ProviderTurn(ToolTurn("call_ask", "pulse_question",
                                     R"({"question":"Which nginx do you mean?",)"
                                     R"("options":["service:pve1/nginx","service:pve2/nginx"]})")));
  fake.Enqueue(ProviderTurn(TextTurn("service:pve2/nginx is active and healthy.")));
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url()));

  const Captured asked =
      RunCli(Args(server.port(), {"ask", "is nginx ok?"}), {.env = {TokenEnv(token)}});
  INFO(asked.out << asked.err);
  REQUIRE(asked.exit_code == 0);
  CHECK(asked.out.find("Question: Which nginx do you mean?") != std::string::npos);
  CHECK(asked.out.find("  - service:pve1/nginx\n  - service:pve2/nginx\n") != std::string::npos);
  const std::size_t at = asked.out.find("pulse-cli answer ");
  REQUIRE(at != std::string::npos);
  const std::size_t start = at + std::string("pulse-cli answer ").size();
  const std::string question_id = asked.out.substr(start, asked.out.find(' ', start) - start);

  const Captured answered = RunCli(Args(server.port(), {"answer", question_id, "the pve2 one"}),
                                   {.env = {TokenEnv(token)}});
  INFO(answered.out << answered.err);
  CHECK(answered.exit_code == 0);
  CHECK(answered.out == "service:pve2/nginx is active and healthy.\n");
  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].body.find("the pve2 one") != std::string::npos);
}

TEST_CASE("Ctrl-C during ask stops the run and exits 130", "[e2e][cli][ask]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  ScriptedResponse slow = ProviderTurn(TextTurn("too late"));
  slow.header_delay = absl::Seconds(60);  // the model never answers in time
  fake.Enqueue(slow);
  const std::string token = MintToken(dir.path(), "ai:chat");
  ServerProcess server(dir.path(), AssistantServer(fake.base_url()));

  CliProcess cli(Args(server.port(), {"--json", "ask", "think hard"}), {TokenEnv(token)});
  REQUIRE(cli.WaitForOutput(R"("type":"session")"));
  const std::string first_line = cli.out().substr(0, cli.out().find('\n'));
  const std::string session = Str(Json(first_line)["data"], "id");
  cli.Signal(SIGINT);
  CHECK(cli.Wait(absl::Seconds(10)) == 130);
  const std::vector<std::string> lines = Lines(cli.out());
  REQUIRE_FALSE(lines.empty());
  CHECK(ErrorCode(lines.back()) == "interrupted");
  CHECK(cli.err().find("interrupted") != std::string::npos);

  // The server stopped the run: the session is no longer running.
  std::string status;
  for (int i = 0; i < 100; ++i) {
    const Reply r = Send(server.port(), "GET", "/api/ai/sessions/" + session, token);
    REQUIRE(r.status == 200);
    status = Str(Json(r.body), "status");
    if (status != "running") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(status != "running");
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
