// The HostAgentStore contract (core/ports/host_agent_store.h), as one reusable Catch2 suite for
// every adapter:
//
//   TEST_CASE("SqliteHostAgentStore honours the HostAgentStore contract", "[adapters][storage]") {
//     pulse::testing::RunHostAgentStoreContract([] { return MakeSqliteHostAgentStore(); });
//   }
//
// `make` returns a fresh, empty store as a pointer-like owner; each SECTION gets its own.
// Times carry sub-second parts: adapters must round-trip absl::Time exactly. What the rules
// protect: a token speaks for exactly one host, a host is served by one token at a time, and
// only an explicit replacement of the holder (which the caller found revoked) moves a host.
#pragma once

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "pulse/core/ports/host_agent_store.h"

namespace pulse::testing {
namespace host_agent_store_contract {

inline absl::Time T0() { return absl::FromUnixMillis(1'800'000'000'123) + absl::Nanoseconds(7); }

// Well-shaped token ids (tok_ + 16 lowercase hex digits).
inline const std::string kTokA = "tok_00000000000000aa";
inline const std::string kTokB = "tok_00000000000000bb";
inline const std::string kTokC = "tok_00000000000000cc";

inline std::string Token(int n) {
  std::string hex = std::to_string(n);
  return "tok_" + std::string(16 - hex.size(), '0') + hex;
}

inline std::string ReportJson(std::string_view host, int n) {
  return R"({"protocol":1,"host":")" + std::string(host) + R"(","n":)" + std::to_string(n) + "}";
}

template <class Store>
core::HostAgentRecord MustBind(Store& store, std::string_view host, std::string_view token,
                               absl::Time at = T0(),
                               std::optional<std::string_view> replacing = std::nullopt) {
  absl::StatusOr<core::HostAgentRecord> bound = store->Bind(host, token, at, replacing);
  INFO(bound.status().ToString());
  REQUIRE(bound.ok());
  return *bound;
}

template <class Store>
core::HostAgentRecord MustGet(Store& store, std::string_view host) {
  absl::StatusOr<core::HostAgentRecord> got = store->Get(host);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  return *got;
}

template <class Store>
std::vector<core::HostAgentRecord> MustList(Store& store) {
  absl::StatusOr<std::vector<core::HostAgentRecord>> listed = store->List();
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
  return *listed;
}

template <class Store>
std::uint64_t MustSave(Store& store, std::string_view host, std::string_view token, int n,
                       absl::Time at) {
  absl::StatusOr<std::uint64_t> seq =
      store->SaveReport(host, token, "0.4.0", ReportJson(host, n), at);
  INFO(seq.status().ToString());
  REQUIRE(seq.ok());
  return *seq;
}

}  // namespace host_agent_store_contract

template <class MakeStore>
void RunHostAgentStoreContract(MakeStore make) {
  using namespace host_agent_store_contract;  // NOLINT: test-local helpers
  auto store = make();

  SECTION("bind creates a pending record, found by host and by token") {
    const core::HostAgentRecord bound = MustBind(store, "web1", kTokA);
    CHECK(bound.host == "web1");
    CHECK(bound.token_id == kTokA);
    CHECK(bound.bound_at == T0());
    CHECK(bound.agent_version.empty());
    CHECK_FALSE(bound.last_report_at.has_value());
    CHECK(bound.report_seq == 0);
    CHECK(bound.last_report.empty());
    CHECK(MustGet(store, "web1") == bound);
    absl::StatusOr<core::HostAgentRecord> by_token = store->FindByToken(kTokA);
    REQUIRE(by_token.ok());
    CHECK(*by_token == bound);
    CHECK(MustList(store) == std::vector<core::HostAgentRecord>{bound});
  }

  SECTION("unknown hosts and tokens are NotFound") {
    CHECK(absl::IsNotFound(store->Get("web1").status()));
    CHECK(absl::IsNotFound(store->FindByToken(kTokA).status()));
    MustBind(store, "web1", kTokA);
    CHECK(absl::IsNotFound(store->Get("web2").status()));
    CHECK(absl::IsNotFound(store->FindByToken(kTokB).status()));
    CHECK(MustList(store).size() == 1);
  }

  SECTION("binding the same pair again is OK and changes nothing") {
    const core::HostAgentRecord first = MustBind(store, "web1", kTokA);
    REQUIRE(MustSave(store, "web1", kTokA, 1, T0() + absl::Seconds(1)) == 1);
    const core::HostAgentRecord reported = MustGet(store, "web1");
    CHECK(MustBind(store, "web1", kTokA, T0() + absl::Hours(1)) == reported);
    CHECK(MustBind(store, "web1", kTokA, T0() + absl::Hours(2), kTokB) == reported);
    CHECK(reported.bound_at == first.bound_at);
    CHECK(MustList(store).size() == 1);
  }

  SECTION("a token bound to one host is refused for a second, whatever it claims to replace") {
    const core::HostAgentRecord web1 = MustBind(store, "web1", kTokA);
    absl::Status second = store->Bind("web2", kTokA, T0()).status();
    CHECK(absl::IsFailedPrecondition(second));
    CHECK(std::string(second.message()).find("web1") != std::string::npos);
    const core::HostAgentRecord web2 = MustBind(store, "web2", kTokB);
    // Even naming web2's holder as replaced: token A stays web1's and web2 stays token B's.
    CHECK(absl::IsFailedPrecondition(store->Bind("web2", kTokA, T0(), kTokB).status()));
    CHECK(MustList(store) == std::vector<core::HostAgentRecord>{web1, web2});
  }

  SECTION("a host bound to one token is refused to a second unless the holder is replaced") {
    const core::HostAgentRecord held = MustBind(store, "web1", kTokA);
    absl::Status plain = store->Bind("web1", kTokB, T0() + absl::Minutes(1)).status();
    CHECK(absl::IsFailedPrecondition(plain));
    CHECK(std::string(plain.message()).find(kTokA) != std::string::npos);
    CHECK(absl::IsFailedPrecondition(
        store->Bind("web1", kTokB, T0() + absl::Minutes(1), kTokC).status()));
    CHECK(MustGet(store, "web1") == held);
    CHECK(absl::IsNotFound(store->FindByToken(kTokB).status()));

    const absl::Time later = T0() + absl::Minutes(2);
    const core::HostAgentRecord moved = MustBind(store, "web1", kTokB, later, kTokA);
    CHECK(moved.token_id == kTokB);
    CHECK(moved.bound_at == later);
    CHECK(MustGet(store, "web1") == moved);
    CHECK(absl::IsNotFound(store->FindByToken(kTokA).status()));
    // The replaced holder no longer speaks for the host.
    CHECK(absl::IsFailedPrecondition(
        store->SaveReport("web1", kTokA, "0.4.0", ReportJson("web1", 1), later).status()));
    CHECK(MustList(store).size() == 1);
  }

  SECTION("reports are saved only by the holder and count up from one") {
    MustBind(store, "web1", kTokA);
    MustBind(store, "web2", kTokB);
    const absl::Time at1 = T0() + absl::Seconds(30) + absl::Nanoseconds(11);
    CHECK(MustSave(store, "web1", kTokA, 1, at1) == 1);
    const core::HostAgentRecord after1 = MustGet(store, "web1");
    CHECK(after1.report_seq == 1);
    CHECK(after1.agent_version == "0.4.0");
    CHECK(after1.last_report_at == std::optional<absl::Time>(at1));
    CHECK(after1.last_report == ReportJson("web1", 1));
    CHECK(MustSave(store, "web1", kTokA, 2, at1 + absl::Seconds(30)) == 2);
    const absl::StatusOr<std::uint64_t> v5 = store->SaveReport(
        "web1", kTokA, "0.5.0-rc.1", ReportJson("web1", 3), at1 + absl::Seconds(60));
    REQUIRE(v5.ok());
    CHECK(*v5 == 3);
    const core::HostAgentRecord after3 = MustGet(store, "web1");
    CHECK(after3.agent_version == "0.5.0-rc.1");
    CHECK(after3.last_report == ReportJson("web1", 3));
    CHECK(after3.bound_at == T0());

    const core::HostAgentRecord web2 = MustGet(store, "web2");
    for (const auto& [host, token] : std::vector<std::pair<std::string, std::string>>{
             {"web1", kTokB}, {"web2", kTokA}, {"web3", kTokA}, {"web1", kTokC}}) {
      INFO(host << " " << token);
      CHECK(absl::IsFailedPrecondition(
          store->SaveReport(host, token, "9.9.9", ReportJson(host, 9), at1).status()));
    }
    CHECK(MustGet(store, "web1") == after3);
    CHECK(MustGet(store, "web2") == web2);
    CHECK(absl::IsNotFound(store->Get("web3").status()));
  }

  SECTION("a rebind keeps the host's last report and starts the new binding's count") {
    MustBind(store, "web1", kTokA);
    const absl::Time at = T0() + absl::Seconds(5);
    MustSave(store, "web1", kTokA, 1, at);
    MustSave(store, "web1", kTokA, 2, at + absl::Seconds(1));
    const core::HostAgentRecord moved =
        MustBind(store, "web1", kTokB, at + absl::Minutes(1), kTokA);
    CHECK(moved.report_seq == 0);
    CHECK(moved.last_report == ReportJson("web1", 2));
    CHECK(moved.last_report_at == std::optional<absl::Time>(at + absl::Seconds(1)));
    CHECK(moved.agent_version == "0.4.0");
    CHECK(MustSave(store, "web1", kTokB, 3, at + absl::Minutes(2)) == 1);
    CHECK(MustGet(store, "web1").last_report == ReportJson("web1", 3));
  }

  SECTION("list is ordered by host") {
    for (const char* host : {"web2", "db1", "Web3", "app.example.org", "web10"}) {
      MustBind(store, host, Token(static_cast<int>(std::string(host).size()) * 7 + host[0]));
    }
    std::vector<std::string> hosts;
    for (const core::HostAgentRecord& r : MustList(store)) {
      hosts.push_back(r.host);
    }
    CHECK(hosts == std::vector<std::string>{"Web3", "app.example.org", "db1", "web10", "web2"});
  }

  SECTION("the bindings are the records without their reports") {
    const absl::Time at = absl::FromUnixSeconds(1'790'000'000);
    MustBind(store, "web1", Token(1));
    MustBind(store, "db1", Token(2));
    MustSave(store, "web1", Token(1), 1, at);
    absl::StatusOr<std::vector<core::HostAgentRecord>> bindings = store->ListBindings();
    REQUIRE(bindings.ok());
    std::vector<core::HostAgentRecord> expected = MustList(store);
    REQUIRE_FALSE(expected[1].last_report.empty());
    for (core::HostAgentRecord& r : expected) {
      r.last_report.clear();
    }
    CHECK(*bindings == expected);
  }

  SECTION("a report of exactly the size bound is stored whole") {
    MustBind(store, "web1", kTokA);
    std::string big = "\"";
    big.append(core::kMaxHostAgentReportBytes - 2, 'x');
    big.push_back('"');
    REQUIRE(store->SaveReport("web1", kTokA, "0.4.0", big, T0()).ok());
    CHECK(MustGet(store, "web1").last_report == big);
  }

  SECTION("hostile shapes are InvalidArgument and store nothing") {
    const core::HostAgentRecord held = MustBind(store, "web1", kTokA);
    const std::vector<std::string> bad_hosts = {
        "",
        "-web",
        ".web",
        "_web",
        "web 1",
        "web/1",
        "web1\n",
        std::string("web\0one", 7),
        "h\xc3\xa4st",
        "' OR '1'='1",
        std::string(65, 'a'),
        "web1;DROP TABLE host_agents",
    };
    for (const std::string& host : bad_hosts) {
      INFO("host " << host);
      CHECK(absl::IsInvalidArgument(store->Bind(host, kTokB, T0()).status()));
      CHECK(absl::IsInvalidArgument(store->Get(host).status()));
      CHECK(absl::IsInvalidArgument(
          store->SaveReport(host, kTokA, "0.4.0", ReportJson("web1", 1), T0()).status()));
    }
    const std::vector<std::string> bad_tokens = {
        "",
        "tok_",
        "tok_00000000000000AA",
        "tok_00000000000000a",
        "tok_00000000000000aaa",
        "pulse_abc",
        "tok_00000000000000a'",
        std::string("tok_00000000000000a\0", 20),
    };
    for (const std::string& token : bad_tokens) {
      INFO("token " << token);
      CHECK(absl::IsInvalidArgument(store->Bind("web2", token, T0()).status()));
      CHECK(absl::IsInvalidArgument(store->Bind("web1", kTokB, T0(), token).status()));
      CHECK(absl::IsInvalidArgument(store->FindByToken(token).status()));
      CHECK(absl::IsInvalidArgument(
          store->SaveReport("web1", token, "0.4.0", ReportJson("web1", 1), T0()).status()));
    }
    const std::vector<std::string> bad_versions = {"", std::string(65, '1'), "0.4\xff",
                                                   std::string("0.4\0", 4)};
    for (const std::string& version : bad_versions) {
      INFO("version " << version);
      CHECK(absl::IsInvalidArgument(
          store->SaveReport("web1", kTokA, version, ReportJson("web1", 1), T0()).status()));
    }
    std::string too_big(core::kMaxHostAgentReportBytes + 1, ' ');
    const std::vector<std::string> bad_reports = {"", "{\"x\":\"\xc3\"}", std::string("{\0}", 3),
                                                  too_big};
    for (const std::string& report : bad_reports) {
      INFO("report of " << report.size() << " bytes");
      CHECK(absl::IsInvalidArgument(
          store->SaveReport("web1", kTokA, "0.4.0", report, T0()).status()));
    }
    // Times the store cannot keep exactly.
    CHECK(absl::IsInvalidArgument(store->Bind("web2", kTokB, absl::InfiniteFuture()).status()));
    CHECK(absl::IsInvalidArgument(
        store->SaveReport("web1", kTokA, "0.4.0", ReportJson("web1", 1), absl::InfinitePast())
            .status()));
    CHECK(MustList(store) == std::vector<core::HostAgentRecord>{held});
  }

  SECTION("two threads binding one host with different tokens: exactly one wins") {
    constexpr int kHosts = 20;
    constexpr int kContenders = 4;
    for (int h = 0; h < kHosts; ++h) {
      const std::string host = "race" + std::to_string(h);
      std::atomic<int> wins{0};
      std::atomic<int> refused{0};
      std::atomic<int> other{0};
      std::vector<std::string> winners(kContenders);
      std::vector<std::thread> threads;
      for (int c = 0; c < kContenders; ++c) {
        threads.emplace_back([&, c] {
          const std::string token = Token(h * kContenders + c);
          absl::StatusOr<core::HostAgentRecord> bound = store->Bind(host, token, T0());
          if (bound.ok()) {
            ++wins;
            winners[static_cast<std::size_t>(c)] = token;
          } else if (absl::IsFailedPrecondition(bound.status())) {
            ++refused;
          } else {
            ++other;
          }
        });
      }
      for (std::thread& t : threads) {
        t.join();
      }
      INFO(host);
      CHECK(wins.load() == 1);
      CHECK(refused.load() == kContenders - 1);
      CHECK(other.load() == 0);
      const core::HostAgentRecord stored = MustGet(store, host);
      CHECK(std::find(winners.begin(), winners.end(), stored.token_id) != winners.end());
    }
    CHECK(MustList(store).size() == kHosts);
  }

  SECTION("concurrent reports by the holder each get their own sequence number") {
    MustBind(store, "web1", kTokA);
    constexpr int kThreads = 6;
    constexpr int kPerThread = 10;
    std::vector<std::vector<std::uint64_t>> seen(kThreads);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          absl::StatusOr<std::uint64_t> seq = store->SaveReport(
              "web1", kTokA, "0.4.0", ReportJson("web1", t * 100 + i), T0() + absl::Seconds(i));
          if (seq.ok()) {
            seen[static_cast<std::size_t>(t)].push_back(*seq);
          } else {
            ++failures;
          }
        }
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
    CHECK(failures.load() == 0);
    std::set<std::uint64_t> all;
    for (const std::vector<std::uint64_t>& s : seen) {
      all.insert(s.begin(), s.end());
    }
    CHECK(all.size() == static_cast<std::size_t>(kThreads * kPerThread));
    CHECK(*all.begin() == 1);
    CHECK(*all.rbegin() == static_cast<std::uint64_t>(kThreads * kPerThread));
    CHECK(MustGet(store, "web1").report_seq == static_cast<std::uint64_t>(kThreads * kPerThread));
  }
}

}  // namespace pulse::testing
