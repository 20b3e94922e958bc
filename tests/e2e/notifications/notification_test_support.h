// What the notification end-to-end tests share: the token scopes they mint, and the three
// calls every case makes against the real pulse-server (set the channels, read the settings,
// run Patrol to make findings).
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "pulse/core/json/json.h"
#include "server_harness.h"

namespace pulse::testing::e2e {

inline constexpr char kNotifyScopes[] = "settings:write,ai:execute,monitoring:read";

// POSTs a Patrol run and waits for it to finish; the ids of the warning+ findings it created.
inline std::vector<std::string> RunPatrol(int port, const std::string& token) {
  const Reply started = Send(port, "POST", "/api/ai/patrol/run", token);
  INFO(started.body);
  REQUIRE(started.status == 200);
  const std::string id = Str(Json(started.body), "run_id");
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    const Reply reply = Send(port, "GET", "/api/ai/patrol/runs/" + id, token);
    REQUIRE(reply.status == 200);
    rapidjson::Document run = Json(reply.body);
    if (Str(run, "status") != "running") {
      std::vector<std::string> out;
      for (const rapidjson::Value& v : run["new_finding_ids"].GetArray()) {
        out.emplace_back(core::StringViewOf(v));
      }
      return out;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  FAIL("the Patrol run did not finish within 30 s");
  return {};
}

inline Reply PutChannels(int port, const std::string& token, const std::string& channels_json) {
  return Send(port, "PUT", "/api/settings/notifications", token,
              absl::StrCat(R"({"channels":)", channels_json, "}"));
}

inline rapidjson::Document Settings(int port, const std::string& token) {
  const Reply reply = Send(port, "GET", "/api/settings/notifications", token);
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  return Json(reply.body);
}

}  // namespace pulse::testing::e2e
