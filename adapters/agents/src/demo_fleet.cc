#include "pulse/adapters/agents/demo_fleet.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "absl/time/clock.h"
#include "demo_model.h"
#include "fmt/format.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/tools/exec_classifier.h"

#ifndef PULSE_DEMO_FLEET_SOURCE_PATH
#define PULSE_DEMO_FLEET_SOURCE_PATH ""
#endif
#ifndef PULSE_DEMO_FLEET_INSTALL_PATH
#define PULSE_DEMO_FLEET_INSTALL_PATH ""
#endif

namespace pulse::adapters::agents {
namespace {

using internal::DemoResource;
using internal::Kind;

class RealClock final : public core::Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

absl::Status NoSuchResource(std::string_view id) {
  return absl::NotFoundError(fmt::format("no resource with id '{}'", id));
}

// The executor's identity: the agent on the node the resource runs on.
std::string ExecutorOf(const internal::DemoWorld& world, const std::string& id) {
  const std::string node = internal::HostNodeOf(world, id);
  return fmt::format("demo-agent:{}", node.empty() ? "cluster" : node.substr(node.find(':') + 1));
}

absl::Status CheckParamRanges(std::string_view params_json) {
  absl::StatusOr<rapidjson::Document> doc =
      core::ParseJson(params_json.empty() ? "{}" : params_json);
  if (!doc.ok()) {
    return absl::InvalidArgumentError("params are not valid JSON");
  }
  if (std::optional<std::int64_t> timeout = core::GetInt64(*doc, "timeout_seconds")) {
    if (*timeout < 0 || *timeout > 600) {
      return absl::InvalidArgumentError("params.timeout_seconds must be 0..600");
    }
  }
  return absl::OkStatus();
}

constexpr std::array<core::WireName<DemoFaultKind>, 7> kFaultNames = {{
    {DemoFaultKind::kExited, "exited"},
    {DemoFaultKind::kCrashLoop, "crash_loop"},
    {DemoFaultKind::kHighMemory, "high_memory"},
    {DemoFaultKind::kBackupFailed, "backup_failed"},
    {DemoFaultKind::kActionFails, "action_fails"},
    {DemoFaultKind::kDispatchHangs, "dispatch_hangs"},
    {DemoFaultKind::kDispatchThrows, "dispatch_throws"},
}};

}  // namespace

std::string_view ToString(DemoFaultKind kind) {
  return core::WireNameOf(kFaultNames, kind, "exited");
}

std::optional<DemoFaultKind> ParseDemoFaultKind(std::string_view text) {
  return core::WireValueOf(kFaultNames, text);
}

// ---- construction -----------------------------------------------------------------------

DemoFleet::DemoFleet(std::unique_ptr<internal::DemoWorld> world, DemoFleetOptions options,
                     std::unique_ptr<core::Clock> owned_clock)
    : options_(std::move(options)),
      owned_clock_(std::move(owned_clock)),
      clock_(options_.clock != nullptr ? *options_.clock : *owned_clock_),
      world_(std::move(world)),
      view_(std::make_unique<internal::ObserverView>()) {
  absl::MutexLock lock(&mu_);
  PublishLocked();
}

DemoFleet::~DemoFleet() = default;

absl::StatusOr<std::unique_ptr<DemoFleet>> DemoFleet::OpenFromJson(std::string_view json,
                                                                   DemoFleetOptions options) {
  std::unique_ptr<core::Clock> owned;
  if (options.clock == nullptr) {
    owned = std::make_unique<RealClock>();
  }
  const core::Clock& clock = options.clock != nullptr ? *options.clock : *owned;
  absl::Time end = options.history_end.value_or(
      absl::FromUnixSeconds(absl::ToUnixSeconds(clock.Now()) / 3600 * 3600));
  absl::StatusOr<internal::DemoWorld> world = internal::LoadDemoWorld(json, end);
  if (!world.ok()) {
    return world.status();
  }
  return std::unique_ptr<DemoFleet>(
      new DemoFleet(std::make_unique<internal::DemoWorld>(std::move(*world)), std::move(options),
                    std::move(owned)));
}

absl::StatusOr<std::unique_ptr<DemoFleet>> DemoFleet::Open(const std::string& path,
                                                           DemoFleetOptions options) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    const std::string message = fmt::format("cannot read the demo fleet file {}", path);
    if (error == EACCES) {
      return absl::PermissionDeniedError(message);
    }
    return absl::NotFoundError(message);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::UnavailableError(fmt::format("error reading the demo fleet file {}", path));
  }
  absl::StatusOr<std::unique_ptr<DemoFleet>> fleet = OpenFromJson(text.str(), std::move(options));
  if (!fleet.ok()) {
    return absl::Status(fleet.status().code(),
                        fmt::format("{}: {}", path, std::string(fleet.status().message())));
  }
  return fleet;
}

