// The SessionStore contract, as one reusable Catch2 suite for every adapter:
//
//   TEST_CASE("SqliteSessionStore honours the contract", "[adapters][sqlite]") {
//     pulse::testing::RunSessionStoreContract([] { return MakeSqliteSessionStore(); });
//   }
//
// `make` returns a fresh, empty store as a pointer-like owner; each SECTION gets its own.
// Times carry sub-second parts and text carries non-ASCII and control characters: adapters
// must round-trip every field exactly.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "pulse/core/ports/session_store.h"

namespace pulse::testing {
namespace session_contract {

inline core::SessionRecord FullSession(std::string id) {
  core::SessionRecord r;
  r.id = std::move(id);
  r.status = core::SessionStatus::kAwaitingApproval;
  r.transcript = {
      core::Message::User("Neustart von web-01 bitte — \"jetzt\"\n\ttab"),
      core::Message::Assistant(
          "Planning the restart.",
          {core::ToolCall{"call_1", "pulse_query", R"({"action":"get"})", "CiQBcsjafQ/+opaque=="},
           core::ToolCall{"call_2", "pulse_control", R"({"type":"resource"})"}}),
      core::Message::ToolResult("call_1", "pulse_query", R"({"status":"running"})", false),
      core::Message::ToolResult("call_2", "pulse_control", R"({"status":"awaiting_approval"})",
                                false),
  };
  r.fsm.state = "READING";
  r.fsm.wrote_this_episode = true;
  r.fsm.last_read_tool = "pulse_query";
  r.fsm.last_read_at_unix_nanos = 1'800'000'000'123'456'789;
  r.fsm.last_write_tool = "pulse_control";
  r.fsm.last_write_at_unix_nanos = 1'799'999'999'000'000'001;
  r.fsm.consecutive_verify_blocks = 2;
  r.facts = {{"vm:101:status", "running", "call_1", 1},
             {"pulse_read:vm:102:error", "NOT_FOUND", "call_0", 0}};
  core::SuspendedCall s;
  s.tool_call_id = "call_2";
  s.tool_name = "pulse_control";
  s.arguments_json = R"({"type":"resource","resource_id":"vm:101"})";
  s.action_id = "act_0123456789abcdef0123456789abcdef";
  s.plan_hash = "sha256:" + std::string(64, 'a');
  s.transcript_index = 3;
  s.suspended_at = absl::FromUnixMillis(1'800'000'000'250);
  s.counters.turns = 2;
  s.counters.provider_calls = 3;
  s.counters.input_tokens = 1234;
  s.counters.output_tokens = 56;
  s.counters.tool_calls = 2;
  s.counters.tool_errors = 1;
  s.counters.evidence_calls = 0;
  s.counters.consecutive_error_turns = 1;
  s.counters.tools_run = {{"pulse_query", 1}, {"pulse_control", 1}};
  s.counters.cost_usd = 0.0123456789;
  s.counters.cost_unknown = true;
  s.denied_fingerprints = {std::string("pulse_read\0{}", 13), std::string("svc_ops\0{}", 10)};
  r.suspended = s;
  r.usage = {{0, "openai:gpt-4o", 1200, 30, 0.0033, true},
             {1, "openai:gpt-4o", 34, 26, std::nullopt, true},
             {2, "", 0, 0, std::nullopt, false}};
  r.usage_totals = {7, 2468, 112, 0.1 + 0.2, 4};  // not exactly 0.3: must still round-trip
  r.created_at = absl::FromUnixMillis(1'799'999'000'001);
  r.updated_at = absl::FromUnixMillis(1'800'000'000'999);
  r.owner = {"tok_alice01", "Alice — ops"};
  return r;
}

inline core::SessionRecord IdleSession(std::string id, absl::Time updated_at,
                                       core::SessionOwner owner = {},
                                       core::SessionKind kind = core::SessionKind::kChat) {
  core::SessionRecord r;
  r.id = std::move(id);
  r.status = core::SessionStatus::kIdle;
  r.kind = kind;
  r.owner = std::move(owner);
  r.transcript = {core::Message::User("hi"), core::Message::Assistant("hello")};
  r.created_at = updated_at;
  r.updated_at = updated_at;
  return r;
}

inline core::SessionListQuery Limit(std::size_t limit) {
  core::SessionListQuery q;
  q.limit = limit;
  return q;
}

// The ids of every page of `query` read query.limit at a time, in order; `between` runs after
// each full page.
template <class Store, class Between>
std::vector<std::string> WalkSessionPages(Store& store, core::SessionListQuery query,
                                          Between between) {
  std::vector<std::string> ids;
  for (int pages = 0; pages < 1000; ++pages) {
    absl::StatusOr<std::vector<core::SessionSummary>> page = store->List(query);
    REQUIRE(page.ok());
    REQUIRE(page->size() <= query.limit);
    for (const core::SessionSummary& s : *page) {
      ids.push_back(s.id);
    }
    if (page->size() < query.limit) {
      break;
    }
    query.after = core::SessionPagePosition{page->back().updated_at, page->back().id};
    between();
  }
  return ids;
}

}  // namespace session_contract

template <class MakeStore>
void RunSessionStoreContract(MakeStore make) {
  using session_contract::FullSession;
  using session_contract::IdleSession;
  using session_contract::Limit;
  auto store = make();
  const absl::Time t0 = absl::FromUnixMillis(1'800'000'000'000);

  SECTION("an unknown session is NotFound") {
    CHECK(absl::IsNotFound(store->Get("ses_missing").status()));
  }

  SECTION("Create stores revision 1 and Get returns every field exactly") {
    core::SessionRecord r = FullSession("ses_full");
    r.revision = 42;  // ignored: the store assigns revisions
    absl::StatusOr<core::SessionRecord> created = store->Create(r);
    REQUIRE(created.ok());
    CHECK(created->revision == 1);
    absl::StatusOr<core::SessionRecord> got = store->Get("ses_full");
    REQUIRE(got.ok());
    r.revision = 1;
    CHECK(*got == r);
  }

  SECTION("Create of an existing id is AlreadyExists and changes nothing") {
    REQUIRE(store->Create(IdleSession("ses_a", t0)).ok());
    core::SessionRecord other = IdleSession("ses_a", t0 + absl::Seconds(1));
    other.transcript.push_back(core::Message::User("again"));
    CHECK(absl::IsAlreadyExists(store->Create(other).status()));
    CHECK(store->Get("ses_a")->transcript.size() == 2);
  }

  SECTION("Update with the current revision replaces the session and bumps the revision") {
    REQUIRE(store->Create(IdleSession("ses_a", t0)).ok());
    core::SessionRecord r = *store->Get("ses_a");
    r.transcript.push_back(core::Message::User("next"));
    r.status = core::SessionStatus::kRunning;
    r.updated_at = t0 + absl::Milliseconds(1500);
    absl::StatusOr<core::SessionRecord> updated = store->Update(r);
    REQUIRE(updated.ok());
    CHECK(updated->revision == 2);
    absl::StatusOr<core::SessionRecord> got = store->Get("ses_a");
    REQUIRE(got.ok());
    CHECK(got->revision == 2);
    CHECK(got->transcript.size() == 3);
    CHECK(got->status == core::SessionStatus::kRunning);
    CHECK(got->updated_at == t0 + absl::Milliseconds(1500));
  }

  SECTION("Update keeps created_at from the stored session") {
    REQUIRE(store->Create(IdleSession("ses_a", t0)).ok());
    core::SessionRecord r = *store->Get("ses_a");
    r.created_at = t0 + absl::Hours(5);
    REQUIRE(store->Update(r).ok());
    CHECK(store->Get("ses_a")->created_at == t0);
  }

  SECTION("a stale revision is Aborted and nothing is written") {
    REQUIRE(store->Create(IdleSession("ses_a", t0)).ok());
    core::SessionRecord first = *store->Get("ses_a");
    core::SessionRecord second = first;
    first.transcript.push_back(core::Message::User("winner"));
    REQUIRE(store->Update(first).ok());
    second.transcript.push_back(core::Message::User("loser"));
    CHECK(absl::IsAborted(store->Update(second).status()));
    absl::StatusOr<core::SessionRecord> got = store->Get("ses_a");
    REQUIRE(got.ok());
    CHECK(got->transcript.back().content == "winner");
    CHECK(got->revision == 2);
  }

  SECTION("concurrent updates of one revision have exactly one winner") {
    REQUIRE(store->Create(IdleSession("ses_a", t0)).ok());
    const core::SessionRecord base = *store->Get("ses_a");
    constexpr int kWriters = 8;
    std::vector<absl::Status> results(kWriters);
    std::vector<std::thread> threads;
    for (int i = 0; i < kWriters; ++i) {
      threads.emplace_back([&, i] {
        core::SessionRecord r = base;
        r.transcript.push_back(core::Message::User("writer " + std::to_string(i)));
        results[static_cast<std::size_t>(i)] = store->Update(r).status();
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
    int ok = 0;
    for (const absl::Status& s : results) {
      ok += s.ok() ? 1 : 0;
      CHECK((s.ok() || absl::IsAborted(s)));
    }
    CHECK(ok == 1);
    CHECK(store->Get("ses_a")->revision == 2);
  }

  SECTION("Update of an unknown session is NotFound") {
    core::SessionRecord r = IdleSession("ses_nobody", t0);
    r.revision = 1;
    CHECK(absl::IsNotFound(store->Update(r).status()));
  }

  SECTION("invalid records and ids are refused with InvalidArgument and nothing is written") {
    CHECK(absl::IsInvalidArgument(store->Create(IdleSession("../etc", t0)).status()));
    CHECK(absl::IsInvalidArgument(store->Get("bad id").status()));
    core::SessionRecord no_suspension = IdleSession("ses_b", t0);
    no_suspension.status = core::SessionStatus::kAwaitingApproval;
    CHECK(absl::IsInvalidArgument(store->Create(no_suspension).status()));
    core::SessionRecord bad_index = FullSession("ses_c");
    bad_index.suspended->transcript_index = 1;  // an assistant message, not its result
    CHECK(absl::IsInvalidArgument(store->Create(bad_index).status()));
    CHECK(absl::IsNotFound(store->Get("ses_b").status()));
    CHECK(absl::IsNotFound(store->Get("ses_c").status()));
    REQUIRE(store->Create(IdleSession("ses_d", t0)).ok());
    core::SessionRecord r = *store->Get("ses_d");
    r.suspended = FullSession("ses_d").suspended;  // suspended while idle
    CHECK(absl::IsInvalidArgument(store->Update(r).status()));
    CHECK(store->Get("ses_d")->revision == 1);
  }

  SECTION("List returns the most recently updated first, bounded by the limit") {
    REQUIRE(store->Create(IdleSession("ses_old", t0)).ok());
    REQUIRE(store->Create(IdleSession("ses_new", t0 + absl::Seconds(10))).ok());
    REQUIRE(store->Create(IdleSession("ses_mid_b", t0 + absl::Seconds(5))).ok());
    REQUIRE(store->Create(IdleSession("ses_mid_a", t0 + absl::Seconds(5))).ok());
    absl::StatusOr<std::vector<core::SessionSummary>> all = store->List(Limit(10));
    REQUIRE(all.ok());
    REQUIRE(all->size() == 4);
    CHECK((*all)[0].id == "ses_new");
    CHECK((*all)[1].id == "ses_mid_a");
    CHECK((*all)[2].id == "ses_mid_b");
    CHECK((*all)[3].id == "ses_old");
    CHECK((*all)[0].message_count == 2);
    CHECK((*all)[0].status == core::SessionStatus::kIdle);
    CHECK((*all)[0].updated_at == t0 + absl::Seconds(10));
    absl::StatusOr<std::vector<core::SessionSummary>> two = store->List(Limit(2));
    REQUIRE(two.ok());
    CHECK(two->size() == 2);
    CHECK(absl::IsInvalidArgument(store->List(Limit(0)).status()));
    CHECK(absl::IsInvalidArgument(store->List(Limit(core::kMaxSessionListLimit + 1)).status()));
  }

  SECTION("owner and kind round-trip, and Update never changes them") {
    const core::SessionOwner alice{"tok_alice", "alice"};
    REQUIRE(store->Create(IdleSession("ses_a", t0, alice)).ok());
    REQUIRE(store->Create(IdleSession("ses_p", t0, {}, core::SessionKind::kPatrol)).ok());
    CHECK(store->Get("ses_a")->owner == alice);
    CHECK(store->Get("ses_a")->kind == core::SessionKind::kChat);
    CHECK(store->Get("ses_p")->kind == core::SessionKind::kPatrol);
    CHECK_FALSE(store->Get("ses_p")->owner.owned());
    core::SessionRecord r = *store->Get("ses_a");
    r.owner = {"tok_mallory", "mallory"};
    REQUIRE(store->Update(r).ok());
    CHECK(store->Get("ses_a")->owner == alice);
    core::SessionRecord p = *store->Get("ses_p");
    p.kind = core::SessionKind::kChat;
    p.owner = {"tok_mallory", "mallory"};
    REQUIRE(store->Update(p).ok());
    CHECK(store->Get("ses_p")->kind == core::SessionKind::kPatrol);
    CHECK_FALSE(store->Get("ses_p")->owner.owned());
  }

  SECTION("invalid owners are refused with InvalidArgument") {
    CHECK(
        absl::IsInvalidArgument(store->Create(IdleSession("ses_a", t0, {"bad id", "x"})).status()));
    CHECK(absl::IsInvalidArgument(store->Create(IdleSession("ses_b", t0, {"", "name"})).status()));
    CHECK(absl::IsInvalidArgument(
        store->Create(IdleSession("ses_c", t0, {"tok_x", "x"}, core::SessionKind::kPatrol))
            .status()));
    CHECK(absl::IsNotFound(store->Get("ses_a").status()));
  }

  SECTION("List filters by kind and by owner") {
    const core::SessionOwner alice{"tok_alice", "alice"};
    const core::SessionOwner bob{"tok_bob", "bob"};
    REQUIRE(store->Create(IdleSession("ses_a1", t0, alice)).ok());
    REQUIRE(store->Create(IdleSession("ses_a2", t0 + absl::Seconds(2), alice)).ok());
    REQUIRE(store->Create(IdleSession("ses_b1", t0 + absl::Seconds(1), bob)).ok());
    REQUIRE(store->Create(IdleSession("ses_legacy", t0 + absl::Seconds(3))).ok());
    REQUIRE(
        store->Create(IdleSession("ses_p1", t0 + absl::Seconds(4), {}, core::SessionKind::kPatrol))
            .ok());
    core::SessionListQuery mine = Limit(10);
    mine.kind = core::SessionKind::kChat;
    mine.owner_token_id = "tok_alice";
    absl::StatusOr<std::vector<core::SessionSummary>> a = store->List(mine);
    REQUIRE(a.ok());
    REQUIRE(a->size() == 2);
    CHECK((*a)[0].id == "ses_a2");
    CHECK((*a)[1].id == "ses_a1");
    CHECK((*a)[0].owner_token_id == "tok_alice");
    CHECK((*a)[0].kind == core::SessionKind::kChat);
    core::SessionListQuery patrol = Limit(10);
    patrol.kind = core::SessionKind::kPatrol;
    absl::StatusOr<std::vector<core::SessionSummary>> p = store->List(patrol);
    REQUIRE(p.ok());
    REQUIRE(p->size() == 1);
    CHECK((*p)[0].id == "ses_p1");
    CHECK((*p)[0].kind == core::SessionKind::kPatrol);
    core::SessionListQuery unowned = Limit(10);
    unowned.kind = core::SessionKind::kChat;
    unowned.owner_token_id = "";
    absl::StatusOr<std::vector<core::SessionSummary>> u = store->List(unowned);
    REQUIRE(u.ok());
    REQUIRE(u->size() == 1);
    CHECK((*u)[0].id == "ses_legacy");
    CHECK(store->List(Limit(10))->size() == 5);
  }

  SECTION("List pages by keyset after a position, with its filters, joining to the whole list") {
    const core::SessionOwner alice{"tok_alice", "Alice"};
    // Alice's chat sessions, newest first with ties by id: a9, a7, a8 (updated together), a5..a1.
    for (int i = 1; i <= 9; ++i) {
      const absl::Time at = t0 + absl::Seconds(i == 8 ? 7 : i) + absl::Nanoseconds(3);
      REQUIRE(store->Create(IdleSession("ses_a" + std::to_string(i), at, alice)).ok());
    }
    REQUIRE(store->Delete("ses_a6").ok());
    REQUIRE(store->Create(IdleSession("ses_b1", t0 + absl::Seconds(8), {"tok_bob", "Bob"})).ok());
    REQUIRE(
        store->Create(IdleSession("ses_p1", t0 + absl::Seconds(5), {}, core::SessionKind::kPatrol))
            .ok());
    const std::vector<std::string> all_alice = {"ses_a9", "ses_a7", "ses_a8", "ses_a5",
                                                "ses_a4", "ses_a3", "ses_a2", "ses_a1"};
    for (std::size_t limit : {1, 2, 3, 8, 9}) {
      INFO("limit " << limit);
      core::SessionListQuery q = Limit(limit);
      q.kind = core::SessionKind::kChat;
      q.owner_token_id = "tok_alice";
      CHECK(session_contract::WalkSessionPages(store, q, [] {}) == all_alice);
    }
    core::SessionListQuery every = Limit(4);
    const std::vector<std::string> all = {"ses_a9", "ses_b1", "ses_a7", "ses_a8", "ses_a5",
                                          "ses_p1", "ses_a4", "ses_a3", "ses_a2", "ses_a1"};
    CHECK(session_contract::WalkSessionPages(store, every, [] {}) == all);
    core::SessionListQuery past = Limit(5);
    past.after = core::SessionPagePosition{t0, "ses_zz"};
    CHECK(store->List(past)->empty());
  }

  SECTION("a List walk lists each session left alone exactly once while others change") {
    const core::SessionOwner alice{"tok_alice", "Alice"};
    for (int i = 10; i < 30; ++i) {
      REQUIRE(store->Create(IdleSession("ses_w" + std::to_string(i), t0 + absl::Seconds(i), alice))
                  .ok());
    }
    // Between pages: a new session (newer than all), one already listed updated (it moves to the
    // front, behind the walk) and one not listed yet deleted.
    int step = 0;
    std::vector<std::string> touched;
    core::SessionListQuery q = Limit(3);
    q.owner_token_id = "tok_alice";
    const std::vector<std::string> walked = session_contract::WalkSessionPages(store, q, [&] {
      ++step;
      const absl::Time now = t0 + absl::Hours(1) + absl::Seconds(step);
      REQUIRE(store->Create(IdleSession("ses_n" + std::to_string(step), now, alice)).ok());
      const std::string listed = "ses_w" + std::to_string(30 - step * 3);  // on the last page
      absl::StatusOr<core::SessionRecord> r = store->Get(listed);
      REQUIRE(r.ok());
      r->updated_at = now;
      REQUIRE(store->Update(*r).ok());
      const std::string ahead = "ses_w" + std::to_string(30 - step * 3 - 5);
      if (store->Delete(ahead).ok()) {
        touched.push_back(ahead);
      }
      touched.push_back(listed);
    });
    std::vector<std::string> sorted = walked;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // none twice
    for (int i = 10; i < 30; ++i) {
      const std::string id = "ses_w" + std::to_string(i);
      INFO(id);
      if (std::find(touched.begin(), touched.end(), id) == touched.end()) {
        CHECK(std::find(walked.begin(), walked.end(), id) != walked.end());
      }
    }
    for (const std::string& id : walked) {
      CHECK(id.rfind("ses_n", 0) != 0);  // created after the walk began, ahead of it
    }
  }

  SECTION("Delete removes a session; deleting it again is NotFound") {
    REQUIRE(store->Create(IdleSession("ses_a", t0)).ok());
    REQUIRE(store->Delete("ses_a").ok());
    CHECK(absl::IsNotFound(store->Get("ses_a").status()));
    CHECK(absl::IsNotFound(store->Delete("ses_a")));
  }
}

}  // namespace pulse::testing
