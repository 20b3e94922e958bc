// The Assistant run pool against the real binary (issue 22; docs/server.md "Assistant runs"):
// many concurrent chats run on at most --run-workers threads and all complete; a chat over
// --run-queue is refused with 503 service_unavailable {budget: run_queue} and Retry-After and
// changes nothing; a queued run that is aborted ends at once without starting and leaves its
// session as it was; SIGTERM with runs working and queued ends every stream with error and
// done and exits 0; bad --run-workers / --run-queue values stop the server at startup.
// The server's threads are read from /proc/<pid>/task.
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

constexpr char kChatBody[] = R"({"message":"how is the fleet?"})";

ScriptedResponse Turn(const std::string& text, absl::Duration header_delay = absl::ZeroDuration(),
                      std::shared_ptr<absl::Notification> release = nullptr) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(TextTurn(text));
  response.header_delay = header_delay;
  response.release = std::move(release);
  return response;
}

std::vector<std::string> Args(const FakeProviderServer& fake, std::vector<std::string> more) {
  std::vector<std::string> args = {
      "--provider", "openai-compatible", "--provider-base-url", fake.base_url() + "/v1",
      "--model",    "test-model"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

int Threads(pid_t pid) {
  DIR* dir = opendir(absl::StrCat("/proc/", pid, "/task").c_str());
  if (dir == nullptr) {
    return -1;
  }
  int n = 0;
  while (dirent* entry = readdir(dir)) {
    n += entry->d_name[0] == '.' ? 0 : 1;
  }
  closedir(dir);
  return n;
}

// The value of one series in Prometheus text ("" when absent).
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

std::string Pool(int port, const std::string& token, const std::string& state) {
  return Series(Send(port, "GET", "/metrics", token).body,
                absl::StrCat(R"(pulse_assistant_run_pool{state=")", state, R"("})"));
}

// Polls /metrics until the run pool shows `value` for `state` (true) or 10 s pass.
bool PoolReaches(int port, const std::string& token, const std::string& state,
                 const std::string& value) {
  for (int i = 0; i < 500; ++i) {
    if (Pool(port, token, state) == value) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool ProviderSaw(const FakeProviderServer& fake, std::size_t n) {
  for (int i = 0; i < 1000; ++i) {
    if (fake.Requests().size() >= n) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_CASE("many concurrent chats run on a bounded pool of threads and all complete",
          "[e2e][server][runs]") {
  constexpr int kChats = 40;
  constexpr int kWorkers = 3;
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  for (int i = 0; i < kChats; ++i) {
    fake.Enqueue(Turn("All quiet.", absl::Milliseconds(40)));
  }
  const std::string token = MintToken(dir.path(), "*", "admin");
  ServerProcess server(dir.path(), {.args = Args(fake, {"--run-workers", "3", "--run-queue", "100",
                                                        "--max-run-streams", "100",
                                                        "--max-streams-per-token", "100"})});
  const int port = server.port();
  // Idle, after one request so the HTTP transport's resident workers are up.
  REQUIRE(Send(port, "GET", "/healthz").status == 200);
  const int idle = Threads(server.pid());
  REQUIRE(idle > 0);

  std::atomic<bool> sampling{true};
  std::atomic<int> peak{0};
  std::thread sampler([&] {
    while (sampling.load()) {
      peak.store(std::max(peak.load(), Threads(server.pid())));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::vector<ChatStream> results(kChats);
  std::vector<std::thread> clients;
  for (int i = 0; i < kChats; ++i) {
    clients.emplace_back([&, i] {
      results[static_cast<std::size_t>(i)] =
          PostStream(port, "/api/ai/chat", token, kChatBody, absl::Seconds(60));
    });
  }
  for (std::thread& t : clients) {
    t.join();
  }
  sampling.store(false);
  sampler.join();

  int completed = 0;
  for (const ChatStream& chat : results) {
    INFO(chat.raw << chat.error_body);
    CHECK(chat.status == 200);
    if (!chat.events.empty() && chat.events.back().type == "done" &&
        chat.raw.find(R"("outcome":"answered")") != std::string::npos) {
      ++completed;
    }
  }
  CHECK(completed == kChats);
  // The run workers never exceed their bound; the HTTP transport holds no thread per stream.
  const int bound = idle + kWorkers + 4;
  INFO("idle " << idle << " threads, peak " << peak.load() << ", bound " << bound);
  CHECK(peak.load() <= bound);
  CHECK(Pool(port, token, "max_workers") == "3");
  CHECK(std::stoi(Pool(port, token, "workers")) <= kWorkers);
  CHECK(PoolReaches(port, token, "working", "0"));
  CHECK(Pool(port, token, "queued") == "0");
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("a chat over the run queue is refused with a stable code and changes nothing",
          "[e2e][server][runs]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  auto hold = std::make_shared<absl::Notification>();
  fake.Enqueue(Turn("First, after a while.", absl::ZeroDuration(), hold));
  fake.Enqueue(Turn("Second, once a worker was free."));
  fake.Enqueue(Turn("Third, after the refusal."));
  const std::string token = MintToken(dir.path(), "*", "admin");
  ServerProcess server(dir.path(),
                       {.args = Args(fake, {"--run-workers", "1", "--run-queue", "1"})});
  const int port = server.port();

  StreamReader working(port, "/api/ai/chat", token, kChatBody);
  REQUIRE(working.WaitFor("session").has_value());
  REQUIRE(ProviderSaw(fake, 1));
  StreamReader queued(port, "/api/ai/chat", token, kChatBody);
  REQUIRE(PoolReaches(port, token, "queued", "1"));
  const Reply sessions_before = Send(port, "GET", "/api/ai/sessions", token);

  const Reply refused = Send(port, "POST", "/api/ai/chat", token, kChatBody);
  CHECK(refused.status == 503);
  CHECK(ErrorCode(refused.body) == "service_unavailable");
  CHECK(refused.body.find(R"("budget":"run_queue")") != std::string::npos);
  CHECK(refused.body.find(R"("limit":"1")") != std::string::npos);
  CHECK(refused.Header("Retry-After") == "1");
  // Nothing changed: no session, the queued run still waits, the provider saw one request.
  CHECK(Send(port, "GET", "/api/ai/sessions", token).body == sessions_before.body);
  CHECK(Json(sessions_before.body).Size() == 1);
  CHECK(Pool(port, token, "queued") == "1");
  CHECK(fake.Requests().size() == 1);
  CHECK(Series(Send(port, "GET", "/metrics", token).body, "pulse_assistant_runs_refused_total") ==
        "1");

  hold->Notify();
  const ChatStream first = working.Finish(absl::Seconds(20));
  const ChatStream second = queued.Finish(absl::Seconds(20));
  for (const ChatStream* chat : {&first, &second}) {
    INFO(chat->raw);
    REQUIRE_FALSE(chat->events.empty());
    CHECK(chat->events.front().type == "session");
    CHECK(Str(Json(chat->events.back().data_json), "outcome") == "answered");
  }
  // Room again.
  const ChatStream third = PostStream(port, "/api/ai/chat", token, kChatBody);
  CHECK(third.status == 200);
  CHECK(Json(Send(port, "GET", "/api/ai/sessions", token).body).Size() == 3);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("an aborted queued run ends at once without starting and leaves its session as it was",
          "[e2e][server][runs]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  auto hold = std::make_shared<absl::Notification>();
  fake.Enqueue(Turn("The first answer."));
  fake.Enqueue(Turn("The busy chat's answer.", absl::ZeroDuration(), hold));
  const std::string token = MintToken(dir.path(), "ai:chat,monitoring:read", "operator");
  ServerProcess server(dir.path(),
                       {.args = Args(fake, {"--run-workers", "1", "--run-queue", "4"})});
  const int port = server.port();

  const ChatStream first = PostStream(port, "/api/ai/chat", token, kChatBody);
  REQUIRE(first.status == 200);
  const std::string id = Str(first.First("session"), "id");
  const std::string messages_before =
      Send(port, "GET", "/api/ai/sessions/" + id + "/messages", token).body;
  const std::string status_before =
      Str(Json(Send(port, "GET", "/api/ai/sessions/" + id, token).body), "status");

  StreamReader busy(port, "/api/ai/chat", token, kChatBody);
  REQUIRE(busy.WaitFor("session").has_value());
  REQUIRE(ProviderSaw(fake, 2));
  StreamReader continued(port, "/api/ai/chat", token,
                         R"({"session_id":")" + id + R"(","message":"and now?"})");
  REQUIRE(PoolReaches(port, token, "queued", "1"));
  // Its session is held while it waits: it cannot be deleted under it.
  CHECK(ErrorCode(Send(port, "DELETE", "/api/ai/sessions/" + id, token).body) == "session_busy");

  const Reply abort = Send(port, "POST", "/api/ai/sessions/" + id + "/abort", token, "{}");
  CHECK(abort.body == R"({"session_id":")" + id + R"(","aborted":true})");
  const ChatStream ended = continued.Finish(absl::Seconds(5));  // not after the busy run
  INFO(ended.raw);
  REQUIRE(ended.events.size() == 2);
  CHECK(ended.events[0].type == "error");
  CHECK(Str(Json(ended.events[0].data_json), "code") == "RUN_CANCELLED");
  CHECK(Str(Json(ended.events[0].data_json), "reason") == "cancelled");
  CHECK(ended.events[1].type == "done");
  CHECK(Str(Json(ended.events[1].data_json), "outcome") == "failed");
  CHECK(Str(Json(ended.events[1].data_json), "session_id") == id);
  CHECK(Pool(port, token, "queued") == "0");
  CHECK(Send(port, "GET", "/api/ai/sessions/" + id + "/messages", token).body == messages_before);
  CHECK(Str(Json(Send(port, "GET", "/api/ai/sessions/" + id, token).body), "status") ==
        status_before);
  CHECK(fake.Requests().size() == 2);  // the aborted run never called the model

  hold->Notify();
  const ChatStream busy_done = busy.Finish(absl::Seconds(20));
  CHECK(Str(Json(busy_done.events.back().data_json), "outcome") == "answered");
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("SIGTERM with runs working and queued ends every stream with error and done",
          "[e2e][server][runs][lifecycle]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  auto never = std::make_shared<absl::Notification>();
  fake.Enqueue(Turn("never sent", absl::ZeroDuration(), never));
  const std::string token = MintToken(dir.path(), "ai:chat,monitoring:read", "operator");
  ServerProcess server(dir.path(),
                       {.args = Args(fake, {"--run-workers", "1", "--run-queue", "8"})});
  const int port = server.port();
  StreamReader working(port, "/api/ai/chat", token, kChatBody);
  REQUIRE(working.WaitFor("session").has_value());
  REQUIRE(ProviderSaw(fake, 1));
  std::vector<std::unique_ptr<StreamReader>> waiting;
  for (int i = 0; i < 3; ++i) {
    waiting.push_back(std::make_unique<StreamReader>(port, "/api/ai/chat", token, kChatBody));
  }
  REQUIRE(PoolReaches(port, token, "queued", "3"));

  const auto started = std::chrono::steady_clock::now();
  CHECK(server.Stop() == "exited 0");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(8));
  const ChatStream cancelled = working.Finish();
  INFO(cancelled.raw);
  REQUIRE(cancelled.events.size() >= 3);
  CHECK(cancelled.events.front().type == "session");
  CHECK(Str(Json(cancelled.events[cancelled.events.size() - 2].data_json), "reason") ==
        "cancelled");
  CHECK(cancelled.events.back().type == "done");
  for (const auto& reader : waiting) {
    const ChatStream never_started = reader->Finish();
    INFO(never_started.raw);
    REQUIRE(never_started.events.size() == 2);
    CHECK(Str(Json(never_started.events[0].data_json), "code") == "RUN_CANCELLED");
    CHECK(Str(Json(never_started.events[1].data_json), "outcome") == "failed");
  }
  CHECK(fake.Requests().size() == 1);
  never->Notify();
}

TEST_CASE("bad run pool settings are refused at startup with the setting named",
          "[e2e][server][runs]") {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--run-workers", "0"},
        std::vector<std::string>{"--run-workers", "-4"},
        std::vector<std::string>{"--run-workers", "100000000000000000000"},
        std::vector<std::string>{"--run-workers", "257"},
        std::vector<std::string>{"--run-queue", "-1"},
        std::vector<std::string>{"--run-queue", "65537"},
        std::vector<std::string>{"--run-queue", "1e9"},
        std::vector<std::string>{"--run-queue", ""}}) {
    std::vector<std::string> argv = {ServerBinary(), "--data-dir", dir.path(), "--listen",
                                     "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    const Captured run = RunCommand(argv);
    INFO(args.front() << " " << args.back() << ": " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(args.front()) != std::string::npos);
    CHECK(run.err.find("must be an integer from") != std::string::npos);
  }
}

}  // namespace
}  // namespace pulse::testing::e2e
