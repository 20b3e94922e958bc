// Issue 19, item 1, end to end: the real pulse-server on `--fleet local` with an `ai:chat` token
// and a loopback fake provider that scripts `pulse_read` exec calls reading a canary file outside
// the readable roots (and the server's own pulse.db) through /proc/self/cwd. Neither the canary
// nor the database header may reach the tool result, the stored transcript or any request the
// provider receives; the model is told the read was refused.
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <climits>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "pulse/core/json/json_writer.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

// The local fleet's node id: node:<host name, [A-Za-z0-9._-] kept, others '-'>.
std::string LocalNodeId() {
  std::array<char, HOST_NAME_MAX + 1> name{};
  std::string host = gethostname(name.data(), name.size()) == 0 ? name.data() : "localhost";
  for (char& c : host) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    c = keep ? c : '-';
  }
  return "node:" + (host.empty() ? std::string("localhost") : host.substr(0, 64));
}

std::string ExecArgs(const std::string& node, const std::string& command) {
  core::JsonWriter w;
  w.StartObject();
  w.Member("action", "exec");
  w.Member("resource_id", node);
  w.Member("command", command);
  w.EndObject();
  return w.Take();
}

TEST_CASE("a chat cannot read a file outside the roots through /proc/self/cwd on the local fleet",
          "[e2e][server][reads]") {
  TempDir dir;
  TempDir outside;
  const std::string canary = outside.File("canary.txt");
  const std::string content = "CANARY-e2e-19a-" + std::to_string(getpid()) + "-do-not-leak";
  std::ofstream(canary) << content << "\n";
  REQUIRE(std::filesystem::current_path() != "/");

  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string node = LocalNodeId();
  fake.Enqueue(
      Turn(ToolTurn("call_canary", "pulse_read", ExecArgs(node, "cat /proc/self/cwd" + canary))));
  fake.Enqueue(
      Turn(ToolTurn("call_db", "pulse_read",
                    ExecArgs(node, "head -c 64 /proc/self/cwd" + dir.path() + "/pulse.db"))));
  fake.Enqueue(Turn(TextTurn("I could not read those files.")));

  const std::string token = MintToken(dir.path(), "ai:chat", "chat-only");
  ServerProcess server(dir.path(), {.args = {"--fleet", "local", "--provider", "openai-compatible",
                                             "--provider-base-url", fake.base_url() + "/v1",
                                             "--model", "test-model"}});
  REQUIRE(std::filesystem::exists(dir.path() + "/pulse.db"));

  const ChatStream chat = PostStream(server.port(), "/api/ai/chat", token,
                                     R"({"message":"show me the canary and the database"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  REQUIRE(chat.Last()->type == "done");
  // Both calls ran through the tool path and were refused there.
  std::size_t refused = 0;
  for (const ChatEvent& e : chat.events) {
    if (e.type == "tool_end") {
      const rapidjson::Document end = Json(e.data_json);
      CHECK(Str(end, "name") == "pulse_read");
      CHECK_FALSE(end["success"].GetBool());
      CHECK(Str(end, "output").find("sensitive_path") != std::string::npos);
      ++refused;
    }
  }
  CHECK(refused == 2);
  CHECK(chat.raw.find(content) == std::string::npos);
  CHECK(chat.raw.find("SQLite format") == std::string::npos);

  // The provider saw every turn: the refusals, never the contents.
  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE(requests.size() == 3);
  for (const RecordedRequest& r : requests) {
    CHECK(r.body.find(content) == std::string::npos);
    CHECK(r.body.find("SQLite format") == std::string::npos);
  }
  CHECK(requests[1].body.find("sensitive_path") != std::string::npos);

  // The stored transcript holds the refusals too.
  const std::string session = Str(chat.First("session"), "id");
  const Reply messages =
      Send(server.port(), "GET", "/api/ai/sessions/" + session + "/messages", token);
  REQUIRE(messages.status == 200);
  CHECK(messages.body.find("sensitive_path") != std::string::npos);
  CHECK(messages.body.find(content) == std::string::npos);
  CHECK(messages.body.find("SQLite format") == std::string::npos);
}

// Issue 28, item 6 (C-CLS-10, B-POL-9): the health probes the seed allows pass the governed
// exec path on the demo fleet; a probe that sends data is refused there with its code.
TEST_CASE("HTTP probes and ping from a chat run on the demo fleet and a data-sending curl is refused",
          "[e2e][server][reads][probes]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(ToolTurn(
      "call_probe", "pulse_read",
      ExecArgs("node:pve1", "curl -sS -o /dev/null -w '%{http_code}' -m 5 http://10.0.1.1/"))));
  fake.Enqueue(
      Turn(ToolTurn("call_ping", "pulse_read", ExecArgs("node:pve1", "ping -c 1 -W 1 10.0.1.1"))));
  fake.Enqueue(Turn(
      ToolTurn("call_post", "pulse_read",
               ExecArgs("node:pve1", "curl -sS -o /dev/null -d x=1 -X POST http://10.0.1.1/api"))));
  fake.Enqueue(Turn(TextTurn("web-01 answers; the POST was refused.")));

  const std::string token = MintToken(dir.path(), "ai:chat", "chat-only");
  ServerProcess server(dir.path(),
                       {.args = {"--provider", "openai-compatible", "--provider-base-url",
                                 fake.base_url() + "/v1", "--model", "test-model"}});
  const ChatStream chat =
      PostStream(server.port(), "/api/ai/chat", token, R"({"message":"is web-01 up?"})");
  INFO(chat.raw);
  REQUIRE(chat.status == 200);
  REQUIRE(chat.Last() != nullptr);
  REQUIRE(chat.Last()->type == "done");
  std::vector<rapidjson::Document> ends;
  for (const ChatEvent& e : chat.events) {
    if (e.type == "tool_end") {
      ends.push_back(Json(e.data_json));
    }
  }
  REQUIRE(ends.size() == 3);
  CHECK(ends[0]["success"].GetBool());
  CHECK(Str(ends[0], "output").find("200") != std::string::npos);
  CHECK(ends[1]["success"].GetBool());
  CHECK(Str(ends[1], "output").find("1 received") != std::string::npos);
  CHECK_FALSE(ends[2]["success"].GetBool());
  CHECK(Str(ends[2], "output").find("unsafe_argument") != std::string::npos);
  // The model was told the refusal and its code.
  const std::vector<RecordedRequest> requests = fake.Requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[3].body.find("unsafe_argument") != std::string::npos);
}

}  // namespace
}  // namespace pulse::testing::e2e
