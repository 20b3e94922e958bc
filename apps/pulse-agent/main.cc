// pulse-agent: the host agent (docs/agent.md). Reports this host to a pulse-server and runs
// the commands the server's governance admitted and the agent's own allowlist and classifier
// accept. It dials the server; the server never dials it. Everything but the flags and the
// start-up checks lives in pulse::adapters_hostagent_agent; log lines go to stderr.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "fmt/core.h"
#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/adapters/hostagent/agent_allowlist.h"
#include "pulse/adapters/hostagent/agent_docker.h"
#include "pulse/adapters/hostagent/agent_executor.h"
#include "pulse/adapters/hostagent/agent_runtime.h"
#include "pulse/adapters/hostagent/agent_state.h"
#include "pulse/adapters/hostagent/wire.h"
#include "pulse/adapters/system/system_clock.h"

namespace {

namespace hostagent = pulse::adapters::hostagent;

// Exit statuses (docs/agent.md): 0 stopped by SIGTERM/SIGINT (or --once accepted), 1 a fatal
// runtime error (token or host refused, state file unusable, report not accepted), 2 usage.
constexpr int kExitFatal = 1;
constexpr int kExitUsage = 2;
constexpr std::size_t kMaxTokenFileBytes = 4096;
// The environment variable of the test hook (docs/agent.md, "Testing"): never a flag.
constexpr const char* kTestSystemctlEnv = "PULSE_AGENT_TEST_SYSTEMCTL";

// Set by the signal handler, polled by the runtime: the one flag a handler may touch.
std::atomic<bool> g_stop{false};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

extern "C" void OnStopSignal(int /*signal*/) { g_stop.store(true); }

struct Flags {
  std::string server;
  std::string token_file;
  std::string state_dir = "/var/lib/pulse-agent";
  std::string hostname;
  std::string allowlist = std::string(hostagent::kDefaultAllowlistPath);
  std::string interval = "30s";
  bool once = false;
  std::string ca_file;
  std::string pin_sha256;
  std::string log_level = "info";
  std::string docker_endpoint = std::string(hostagent::kDefaultDockerEndpoint);
};

// The token from `path`: refused (with the fix) when group or others may read or write it,
// like ssh refuses a private key. nullopt after printing why.
std::optional<std::string> ReadTokenFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    fmt::print(stderr, "pulse-agent: cannot read the token file {}: {}\n", path,
               std::strerror(errno));
    return std::nullopt;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    fmt::print(stderr, "pulse-agent: the token file {} is not a regular file\n", path);
    return std::nullopt;
  }
  if ((st.st_mode & 077) != 0) {
    close(fd);
    fmt::print(stderr,
               "pulse-agent: the token file {} is open to group or others (mode {:o}); "
               "run: chmod 600 {}\n",
               path, st.st_mode & 0777, path);
    return std::nullopt;
  }
  std::string token(kMaxTokenFileBytes + 1, '\0');
  const ssize_t n = read(fd, token.data(), token.size());
  close(fd);
  if (n < 0 || static_cast<std::size_t>(n) > kMaxTokenFileBytes) {
    fmt::print(stderr, "pulse-agent: the token file {} cannot be read or is over {} bytes\n", path,
               kMaxTokenFileBytes);
    return std::nullopt;
  }
  token.resize(static_cast<std::size_t>(n));
  while (!token.empty() && absl::ascii_isspace(static_cast<unsigned char>(token.back()))) {
    token.pop_back();
  }
  const bool one_line = !token.empty() && std::none_of(token.begin(), token.end(), [](char c) {
    return absl::ascii_iscntrl(static_cast<unsigned char>(c)) || c == ' ';
  });
  if (!one_line) {
    fmt::print(stderr, "pulse-agent: the token file {} must hold the token on one line\n", path);
    return std::nullopt;
  }
  return token;
}

// "30s", "2m", "1h" or plain seconds ("30"); nullopt outside 1 s .. 1 h.
std::optional<absl::Duration> ParseInterval(const std::string& text) {
  absl::Duration d;
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
  if (digits && text.size() <= 6) {
    d = absl::Seconds(std::stoi(text));
  } else if (!absl::ParseDuration(text, &d)) {
    return std::nullopt;
  }
  if (d < absl::Seconds(hostagent::kMinReportIntervalSeconds) ||
      d > absl::Seconds(hostagent::kMaxReportIntervalSeconds)) {
    return std::nullopt;
  }
  return d;
}

std::optional<hostagent::AgentLogLevel> ParseLogLevel(std::string_view text) {
  if (text == "debug") {
    return hostagent::AgentLogLevel::kDebug;
  }
  if (text == "info") {
    return hostagent::AgentLogLevel::kInfo;
  }
  if (text == "warning") {
    return hostagent::AgentLogLevel::kWarning;
  }
  if (text == "error") {
    return hostagent::AgentLogLevel::kError;
  }
  return std::nullopt;
}

