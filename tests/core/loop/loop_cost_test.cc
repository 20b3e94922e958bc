// Usage and cost in the loop: every provider call is recorded in the session with its route and
// cost, `done` reports the run's route, cost and whether a money budget applies, and a money
// budget stops the run before the call that would exceed it — or before any call when the
// price is unknown (fail closed). Routes without per-token billing are never budgeted and never
// report a made-up zero.
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "loop_test_support.h"
#include "pulse/core/model/usage.h"
#include "pulse/core/ports/spend_guard.h"

namespace pulse::testing::loop {
namespace {

using core::LoopEventType;
using core::RunEnd;

core::LoopOptions WithRoute(core::InferenceRoute kind, std::optional<core::ModelPrice> price,
                            std::optional<double> max_cost_usd = std::nullopt) {
  core::LoopOptions options;
  options.route.provider = "openai";
  options.route.model = "gpt-test";
  options.route.route = kind;
  options.route.price = price;
  options.max_cost_usd = max_cost_usd;
  return options;
}

constexpr const char* kReadVm = R"({"action":"status","resource_id":"vm:101"})";

// $2 per million input tokens, $8 per million output tokens.
constexpr core::ModelPrice kPrice{2.0, 8.0};

// One tool turn and one answer, 3000 input and 150 output tokens in all.
void ScriptTwoTurns(Harness& h) {
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}).WithUsage(1000, 100));
  h.provider.Add(ScriptedTurn::Text("All good.").WithUsage(2000, 50));
}

rapidjson::Document Done(const Harness& h) { return FirstEvent(h.events, LoopEventType::kDone); }

TEST_CASE("a known price is charged per call and reported in done", "[core][loop]") {
  Harness h(WithRoute(core::InferenceRoute::kMeteredApi, kPrice));
  h.BindDefaults();
  ScriptTwoTurns(h);
  absl::StatusOr<core::RunOutcome> out = h.Run("check");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kAnswered);
  const double first = (1000 * 2.0 + 100 * 8.0) / 1e6;
  const double second = (2000 * 2.0 + 50 * 8.0) / 1e6;
  CHECK(out->counters.cost_usd == Approx(first + second));
  CHECK_FALSE(out->counters.cost_unknown);

  const rapidjson::Document done = Done(h);
  CHECK(core::GetInt64(done, "input_tokens") == 3000);
  CHECK(core::GetInt64(done, "output_tokens") == 150);
  CHECK(Str(done, "route") == "openai:gpt-test");
  REQUIRE(done["cost_usd"].IsNumber());
  CHECK(done["cost_usd"].GetDouble() == Approx(first + second));
  CHECK(core::GetBool(done, "budget_applicable") == true);
  // The new members follow the token counts.
  const std::string raw = h.events.events().back().data_json;
  CHECK(raw.find(R"("output_tokens":150,"route":"openai:gpt-test","cost_usd":)") !=
        std::string::npos);

  const core::SessionRecord session = h.Session();
  REQUIRE(session.usage.size() == 2);
  CHECK(session.usage[0].turn == 0);
  CHECK(session.usage[0].route == "openai:gpt-test");
  CHECK(session.usage[0].input_tokens == 1000);
  CHECK(session.usage[0].output_tokens == 100);
  CHECK(*session.usage[0].cost_usd == Approx(first));
  CHECK(session.usage[1].turn == 1);
  CHECK(*session.usage[1].cost_usd == Approx(second));
  CHECK(session.usage_totals.provider_calls == 2);
  CHECK(session.usage_totals.priced_cost_usd == Approx(first + second));
  CHECK(session.usage_totals.unpriced_calls == 0);
}

TEST_CASE("every provider call is a usage entry, failed attempts and the summary included",
          "[core][loop]") {
  Harness h(WithRoute(core::InferenceRoute::kMeteredApi, kPrice));
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Error(core::ProviderUnavailableError("reset")));
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}).WithUsage(10, 1));
  h.provider.Add(ScriptedTurn::Text("").WithUsage(20, 0));
  h.provider.Add(ScriptedTurn::Text("Summary.").WithUsage(30, 5));
  REQUIRE(h.Run("check")->end == RunEnd::kAnswered);
  const core::SessionRecord session = h.Session();
  REQUIRE(session.usage.size() == 4);
  std::vector<int> turns;
  for (const core::TurnUsage& u : session.usage) {
    turns.push_back(u.turn);
  }
  CHECK(turns == std::vector<int>{0, 0, 1, 2});
  CHECK(session.usage[0].input_tokens == 0);
  CHECK(*session.usage[0].cost_usd == 0.0);  // a refused attempt used no tokens
  CHECK(session.usage[3].input_tokens == 30);
  CHECK(core::GetInt64(Done(h), "provider_calls") == 4);
}

