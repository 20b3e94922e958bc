#include "pulse/adapters/hostagent/agent_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "pulse/adapters/hostagent/agent_docker.h"
#include "pulse/core/json/utf8.h"

namespace pulse::adapters::hostagent {
namespace {

constexpr std::size_t kMaxRevisionBytes = 256;

std::string Clean(std::string_view text, std::size_t max = kMaxTextBytes) {
  return core::BoundedCleanText(text, max);
}

// At most kMaxMapEntries entries with clean, bounded keys and values.
std::map<std::string, std::string> CleanMap(const std::map<std::string, std::string>& in) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : in) {
    if (out.size() == kMaxMapEntries) {
      break;
    }
    const std::string k = Clean(key, kMaxKeyBytes);
    if (!k.empty()) {
      out.emplace(k, Clean(value));
    }
  }
  return out;
}

void AddMetric(Report& report, const core::FleetStatus& status, const std::string& fact,
               const std::string& metric, const std::string& unit) {
  const auto it = status.facts.find(fact);
  double value = 0;
  if (it != status.facts.end() && absl::SimpleAtod(it->second, &value) &&
      report.metrics.size() < kMaxReportMetrics) {
    report.metrics.push_back({status.resource_id, metric, unit, value});
  }
}

// The local Docker daemon's resources and relationships in the host's namespace
// (agent_docker.h), appended to `topology`; `docker_ids` gets each mapped id's Docker id.
// Returns the fleet they came from, or null when a daemon that does not answer added nothing:
// the host's report then goes out without containers.
docker::DockerFleet* AddDocker(AgentDocker& link, core::FleetTopology& topology,
                               std::map<std::string, std::string>& docker_ids) {
  // The report's bound is shared with the host's own resources.
  if (topology.resources.size() >= kMaxReportResources) {
    return nullptr;
  }
  docker::DockerFleet* fleet = link.Fleet();
  if (fleet == nullptr) {
    return nullptr;
  }
  core::FleetTopologyQuery whole;
  whole.max_resources =
      std::min(core::kFleetMaxResults, kMaxReportResources - topology.resources.size());
  absl::StatusOr<core::FleetTopology> docker = fleet->GetTopology(whole);
  if (!docker.ok()) {
    link.MarkDown(docker.status());
    return nullptr;
  }
  link.MarkUp();
  const std::string& host = link.host();
  const std::string host_node = "node:" + host;
  for (core::FleetResource& r : docker->resources) {
    std::string id = DockerIdToHost(r.id, host);
    if (id.empty()) {
      continue;  // too long a name for the host's namespace: left out, not the report
    }
    docker_ids.emplace(id, r.id);
    if (r.type == "node") {
      // The engine is not the host's node but runs on it.
      r.type = std::string(kDockerEngineType);
      r.parent_id = host_node;
      topology.relationships.push_back({id, host_node, "runs_on"});
    } else if (!r.parent_id.empty()) {
      r.parent_id = DockerIdToHost(r.parent_id, host);
    }
    r.id = std::move(id);
    topology.resources.push_back(std::move(r));
  }
  for (core::FleetRelationship& e : docker->relationships) {
    e.from_id = DockerIdToHost(e.from_id, host);
    e.to_id = DockerIdToHost(e.to_id, host);
    topology.relationships.push_back(std::move(e));  // unmapped ends are dropped below
  }
  return fleet;
}

}  // namespace

absl::StatusOr<Report> BuildHostReport(agents::LocalHostFleet& fleet, AgentExecutor& executor,
                                       const ReportContext& context) {
  core::FleetTopologyQuery whole;
  whole.max_resources = std::min(core::kFleetMaxResults, kMaxReportResources);
  absl::StatusOr<core::FleetTopology> topology = fleet.GetTopology(whole);
  if (!topology.ok()) {
    return topology.status();
  }
  std::map<std::string, std::string> docker_ids;  // mapped id -> the Docker fleet's id
  docker::DockerFleet* docker =
      executor.docker() != nullptr ? AddDocker(*executor.docker(), *topology, docker_ids) : nullptr;
  Report report;
  report.host = executor.host();
  report.agent_version = context.agent_version;
  report.sent_at = context.now;
  report.in_reply_to = context.in_reply_to;
  report.interval_seconds = context.interval_seconds;
  for (core::FleetResource& r : topology->resources) {
    // The fleet was opened with this host name, so every id is the host's; one that is not
    // (a probe gone wrong) is left out rather than making the server refuse the whole report.
    if (!ResourceBelongsToHost(r.id, report.host)) {
      continue;
    }
    r.name = Clean(r.name);
    r.status = Clean(r.status);
    r.technology = Clean(r.technology);
    r.revision = Clean(r.revision, kMaxRevisionBytes);
    r.attributes = CleanMap(r.attributes);
    report.resources.push_back(std::move(r));
  }
  std::set<std::string> ids;
  for (const core::FleetResource& r : report.resources) {
    ids.insert(r.id);
  }
  auto known = [&ids](const std::string& id) { return ids.count(id) != 0; };
  for (core::FleetResource& r : report.resources) {
    if (!r.parent_id.empty() && !known(r.parent_id)) {
      r.parent_id.clear();
    }
  }
  for (const core::FleetRelationship& e : topology->relationships) {
    if (report.relationships.size() < kMaxReportRelationships && known(e.from_id) &&
        known(e.to_id)) {
      report.relationships.push_back(e);
    }
  }
  for (const core::FleetResource& r : report.resources) {
    const auto docker_id = docker_ids.find(r.id);
    absl::StatusOr<core::FleetStatus> status = docker_id == docker_ids.end()
                                                   ? fleet.GetStatus(r.id)
                                                   : docker->GetStatus(docker_id->second);
    if (!status.ok()) {
      continue;  // it went away between the two probes; the next report shows it
    }
    status->resource_id = r.id;
    if (report.statuses.size() < kMaxReportStatuses) {
      report.statuses.push_back(
          {r.id, Clean(status->status), Clean(status->summary), CleanMap(status->facts)});
    }
    if (r.type == "node") {
      AddMetric(report, *status, "cpu_pct", "cpu", "percent");
      AddMetric(report, *status, "memory_pct", "memory", "percent");
      AddMetric(report, *status, "load1", "load", "load");
    } else if (r.type == "storage") {
      AddMetric(report, *status, "usage_pct", "usage", "percent");
    } else if (r.type == "app-container") {
      // Present once the DockerFleet's sampler has sampled a running container.
      AddMetric(report, *status, "cpu_pct", "cpu", "percent");
      AddMetric(report, *status, "memory_pct", "memory", "percent");
      AddMetric(report, *status, "memory_bytes", "memory_used", "bytes");
    }
    if ((r.type == "service" || r.type == "app-container") &&
        report.capabilities.size() < kMaxReportCapabilities) {
      std::vector<std::string> names = executor.AllowedCapabilities(r.id);
      if (!names.empty()) {
        report.capabilities.push_back({r.id, std::move(names)});
      }
    }
  }
  return report;
}

}  // namespace pulse::adapters::hostagent
