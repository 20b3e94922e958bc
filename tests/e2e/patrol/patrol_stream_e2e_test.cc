// The Patrol stream end to end (docs/patrol.md "The Patrol stream"): GET /api/ai/patrol/stream on
// the real pulse-server with the shipped demo fleet and, for the Watch pass, the loopback fake
// provider. A reader on its own thread collects every frame; runs are started over HTTP.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_provider_server.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

const std::string kBackup =
    core::FindingIdFor("backup-job:db-hourly", core::Category::kBackup, "backup-failed");
const std::string kWorker =
    core::FindingIdFor("app-container:worker", core::Category::kReliability, "container-exited");
constexpr char kScopes[] = "ai:execute,monitoring:read";

// One SSE frame: a comment, or an event with its id and data.
struct Frame {
  std::optional<std::string> comment;
  std::optional<std::uint64_t> id;
  std::string data;

  std::string Type() const {
    if (data.empty()) {
      return "";
    }
    rapidjson::Document doc = Json(data);
    return Str(doc, "type");
  }
};

// Cuts complete frames ("...\n\n") off the front of `buffer`.
std::vector<Frame> TakeFrames(std::string& buffer) {
  std::vector<Frame> out;
  std::size_t end = 0;
  while ((end = buffer.find("\n\n")) != std::string::npos) {
    const std::string block = buffer.substr(0, end);
    buffer.erase(0, end + 2);
    Frame frame;
    std::size_t start = 0;
    while (start <= block.size()) {
      std::size_t nl = block.find('\n', start);
      if (nl == std::string::npos) {
        nl = block.size();
      }
      const std::string line = block.substr(start, nl - start);
      start = nl + 1;
      if (line.rfind(": ", 0) == 0) {
        frame.comment = line.substr(2);
      } else if (line.rfind("id: ", 0) == 0) {
        std::uint64_t id = 0;
        REQUIRE(absl::SimpleAtoi(line.substr(4), &id));
        frame.id = id;
      } else if (line.rfind("data: ", 0) == 0) {
        frame.data += line.substr(6);
      }
    }
    out.push_back(std::move(frame));
  }
  return out;
}

