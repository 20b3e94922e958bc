// The agent's state file: exactly once per (action id, attempt id) across restarts, durable,
// bounded, and never silently reset when it cannot be read back.
#include "pulse/adapters/hostagent/agent_state.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "pulse/testing/temp_dir.h"

namespace pulse::adapters::hostagent {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
}

std::unique_ptr<AgentStateFile> OpenState(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<AgentStateFile>> state = AgentStateFile::Open(dir);
  REQUIRE(state.ok());
  return std::move(*state);
}

TEST_CASE("an attempt is claimed once and its outcome survives a restart",
          "[adapters][hostagent][state]") {
  testing::TempDir dir("pulse-agent-state");
  const std::string state_dir = dir.File("state");
  {
    auto state = OpenState(state_dir);
    struct stat st {};
    REQUIRE(stat(state_dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    absl::StatusOr<std::optional<AttemptRecord>> claim = state->Begin("act_1", "act_1.dispatch.1");
    REQUIRE(claim.ok());
    CHECK_FALSE(claim->has_value());  // claimed: run it
    // The claim is on disk before the capability runs.
    CHECK(ReadFile(state->path()).find(R"("state":"started")") != std::string::npos);
    claim = state->Begin("act_1", "act_1.dispatch.1");
    REQUIRE(claim.ok());
    REQUIRE(claim->has_value());  // seen: do not run
    CHECK((*claim)->state == AttemptState::kStarted);
    REQUIRE(state
                ->Finish("act_1", "act_1.dispatch.1", core::ExecutionStatus::kSucceeded, "",
                         "systemctl restart nginx.service exited 0")
                .ok());
    // Finishing twice, or a key never claimed, is refused.
    CHECK(absl::IsNotFound(
        state->Finish("act_1", "act_1.dispatch.1", core::ExecutionStatus::kFailed, "x", "y")));
    CHECK(absl::IsNotFound(
        state->Finish("act_9", "act_9.dispatch.1", core::ExecutionStatus::kFailed, "x", "y")));
    // Another attempt of the same action is another key.
    claim = state->Begin("act_1", "act_1.dispatch.2");
    REQUIRE(claim.ok());
    CHECK_FALSE(claim->has_value());
  }
  auto reopened = OpenState(state_dir);
  CHECK(reopened->size() == 2);
  absl::StatusOr<std::optional<AttemptRecord>> again = reopened->Begin("act_1", "act_1.dispatch.1");
  REQUIRE(again.ok());
  REQUIRE(again->has_value());
  CHECK((*again)->state == AttemptState::kDone);
  CHECK((*again)->status == core::ExecutionStatus::kSucceeded);
  CHECK((*again)->summary == "systemctl restart nginx.service exited 0");
  // The agent died after claiming attempt 2: it is still started, and is never claimed again.
  again = reopened->Begin("act_1", "act_1.dispatch.2");
  REQUIRE(again.ok());
  REQUIRE(again->has_value());
  CHECK((*again)->state == AttemptState::kStarted);
  // No temp file is left behind.
  CHECK_FALSE(std::filesystem::exists(reopened->path() + ".tmp"));
}

TEST_CASE("two agents cannot share a state directory", "[adapters][hostagent][state]") {
  testing::TempDir dir("pulse-agent-state");
  auto first = OpenState(dir.path());
  absl::Status second = AgentStateFile::Open(dir.path()).status();
  CHECK(absl::IsFailedPrecondition(second));
  CHECK(std::string(second.message()).find("another pulse-agent") != std::string::npos);
  first.reset();
  CHECK(AgentStateFile::Open(dir.path()).ok());
}

TEST_CASE("the state file keeps the newest thousand attempts", "[adapters][hostagent][state]") {
  testing::TempDir dir("pulse-agent-state");
  {
    auto state = OpenState(dir.path());
    for (std::size_t i = 0; i < kMaxStateAttempts + 5; ++i) {
      const std::string action = "act_" + std::to_string(i);
      REQUIRE(state->Begin(action, action + ".dispatch.1").ok());
      REQUIRE(state
                  ->Finish(action, action + ".dispatch.1", core::ExecutionStatus::kSucceeded, "",
                           std::string(5000, 's'))
                  .ok());
    }
    CHECK(state->size() == kMaxStateAttempts);
  }
  auto state = OpenState(dir.path());
  CHECK(state->size() == kMaxStateAttempts);
  CHECK_FALSE(state->Find("act_4", "act_4.dispatch.1").has_value());
  REQUIRE(state->Find("act_5", "act_5.dispatch.1").has_value());
  // A summary over the bound was cut so the file reads back.
  CHECK(state->Find("act_5", "act_5.dispatch.1")->summary.size() == kMaxStateSummaryBytes);
}

TEST_CASE("a corrupt state file is refused at start and left as it was",
          "[adapters][hostagent][state]") {
  testing::TempDir dir("pulse-agent-state");
  const std::string path = dir.File("state.json");
  const std::string started = R"({"action_id":"a","attempt_id":"a.1","state":"started"})";
  const std::string many = [] {
    std::string items;
    for (std::size_t i = 0; i <= kMaxStateAttempts; ++i) {
      items += (i == 0 ? "" : ",") + std::string(R"({"action_id":"a)") + std::to_string(i) +
               R"(","attempt_id":"x","state":"started"})";
    }
    return R"({"version":1,"attempts":[)" + items + "]}";
  }();
  for (const std::string& text : std::vector<std::string>{
           "",
           "{",
           "garbage",
           R"({"version":1})",
           R"({"version":2,"attempts":[]})",
           R"({"version":1,"attempts":{}})",
           R"({"version":1,"attempts":[],"extra":1})",
           R"({"version":1,"attempts":[)" + started + "," + started + "]}",
           R"({"version":1,"attempts":[{"action_id":"a","attempt_id":"a.1","state":"running"}]})",
           R"({"version":1,"attempts":[{"action_id":"a","attempt_id":"a.1","state":"done"}]})",
           R"({"version":1,"attempts":[{"action_id":"a","attempt_id":"a.1","state":"started",)"
           R"("status":"succeeded"}]})",
           R"({"version":1,"attempts":[{"action_id":"a","attempt_id":"a.1","state":"done",)"
           R"("status":"exploded"}]})",
           R"({"version":1,"attempts":[{"action_id":")" + std::string(300, 'a') +
               R"(","attempt_id":"a.1","state":"started"}]})",
           R"({"version":1,"attempts":[{"action_id":"","attempt_id":"a.1","state":"started"}]})",
           many,
       }) {
    INFO(text.substr(0, 160));
    WriteFile(path, text);
    absl::Status refused = AgentStateFile::Open(dir.path()).status();
    CHECK(absl::IsFailedPrecondition(refused));
    CHECK(std::string(refused.message()).rfind("state_corrupt: " + path, 0) == 0);
    CHECK(ReadFile(path) == text);  // never reset
  }
  WriteFile(path, std::string(kMaxStateFileBytes + 1, ' '));
  CHECK(absl::IsFailedPrecondition(AgentStateFile::Open(dir.path()).status()));
  // A symbolic link in its place is not followed.
  std::filesystem::remove(path);
  WriteFile(dir.File("elsewhere.json"), R"({"version":1,"attempts":[]})");
  std::filesystem::create_symlink(dir.File("elsewhere.json"), path);
  CHECK_FALSE(AgentStateFile::Open(dir.path()).ok());
}

TEST_CASE("the state file's text round-trips", "[adapters][hostagent][state]") {
  std::deque<AttemptRecord> records;
  AttemptRecord done;
  done.action_id = "act_1";
  done.attempt_id = "act_1.dispatch.1";
  done.state = AttemptState::kDone;
  done.status = core::ExecutionStatus::kNotRun;
  done.reason_code = "agent_allowlist";
  done.summary = "nginx is not in allow.json \"services\"\n";
  records.push_back(done);
  AttemptRecord started;
  started.action_id = "act_2";
  started.attempt_id = "act_2.dispatch.1";
  records.push_back(started);
  absl::StatusOr<std::deque<AttemptRecord>> back = DecodeStateFile(EncodeStateFile(records));
  REQUIRE(back.ok());
  CHECK(*back == records);
}

}  // namespace
}  // namespace pulse::adapters::hostagent
