// CreateHostBoundToken (src/token_admin.h), which `pulse-server token create --host` uses, on
// the real SQLite stores: the race the end-to-end tests cannot time, where another caller binds
// the host between the check and the binding. The refusal must not leave the new, unbound agent
// token behind.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "pulse/adapters/storage/sqlite_storage.h"
#include "pulse/core/ports/host_agent_store.h"
#include "pulse/testing/temp_dir.h"
#include "token_admin.h"

namespace pulse::server {
namespace {

// The real registry, except that the first Get lets `rival` bind the host just after the
// lookup, as another `token create --host` in another process could.
class RacingHostAgentStore final : public core::HostAgentStore {
 public:
  RacingHostAgentStore(core::HostAgentStore& real, std::string rival)
      : real_(real), rival_(std::move(rival)) {}

  absl::StatusOr<core::HostAgentRecord> Bind(
      std::string_view host, std::string_view token_id, absl::Time at,
      std::optional<std::string_view> replacing_token_id) override {
    return real_.Bind(host, token_id, at, replacing_token_id);
  }
  absl::StatusOr<core::HostAgentRecord> Get(std::string_view host) override {
    absl::StatusOr<core::HostAgentRecord> seen = real_.Get(host);
    if (!raced_) {
      raced_ = true;
      REQUIRE(real_.Bind(host, rival_, absl::Now()).ok());
    }
    return seen;
  }
  absl::StatusOr<core::HostAgentRecord> FindByToken(std::string_view token_id) override {
    return real_.FindByToken(token_id);
  }
  absl::StatusOr<std::uint64_t> SaveReport(std::string_view host, std::string_view token_id,
                                           std::string_view agent_version,
                                           std::string_view report_json, absl::Time at) override {
    return real_.SaveReport(host, token_id, agent_version, report_json, at);
  }
  absl::StatusOr<std::vector<core::HostAgentRecord>> List() override { return real_.List(); }

 private:
  core::HostAgentStore& real_;
  std::string rival_;
  bool raced_ = false;
};

core::NewApiToken AgentRequest(const std::string& name) {
  core::NewApiToken request;
  request.name = name;
  request.scopes = {"agent:report", "agent:exec"};
  request.kind = core::ApiTokenKind::kAgent;
  request.created_at = absl::Now();
  return request;
}

TEST_CASE(
    "a host bound by another caller between check and bind refuses and revokes the new "
    "token",
    "[server][tokens]") {
  testing::TempDir dir("pulse-token-binding");
  auto storage = adapters::storage::OpenSqliteStorage(dir.File("data"));
  REQUIRE(storage.ok());
  adapters::storage::SqliteStorage& s = **storage;
  absl::StatusOr<core::IssuedApiToken> rival = s.tokens->Create(AgentRequest("rival"));
  REQUIRE(rival.ok());
  RacingHostAgentStore racing(*s.host_agents, rival->info.id);

  const core::NewApiToken request = AgentRequest("late");
  REQUIRE(CheckAgentHostRequest(request, "web1", "--host").ok());
  absl::StatusOr<core::IssuedApiToken> late =
      CreateHostBoundToken(*s.tokens, racing, request, "web1", absl::Now());
  INFO(late.status().ToString());
  REQUIRE(absl::IsAlreadyExists(late.status()));
  CHECK(std::string(late.status().message()).find(rival->info.id) != std::string::npos);
  // Only the rival's token is left, and it holds the host.
  absl::StatusOr<std::vector<core::ApiTokenInfo>> live = s.tokens->List();
  REQUIRE(live.ok());
  REQUIRE(live->size() == 1);
  CHECK(live->front().id == rival->info.id);
  absl::StatusOr<core::HostAgentRecord> web1 = s.host_agents->Get("web1");
  REQUIRE(web1.ok());
  CHECK(web1->token_id == rival->info.id);
}

TEST_CASE("an unbound host is taken by the new token, a held one refused before any token",
          "[server][tokens]") {
  testing::TempDir dir("pulse-token-binding");
  auto storage = adapters::storage::OpenSqliteStorage(dir.File("data"));
  REQUIRE(storage.ok());
  adapters::storage::SqliteStorage& s = **storage;
  absl::StatusOr<core::IssuedApiToken> first =
      CreateHostBoundToken(*s.tokens, *s.host_agents, AgentRequest("first"), "web1", absl::Now());
  REQUIRE(first.ok());
  CHECK(s.host_agents->FindByToken(first->info.id)->host == "web1");
  absl::Status second =
      CreateHostBoundToken(*s.tokens, *s.host_agents, AgentRequest("second"), "web1", absl::Now())
          .status();
  CHECK(absl::IsAlreadyExists(second));
  CHECK(s.tokens->List()->size() == 1);
  // The checks CreateHostBoundToken relies on its callers for.
  core::NewApiToken human = AgentRequest("person");
  human.kind = core::ApiTokenKind::kHuman;
  CHECK(absl::IsInvalidArgument(CheckAgentHostRequest(human, "web1", "--host")));
  CHECK(absl::IsInvalidArgument(CheckAgentHostRequest(AgentRequest("x"), "-web1", "host")));
}

}  // namespace
}  // namespace pulse::server
