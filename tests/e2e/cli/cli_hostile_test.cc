// pulse-cli against a hostile or broken server (the loopback fake server playing pulse-server,
// since the real one cannot be made to misbehave): replies that are not JSON, error pages
// without an envelope, oversized replies and events, streams cut before their end, malformed
// events, ill-formed UTF-8 and escape sequences, a server that never answers. Each ends with a
// clear message and the documented exit code, never a crash or a hang.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "pulse/testing/fake_provider_server.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kFindings[] = "/api/ai/patrol/findings";
constexpr char kChat[] = "/api/ai/chat";

ScriptedResponse Answer(const std::string& path, int status, std::string body,
                       const std::string& content_type = "application/json") {
  ScriptedResponse r;
  r.path = path;
  r.status = status;
  r.content_type = content_type;
  r.framing = BodyFraming::kContentLength;
  r.chunks = {Chunk(std::move(body))};
  return r;
}

ScriptedResponse Stream(std::vector<std::string> frames, bool cut = false) {
  ScriptedResponse r;
  r.path = kChat;
  r.content_type = "text/event-stream";
  for (std::string& f : frames) {
    r.chunks.push_back(Chunk(std::move(f)));
  }
  r.disconnect_after_chunks = cut;
  return r;
}

std::string Frame(const std::string& json) { return "data: " + json + "\n\n"; }

const std::string kSession = Frame(R"({"type":"session","data":{"id":"ses_x"}})");
const std::string kDone = Frame(
    R"({"type":"done","data":{"session_id":"ses_x","outcome":"answered","state":"READING"}})");

class FakePulse {
 public:
  FakePulse() {
    auto server = FakeProviderServer::Start();
    REQUIRE(server.ok());
    server_ = *std::move(server);
  }
  FakeProviderServer& operator*() { return *server_; }
  Captured Run(std::vector<std::string> args, std::vector<std::string> env = {}) {
    std::vector<std::string> all = {"--server", server_->base_url()};
    all.insert(all.end(), args.begin(), args.end());
    env.push_back(TokenEnv("tok"));
    return RunCli(all, {.env = env, .timeout = absl::Seconds(30)});
  }

 private:
  std::unique_ptr<FakeProviderServer> server_;
};

TEST_CASE("a reply that is not JSON or has no envelope ends with a clear code", "[e2e][cli][hostile]") {
  FakePulse fake;
  (*fake).Enqueue(Answer(kFindings, 200, "<html>proxy login</html>", "text/html"));
  const Captured html = fake.Run({"findings"});
  INFO(html.err);
  CHECK(html.exit_code == 1);
  CHECK(html.err.find("invalid_response") != std::string::npos);
  CHECK(html.out.empty());

  (*fake).Enqueue(Answer(kFindings, 200, "{\"truncated\": [1, 2"));
  const Captured truncated = fake.Run({"--json", "findings"});
  CHECK(truncated.exit_code == 1);
  CHECK(ErrorCode(truncated.out) == "invalid_response");

  (*fake).Enqueue(Answer(kFindings, 502, "<h1>Bad Gateway</h1>", "text/html"));
  const Captured gateway = fake.Run({"findings"});
  CHECK(gateway.exit_code == 1);
  CHECK(gateway.err.find("HTTP 502") != std::string::npos);

  (*fake).Enqueue(Answer(kFindings, 401, "go away", "text/plain"));
  CHECK(fake.Run({"findings"}).exit_code == 4);
  (*fake).Enqueue(Answer(kFindings, 403, "forbidden", "text/plain"));
  CHECK(fake.Run({"findings"}).exit_code == 4);
  // A governance refusal is not an authentication problem.
  (*fake).Enqueue(Answer("/api/actions/act_1/decision", 403,
                        R"({"error":"action_approval_forbidden","message":"agents cannot approve"})"));
  CHECK(fake.Run({"actions", "reject", "act_1"}).exit_code == 1);

  // A chat answered with JSON instead of an event stream.
  (*fake).Enqueue(Answer(kChat, 200, R"({"answer":"hi"})"));
  const Captured not_stream = fake.Run({"ask", "hi"});
  CHECK(not_stream.exit_code == 1);
  CHECK(not_stream.err.find("instead of an event stream") != std::string::npos);
}