// GET /api/ai/patrol/stream on a thread of its own, collecting frames until destroyed.
class StreamReader {
 public:
  StreamReader(int port, const std::string& token,
               std::optional<std::string> last_event_id = std::nullopt)
      : client_(std::make_shared<httplib::Client>("127.0.0.1", port)) {
    client_->set_connection_timeout(5, 0);
    client_->set_read_timeout(60, 0);
    thread_ = std::thread([this, token, last_event_id, owned = client_] {
      httplib::Request req;
      req.method = "GET";
      req.path = "/api/ai/patrol/stream";
      req.set_header("X-API-Token", token);
      if (last_event_id.has_value()) {
        req.set_header("Last-Event-ID", *last_event_id);
      }
      req.content_receiver = [this](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
        absl::MutexLock lock(&mu_);
        buffer_.append(data, n);
        for (Frame& f : TakeFrames(buffer_)) {
          frames_.push_back(std::move(f));
        }
        return !stop_.load();
      };
      httplib::Response res;
      httplib::Error error = httplib::Error::Success;
      owned->send(req, res, error);
      status_.store(res.status);
    });
  }
  ~StreamReader() {
    stop_.store(true);
    client_->stop();
    thread_.join();
  }
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  std::vector<Frame> Frames() const {
    absl::MutexLock lock(&mu_);
    return frames_;
  }
  // Waits until some frame satisfies `match` (true) or `timeout` passes.
  bool WaitFor(const std::function<bool(const Frame&)>& match,
               absl::Duration timeout = absl::Seconds(30)) const {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      for (const Frame& f : Frames()) {
        if (match(f)) {
          return true;
        }
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }
  // The events (data frames) parsed, in order.
  std::vector<rapidjson::Document> Events() const {
    std::vector<rapidjson::Document> out;
    for (const Frame& f : Frames()) {
      if (!f.data.empty()) {
        out.push_back(Json(f.data));
      }
    }
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::string buffer_ ABSL_GUARDED_BY(mu_);
  std::vector<Frame> frames_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::atomic<int> status_{0};
  std::shared_ptr<httplib::Client> client_;
  std::thread thread_;
};

std::function<bool(const Frame&)> CompleteOf(const std::string& run_id) {
  return [run_id](const Frame& f) {
    if (f.data.empty()) {
      return false;
    }
    rapidjson::Document doc = Json(f.data);
    return Str(doc, "type") == "complete" && Str(doc, "run_id") == run_id;
  };
}

std::string StartRun(int port, const std::string& token) {
  const Reply reply = Send(port, "POST", "/api/ai/patrol/run", token);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  return Str(Json(reply.body), "run_id");
}

ScriptedResponse Turn(const std::vector<std::string>& payloads) {
  ScriptedResponse response;
  response.path = "/v1/chat/completions";
  response.chunks = SseChunks(payloads);
  return response;
}

// The types of `run_id`'s events, in order.
std::vector<std::string> RunTypes(const std::vector<rapidjson::Document>& events,
                                  const std::string& run_id) {
  std::vector<std::string> out;
  for (const rapidjson::Document& e : events) {
    if (Str(e, "run_id") == run_id) {
      out.push_back(Str(e, "type") == "phase" ? "phase:" + Str(e, "phase") : Str(e, "type"));
    }
  }
  return out;
}

TEST_CASE(
    "the Patrol stream shows a run from start to complete with its phases, tool calls, "
    "text and finding changes",
    "[e2e][patrol][patrol_stream]") {
  TempDir dir;
  auto provider = FakeProviderServer::Start();
  REQUIRE(provider.ok());
  FakeProviderServer& fake = **provider;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  ServerProcess server(dir.path(), {.args = {"--provider", "openai-compatible",
                                             "--provider-base-url", fake.base_url() + "/v1",
                                             "--model", "test-model", "--patrol-interval", "0"}});
  const int port = server.port();
  StreamReader reader(port, token);
  REQUIRE(reader.WaitFor([](const Frame& f) { return !f.data.empty(); }, absl::Seconds(10)));
  {
    // A fresh client: `: connected`, then a snapshot (nothing has happened yet).
    const std::vector<Frame> first = reader.Frames();
    REQUIRE(first.size() >= 2);
    CHECK(first[0].comment == std::optional<std::string>("connected"));
    rapidjson::Document snapshot = Json(first[1].data);
    CHECK(Str(snapshot, "type") == "snapshot");
    CHECK(Str(snapshot, "resync_reason") == "late_joiner");
    CHECK(snapshot["buffer_end_seq"].GetUint64() == 0);
    CHECK(snapshot["running"].Empty());
    CHECK(first[1].id == std::optional<std::uint64_t>(0));
  }

  fake.Enqueue(
      Turn(ToolTurn("c1", "patrol_get_findings", R"({"resource_id":"backup-job:db-hourly"})")));
  fake.Enqueue(Turn(ToolTurn("c2", "patrol_assess_finding",
                             R"({"finding_id":")" + kBackup +
                                 R"(","verdict":"present","evidence":"last_result failed"})")));
  fake.Enqueue(Turn(TextTurn("The db-hourly backup still fails.")));
  const std::string run = StartRun(port, token);
  REQUIRE(reader.WaitFor(CompleteOf(run)));

  const std::vector<rapidjson::Document> events = reader.Events();
  // Every event carries its seq as its SSE id, and the seqs count up from 1 without a gap.
  std::uint64_t expected = 1;
  for (const Frame& f : reader.Frames()) {
    if (f.data.empty() || f.Type() == "snapshot") {
      continue;
    }
    INFO(f.data);
    REQUIRE(f.id.has_value());
    CHECK(*f.id == expected);
    CHECK(Json(f.data)["seq"].GetUint64() == expected);
    ++expected;
  }
  const std::vector<std::string> types = RunTypes(events, run);
  INFO(absl::StrJoin(types, ","));
  const std::vector<std::string> want = {
      "start",    "phase:triage", "phase:watch",     "tool_start",      "tool_end", "tool_start",
      "tool_end", "content",      "phase:reconcile", "phase:remediate", "complete"};
  // The run's own events in this order (content may come in several deltas).
  std::vector<std::string> collapsed;
  for (const std::string& t : types) {
    if (collapsed.empty() || t != "content" || collapsed.back() != "content") {
      collapsed.push_back(t);
    }
  }
  CHECK(collapsed == want);
  std::string text;
  for (const rapidjson::Document& e : events) {
    const std::string type = Str(e, "type");
    if (type == "tool_start" && Str(e, "tool_id") == "c1") {
      CHECK(Str(e, "tool_name") == "patrol_get_findings");
      CHECK(Str(e, "tool_input").find("backup-job:db-hourly") != std::string::npos);
    }
    if (type == "tool_end" && Str(e, "tool_id") == "c1") {
      CHECK(e["tool_success"].GetBool());
      CHECK(Str(e, "tool_output").find(kBackup) != std::string::npos);
    }
    if (type == "content" && Str(e, "run_id") == run) {
      text += Str(e, "content");
    }
    if (type == "complete") {
      CHECK(Str(e, "status") == "issues_found");
      CHECK(Str(e, "trigger") == "manual");
      CHECK(e["new_findings"].GetInt() >= 5);
    }
  }
  CHECK(text == "The db-hourly backup still fails.");
  // The staged faults were announced as finding changes while the run triaged.
  std::set<std::string> detected;
  for (const rapidjson::Document& e : events) {
    if (Str(e, "type") == "finding" && Str(e, "change") == "detected") {
      CHECK(detected.insert(Str(e, "finding_id")).second);  // never twice
      if (Str(e, "finding_id") == kWorker) {
        CHECK(Str(e, "resource_id") == "app-container:worker");
        CHECK(Str(e, "severity") == "warning");
        CHECK(e["active"].GetBool());
      }
    }
  }
  CHECK(detected.count(kBackup) == 1);
  CHECK(detected.count(kWorker) == 1);

  // A second run re-detects the same faults: heartbeats, not changes.
  const std::size_t before = events.size();
  fake.Enqueue(Turn(TextTurn("Quiet.")));
  const std::string second = StartRun(port, token);
  REQUIRE(reader.WaitFor(CompleteOf(second)));
  const std::vector<rapidjson::Document> after = reader.Events();
  for (std::size_t i = before; i < after.size(); ++i) {
    INFO(core::ToJsonString(after[i]));
    CHECK_FALSE((Str(after[i], "type") == "finding" && Str(after[i], "change") == "detected"));
  }
}

TEST_CASE(
    "Last-Event-ID resumes after that event, a stale id gets a snapshot, and a bad id or a "
    "missing scope is refused",
    "[e2e][patrol][patrol_stream]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), kScopes, "operator");
  const std::string reader_token = MintToken(dir.path(), "monitoring:read", "reader");
  std::vector<Frame> seen;
  std::string stale_id;
  {
    ServerProcess server(dir.path(), {.args = {"--patrol-interval", "0"}});
    const int port = server.port();
    StreamReader live(port, token);
    REQUIRE(live.WaitFor([](const Frame& f) { return !f.data.empty(); }, absl::Seconds(10)));
    const std::string run = StartRun(port, token);
    REQUIRE(live.WaitFor(CompleteOf(run)));
    for (const Frame& f : live.Frames()) {
      if (!f.data.empty() && f.Type() != "snapshot") {
        seen.push_back(f);
      }
    }
    REQUIRE(seen.size() >= 6);
    const std::uint64_t end = *seen.back().id;

    // Resuming mid-run: exactly the events after the id, byte for byte, and no snapshot.
    const std::uint64_t mid = *seen[2].id;
    {
      StreamReader resumed(port, token, std::to_string(mid));
      REQUIRE(resumed.WaitFor([end](const Frame& f) { return f.id == end; }, absl::Seconds(10)));
      const std::vector<Frame> frames = resumed.Frames();
      CHECK(frames[0].comment == std::optional<std::string>("connected"));
      std::vector<std::string> got;
      for (const Frame& f : frames) {
        if (!f.data.empty()) {
          got.push_back(f.data);
        }
      }
      std::vector<std::string> want;
      for (std::size_t i = 3; i < seen.size(); ++i) {
        want.push_back(seen[i].data);
      }
      CHECK(got == want);
    }
    // Resuming at the newest id: nothing replayed, and the next run's events arrive live.
    {
      StreamReader caught_up(port, token, std::to_string(end));
      REQUIRE(caught_up.WaitFor([](const Frame& f) { return f.comment.has_value(); },
                                absl::Seconds(10)));
      const std::string next = StartRun(port, token);
      REQUIRE(caught_up.WaitFor(CompleteOf(next)));
      const std::vector<rapidjson::Document> events = caught_up.Events();
      REQUIRE_FALSE(events.empty());
      CHECK(Str(events.front(), "type") == "start");
      CHECK(events.front()["seq"].GetUint64() == end + 1);
    }
    // An id this process never issued: a snapshot saying so, with the buffer's bounds.
    {
      StreamReader stale(port, token, "999999");
      REQUIRE(stale.WaitFor([](const Frame& f) { return !f.data.empty(); }, absl::Seconds(10)));
      rapidjson::Document snapshot = Json(stale.Frames()[1].data);
      CHECK(Str(snapshot, "type") == "snapshot");
      CHECK(Str(snapshot, "resync_reason") == "stale_last_event_id");
      CHECK(snapshot["buffer_start_seq"].GetUint64() == 1);
      CHECK(snapshot["buffer_end_seq"].GetUint64() > end);
    }
    // Malformed, signed, oversized and overflowing ids are refused with invalid_request, and
    // a token without ai:execute gets missing_scope; neither starts anything.
    const std::vector<std::string> bad_ids = {
        "12abc", "-1", "1.5", std::string(30, '1'), "99999999999999999999", "0x10"};
    for (const std::string& bad : bad_ids) {
      INFO(bad);
      const Reply refused =
          Send(port, "GET", "/api/ai/patrol/stream", token, "", {{"Last-Event-ID", bad}});
      CHECK(refused.status == 400);
      CHECK(ErrorCode(refused.body) == "invalid_request");
    }
    const Reply no_scope = Send(port, "GET", "/api/ai/patrol/stream", reader_token);
    CHECK(no_scope.status == 403);
    CHECK(ErrorCode(no_scope.body) == "missing_scope");
    const Reply runs = Send(port, "GET", "/api/ai/patrol/runs", token);
    CHECK(Json(runs.body).Size() == 2);
    stale_id = std::to_string(end);
    server.Stop();
  }
  // After a restart the seqs start again: an id of the previous process is stale.
  ServerProcess restarted(dir.path(), {.args = {"--patrol-interval", "0"}});
  StreamReader after(restarted.port(), token, stale_id);
  REQUIRE(after.WaitFor([](const Frame& f) { return !f.data.empty(); }, absl::Seconds(10)));
  rapidjson::Document snapshot = Json(after.Frames()[1].data);
  CHECK(Str(snapshot, "resync_reason") == "stale_last_event_id");
  CHECK(snapshot["buffer_end_seq"].GetUint64() == 0);
}

}  // namespace
}  // namespace pulse::testing::e2e
