#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "agent_views_test_support.h"
#include "fmt/format.h"
#include "pulse/core/findings/finding_json.h"

namespace pulse::testing::agent {
namespace {

using core::Severity;

std::vector<std::string> Listed(ViewsHarness& h, const core::QueryParams& params) {
  rapidjson::Document doc = Body(h.views.FindingList(core::ParseFindingListQuery(params)));
  return Column(doc, "id");
}

// On vm:101: critical (2h and 1h old), warning (3h), watch, info; resolved, snoozed and
// dismissed warnings. On nginx: one warning.
void Populate(ViewsHarness& h) {
  h.PutFinding("crit-old", "vm:101", Severity::kCritical, absl::Hours(2));
  h.PutFinding("crit-new", "vm:101", Severity::kCritical, absl::Hours(1));
  h.PutFinding("warn", "vm:101", Severity::kWarning, absl::Hours(3));
  h.PutFinding("watch", "vm:101", Severity::kWatch);
  h.PutFinding("info", "vm:101", Severity::kInfo);
  h.PutFinding("resolved", "vm:101", Severity::kWarning, absl::Minutes(5));
  h.EditFinding("resolved", [&](core::Finding& f) { f.resolved_at = h.clock.Now(); });
  h.PutFinding("snoozed", "vm:101", Severity::kWarning);
  h.EditFinding("snoozed",
                [&](core::Finding& f) { f.snoozed_until = h.clock.Now() + absl::Hours(1); });
  h.PutFinding("dismissed", "vm:101", Severity::kWarning);
  h.EditFinding("dismissed",
                [&](core::Finding& f) { f.dismissed_reason = core::DismissReason::kWillFixLater; });
  h.PutFinding("nginx", "service:pve1/nginx", Severity::kWarning, absl::Minutes(30));
}

TEST_CASE("the default findings list is active warning+ findings, critical then newest",
          "[core][agent]") {
  ViewsHarness h;
  Populate(h);
  CHECK(Listed(h, {}) == std::vector<std::string>{"crit-new", "crit-old", "nginx", "warn"});
}

TEST_CASE("the findings list is the public Finding JSON", "[core][agent]") {
  ViewsHarness h;
  const core::Finding f = h.PutFinding("crit", "vm:101", Severity::kCritical);
  const std::string body = *h.views.FindingList({});
  CHECK(body.find("alert_identifier") == std::string::npos);
  core::FindingJsonOptions options;
  options.include_private = false;
  options.now = h.clock.Now();
  const core::Finding stored = h.findings.Get("crit")->finding;
  CHECK(Body(body) == Json(fmt::format("[{}]", core::FindingToJson(stored, options))));
}

TEST_CASE("the findings list filters by resource and can include resolved findings",
          "[core][agent]") {
  ViewsHarness h;
  Populate(h);
  CHECK(Listed(h, {{"resource_id", "service:pve1/nginx"}}) == std::vector<std::string>{"nginx"});
  CHECK(Listed(h, {{"resource_id", "vm:999"}}).empty());
  // resolved joins the active ones; snoozed and dismissed are neither
  CHECK(Listed(h, {{"include_resolved", "1"}}) ==
        std::vector<std::string>{"crit-new", "crit-old", "resolved", "nginx", "warn"});
  CHECK(Listed(h, {{"include_resolved", "true"}, {"resource_id", "vm:101"}}) ==
        std::vector<std::string>{"crit-new", "crit-old", "resolved", "warn"});
}

TEST_CASE("include_hidden adds the snoozed and dismissed findings, include_resolved the resolved",
          "[core][agent]") {
  ViewsHarness h;
  Populate(h);
  const std::vector<std::string> hidden =
      Listed(h, {{"include_hidden", "1"}, {"resource_id", "vm:101"}});
  CHECK(std::count(hidden.begin(), hidden.end(), "snoozed") == 1);
  CHECK(std::count(hidden.begin(), hidden.end(), "dismissed") == 1);
  CHECK(std::count(hidden.begin(), hidden.end(), "resolved") == 0);
  CHECK(std::count(hidden.begin(), hidden.end(), "crit-new") == 1);
  CHECK(std::count(hidden.begin(), hidden.end(), "watch") == 0);  // still warning and above
  const std::vector<std::string> all =
      Listed(h, {{"include_hidden", "true"}, {"include_resolved", "1"}});
  CHECK(all.size() == 7);  // every warning+ finding
  // Anything but 1 or true leaves them out.
  CHECK(Listed(h, {{"include_hidden", "0"}}) == Listed(h, {}));
  CHECK(Listed(h, {{"include_hidden", "yes\r\n"}}) == Listed(h, {}));
}

TEST_CASE("the findings list honours its limit and caps it at 500", "[core][agent]") {
  ViewsHarness h;
  for (int i = 0; i < 510; ++i) {
    h.PutFinding(fmt::format("f-{:03}", i), "vm:101", Severity::kWarning, absl::Minutes(600 - i));
  }
  CHECK(Listed(h, {{"limit", "2"}}) == std::vector<std::string>{"f-509", "f-508"});
  CHECK(Listed(h, {}).size() == core::kMaxFindingListLimit);
  CHECK(Listed(h, {{"limit", "100000"}}).size() == core::kMaxFindingListLimit);
  CHECK(Listed(h, {{"include_resolved", "1"}}).size() == core::kDefaultResolvedFindingListLimit);
  CHECK(Listed(h, {{"limit", "nope"}}).size() == core::kMaxFindingListLimit);
}

// Every page of `params`, following the next cursor until the last page.
std::vector<std::string> AllPages(ViewsHarness& h, core::QueryParams params) {
  std::vector<std::string> ids;
  for (int guard = 0; guard < 100; ++guard) {
    absl::StatusOr<core::FindingPage> page =
        h.views.FindingListPage(core::ParseFindingListQuery(params));
    REQUIRE(page.ok());
    for (const std::string& id : Column(Body(page->body), "id")) {
      ids.push_back(id);
    }
    if (!page->next_cursor.has_value()) {
      return ids;
    }
    params.erase("cursor");
    params.emplace("cursor", *page->next_cursor);
  }
  FAIL("the pages never end");
  return ids;
}

TEST_CASE("the findings list pages through its cursor in the documented order",
          "[core][agent][findings]") {
  ViewsHarness h;
  Populate(h);
  const std::vector<std::string> all = {"crit-new", "crit-old", "nginx", "warn"};
  CHECK(AllPages(h, {{"limit", "1"}}) == all);
  CHECK(AllPages(h, {{"limit", "3"}}) == all);
  // a full last page has no next cursor when nothing follows it
  absl::StatusOr<core::FindingPage> exact =
      h.views.FindingListPage(core::ParseFindingListQuery({{"limit", "4"}}));
  REQUIRE(exact.ok());
  CHECK_FALSE(exact->next_cursor.has_value());
  CHECK(AllPages(h, {{"limit", "2"}, {"include_resolved", "1"}}) ==
        std::vector<std::string>{"crit-new", "crit-old", "resolved", "nginx", "warn"});
  CHECK(AllPages(h, {{"limit", "1"}, {"resource_id", "vm:101"}}) ==
        std::vector<std::string>{"crit-new", "crit-old", "warn"});
  // limit 0, negative or not a number is the default (every active finding); huge is the cap
  CHECK(AllPages(h, {{"limit", "0"}}) == all);
  CHECK(AllPages(h, {{"limit", "-1"}}) == all);
  CHECK(AllPages(h, {{"limit", "99999999999999999999"}}) == all);
}

TEST_CASE("a malformed or hostile findings cursor is invalid_finding_request and reads nothing",
          "[core][agent][findings]") {
  ViewsHarness h;
  Populate(h);
  absl::StatusOr<core::FindingPage> first =
      h.views.FindingListPage(core::ParseFindingListQuery({{"limit", "1"}}));
  REQUIRE(first.ok());
  REQUIRE(first->next_cursor.has_value());
  const std::string good = *first->next_cursor;
  REQUIRE(good.rfind("f1.", 0) == 0);
  const std::string long_id(600, 'a');
  for (const std::string& cursor :
       {std::string("garbage"), std::string("f1."), std::string("f1.!!!!"),
        good.substr(0, good.size() - 3) + "%%%", "f2." + good.substr(3), std::string(2000, 'f'),
        "f1." + absl::WebSafeBase64Escape("critical\n1\n"),
        "f1." + absl::WebSafeBase64Escape("loud\n1\nx"),
        "f1." + absl::WebSafeBase64Escape("critical\n1e9\nx"),
        "f1." + absl::WebSafeBase64Escape("critical\n99999999999999999999\nx"),
        "f1." + absl::WebSafeBase64Escape("critical\n1\nx\x01y"),
        "f1." + absl::WebSafeBase64Escape("critical\n1\n\xff\xfe"),
        "f1." + absl::WebSafeBase64Escape("critical\n1\n" + long_id),
        "f1." + absl::WebSafeBase64Escape("critical 1 x")}) {
    INFO(cursor);
    h.findings.FailNext(absl::InternalError("the store must not be read"));
    absl::StatusOr<core::FindingPage> page =
        h.views.FindingListPage(core::ParseFindingListQuery({{"cursor", cursor}}));
    REQUIRE(absl::IsInvalidArgument(page.status()));
    std::optional<core::AgentError> error = core::AgentQueryError(page.status());
    REQUIRE(error.has_value());
    CHECK(error->code == core::AgentErrorCode::kInvalidFindingRequest);
    CHECK(error->details.count("cursor") == 1);
    h.findings.FailNext(absl::OkStatus());  // clear the unused injection
  }
  // a well-formed cursor naming a finding that is gone still positions the page
  const std::string gone = core::EncodeFindingCursor(
      core::FindingPagePosition{Severity::kCritical, h.clock.Now() - absl::Minutes(90), "zz"});
  CHECK(AllPages(h, {{"cursor", gone}}) == std::vector<std::string>{"crit-old", "nginx", "warn"});
}

TEST_CASE("fleet context counts come from the store's active counts", "[core][agent][findings]") {
  ViewsHarness h;
  Populate(h);
  rapidjson::Document doc = Body(h.views.FleetContext({}));
  bool seen = false;
  for (const auto& r : doc["resources"].GetArray()) {
    if (std::string(r["canonicalId"].GetString()) == "vm:101") {
      seen = true;
      CHECK(r["findings"]["critical"].GetInt() == 2);
      CHECK(r["findings"]["warning"].GetInt() == 1);
      CHECK(r["findings"]["info"].GetInt() == 2);  // watch counts as info
      CHECK(r["findings"]["total"].GetInt() == 5);
    }
  }
  CHECK(seen);
}

TEST_CASE("a finding store failure fails the findings list", "[core][agent]") {
  ViewsHarness h;
  h.findings.FailNext(absl::UnavailableError("disk gone"));
  CHECK(absl::IsUnavailable(h.views.FindingList({}).status()));
}

}  // namespace
}  // namespace pulse::testing::agent
