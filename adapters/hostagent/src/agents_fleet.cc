#include "pulse/adapters/hostagent/agents_fleet.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_split.h"
#include "fmt/format.h"
#include "pulse/core/agent/fleet_queries.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/tools/exec_classifier.h"

namespace pulse::adapters::hostagent {
namespace {

namespace fq = core::fleetq;

constexpr std::string_view kStateAttribute = "agent.state";

std::string TrustDomain(std::string_view host) { return fmt::format("agent:{}", host); }

// The resources of one host as the fleet shows them: the report's, with status unknown unless
// the host reported within its window in this process; a node placeholder for a host bound but
// never reported.
std::vector<core::FleetResource> Shown(const HostView& view) {
  std::vector<core::FleetResource> out;
  const std::string state(ToString(view.state));
  if (view.report == nullptr) {
    core::FleetResource node;
    node.id = fmt::format("node:{}", view.host);
    node.type = "node";
    node.name = view.host;
    node.status = "unknown";
    node.technology = "pulse-agent";
    node.attributes = {{std::string(kStateAttribute), state}};
    out.push_back(std::move(node));
    return out;
  }
  out.reserve(view.report->resources.size());
  for (const core::FleetResource& r : view.report->resources) {
    core::FleetResource shown = r;
    if (!view.fresh) {
      shown.status = "unknown";
    }
    if (shown.type == "node") {
      shown.attributes[std::string(kStateAttribute)] = state;
      if (!view.agent_version.empty()) {
        shown.attributes["agent.version"] = view.agent_version;
      }
      if (view.last_report_at.has_value()) {
        shown.attributes["agent.last_report"] = fq::Rfc3339(*view.last_report_at);
      }
    }
    out.push_back(std::move(shown));
  }
  return out;
}

const ReportStatus* StatusOf(const Report& report, std::string_view id) {
  for (const ReportStatus& s : report.statuses) {
    if (s.resource_id == id) {
      return &s;
    }
  }
  return nullptr;
}

std::string UnitBase(std::string_view unit) {
  constexpr std::string_view kSuffix = ".service";
  if (unit.size() > kSuffix.size() && unit.substr(unit.size() - kSuffix.size()) == kSuffix) {
    unit.remove_suffix(kSuffix.size());
  }
  return std::string(unit);
}

// The unit a service resource stands for: its `unit` attribute (as LocalHostFleet reports
// it), else its name.
std::string UnitOf(const core::FleetResource& r) {
  const auto it = r.attributes.find("unit");
  return it != r.attributes.end() && !it->second.empty() ? it->second : r.name;
}

// One capability of a unit or a container on an agent host: admin approval, as LocalHostFleet's
// and DockerFleet's own.
core::Capability HostCapability(std::string name, std::string_view what,
                                core::AutoAuthorization auto_class, core::ActionRisk risk) {
  core::Capability c;
  c.description = fmt::format("{} the {} through its host's pulse-agent.", name, what);
  c.name = std::move(name);
  c.minimum_approval = core::ApprovalLevel::kAdmin;
  c.auto_authorization = auto_class;
  c.risk = risk;
  return c;
}

core::Capability ServiceCapability(std::string name, core::AutoAuthorization auto_class,
                                   core::ActionRisk risk) {
  return HostCapability(std::move(name), "systemd unit", auto_class, risk);
}

core::Capability ContainerCapability(std::string name, core::AutoAuthorization auto_class,
                                     core::ActionRisk risk) {
  return HostCapability(std::move(name), "container (the host's Docker daemon)", auto_class, risk);
}

// What a capability means for a service unit's or a container's state once it took effect.
std::optional<std::string_view> ExpectedState(std::string_view type, std::string_view capability) {
  const bool container = type == "app-container";
  if (capability == "start" || capability == "restart") {
    return container ? "running" : "active";
  }
  if (capability == "stop") {
    return container ? "exited" : "inactive";
  }
  return std::nullopt;
}

// A resource's name as the server's action_allowlist names it: a unit without ".service", a
// container by its name.
std::string AllowlistName(const core::FleetResource& r) {
  return r.type == "service" ? UnitBase(UnitOf(r)) : r.name;
}

}  // namespace

AgentsFleet::AgentsFleet(AgentHub& hub, AgentsFleetOptions options)
    : hub_(hub), options_(std::move(options)) {}

absl::StatusOr<core::FleetResource> AgentsFleet::Find(std::string_view id, HostView* view) {
  const std::optional<std::string> host = hub_.HostOf(id);
  if (!host.has_value()) {
    return absl::NotFoundError(fmt::format("no agent host has resource {}", id));
  }
  std::optional<HostView> v = hub_.Host(*host);
  if (!v.has_value()) {
    return absl::NotFoundError(fmt::format("no agent host has resource {}", id));
  }
  for (core::FleetResource& r : Shown(*v)) {
    if (r.id == id) {
      if (view != nullptr) {
        *view = std::move(*v);
      }
      return std::move(r);
    }
  }
  return absl::NotFoundError(fmt::format("host {} does not report resource {}", *host, id));
}

std::optional<std::uint64_t> AgentsFleet::ListingGeneration() {
  if (!hub_.HasHosts()) {
    return 0;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<core::FleetResource>> AgentsFleet::ListResources(
    const core::FleetResourceQuery& query) {
  PULSE_RETURN_IF_ERROR(fq::ValidateResourceQuery(query));
  std::vector<core::FleetResource> out;
  for (const HostView& view : hub_.Hosts()) {
    for (core::FleetResource& r : Shown(view)) {
      if (fq::MatchesQuery(r, query)) {
        out.push_back(std::move(r));
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const core::FleetResource& a, const core::FleetResource& b) { return a.id < b.id; });
  if (out.size() > query.limit) {
    out.resize(query.limit);
  }
  return out;
}

absl::StatusOr<core::FleetResource> AgentsFleet::GetResource(std::string_view id) {
  return Find(id, nullptr);
}

absl::StatusOr<core::FleetTopology> AgentsFleet::GetTopology(
    const core::FleetTopologyQuery& query) {
  PULSE_RETURN_IF_ERROR(fq::ValidateTopologyQuery(query));
  std::map<std::string, core::FleetResource> resources;
  std::vector<core::FleetRelationship> relationships;
  for (const HostView& view : hub_.Hosts()) {
    for (core::FleetResource& r : Shown(view)) {
      resources.emplace(r.id, std::move(r));
    }
    if (view.report != nullptr) {
      relationships.insert(relationships.end(), view.report->relationships.begin(),
                           view.report->relationships.end());
    }
  }
  if (!query.root_id.empty() && resources.find(query.root_id) == resources.end()) {
    return absl::NotFoundError(fmt::format("no agent host has resource {}", query.root_id));
  }
  return fq::BuildTopology(resources, relationships, query);
}

absl::StatusOr<core::FleetStatus> AgentsFleet::GetStatus(std::string_view id) {
  HostView view;
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, Find(id, &view));
  core::FleetStatus s;
  s.resource_id = r.id;
  s.status = r.status;
  s.observed_at = view.last_report_at.value_or(absl::InfinitePast());
  s.facts["agent.state"] = std::string(ToString(view.state));
  if (!view.fresh) {
    s.summary = view.last_report_at.has_value()
                    ? fmt::format("No report from the agent of {} since {}; state unknown.",
                                  view.host, fq::Rfc3339(*view.last_report_at))
                    : fmt::format("The agent of {} has not reported yet.", view.host);
    return s;
  }
  if (const ReportStatus* reported = StatusOf(*view.report, id); reported != nullptr) {
    s.status = reported->status;
    s.summary = reported->summary;
    for (const auto& [k, v] : reported->facts) {
      s.facts.emplace(k, v);
    }
  } else {
    s.summary = fmt::format("{} is {} (reported by the agent of {}).", r.name, r.status, view.host);
  }
  return s;
}

absl::StatusOr<core::ExecOutput> AgentsFleet::Exec(std::string_view host,
                                                   std::string_view resource_id,
                                                   std::string_view command) {
  if (!options_.allow_exec) {
    return absl::PermissionDeniedError("commands on agent hosts are turned off (allow_exec)");
  }
  const core::ExecVerdict verdict = core::ClassifyExecCommand(command);
  if (!verdict.allowed) {
    return absl::PermissionDeniedError(
        fmt::format("the command is not a read-only command: {}", verdict.reason));
  }
  Command c;
  c.kind = CommandKind::kExec;
  c.resource_id = std::string(resource_id);
  c.exec_command = std::string(command);
  absl::StatusOr<Result> result = hub_.RunCommand(host, std::move(c));
  if (!result.ok()) {
    return result.status();
  }
  if (result->status == core::ExecutionStatus::kNotRun) {
    if (result->reason_code == "agent_classifier" || result->reason_code == "agent_exec_off") {
      return absl::PermissionDeniedError(
          fmt::format("the agent of {} refused the command: {}", host, result->summary));
    }
    return absl::FailedPreconditionError(
        fmt::format("the agent of {} did not run the command: {}", host, result->summary));
  }
  if (!result->exec.has_value()) {
    return absl::UnavailableError(fmt::format(
        "the agent of {} answered without the command's output: {}", host, result->summary));
  }
  core::ExecOutput out;
  out.exit_code = result->exec->exit_code;
  out.output = std::move(result->exec->output);
  out.truncated = result->exec->truncated;
  return out;
}

absl::StatusOr<core::FleetLogExcerpt> AgentsFleet::ReadLogs(std::string_view id,
                                                            const core::FleetLogQuery& query) {
  PULSE_RETURN_IF_ERROR(fq::ValidateLogQuery(query));
  HostView view;
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, Find(id, &view));
  std::string command;
  if (r.type == "node") {
    command = fmt::format("journalctl -n {} --no-pager -o short-iso", query.max_lines);
  } else if (r.type == "service") {
    command =
        fmt::format("journalctl -u {} -n {} --no-pager -o short-iso", UnitOf(r), query.max_lines);
  } else {
    return absl::NotFoundError(fmt::format("{} has no log", id));
  }
  PULSE_ASSIGN_OR_RETURN(core::ExecOutput out, Exec(view.host, r.id, command));
  if (out.exit_code != 0) {
    return absl::FailedPreconditionError(fmt::format(
        "the journal of {} could not be read (journalctl exited {})", view.host, out.exit_code));
  }
  core::FleetLogExcerpt excerpt;
  std::size_t bytes = 0;
  std::vector<std::string> lines = absl::StrSplit(out.output, '\n', absl::SkipEmpty());
  // The newest lines are kept within the byte bound, as every fleet does.
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (excerpt.lines.size() == query.max_lines || bytes + it->size() + 1 > query.max_bytes) {
      excerpt.truncated = true;
      break;
    }
    bytes += it->size() + 1;
    excerpt.lines.push_back(std::move(*it));
  }
  std::reverse(excerpt.lines.begin(), excerpt.lines.end());
  excerpt.truncated = excerpt.truncated || out.truncated;
  return excerpt;
}

absl::StatusOr<core::FleetConfig> AgentsFleet::ReadConfig(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, Find(id, nullptr));
  core::FleetConfig config;
  config.format = "json";
  core::JsonWriter out;
  out.StartObject();
  out.Member("id", r.id);
  out.Member("type", r.type);
  out.Member("name", r.name);
  out.Member("technology", r.technology);
  out.Key("attributes");
  out.StartObject();
  for (const auto& [k, v] : r.attributes) {
    if (fq::IsSecretKey(k)) {
      out.Member(k, "[redacted]");
      config.redacted = true;
    } else {
      out.Member(k, v);
    }
  }
  out.EndObject();
  out.EndObject();
  config.content = out.Take();
  return config;
}

