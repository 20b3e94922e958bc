// The action queue and session lists page by keyset through the real pulse-server (issue 29):
// a walk of X-Next-Cursor pages lists every row that stays in its list exactly once while rows
// are written between the pages (by another process on the same database, as a second server
// or the CLI would), and a cursor the server did not issue is 400 with the route's code.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "contracts/action_store_contract.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/model/session_record.h"
#include "server_harness.h"

namespace pulse::testing::e2e {
namespace {

namespace asc = action_store_contract;

// An in-flight action of the store, created at `created` and good for an hour from now.
core::ActionRecord PagingAction(const std::string& suffix, absl::Time created) {
  core::ActionRecord r = asc::NewRecord(suffix, false, created);
  r.plan.expires_at = absl::Now() + absl::Hours(1);
  return r;
}

// The ids of `items` (the actions array of an action page, or a session page's array).
std::vector<std::string> PagedIdsOf(const rapidjson::Value& items, const char* key) {
  std::vector<std::string> ids;
  for (const rapidjson::Value& item : items.GetArray()) {
    ids.emplace_back(item[key].GetString());
  }
  return ids;
}

bool PagedContains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

bool PagedNoneTwice(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  return std::adjacent_find(ids.begin(), ids.end()) == ids.end();
}

std::string PagingTokenId(adapters::storage::SqliteStorage& storage, const std::string& name) {
  absl::StatusOr<std::vector<core::ApiTokenInfo>> tokens = storage.tokens->List();
  REQUIRE(tokens.ok());
  for (const core::ApiTokenInfo& t : *tokens) {
    if (t.name == name) {
      return t.id;
    }
  }
  FAIL("no token named " << name);
  return "";
}

TEST_CASE("the action list pages through X-Next-Cursor with writes between pages",
          "[e2e][server][actions]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*", "pager");
  ServerProcess server(dir.path());
  auto storage = adapters::storage::OpenSqliteStorage(dir.path());
  REQUIRE(storage.ok());
  core::ActionStore& actions = *(*storage)->actions;
  const absl::Time base = absl::Now() - absl::Minutes(30);
  std::vector<core::ActionRecord> made;
  for (int i = 0; i < 25; ++i) {
    const core::ActionRecord r =
        PagingAction("p" + std::to_string(100 + i), base + absl::Seconds(i));
    REQUIRE(actions.InsertIfAbsent(r, asc::InitialEvents(r)).ok());
    made.push_back(r);
  }
  const Reply whole = Send(server.port(), "GET", "/api/actions?limit=500", token);
  REQUIRE(whole.status == 200);
  CHECK(whole.Header("X-Next-Cursor").empty());
  CHECK(PagedIdsOf(Json(whole.body)["actions"], "id").size() == 25);

  // Pages of 4; between pages another writer plans a newer action and settles the last one
  // listed and one further on.
  std::vector<std::string> walked;
  std::set<std::string> left;
  std::string path = "/api/actions?view=pending&limit=4";
  int pages = 0;
  for (; pages < 50; ++pages) {
    const Reply page = Send(server.port(), "GET", path, token);
    REQUIRE(page.status == 200);
    const rapidjson::Document body = Json(page.body);
    const std::vector<std::string> ids = PagedIdsOf(body["actions"], "id");
    CHECK(body["count"].GetUint64() == ids.size());
    CHECK(ids.size() <= 4);
    walked.insert(walked.end(), ids.begin(), ids.end());
    const std::string next = page.Header("X-Next-Cursor");
    if (next.empty()) {
      break;
    }
    CHECK(ids.size() == 4);
    const absl::Time now = absl::Now();
    const core::ActionRecord fresh = PagingAction("n" + std::to_string(pages), now);
    REQUIRE(actions.InsertIfAbsent(fresh, asc::InitialEvents(fresh)).ok());
    for (const std::string& id :
         {ids.back(), made[std::min<std::size_t>(walked.size() + 3, made.size() - 1)].id()}) {
      absl::StatusOr<core::ActionRecord> current = actions.Get(id);
      REQUIRE(current.ok());
      if (current->state == core::ActionState::kPlanned) {
        asc::MustSettle((*storage)->actions, *current, now);
        left.insert(id);
      }
    }
    path = "/api/actions?view=pending&limit=4&cursor=" + next;  // web-safe base64: no escaping
  }
  CHECK(pages > 5);
  CHECK(PagedNoneTwice(walked));
  for (const core::ActionRecord& r : made) {
    INFO(r.id());
    if (left.count(r.id()) == 0) {
      CHECK(PagedContains(walked, r.id()));  // stayed pending throughout: listed once
    }
  }
  // Every action planned during the walk is newer than the walk's position: listed too.
  for (int i = 0; i < pages; ++i) {
    CHECK(PagedContains(walked, "act_n" + std::to_string(i)));
  }

  // The settled view: the actions settled, most recently updated first, paged by 1.
  std::vector<std::string> settled;
  path = "/api/actions?view=settled&limit=1";
  for (int guard = 0; guard < 100; ++guard) {
    const Reply page = Send(server.port(), "GET", path, token);
    REQUIRE(page.status == 200);
    const std::vector<std::string> ids = PagedIdsOf(Json(page.body)["actions"], "id");
    settled.insert(settled.end(), ids.begin(), ids.end());
    const std::string next = page.Header("X-Next-Cursor");
    if (next.empty()) {
      break;
    }
    path = "/api/actions?view=settled&limit=1&cursor=" + next;
  }
  CHECK(std::set<std::string>(settled.begin(), settled.end()) == left);
  CHECK(settled.size() == left.size());