std::string_view LevelName(hostagent::AgentLogLevel level) {
  switch (level) {
    case hostagent::AgentLogLevel::kDebug:
      return "debug";
    case hostagent::AgentLogLevel::kInfo:
      return "info";
    case hostagent::AgentLogLevel::kWarning:
      return "warning";
    case hostagent::AgentLogLevel::kError:
      return "error";
  }
  return "info";
}

std::string MachineHostName() {
  std::array<char, HOST_NAME_MAX + 1> name{};
  return gethostname(name.data(), name.size()) == 0 ? std::string(name.data()) : "localhost";
}

int Serve(const Flags& flags) {
  const std::optional<absl::Duration> interval = ParseInterval(flags.interval);
  if (!interval.has_value()) {
    fmt::print(stderr, "pulse-agent: --interval wants a duration from 1s to 1h, like 30s\n");
    return kExitUsage;
  }
  const std::optional<hostagent::AgentLogLevel> min_level = ParseLogLevel(flags.log_level);
  if (!min_level.has_value()) {
    fmt::print(stderr, "pulse-agent: --log-level is one of debug, info, warning, error\n");
    return kExitUsage;
  }
  if (!flags.hostname.empty() && !hostagent::IsAgentHostName(flags.hostname)) {
    fmt::print(stderr,
               "pulse-agent: --hostname must be a letter or digit, then letters, digits, '.', "
               "'_' or '-' (at most 64)\n");
    return kExitUsage;
  }
  const std::optional<std::string> token = ReadTokenFile(flags.token_file);
  if (!token.has_value()) {
    return kExitUsage;
  }
  absl::StatusOr<hostagent::AgentAllowlist> allowlist = hostagent::LoadAllowlist(flags.allowlist);
  if (!allowlist.ok()) {
    fmt::print(stderr, "pulse-agent: {}\n", std::string(allowlist.status().message()));
    return kExitUsage;
  }
  const hostagent::AgentLogFn log = [level = *min_level](hostagent::AgentLogLevel at,
                                                         std::string_view line) {
    if (at >= level) {
      fmt::print(stderr, "pulse-agent: {}: {}\n", LevelName(at), line);
    }
  };
  const std::string host =
      flags.hostname.empty() ? hostagent::SanitizeHostName(MachineHostName()) : flags.hostname;
  pulse::adapters::agents::LocalHostFleetOptions fleet_options =
      hostagent::FleetOptionsFor(*allowlist, host);
  // Local containers (docs/agent.md, "Local containers"): a bad endpoint is refused before
  // anything is opened; a daemon that is absent only leaves containers out of the reports.
  std::unique_ptr<hostagent::AgentDocker> docker;
  if (flags.docker_endpoint != hostagent::kDockerEndpointNone) {
    hostagent::AgentDockerOptions docker_options;
    docker_options.host = host;
    docker_options.endpoint = flags.docker_endpoint;
    docker_options.allow_actions = allowlist->docker;
    docker_options.allow_exec = allowlist->docker && allowlist->exec;
    docker_options.log = [log](bool up, std::string_view line) {
      log(up ? hostagent::AgentLogLevel::kInfo : hostagent::AgentLogLevel::kWarning, line);
    };
    absl::StatusOr<std::unique_ptr<hostagent::AgentDocker>> created =
        hostagent::AgentDocker::Create(std::move(docker_options));
    if (!created.ok()) {
      fmt::print(stderr, "pulse-agent: {}\n", std::string(created.status().message()));
      return kExitUsage;
    }
    docker = *std::move(created);
  }
  if (const char* standin = std::getenv(kTestSystemctlEnv); standin != nullptr && *standin) {
    fleet_options.systemctl_path = standin;
    log(hostagent::AgentLogLevel::kWarning,
        fmt::format("{} is set: units are managed through {} (a test hook, docs/agent.md)",
                    kTestSystemctlEnv, standin));
  }
  absl::StatusOr<std::unique_ptr<hostagent::AgentStateFile>> state =
      hostagent::AgentStateFile::Open(flags.state_dir);
  if (!state.ok()) {
    fmt::print(stderr, "pulse-agent: {}\n", std::string(state.status().message()));
    return kExitFatal;
  }
  absl::StatusOr<std::unique_ptr<pulse::adapters::agents::LocalHostFleet>> fleet =
      pulse::adapters::agents::LocalHostFleet::Open(fleet_options);
  if (!fleet.ok()) {
    fmt::print(stderr, "pulse-agent: this host cannot be probed: {}\n",
               std::string(fleet.status().message()));
    return kExitFatal;
  }
  pulse::adapters::system::SystemClock clock;
  hostagent::AgentExecutor executor(host, **fleet, *allowlist, **state, clock, docker.get());
  hostagent::AgentRuntimeOptions options;
  options.server_url = flags.server;
  options.token = *token;
  options.agent_version = PULSE_CORE_VERSION_STRING;
  options.interval = *interval;
  options.ca_file = flags.ca_file;
  options.pin_sha256 = flags.pin_sha256;
  options.log = log;
  absl::StatusOr<std::unique_ptr<hostagent::AgentRuntime>> runtime =
      hostagent::AgentRuntime::Open(options, **fleet, executor, clock);
  if (!runtime.ok()) {
    fmt::print(stderr, "pulse-agent: {}\n", std::string(runtime.status().message()));
    return kExitUsage;
  }
  if (flags.once) {
    const absl::Status posted = (*runtime)->PostReport();
    if (!posted.ok()) {
      fmt::print(stderr, "pulse-agent: the report was not accepted: {}\n",
                 std::string(posted.message()));
      return kExitFatal;
    }
    fmt::print(stderr, "pulse-agent: {} reported to {}\n", host, flags.server);
    return 0;
  }
  log(hostagent::AgentLogLevel::kInfo, fmt::format("pulse-agent {} for {} dialling {}",
                                                   PULSE_CORE_VERSION_STRING, host, flags.server));
  const absl::Status ended = (*runtime)->Run(g_stop);
  if (!ended.ok()) {
    fmt::print(stderr, "pulse-agent: stopping: {}\n", std::string(ended.message()));
    return kExitFatal;
  }
  log(hostagent::AgentLogLevel::kInfo, "stopped");
  return 0;
}

