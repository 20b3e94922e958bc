#include "pulse/adapters/docker/docker_fleet.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fleet_queries.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::docker {
namespace {

namespace internal = adapters::agents::internal;

constexpr std::size_t kMaxSamples = 2000;
constexpr char kExecutorDomain[] = "docker-engine-api";
constexpr char kObserverDomain[] = "docker-engine-inspect";

// A local id part from free text: [A-Za-z0-9._-], anything else becomes '-'.
std::string LocalPart(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 128)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out.push_back(ok ? c : '-');
  }
  return out.empty() ? "unnamed" : out;
}

std::string TimeText(const std::optional<absl::Time>& t) {
  return t.has_value() ? core::FormatRfc3339(*t) : "";
}

core::Capability MakeCapability(std::string name, std::string description,
                                core::AutoAuthorization auto_class, core::ActionRisk risk) {
  core::Capability c;
  c.name = std::move(name);
  c.description = std::move(description);
  c.minimum_approval = core::ApprovalLevel::kAdmin;
  c.auto_authorization = auto_class;
  c.risk = risk;
  return c;
}

bool IsContainerId(std::string_view id) { return id.rfind("app-container:", 0) == 0; }

std::string ContainerRef(std::string_view resource_id) {
  return std::string(resource_id.substr(std::string_view("app-container:").size()));
}

}  // namespace

core::FleetResource ContainerResource(const ContainerDetails& d, std::string_view node_id) {
  core::FleetResource r;
  r.id = absl::StrCat("app-container:", LocalPart(d.name));
  r.type = "app-container";
  r.name = d.name;
  r.status = d.state;
  r.technology = "docker";
  r.parent_id = std::string(node_id);
  r.revision = absl::StrCat(d.id.substr(0, 12), "/", TimeText(d.started_at), "/", d.restart_count);
  r.attributes["container_id"] = d.id;
  r.attributes["image"] = d.image;
  r.attributes["image_id"] = d.image_id;
  r.attributes["restart_count"] = absl::StrCat(d.restart_count);
  r.attributes["exit_code"] = absl::StrCat(d.exit_code);
  r.attributes["oom_killed"] = d.oom_killed ? "true" : "false";
  if (!d.health.empty()) {
    r.attributes["health"] = d.health;
  }
  if (!d.restart_policy.empty()) {
    r.attributes["restart_policy"] = d.restart_policy;
  }
  if (d.memory_limit > 0) {
    r.attributes["memory_limit_bytes"] = absl::StrCat(d.memory_limit);
  }
  if (d.started_at.has_value()) {
    r.attributes["started_at"] = TimeText(d.started_at);
  }
  if (d.finished_at.has_value()) {
    r.attributes["finished_at"] = TimeText(d.finished_at);
  }
  for (const auto& [key, value] : d.labels) {
    r.attributes[absl::StrCat("label.", core::ToAbsl(key))] =
        internal::IsSecretKey(key) ? "[redacted]" : value;
  }
  return r;
}

DockerFleet::DockerFleet(DockerFleetOptions options, std::unique_ptr<EngineClient> engine,
                         std::unique_ptr<EngineClient> observer, EngineInfo info)
    : options_(std::move(options)),
      engine_(std::move(engine)),
      observer_(std::move(observer)),
      info_(std::move(info)),
      node_id_(absl::StrCat("node:", LocalPart(info_.name))) {}

DockerFleet::~DockerFleet() = default;

absl::StatusOr<std::unique_ptr<DockerFleet>> DockerFleet::Open(DockerFleetOptions options) {
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<EngineClient> engine,
                         EngineClient::Connect(options.engine));
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<EngineClient> observer,
                         EngineClient::Connect(options.engine));
  PULSE_ASSIGN_OR_RETURN(EngineInfo info, engine->Info());
  return std::unique_ptr<DockerFleet>(
      new DockerFleet(std::move(options), std::move(engine), std::move(observer), info));
}

