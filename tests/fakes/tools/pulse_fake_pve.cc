// pulse-fake-pve: the loopback fake Proxmox VE API (tests/fakes, fake_pve_server.h) as a
// program, so a proxmox-ve source can be tried without a cluster (README, "A Proxmox source
// without a cluster"; docs/fleet.md). It serves the demo fleet's nodes, VMs and storage
// (--demo) or a scenario file (--scenario) on 127.0.0.1 over HTTPS with a certificate it makes,
// and writes into --dir everything a source needs:
//   cert.pem, cert.key  the certificate (and its key) it presents
//   token-secret        the API token's secret (mode 0600), for `fleet-credential set`
//   fleet.json          a --fleet sources file with one proxmox-ve source named "pve", pinned
//                       to the certificate's fingerprint
//   pid                 its process id
// Then it prints one JSON line (url, fingerprint, token_id, the files) and serves until SIGINT
// or SIGTERM. With --background it returns once it is serving, leaving the server running.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/testing/fake_pve_scenario.h"
#include "pulse/testing/fake_pve_server.h"

namespace {

struct Settings {
  bool demo = false;
  std::string scenario_file;
  std::string dir;
  int port = 0;
  std::string token_id = "pulse@pve!pulse";
  bool background = false;
};

// A token secret shaped as PVE makes them (a UUID), from the kernel's random source.
absl::StatusOr<std::string> NewSecret() {
  unsigned char bytes[16];
  std::ifstream random("/dev/urandom", std::ios::binary);
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof(bytes))) {
    return absl::UnavailableError("cannot read /dev/urandom");
  }
  std::string hex;
  for (const unsigned char b : bytes) {
    absl::StrAppendFormat(&hex, "%02x", b);
  }
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
                      hex.substr(16, 4), "-", hex.substr(20));
}

absl::Status WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  }
  ::fchmod(fd, mode);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok ? absl::OkStatus() : absl::DataLossError(absl::StrCat("cannot write ", path));
}

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out + "\"";
}

// Starts the fake and writes the files; the running server, or why it could not start.
absl::StatusOr<std::unique_ptr<pulse::testing::FakePveServer>> Start(const Settings& s,
                                                                     std::string* line) {
  if (::mkdir(s.dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(absl::StrCat("cannot create ", s.dir));
  }
  absl::StatusOr<std::string> secret = NewSecret();
  if (!secret.ok()) {
    return secret.status();
  }
  std::string scenario;
  if (s.demo) {
    absl::StatusOr<std::unique_ptr<pulse::adapters::agents::DemoFleet>> demo =
        pulse::adapters::agents::DemoFleet::OpenDefault();
    if (!demo.ok()) {
      return demo.status();
    }
    absl::StatusOr<std::string> built =
        pulse::testing::PveScenarioFromFleet(**demo, {{s.token_id, *secret}}, absl::Now());
    if (!built.ok()) {
      return built.status();
    }
    scenario = *std::move(built);
  } else {
    std::ifstream in(s.scenario_file);
    if (!in) {
      return absl::NotFoundError(absl::StrCat("cannot read ", s.scenario_file));
    }
    std::stringstream text;
    text << in.rdbuf();
    scenario = text.str();
  }
  absl::StatusOr<pulse::testing::TestCertificate> cert =
      pulse::testing::MakeTestCertificate(s.dir, "cert");
  if (!cert.ok()) {
    return cert.status();
  }
  absl::StatusOr<std::unique_ptr<pulse::testing::FakePveServer>> server =
      pulse::testing::FakePveServer::Start(scenario, *cert, s.port);
  if (!server.ok()) {
    return server.status();
  }
  const std::string url = (*server)->url();
  const std::string fleet =
      absl::StrCat(R"({"sources": [{"name": "pve", "kind": "proxmox-ve", "url": )", Quoted(url),
                   R"(, "token_id": )", Quoted(s.token_id), R"(, "fingerprint": )",
                   Quoted(cert->fingerprint), R"(, "allow_actions": true}]})", "\n");
  for (const auto& [file, text, mode] :
       {std::tuple<std::string, std::string, mode_t>{"token-secret", *secret + "\n", 0600},
        {"fleet.json", fleet, 0644},
        {"pid", absl::StrCat(::getpid(), "\n"), 0644}}) {
    if (absl::Status w = WriteFile(absl::StrCat(s.dir, "/", file), text, mode); !w.ok()) {
      return w;
    }
  }
  *line = absl::StrCat(R"({"url": )", Quoted(url), R"(, "fingerprint": )",
                       Quoted(cert->fingerprint), R"(, "token_id": )", Quoted(s.token_id),
                       R"(, "token_secret_file": )", Quoted(s.dir + "/token-secret"),
                       R"(, "fleet_file": )", Quoted(s.dir + "/fleet.json"), "}");
  return server;
}

int WaitForSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int received = 0;
  sigwait(&set, &received);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"A loopback fake Proxmox VE API serving the demo fleet or a scenario file."};
  app.add_flag("--demo", s.demo, "serve the shipped demo fleet's nodes, VMs and storage");
  app.add_option("--scenario", s.scenario_file, "serve this scenario file (fake_pve_server.h)");
  app.add_option("--dir", s.dir, "where the certificate, secret, fleet.json and pid go")
      ->required();
  app.add_option("--port", s.port, "port on 127.0.0.1 (default: any free one)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--token-id", s.token_id, "the API token id the fake accepts");
  app.add_flag("--background", s.background, "return once serving; the server keeps running");
  CLI11_PARSE(app, argc, argv);
  if (s.demo == !s.scenario_file.empty()) {
    std::cerr << "pulse-fake-pve: give exactly one of --demo and --scenario FILE\n";
    return 2;
  }
  // SIGINT and SIGTERM are waited for, not delivered (before any thread starts).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  if (!s.background) {
    std::string line;
    absl::StatusOr<std::unique_ptr<pulse::testing::FakePveServer>> server = Start(s, &line);
    if (!server.ok()) {
      std::cerr << "pulse-fake-pve: " << server.status().message() << "\n";
      return 1;
    }
    std::cout << line << std::endl;
    return WaitForSignal();
  }
  // Background: the child starts the server (no thread exists before the fork) and reports
  // through a pipe; the parent prints the line, or the error, and returns.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    std::cerr << "pulse-fake-pve: pipe failed\n";
    return 1;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "pulse-fake-pve: fork failed\n";
    return 1;
  }
  if (child == 0) {
    ::close(report[0]);
    ::setsid();
    std::string line;
    absl::StatusOr<std::unique_ptr<pulse::testing::FakePveServer>> server = Start(s, &line);
    const std::string message =
        server.ok() ? absl::StrCat("ok ", line) : absl::StrCat("error ", server.status().message());
    (void)!::write(report[1], message.data(), message.size());
    ::close(report[1]);
    if (!server.ok()) {
      return 1;
    }
    const int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, STDIN_FILENO);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(devnull, STDERR_FILENO);
    return WaitForSignal();
  }
  ::close(report[1]);
  std::string message;
  char buffer[512];
  ssize_t n = 0;
  while ((n = ::read(report[0], buffer, sizeof(buffer))) > 0) {
    message.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(report[0]);
  if (message.rfind("ok ", 0) != 0) {
    std::cerr << "pulse-fake-pve: " << (message.empty() ? "the server did not start" : message)
              << "\n";
    return 1;
  }
  std::cout << message.substr(3) << std::endl;
  return 0;
}
