#include "pulse/adapters/proxmox/pbs_fleet.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "pulse/adapters/proxmox/pbs_api.h"
#include "pulse/adapters/proxmox/pve_api.h"
#include "pulse/core/agent/fleet_queries.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::proxmox {
namespace {

constexpr char kTechnology[] = "proxmox-backup";
constexpr char kUsageMetric[] = "usage";

// Datastore names are [A-Za-z0-9][A-Za-z0-9._-]* (pbs-api-types' SAFE_ID); anything else cannot
// be part of a canonical id and is left out of the fleet (never an id built from hostile text).
bool IsSafeName(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return false;
  }
  for (const char c : name) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) {
      return false;
    }
  }
  return absl::ascii_isalnum(static_cast<unsigned char>(name.front()));
}

bool IsDigits(std::string_view text) {
  return !text.empty() && text.size() <= 12 && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

double Percent(std::uint64_t used, std::uint64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(used) / static_cast<double>(total);
}

std::string PctText(double value) { return absl::StrFormat("%.1f", value); }

core::FleetResource Base(std::string id, std::string type, std::string name, std::string status) {
  core::FleetResource r;
  r.id = std::move(id);
  r.type = std::move(type);
  r.name = std::move(name);
  r.status = std::move(status);
  r.technology = kTechnology;
  return r;
}

// The datastore a job task ran on: a garbage collection's worker id is the datastore, a
// verification or prune job's is STORE:JOB-ID.
std::string TaskStore(const PbsTask& task) {
  const std::size_t colon = task.worker_id.find(':');
  return task.worker_id.substr(0, colon);
}

// The fact prefix of the job kinds the source reports ("" for the others: backups, syncs,
// manual verifies, ...).
std::string_view JobKind(std::string_view worker_type) {
  if (worker_type == "garbage_collection") {
    return "gc";
  }
  if (worker_type == "verificationjob") {
    return "verify_job";
  }
  if (worker_type == "prunejob") {
    return "prune_job";
  }
  return "";
}

// A finished task that did not succeed: PBS ends a task with "OK", "WARNINGS: N" or the error's
// text ("unknown" when it lost track of the task).
bool TaskFailed(std::string_view status) {
  return !status.empty() && status != "OK" && status != "unknown" &&
         !absl::StartsWith(core::ToAbsl(status), "WARNINGS");
}

struct Group {
  std::string type, id;
  std::int64_t newest = 0;
  std::uint64_t newest_size = 0;
  std::string verify_state;
  std::size_t snapshots = 0;
};

}  // namespace

PbsFleet::PbsFleet(PbsFleetOptions options, std::unique_ptr<PveClient> client, std::string version)
    : options_(std::move(options)), client_(std::move(client)), version_(std::move(version)) {}

absl::StatusOr<std::unique_ptr<PbsFleet>> PbsFleet::Open(PbsFleetOptions options) {
  if (!core::IsCanonicalResourceId(absl::StrCat("pbs:", options.source_name)) ||
      !IsSafeName(options.source_name)) {
    return absl::InvalidArgumentError(
        "a proxmox-backup source needs a name of a-z, 0-9 and '-' for its resource ids");
  }
  options.client.api = ProxmoxApi::kBackupServer;
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<PveClient> client, PveClient::Open(options.client));
  PULSE_ASSIGN_OR_RETURN(const std::string body, client->Get("/version"));
  PULSE_ASSIGN_OR_RETURN(const PbsVersion version, DecodePbsVersion(body));
  const std::string text =
      version.release.empty()
          ? Printable(version.version, 32)
          : absl::StrCat(Printable(version.version, 32), ".", Printable(version.release, 16));
  std::unique_ptr<PbsFleet> fleet(new PbsFleet(std::move(options), std::move(client), text));
  {
    absl::MutexLock refresh(&fleet->refresh_mu_);
    PULSE_RETURN_IF_ERROR(fleet->Refresh().status());
  }
  return fleet;
}

