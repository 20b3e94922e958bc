// The private daemon fixture itself: it starts a real dockerd that answers, runs a container
// of the imported busybox image with no network, and leaves nothing behind when stopped.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "docker_test_support.h"

namespace pulse::docker::testing {
namespace {

TEST_CASE("the private daemon answers and runs the busybox image with no network",
          "[docker][fixture]") {
  PULSE_NEED_DOCKERD(daemon);
  std::printf("private dockerd answered /_ping %.2f s after start\n",
              absl::ToDoubleSeconds(daemon->startup_time()));
  CHECK(daemon->client().Ping().ok());
  CHECK(daemon->client().api() >= kMinApiVersion);
  auto id = daemon->Run(Command({"sh", "-c", "echo hi; exit 3"}, "fixture-echo"));
  REQUIRE(id.ok());
  ContainerDetails details;
  for (int i = 0; i < 100; ++i) {
    auto inspected = daemon->client().Inspect(*id);
    REQUIRE(inspected.ok());
    details = *inspected;
    if (details.state == "exited") {
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  CHECK(details.state == "exited");
  CHECK(details.exit_code == 3);
  CHECK(details.image == kImage);
  // No network: the container has only its loopback interface.
  auto net = daemon->Run(Command({"sh", "-c", "ls /sys/class/net"}));
  REQUIRE(net.ok());
  auto logs = LogsWhenAtLeast(daemon->client(), *net, LogQuery{}, 1);
  REQUIRE(logs.ok());
  REQUIRE(logs->lines.size() == 1);
  CHECK(logs->lines[0].text == "lo");
}

TEST_CASE("a stopped private daemon leaves no process, mount or directory behind",
          "[docker][fixture]") {
  PULSE_NEED_DOCKERD(shared);  // skips alike where no daemon can start
  auto daemon = PrivateDockerd::Start();
  REQUIRE(daemon.ok());
  const std::string dir = (*daemon)->dir();
  const std::string socket = (*daemon)->socket_path();
  std::ifstream pid_file(dir + "/dockerd.pid");
  pid_t pid = 0;
  REQUIRE(pid_file >> pid);
  REQUIRE((*daemon)->Run(Command({"sleep", "600"})).ok());
  daemon->reset();
  CHECK(::kill(pid, 0) != 0);
  CHECK_FALSE(std::filesystem::exists(dir));
  std::ifstream mounts("/proc/self/mounts");
  std::string all((std::istreambuf_iterator<char>(mounts)), std::istreambuf_iterator<char>());
  CHECK(all.find(dir) == std::string::npos);
  // And a client of the gone daemon is told clearly.
  EngineOptions options;
  options.endpoint = "unix://" + socket;
  auto client = EngineClient::Connect(options);
  REQUIRE_FALSE(client.ok());
  CHECK(EngineErrorKindOf(client.status()) == EngineErrorKind::kSocketMissing);
}

}  // namespace
}  // namespace pulse::docker::testing