absl::StatusOr<DockerFleet::Snapshot> DockerFleet::Probe() const {
  PULSE_ASSIGN_OR_RETURN(std::vector<ContainerSummary> list, engine_->ListContainers(true));
  Snapshot s;
  core::FleetResource node;
  node.id = node_id_;
  node.type = "node";
  node.name = info_.name;
  node.status = "online";
  node.technology = "docker";
  node.attributes["os"] = info_.operating_system;
  node.attributes["docker_version"] = info_.server_version;
  node.attributes["api_version"] = engine_->api().ToString();
  node.attributes["cpus"] = absl::StrCat(info_.cpus);
  node.attributes["memory_bytes"] = absl::StrCat(info_.memory_bytes);
  s.resources[node.id] = node;
  if (list.size() > core::kFleetMaxResults) {
    list.resize(core::kFleetMaxResults);
  }
  for (const ContainerSummary& summary : list) {
    auto details = engine_->Inspect(summary.id);
    if (!details.ok()) {
      if (EngineErrorKindOf(details.status()) == EngineErrorKind::kNotFound) {
        continue;  // removed since the listing
      }
      return details.status();
    }
    core::FleetResource r = ContainerResource(*details, node_id_);
    s.relationships.push_back({r.id, node_id_, "runs_on"});
    const auto project = details->labels.find("com.docker.compose.project");
    if (project != details->labels.end()) {
      const std::string project_id = absl::StrCat("compose-project:", LocalPart(project->second));
      if (s.resources.count(project_id) == 0) {
        core::FleetResource p;
        p.id = project_id;
        p.type = "compose-project";
        p.name = project->second;
        p.status = "present";
        p.technology = "docker";
        p.parent_id = node_id_;
        s.resources[p.id] = p;
        s.relationships.push_back({p.id, node_id_, "runs_on"});
      }
      s.relationships.push_back({r.id, project_id, "member_of"});
      const auto service = details->labels.find("com.docker.compose.service");
      if (service != details->labels.end()) {
        const std::string service_id = absl::StrCat("compose-service:", LocalPart(project->second),
                                                    "/", LocalPart(service->second));
        if (s.resources.count(service_id) == 0) {
          core::FleetResource sv;
          sv.id = service_id;
          sv.type = "compose-service";
          sv.name = service->second;
          sv.status = "present";
          sv.technology = "docker";
          sv.parent_id = project_id;
          s.resources[sv.id] = sv;
          s.relationships.push_back({sv.id, project_id, "member_of"});
        }
        s.relationships.push_back({r.id, service_id, "member_of"});
      }
    }
    s.containers[r.id] = *details;
    s.resources[r.id] = std::move(r);
  }
  return s;
}

absl::StatusOr<ContainerDetails> DockerFleet::ContainerOf(std::string_view id) const {
  if (!IsContainerId(id) || !core::IsCanonicalResourceId(id)) {
    return absl::NotFoundError(absl::StrCat("no container with id '", core::ToAbsl(id), "'"));
  }
  auto details = engine_->Inspect(ContainerRef(id));
  if (!details.ok() && EngineErrorKindOf(details.status()) == EngineErrorKind::kInvalidArgument) {
    return absl::NotFoundError(absl::StrCat("no container with id '", core::ToAbsl(id), "'"));
  }
  return details;
}

absl::StatusOr<std::vector<core::FleetResource>> DockerFleet::ListResources(
    const core::FleetResourceQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateResourceQuery(query));
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  std::vector<core::FleetResource> out;
  for (auto& [id, r] : s.resources) {
    if (internal::MatchesQuery(r, query)) {
      out.push_back(std::move(r));
      if (out.size() == query.limit) {
        break;
      }
    }
  }
  return out;
}

absl::StatusOr<core::FleetResource> DockerFleet::GetResource(std::string_view id) {
  if (IsContainerId(id)) {
    PULSE_ASSIGN_OR_RETURN(ContainerDetails d, ContainerOf(id));
    return ContainerResource(d, node_id_);
  }
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  auto it = s.resources.find(std::string(id));
  if (it == s.resources.end()) {
    return absl::NotFoundError(absl::StrCat("no resource with id '", core::ToAbsl(id), "'"));
  }
  return it->second;
}