absl::StatusOr<std::shared_ptr<const PbsFleet::View>> PbsFleet::CurrentView() {
  {
    absl::ReaderMutexLock lock(&mu_);
    if (view_ != nullptr && absl::Now() - view_->at < options_.max_staleness) {
      return view_;
    }
  }
  absl::MutexLock refresh(&refresh_mu_);
  {
    absl::ReaderMutexLock lock(&mu_);
    if (view_ != nullptr && absl::Now() - view_->at < options_.max_staleness) {
      return view_;  // another reader refreshed meanwhile
    }
  }
  return Refresh();
}

absl::StatusOr<PbsFleet::Jobs> PbsFleet::ReadJobs() const {
  Jobs jobs;
  // One read per job type: on a busy server hundreds of backup tasks run between two weekly
  // garbage collections, so the newest N tasks of every type would miss them.
  for (const char* type : {"garbage_collection", "verificationjob", "prunejob"}) {
    absl::StatusOr<std::string> body = client_->Get(
        absl::StrCat("/nodes/localhost/tasks?typefilter=", type, "&limit=", options_.max_tasks));
    // A token PBS refuses the task list leaves the job facts absent, not failed.
    if (absl::IsPermissionDenied(body.status())) {
      jobs.readable = false;
      return jobs;
    }
    if (!body.ok()) {
      return body.status();
    }
    PULSE_ASSIGN_OR_RETURN(const std::vector<PbsTask> tasks, DecodeTasks(*body));
    for (const PbsTask& t : tasks) {
      // PBS's typefilter matches a part of the type: only the exact job types count.
      const std::string_view kind = JobKind(t.worker_type);
      if (kind.empty() || t.endtime <= 0 || t.status.empty()) {
        continue;  // not a job the source reports, or still running
      }
      PbsTask& newest = jobs.newest[{TaskStore(t), std::string(kind)}];
      if (t.endtime >= newest.endtime) {
        newest = t;
      }
    }
  }
  return jobs;
}

absl::StatusOr<std::size_t> PbsFleet::AddGroups(View& view, const std::string& store,
                                                const std::string& store_id,
                                                core::FleetStatus& store_status) const {
  // Backup groups of the root namespace (namespaces are later work).
  absl::StatusOr<std::string> body =
      client_->Get(absl::StrCat("/admin/datastore/", EncodePathSegment(store), "/snapshots"));
  if (absl::IsNotFound(body.status())) {
    return 0;  // removed since the usage listing
  }
  if (!body.ok()) {
    return body.status();
  }
  PULSE_ASSIGN_OR_RETURN(const std::vector<PbsSnapshot> snapshots, DecodeSnapshots(*body));
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (const PbsSnapshot& s : snapshots) {
    Group& g = groups[{s.backup_type, s.backup_id}];
    g.type = s.backup_type;
    g.id = s.backup_id;
    ++g.snapshots;
    if (s.backup_time >= g.newest) {
      g.newest = s.backup_time;
      g.newest_size = s.size;
      g.verify_state = s.verify_state;
    }
  }
  const std::int64_t now_s = absl::ToUnixSeconds(view.at);
  const std::int64_t max_age = absl::ToInt64Seconds(options_.backup_max_age);
  std::size_t listed = 0;
  std::size_t failed_verifications = 0;
  for (const auto& [key, g] : groups) {
    const bool guest = g.type == "vm" || g.type == "ct";
    const std::string id =
        absl::StrCat("backup-group:", options_.source_name, "/", store, "/", g.type, "/", g.id);
    if ((guest ? !IsDigits(g.id) : !IsSafeName(g.id)) || !core::IsCanonicalResourceId(id)) {
      continue;  // never an id built from hostile text
    }
    ++listed;
    const std::int64_t age = std::max<std::int64_t>(0, now_s - g.newest);
    core::FleetResource r = Base(id, "backup-group", absl::StrCat(g.type, "/", g.id, " on ", store),
                                 age > max_age ? "stale" : "ok");
    r.parent_id = store_id;
    r.attributes["datastore"] = store;
    r.attributes["backup_type"] = g.type;
    r.attributes["backup_id"] = g.id;
    core::FleetStatus gs;
    gs.resource_id = id;
    gs.status = r.status;
    gs.observed_at = view.at;
    if (guest) {
      // The id the proxmox-ve source gives the guest this group backs up.
      r.attributes["guest"] = absl::StrCat(g.type == "vm" ? "vm:" : "lxc:", g.id);
      gs.facts["guest"] = r.attributes["guest"];
    }
    gs.facts["backup_type"] = g.type;
    gs.facts["backup_id"] = g.id;
    gs.facts["snapshots"] = absl::StrCat(g.snapshots);
    gs.facts["last_backup_time"] = absl::StrCat(g.newest);
    gs.facts["last_backup_age_seconds"] = absl::StrCat(age);
    gs.facts["backup_max_age_seconds"] = absl::StrCat(max_age);
    gs.facts["last_backup_size_bytes"] = absl::StrCat(g.newest_size);
    gs.facts["verify_state"] = g.verify_state.empty() ? "none" : Printable(g.verify_state, 32);
    if (g.verify_state == "failed") {
      ++failed_verifications;
    }
    gs.summary = absl::StrCat(r.name, ": newest snapshot ", age / 3600, " h old (", g.snapshots,
                              " snapshots), verification ", gs.facts["verify_state"]);
    view.relationships.push_back({id, store_id, "member_of"});
    view.statuses[id] = std::move(gs);
    view.resources[id] = std::move(r);
  }
  store_status.facts["failed_verifications"] = absl::StrCat(failed_verifications);
  return listed;
}

