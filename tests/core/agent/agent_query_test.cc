#include "pulse/core/agent/agent_query.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/time/time.h"

namespace pulse::core {
namespace {

TEST_CASE("fleet context query flags and severities parse leniently", "[core][agent]") {
  CHECK_FALSE(ParseFleetContextQuery({}).has_findings);
  CHECK(ParseFleetContextQuery({{"hasFindings", "true"}}).has_findings);
  CHECK(ParseFleetContextQuery({{"hasFindings", "TRUE"}}).has_findings);
  CHECK(ParseFleetContextQuery({{"hasFindings", "1"}}).has_findings);
  CHECK_FALSE(ParseFleetContextQuery({{"hasFindings", "yes"}}).has_findings);
  CHECK_FALSE(ParseFleetContextQuery({{"hasFindings", "0"}}).has_findings);
  CHECK_FALSE(ParseFleetContextQuery({{"has_findings", "true"}}).has_findings);

  CHECK(ParseFleetContextQuery({{"severity", "Critical"}}).severity == Severity::kCritical);
  CHECK(ParseFleetContextQuery({{"severity", "warning"}}).severity == Severity::kWarning);
  CHECK(ParseFleetContextQuery({{"severity", "INFO"}}).severity == Severity::kInfo);
  CHECK_FALSE(ParseFleetContextQuery({{"severity", "watch"}}).severity.has_value());
  CHECK_FALSE(ParseFleetContextQuery({{"severity", " critical"}}).severity.has_value());
  CHECK_FALSE(ParseFleetContextQuery({{"severity", ""}}).severity.has_value());
}

TEST_CASE("fleet context text filters are kept as given unless invalid", "[core][agent]") {
  const FleetContextQuery q =
      ParseFleetContextQuery({{"technology", "Proxmox"}, {"resourceType", "VM"}});
  CHECK(q.technology == "Proxmox");
  CHECK(q.resource_type == "VM");
  CHECK(ParseFleetContextQuery({{"technology", std::string(kMaxFleetFilterBytes, 'a')}})
            .technology.size() == kMaxFleetFilterBytes);
  CHECK(ParseFleetContextQuery({{"technology", std::string(kMaxFleetFilterBytes + 1, 'a')}})
            .technology.empty());
  CHECK(ParseFleetContextQuery({{"technology", "a\nb"}}).technology.empty());
  CHECK(ParseFleetContextQuery({{"technology", "\xff"}}).technology.empty());
  // the first value of a repeated parameter counts
  CHECK(ParseFleetContextQuery({{"technology", "docker"}, {"technology", "proxmox"}}).technology ==
        "docker");
}

TEST_CASE("the action list query defaults to the pending view and 100 actions", "[core][agent]") {
  absl::StatusOr<ActionListQuery> q = ParseActionListQuery({});
  REQUIRE(q.ok());
  CHECK(q->view == ActionListView::kPending);
  CHECK(q->limit == kDefaultActionListLimit);
  q = ParseActionListQuery({{"view", "settled"}, {"limit", "500"}});
  REQUIRE(q.ok());
  CHECK(q->view == ActionListView::kSettled);
  CHECK(q->limit == 500);
  q = ParseActionListQuery({{"view", ""}, {"limit", ""}});
  REQUIRE(q.ok());
  CHECK(q->view == ActionListView::kPending);
  CHECK(q->limit == kDefaultActionListLimit);
  CHECK(ParseActionListQuery({{"limit", "1"}})->limit == 1);
}

TEST_CASE("a bad action list view or limit is a typed InvalidArgument", "[core][agent]") {
  absl::StatusOr<ActionListQuery> q = ParseActionListQuery({{"view", "Settled"}});
  REQUIRE(absl::IsInvalidArgument(q.status()));
  std::optional<AgentError> e = AgentQueryError(q.status());
  REQUIRE(e.has_value());
  CHECK(e->code == AgentErrorCode::kInvalidActionListView);
  CHECK(e->message == "view must be pending or settled");
  CHECK(e->details == std::map<std::string, std::string>{{"view", "must be pending or settled"}});

  for (std::string bad : {"0", "501", "-1", "+5", " 5", "5 ", "1e2", "abc", "99999999999"}) {
    INFO(bad);
    q = ParseActionListQuery({{"limit", bad}});
    REQUIRE(absl::IsInvalidArgument(q.status()));
    CHECK(q.status().message() == "limit must be an integer between 1 and 500");
    e = AgentQueryError(q.status());
    REQUIRE(e.has_value());
    CHECK(e->code == AgentErrorCode::kInvalidActionListLimit);
    CHECK(e->details.count("limit") == 1);
  }
}

TEST_CASE("an action list cursor round-trips its view and position", "[core][agent]") {
  const ActionPagePosition at{absl::FromUnixNanos(1'800'000'000'123'456'789), "act_0123abc"};
  const std::string cursor = EncodeActionCursor(ActionListView::kSettled, at);
  CHECK(cursor.rfind("a1.", 0) == 0);
  absl::StatusOr<ActionCursor> back = DecodeActionCursor(cursor);
  REQUIRE(back.ok());
  CHECK(back->view == ActionListView::kSettled);
  CHECK(back->position == at);
  const ActionPagePosition before_epoch{absl::FromUnixNanos(-5), "act_x"};
  CHECK(DecodeActionCursor(EncodeActionCursor(ActionListView::kPending, before_epoch))->position ==
        before_epoch);
  absl::StatusOr<ActionListQuery> q =
      ParseActionListQuery({{"view", "settled"}, {"cursor", cursor}});
  REQUIRE(q.ok());
  CHECK(q->after == at);
  CHECK_FALSE(ParseActionListQuery({{"cursor", ""}})->after.has_value());
}

TEST_CASE("a foreign or malformed action list cursor is invalid_action_list_cursor",
          "[core][agent]") {
  const std::string pending =
      EncodeActionCursor(ActionListView::kPending, {absl::FromUnixSeconds(1), "act_1"});
  // Another view's cursor.
  absl::StatusOr<ActionListQuery> q =
      ParseActionListQuery({{"view", "settled"}, {"cursor", pending}});
  REQUIRE(absl::IsInvalidArgument(q.status()));
  std::optional<AgentError> e = AgentQueryError(q.status());
  REQUIRE(e.has_value());
  CHECK(e->code == AgentErrorCode::kInvalidActionListCursor);
  CHECK(e->details == std::map<std::string, std::string>{{"cursor", "belongs to the other view"}});
  const auto b64 = [](std::string_view payload) {
    return "a1." + absl::WebSafeBase64Escape(absl::string_view(payload.data(), payload.size()));
  };
  for (const std::string& bad :
       {std::string("a1."), std::string("a1.!!"), std::string("f1.cGVuZGluZwowCng"),
        std::string("s1.MAp4"), "a1." + std::string(2000, 'A'), b64("pending\n0"),
        b64("bogus\n0\nact_1"), b64("pending\n1.5\nact_1"), b64("pending\n+1\nact_1"),
        b64("pending\n99999999999999999999\nact_1"), b64("pending\n0\n"),
        b64("pending\n0\nact\x01"), b64("pending\n0\n" + std::string(513, 'a')),
        b64(std::string("pending\n0\n\xff\xfe", 12)), pending.substr(0, pending.size() - 3)}) {
    INFO(bad);
    absl::StatusOr<ActionCursor> decoded = DecodeActionCursor(bad);
    REQUIRE(absl::IsInvalidArgument(decoded.status()));
    e = AgentQueryError(decoded.status());
    REQUIRE(e.has_value());
    CHECK(e->code == AgentErrorCode::kInvalidActionListCursor);
    CHECK(e->details.count("cursor") == 1);
  }
}

TEST_CASE("a session list cursor round-trips and refuses anything it did not make",
          "[core][agent]") {
  const SessionPagePosition at{absl::FromUnixNanos(1'800'000'000'000'000'007), "ses_ab-C_9"};
  const std::string cursor = EncodeSessionCursor(at);
  CHECK(cursor.rfind("s1.", 0) == 0);
  absl::StatusOr<SessionPagePosition> back = DecodeSessionCursor(cursor);
  REQUIRE(back.ok());
  CHECK(*back == at);
  const auto b64 = [](std::string_view payload) {
    return "s1." + absl::WebSafeBase64Escape(absl::string_view(payload.data(), payload.size()));
  };
  for (const std::string& bad :
       {std::string(""), std::string("s1."), std::string("a1.MAp4"), b64("0"), b64("x\nses_1"),
        b64("0\nses/1"), b64("0\n"), b64("0\nses 1"), "s1." + std::string(2000, 'A'),
        b64("0\nses_1\nmore")}) {
    INFO(bad);
    absl::StatusOr<SessionPagePosition> decoded = DecodeSessionCursor(bad);
    REQUIRE(absl::IsInvalidArgument(decoded.status()));
    std::optional<AgentError> e = AgentQueryError(decoded.status());
    REQUIRE(e.has_value());
    CHECK(e->code == AgentErrorCode::kInvalidRequest);
    CHECK(e->details.count("cursor") == 1);
  }
}

TEST_CASE("AgentQueryError answers only for query parse failures", "[core][agent]") {
  CHECK_FALSE(AgentQueryError(absl::OkStatus()).has_value());
  CHECK_FALSE(AgentQueryError(absl::InvalidArgumentError("limit must be small")).has_value());
}

TEST_CASE("the findings list query clamps rather than refuses", "[core][agent]") {
  FindingListQuery q = ParseFindingListQuery({});
  CHECK_FALSE(q.resource_id.has_value());
  CHECK_FALSE(q.include_resolved);
  CHECK(q.limit == 0);
  q = ParseFindingListQuery({{"resource_id", "vm:101"}, {"include_resolved", "1"}, {"limit", "7"}});
  CHECK(q.resource_id == "vm:101");
  CHECK(q.include_resolved);
  CHECK(q.limit == 7);
  CHECK(ParseFindingListQuery({{"include_resolved", "TRUE"}}).include_resolved);
  CHECK_FALSE(ParseFindingListQuery({{"include_resolved", "0"}}).include_resolved);
  CHECK_FALSE(ParseFindingListQuery({{"resource_id", ""}}).resource_id.has_value());
  CHECK(ParseFindingListQuery({{"limit", "501"}}).limit == kMaxFindingListLimit);
  CHECK(ParseFindingListQuery({{"limit", "12345678901234"}}).limit == kMaxFindingListLimit);
  CHECK(ParseFindingListQuery({{"limit", "-3"}}).limit == 0);
  CHECK(ParseFindingListQuery({{"limit", "ten"}}).limit == 0);
}

TEST_CASE("action list views have their wire names", "[core][agent]") {
  CHECK(ToString(ActionListView::kPending) == "pending");
  CHECK(ToString(ActionListView::kSettled) == "settled");
  CHECK(ParseActionListView("settled") == ActionListView::kSettled);
  CHECK_FALSE(ParseActionListView("all").has_value());
}

}  // namespace
}  // namespace pulse::core