absl::StatusOr<core::FleetTopology> DockerFleet::GetTopology(
    const core::FleetTopologyQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateTopologyQuery(query));
  PULSE_ASSIGN_OR_RETURN(Snapshot s, Probe());
  if (!query.root_id.empty() && s.resources.count(query.root_id) == 0) {
    return absl::NotFoundError(
        absl::StrCat("no resource with id '", core::ToAbsl(query.root_id), "'"));
  }
  return internal::BuildTopology(s.resources, s.relationships, query);
}

absl::StatusOr<core::FleetStatus> DockerFleet::GetStatus(std::string_view id) {
  core::FleetStatus st;
  st.resource_id = std::string(id);
  st.observed_at = absl::Now();
  if (!IsContainerId(id)) {
    PULSE_ASSIGN_OR_RETURN(core::FleetResource r, GetResource(id));
    st.status = r.status;
    st.summary = absl::StrCat(r.type, " ", r.name, " is ", r.status);
    st.facts = r.attributes;
    return st;
  }
  PULSE_ASSIGN_OR_RETURN(ContainerDetails d, ContainerOf(id));
  const core::FleetResource r = ContainerResource(d, node_id_);
  st.status = d.state;
  st.facts = r.attributes;
  st.summary = absl::StrCat("container ", d.name, " is ", d.state,
                            d.health.empty() ? "" : absl::StrCat(" (", d.health, ")"),
                            d.running ? "" : absl::StrCat(", exit code ", d.exit_code),
                            ", restarted ", d.restart_count, " times");
  if (d.running) {
    auto stats = engine_->Stats(d.id);
    if (stats.ok()) {
      if (stats->cpu_percent.has_value()) {
        st.facts["cpu_pct"] = absl::StrCat(*stats->cpu_percent);
      }
      st.facts["memory_bytes"] = absl::StrCat(stats->memory_used);
      if (stats->memory_percent.has_value()) {
        st.facts["memory_pct"] = absl::StrCat(*stats->memory_percent);
      }
      st.facts["pids"] = absl::StrCat(stats->pids);
      absl::MutexLock lock(&mu_);
      std::deque<Sample>& samples = samples_[st.resource_id];
      samples.push_back(
          {absl::Now(), stats->cpu_percent.value_or(0), static_cast<double>(stats->memory_used)});
      if (samples.size() > kMaxSamples) {
        samples.pop_front();
      }
    }
  }
  return st;
}

absl::StatusOr<core::FleetLogExcerpt> DockerFleet::ReadLogs(std::string_view id,
                                                            const core::FleetLogQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateLogQuery(query));
  if (!IsContainerId(id)) {
    PULSE_RETURN_IF_ERROR(GetResource(id).status());
    return absl::FailedPreconditionError(
        absl::StrCat(core::ToAbsl(id), " has no log of its own here; read a container's"));
  }
  PULSE_ASSIGN_OR_RETURN(ContainerDetails d, ContainerOf(id));
  LogQuery logs;
  logs.tail = query.max_lines;
  logs.since = query.since;
  logs.bounds.max_lines = query.max_lines;
  logs.bounds.max_bytes = std::max<std::size_t>(query.max_bytes * 2, 4096);
  PULSE_ASSIGN_OR_RETURN(LogResult result, engine_->Logs(d.id, logs));
  std::vector<internal::TimedLine> lines;
  for (LogLine& line : result.lines) {
    lines.push_back({line.time.value_or(absl::UnixEpoch()),
                     line.stream == LogStream::kStderr ? absl::StrCat("[stderr] ", line.text)
                                                       : std::move(line.text)});
  }
  core::FleetLogExcerpt excerpt = internal::ExcerptLines(lines, query);
  excerpt.truncated = excerpt.truncated || result.truncated;
  return excerpt;
}

absl::StatusOr<core::FleetConfig> DockerFleet::ReadConfig(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, GetResource(id));
  core::JsonWriter w;
  w.StartObject();
  bool redacted = false;
  for (const auto& [key, value] : r.attributes) {
    w.Member(key, value);
    redacted = redacted || value == "[redacted]";
  }
  w.EndObject();
  core::FleetConfig config;
  config.format = "json";
  config.content = w.Take();
  config.redacted = redacted;
  if (config.content.size() > core::kFleetMaxConfigBytes) {
    config.content.resize(core::kFleetMaxConfigBytes);
    config.truncated = true;
  }
  return config;
}