std::vector<std::string> DemoFleet::DefaultPaths() {
  std::vector<std::string> paths;
  for (std::string_view p : {std::string_view(PULSE_DEMO_FLEET_SOURCE_PATH),
                             std::string_view(PULSE_DEMO_FLEET_INSTALL_PATH)}) {
    if (!p.empty()) {
      paths.emplace_back(p);
    }
  }
  return paths;
}

absl::StatusOr<std::unique_ptr<DemoFleet>> DemoFleet::OpenDefault(DemoFleetOptions options) {
  std::string tried;
  for (const std::string& path : DefaultPaths()) {
    if (std::ifstream(path).good()) {
      return Open(path, std::move(options));
    }
    tried += (tried.empty() ? "" : ", ") + path;
  }
  return absl::NotFoundError(fmt::format("the demo fleet file was not found (looked in: {})",
                                         tried.empty() ? "nowhere" : tried));
}

// ---- the world --------------------------------------------------------------------------

absl::Time DemoFleet::Now() const { return clock_.Now(); }

void DemoFleet::AdvanceLocked(absl::Time now) {
  bool changed = false;
  for (auto& [id, r] : world_->resources) {
    if (r.pending.has_value() && r.pending->due <= now) {
      internal::LandChange(r, r.pending->due);
      changed = true;
    }
  }
  if (changed) {
    PublishLocked();
  }
}

void DemoFleet::PublishLocked() {
  ++listing_generation_;
  std::map<std::string, internal::ObservedState> snapshot;
  for (const auto& [id, r] : world_->resources) {
    snapshot.emplace(id, internal::ObserverSnapshot(r));
  }
  view_->Publish(std::move(snapshot));
}

// ---- reads ------------------------------------------------------------------------------

std::optional<std::uint64_t> DemoFleet::ListingGeneration() {
  absl::MutexLock lock(&mu_);
  AdvanceLocked(Now());
  return listing_generation_;
}

absl::StatusOr<std::vector<core::FleetResource>> DemoFleet::ListResources(
    const core::FleetResourceQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateResourceQuery(query));
  absl::MutexLock lock(&mu_);
  AdvanceLocked(Now());
  std::vector<core::FleetResource> out;
  for (const auto& [id, r] : world_->resources) {
    core::FleetResource view = internal::PublicView(r);
    if (internal::MatchesQuery(view, query)) {
      out.push_back(std::move(view));
      if (out.size() == query.limit) {
        break;
      }
    }
  }
  return out;
}

absl::StatusOr<core::FleetResource> DemoFleet::GetResource(std::string_view id) {
  absl::MutexLock lock(&mu_);
  AdvanceLocked(Now());
  auto it = world_->resources.find(std::string(id));
  if (it == world_->resources.end()) {
    return NoSuchResource(id);
  }
  return internal::PublicView(it->second);
}

absl::StatusOr<core::FleetTopology> DemoFleet::GetTopology(const core::FleetTopologyQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateTopologyQuery(query));
  absl::MutexLock lock(&mu_);
  AdvanceLocked(Now());
  if (!query.root_id.empty() && world_->resources.count(query.root_id) == 0) {
    return NoSuchResource(query.root_id);
  }
  std::map<std::string, core::FleetResource> views;
  for (const auto& [id, r] : world_->resources) {
    views.emplace(id, internal::PublicView(r));
  }
  return internal::BuildTopology(std::move(views), world_->relationships, query);
}

absl::StatusOr<core::FleetStatus> DemoFleet::GetStatus(std::string_view id) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = Now();
  AdvanceLocked(now);
  auto it = world_->resources.find(std::string(id));
  if (it == world_->resources.end()) {
    return NoSuchResource(id);
  }
  return internal::StatusOf(*world_, it->second, now);
}