absl::StatusOr<core::FleetMetricSeries> AgentsFleet::ReadMetricHistory(
    std::string_view id, const core::FleetMetricQuery& query) {
  PULSE_RETURN_IF_ERROR(fq::ValidateMetricQuery(query));
  HostView view;
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, Find(id, &view));
  core::FleetMetricSeries series;
  series.resource_id = r.id;
  series.metric = query.metric;
  bool known = false;
  if (view.report != nullptr) {
    for (const ReportMetric& m : view.report->metrics) {
      if (m.resource_id == id && m.metric == query.metric) {
        series.unit = m.unit;
        known = true;
      }
    }
  }
  const std::vector<core::FleetMetricPoint> points = hub_.MetricPoints(id, query.metric);
  if (!known && points.empty()) {
    return absl::NotFoundError(fmt::format("{} does not report metric {}", id, query.metric));
  }
  series.points = fq::SelectPoints(points, query);
  return series;
}

std::vector<core::Capability> AgentsFleet::CatalogueFor(const core::FleetResource& r,
                                                        const HostView& view) const {
  const bool container = r.type == "app-container";
  if (!options_.allow_actions || (r.type != "service" && !container) || !view.fresh ||
      !view.connected) {
    return {};
  }
  const std::string name = AllowlistName(r);
  const bool allowed =
      std::any_of(options_.action_allowlist.begin(), options_.action_allowlist.end(),
                  [&](const std::string& entry) {
                    return entry == "*" || (container ? entry == name : UnitBase(entry) == name);
                  });
  if (!allowed) {
    return {};
  }
  if (container) {
    if (r.status == "running") {
      return {
          ContainerCapability("restart", core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow),
          ContainerCapability("stop", core::AutoAuthorization::kElevated,
                              core::ActionRisk::kMedium)};
    }
    if (r.status == "exited" || r.status == "created" || r.status == "dead") {
      return {
          ContainerCapability("start", core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow)};
    }
    return {};  // paused, restarting, removing: wait for it to settle
  }
  if (r.status == "active") {
    return {
        ServiceCapability("restart", core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow),
        ServiceCapability("stop", core::AutoAuthorization::kElevated, core::ActionRisk::kMedium)};
  }
  if (r.status == "inactive" || r.status == "failed") {
    return {
        ServiceCapability("start", core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow),
        ServiceCapability("restart", core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow)};
  }
  return {};  // activating, deactivating: wait for it to settle
}