absl::StatusOr<core::FleetMetricSeries> DockerFleet::ReadMetricHistory(
    std::string_view id, const core::FleetMetricQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateMetricQuery(query));
  if (!IsContainerId(id) || (query.metric != "cpu" && query.metric != "memory")) {
    return absl::NotFoundError(
        absl::StrCat(core::ToAbsl(id), " records no metric '", core::ToAbsl(query.metric), "'"));
  }
  bool due = true;
  {
    absl::MutexLock lock(&mu_);
    auto it = samples_.find(std::string(id));
    due = it == samples_.end() || it->second.empty() ||
          absl::Now() - it->second.back().at >= options_.sample_interval;
  }
  if (due) {
    PULSE_RETURN_IF_ERROR(GetStatus(id).status());  // takes a sample when the container runs
  }
  core::FleetMetricSeries series;
  series.resource_id = std::string(id);
  series.metric = query.metric;
  series.unit = query.metric == "cpu" ? "percent" : "bytes";
  std::vector<core::FleetMetricPoint> points;
  {
    absl::MutexLock lock(&mu_);
    for (const Sample& sample : samples_[series.resource_id]) {
      points.push_back(
          {sample.at, query.metric == "cpu" ? sample.cpu_percent : sample.memory_bytes});
    }
  }
  series.points = internal::SelectPoints(points, query);
  return series;
}

std::vector<core::Capability> DockerFleet::CatalogueFor(const ContainerDetails& d) const {
  if (!options_.allow_actions) {
    return {};
  }
  if (d.running && !d.restarting) {
    return {MakeCapability("restart", "Restart the container (docker restart).",
                           core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow),
            MakeCapability("stop", "Stop the container (docker stop).",
                           core::AutoAuthorization::kElevated, core::ActionRisk::kMedium)};
  }
  if (d.state == "exited" || d.state == "created") {
    return {MakeCapability("start", "Start the container (docker start).",
                           core::AutoAuthorization::kLowRisk, core::ActionRisk::kLow)};
  }
  return {};  // restarting, paused, removing, dead: nothing to offer until it settles
}

absl::StatusOr<std::vector<core::Capability>> DockerFleet::ListCapabilities(std::string_view id) {
  if (!IsContainerId(id)) {
    PULSE_RETURN_IF_ERROR(GetResource(id).status());
    return std::vector<core::Capability>{};
  }
  PULSE_ASSIGN_OR_RETURN(ContainerDetails d, ContainerOf(id));
  return CatalogueFor(d);
}