absl::StatusOr<bool> PbsFleet::AddDatastore(View& view, const PbsDatastoreUsage& usage,
                                            const Jobs& jobs) {
  const std::string id = absl::StrCat("datastore:", options_.source_name, "/", usage.store);
  const bool available = usage.error.empty();
  core::FleetResource store = Base(id, "datastore", usage.store, available ? "available" : "error");
  store.parent_id = absl::StrCat("pbs:", options_.source_name);
  store.attributes["store"] = usage.store;
  core::FleetStatus facts;
  facts.resource_id = id;
  facts.status = store.status;
  facts.observed_at = view.at;
  facts.facts["total_bytes"] = absl::StrCat(usage.total);
  facts.facts["used_bytes"] = absl::StrCat(usage.used);
  facts.facts["avail_bytes"] = absl::StrCat(usage.avail);
  std::string state = "usage unknown";  // PBS reports no total for it
  if (!available) {
    facts.facts["error"] = Printable(usage.error, 200);
    state = absl::StrCat("unavailable (", facts.facts["error"], ")");
  } else if (usage.total > 0) {
    const double pct = Percent(usage.used, usage.total);
    facts.facts["usage_pct"] = PctText(pct);
    state = absl::StrCat(facts.facts["usage_pct"], "% used");
    Record(id, view.at, pct);
  }
  std::vector<std::string> failed;
  for (const char* kind : {"gc", "verify_job", "prune_job"}) {
    const auto job = jobs.newest.find({usage.store, kind});
    if (job == jobs.newest.end()) {
      continue;
    }
    const std::string status = Printable(job->second.status, 200);
    facts.facts[absl::StrCat(kind, "_status")] = status;
    facts.facts[absl::StrCat(kind, "_time")] = absl::StrCat(job->second.endtime);
    if (TaskFailed(job->second.status)) {
      failed.push_back(absl::StrCat(kind, ": ", status));
    }
  }
  // An unavailable datastore answers no snapshots; its groups are not listed rather than
  // guessed at.
  std::size_t groups = 0;
  if (available) {
    PULSE_ASSIGN_OR_RETURN(groups, AddGroups(view, usage.store, id, facts));
  }
  facts.facts["backup_groups"] = absl::StrCat(groups);
  if (const auto bad = facts.facts.find("failed_verifications");
      bad != facts.facts.end() && bad->second != "0") {
    failed.push_back(
        absl::StrCat(bad->second, " group(s) whose newest snapshot failed verification"));
  }
  facts.summary =
      absl::StrCat("datastore ", usage.store, ": ", state, ", ", groups, " backup groups",
                   failed.empty() ? "" : absl::StrCat("; failed: ", absl::StrJoin(failed, "; ")));
  view.relationships.push_back({id, store.parent_id, "member_of"});
  view.statuses[id] = std::move(facts);
  view.resources[id] = std::move(store);
  return !failed.empty();
}

