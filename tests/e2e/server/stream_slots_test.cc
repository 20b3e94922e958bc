// Stream slots against the real binary (issue 19 item 8): agent event subscriptions and
// Assistant runs draw from separate budgets, and one token holds at most its cap of open
// streams, so a monitoring:read token cannot starve another token's chat, and a full run
// budget does not block subscriptions. Refusals are 429 too_many_streams (the token's cap) or
// 503 service_unavailable with Retry-After (a full budget), and /metrics exports both budgets
// (in use / max) and the refusals. Small caps keep each case to a few seconds.
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kChatBody[] = R"({"message":"how is the fleet?"})";

ScriptedResponse Turn(const std::vector<std::string>& payloads,
                      absl::Duration header_delay = absl::ZeroDuration()) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  response.header_delay = header_delay;
  return response;
}

// The value of one series in Prometheus text ("" when absent), e.g.
// Series(text, "pulse_http_stream_slots{budget=\"runs\",state=\"max\"}").
std::string Series(const std::string& metrics, const std::string& series) {
  const std::string line_start = series + " ";
  std::size_t at = 0;
  while ((at = metrics.find(line_start, at)) != std::string::npos) {
    if (at == 0 || metrics[at - 1] == '\n') {
      const std::size_t end = metrics.find('\n', at);
      return metrics.substr(at + line_start.size(), end - at - line_start.size());
    }
    at += line_start.size();
  }
  return "";
}

// Waits until the subscriber has its answer: 200 with stream.connected, or a refusal.
int Opened(EventSubscriber& subscriber) {
  for (int i = 0; i < 250; ++i) {
    if (subscriber.status() != 0) {
      return subscriber.status();
    }
    if (subscriber.WaitFor("stream.connected", absl::Milliseconds(20))) {
      return 200;
    }
  }
  return 0;
}

std::vector<std::string> Args(const FakeProviderServer& fake, std::vector<std::string> more) {
  std::vector<std::string> args = {
      "--provider", "openai-compatible", "--provider-base-url", fake.base_url() + "/v1",
      "--model",    "test-model"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST_CASE("one token's event streams stop at its cap while another token's chat still streams",
          "[e2e][server][streams]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  fake.Enqueue(Turn(TextTurn("All quiet.")));
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  const std::string chatter = MintToken(dir.path(), "ai:chat", "chatter");
  ServerProcess server(dir.path(), {.args = Args(fake, {"--max-streams-per-token", "2"})});
  const int port = server.port();

  std::vector<std::unique_ptr<EventSubscriber>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(std::make_unique<EventSubscriber>(port, reader));
    REQUIRE(Opened(*held.back()) == 200);
  }
  // The token's next stream is refused with its own code, and nothing else is affected.
  const Reply refused = SendFirstChunk(port, "GET", "/api/agent/events", reader);
  CHECK(refused.status == 429);
  CHECK(ErrorCode(refused.body) == "too_many_streams");
  CHECK(refused.body.find("\"budget\":\"subscriptions\"") != std::string::npos);
  const ChatStream chat = PostStream(port, "/api/ai/chat", chatter, kChatBody);
  INFO(chat.raw);
  CHECK(chat.status == 200);
  REQUIRE_FALSE(chat.events.empty());
  CHECK(chat.events.back().type == "done");
  CHECK(Send(port, "GET", "/api/agent/fleet-context", reader).status == 200);

  const std::string metrics = Send(port, "GET", "/metrics", reader).body;
  CHECK(Series(metrics, R"(pulse_http_stream_slots{budget="subscriptions",state="in_use"})") ==
        "2");
  CHECK(Series(metrics, R"(pulse_http_stream_slots{budget="subscriptions",state="max"})") == "384");
  CHECK(Series(metrics, R"(pulse_http_stream_slots{budget="runs",state="max"})") == "128");
  CHECK(Series(metrics, R"(pulse_http_stream_slots_per_token)") == "2");
  CHECK(Series(metrics,
               R"(pulse_http_stream_refusals_total{budget="subscriptions",reason="per_token"})") ==
        "1");
  CHECK(Series(metrics, R"(pulse_http_stream_refusals_total{budget="runs",reason="budget"})") ==
        "0");

  held.clear();
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("a full run budget refuses runs with Retry-After but never blocks subscriptions",
          "[e2e][server][streams]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  // The first run waits on the provider for a while, holding the only run slot.
  fake.Enqueue(Turn(TextTurn("Slow but fine."), absl::Seconds(3)));
  fake.Enqueue(Turn(TextTurn("Now there is room.")));
  const std::string admin = MintToken(dir.path(), "*", "admin");
  const std::string other = MintToken(dir.path(), "ai:chat", "other");
  const std::string reader = MintToken(dir.path(), "monitoring:read", "reader");
  ServerProcess server(dir.path(), {.args = Args(fake, {"--max-run-streams", "1"})});
  const int port = server.port();

  StreamReader slow(port, "/api/ai/chat", admin, kChatBody);
  REQUIRE(slow.WaitFor("session").has_value());
  const Reply refused = Send(port, "POST", "/api/ai/chat", other, kChatBody);
  CHECK(refused.status == 503);
  CHECK(ErrorCode(refused.body) == "service_unavailable");
  CHECK(refused.body.find("\"budget\":\"runs\"") != std::string::npos);
  CHECK(refused.Header("Retry-After") == "1");
  // The refused run never started: no session was created for it.
  const Reply sessions = Send(port, "GET", "/api/ai/sessions", admin);
  CHECK(Json(sessions.body).Size() == 1);

  // Subscriptions have a budget of their own.
  EventSubscriber watcher(port, reader);
  CHECK(Opened(watcher) == 200);
  const std::string metrics = Send(port, "GET", "/metrics", reader).body;
  CHECK(Series(metrics, R"(pulse_http_stream_slots{budget="runs",state="in_use"})") == "1");
  CHECK(Series(metrics, R"(pulse_http_stream_slots{budget="runs",state="max"})") == "1");
  CHECK(Series(metrics, R"(pulse_http_stream_refusals_total{budget="runs",reason="budget"})") ==
        "1");

  const ChatStream first = slow.Finish(absl::Seconds(20));
  CHECK(first.status == 200);
  REQUIRE_FALSE(first.events.empty());
  CHECK(first.events.back().type == "done");
  // Its slot is back: the next run streams.
  ChatStream next;
  for (int attempt = 0; attempt < 50; ++attempt) {
    next = PostStream(port, "/api/ai/chat", other, kChatBody);
    if (next.status != 503) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(next.status == 200);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("stream settings out of range are refused at startup with the setting named",
          "[e2e][server][streams]") {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--max-streams-per-token", "0"},
        std::vector<std::string>{"--max-run-streams", "-1"},
        std::vector<std::string>{"--max-event-streams", "1e3"},
        std::vector<std::string>{"--max-event-streams", "15000", "--max-run-streams", "6000"}}) {
    std::vector<std::string> argv = {ServerBinary(), "--data-dir", dir.path(), "--listen",
                                     "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    const Captured run = RunCommand(argv);
    INFO(args.front() << " " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(args.front().substr(2)) != std::string::npos);
  }
}

}  // namespace
}  // namespace pulse::testing::e2e