TEST_CASE("oversized replies and events are refused without exhausting memory",
          "[e2e][cli][hostile]") {
  FakePulse fake;
  (*fake).Enqueue(Answer(kFindings, 200, "[\"" + std::string(33u << 20, 'a') + "\"]"));
  const Captured big = fake.Run({"findings"});
  INFO(big.err);
  CHECK(big.exit_code == 1);
  CHECK(big.err.find("response_too_large") != std::string::npos);

  // One event line of 9 MiB without an end.
  (*fake).Enqueue(Stream({kSession, "data: " + std::string(9u << 20, 'x')}));
  const Captured line = fake.Run({"ask", "hi"});
  INFO(line.err);
  CHECK(line.exit_code == 3);
  CHECK(line.err.find("stream_incomplete") != std::string::npos);
}

TEST_CASE("a stream that ends before its done event exits 3 and keeps what arrived",
          "[e2e][cli][hostile]") {
  FakePulse fake;
  const std::string content = Frame(R"({"type":"content","data":{"text":"partial answ"}})");
  (*fake).Enqueue(Stream({kSession, content}, /*cut=*/true));
  const Captured cut = fake.Run({"ask", "hi"});
  INFO(cut.out << cut.err);
  CHECK(cut.exit_code == 3);
  CHECK(cut.out == "partial answ\n");
  CHECK(cut.err.find("stream_incomplete") != std::string::npos);
  CHECK(cut.err.find("ses_x") != std::string::npos);

  // Ended cleanly, but without `done`; --json closes with an envelope line.
  (*fake).Enqueue(Stream({kSession, content}));
  const Captured ended = fake.Run({"--json", "ask", "hi"});
  INFO(ended.out << ended.err);
  CHECK(ended.exit_code == 3);
  const std::string last = ended.out.substr(ended.out.rfind('\n', ended.out.size() - 2) + 1);
  CHECK(ErrorCode(last) == "stream_incomplete");
}

TEST_CASE("malformed events are skipped and the stream still completes", "[e2e][cli][hostile]") {
  FakePulse fake;
  (*fake).Enqueue(Stream({kSession, Frame("not json at all"), Frame(R"({"type":"content"})"),
                          ": comment\r\n\r\n",
                          "data: {\"type\":\"content\",\r\ndata: \"data\":{\"text\":\"ok\"}}\r\n\r\n",
                          kDone}));
  const Captured c = fake.Run({"ask", "hi"});
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  CHECK(c.out == "ok\n");
  CHECK(c.err.find("skipped an event") != std::string::npos);
}

TEST_CASE("ill-formed UTF-8 and escapes from the server are repaired and neutralised",
          "[e2e][cli][hostile]") {
  FakePulse fake;
  const std::string hostile =
      Frame("{\"type\":\"content\",\"data\":{\"text\":\"bad \xff\xfe bytes \\u001b[31mred\\u009b\"}}");
  (*fake).Enqueue(Stream({kSession, hostile, kDone}));
  (*fake).Enqueue(Stream({kSession, hostile, kDone}));
  const Captured human = fake.Run({"ask", "hi"});
  INFO(human.out);
  CHECK(human.exit_code == 0);
  CHECK(human.out == "bad \xef\xbf\xbd\xef\xbf\xbd bytes ^[[31mred\xef\xbf\xbd\n");

  const Captured json = fake.Run({"--json", "ask", "hi"});
  INFO(json.out);
  CHECK(json.exit_code == 0);
  CHECK(std::all_of(json.out.begin(), json.out.end(),
                    [](char ch) { return static_cast<unsigned char>(ch) < 0x80; }));
  const std::string second = json.out.substr(json.out.find('\n') + 1);
  const rapidjson::Document event = Json(second.substr(0, second.find('\n')));
  CHECK(Str(event["data"], "text") == "bad \xef\xbf\xbd\xef\xbf\xbd bytes \x1b[31mred\xc2\x9b");

  (*fake).Enqueue(Answer("/api/actions/act_1", 404,
                        R"({"error":"action_not_found","message":"\u001b[2Jgone\u001b]0;x\u0007"})"));
  const Captured error = fake.Run({"actions", "show", "act_1"});
  INFO(error.err);
  CHECK(error.exit_code == 1);
  CHECK(error.err.find('\x1b') == std::string::npos);
  CHECK(error.err.find("^[[2Jgone^[]0;x^G") != std::string::npos);
}

TEST_CASE("a server that never answers times out with exit 3", "[e2e][cli][hostile]") {
  FakePulse fake;
  ScriptedResponse silent = Answer(kFindings, 200, "[]");
  silent.header_delay = absl::Seconds(20);
  (*fake).Enqueue(silent);
  const auto start = std::chrono::steady_clock::now();
  const Captured c = fake.Run({"--timeout", "1", "findings"});
  INFO(c.err);
  CHECK(c.exit_code == 3);
  CHECK(c.err.find("server_unreachable") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

}  // namespace
}  // namespace pulse::testing::e2e
