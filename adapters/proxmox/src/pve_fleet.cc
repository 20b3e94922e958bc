#include "pulse/adapters/proxmox/pve_fleet.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "pulse/core/agent/fleet_queries.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"
#include "pve_tasks.h"

namespace pulse::proxmox {
namespace {

constexpr char kTechnology[] = "proxmox";

// PVE node and storage names are [A-Za-z0-9][A-Za-z0-9._-]*; anything else cannot be part of a
// canonical id and is left out of the fleet (never an id built from hostile text).
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

double Percent(std::uint64_t used, std::uint64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(used) / static_cast<double>(total);
}

std::string PctText(double value) { return absl::StrFormat("%.1f", value); }

core::FleetResource Base(std::string id, std::string type, std::string name, std::string status) {
  core::FleetResource r;
  r.id = std::move(id);
  r.type = std::move(type);
  r.name = std::move(name);
  r.status = status.empty() ? "unknown" : std::move(status);
  r.technology = kTechnology;
  return r;
}

}  // namespace

PveFleet::PveFleet(PveFleetOptions options, std::unique_ptr<PveClient> client,
                   std::unique_ptr<PveClient> observer, std::string version)
    : options_(std::move(options)),
      client_(std::move(client)),
      observer_(std::move(observer)),
      version_(std::move(version)),
      executor_id_(absl::StrCat("pve:", client_->host())) {}

absl::StatusOr<std::unique_ptr<PveFleet>> PveFleet::Open(PveFleetOptions options) {
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<PveClient> client, PveClient::Open(options.client));
  PULSE_ASSIGN_OR_RETURN(std::unique_ptr<PveClient> observer, PveClient::Open(options.client));
  PULSE_ASSIGN_OR_RETURN(const std::string body, client->Get("/version"));
  PULSE_ASSIGN_OR_RETURN(const PveVersion version, DecodeVersion(body));
  std::unique_ptr<PveFleet> fleet(
      new PveFleet(std::move(options), std::move(client), std::move(observer), version.version));
  {
    absl::MutexLock refresh(&fleet->refresh_mu_);
    PULSE_RETURN_IF_ERROR(fleet->Refresh().status());
  }
  return fleet;
}

void PveFleet::FollowCluster() {
  followed_at_ = absl::Now();
  absl::StatusOr<PveClient::FollowResult> followed = client_->Follow();
  if (!followed.ok()) {
    // A token without Sys.Audit on / cannot read /cluster/status: the configured URL only.
    follow_problems_.clear();
    follow_problems_[""] = std::string(followed.status().message());
    return;
  }
  observer_->AdoptEndpoints(followed->endpoints);
  follow_problems_.clear();
  for (const std::string& skipped : followed->skipped) {
    const std::size_t colon = skipped.find(": ");
    follow_problems_[skipped.substr(0, colon)] =
        colon == std::string::npos ? "" : skipped.substr(colon + 2);
  }
}

