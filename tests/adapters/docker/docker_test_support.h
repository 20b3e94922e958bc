// Catch2 glue for tests that need the private daemon (private_dockerd.h): PULSE_NEED_DOCKERD
// binds the process's shared daemon or ends the test case as skipped, with the reason on a
// line that ctest's SKIP_REGULAR_EXPRESSION (tests/adapters/docker/CMakeLists.txt) reads. With
// PULSE_REQUIRE_DOCKER=1 in the environment (CI) a daemon that cannot start fails instead.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/time/clock.h"
#include "private_dockerd.h"

#define PULSE_NEED_DOCKERD(var)                                             \
  std::string var##_why_not;                                                \
  ::pulse::docker::testing::PrivateDockerd* var =                           \
      ::pulse::docker::testing::PrivateDockerd::Shared(&var##_why_not);     \
  if (var == nullptr) {                                                     \
    const char* require = std::getenv("PULSE_REQUIRE_DOCKER");              \
    if (require != nullptr && std::strcmp(require, "1") == 0) {             \
      FAIL("no Docker daemon could start: " << var##_why_not);              \
    }                                                                       \
    std::printf("PULSE-DOCKER-SKIP: no Docker daemon can start here: %s\n", \
                var##_why_not.c_str());                                     \
    WARN("skipped: no Docker daemon can start here: " << var##_why_not);    \
    return;                                                                 \
  }                                                                         \
  static_assert(true)

namespace pulse::docker::testing {

// The container's logs once they hold at least `lines` lines (or after about 15 s, or on the
// first error): containers print on their own schedule, slower on a loaded machine.
inline absl::StatusOr<LogResult> LogsWhenAtLeast(const EngineClient& client, const std::string& id,
                                                 const LogQuery& query, std::size_t lines) {
  absl::StatusOr<LogResult> logs = client.Logs(id, query);
  for (int i = 0; i < 150 && logs.ok() && logs->lines.size() < lines; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
    logs = client.Logs(id, query);
  }
  return logs;
}

}  // namespace pulse::docker::testing
