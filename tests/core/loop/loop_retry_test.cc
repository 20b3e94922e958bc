// Provider retries and cancellation: a connect failure gets exactly one retry, a rate limit up
// to max_rate_limit_attempts honouring its retry-after (each retry announced by a provider_retry
// event), a retry-after beyond the cap ends the run at once, and a cancelled run — by its flag,
// at a turn boundary, during a retry wait, or by the provider's CancelledError — ends failed
// with reason `cancelled`, never retried.
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "loop_test_support.h"

namespace pulse::testing::loop {
namespace {

using core::LoopEventType;
using core::RunEnd;

constexpr const char* kReadVm = R"({"action":"status","resource_id":"vm:101"})";

struct Retry {
  std::int64_t attempt = 0;
  std::int64_t max_attempts = 0;
  std::int64_t retry_after_ms = 0;

  friend bool operator==(const Retry&, const Retry&) = default;
};

std::ostream& operator<<(std::ostream& os, const Retry& r) {
  return os << "{attempt " << r.attempt << "/" << r.max_attempts << ", " << r.retry_after_ms
            << " ms}";
}

std::vector<Retry> Retries(const RecordingEventSink& events) {
  std::vector<Retry> out;
  for (const rapidjson::Document& d : events.DataOf(LoopEventType::kWorkflowState)) {
    if (Str(d, "phase") == "provider_retry") {
      out.push_back(Retry{core::GetInt64(d, "attempt").value_or(-1),
                          core::GetInt64(d, "max_attempts").value_or(-1),
                          core::GetInt64(d, "retry_after_ms").value_or(-1)});
    }
  }
  return out;
}

absl::StatusOr<core::RunOutcome> RunCancellable(Harness& h, std::shared_ptr<std::atomic<bool>> flag,
                                                std::string message = "hi") {
  core::RunRequest request{"ses_test", std::move(message), Policy(), std::move(flag)};
  return h.loop->Run(request, h.events);
}

TEST_CASE("a connect failure is retried exactly once, then the run fails", "[core][loop]") {
  for (const absl::Status& failure : {core::ProviderUnavailableError("connection refused"),
                                      absl::DeadlineExceededError("connect timeout")}) {
    Harness h;
    h.BindDefaults();
    for (int i = 0; i < 3; ++i) {
      h.provider.Add(ScriptedTurn::Error(failure));
    }
    absl::StatusOr<core::RunOutcome> out = h.Run("hi");
    REQUIRE(out.ok());
    CHECK(out->end == RunEnd::kFailed);
    CHECK(out->failure_reason == "provider_unavailable");
    CHECK(h.provider.RequestCount() == 2);
    CHECK(Retries(h.events) == std::vector<Retry>{{2, 2, 200}});
    CHECK(h.inline_runner.sleeps() == std::vector<absl::Duration>{absl::Milliseconds(200)});
  }
}

TEST_CASE("a rate limit with retry-after is retried up to three attempts", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  for (int i = 0; i < 4; ++i) {
    h.provider.Add(ScriptedTurn::Error(core::RateLimitedError("429 slow down", absl::Seconds(2))));
  }
  absl::StatusOr<core::RunOutcome> out = h.Run("hi");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kFailed);
  CHECK(out->failure_reason == "provider_rate_limited");
  CHECK(h.provider.RequestCount() == 3);
  CHECK(Retries(h.events) == std::vector<Retry>{{2, 3, 2000}, {3, 3, 2000}});
  CHECK(h.inline_runner.sleeps() ==
        std::vector<absl::Duration>{absl::Seconds(2), absl::Seconds(2)});
  CHECK(h.events.Count(LoopEventType::kError) == 1);
}

TEST_CASE("a 503 carrying a retry-after counts as a rate limit", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  // What an adapter reports for "503 Service Unavailable" with "Retry-After: 1.5": the code of
  // an outage, the retry-after of a rate limit.
  const absl::Status limited = core::RateLimitedError("503 busy", absl::Milliseconds(1500));
  absl::Status busy(absl::StatusCode::kUnavailable, limited.message());
  limited.ForEachPayload(
      [&busy](absl::string_view url, const absl::Cord& payload) { busy.SetPayload(url, payload); });
  REQUIRE(core::RetryAfter(busy) == absl::Milliseconds(1500));
  h.provider.Add(ScriptedTurn::Error(busy));
  h.provider.Add(ScriptedTurn::Error(busy));
  h.provider.Add(ScriptedTurn::Text("finally"));
  absl::StatusOr<core::RunOutcome> out = h.Run("hi");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(Retries(h.events) == std::vector<Retry>{{2, 3, 1500}, {3, 3, 1500}});
}

TEST_CASE("rate limits and connect failures keep separate caps", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Error(core::RateLimitedError("429", absl::Seconds(1))));
  h.provider.Add(ScriptedTurn::Error(core::ProviderUnavailableError("reset")));
  h.provider.Add(ScriptedTurn::Error(core::RateLimitedError("429", absl::Seconds(1))));
  h.provider.Add(ScriptedTurn::Text("ok"));
  absl::StatusOr<core::RunOutcome> out = h.Run("hi");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  CHECK(Retries(h.events) == std::vector<Retry>{{2, 3, 1000}, {2, 2, 200}, {3, 3, 1000}});
}

