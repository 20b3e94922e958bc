// The TokenStore contract, as one reusable Catch2 suite for the fake and every adapter:
//
//   TEST_CASE("SqliteTokenStore honours the TokenStore contract", "[adapters][storage]") {
//     pulse::testing::RunTokenStoreContract([] { return MakeSqliteTokenStore(); });
//   }
//
// `make` returns a fresh, empty store as a pointer-like owner; each SECTION gets its own.
// Times carry sub-second parts: adapters must round-trip absl::Time exactly.
#pragma once

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "pulse/core/ports/token_store.h"

namespace pulse::testing {
namespace token_store_contract {

inline absl::Time T0() { return absl::FromUnixMillis(1'800'000'000'123) + absl::Nanoseconds(7); }

inline core::NewApiToken Request(std::string name, std::vector<std::string> scopes,
                                 absl::Time created = T0(),
                                 std::optional<absl::Time> expires = std::nullopt) {
  core::NewApiToken r;
  r.name = std::move(name);
  r.scopes = std::move(scopes);
  r.created_at = created;
  r.expires_at = expires;
  return r;
}

template <class Store>
core::IssuedApiToken MustCreate(Store& store, const core::NewApiToken& request) {
  absl::StatusOr<core::IssuedApiToken> issued = store->Create(request);
  INFO(issued.status().ToString());
  REQUIRE(issued.ok());
  return *issued;
}

template <class Store>
std::vector<core::ApiTokenInfo> MustList(Store& store) {
  absl::StatusOr<std::vector<core::ApiTokenInfo>> listed = store->List();
  REQUIRE(listed.ok());
  return *listed;
}

// The raw token with one character changed (still well-shaped).
inline std::string Tampered(std::string token, std::size_t at) {
  token[at] = token[at] == 'A' ? 'B' : 'A';
  return token;
}

}  // namespace token_store_contract

template <class MakeStore>
void RunTokenStoreContract(MakeStore make) {
  using namespace token_store_contract;  // NOLINT: test-local helpers
  auto store = make();

  SECTION("create returns a well-shaped raw token once and stores canonical facts") {
    const core::IssuedApiToken issued =
        MustCreate(store, Request("ci — deploy bot", {"ai:chat", " ai:execute", "ai:chat"}, T0(),
                                  T0() + absl::Hours(24)));
    CHECK(core::HasApiTokenShape(issued.token));
    CHECK(core::IsApiTokenId(issued.info.id));
    CHECK(issued.info.name == "ci — deploy bot");
    CHECK(issued.info.scopes == std::vector<std::string>{"ai:execute", "ai:chat"});
    CHECK(issued.info.created_at == T0());
    CHECK(issued.info.expires_at == std::optional<absl::Time>(T0() + absl::Hours(24)));
    CHECK_FALSE(issued.info.last_used_at.has_value());
    const std::vector<core::ApiTokenInfo> listed = MustList(store);
    REQUIRE(listed.size() == 1);
    CHECK(listed.front() == issued.info);
  }

  SECTION("a token keeps the kind it was created with; the default is human") {
    const core::IssuedApiToken human = MustCreate(store, Request("person", {"actions:approve"}));
    core::NewApiToken agent_request = Request("mcp", {"actions:plan"});
    agent_request.kind = core::ApiTokenKind::kAgent;
    const core::IssuedApiToken agent = MustCreate(store, agent_request);
    core::NewApiToken service_request = Request("ci", {"monitoring:read"});
    service_request.kind = core::ApiTokenKind::kService;
    const core::IssuedApiToken service = MustCreate(store, service_request);
    CHECK(human.info.kind == core::ApiTokenKind::kHuman);
    CHECK(agent.info.kind == core::ApiTokenKind::kAgent);
    CHECK(service.info.kind == core::ApiTokenKind::kService);
    for (const core::IssuedApiToken* t : {&human, &agent, &service}) {
      absl::StatusOr<core::ApiTokenInfo> who = store->Authenticate(t->token, T0());
      REQUIRE(who.ok());
      CHECK(who->kind == t->info.kind);
    }
    const std::vector<core::ApiTokenInfo> listed = MustList(store);
    REQUIRE(listed.size() == 3);
    for (const core::ApiTokenInfo& info : listed) {
      CHECK(info.kind == (info.id == agent.info.id     ? core::ApiTokenKind::kAgent
                          : info.id == service.info.id ? core::ApiTokenKind::kService
                                                       : core::ApiTokenKind::kHuman));
    }
    core::NewApiToken bogus = Request("bogus", {"ai:chat"});
    bogus.kind = static_cast<core::ApiTokenKind>(7);
    CHECK(absl::IsInvalidArgument(store->Create(bogus).status()));
    CHECK(MustList(store).size() == 3);
  }

  SECTION("every token and id is distinct, and each authenticates as itself") {
    std::vector<core::IssuedApiToken> issued;
    for (int i = 0; i < 20; ++i) {
      issued.push_back(MustCreate(store, Request("same name", {"*"})));
    }
    std::set<std::string> tokens;
    std::set<std::string> ids;
    for (const core::IssuedApiToken& t : issued) {
      tokens.insert(t.token);
      ids.insert(t.info.id);
      absl::StatusOr<core::ApiTokenInfo> who = store->Authenticate(t.token, T0());
      REQUIRE(who.ok());
      CHECK(who->id == t.info.id);
      CHECK(who->scopes == std::vector<std::string>{"*"});
    }
    CHECK(tokens.size() == issued.size());
    CHECK(ids.size() == issued.size());
  }

  SECTION("anything but an exact live token is Unauthenticated") {
    const core::IssuedApiToken issued = MustCreate(store, Request("ops", {"monitoring:read"}));
    const std::string& t = issued.token;
    std::vector<std::string> wrong = {
        "",
        "pulse_",
        t.substr(0, t.size() - 1),
        t + "A",
        Tampered(t, t.size() - 1),
        Tampered(t, core::kApiTokenPrefix.size()),
        "Pulse_" + t.substr(core::kApiTokenPrefix.size()),
        " " + t,
        t + std::string(1, '\0'),
        std::string(t.size(), '\0'),
        "pulse_' OR '1'='1' --                             ",
        issued.info.id,
    };
    for (const std::string& candidate : wrong) {
      absl::StatusOr<core::ApiTokenInfo> who = store->Authenticate(candidate, T0());
      CHECK(absl::IsUnauthenticated(who.status()));
    }
    CHECK(store->Authenticate(t, T0()).ok());
  }

  SECTION("authentication records the last use at most once per resolution") {
    const core::IssuedApiToken issued = MustCreate(store, Request("ops", {"audit:read"}));
    const absl::Time first = T0() + absl::Seconds(5) + absl::Nanoseconds(3);
    absl::StatusOr<core::ApiTokenInfo> who = store->Authenticate(issued.token, first);
    REQUIRE(who.ok());
    CHECK(who->last_used_at == std::optional<absl::Time>(first));
    const absl::Time soon = first + core::kApiTokenLastUsedResolution - absl::Nanoseconds(1);
    who = store->Authenticate(issued.token, soon);
    REQUIRE(who.ok());
    CHECK(who->last_used_at == std::optional<absl::Time>(first));
    const absl::Time later = first + core::kApiTokenLastUsedResolution;
    who = store->Authenticate(issued.token, later);
    REQUIRE(who.ok());
    CHECK(who->last_used_at == std::optional<absl::Time>(later));
    const std::vector<core::ApiTokenInfo> listed = MustList(store);
    REQUIRE(listed.size() == 1);
    CHECK(listed.front().last_used_at == std::optional<absl::Time>(later));
  }

  SECTION("a token stops authenticating at its expiry and still lists") {
    const absl::Time expires = T0() + absl::Hours(1);
    const core::IssuedApiToken issued =
        MustCreate(store, Request("short", {"ai:chat"}, T0(), expires));
    CHECK(store->Authenticate(issued.token, expires - absl::Nanoseconds(1)).ok());
    CHECK(absl::IsUnauthenticated(store->Authenticate(issued.token, expires).status()));
    CHECK(absl::IsUnauthenticated(
        store->Authenticate(issued.token, expires + absl::Hours(100)).status()));
    CHECK(MustList(store).size() == 1);
  }

  SECTION("revoke ends a token, and revoking an unknown id is NotFound") {
    const core::IssuedApiToken keep = MustCreate(store, Request("keep", {"ai:chat"}));
    const core::IssuedApiToken drop = MustCreate(store, Request("drop", {"ai:chat"}));
    REQUIRE(store->Revoke(drop.info.id).ok());
    CHECK(absl::IsUnauthenticated(store->Authenticate(drop.token, T0()).status()));
    CHECK(absl::IsNotFound(store->Revoke(drop.info.id)));
    CHECK(absl::IsNotFound(store->Revoke("tok_0000000000000000")));
    CHECK(absl::IsNotFound(store->Revoke("")));
    CHECK(absl::IsNotFound(store->Revoke("' OR 1=1 --")));
    const std::vector<core::ApiTokenInfo> listed = MustList(store);
    REQUIRE(listed.size() == 1);
    CHECK(listed.front().id == keep.info.id);
    CHECK(store->Authenticate(keep.token, T0()).ok());
  }

  SECTION("list is ordered by creation time, then id") {
    const core::IssuedApiToken late =
        MustCreate(store, Request("late", {"ai:chat"}, T0() + absl::Seconds(2)));
    const core::IssuedApiToken early = MustCreate(store, Request("early", {"ai:chat"}, T0()));
    const core::IssuedApiToken tie_a =
        MustCreate(store, Request("tie", {"ai:chat"}, T0() + absl::Seconds(1)));
    const core::IssuedApiToken tie_b =
        MustCreate(store, Request("tie", {"ai:chat"}, T0() + absl::Seconds(1)));
    const std::vector<core::ApiTokenInfo> listed = MustList(store);
    REQUIRE(listed.size() == 4);
    CHECK(listed[0].id == early.info.id);
    CHECK(listed[1].id == std::min(tie_a.info.id, tie_b.info.id));
    CHECK(listed[2].id == std::max(tie_a.info.id, tie_b.info.id));
    CHECK(listed[3].id == late.info.id);
  }

  SECTION("malformed requests are InvalidArgument and store nothing") {
    std::vector<core::NewApiToken> bad = {
        Request("", {"ai:chat"}),
        Request(std::string(core::kMaxApiTokenNameBytes + 1, 'n'), {"ai:chat"}),
        Request("tab\there", {"ai:chat"}),
        Request("nul" + std::string(1, '\0'), {"ai:chat"}),
        Request("bad \xC3\x28 utf8", {"ai:chat"}),
        Request("no scopes", {}),
        Request("unknown scope", {"ai:chat", "relay:mobile:access"}),
        Request("upper", {"AI:CHAT"}),
        Request("expired at birth", {"ai:chat"}, T0(), T0()),
        Request("backwards", {"ai:chat"}, T0(), T0() - absl::Seconds(1)),
        Request("far future", {"ai:chat"}, T0(), absl::InfiniteFuture()),
    };
    for (const core::NewApiToken& request : bad) {
      INFO(request.name);
      CHECK(absl::IsInvalidArgument(store->Create(request).status()));
    }
    CHECK(MustList(store).empty());
    CHECK(store->Create(Request(std::string(core::kMaxApiTokenNameBytes, 'n'), {"ai:chat"})).ok());
  }

  SECTION("concurrent creates and authentications are all consistent") {
    constexpr int kThreads = 8;
    constexpr int kPerThread = 10;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          absl::StatusOr<core::IssuedApiToken> issued =
              store->Create(Request("t" + std::to_string(t), {"ai:chat"}));
          if (!issued.ok()) {
            ++failures;
            continue;
          }
          absl::StatusOr<core::ApiTokenInfo> who =
              store->Authenticate(issued->token, T0() + absl::Minutes(i));
          if (!who.ok() || who->id != issued->info.id) {
            ++failures;
          }
        }
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
    CHECK(failures.load() == 0);
    CHECK(MustList(store).size() == kThreads * kPerThread);
  }
}

}  // namespace pulse::testing
