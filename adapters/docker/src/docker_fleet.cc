#include "pulse/adapters/docker/docker_fleet.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "docker_fleet_internal.h"
#include "pulse/core/agent/fleet_queries.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::docker {
namespace {

namespace internal = core::fleetq;

// A read that misses an id re-lists at most this often (the container may be new).
constexpr absl::Duration kMissRefresh = absl::Milliseconds(250);
constexpr char kExecutorDomain[] = "docker-engine-api";
constexpr char kObserverDomain[] = "docker-engine-inspect";

}  // namespace

std::string LocalPart(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 128)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out.push_back(ok ? c : '-');
  }
  return out.empty() ? "unnamed" : out;
}

namespace {

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
                         std::unique_ptr<EngineClient> observer,
                         std::unique_ptr<EngineClient> background, EngineInfo info)
    : options_(std::move(options)),
      engine_(std::move(engine)),
      observer_(std::move(observer)),
      background_(std::move(background)),
      info_(std::move(info)),
      node_id_(absl::StrCat("node:", LocalPart(info_.name))) {}

DockerFleet::~DockerFleet() {
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }
  if (watcher_.joinable()) {
    watcher_.join();
  }
  if (sampler_.joinable()) {
    sampler_.join();
  }
}

absl::StatusOr<std::unique_ptr<DockerFleet>> DockerFleet::Open(DockerFleetOptions options) {
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<EngineClient> engine,
                         EngineClient::Connect(options.engine));
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<EngineClient> observer,
                         EngineClient::Connect(options.engine));
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<EngineClient> background,
                         EngineClient::Connect(options.engine));
  PULSE_ASSIGN_OR_RETURN(EngineInfo info, engine->Info());
  std::unique_ptr<DockerFleet> fleet(new DockerFleet(
      std::move(options), std::move(engine), std::move(observer), std::move(background), info));
  {
    absl::MutexLock refreshing(&fleet->refresh_mu_);
    PULSE_RETURN_IF_ERROR(fleet->Refresh().status());
  }
  if (fleet->options_.watch_events) {
    fleet->watcher_ = std::thread([f = fleet.get()] { f->WatchEvents(); });
  }
  if (fleet->options_.sample_interval > absl::ZeroDuration()) {
    fleet->sampler_ = std::thread([f = fleet.get()] { f->RunSampler(); });
  }
  return fleet;
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
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView(options_.max_staleness));
  std::vector<core::FleetResource> out;
  for (const auto& [id, r] : view->resources) {
    if (internal::MatchesQuery(r, query)) {
      out.push_back(r);
      if (out.size() == query.limit) {
        break;
      }
    }
  }
  return out;
}

absl::StatusOr<core::FleetResource> DockerFleet::GetResource(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView(options_.max_staleness));
  auto it = view->resources.find(std::string(id));
  if (it == view->resources.end() && absl::Now() - view->at > kMissRefresh) {
    // Perhaps created since: one fresh listing at most every kMissRefresh.
    PULSE_ASSIGN_OR_RETURN(view, CurrentView(kMissRefresh));
    it = view->resources.find(std::string(id));
  }
  if (it == view->resources.end()) {
    return absl::NotFoundError(absl::StrCat("no resource with id '", core::ToAbsl(id), "'"));
  }
  return it->second;
}

absl::StatusOr<core::FleetTopology> DockerFleet::GetTopology(
    const core::FleetTopologyQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateTopologyQuery(query));
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView(options_.max_staleness));
  if (!query.root_id.empty() && view->resources.count(query.root_id) == 0) {
    return absl::NotFoundError(
        absl::StrCat("no resource with id '", core::ToAbsl(query.root_id), "'"));
  }
  return internal::BuildTopology(view->resources, view->relationships, query);
}