absl::StatusOr<core::FleetLogExcerpt> DemoFleet::ReadLogs(std::string_view id,
                                                          const core::FleetLogQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateLogQuery(query));
  absl::MutexLock lock(&mu_);
  AdvanceLocked(Now());
  auto it = world_->resources.find(std::string(id));
  if (it == world_->resources.end()) {
    return NoSuchResource(id);
  }
  const DemoResource* source = &it->second;
  if (!query.source.empty()) {
    source = nullptr;
    auto names = [&](const DemoResource& r) {
      return query.source == r.base.name || query.source == r.base.id ||
             (!r.unit.empty() && query.source == r.unit);
    };
    if (names(it->second)) {
      source = &it->second;
    } else if (it->second.kind == Kind::kNode) {
      // A node also serves the journals of the units running on it.
      for (const auto& [other_id, other] : world_->resources) {
        if (other.kind == Kind::kService && other.base.parent_id == it->first && names(other)) {
          source = &other;
        }
      }
    }
    if (source == nullptr) {
      return absl::NotFoundError(fmt::format("{} has no log source '{}'", id, query.source));
    }
  }
  const std::vector<internal::TimedLine> lines(source->logs.begin(), source->logs.end());
  return internal::ExcerptLines(lines, query);
}

absl::StatusOr<core::FleetConfig> DemoFleet::ReadConfig(std::string_view id) {
  absl::MutexLock lock(&mu_);
  auto it = world_->resources.find(std::string(id));
  if (it == world_->resources.end()) {
    return NoSuchResource(id);
  }
  core::FleetConfig config;
  config.format = "json";
  config.content = it->second.config_json;
  config.redacted = it->second.config_redacted;
  if (config.content.size() > core::kFleetMaxConfigBytes) {
    config.content.resize(core::kFleetMaxConfigBytes);
    config.truncated = true;
  }
  return config;
}

absl::StatusOr<core::FleetMetricSeries> DemoFleet::ReadMetricHistory(
    std::string_view id, const core::FleetMetricQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateMetricQuery(query));
  absl::MutexLock lock(&mu_);
  AdvanceLocked(Now());
  auto it = world_->resources.find(std::string(id));
  if (it == world_->resources.end()) {
    return NoSuchResource(id);
  }
  auto series = it->second.metrics.find(query.metric);
  if (series == it->second.metrics.end()) {
    std::string known;
    for (const auto& [name, s] : it->second.metrics) {
      known += (known.empty() ? "" : ", ") + name;
    }
    return absl::NotFoundError(
        fmt::format("{} records no metric '{}' (it has: {})", id, query.metric, known));
  }
  core::FleetMetricSeries out;
  out.resource_id = it->first;
  out.metric = query.metric;
  out.unit = series->second.unit;
  out.points = internal::SelectPoints(series->second.points, query);
  return out;
}

absl::StatusOr<std::vector<core::Capability>> DemoFleet::ListCapabilities(std::string_view id) {
  absl::MutexLock lock(&mu_);
  AdvanceLocked(Now());
  auto it = world_->resources.find(std::string(id));
  if (it == world_->resources.end()) {
    return NoSuchResource(id);
  }
  return internal::CatalogueFor(it->second);
}

// ---- dispatch and observation -----------------------------------------------------------

absl::StatusOr<core::DispatchReceipt> DemoFleet::Dispatch(const core::DispatchRequest& request) {
  if (request.attempt_id.empty()) {
    return absl::InvalidArgumentError("a dispatch needs an attempt id");
  }
  bool hangs = false;
  bool throws = false;
  absl::StatusOr<core::DispatchReceipt> receipt;
  {
    absl::MutexLock lock(&mu_);
    const bool repeat = world_->receipts.count(request.attempt_id) != 0;
    receipt = DispatchLocked(request, &hangs);
    auto r = world_->resources.find(request.resource_id);
    throws = !repeat && receipt.ok() && r != world_->resources.end() &&
             r->second.faults.count(DemoFaultKind::kDispatchThrows) != 0;
  }
  if (throws) {
    // The change (if any) is recorded; then the adapter fails the way a bug would. Thrown
    // outside the lock, which is released by then.
    throw std::runtime_error(fmt::format("{} of {}: simulated adapter crash after dispatch",
                                         request.capability_name, request.resource_id));
  }
  if (hangs) {
    // The change (if any) is recorded; only the answer is lost. Waiting without the lock keeps
    // every other read and dispatch going meanwhile, as a real agent connection would.
    return HangUp(request, receipt->executor_id);
  }
  return receipt;
}