absl::StatusOr<std::vector<core::Capability>> AgentsFleet::ListCapabilities(std::string_view id) {
  HostView view;
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, Find(id, &view));
  return CatalogueFor(r, view);
}

absl::StatusOr<core::DispatchReceipt> AgentsFleet::Dispatch(const core::DispatchRequest& request) {
  HostView view;
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, Find(request.resource_id, &view));
  const std::vector<core::Capability> catalogue = CatalogueFor(r, view);
  if (std::none_of(catalogue.begin(), catalogue.end(),
                   [&](const core::Capability& c) { return c.name == request.capability_name; })) {
    return absl::FailedPreconditionError(fmt::format("{} does not offer {} now (host {} is {})",
                                                     request.resource_id, request.capability_name,
                                                     view.host, ToString(view.state)));
  }
  Command c;
  c.kind = CommandKind::kDispatch;
  c.action_id = request.action_id;
  c.attempt_id = request.attempt_id;
  c.plan_hash = request.plan_hash;
  c.resource_id = request.resource_id;
  c.capability = request.capability_name;
  c.params_json = request.params_json.empty() ? "{}" : request.params_json;
  absl::StatusOr<Result> result = hub_.RunCommand(view.host, std::move(c));
  if (!result.ok()) {
    // Nothing was sent when the host is not connected or its queue is full: the dispatch did not
    // start. Any other failure (no answer by the deadline) leaves the outcome unknown.
    if (absl::IsResourceExhausted(result.status())) {
      return absl::FailedPreconditionError(result.status().message());
    }
    return result.status();
  }
  core::DispatchReceipt receipt;
  receipt.status = result->status;
  receipt.reason_code = result->reason_code;
  receipt.summary = result->replayed ? fmt::format(
                                           "{} (answered from the agent's record of this "
                                           "attempt; not run again)",
                                           result->summary)
                                     : result->summary;
  receipt.executor_id = TrustDomain(view.host);
  receipt.executor_trust_domain = TrustDomain(view.host);
  return receipt;
}