TEST_CASE("an unknown price is an unknown cost, not zero", "[core][loop]") {
  Harness h(WithRoute(core::InferenceRoute::kMeteredApi, std::nullopt));
  h.BindDefaults();
  ScriptTwoTurns(h);
  REQUIRE(h.Run("check")->end == RunEnd::kAnswered);
  const rapidjson::Document done = Done(h);
  CHECK(done["cost_usd"].IsNull());
  CHECK(core::GetBool(done, "budget_applicable") == true);
  const core::SessionRecord session = h.Session();
  REQUIRE(session.usage.size() == 2);
  CHECK_FALSE(session.usage[0].cost_usd.has_value());
  CHECK(session.usage[0].budget_applicable);
  CHECK(session.usage_totals.unpriced_calls == 2);
}

TEST_CASE("an unknown price under a money budget fails before any provider call", "[core][loop]") {
  Harness h(WithRoute(core::InferenceRoute::kMeteredApi, std::nullopt, 1.0));
  h.BindDefaults();
  ScriptTwoTurns(h);
  absl::StatusOr<core::RunOutcome> out = h.Run("check");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kFailed);
  CHECK(out->failure_reason == "cost_unknown");
  CHECK(h.provider.RequestCount() == 0);
  const rapidjson::Document error = FirstEvent(h.events, LoopEventType::kError);
  CHECK(Str(error, "code") == "TOOL_LOOP_BOUNDED_FAILURE");
  CHECK(Done(h)["cost_usd"].IsNull());
}

TEST_CASE("local and coding-plan routes are never budgeted and report no cost", "[core][loop]") {
  for (core::InferenceRoute kind :
       {core::InferenceRoute::kLocalModelServer, core::InferenceRoute::kCodingPlanAllowance}) {
    // A tiny budget and a configured price: neither applies to these routes.
    Harness h(WithRoute(kind, kPrice, 0.000001));
    h.BindDefaults();
    ScriptTwoTurns(h);
    absl::StatusOr<core::RunOutcome> out = h.Run("check");
    REQUIRE(out.ok());
    CHECK(out->end == RunEnd::kAnswered);
    CHECK(h.provider.RequestCount() == 2);
    const rapidjson::Document done = Done(h);
    CHECK(done["cost_usd"].IsNull());
    CHECK(core::GetBool(done, "budget_applicable") == false);
    CHECK(core::GetInt64(done, "input_tokens") == 3000);
    for (const core::TurnUsage& u : h.Session().usage) {
      CHECK_FALSE(u.cost_usd.has_value());
      CHECK_FALSE(u.budget_applicable);
    }
  }
}

TEST_CASE("a spent money budget stops the run before the next provider call", "[core][loop]") {
  // The first turn costs $0.006, over the $0.005 budget: its tool calls still run (the money
  // is spent), but no further call is made.
  Harness h(WithRoute(core::InferenceRoute::kMeteredApi, kPrice, 0.005));
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}).WithUsage(3000, 0));
  h.provider.Add(ScriptedTurn::Text("never"));
  absl::StatusOr<core::RunOutcome> out = h.Run("check");
  REQUIRE(out.ok());
  CHECK(out->end == RunEnd::kFailed);
  CHECK(out->failure_reason == "cost_budget_exhausted");
  CHECK(h.provider.RequestCount() == 1);
  CHECK(h.log.Count(core::kToolPulseRead) == 1);
  const rapidjson::Document done = Done(h);
  CHECK(done["cost_usd"].GetDouble() == Approx(0.006));
  CHECK(h.events.Types().back() == "done");
}

TEST_CASE("a run within its money budget is not disturbed by it", "[core][loop]") {
  Harness h(WithRoute(core::InferenceRoute::kMeteredApi, kPrice, 1.0));
  h.BindDefaults();
  ScriptTwoTurns(h);
  CHECK(h.Run("check")->end == RunEnd::kAnswered);
}

TEST_CASE("an unnamed route is reported with an empty label", "[core][loop]") {
  Harness h;
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Text("hello").WithUsage(5, 5));
  REQUIRE(h.Run("hi").ok());
  const rapidjson::Document done = Done(h);
  CHECK(Str(done, "route").empty());
  CHECK(done["cost_usd"].IsNull());  // the default route is metered with an unknown price
  CHECK(core::GetBool(done, "budget_applicable") == true);
}

// A cap shared by runs, as pulse-server's monthly spend cap: a running total and a limit.
class TotalGuard final : public core::SpendGuard {
 public:
  explicit TotalGuard(double cap) : cap_(cap) {}
  bool Capped() const override { return cap_ > 0; }
  absl::Status Admit() override {
    ++admits;
    if (unreadable) {
      return absl::UnavailableError("the total cannot be read");
    }
    if (cap_ > 0 && total >= cap_) {
      return absl::ResourceExhaustedError("this month's cap of 0.005 USD is reached");
    }
    return absl::OkStatus();
  }
  void Record(double cost_usd) override {
    total += cost_usd;
    recorded.push_back(cost_usd);
  }

  double total = 0;
  int admits = 0;
  bool unreadable = false;
  std::vector<double> recorded;

 private:
  double cap_;
};