absl::StatusOr<core::DispatchReceipt> DockerFleet::Dispatch(const core::DispatchRequest& request) {
  if (request.attempt_id.empty()) {
    return absl::InvalidArgumentError("a dispatch needs an attempt id");
  }
  {
    absl::MutexLock lock(&mu_);
    auto done = receipts_.find(request.attempt_id);
    if (done != receipts_.end()) {
      return done->second;
    }
  }
  PULSE_ASSIGN_OR_RETURN(ContainerDetails d, ContainerOf(request.resource_id));
  const std::vector<core::Capability> catalogue = CatalogueFor(d);
  const core::Capability* capability = core::FindCapability(catalogue, request.capability_name);
  if (capability == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        request.resource_id, " does not offer '", request.capability_name, "' while ", d.state,
        options_.allow_actions ? "" : " (actions are disabled for this Docker source)"));
  }
  if (!core::ValidateParams(*capability, request.params_json).ok()) {
    return absl::InvalidArgumentError("these capabilities take no params");
  }
  core::DispatchReceipt receipt;
  receipt.executor_id = absl::StrCat("docker:", info_.name);
  receipt.executor_trust_domain = kExecutorDomain;
  {
    absl::MutexLock lock(&mu_);
    if (receipts_.count(request.attempt_id) != 0) {
      return receipts_.at(request.attempt_id);
    }
    core::DispatchReceipt running = receipt;
    running.status = core::ExecutionStatus::kInconclusive;
    running.reason_code = "in_progress";
    running.summary = "this attempt is already running";
    receipts_[request.attempt_id] = running;
  }
  // The container id read now, not the name: a container recreated meanwhile is not touched.
  absl::StatusOr<LifecycleOutcome> outcome;
  if (request.capability_name == "start") {
    outcome = engine_->Start(d.id, options_.action_deadline);
  } else if (request.capability_name == "stop") {
    outcome = engine_->Stop(d.id, options_.stop_grace, options_.action_deadline);
  } else {
    outcome = engine_->Restart(d.id, options_.stop_grace, options_.action_deadline);
  }
  if (outcome.ok()) {
    receipt.status = core::ExecutionStatus::kSucceeded;
    receipt.reason_code = *outcome == LifecycleOutcome::kAlreadyInState ? "already_in_state" : "";
    receipt.summary =
        absl::StrCat("docker ", request.capability_name, " ", d.name,
                     *outcome == LifecycleOutcome::kAlreadyInState ? ": already in that state"
                                                                   : ": accepted by the Engine");
  } else {
    const auto kind = EngineErrorKindOf(outcome.status());
    if (kind == EngineErrorKind::kNotFound || kind == EngineErrorKind::kConflict) {
      receipt.status = core::ExecutionStatus::kNotRun;
      receipt.reason_code = kind == EngineErrorKind::kNotFound ? "container_gone" : "conflict";
    } else {
      // Timeout, a lost daemon, a 500: it may or may not have happened. Never retried here.
      receipt.status = core::ExecutionStatus::kInconclusive;
      receipt.reason_code = kind.has_value() ? std::string(EngineErrorKindName(*kind)) : "unknown";
    }
    receipt.summary = std::string(outcome.status().message().substr(0, 512));
  }
  absl::MutexLock lock(&mu_);
  receipts_[request.attempt_id] = receipt;
  return receipt;
}

absl::StatusOr<core::PostconditionObservation> DockerFleet::ObservePostcondition(
    const core::PostconditionQuery& query) {
  if (!IsContainerId(query.resource_id) || !core::IsCanonicalResourceId(query.resource_id)) {
    return absl::NotFoundError(absl::StrCat("no container with id '", query.resource_id, "'"));
  }
  const absl::Time deadline = absl::Now() + options_.observe_timeout;
  for (;;) {
    core::PostconditionObservation obs;
    obs.observer_id = absl::StrCat("docker-inspect:", info_.name);
    obs.observer_trust_domain = kObserverDomain;
    obs.observed_at = absl::Now();
    auto d = observer_->Inspect(ContainerRef(query.resource_id));
    if (!d.ok()) {
      if (EngineErrorKindOf(d.status()) != EngineErrorKind::kNotFound) {
        return d.status();
      }
      obs.status = core::VerificationStatus::kContradicted;
      obs.reason_code = "container_gone";
      obs.summary = "the container no longer exists";
      return obs;
    }
    bool holds = false;
    if (query.capability_name == "stop") {
      holds = !d->running;
    } else if (query.capability_name == "start") {
      holds = d->running;
    } else if (query.capability_name == "restart") {
      holds = d->running && d->started_at.has_value() && *d->started_at >= query.dispatched_at;
    }
    const bool settling = d->restarting || d->state == "removing";
    if (holds || !settling || absl::Now() >= deadline) {
      obs.status = holds      ? core::VerificationStatus::kConfirmed
                   : settling ? core::VerificationStatus::kInconclusive
                              : core::VerificationStatus::kContradicted;
      obs.reason_code = holds      ? "postcondition_holds"
                        : settling ? "still_in_progress"
                                   : "postcondition_failed";
      obs.summary = absl::StrCat("container ", d->name, " is ", d->state, ", started ",
                                 TimeText(d->started_at));
      return obs;
    }
    absl::SleepFor(absl::Milliseconds(250));
  }
}

}  // namespace pulse::docker