TEST_CASE("a retry-after beyond the cap fails at once without waiting", "[core][loop]") {
  core::LoopOptions options;
  options.max_retry_delay = absl::Seconds(30);
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Error(core::RateLimitedError("429", absl::Seconds(31))));
  h.provider.Add(ScriptedTurn::Text("never"));
  absl::StatusOr<core::RunOutcome> out = h.Run("hi");
  REQUIRE(out.ok());
  CHECK(out->failure_reason == "provider_rate_limited");
  CHECK(h.provider.RequestCount() == 1);
  CHECK(Retries(h.events).empty());
  CHECK(h.inline_runner.sleeps().empty());
}

TEST_CASE("every request carries the run's cancellation flag", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  auto flag = std::make_shared<std::atomic<bool>>(false);
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("ok"));
  REQUIRE(RunCancellable(h, flag).ok());
  REQUIRE(h.provider.RequestCount() == 2);
  for (const core::LlmRequest& request : h.provider.Requests()) {
    CHECK(request.cancelled == flag);
  }
}

TEST_CASE("a cancellation during a retry wait ends the run without another call", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  auto flag = std::make_shared<std::atomic<bool>>(false);
  h.inline_runner.OnSleep([flag](absl::Duration) { flag->store(true); });
  h.provider.Add(ScriptedTurn::Error(core::RateLimitedError("429", absl::Seconds(2))));
  h.provider.Add(ScriptedTurn::Text("never"));
  absl::StatusOr<core::RunOutcome> out = RunCancellable(h, flag);
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kFailed);
  CHECK(out->failure_reason == "cancelled");
  CHECK(h.provider.RequestCount() == 1);
  // The wait was cut at its first slice instead of sleeping the full two seconds.
  CHECK(h.inline_runner.sleeps() == std::vector<absl::Duration>{absl::Milliseconds(100)});
  const rapidjson::Document error = FirstEvent(h.events, LoopEventType::kError);
  CHECK(Str(error, "code") == "RUN_CANCELLED");
  CHECK(Str(error, "reason") == "cancelled");
  CHECK(h.events.Types().back() == "done");
}

TEST_CASE("an uncancelled wait with a flag still waits the full retry-after", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  auto flag = std::make_shared<std::atomic<bool>>(false);
  h.provider.Add(ScriptedTurn::Error(core::RateLimitedError("429", absl::Milliseconds(250))));
  h.provider.Add(ScriptedTurn::Text("ok"));
  REQUIRE(RunCancellable(h, flag)->end == RunEnd::kAnswered);
  absl::Duration waited;
  for (absl::Duration d : h.inline_runner.sleeps()) {
    waited += d;
  }
  CHECK(waited == absl::Milliseconds(250));
}

TEST_CASE("a CancelledError from the provider is never retried", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Error(absl::CancelledError("client went away"),
                                     {core::LlmStreamEvent::ContentDelta("Partial")}));
  h.provider.Add(ScriptedTurn::Text("never"));
  absl::StatusOr<core::RunOutcome> out = h.Run("hi");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kFailed);
  CHECK(out->failure_reason == "cancelled");
  CHECK(h.provider.RequestCount() == 1);
  CHECK(Retries(h.events).empty());
  CHECK(h.Session().transcript.back().content == "Partial");  // what the user saw is kept
}

TEST_CASE("a cancelled run stops at the next turn boundary", "[core][loop]") {
  Harness h;
  h.BindDefaults({"pulse_read"});
  auto flag = std::make_shared<std::atomic<bool>>(false);
  h.Bind(core::kToolPulseRead, [flag](const rapidjson::Value&) {
    flag->store(true);  // the client leaves while the tool runs
    return core::ToolResult::Success(R"({"state":"running"})");
  });
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}));
  h.provider.Add(ScriptedTurn::Text("never"));
  absl::StatusOr<core::RunOutcome> out = RunCancellable(h, flag);
  REQUIRE(out.ok());
  CHECK(out->failure_reason == "cancelled");
  CHECK(h.provider.RequestCount() == 1);
  CHECK(h.log.Count(core::kToolPulseRead) == 1);  // the running call finished and is kept
  CHECK(h.Session().transcript.back().role == core::MessageRole::kTool);
}

TEST_CASE("a run cancelled before it starts makes no provider call", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Text("never"));
  absl::StatusOr<core::RunOutcome> out =
      RunCancellable(h, std::make_shared<std::atomic<bool>>(true));
  REQUIRE(out.ok());
  CHECK(out->failure_reason == "cancelled");
  CHECK(h.provider.RequestCount() == 0);
  CHECK(h.Session().transcript.back().content == "hi");  // the message is still recorded
}

}  // namespace
}  // namespace pulse::testing::loop