int Run(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  struct sigaction stop {};
  stop.sa_handler = OnStopSignal;
  sigemptyset(&stop.sa_mask);
  sigaction(SIGTERM, &stop, nullptr);
  sigaction(SIGINT, &stop, nullptr);

  CLI::App app{
      "pulse-agent: reports this host to a pulse-server and runs the commands the server's "
      "governance admitted, within this host's own allowlist (/etc/pulse-agent/allow.json). "
      "It dials the server; the server never dials it."};
  app.set_version_flag("--version", std::string("pulse-agent ") + PULSE_CORE_VERSION_STRING);
  app.footer(
      "Exit status: 0 when stopped by SIGTERM or SIGINT (or --once accepted), 1 for a fatal "
      "error (token or host refused: 401/403, state file unusable), 2 for a usage error "
      "(flags, a token file open to group or others, a bad allow.json).\n"
      "Example (the token is minted on the server's host, copied here with mode 600):\n"
      "  pulse-server token create --data-dir ./pulse-data --name web1 --kind agent \\\n"
      "      --scopes agent:report,agent:exec --host web1\n"
      "  (umask 077; echo '<the printed token>' > /etc/pulse-agent/token)\n"
      "  pulse-agent --server http://pulse.lan:7655 --token-file /etc/pulse-agent/token "
      "--once\n"
      "  pulse-agent --server http://pulse.lan:7655 --token-file /etc/pulse-agent/token");
  Flags flags;
  app.add_option("--server", flags.server, "pulse-server base URL (http or https)")->required();
  app.add_option("--token-file", flags.token_file,
                 "File holding the agent token on one line (mode 600: not readable by group or "
                 "others)")
      ->required();
  app.add_option("--state-dir", flags.state_dir,
                 "Directory of the agent's state file (which actions it already ran)")
      ->capture_default_str();
  app.add_option("--hostname", flags.hostname,
                 "Host name to report as (default: this machine's, sanitized); for containers "
                 "and tests");
  app.add_option("--allowlist", flags.allowlist,
                 "allow.json: the capabilities and services the agent acts on (missing: none)")
      ->capture_default_str();
  app.add_option("--interval", flags.interval, "Time between reports (1s..1h)")
      ->capture_default_str();
  app.add_flag("--once", flags.once, "Post one report and exit (0 when the server accepted it)");
  CLI::Option* ca = app.add_option("--ca-file", flags.ca_file,
                                   "PEM CA file the server's certificate must chain to");
  CLI::Option* pin = app.add_option("--pin-sha256", flags.pin_sha256,
                                    "SHA-256 fingerprint the server's certificate must have");
  ca->excludes(pin);
  pin->excludes(ca);
  app.add_option("--log-level", flags.log_level, "debug, info, warning or error")
      ->capture_default_str();
  app.add_option("--docker-endpoint", flags.docker_endpoint,
                 "Local Docker daemon whose containers are reported (unix:///path), or none; "
                 "acted on only with \"docker\": true in allow.json")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  return Serve(flags);
}

}  // namespace

// Everything the process does runs inside Run; an exception that escapes it (a bug, or
// std::bad_alloc) is reported in one line with exit status 70 (EX_SOFTWARE).
int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pulse-agent: fatal: %s\n", e.what());
  } catch (...) {
    std::fputs("pulse-agent: fatal: unknown exception\n", stderr);
  }
  return 70;
}