absl::StatusOr<std::shared_ptr<const PbsFleet::View>> PbsFleet::Refresh() {
  PULSE_ASSIGN_OR_RETURN(const std::string usage_body, client_->Get("/status/datastore-usage"));
  PULSE_ASSIGN_OR_RETURN(const std::vector<PbsDatastoreUsage> usages,
                         DecodeDatastoreUsage(usage_body));
  PULSE_ASSIGN_OR_RETURN(const Jobs jobs, ReadJobs());
  auto view = std::make_shared<View>();
  view->at = absl::Now();
  std::size_t failing = 0;
  std::size_t listed = 0;
  for (const PbsDatastoreUsage& u : usages) {
    // A store listed twice keeps its first entry; a name unfit for an id is left out.
    if (!IsSafeName(u.store) || view->resources.count(absl::StrCat(
                                    "datastore:", options_.source_name, "/", u.store)) != 0) {
      continue;
    }
    PULSE_ASSIGN_OR_RETURN(const bool failed, AddDatastore(*view, u, jobs));
    failing += failed ? 1 : 0;
    ++listed;
  }
  const std::string server_id = absl::StrCat("pbs:", options_.source_name);
  core::FleetResource server = Base(server_id, "pbs", options_.source_name, "online");
  server.attributes["host"] = client_->host();
  server.attributes["version"] = version_;
  core::FleetStatus ss;
  ss.resource_id = server_id;
  ss.status = "online";
  ss.observed_at = view->at;
  ss.facts["pbs_version"] = version_;
  ss.facts["datastores"] = absl::StrCat(listed);
  ss.facts["datastores_with_failures"] = absl::StrCat(failing);
  ss.facts["tasks_readable"] = jobs.readable ? "true" : "false";
  ss.summary =
      absl::StrCat("Proxmox Backup Server ", version_, " at ", client_->host(), ": ", listed,
                   " datastores", jobs.readable ? "" : " (its task list is refused: Sys.Audit)");
  view->statuses[server_id] = std::move(ss);
  view->resources[server_id] = std::move(server);
  absl::MutexLock lock(&mu_);
  view_ = view;
  return std::shared_ptr<const View>(view);
}

void PbsFleet::Record(const std::string& id, absl::Time at, double value) {
  absl::MutexLock lock(&mu_);
  std::deque<core::FleetMetricPoint>& points = samples_[id];
  points.push_back({at, value});
  while (points.size() > options_.max_samples) {
    points.pop_front();
  }
}

absl::StatusOr<std::vector<core::FleetResource>> PbsFleet::ListResources(
    const core::FleetResourceQuery& query) {
  PULSE_RETURN_IF_ERROR(core::fleetq::ValidateResourceQuery(query));
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  std::vector<core::FleetResource> out;
  for (const auto& [id, r] : view->resources) {
    if (out.size() >= query.limit) {
      break;
    }
    if (core::fleetq::MatchesQuery(r, query)) {
      out.push_back(r);
    }
  }
  return out;
}

absl::StatusOr<core::FleetResource> PbsFleet::GetResource(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  const auto it = view->resources.find(std::string(id));
  if (it == view->resources.end()) {
    return absl::NotFoundError("no such Proxmox Backup Server resource");
  }
  return it->second;
}