absl::StatusOr<core::FleetStatus> DockerFleet::GetStatus(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, GetResource(id));
  core::FleetStatus st;
  st.resource_id = r.id;
  st.status = r.status;
  st.facts = r.attributes;
  if (!IsContainerId(id)) {
    st.observed_at = absl::Now();
    st.summary = absl::StrCat(r.type, " ", r.name, " is ", r.status);
    return st;
  }
  ContainerDetails d;
  {
    PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView(options_.max_staleness));
    auto it = view->containers.find(r.id);
    if (it == view->containers.end()) {
      return absl::NotFoundError(absl::StrCat("no resource with id '", core::ToAbsl(id), "'"));
    }
    d = it->second;
    st.observed_at = view->at;
  }
  st.summary = absl::StrCat("container ", d.name, " is ", d.state,
                            d.health.empty() ? "" : absl::StrCat(" (", d.health, ")"),
                            d.running ? "" : absl::StrCat(", exit code ", d.exit_code),
                            ", restarted ", d.restart_count, " times");
  if (!d.running) {
    return st;
  }
  if (options_.sample_interval <= absl::ZeroDuration()) {
    // No sampler: this read samples (the daemon computes CPU % against its previous reading).
    absl::StatusOr<ContainerStats> stats = engine_->Stats(d.id);
    {
      absl::MutexLock lock(&mu_);
      ++counters_.engine_calls;
    }
    if (stats.ok()) {
      RecordSample(st.resource_id, *stats, /*one_shot=*/false);
    }
  }
  absl::MutexLock lock(&mu_);
  auto samples = samples_.find(st.resource_id);
  if (samples != samples_.end() && !samples->second.empty()) {
    const Sample& last = samples->second.back();
    st.facts["cpu_pct"] = absl::StrCat(last.cpu_percent);
    st.facts["memory_bytes"] = absl::StrCat(last.memory_bytes);
    st.facts["memory_pct"] = absl::StrCat(last.memory_percent);
    st.facts["sampled_at"] = core::FormatRfc3339(last.at);
  }
  return st;
}

absl::StatusOr<core::FleetLogExcerpt> DockerFleet::ReadLogs(std::string_view id,
                                                            const core::FleetLogQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateLogQuery(query));
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, GetResource(id));
  if (!IsContainerId(id)) {
    return absl::FailedPreconditionError(
        absl::StrCat(core::ToAbsl(id), " has no log of its own here; read a container's"));
  }
  LogQuery logs;
  logs.tail = query.max_lines;
  logs.since = query.since;
  logs.bounds.max_lines = query.max_lines;
  logs.bounds.max_bytes = std::max<std::size_t>(query.max_bytes * 2, 4096);
  {
    absl::MutexLock lock(&mu_);
    counters_.engine_calls += 2;  // Logs inspects for the TTY, then reads
  }
  absl::StatusOr<LogResult> result = engine_->Logs(r.attributes["container_id"], logs);
  if (!result.ok()) {
    if (EngineErrorKindOf(result.status()) == EngineErrorKind::kNotFound) {
      return absl::NotFoundError(absl::StrCat("no container with id '", core::ToAbsl(id), "'"));
    }
    return result.status();
  }
  std::vector<internal::TimedLine> lines;
  for (LogLine& line : result->lines) {
    lines.push_back({line.time.value_or(absl::UnixEpoch()),
                     line.stream == LogStream::kStderr ? absl::StrCat("[stderr] ", line.text)
                                                       : std::move(line.text)});
  }
  core::FleetLogExcerpt excerpt = internal::ExcerptLines(lines, query);
  excerpt.truncated = excerpt.truncated || result->truncated;
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
  const bool known_metric =
      query.metric == "cpu" || query.metric == "memory" || query.metric == "memory_pct";
  if (!IsContainerId(id) || !known_metric) {
    PULSE_RETURN_IF_ERROR(GetResource(id).status());
    return absl::NotFoundError(
        absl::StrCat(core::ToAbsl(id), " records no metric '", core::ToAbsl(query.metric), "'"));
  }
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, GetResource(id));
  if (options_.sample_interval <= absl::ZeroDuration()) {
    bool due = true;
    {
      absl::MutexLock lock(&mu_);
      auto it = samples_.find(r.id);
      due = it == samples_.end() || it->second.empty() ||
            absl::Now() - it->second.back().at >= absl::Seconds(1);
    }
    if (due) {
      PULSE_RETURN_IF_ERROR(GetStatus(id).status());  // samples when the container runs
    }
  }
  core::FleetMetricSeries series;
  series.resource_id = r.id;
  series.metric = query.metric;
  series.unit = query.metric == "memory" ? "bytes" : "percent";
  std::vector<core::FleetMetricPoint> points;
  {
    absl::MutexLock lock(&mu_);
    auto it = samples_.find(series.resource_id);
    if (it != samples_.end()) {
      for (const Sample& sample : it->second) {
        points.push_back({sample.at, query.metric == "cpu"      ? sample.cpu_percent
                                     : query.metric == "memory" ? sample.memory_bytes
                                                                : sample.memory_percent});
      }
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
  PULSE_ASSIGN_OR_RETURN(core::FleetResource r, GetResource(id));
  if (!IsContainerId(id)) {
    return std::vector<core::Capability>{};
  }
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView(options_.max_staleness));
  auto it = view->containers.find(r.id);
  if (it == view->containers.end()) {
    return absl::NotFoundError(absl::StrCat("no resource with id '", core::ToAbsl(id), "'"));
  }
  return CatalogueFor(it->second);
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
  MarkChanged(d.id);  // the next read re-inspects it
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