absl::StatusOr<core::DispatchReceipt> DemoFleet::DispatchLocked(
    const core::DispatchRequest& request, bool* hangs) {
  const absl::Time now = Now();
  AdvanceLocked(now);
  auto done = world_->receipts.find(request.attempt_id);
  if (done != world_->receipts.end()) {
    // Idempotent: an attempt never runs twice. One whose answer was lost is not answered
    // either while its resource keeps the fault.
    auto lost = world_->unanswered.find(request.attempt_id);
    if (lost != world_->unanswered.end()) {
      auto r = world_->resources.find(lost->second);
      *hangs = r != world_->resources.end() &&
               r->second.faults.count(DemoFaultKind::kDispatchHangs) != 0;
    }
    return done->second;
  }
  auto it = world_->resources.find(request.resource_id);
  if (it == world_->resources.end()) {
    return NoSuchResource(request.resource_id);
  }
  DemoResource& r = it->second;
  const std::vector<core::Capability> catalogue = internal::CatalogueFor(r);
  const core::Capability* capability = core::FindCapability(catalogue, request.capability_name);
  if (capability == nullptr) {
    return absl::FailedPreconditionError(
        fmt::format("{} does not offer '{}' in its current state ({})", request.resource_id,
                    request.capability_name, internal::EffectiveStatus(r)));
  }
  core::ParamValidation params = core::ValidateParams(*capability, request.params_json);
  if (!params.ok()) {
    std::string why;
    for (const auto& [field, reason] : params.errors) {
      why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", field, reason);
    }
    return absl::InvalidArgumentError(fmt::format("params refused: {}", why));
  }
  PULSE_RETURN_IF_ERROR(CheckParamRanges(params.canonical_params));

  core::DispatchReceipt receipt;
  receipt.executor_id = ExecutorOf(*world_, r.base.id);
  receipt.executor_trust_domain = receipt.executor_id;
  if (r.faults.count(DemoFaultKind::kActionFails) != 0) {
    receipt.status = core::ExecutionStatus::kFailed;
    receipt.reason_code = "simulated_failure";
    receipt.summary = fmt::format("{} of {} failed (simulated executor fault)",
                                  request.capability_name, request.resource_id);
    internal::AppendLog(r, now,
                        fmt::format("{} requested by action {} failed", request.capability_name,
                                    request.action_id));
  } else {
    r.pending = internal::PendingChange{request.capability_name, params.canonical_params,
                                        request.action_id, now, now + options_.dispatch_delay};
    ++r.revision;
    internal::AppendLog(
        r, now,
        fmt::format("{} requested by action {}", request.capability_name, request.action_id));
    PublishLocked();
    receipt.status = core::ExecutionStatus::kSucceeded;
    receipt.summary = fmt::format("{} of {} accepted by {}", request.capability_name,
                                  request.resource_id, receipt.executor_id);
    AdvanceLocked(now);  // a zero delay lands the change at once
  }
  world_->receipts.emplace(request.attempt_id, receipt);
  if (r.faults.count(DemoFaultKind::kDispatchHangs) != 0) {
    world_->unanswered.emplace(request.attempt_id, r.base.id);
    *hangs = true;
  }
  return receipt;
}

absl::Status DemoFleet::HangUp(const core::DispatchRequest& request,
                               const std::string& executor_id) {
  if (options_.sleep) {
    options_.sleep(options_.dispatch_timeout);
  } else {
    absl::SleepFor(options_.dispatch_timeout);
  }
  return absl::DeadlineExceededError(fmt::format(
      "{} of {}: no answer from {} within {}", request.capability_name, request.resource_id,
      executor_id, absl::FormatDuration(options_.dispatch_timeout)));
}

// ---- identity, exec, faults, metrics ----------------------------------------------------

absl::StatusOr<std::string> DemoFleet::ResolveReference(std::string_view reference) const {
  std::vector<internal::ReferenceCandidate> candidates;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, r] : world_->resources) {
      internal::ReferenceCandidate c{id, {r.base.name, id.substr(id.find(':') + 1)}};
      if (r.kind == Kind::kVm) {
        c.aliases.push_back(std::to_string(r.vmid));
      }
      if (r.kind == Kind::kService) {
        c.aliases.push_back(r.unit);
      }
      candidates.push_back(std::move(c));
    }
  }
  return internal::ResolveAmong(reference, candidates);
}