absl::StatusOr<core::FleetTopology> PbsFleet::GetTopology(const core::FleetTopologyQuery& query) {
  PULSE_RETURN_IF_ERROR(core::fleetq::ValidateTopologyQuery(query));
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  if (!query.root_id.empty() && view->resources.count(query.root_id) == 0) {
    return absl::NotFoundError("no such Proxmox Backup Server resource");
  }
  return core::fleetq::BuildTopology(view->resources, view->relationships, query);
}

absl::StatusOr<core::FleetStatus> PbsFleet::GetStatus(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  const auto it = view->statuses.find(std::string(id));
  if (it == view->statuses.end()) {
    return absl::NotFoundError("no such Proxmox Backup Server resource");
  }
  return it->second;
}

absl::StatusOr<core::FleetLogExcerpt> PbsFleet::ReadLogs(std::string_view id,
                                                         const core::FleetLogQuery& query) {
  PULSE_RETURN_IF_ERROR(core::fleetq::ValidateLogQuery(query));
  PULSE_ASSIGN_OR_RETURN(core::FleetResource resource, GetResource(id));
  return absl::FailedPreconditionError(
      absl::StrCat("the proxmox-backup source reads no logs of ", resource.id, " yet"));
}

absl::StatusOr<core::FleetConfig> PbsFleet::ReadConfig(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(core::FleetResource resource, GetResource(id));
  core::FleetConfig config;
  config.format = "text";
  std::vector<std::string> lines;
  lines.push_back(absl::StrCat("id: ", resource.id));
  lines.push_back(absl::StrCat("status: ", resource.status));
  for (const auto& [key, value] : resource.attributes) {
    lines.push_back(absl::StrCat(key, ": ", value));
  }
  config.content = absl::StrJoin(lines, "\n");
  return config;
}

absl::StatusOr<core::FleetMetricSeries> PbsFleet::ReadMetricHistory(
    std::string_view id, const core::FleetMetricQuery& query) {
  PULSE_ASSIGN_OR_RETURN(core::FleetResource resource, GetResource(id));
  PULSE_RETURN_IF_ERROR(core::fleetq::ValidateMetricQuery(query));
  if (resource.type != "datastore" || query.metric != kUsageMetric) {
    return absl::NotFoundError(absl::StrCat(resource.id, " records no metric ",
                                            Printable(query.metric, 64),
                                            " (datastores record usage)"));
  }
  core::FleetMetricSeries series;
  series.resource_id = resource.id;
  series.metric = query.metric;
  series.unit = "percent";
  std::vector<core::FleetMetricPoint> points;
  {
    absl::ReaderMutexLock lock(&mu_);
    const auto it = samples_.find(resource.id);
    if (it != samples_.end()) {
      points.assign(it->second.begin(), it->second.end());
    }
  }
  series.points = core::fleetq::SelectPoints(points, query);
  return series;
}

absl::StatusOr<std::vector<core::Capability>> PbsFleet::ListCapabilities(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(core::FleetResource resource, GetResource(id));
  return std::vector<core::Capability>{};
}

absl::StatusOr<core::DispatchReceipt> PbsFleet::Dispatch(const core::DispatchRequest& request) {
  PULSE_ASSIGN_OR_RETURN(core::FleetResource resource, GetResource(request.resource_id));
  return absl::FailedPreconditionError(absl::StrCat(
      "the proxmox-backup source is read-only: ", resource.id, " offers no capabilities"));
}

absl::StatusOr<core::PostconditionObservation> PbsFleet::ObservePostcondition(
    const core::PostconditionQuery& query) {
  PULSE_ASSIGN_OR_RETURN(core::FleetResource resource, GetResource(query.resource_id));
  return absl::FailedPreconditionError(absl::StrCat(
      "the proxmox-backup source is read-only: ", resource.id, " has no postconditions"));
}

}  // namespace pulse::proxmox
