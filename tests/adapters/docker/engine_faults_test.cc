// EngineClient against hostile or broken far sides on a real unix socket (a raw server stands
// in where a real daemon will not misbehave on cue): too old an API, 500s, 404s, malformed and
// oversized answers, a broken log frame, silence, and a socket that is missing, stale or not
// ours. Every one is a distinct, clear error kind.
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fake_engine.h"
#include "pulse/adapters/docker/engine_client.h"
#include "pulse/core/string_view.h"
#include "raw_server.h"

namespace pulse::docker {
namespace {

using pulse::docker::testing::Answer;
using pulse::docker::testing::FakeEngine;
using pulse::testing::RawServer;
using pulse::testing::TempDir;

constexpr char kVersion141[] =
    R"({"Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12"})";

EngineErrorKind KindOf(const absl::Status& status) {
  REQUIRE_FALSE(status.ok());
  const auto kind = EngineErrorKindOf(status);
  REQUIRE(kind.has_value());
  return *kind;
}

TEST_CASE("a daemon older than API 1.41 is refused with the fix named", "[docker][faults]") {
  FakeEngine engine({{"/version", Answer(200, R"({"Version":"19.03","ApiVersion":"1.40"})")}});
  auto client = EngineClient::Connect(engine.Options());
  CHECK(KindOf(client.status()) == EngineErrorKind::kApiTooOld);
  CHECK_THAT(std::string(client.status().message()),
             Catch::Contains("1.40") && Catch::Contains("20.10"));
}

TEST_CASE("a daemon that dropped every API this client speaks is refused", "[docker][faults]") {
  FakeEngine engine(
      {{"/version",
        Answer(200, R"({"Version":"99","ApiVersion":"1.99","MinAPIVersion":"1.90"})")}});
  CHECK(KindOf(EngineClient::Connect(engine.Options()).status()) == EngineErrorKind::kApiTooOld);
}

TEST_CASE("a newer daemon is spoken to at the newest version this client knows",
          "[docker][faults]") {
  FakeEngine engine(
      {{"/version", Answer(200, R"({"Version":"27","ApiVersion":"1.51","MinAPIVersion":"1.24"})")},
       {"/v1.47/_ping", Answer(200, "OK", "text/plain")}});
  auto client = EngineClient::Connect(engine.Options());
  REQUIRE(client.ok());
  CHECK((*client)->api() == kMaxApiVersion);
  CHECK((*client)->Ping().ok());
}

TEST_CASE("a 500 from the daemon, a 404 and a 409 are distinct errors with its message",
          "[docker][faults]") {
  FakeEngine engine({{"/version", Answer(200, kVersion141)},
                     {"/v1.41/containers/json", Answer(500, R"({"message":"disk on fire"})")},
                     {"/v1.41/containers/gone/json", Answer(404, R"({"message":"No such"})")},
                     {"/v1.41/containers/busy/start", Answer(409, R"({"message":"paused"})")}});
  auto client = EngineClient::Connect(engine.Options());
  REQUIRE(client.ok());
  auto list = (*client)->ListContainers();
  CHECK(KindOf(list.status()) == EngineErrorKind::kDaemonError);
  CHECK_THAT(std::string(list.status().message()), Catch::Contains("disk on fire"));
  CHECK(KindOf((*client)->Inspect("gone").status()) == EngineErrorKind::kNotFound);
  CHECK(KindOf((*client)->Start("busy", absl::Seconds(5)).status()) == EngineErrorKind::kConflict);
}

TEST_CASE("malformed and oversized answers are errors, never crashes", "[docker][faults]") {
  FakeEngine engine(
      {{"/version", Answer(200, kVersion141)},
       {"/v1.41/containers/json", Answer(200, R"([{"Id":42}])")},
       {"/v1.41/containers/deep/json", Answer(200, std::string(5000, '['))},
       {"/v1.41/containers/big/stats", Answer(200, "[\"" + std::string(70000, 'x') + "\"]")},
       {"/v1.41/containers/bin/json", Answer(200, std::string("\x00\xff\xfe", 3))}});
  EngineOptions options = engine.Options();
  options.max_answer_bytes = 64 * 1024;
  auto client = EngineClient::Connect(options);
  REQUIRE(client.ok());
  CHECK(KindOf((*client)->ListContainers().status()) == EngineErrorKind::kMalformed);
  CHECK(KindOf((*client)->Inspect("deep").status()) == EngineErrorKind::kMalformed);
  CHECK(KindOf((*client)->Stats("big").status()) == EngineErrorKind::kMalformed);
  CHECK(KindOf((*client)->Inspect("bin").status()) == EngineErrorKind::kMalformed);
}

TEST_CASE("a log stream with a broken frame is a malformed answer", "[docker][faults]") {
  const std::string inspect = R"({"Id":"c1","State":{"Status":"running"},"Config":{"Tty":false}})";
  std::string logs("\x01\0\0\0\0\0\0\x03ok\n", 11);
  logs += std::string("\x09\0\0\0\0\0\0\x02x\n", 10);
  FakeEngine engine(
      {{"/version", Answer(200, kVersion141)},
       {"/v1.41/containers/c1/json", Answer(200, inspect)},
       {"/v1.41/containers/c1/logs", Answer(200, logs, "application/vnd.docker.raw-stream")}});
  auto client = EngineClient::Connect(engine.Options());
  REQUIRE(client.ok());
  auto result = (*client)->Logs("c1", LogQuery{});
  CHECK(KindOf(result.status()) == EngineErrorKind::kMalformed);
  CHECK_THAT(std::string(result.status().message()), Catch::Contains("broken"));
}

TEST_CASE("a daemon that never answers is a timeout", "[docker][faults]") {
  TempDir dir;
  RawServer server(dir.path() + "/docker.sock", [](int fd, RawServer& self) {
    RawServer::ReadHead(fd);
    self.Idle();
  });
  EngineOptions options;
  options.endpoint = "unix://" + dir.path() + "/docker.sock";
  options.call_timeout = absl::Milliseconds(300);
  auto client = EngineClient::Connect(options);
  CHECK(KindOf(client.status()) == EngineErrorKind::kTimeout);
  server.Stop();
}

TEST_CASE("a missing socket says Docker is not running", "[docker][faults]") {
  TempDir dir;
  EngineOptions options;
  options.endpoint = "unix://" + dir.path() + "/nothing.sock";
  auto client = EngineClient::Connect(options);
  CHECK(KindOf(client.status()) == EngineErrorKind::kSocketMissing);
  CHECK(client.status().code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(client.status().message()), Catch::Contains("nothing.sock"));
}

TEST_CASE("a stale socket nobody listens on is unreachable, not missing", "[docker][faults]") {
  TempDir dir;
  const std::string path = dir.path() + "/stale.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  ::close(fd);
  EngineOptions options;
  options.endpoint = "unix://" + path;
  CHECK(KindOf(EngineClient::Connect(options).status()) == EngineErrorKind::kUnreachable);
}

TEST_CASE("a socket this user may not open names the docker group fix", "[docker][faults]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to try the socket as another user");
    return;
  }
  // Fork first, while this process has one thread, and only then start the fake engine: a
  // child forked after the engine's threads start may find a lock it needs (the allocator's,
  // ASan's) held forever by a thread that does not exist in it, and under ASan it did (CI hung).
  int to_child[2];
  int from_child[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(from_child) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    EngineOptions options;
    options.endpoint.clear();  // the parent sends the fake engine's
    char buffer[512];
    ssize_t n = 0;
    while ((n = ::read(to_child[0], buffer, sizeof(buffer))) > 0) {
      options.endpoint.append(buffer, static_cast<std::size_t>(n));
    }
    std::string report = "setuid failed";
    if (::setgid(65534) == 0 && ::setuid(65534) == 0) {
      auto client = EngineClient::Connect(options);
      report =
          client.ok()
              ? "connected"
              : absl::StrCat(core::ToAbsl(EngineErrorKindName(*EngineErrorKindOf(client.status()))),
                             "|", client.status().message());
    }
    (void)!::write(from_child[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  FakeEngine engine({{"/version", Answer(200, kVersion141)}});
  // The socket's directory is mode 0700 (mkdtemp): user nobody cannot reach it.
  const std::string endpoint = engine.Options().endpoint;
  REQUIRE(::write(to_child[1], endpoint.data(), endpoint.size()) ==
          static_cast<ssize_t>(endpoint.size()));
  ::close(to_child[1]);
  std::string report;
  char buffer[512];
  for (;;) {
    pollfd entry{from_child[0], POLLIN, 0};
    if (::poll(&entry, 1, 60'000) != 1) {
      ::kill(pid, SIGKILL);  // a child stuck for a minute: fail, never hang
      break;
    }
    const ssize_t n = ::read(from_child[0], buffer, sizeof(buffer));
    if (n <= 0) {
      break;
    }
    report.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(from_child[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK_THAT(report, Catch::StartsWith("permission_denied|") && Catch::Contains("docker") &&
                         Catch::Contains("usermod"));
}

TEST_CASE("endpoints and container ids are validated before anything is sent", "[docker][faults]") {
  for (const char* endpoint : {"", "http://x", "unix://relative.sock", "unix://", "tcp://"}) {
    CAPTURE(endpoint);
    EngineOptions options;
    options.endpoint = endpoint;
    CHECK(KindOf(EngineClient::Connect(options).status()) == EngineErrorKind::kInvalidArgument);
  }
  for (const char* id : {"", "../../version", "a/b", "a?x=1", "-rf", "a b", "é"}) {
    CAPTURE(id);
    CHECK(KindOf(ValidateContainerRef(id)) == EngineErrorKind::kInvalidArgument);
  }
  CHECK(ValidateContainerRef("web_1.2-x").ok());
  CHECK(ValidateContainerRef(std::string(64, 'a')).ok());
  CHECK_FALSE(ValidateContainerRef(std::string(129, 'a')).ok());
}

}  // namespace
}  // namespace pulse::docker

namespace pulse::docker {
namespace {

// An exec start answer: the hijacked stream's head, then `frames` raw, then the connection closes.
std::string ExecStream(std::string_view frames) {
  return absl::StrCat("HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n",
                      core::ToAbsl(frames));
}

std::string Frame(char stream, std::string_view payload) {
  std::string out = {stream, 0, 0, 0};
  const auto n = static_cast<std::uint32_t>(payload.size());
  out += static_cast<char>(n >> 24);
  out += static_cast<char>((n >> 16) & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  out += static_cast<char>(n & 0xff);
  return out + std::string(payload);
}

absl::StatusOr<ExecResult> ExecAgainst(const std::string& create, const std::string& start,
                                       const std::string& inspect) {
  FakeEngine engine({{"/version", Answer(200, kVersion141)},
                     {"/v1.41/containers/box/exec", create},
                     {"/v1.41/exec/e1/start", start},
                     {"/v1.41/exec/e1/json", inspect}});
  auto client = EngineClient::Connect(engine.Options());
  REQUIRE(client.ok());
  ExecRequest request;
  request.argv = {"uname", "-a"};
  request.deadline = absl::Seconds(5);
  request.max_output_bytes = 16;
  return (*client)->Exec("box", request);
}

TEST_CASE("an exec stream is demultiplexed and bounded, its exit code read back",
          "[docker][faults]") {
  const std::string created = Answer(201, R"({"Id":"e1"})");
  const std::string done = Answer(200, R"({"Running":false,"ExitCode":3})");
  auto r = ExecAgainst(created, ExecStream(Frame(1, "out\n") + Frame(2, "err\n")), done);
  REQUIRE(r.ok());
  CHECK(r->stdout_text == "out\n");
  CHECK(r->stderr_text == "err\n");
  CHECK(r->exit_code == 3);
  CHECK_FALSE(r->truncated);
  // Past the bound nothing more is kept, and the result says so.
  r = ExecAgainst(created, ExecStream(Frame(1, std::string(100, 'x'))), done);
  REQUIRE(r.ok());
  CHECK(r->stdout_text == std::string(16, 'x'));
  CHECK(r->truncated);
}

TEST_CASE("hostile exec answers are malformed, never crashes", "[docker][faults]") {
  const std::string created = Answer(201, R"({"Id":"e1"})");
  const std::string done = Answer(200, R"({"Running":false,"ExitCode":0})");
  // An unknown stream byte, non-zero padding, a stream cut inside a frame, a huge announced
  // length that never arrives.
  CHECK(KindOf(ExecAgainst(created, ExecStream(Frame(5, "x")), done).status()) ==
        EngineErrorKind::kMalformed);
  CHECK(KindOf(
            ExecAgainst(created, ExecStream(std::string("\1\0\1\0\0\0\0\1x", 9)), done).status()) ==
        EngineErrorKind::kMalformed);
  CHECK(KindOf(ExecAgainst(created, ExecStream(Frame(1, "abc").substr(0, 10)), done).status()) ==
        EngineErrorKind::kMalformed);
  CHECK(KindOf(ExecAgainst(created, ExecStream(std::string("\2\0\0\0\xff\xff\xff\xff", 8)), done)
                   .status()) == EngineErrorKind::kMalformed);
  // A create answer without a usable Id.
  for (const char* body : {R"({})", R"({"Id":"../../containers"})", R"({"Id":7})", "not json"}) {
    CHECK(KindOf(ExecAgainst(Answer(201, body), ExecStream(""), done).status()) ==
          EngineErrorKind::kMalformed);
  }
  // An inspect answer without a valid exit code.
  for (const char* body : {R"({"Running":false,"ExitCode":"0"})", R"({"ExitCode":0})",
                           R"({"Running":false,"ExitCode":99999})", "[]"}) {
    CHECK(KindOf(ExecAgainst(created, ExecStream(Frame(1, "ok")), Answer(200, body)).status()) ==
          EngineErrorKind::kMalformed);
  }
  // The daemon refuses: a stopped container (409) and a 500 keep their kinds.
  CHECK(KindOf(ExecAgainst(Answer(409, R"({"message":"Container box is not running"})"),
                           ExecStream(""), done)
                   .status()) == EngineErrorKind::kConflict);
  CHECK(KindOf(ExecAgainst(created, Answer(500, R"({"message":"boom"})"), done).status()) ==
        EngineErrorKind::kDaemonError);
}

}  // namespace
}  // namespace pulse::docker