absl::StatusOr<core::ExecOutput> DemoFleet::RunReadOnlyCommand(std::string_view resource_id,
                                                               std::string_view command) {
  const core::ExecVerdict verdict = core::ClassifyExecCommand(command);
  if (!verdict.allowed) {
    return absl::PermissionDeniedError(
        fmt::format("{}: {}", core::ToString(verdict.refusal), verdict.reason));
  }
  absl::MutexLock lock(&mu_);
  const absl::Time now = Now();
  AdvanceLocked(now);
  auto it = world_->resources.find(std::string(resource_id));
  if (it == world_->resources.end()) {
    return NoSuchResource(resource_id);
  }
  const DemoResource* host = &it->second;
  if (host->kind == Kind::kBackupJob) {
    return absl::FailedPreconditionError(
        fmt::format("{} is a backup job; run commands on a node, VM or container", resource_id));
  }
  if (host->kind == Kind::kService || host->kind == Kind::kStorage) {
    host = &world_->resources.at(host->base.parent_id);
  }
  core::ExecOutput out = internal::SimulateCommand(*world_, *host, verdict.argv, now);
  out.output = core::MaskExecOutput(verdict.argv, out.output);
  out.simulated = true;
  if (out.output.size() > core::kMaxExecOutputBytes) {
    out.output.resize(core::kMaxExecOutputBytes);
    out.truncated = true;
  }
  return out;
}

absl::Status DemoFleet::InjectFault(std::string_view resource_id, DemoFaultKind kind,
                                    bool persistent) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = Now();
  AdvanceLocked(now);
  auto it = world_->resources.find(std::string(resource_id));
  if (it == world_->resources.end()) {
    return NoSuchResource(resource_id);
  }
  PULSE_RETURN_IF_ERROR(internal::CheckFaultApplies(it->second, kind));
  auto active = it->second.faults.find(kind);
  if (active != it->second.faults.end()) {
    active->second.persistent = persistent;
    return absl::OkStatus();
  }
  internal::ApplyFault(it->second, DemoFault{it->first, kind, persistent, now}, now);
  PublishLocked();
  return absl::OkStatus();
}

absl::Status DemoFleet::ClearFault(std::string_view resource_id, DemoFaultKind kind) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = Now();
  AdvanceLocked(now);
  auto it = world_->resources.find(std::string(resource_id));
  if (it == world_->resources.end()) {
    return NoSuchResource(resource_id);
  }
  if (it->second.faults.count(kind) == 0) {
    return absl::NotFoundError(
        fmt::format("fault {} is not active on {}", ToString(kind), resource_id));
  }
  internal::RemoveFault(it->second, kind, now);
  PublishLocked();
  return absl::OkStatus();
}

std::vector<DemoFault> DemoFleet::ActiveFaults() {
  absl::MutexLock lock(&mu_);
  AdvanceLocked(Now());
  std::vector<DemoFault> out;
  for (const auto& [id, r] : world_->resources) {
    for (const auto& [kind, fault] : r.faults) {
      out.push_back(fault);
    }
  }
  return out;
}

absl::StatusOr<std::vector<core::MetricSample>> DemoFleet::MetricSamples(std::string_view target,
                                                                         std::string_view metric,
                                                                         absl::Time start,
                                                                         absl::Time end) {
  if (target.empty() || metric.empty()) {
    return absl::InvalidArgumentError("target and metric are required");
  }
  if (end < start) {
    return absl::InvalidArgumentError("end is before start");
  }
  std::string id(target);
  {
    absl::MutexLock lock(&mu_);
    if (world_->resources.count(id) == 0) {
      id.clear();
    }
  }
  if (id.empty()) {
    absl::StatusOr<std::string> resolved = ResolveReference(target);
    if (!resolved.ok()) {
      return std::vector<core::MetricSample>();  // unknown or ambiguous: no history
    }
    id = *resolved;
  }
  absl::MutexLock lock(&mu_);
  AdvanceLocked(Now());
  std::vector<core::MetricSample> out;
  const DemoResource& r = world_->resources.at(id);
  auto series = r.metrics.find(std::string(metric));
  if (series == r.metrics.end()) {
    return out;
  }
  for (const core::FleetMetricPoint& p : series->second.points) {
    if (p.at >= start && p.at <= end) {
      out.push_back({p.at, p.value});
    }
  }
  return out;
}

absl::StatusOr<std::vector<core::MetricSample>> DemoFleetMetricsHistory::Samples(
    std::string_view target_id, std::string_view metric, absl::Time start, absl::Time end) const {
  return fleet_.MetricSamples(target_id, metric, start, end);
}

}  // namespace pulse::adapters::agents
