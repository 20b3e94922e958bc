// A far side for EngineClient and DockerFleet tests that needs no daemon: a unix socket in a
// temporary directory answering each request by the first of its path prefixes (in sorted order)
// that matches, one connection after another (tests/adapters/http_client/raw_server.h). For
// behaviour a real daemon will not show on cue: hostile answers, or one of its races held still.
#pragma once

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "pulse/adapters/docker/engine_client.h"
#include "pulse/core/string_view.h"
#include "pulse/testing/temp_dir.h"
#include "raw_server.h"

namespace pulse::docker::testing {

using ::pulse::testing::RawServer;
using ::pulse::testing::TempDir;

inline std::string Answer(int status, std::string_view body,
                          std::string_view type = "application/json") {
  return absl::StrCat("HTTP/1.1 ", status, " X\r\nContent-Type: ", core::ToAbsl(type),
                      "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n",
                      core::ToAbsl(body));
}

// A far side answering by path prefix ("/version", "/v1.41/containers/x/json").
class FakeEngine {
 public:
  // `events_pause`: how long an /events poll waits before its answer (a daemon's long poll;
  // without it a fleet's event follower would ask again at once, over and over).
  explicit FakeEngine(std::map<std::string, std::string> answers,
                      absl::Duration events_pause = absl::ZeroDuration())
      : answers_(std::move(answers)),
        server_(dir_.path() + "/docker.sock", [this, events_pause](int fd, RawServer& server) {
          const std::string head = RawServer::ReadHead(fd);
          const std::size_t start = head.find(' ') + 1;
          const std::string target = head.substr(start, head.find(' ', start) - start);
          if (target.find("/events?") != std::string::npos) {
            const absl::Time until = absl::Now() + events_pause;
            while (absl::Now() < until && !server.stopping()) {
              absl::SleepFor(absl::Milliseconds(10));
            }
          }
          for (const auto& [prefix, answer] : answers_) {
            if (target.rfind(prefix, 0) == 0) {
              RawServer::SendAll(fd, answer);
              return;
            }
          }
          RawServer::SendAll(fd, Answer(404, R"({"message":"page not found"})"));
        }) {}

  EngineOptions Options() const {
    EngineOptions options;
    options.endpoint = "unix://" + dir_.path() + "/docker.sock";
    options.call_timeout = absl::Seconds(5);
    return options;
  }

 private:
  TempDir dir_{"pulse-docker-test"};
  std::map<std::string, std::string> answers_;
  RawServer server_;
};

}  // namespace pulse::docker::testing