  // A pending cursor is not a settled one; a forged or truncated one is refused; nothing changes.
  const Reply first = Send(server.port(), "GET", "/api/actions?limit=1", token);
  const std::string cursor = first.Header("X-Next-Cursor");
  REQUIRE_FALSE(cursor.empty());
  for (const std::string& query :
       {"view=settled&cursor=" + cursor, "cursor=" + cursor.substr(0, 6),
        std::string("cursor=a1.AAAA"), std::string("cursor=f1.Y3JpdGljYWwKMAp4"),
        std::string("cursor=a1.") + std::string(1100, 'A'), std::string("cursor=a1.%0A"),
        std::string("cursor=")}) {
    INFO(query);
    const Reply bad = Send(server.port(), "GET", "/api/actions?" + query, token);
    CHECK(bad.status == 400);
    CHECK(ErrorCode(bad.body) == "invalid_action_list_cursor");
  }
  CHECK(Send(server.port(), "GET", "/api/actions?limit=1", token).body == first.body);
  CHECK(server.Stop() == "exited 0");
}

TEST_CASE("the session list pages through X-Next-Cursor with writes between pages",
          "[e2e][server][sessions]") {
  TempDir dir;
  const std::string token = MintToken(dir.path(), "*", "pager");
  ServerProcess server(dir.path());
  auto storage = adapters::storage::OpenSqliteStorage(dir.path());
  REQUIRE(storage.ok());
  core::SessionStore& sessions = *(*storage)->sessions;
  const core::SessionOwner owner{PagingTokenId(**storage, "pager"), "pager"};
  const absl::Time base = absl::Now() - absl::Hours(1);
  const auto session = [&](const std::string& id, absl::Time at, core::SessionOwner who) {
    core::SessionRecord r;
    r.id = id;
    r.owner = std::move(who);
    r.transcript = {core::Message::User("hi")};
    r.created_at = at;
    r.updated_at = at;
    REQUIRE(sessions.Create(r).ok());
  };
  std::vector<std::string> made;
  for (int i = 0; i < 22; ++i) {
    made.push_back("ses_p" + std::to_string(100 + i));
    // Pairs share their time: ties are broken by id.
    session(made.back(), base + absl::Seconds(i / 2), owner);
  }
  session("ses_other", base + absl::Seconds(5), {"tok_someone", "someone"});
  const Reply whole = Send(server.port(), "GET", "/api/ai/sessions?limit=1000", token);
  REQUIRE(whole.status == 200);
  CHECK(whole.Header("X-Next-Cursor").empty());
  const std::vector<std::string> everything = PagedIdsOf(Json(whole.body), "id");
  CHECK(everything.size() == 22);

  std::vector<std::string> walked;
  std::set<std::string> touched;
  std::string path = "/api/ai/sessions?limit=3";
  int pages = 0;
  for (; pages < 50; ++pages) {
    const Reply page = Send(server.port(), "GET", path, token);
    REQUIRE(page.status == 200);
    const std::vector<std::string> ids = PagedIdsOf(Json(page.body), "id");
    walked.insert(walked.end(), ids.begin(), ids.end());
    const std::string next = page.Header("X-Next-Cursor");
    if (next.empty()) {
      break;
    }
    // Another writer: a new session (newest, ahead of the walk), the last one listed updated
    // (it moves to the front), and one not listed yet deleted.
    const absl::Time now = absl::Now();
    session("ses_n" + std::to_string(pages), now, owner);
    absl::StatusOr<core::SessionRecord> last = sessions.Get(ids.back());
    REQUIRE(last.ok());
    last->updated_at = now;
    REQUIRE(sessions.Update(*last).ok());
    touched.insert(ids.back());
    const std::size_t ahead = std::min(walked.size() + 2, everything.size() - 1);
    if (sessions.Delete(everything[ahead]).ok()) {
      touched.insert(everything[ahead]);
    }
    path = "/api/ai/sessions?limit=3&cursor=" + next;
  }
  CHECK(pages > 4);
  CHECK(PagedNoneTwice(walked));
  for (const std::string& id : everything) {
    INFO(id);
    if (touched.count(id) == 0) {
      CHECK(PagedContains(walked, id));
    }
  }
  CHECK_FALSE(PagedContains(walked, "ses_other"));
  // Without writes, the pages join to the whole list exactly.
  std::vector<std::string> again;
  const std::vector<std::string> now_whole =
      PagedIdsOf(Json(Send(server.port(), "GET", "/api/ai/sessions", token).body), "id");
  path = "/api/ai/sessions?limit=2";
  for (int guard = 0; guard < 100; ++guard) {
    const Reply page = Send(server.port(), "GET", path, token);
    REQUIRE(page.status == 200);
    const std::vector<std::string> ids = PagedIdsOf(Json(page.body), "id");
    again.insert(again.end(), ids.begin(), ids.end());
    const std::string next = page.Header("X-Next-Cursor");
    if (next.empty()) {
      break;
    }
    path = "/api/ai/sessions?limit=2&cursor=" + next;
  }
  CHECK(again == now_whole);

  for (const std::string& query :
       {std::string("cursor=s1.AAAA"), std::string("cursor=a1.cGVuZGluZwowCng"),
        std::string("cursor=s1.") + std::string(1100, 'A'), std::string("cursor=s1.%0A"),
        std::string("cursor=s1.MAp4Lw"),  // "0\nx/": not a session id
        std::string("cursor=")}) {
    INFO(query);
    const Reply bad = Send(server.port(), "GET", "/api/ai/sessions?" + query, token);
    CHECK(bad.status == 400);
    CHECK(ErrorCode(bad.body) == "invalid_request");
  }
  CHECK(server.Stop() == "exited 0");
}

}  // namespace
}  // namespace pulse::testing::e2e
