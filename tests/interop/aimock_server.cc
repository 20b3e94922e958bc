#include "aimock_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "interop_tools.h"
#include "pulse/core/json/json.h"

namespace pulse::testing {
namespace {

constexpr std::string_view kAimockCli = "@copilotkit/aimock/dist/cli.js";
constexpr auto kStartupDeadline = std::chrono::seconds(15);
constexpr int kStartAttempts = 3;

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// A loopback port nobody listens on right now. Another process may take it before the mock
// binds it; Start notices (the mock exits with EADDRINUSE) and tries again.
absl::StatusOr<int> FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::InternalError("socket() failed");
  }
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof address;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  auto* generic = reinterpret_cast<sockaddr*>(&address);
  const bool ok = bind(fd, generic, sizeof address) == 0 && getsockname(fd, generic, &length) == 0;
  close(fd);
  if (!ok) {
    return absl::InternalError("cannot bind a loopback port");
  }
  return static_cast<int>(ntohs(address.sin_port));
}

bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  sockaddr_in address = Loopback(port);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return connected;
}

httplib::Headers AuthHeaders(const std::string& api_key) {
  return {{"Authorization", "Bearer " + api_key}};
}

// Waits until the mock on `port` answers /health. Unavailable when it exits first or the
// deadline passes; `exited` tells which.
absl::Status AwaitReady(ChildProcess& process, int port, const std::string& api_key, bool& exited) {
  exited = false;
  const auto deadline = std::chrono::steady_clock::now() + kStartupDeadline;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process.Running()) {
      exited = true;
      return absl::UnavailableError(absl::StrCat("aimock ", process.Stop(), " during startup"));
    }
    if (Accepts(port)) {
      httplib::Client client("127.0.0.1", port);
      client.set_connection_timeout(2, 0);
      client.set_read_timeout(2, 0);
      const httplib::Result health = client.Get("/health", AuthHeaders(api_key));
      // Whoever answered, it must be our child: a stranger that won the port race is not.
      if (health && health->status == 200 && process.Running()) {
        return absl::OkStatus();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::UnavailableError("aimock did not answer /health within 15 s");
}

}  // namespace

absl::StatusOr<std::unique_ptr<AimockServer>> AimockServer::Start(const AimockOptions& options) {
  const std::string node(kInteropNode);
  const std::string cli = InteropModulePath(kAimockCli);
  std::error_code ignored;
  if (!std::filesystem::exists(node, ignored) || !std::filesystem::exists(cli, ignored)) {
    return absl::FailedPreconditionError(absl::StrCat("aimock is not installed (", node, ", ", cli,
                                                      "): run cmake/install-node-tools.sh"));
  }
  const std::string log_path = std::string(kInteropLogDir) + "/" + options.log_name;
  absl::Status last = absl::UnavailableError("aimock was not started");
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    absl::StatusOr<int> port = FreeLoopbackPort();
    if (!port.ok()) {
      return port.status();
    }
    ChildProcessOptions child;
    // -h 127.0.0.1: loopback only. -c 20: responses arrive in several chunks, so the
    // providers' reassembly is exercised. --strict: no silent default answer.
    child.argv = {node, cli, "-h", "127.0.0.1", "-p", absl::StrCat(*port)};
    child.argv.insert(child.argv.end(), {"-f", options.fixture_file, "-c", "20", "--strict",
                                         "--validate-on-load", "--log-level", "info"});
    child.extra_env = {"AIMOCK_API_KEYS=" + options.api_key};
    child.log_path = log_path;
    absl::StatusOr<std::unique_ptr<ChildProcess>> process = ChildProcess::Start(child);
    if (!process.ok()) {
      return process.status();
    }
    bool exited = false;
    last = AwaitReady(**process, *port, options.api_key, exited);
    if (last.ok()) {
      return std::unique_ptr<AimockServer>(
          new AimockServer(*std::move(process), *port, options.api_key));
    }
    const std::string log = (*process)->LogTail();
    (*process)->Stop();
    last = absl::Status(last.code(), absl::StrCat(last.message(), "; log ", log_path, ":\n", log));
    if (!exited || !absl::StrContains(log, "EADDRINUSE")) {
      break;  // only a lost port race is worth another try
    }
  }
  return last;
}

std::string AimockServer::Url(std::string_view path_prefix) const {
  return absl::StrCat("http://127.0.0.1:", port_) + std::string(path_prefix);
}

absl::StatusOr<rapidjson::Document> AimockServer::Journal() const {
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(5, 0);
  const httplib::Result response = client.Get("/__aimock/journal", AuthHeaders(api_key_));
  if (!response || response->status != 200) {
    return absl::UnavailableError(absl::StrCat(
        "GET /__aimock/journal failed (",
        response ? absl::StrCat("status ", response->status) : httplib::to_string(response.error()),
        ")"));
  }
  return core::ParseJson(response->body, core::JsonLimits{.max_bytes = 16 << 20, .max_depth = 64});
}

}  // namespace pulse::testing