absl::StatusOr<core::PostconditionObservation> AgentsFleet::ObservePostcondition(
    const core::PostconditionQuery& query) {
  const std::optional<std::string> host = hub_.HostOf(query.resource_id);
  if (!host.has_value()) {
    return absl::NotFoundError(fmt::format("no agent host has resource {}", query.resource_id));
  }
  PULSE_ASSIGN_OR_RETURN(core::FleetResource before, Find(query.resource_id, nullptr));
  const std::optional<std::string_view> expected =
      ExpectedState(before.type, query.capability_name);
  if (!expected.has_value()) {
    return absl::InvalidArgumentError(
        fmt::format("no postcondition is known for {}", query.capability_name));
  }
  // A fresh report, asked for after the dispatch's answer: the dispatch's own word is not
  // evidence that the unit is in its new state.
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const Report> report, hub_.RequestReport(*host));
  core::PostconditionObservation o;
  o.observer_id = fmt::format("agent:{}/report", *host);
  o.observer_trust_domain = TrustDomain(*host);
  o.observed_at = report->sent_at;
  const auto it =
      std::find_if(report->resources.begin(), report->resources.end(),
                   [&](const core::FleetResource& r) { return r.id == query.resource_id; });
  if (it == report->resources.end()) {
    o.status = core::VerificationStatus::kInconclusive;
    o.reason_code = "resource_not_reported";
    o.summary =
        fmt::format("The agent's fresh report of {} no longer lists {}.", *host, query.resource_id);
    return o;
  }
  if (it->status == *expected) {
    o.status = core::VerificationStatus::kConfirmed;
    o.summary = fmt::format("The agent's fresh report says {} is {}.", it->name, it->status);
  } else if (it->status == "activating" || it->status == "deactivating" ||
             it->status == "reloading" || it->status == "restarting") {
    o.status = core::VerificationStatus::kInconclusive;
    o.reason_code = "unit_settling";
    o.summary = fmt::format("{} is still {} in the agent's fresh report.", it->name, it->status);
  } else {
    o.status = core::VerificationStatus::kContradicted;
    o.reason_code = "unit_state_mismatch";
    o.summary = fmt::format("The agent's fresh report says {} is {}, not {}.", it->name, it->status,
                            *expected);
  }
  return o;
}

absl::StatusOr<core::ExecOutput> AgentsFleet::RunReadOnlyCommand(std::string_view resource_id,
                                                                 std::string_view command) {
  HostView view;
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, Find(resource_id, &view));
  return Exec(view.host, r.id, command);
}

}  // namespace pulse::adapters::hostagent
