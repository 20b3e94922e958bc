#include "fleet_opening.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pulse/adapters/agents/demo_fleet.h"
#include "pulse/adapters/agents/local_host_fleet.h"
#include "pulse/adapters/docker/docker_fleet.h"
#include "pulse/adapters/docker/docker_source.h"
#include "pulse/adapters/hostagent/agents_source.h"
#include "pulse/adapters/proxmox/pbs_fleet.h"
#include "pulse/adapters/proxmox/pbs_source.h"
#include "pulse/adapters/proxmox/pve_fleet.h"
#include "pulse/adapters/proxmox/pve_source.h"
#include "pulse/core/status_macros.h"

namespace pulse::server {
namespace {

namespace agents = adapters::agents;
namespace hostagent = adapters::hostagent;

// The demo fleet lands a change this long after dispatch (DemoFleet's default is 3 s, meant
// for watching it happen): an approve -> execute round trip then takes well under a second.
constexpr absl::Duration kDemoDispatchDelay = absl::Milliseconds(300);
// How long a dispatch waits for the demo agent's answer; only a dispatch_hangs fault makes it
// wait (DemoFleet's default is 10 s): the fault then costs an execute 2 s, not 10.
constexpr absl::Duration kDemoDispatchTimeout = absl::Seconds(2);
constexpr absl::Duration kDemoObservePoll = absl::Milliseconds(50);

// A source of kind "docker": its settings strictly (docker_source.h), then the Engine.
absl::StatusOr<std::unique_ptr<core::Fleet>> OpenDockerSource(const agents::FleetSourceSpec& spec) {
  PULSE_ASSIGN_OR_RETURN(docker::DockerFleetOptions options, docker::ParseDockerSource(spec.json));
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<docker::DockerFleet> fleet,
                         docker::DockerFleet::Open(std::move(options)));
  return std::unique_ptr<core::Fleet>(std::move(fleet));
}

// The token secret of a proxmox-ve or proxmox-backup source from the credential store;
// FailedPrecondition naming the command when none is stored (or there is no store).
absl::StatusOr<std::string> SourceSecret(const agents::FleetSourceSpec& spec,
                                         const FleetCredentialLookup& lookup) {
  const std::string hint = absl::StrCat("enter it with `pulse-server fleet-credential set ",
                                        "--data-dir DIR ", spec.name, "` (read from stdin)");
  if (!lookup) {
    return absl::FailedPreconditionError(absl::StrCat("the token secret of a ", spec.kind,
                                                      " source needs the data dir's credential "
                                                      "store; ",
                                                      hint));
  }
  absl::StatusOr<std::string> secret = lookup(spec.name);
  if (absl::IsNotFound(secret.status())) {
    return absl::FailedPreconditionError(absl::StrCat("no token secret is stored; ", hint));
  }
  if (!secret.ok()) {
    return absl::Status(secret.status().code(), absl::StrCat("the token secret cannot be read: ",
                                                             secret.status().message()));
  }
  return secret;
}

// A source of kind "proxmox-ve": its settings strictly (pve_source.h), its token secret from
// the credential store, then the cluster (/version and a first listing must answer).
absl::StatusOr<std::unique_ptr<core::Fleet>> OpenPveSource(const agents::FleetSourceSpec& spec,
                                                           const FleetCredentialLookup& lookup) {
  PULSE_ASSIGN_OR_RETURN(proxmox::PveFleetOptions options, proxmox::ParsePveSource(spec.json));
  PULSE_ASSIGN_OR_RETURN(options.client.token_secret, SourceSecret(spec, lookup));
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<proxmox::PveFleet> fleet,
                         proxmox::PveFleet::Open(std::move(options)));
  return std::unique_ptr<core::Fleet>(std::move(fleet));
}

// A source of kind "proxmox-backup": as proxmox-ve, over a Backup Server (pbs_source.h).
absl::StatusOr<std::unique_ptr<core::Fleet>> OpenPbsSource(const agents::FleetSourceSpec& spec,
                                                           const FleetCredentialLookup& lookup) {
  PULSE_ASSIGN_OR_RETURN(proxmox::PbsFleetOptions options, proxmox::ParsePbsSource(spec.json));
  options.source_name = spec.name;
  PULSE_ASSIGN_OR_RETURN(options.client.token_secret, SourceSecret(spec, lookup));
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<proxmox::PbsFleet> fleet,
                         proxmox::PbsFleet::Open(std::move(options)));
  return std::unique_ptr<core::Fleet>(std::move(fleet));
}

agents::DemoFleetOptions DemoOptions(const core::Clock& clock) {
  agents::DemoFleetOptions options;
  options.dispatch_delay = kDemoDispatchDelay;
  options.dispatch_timeout = kDemoDispatchTimeout;
  options.observe_poll_interval = kDemoObservePoll;
  options.clock = &clock;
  return options;
}

// The file's text when it is a small regular file that holds a sources document; nullopt
// otherwise (a demo fleet file, or one DemoFleet::Open will report on).
std::optional<std::string> SourcesDocumentAt(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > agents::kMaxFleetSourcesBytes) {
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    return std::nullopt;
  }
  if (!agents::IsFleetSourcesDocument(text)) {
    return std::nullopt;
  }
  return text;
}

// The spec of the host agents' source added to a fleet that lists none: named `agents`, or
// `host-agents` when that name is taken.
agents::FleetSourceSpec AgentsSpec(const std::vector<agents::FleetSourceSpec>& taken) {
  std::string name = "agents";
  if (std::any_of(taken.begin(), taken.end(),
                  [](const agents::FleetSourceSpec& s) { return s.name == "agents"; })) {
    name = "host-agents";
  }
  return {name, std::string(hostagent::kAgentsSourceKind),
          absl::StrCat(R"({"kind":"agents","name":")", name, R"("})")};
}

