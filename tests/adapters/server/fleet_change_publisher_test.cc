// FleetChangePublisher (server/fleet_change_publisher.h): the fleet's change feed reaches the
// agent event stream as fleet.change events, each once, gaps announced, hostile text escaped,
// and the thread stops promptly.
#include "pulse/adapters/server/fleet_change_publisher.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "pulse/core/json/json.h"
#include "pulse/testing/fake_clock.h"
#include "pulse/testing/fake_fleet.h"

namespace pulse::server {
namespace {

namespace http = adapters::http;

// Everything queued on `stream` so far (one Next; the heartbeat is longer than the test).
std::string Drain(http::SseStream& stream) {
  std::string out;
  CHECK(stream.Next(out) == http::SseStream::Pull::kWrite);
  return out;
}

std::size_t Count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

core::FleetChange Change(std::string resource_id, std::string kind, std::string detail = "",
                         std::string source = "") {
  core::FleetChange c;
  c.at = absl::FromUnixSeconds(1'800'000'000);
  c.resource_id = std::move(resource_id);
  c.kind = std::move(kind);
  c.detail = std::move(detail);
  c.source = std::move(source);
  return c;
}

TEST_CASE("fleet changes are published once each as fleet.change events",
          "[server][events][fleet]") {
  testing::FakeClock clock;
  AgentEventBus bus(clock, {absl::Hours(1), 64, nullptr});
  testing::FakeFleet fleet;
  FleetChangePublisher publisher(fleet, bus, absl::Hours(1));
  std::shared_ptr<http::SseStream> stream = bus.Subscribe(true);
  CHECK(publisher.PollOnce() == 0);  // a fleet without changes publishes nothing

  fleet.AddChange(Change("app-container:web", "die", "exit code 1", "docker1"));
  fleet.AddChange(Change("app-container:web", "oom"));
  CHECK(publisher.PollOnce() == 2);
  CHECK(publisher.PollOnce() == 0);  // the cursor moved on
  std::string frames = Drain(*stream);
  CHECK(Count(frames, "event: fleet.change\n") == 2);
  // Redacted subscribers see the same payload: a change carries no command.
  CHECK(frames.find(
            R"("payload":{"seq":1,"resourceId":"app-container:web","change":"die",)"
            R"("detail":"exit code 1","source":"docker1","occurredAt":"2027-01-15T08:00:00Z"})") !=
        std::string::npos);
  CHECK(frames.find(R"({"seq":2,"resourceId":"app-container:web","change":"oom","occurredAt")") !=
        std::string::npos);

  // Text from the source is escaped, never breaks the frame.
  fleet.AddChange(Change("app-container:web", "health_status", "un\"healthy\n\nevent: forged"));
  CHECK(publisher.PollOnce() == 1);
  frames = Drain(*stream);
  CHECK(frames.rfind("event: fleet.change\n", 0) == 0);
  CHECK(Count(frames, "\nevent: ") == 0);  // one frame: the text stayed inside its JSON
  const std::size_t data = frames.find("data: ");
  REQUIRE(data != std::string::npos);
  const std::string line = frames.substr(data + 6, frames.find('\n', data) - data - 6);
  absl::StatusOr<rapidjson::Document> doc = core::ParseJson(line);
  REQUIRE(doc.ok());
  CHECK(std::string((*doc)["payload"]["detail"].GetString()) == "un\"healthy\n\nevent: forged");
}

TEST_CASE("a gap in the fleet's change sequence is published as changes_lost",
          "[server][events][fleet]") {
  testing::FakeClock clock;
  AgentEventBus bus(clock, {absl::Hours(1), 64, nullptr});
  // A fleet whose bounded stream already dropped its first changes.
  testing::FakeFleet fleet;
  FleetChangePublisher publisher(fleet, bus, absl::Hours(1));
  std::shared_ptr<http::SseStream> stream = bus.Subscribe(false);
  for (int i = 0; i < 3; ++i) {
    fleet.AddChange(Change("vm:101", "restart"));
  }
  CHECK(publisher.PollOnce() == 3);
  (void)Drain(*stream);
  // Four more arrive, but the fleet keeps only the newest two before the next poll.
  for (int i = 0; i < 4; ++i) {
    fleet.AddChange(Change("vm:101", i < 3 ? "restart" : "die"));
  }
  fleet.KeepNewestChanges(2);
  CHECK(publisher.PollOnce() == 3);  // changes_lost, then seq 6 and 7
  const std::string frames = Drain(*stream);
  CHECK(frames.find(
            R"({"seq":5,"resourceId":"","change":"changes_lost","detail":"2 changes missed")") !=
        std::string::npos);
  CHECK(frames.find(R"("seq":6,)") != std::string::npos);
  CHECK(frames.find(R"("seq":7,"resourceId":"vm:101","change":"die")") != std::string::npos);
  CHECK(frames.find(R"("seq":4,)") == std::string::npos);
}

TEST_CASE("the change publisher's thread publishes within its interval and stops promptly",
          "[server][events][fleet]") {
  testing::FakeClock clock;
  AgentEventBus bus(clock, {absl::Hours(1), 64, nullptr});
  testing::FakeFleet fleet;
  FleetChangePublisher publisher(fleet, bus, absl::Milliseconds(20));
  publisher.Start();
  publisher.Start();  // a second start does nothing
  fleet.AddChange(Change("app-container:web", "die", "exit code 137"));
  for (int i = 0; i < 250 && bus.published() == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  CHECK(bus.published() == 1);
  const absl::Time before = absl::Now();
  publisher.Stop();
  publisher.Stop();
  CHECK(absl::Now() - before < absl::Seconds(2));
  fleet.AddChange(Change("app-container:web", "start"));
  absl::SleepFor(absl::Milliseconds(60));
  CHECK(bus.published() == 1);  // stopped: nothing more
}

}  // namespace
}  // namespace pulse::server