absl::StatusOr<std::shared_ptr<const PveFleet::View>> PveFleet::CurrentView() {
  const absl::Time now = absl::Now();
  {
    absl::ReaderMutexLock lock(&mu_);
    if (view_ != nullptr && now - view_->at < options_.max_staleness) {
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

absl::StatusOr<std::shared_ptr<const PveFleet::View>> PveFleet::Refresh() {
  if (options_.follow_cluster && absl::Now() - followed_at_ >= options_.follow_interval) {
    FollowCluster();
  }
  PULSE_ASSIGN_OR_RETURN(const std::string body, client_->Get("/cluster/resources"));
  PULSE_ASSIGN_OR_RETURN(const std::vector<PveClusterResource> listed,
                         DecodeClusterResources(body));
  // The HA manager's wishes; a cluster without HA (or a token without Sys.Audit) has none.
  std::map<std::string, std::string> ha_state;
  if (absl::StatusOr<std::string> ha = client_->Get("/cluster/ha/status/current"); ha.ok()) {
    if (absl::StatusOr<std::vector<PveHaService>> services = DecodeHaStatus(*ha); services.ok()) {
      for (const PveHaService& s : *services) {
        ha_state[s.sid] = s.request_state.empty() ? s.state : s.request_state;
      }
    }
  }
  const std::vector<PveEndpoint> endpoints = client_->Endpoints();
  // The backup jobs and the recent tasks, best effort like HA: a token without Sys.Audit on /
  // reads neither, and the rest of the cluster stays readable.
  std::vector<PveBackupJob> jobs;
  if (absl::StatusOr<std::string> b = client_->Get("/cluster/backup"); b.ok()) {
    if (absl::StatusOr<std::vector<PveBackupJob>> decoded = DecodeBackupJobs(*b); decoded.ok()) {
      jobs = *std::move(decoded);
    }
  }
  std::optional<std::vector<PveTask>> tasks;
  if (absl::StatusOr<std::string> t = client_->Get("/cluster/tasks"); t.ok()) {
    if (absl::StatusOr<std::vector<PveTask>> decoded = DecodeClusterTasks(*t); decoded.ok()) {
      tasks = *std::move(decoded);
    }
  }
  auto view = std::make_shared<View>();
  view->at = absl::Now();
  std::vector<std::pair<std::string, std::pair<std::string, double>>> samples;
  const auto sample = [&samples](const std::string& id, const char* metric, double value) {
    samples.push_back({id, {metric, value}});
  };
  for (const PveClusterResource& r : listed) {
    if (!IsSafeName(r.node)) {
      continue;
    }
    const std::string node_id = absl::StrCat("node:", r.node);
    if (r.type == "node") {
      core::FleetResource node = Base(node_id, "node", r.node, r.status);
      node.attributes["cpus"] = absl::StrCat(r.maxcpu);
      node.attributes["memory_total_bytes"] = absl::StrCat(r.maxmem);
      node.attributes["uptime_seconds"] = absl::StrCat(r.uptime);
      // Which node's API the source reads through, and which others it can go on to.
      for (const PveEndpoint& e : endpoints) {
        if (e.node == r.node) {
          node.attributes["api_endpoint"] = e.url;
          node.attributes["api_in_use"] = e.current ? "true" : "false";
        }
      }
      if (const auto problem = follow_problems_.find(r.node); problem != follow_problems_.end()) {
        node.attributes["api_endpoint_problem"] = problem->second;
      }
      view->resources[node.id] = std::move(node);
      if (r.status == "online") {
        sample(node_id, "cpu", 100.0 * r.cpu);
        sample(node_id, "memory", Percent(r.mem, r.maxmem));
        sample(node_id, "disk", Percent(r.disk, r.maxdisk));
      }
      continue;
    }
    if (r.type == "storage") {
      if (!IsSafeName(r.storage)) {
        continue;
      }
      const std::string id = absl::StrCat("storage:", r.node, "/", r.storage);
      core::FleetResource s = Base(id, "storage", r.storage, r.status);
      s.parent_id = node_id;
      s.attributes["node"] = r.node;
      s.attributes["plugin_type"] = r.plugintype;
      s.attributes["content"] = r.content;
      s.attributes["shared"] = r.shared ? "1" : "0";
      core::FleetStatus facts;
      facts.resource_id = id;
      facts.status = s.status;
      facts.facts["total_bytes"] = absl::StrCat(r.maxdisk);
      facts.facts["used_bytes"] = absl::StrCat(r.disk);
      if (r.maxdisk > 0) {
        facts.facts["usage_pct"] = PctText(Percent(r.disk, r.maxdisk));
        sample(id, "usage", Percent(r.disk, r.maxdisk));
      }
      facts.summary = absl::StrCat(r.storage, " on ", r.node, " (", r.plugintype, "): ", s.status,
                                   ", ", PctText(Percent(r.disk, r.maxdisk)), "% used");
      view->listed[id] = std::move(facts);
      view->relationships.push_back({id, node_id, "member_of"});
      view->resources[id] = std::move(s);
      continue;
    }
    // qemu or lxc
    const std::string id = absl::StrCat(r.type == "qemu" ? "vm:" : "lxc:", r.vmid);
    if (!core::IsCanonicalResourceId(id)) {
      continue;
    }
    core::FleetResource g = Base(id, r.type == "qemu" ? "vm" : "lxc",
                                 r.name.empty() ? absl::StrCat(r.vmid) : r.name, r.status);
    g.parent_id = node_id;
    const std::string sid = absl::StrCat(r.type == "qemu" ? "vm:" : "ct:", r.vmid);
    const auto ha = ha_state.find(sid);
    const std::string wanted = ha != ha_state.end() ? ha->second : r.hastate;
    g.revision = absl::StrCat("lock=", r.lock, ";ha=", wanted);
    g.attributes["vmid"] = absl::StrCat(r.vmid);
    g.attributes["node"] = r.node;
    g.attributes["cpus"] = absl::StrCat(r.maxcpu);
    g.attributes["memory_total_bytes"] = absl::StrCat(r.maxmem);
    if (!r.lock.empty()) {
      g.attributes["lock"] = r.lock;
    }
    if (!wanted.empty()) {
      g.attributes["ha_state"] = wanted;
    }
    if (r.is_template) {
      g.attributes["template"] = "1";
    }
    if (!r.tags.empty()) {
      g.attributes["tags"] = r.tags;
    }
    if (r.status == "running") {
      sample(id, "cpu", 100.0 * r.cpu);
      sample(id, "memory", Percent(r.mem, r.maxmem));
      if (r.disk > 0) {
        sample(id, "disk", Percent(r.disk, r.maxdisk));
      }
    }
    view->guests[id] = Guest{r.node, r.type, r.vmid, r.is_template};
    view->relationships.push_back({id, node_id, "runs_on"});
    view->resources[id] = std::move(g);
  }
  // A guest or storage whose node the listing did not name still needs its parent. One whose
  // node is not online says so: PVE lists it as "unknown" then, and the node's state is why.
  for (auto& [id, resource] : view->resources) {
    if (resource.parent_id.empty()) {
      continue;
    }
    const auto parent = view->resources.find(resource.parent_id);
    if (parent == view->resources.end()) {
      resource.parent_id.clear();
    } else if (parent->second.status != "online") {
      resource.attributes["node_status"] = parent->second.status;
    }
  }
  view->tasks = tasks.value_or(std::vector<PveTask>{});
  const View& built = *view;
  const GuestIdOf guest_id = [&built](std::int64_t vmid) -> std::string {
    for (const char* prefix : {"vm:", "lxc:"}) {
      if (std::string id = absl::StrCat(prefix, vmid); built.guests.count(id) != 0) {
        return id;
      }
    }
    return "";
  };
  for (const PveBackupJob& job : jobs) {
    std::optional<BackupJobResource> read =
        ReadBackupJob(options_.source_name, job, view->tasks, guest_id, view->at);
    if (!read.has_value()) {
      continue;
    }
    view->listed[read->resource.id] = read->status;
    view->relationships.insert(view->relationships.end(), read->backs_up.begin(),
                               read->backs_up.end());
    view->resources[read->resource.id] = std::move(read->resource);
  }
  std::erase_if(view->relationships, [&view](const core::FleetRelationship& e) {
    return view->resources.count(e.to_id) == 0;
  });
  if (tasks.has_value()) {
    RecordTaskChanges(*view);
  }
  RecordStateChanges(*view);
  for (const auto& [id, metric_value] : samples) {
    Record(id, metric_value.first, view->at, metric_value.second);
  }
  absl::MutexLock lock(&mu_);
  view_ = view;
  return std::shared_ptr<const View>(view);
}

std::string PveFleet::MetricKey(std::string_view id, std::string_view metric) {
  return absl::StrCat(core::ToAbsl(id), "|", core::ToAbsl(metric));
}

void PveFleet::Record(const std::string& id, const std::string& metric, absl::Time at,
                      double value) {
  absl::MutexLock lock(&mu_);
  std::deque<core::FleetMetricPoint>& points = samples_[MetricKey(id, metric)];
  points.push_back({at, value});
  while (points.size() > options_.max_samples) {
    points.pop_front();
  }
}

absl::StatusOr<std::vector<core::FleetResource>> PveFleet::ListResources(
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

absl::StatusOr<core::FleetResource> PveFleet::GetResource(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  const auto it = view->resources.find(std::string(id));
  if (it == view->resources.end()) {
    return absl::NotFoundError("no such Proxmox VE resource");
  }
  return it->second;
}

absl::StatusOr<core::FleetTopology> PveFleet::GetTopology(const core::FleetTopologyQuery& query) {
  PULSE_RETURN_IF_ERROR(core::fleetq::ValidateTopologyQuery(query));
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  if (!query.root_id.empty() && view->resources.count(query.root_id) == 0) {
    return absl::NotFoundError("no such Proxmox VE resource");
  }
  return core::fleetq::BuildTopology(view->resources, view->relationships, query);
}

absl::StatusOr<core::FleetStatus> PveFleet::GetStatus(std::string_view id) {
  PULSE_ASSIGN_OR_RETURN(std::shared_ptr<const View> view, CurrentView());
  const auto it = view->resources.find(std::string(id));
  if (it == view->resources.end()) {
    return absl::NotFoundError("no such Proxmox VE resource");
  }
  const core::FleetResource& r = it->second;
  core::FleetStatus out;
  out.resource_id = r.id;
  out.observed_at = absl::Now();
  if (r.type == "storage" || r.type == "backup-job") {
    out = view->listed.at(r.id);
    out.observed_at = view->at;
    return out;
  }
  if (r.type == "node") {
    out.status = r.status;
    if (r.status != "online") {
      out.summary = absl::StrCat("node ", r.name, " is ", r.status, " in the cluster's view");
      return out;
    }
    absl::StatusOr<std::string> body = client_->Get(absl::StrCat("/nodes/", r.name, "/status"));
    if (absl::IsUnavailable(body.status())) {
      // The cluster counts the node in, but its API does not answer through the node we talk
      // to (pveproxy's 595/596): an observation about the node, not a failed read.
      out.status = "unreachable";
      out.facts["api_error"] = Printable(core::ToStd(body.status().message()), 200);
      out.summary = absl::StrCat("node ", r.name, " is online in the cluster's view but its API ",
                                 "does not answer: ", out.facts["api_error"]);
      return out;
    }
    if (!body.ok()) {
      return body.status();
    }
    PULSE_ASSIGN_OR_RETURN(const PveNodeStatus node, DecodeNodeStatus(*body));
    out.facts["cpu_pct"] = PctText(100.0 * node.cpu);
    out.facts["memory_pct"] = PctText(Percent(node.mem_used, node.mem_total));
    out.facts["disk_pct"] = PctText(Percent(node.rootfs_used, node.rootfs_total));
    out.facts["uptime_seconds"] = absl::StrCat(node.uptime);
    out.facts["io_wait_pct"] = PctText(100.0 * node.wait);
    out.facts["pve_version"] = Printable(node.pveversion, 100);
    if (!node.loadavg.empty()) {
      out.facts["load_1m"] = absl::StrFormat("%.2f", node.loadavg.front());
    }
    out.summary = absl::StrCat("node ", r.name, " online, CPU ", out.facts["cpu_pct"], "%, memory ",
                               out.facts["memory_pct"], "%, up ", node.uptime, " s");
    return out;
  }
  const Guest& guest = view->guests.at(r.id);
  PULSE_ASSIGN_OR_RETURN(const std::string path, GuestPath(guest, "/status/current"));
  PULSE_ASSIGN_OR_RETURN(const std::string body, client_->Get(path));
  PULSE_ASSIGN_OR_RETURN(const PveGuestStatus g, DecodeGuestStatus(body));
  out.status = Printable(g.status, 32);
  out.facts["cpu_pct"] = PctText(100.0 * g.cpu);
  out.facts["memory_pct"] = PctText(Percent(g.mem, g.maxmem));
  if (g.disk > 0) {
    out.facts["disk_pct"] = PctText(Percent(g.disk, g.maxdisk));
  }
  out.facts["uptime_seconds"] = absl::StrCat(g.uptime);
  out.facts["node"] = guest.node;
  if (!g.lock.empty()) {
    out.facts["lock"] = Printable(g.lock, 32);
    // Since when: the task that holds the lock (or left it behind) in the cluster's task list.
    if (const PveTask* task = LockTask(view->tasks, guest.vmid); task != nullptr) {
      out.facts["lock_since"] = absl::FormatTime(
          absl::RFC3339_sec, absl::FromUnixSeconds(task->starttime), absl::UTCTimeZone());
      out.facts["locked_seconds"] = absl::StrCat(
          std::max<std::int64_t>(0, absl::ToUnixSeconds(out.observed_at) - task->starttime));
      out.facts["lock_task"] = Printable(task->upid, 200);
    }
  }
  if (const auto ha = r.attributes.find("ha_state"); ha != r.attributes.end()) {
    out.facts["ha_state"] = ha->second;
  }
  out.summary = absl::StrCat(
      r.type == "vm" ? "VM " : "container ", guest.vmid, " (", r.name, ") on ", guest.node, ": ",
      out.status, g.lock.empty() ? "" : absl::StrCat(", locked (", out.facts["lock"], ")"));
  return out;
}

absl::StatusOr<core::FleetLogExcerpt> PveFleet::ReadLogs(std::string_view id,
                                                         const core::FleetLogQuery& query) {
  PULSE_RETURN_IF_ERROR(core::fleetq::ValidateLogQuery(query));
  PULSE_ASSIGN_OR_RETURN(core::FleetResource resource, GetResource(id));
  return absl::FailedPreconditionError(
      absl::StrCat("the proxmox-ve source reads no logs of ", resource.id, " yet"));
}

absl::StatusOr<core::FleetConfig> PveFleet::ReadConfig(std::string_view id) {
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

absl::StatusOr<std::string> PveFleet::GuestPath(const Guest& guest, std::string_view tail) const {
  if (!IsSafeName(guest.node) || guest.vmid <= 0) {
    return absl::InternalError("a guest without a usable node or vmid");
  }
  return absl::StrCat("/nodes/", guest.node, "/", guest.kind, "/", guest.vmid, core::ToAbsl(tail));
}

void PveFleet::RecordTaskChanges(const View& view) {
  const GuestIdOf guest_id = [&view](std::int64_t vmid) -> std::string {
    for (const char* prefix : {"vm:", "lxc:"}) {
      if (std::string id = absl::StrCat(prefix, vmid); view.guests.count(id) != 0) {
        return id;
      }
    }
    return "";
  };
  std::set<std::string> finished;
  std::vector<core::FleetChange> fresh;
  for (const PveTask& task : view.tasks) {
    std::optional<core::FleetChange> change = TaskChange(task, guest_id);
    if (!change.has_value()) {
      continue;
    }
    finished.insert(task.upid);
    if (finished_tasks_.has_value() && finished_tasks_->count(task.upid) == 0) {
      fresh.push_back(*std::move(change));
    }
  }
  finished_tasks_ = std::move(finished);
  // PVE lists the newest first; the feed is in arrival order, oldest first.
  std::stable_sort(
      fresh.begin(), fresh.end(),
      [](const core::FleetChange& a, const core::FleetChange& b) { return a.at < b.at; });
  Append(std::move(fresh));
}

void PveFleet::RecordStateChanges(const View& view) {
  std::map<std::string, std::string> statuses;
  for (const auto& [id, guest] : view.guests) {
    if (const auto r = view.resources.find(id); r != view.resources.end()) {
      statuses[id] = r->second.status;
    }
  }
  std::map<std::string, double> usage;
  for (const auto& [id, listed] : view.listed) {
    const auto pct = listed.facts.find("usage_pct");
    double value = 0;
    if (id.rfind("storage:", 0) == 0 && pct != listed.facts.end() &&
        absl::SimpleAtod(pct->second, &value)) {
      usage[id] = value;
    }
  }
  std::vector<core::FleetChange> fresh;
  if (guest_status_.has_value()) {
    for (const auto& [id, status] : statuses) {
      const auto before = guest_status_->find(id);
      if (before != guest_status_->end() && before->second == "running" && status == "stopped") {
        fresh.push_back({0, view.at, id, "stop", "running -> stopped", ""});
      }
    }
    for (const auto& [id, pct] : usage) {
      const auto before = storage_usage_.find(id);
      if (before != storage_usage_.end() && before->second < kStorageThresholdPct &&
          pct >= kStorageThresholdPct) {
        fresh.push_back({0, view.at, id, "storage_threshold",
                         absl::StrCat("usage ", PctText(pct), " % crossed ",
                                      PctText(kStorageThresholdPct), " %"),
                         ""});
      }
    }
  }
  guest_status_ = std::move(statuses);
  storage_usage_ = std::move(usage);
  Append(std::move(fresh));
}

void PveFleet::Append(std::vector<core::FleetChange> fresh) {
  if (fresh.empty()) {
    return;
  }
  absl::MutexLock lock(&mu_);
  for (core::FleetChange& c : fresh) {
    c.seq = ++last_seq_;
    changes_.push_back(std::move(c));
    if (changes_.size() > core::kFleetMaxChanges) {
      changes_.pop_front();
    }
  }
}

std::vector<core::FleetChange> PveFleet::ChangesSince(std::uint64_t after_seq, std::size_t max) {
  std::vector<core::FleetChange> out;
  max = std::min(max, core::kFleetMaxChanges);
  absl::ReaderMutexLock lock(&mu_);
  for (const core::FleetChange& c : changes_) {
    if (out.size() >= max) {
      break;
    }
    if (c.seq > after_seq) {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace pulse::proxmox