absl::StatusOr<OpenedFleet> OpenSources(const std::string& document, const std::string& where,
                                        const core::Clock& clock,
                                        const FleetCredentialLookup& credentials,
                                        hostagent::AgentHub* hub) {
  const auto named = [&where](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
  };
  absl::StatusOr<std::vector<agents::FleetSourceSpec>> specs = agents::ParseFleetSources(document);
  if (!specs.ok()) {
    return named(specs.status());
  }
  if (hub != nullptr && specs->size() < agents::kMaxFleetSources &&
      std::none_of(specs->begin(), specs->end(), [](const agents::FleetSourceSpec& s) {
        return s.kind == hostagent::kAgentsSourceKind;
      })) {
    specs->push_back(AgentsSpec(*specs));
  }
  agents::FleetSourceRegistry registry;
  PULSE_RETURN_IF_ERROR(RegisterServerFleetSources(registry, clock, credentials, hub));
  std::vector<agents::CompositeSource> sources;
  OpenedFleet out;
  for (const agents::FleetSourceSpec& spec : *specs) {
    absl::StatusOr<std::unique_ptr<core::Fleet>> opened = registry.Open(spec);
    if (!opened.ok()) {
      return named(opened.status());
    }
    // A demo source keeps its generated series for forecasts (docs/fleet.md, "Metric history").
    if (auto* demo = dynamic_cast<agents::DemoFleet*>(opened->get()); demo != nullptr) {
      out.source_histories[spec.name] = std::make_unique<agents::DemoFleetMetricsHistory>(*demo);
    }
    sources.push_back({spec.name, spec.kind, *std::move(opened)});
  }
  absl::StatusOr<std::unique_ptr<agents::CompositeFleet>> composite =
      agents::CompositeFleet::Create(std::move(sources));
  if (!composite.ok()) {
    return named(composite.status());
  }
  out.composite = composite->get();
  out.fleet = *std::move(composite);
  return out;
}

}  // namespace

absl::Status RegisterServerFleetSources(agents::FleetSourceRegistry& registry,
                                        const core::Clock& clock, FleetCredentialLookup credentials,
                                        hostagent::AgentHub* hub) {
  agents::BuiltinFleetSourceOptions builtin;
  builtin.demo = DemoOptions(clock);
  builtin.local.clock = &clock;
  PULSE_RETURN_IF_ERROR(agents::RegisterBuiltinFleetSources(registry, builtin));
  PULSE_RETURN_IF_ERROR(registry.Register("docker", OpenDockerSource));
  if (hub != nullptr) {
    PULSE_RETURN_IF_ERROR(hostagent::RegisterAgentsSource(registry, *hub));
  }
  PULSE_RETURN_IF_ERROR(
      registry.Register("proxmox-ve", [credentials](const agents::FleetSourceSpec& spec) {
        return OpenPveSource(spec, credentials);
      }));
  return registry.Register("proxmox-backup",
                           [lookup = std::move(credentials)](const agents::FleetSourceSpec& spec) {
                             return OpenPbsSource(spec, lookup);
                           });
}

// One fleet (demo, local, a demo file) and the host agents' source, as a composite.
absl::StatusOr<OpenedFleet> WithAgents(OpenedFleet single, std::string name, std::string kind,
                                       hostagent::AgentHub& hub) {
  OpenedFleet out;
  if (single.demo_history != nullptr) {
    out.source_histories[name] = std::move(single.demo_history);
  }
  std::vector<agents::CompositeSource> sources;
  sources.push_back({std::move(name), std::move(kind), std::move(single.fleet)});
  sources.push_back(
      {"agents", std::string(hostagent::kAgentsSourceKind),
       std::make_unique<hostagent::AgentsFleet>(hub, hostagent::AgentsFleetOptions{})});
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<agents::CompositeFleet> composite,
                         agents::CompositeFleet::Create(std::move(sources)));
  out.composite = composite.get();
  out.fleet = std::move(composite);
  return out;
}

absl::StatusOr<OpenedFleet> OpenConfiguredFleet(const ServerConfig& config,
                                                const core::Clock& clock,
                                                const FleetCredentialLookup& credentials,
                                                hostagent::AgentHub* hub) {
  OpenedFleet out;
  if (!config.fleet_sources.empty()) {
    return OpenSources(config.fleet_sources, "pulse.json \"fleet\"", clock, credentials, hub);
  }
  if (config.fleet == kFleetLocal) {
    agents::LocalHostFleetOptions options;
    options.clock = &clock;
    PULSE_ASSIGN_OR_RETURN(out.fleet, agents::LocalHostFleet::Open(options));
    if (hub != nullptr) {
      return WithAgents(std::move(out), "local", "local", *hub);
    }
    return out;
  }
  if (config.fleet != kFleetDemo) {
    if (std::optional<std::string> document = SourcesDocumentAt(config.fleet)) {
      return OpenSources(*document, absl::StrCat("--fleet ", config.fleet), clock, credentials,
                         hub);
    }
  }
  absl::StatusOr<std::unique_ptr<agents::DemoFleet>> demo =
      config.fleet == kFleetDemo ? agents::DemoFleet::OpenDefault(DemoOptions(clock))
                                 : agents::DemoFleet::Open(config.fleet, DemoOptions(clock));
  if (!demo.ok()) {
    return absl::Status(demo.status().code(),
                        absl::StrCat("--fleet ", config.fleet, ": ", demo.status().message()));
  }
  out.demo_history = std::make_unique<agents::DemoFleetMetricsHistory>(**demo);
  out.fleet = *std::move(demo);
  if (hub != nullptr) {
    return WithAgents(std::move(out), "demo", "demo", *hub);
  }
  return out;
}

}  // namespace pulse::server
