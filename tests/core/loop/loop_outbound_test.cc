// The outbound context policy inside the loop: every request a hosted model receives (turns,
// retries, the summary call) is sanitized, while the stored transcript keeps the real data;
// a local model server sees everything; the local-only set is read again for every run and an
// unreadable set fails closed.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "loop_test_support.h"
#include "pulse/core/auth/secret_redactor.h"
#include "pulse/core/loop/outbound_context.h"

namespace pulse::testing::loop {
namespace {

using core::RunEnd;

constexpr const char* kSystemKey = "sk-proj-SYSTEMplantedKEY0123";
constexpr const char* kUserPassword = "hunter2planted";
constexpr const char* kLogPassword = "s3cr3tLOGpw";
constexpr const char* kQueryResult =
    R"({"resources":[{"id":"vm:101","name":"web-01","ip":"10.9.9.9"},)"
    R"({"id":"service:pve1/nginx","name":"nginx","status":"active"}],)"
    R"("log":"DB_PASSWORD=s3cr3tLOGpw started"})";

// Everything a provider could read in a request.
std::string AllText(const core::LlmRequest& r) {
  std::string text;
  for (const core::Message& m : r.messages) {
    text += m.content + "\n";
    for (const core::ToolCall& c : m.tool_calls) {
      text += c.arguments_json + "\n";
    }
  }
  return text;
}

void MarkLocalOnly(InMemoryOperatorStateStore& store, const std::string& id) {
  core::OperatorState state;
  state.resource_id = id;
  state.set_by = "alice";
  state.local_only = true;
  REQUIRE(store.Set(state).ok());
}

// A harness whose loop reads the local-only set from its own operator state and fleet.
struct OutboundHarness {
  explicit OutboundHarness(core::InferenceRoute route) {
    core::LoopOptions options;
    options.system_prompt = std::string("Fleet notes. Staging key: ") + kSystemKey;
    options.route.provider = "test";
    options.route.model = "m1";
    options.route.route = route;
    options.local_only = [this]() {
      ++reads;
      return core::LoadLocalOnlyResources(h->operator_state, &h->fleet);
    };
    h = std::make_unique<Harness>(options);
    h->BindDefaults({"pulse_query"});
    h->Bind(core::kToolPulseQuery, Returns(kQueryResult));
    MarkLocalOnly(h->operator_state, "vm:101");
  }

  // A retried first turn with two calls, a blank answer, then the summary call.
  void ScriptInvestigation() {
    h->provider.Add(ScriptedTurn::Error(core::ProviderUnavailableError("connect refused")));
    h->provider.Add(ScriptedTurn::Calls(
        {Call("q1", "pulse_query", R"({"action":"list"})"),
         Call("r1", "pulse_read", R"({"action":"status","resource_id":"vm:101"})")}));
    h->provider.Add(ScriptedTurn::Text(""));
    h->provider.Add(ScriptedTurn::Text("Summary: nginx is active."));
  }

  absl::StatusOr<core::RunOutcome> Run() {
    return h->Run(std::string("Why is web-01 (vm:101) slow? Use password=") + kUserPassword);
  }

  int reads = 0;
  std::unique_ptr<Harness> h;
};

TEST_CASE("a hosted model never receives planted secrets or local-only resources",
          "[core][loop][outbound]") {
  OutboundHarness oh(core::InferenceRoute::kMeteredApi);
  oh.ScriptInvestigation();
  absl::StatusOr<core::RunOutcome> out = oh.Run();
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  Harness& h = *oh.h;
  REQUIRE(h.provider.RequestCount() == 4);  // failed attempt, its retry, blank answer, summary
  for (const core::LlmRequest& request : h.provider.Requests()) {
    const std::string text = AllText(request);
    INFO(text.substr(0, 2000));
    for (const char* leak :
         {kSystemKey, kUserPassword, kLogPassword, "vm:101", "web-01", "10.9.9.9"}) {
      CHECK(text.find(leak) == std::string::npos);
    }
    CHECK(text.find(std::string(core::kLocalOnlyPlaceholder)) != std::string::npos);
  }
  // The aggregate replaces the withheld object; the rest of the result is intact.
  const std::string summary_request = AllText(h.provider.Request(3));
  CHECK(summary_request.find(R"({"withheld_local_only_resources":1})") != std::string::npos);
  CHECK(summary_request.find("service:pve1/nginx") != std::string::npos);
  CHECK(h.provider.Request(0) == h.provider.Request(1));  // the retry sends the same request

  // The stored transcript keeps the real data except secrets: local-only resources stay (the
  // operator's own store), secrets are redacted in every stored copy (issue 20 item 7).
  const core::SessionRecord session = h.Session();
  CHECK(session.transcript.at(0).content.find(kUserPassword) == std::string::npos);
  CHECK(session.transcript.at(0).content.find("vm:101") != std::string::npos);
  bool raw_result = false;
  for (const core::Message& m : session.transcript) {
    if (m.role == core::MessageRole::kTool && m.tool_call_id == "q1") {
      raw_result = m.content == core::RedactSecrets(kQueryResult);
    }
  }
  CHECK(raw_result);
  CHECK(session.transcript.at(1).tool_calls.at(1).arguments_json.find("vm:101") !=
        std::string::npos);
  CHECK(oh.reads == 1);  // once per run, not per call
}

TEST_CASE("a local model server receives the full context and never reads the set",
          "[core][loop][outbound]") {
  OutboundHarness oh(core::InferenceRoute::kLocalModelServer);
  oh.ScriptInvestigation();
  REQUIRE(oh.Run().ok());
  Harness& h = *oh.h;
  REQUIRE(h.provider.RequestCount() == 4);
  const std::string text = AllText(h.provider.Request(3));
  for (const char* raw : {kSystemKey, kUserPassword, kLogPassword, "vm:101", "web-01"}) {
    CHECK(text.find(raw) != std::string::npos);
  }
  CHECK(oh.reads == 0);
}

TEST_CASE("the local-only set is read again for every run", "[core][loop][outbound]") {
  OutboundHarness oh(core::InferenceRoute::kMeteredApi);
  Harness& h = *oh.h;
  h.provider.Add(ScriptedTurn::Text("first"));
  REQUIRE(h.Run("how is nginx?").ok());
  CHECK(AllText(h.provider.Request(0)).find("nginx") != std::string::npos);

  MarkLocalOnly(h.operator_state, "service:pve1/nginx");
  h.provider.Add(ScriptedTurn::Text("second"));
  REQUIRE(h.Run("and now, how is nginx?").ok());
  CHECK(oh.reads == 2);
  const std::string second = AllText(h.provider.Request(1));
  CHECK(second.find("nginx") == std::string::npos);  // the earlier turns are covered too
  CHECK(h.Session().transcript.at(0).content == "how is nginx?");
}

TEST_CASE("an unreadable local-only set fails the run before any provider call",
          "[core][loop][outbound]") {
  OutboundHarness oh(core::InferenceRoute::kMeteredApi);
  Harness& h = *oh.h;
  h.operator_state.FailNext(absl::UnavailableError("store offline"));
  h.provider.Add(ScriptedTurn::Text("never"));
  absl::StatusOr<core::RunOutcome> out = oh.Run();
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kFailed);
  CHECK(out->failure_reason == "local_only_state_unavailable");
  CHECK(h.provider.RequestCount() == 0);
  CHECK(h.events.Count(core::LoopEventType::kError) == 1);
  CHECK(h.events.Types().back() == "done");
}

}  // namespace
}  // namespace pulse::testing::loop