TEST_CASE("a per-session money budget counts the session's earlier runs", "[core][loop]") {
  // Each run costs $0.006 (3000 input tokens); the session's cap is $0.010: the first two runs
  // are admitted (the second starts at $0.006 spent), the third is refused before any call.
  core::LoopOptions options = WithRoute(core::InferenceRoute::kMeteredApi, kPrice);
  options.max_session_cost_usd = 0.010;
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Text("one").WithUsage(3000, 0));
  h.provider.Add(ScriptedTurn::Text("two").WithUsage(3000, 0));
  h.provider.Add(ScriptedTurn::Text("never"));
  CHECK(h.Run("first")->end == RunEnd::kAnswered);
  CHECK(h.Run("second")->end == RunEnd::kAnswered);
  absl::StatusOr<core::RunOutcome> third = h.Run("third");
  REQUIRE(third.ok());
  CHECK(third->end == RunEnd::kFailed);
  CHECK(third->failure_reason == "cost_budget_exhausted");
  CHECK(h.provider.RequestCount() == 2);
  const rapidjson::Document error = FirstEvent(h.events, LoopEventType::kError);
  CHECK(Str(error, "message").find("session") != std::string::npos);
  CHECK(h.Session().usage_totals.priced_cost_usd == Approx(0.012));

  // Another session starts from nothing.
  h.provider.Add(ScriptedTurn::Text("fresh").WithUsage(10, 0));
  CHECK(h.Run("hello", Policy(), "ses_other")->end == RunEnd::kAnswered);
}

TEST_CASE("a shared spend guard is told every priced call and stops runs once its cap is reached",
          "[core][loop]") {
  TotalGuard guard(0.005);
  core::LoopOptions options = WithRoute(core::InferenceRoute::kMeteredApi, kPrice);
  options.spend_guard = &guard;
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Calls({Call("r1", "pulse_read", kReadVm)}).WithUsage(1000, 0));
  h.provider.Add(ScriptedTurn::Text("done").WithUsage(2000, 0));
  CHECK(h.Run("check")->end == RunEnd::kAnswered);
  REQUIRE(guard.recorded.size() == 2);
  CHECK(guard.recorded[0] == Approx(0.002));
  CHECK(guard.recorded[1] == Approx(0.004));
  CHECK(guard.admits == 2);

  // $0.006 spent, over the cap: the next run (any session) makes no call.
  h.provider.Add(ScriptedTurn::Text("never"));
  absl::StatusOr<core::RunOutcome> refused = h.Run("again", Policy(), "ses_next");
  REQUIRE(refused.ok());
  CHECK(refused->end == RunEnd::kFailed);
  CHECK(refused->failure_reason == "spend_cap_reached");
  CHECK(h.provider.RequestCount() == 2);
  const rapidjson::Document error = FirstEvent(h.events, LoopEventType::kError);
  CHECK(Str(error, "code") == "TOOL_LOOP_BOUNDED_FAILURE");
  CHECK(Str(error, "message") == "this month's cap of 0.005 USD is reached");
}

TEST_CASE("a spend guard that cannot read its total stops the run before the call",
          "[core][loop]") {
  TotalGuard guard(1.0);
  guard.unreadable = true;
  core::LoopOptions options = WithRoute(core::InferenceRoute::kMeteredApi, kPrice);
  options.spend_guard = &guard;
  Harness h(options);
  h.BindDefaults();
  h.provider.Add(ScriptedTurn::Text("never"));
  absl::StatusOr<core::RunOutcome> out = h.Run("check");
  REQUIRE(out.ok());
  CHECK(out->failure_reason == "spend_cap_reached");
  CHECK(h.provider.RequestCount() == 0);
}

TEST_CASE("an uncapped spend guard records the spend and refuses nothing, unknown prices included",
          "[core][loop]") {
  TotalGuard guard(0);
  {
    core::LoopOptions options = WithRoute(core::InferenceRoute::kMeteredApi, std::nullopt);
    options.spend_guard = &guard;
    Harness h(options);
    h.BindDefaults();
    ScriptTwoTurns(h);
    CHECK(h.Run("check")->end == RunEnd::kAnswered);  // no cap: an unknown price is fine
    CHECK(guard.recorded.empty());                    // and an unknown cost is not recorded
  }
  {
    // With a cap, the same unknown price fails closed.
    TotalGuard capped(1.0);
    core::LoopOptions options = WithRoute(core::InferenceRoute::kMeteredApi, std::nullopt);
    options.spend_guard = &capped;
    Harness h(options);
    h.BindDefaults();
    ScriptTwoTurns(h);
    absl::StatusOr<core::RunOutcome> out = h.Run("check");
    REQUIRE(out.ok());
    CHECK(out->failure_reason == "cost_unknown");
    CHECK(h.provider.RequestCount() == 0);
  }
  {
    // A local route is never metered: the guard is neither asked nor told.
    TotalGuard capped(0.000001);
    capped.total = 5;
    core::LoopOptions options = WithRoute(core::InferenceRoute::kLocalModelServer, kPrice);
    options.spend_guard = &capped;
    Harness h(options);
    h.BindDefaults();
    ScriptTwoTurns(h);
    CHECK(h.Run("check")->end == RunEnd::kAnswered);
    CHECK(capped.admits == 0);
    CHECK(capped.recorded.empty());
  }
}

}  // namespace
}  // namespace pulse::testing::loop
