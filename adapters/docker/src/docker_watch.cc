// DockerFleet's snapshot and background work: the refresh (one listing, inspects of changed
// containers), the /events follower (changes, containers marked for a
// re-inspect, reconnects with backoff) and the stats sampler (docs/docker.md, "Snapshot,
// samples and events").
#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "docker_fleet_internal.h"
#include "pulse/adapters/docker/docker_fleet.h"
#include "pulse/core/string_view.h"

namespace pulse::docker {
namespace {

// The container events that enter the change stream; every container event marks the
// container for a re-inspect.
bool IsReportedChange(std::string_view action) {
  for (std::string_view kind :
       {"die", "oom", "restart", "start", "stop", "kill", "create", "destroy"}) {
    if (action == kind) {
      return true;
    }
  }
  return absl::StartsWith(core::ToAbsl(action), "health_status");
}

}  // namespace

bool OomKilledByEvent(const ContainerDetails& details, absl::Time oom) {
  return !details.running && details.started_at.has_value() && oom >= *details.started_at;
}

std::string ListedHealth(std::string_view status) {
  for (std::string_view health : {"(unhealthy)", "(healthy)", "(health: starting)"}) {
    if (status.find(health) != std::string_view::npos) {
      return std::string(health.substr(1, health.size() - 2));
    }
  }
  return "";
}

absl::StatusOr<std::shared_ptr<const DockerFleet::View>> DockerFleet::CurrentView(
    absl::Duration max_age) {
  {
    absl::MutexLock lock(&mu_);
    if (FreshLocked(max_age)) {
      return view_;
    }
  }
  absl::MutexLock refreshing(&refresh_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (FreshLocked(max_age)) {  // another reader refreshed it meanwhile
      return view_;
    }
  }
  return Refresh();
}

bool DockerFleet::FreshLocked(absl::Duration max_age) const {
  return view_ != nullptr && !changed_ && absl::Now() - view_->at <= max_age;
}

absl::StatusOr<std::shared_ptr<const DockerFleet::View>> DockerFleet::Refresh() {
  std::map<std::string, Entry> entries;
  std::map<std::string, bool> marked;
  std::map<std::string, absl::Time> ooms;
  const absl::Time listed_at = absl::Now();
  {
    absl::MutexLock lock(&mu_);
    entries = entries_;
    ooms = ooms_;
    marked.swap(marked_);
    changed_ = false;  // events from now on mark the next refresh
    ++counters_.refreshes;
    ++counters_.engine_calls;
  }
  absl::StatusOr<std::vector<ContainerSummary>> list = engine_->ListContainers(true);
  if (!list.ok()) {
    absl::MutexLock lock(&mu_);
    changed_ = true;
    marked_.insert(marked.begin(), marked.end());
    return list.status();
  }
  if (list->size() > core::kFleetMaxResults) {
    list->resize(core::kFleetMaxResults);
  }
  std::map<std::string, Entry> next;
  std::uint64_t inspects = 0;
  for (const ContainerSummary& summary : *list) {
    const std::string health = ListedHealth(summary.status);
    auto known = entries.find(summary.id);
    if (known != entries.end() && marked.count(summary.id) == 0 &&
        known->second.listed_state == summary.state && known->second.listed_health == health) {
      next.emplace(summary.id, std::move(known->second));
      continue;
    }
    ++inspects;
    absl::StatusOr<ContainerDetails> details = engine_->Inspect(summary.id);
    if (!details.ok()) {
      if (EngineErrorKindOf(details.status()) == EngineErrorKind::kNotFound) {
        continue;  // removed since the listing
      }
      absl::MutexLock lock(&mu_);
      changed_ = true;
      counters_.engine_calls += inspects;
      counters_.inspects += inspects;
      return details.status();
    }
    next.emplace(summary.id, Entry{*std::move(details), summary.state, health});
  }
  std::shared_ptr<const View> view = BuildView(next, ooms);
  absl::MutexLock lock(&mu_);
  counters_.engine_calls += inspects;
  counters_.inspects += inspects;
  // Forget the OOMs of containers gone before the listing (one created since is kept).
  for (auto it = ooms_.begin(); it != ooms_.end();) {
    it = next.count(it->first) == 0 && it->second < listed_at ? ooms_.erase(it) : std::next(it);
  }
  entries_ = std::move(next);
  view_ = view;
  return view;
}

std::shared_ptr<const DockerFleet::View> DockerFleet::BuildView(
    const std::map<std::string, Entry>& entries,
    const std::map<std::string, absl::Time>& ooms) const {
  auto s = std::make_shared<View>();
  s->at = absl::Now();
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
  s->resources[node.id] = node;
  for (const auto& [container_id, entry] : entries) {
    ContainerDetails details = entry.details;
    if (const auto oom = ooms.find(container_id);
        oom != ooms.end() && OomKilledByEvent(details, oom->second)) {
      details.oom_killed = true;  // the daemon's flag missed it (docs/docker.md, "OOM kills")
    }
    core::FleetResource r = ContainerResource(details, node_id_);
    s->relationships.push_back({r.id, node_id_, "runs_on"});
    const auto project = details.labels.find("com.docker.compose.project");
    if (project != details.labels.end()) {
      const std::string project_id = absl::StrCat("compose-project:", LocalPart(project->second));
      if (s->resources.count(project_id) == 0) {
        core::FleetResource p;
        p.id = project_id;
        p.type = "compose-project";
        p.name = project->second;
        p.status = "present";
        p.technology = "docker";
        p.parent_id = node_id_;
        s->resources[p.id] = p;
        s->relationships.push_back({p.id, node_id_, "runs_on"});
      }
      s->relationships.push_back({r.id, project_id, "member_of"});
      const auto service = details.labels.find("com.docker.compose.service");
      if (service != details.labels.end()) {
        const std::string service_id = absl::StrCat("compose-service:", LocalPart(project->second),
                                                    "/", LocalPart(service->second));
        if (s->resources.count(service_id) == 0) {
          core::FleetResource sv;
          sv.id = service_id;
          sv.type = "compose-service";
          sv.name = service->second;
          sv.status = "present";
          sv.technology = "docker";
          sv.parent_id = project_id;
          s->resources[sv.id] = sv;
          s->relationships.push_back({sv.id, project_id, "member_of"});
        }
        s->relationships.push_back({r.id, service_id, "member_of"});
      }
    }
    s->containers[r.id] = details;
    s->resources[r.id] = std::move(r);
  }
  return s;
}

bool DockerFleet::Wait(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&closing_), d);
  return !closing_;
}

void DockerFleet::MarkChanged(const std::string& container_id) {
  absl::MutexLock lock(&mu_);
  marked_[container_id] = true;
  changed_ = true;
}

void DockerFleet::AddChange(DockerChange change) {
  absl::MutexLock lock(&mu_);
  change.seq = next_change_++;
  changes_.push_back(std::move(change));
  while (changes_.size() > std::max<std::size_t>(options_.max_changes, 1)) {
    changes_.pop_front();
  }
}

void DockerFleet::OnEvent(const EngineEvent& event) {
  {
    absl::MutexLock lock(&mu_);
    ++counters_.events;
  }
  if (event.type != "container" || event.actor_id.empty()) {
    return;
  }
  if (event.action == "oom" || event.action == "destroy") {
    absl::MutexLock lock(&mu_);
    if (event.action == "destroy") {
      ooms_.erase(event.actor_id);
    } else {  // recorded before the mark below, so the refresh it causes sees it
      absl::Time& latest = ooms_.try_emplace(event.actor_id, event.time).first->second;
      latest = std::max(latest, event.time);
    }
  }
  // exec_create, exec_start, ... change nothing the snapshot shows.
  if (!absl::StartsWith(event.action, "exec_")) {
    MarkChanged(event.actor_id);
  }
  if (!IsReportedChange(event.action)) {
    return;
  }
  DockerChange change;
  change.at = event.time;
  change.container_id = event.actor_id;
  const auto name = event.attributes.find("name");
  change.resource_id =
      absl::StrCat("app-container:", LocalPart(name != event.attributes.end() ? name->second : ""));
  const std::size_t colon = event.action.find(':');
  change.kind = event.action.substr(0, colon);
  if (colon != std::string::npos) {
    change.detail = std::string(absl::StripAsciiWhitespace(event.action.substr(colon + 1)));
  }
  if (change.kind == "die") {
    const auto code = event.attributes.find("exitCode");
    change.detail =
        absl::StrCat("exit code ", code != event.attributes.end() ? code->second : "unknown");
  }
  AddChange(std::move(change));
}

void DockerFleet::WatchEvents() {
  absl::Time since = absl::Now();
  absl::Duration backoff = absl::Milliseconds(250);
  bool connected = true;  // Open has just talked to the daemon
  // Events at the boundary of two polls arrive twice; the previous poll's keys drop them.
  std::set<std::tuple<absl::Time, std::string, std::string>> previous;
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (closing_) {
        return;
      }
    }
    EventQuery query;
    query.since = since;
    query.until = absl::Now() + options_.events_window;
    query.filters = {{"type", "container"}};
    absl::StatusOr<EventBatch> batch = background_->Events(query);
    if (!batch.ok()) {
      {
        absl::MutexLock lock(&mu_);
        counters_.events_connected = false;
      }
      connected = false;
      if (!Wait(backoff)) {
        return;
      }
      backoff = std::min(backoff * 2, options_.max_backoff);
      continue;
    }
    if (!connected) {
      // Events may have been missed meanwhile (a restarted daemon keeps none): re-inspect all.
      connected = true;
      DockerChange lost;
      lost.at = absl::Now();
      lost.kind = "events_lost";
      lost.detail = "the Engine's event stream was re-opened; changes meanwhile are not listed";
      AddChange(std::move(lost));
      absl::MutexLock lock(&mu_);
      ++counters_.event_reconnects;
      for (const auto& [id, entry] : entries_) {
        marked_[id] = true;
      }
      changed_ = true;
    }
    {
      absl::MutexLock lock(&mu_);
      counters_.events_connected = true;
    }
    backoff = absl::Milliseconds(250);
    std::set<std::tuple<absl::Time, std::string, std::string>> seen;
    for (const EngineEvent& event : batch->events) {
      auto key = std::make_tuple(event.time, event.actor_id, event.action);
      if (previous.count(key) == 0) {
        OnEvent(event);
      }
      seen.insert(std::move(key));
    }
    previous = std::move(seen);
    if (batch->truncated && !batch->events.empty()) {
      since = batch->events.back().time;  // the rest of the window next time
    } else {
      since = std::min(query.until, absl::Now());
    }
  }
}

void DockerFleet::RecordSample(const std::string& resource_id, const ContainerStats& stats,
                               bool one_shot) {
  absl::MutexLock lock(&mu_);
  ++counters_.samples;
  Sample sample;
  sample.at = stats.read == absl::InfinitePast() ? absl::Now() : stats.read;
  if (!one_shot) {
    sample.cpu_percent = stats.cpu_percent.value_or(0);
  } else {
    // CPU % against this process's previous sample of the container (the first gives 0).
    CpuMark& mark = cpu_marks_[resource_id];
    if (mark.system != 0 && stats.system_cpu_usage > mark.system &&
        stats.cpu_total_usage >= mark.total && stats.online_cpus > 0) {
      sample.cpu_percent = static_cast<double>(stats.cpu_total_usage - mark.total) /
                           static_cast<double>(stats.system_cpu_usage - mark.system) *
                           static_cast<double>(stats.online_cpus) * 100.0;
    }
    mark = {stats.cpu_total_usage, stats.system_cpu_usage};
  }
  sample.memory_bytes = static_cast<double>(stats.memory_used);
  const std::uint64_t limit = stats.memory_limit != 0 ? stats.memory_limit : info_.memory_bytes;
  if (limit != 0) {
    sample.memory_percent =
        static_cast<double>(stats.memory_used) / static_cast<double>(limit) * 100.0;
  }
  std::deque<Sample>& samples = samples_[resource_id];
  samples.push_back(sample);
  while (samples.size() > std::max<std::size_t>(options_.max_samples, 1)) {
    samples.pop_front();
  }
}

void DockerFleet::SampleNow() {
  absl::StatusOr<std::shared_ptr<const View>> view = CurrentView(options_.max_staleness);
  if (!view.ok()) {
    return;  // the daemon is away; the next round tries again
  }
  for (const auto& [resource_id, details] : (*view)->containers) {
    if (!details.running) {
      continue;
    }
    {
      absl::MutexLock lock(&mu_);
      if (closing_) {
        return;
      }
    }
    absl::StatusOr<ContainerStats> stats = background_->Stats(details.id, /*one_shot=*/true);
    if (stats.ok()) {
      RecordSample(resource_id, *stats, /*one_shot=*/true);
    }
  }
  // Forget the samples of containers that are gone, so the history stays bounded.
  absl::MutexLock lock(&mu_);
  for (auto it = samples_.begin(); it != samples_.end();) {
    if ((*view)->containers.count(it->first) == 0) {
      cpu_marks_.erase(it->first);
      it = samples_.erase(it);
    } else {
      ++it;
    }
  }
}

void DockerFleet::RunSampler() {
  do {
    SampleNow();
  } while (Wait(options_.sample_interval));
}

std::vector<DockerChange> DockerFleet::ContainerChangesSince(std::uint64_t after_seq,
                                                             std::size_t max) const {
  absl::MutexLock lock(&mu_);
  std::vector<DockerChange> out;
  for (const DockerChange& change : changes_) {
    if (change.seq > after_seq && out.size() < max) {
      out.push_back(change);
    }
  }
  return out;
}

std::vector<core::FleetChange> DockerFleet::ChangesSince(std::uint64_t after_seq, std::size_t max) {
  std::vector<core::FleetChange> out;
  for (DockerChange& change : ContainerChangesSince(after_seq, max)) {
    core::FleetChange c;
    c.seq = change.seq;
    c.at = change.at;
    c.resource_id = std::move(change.resource_id);
    c.kind = std::move(change.kind);
    c.detail = std::move(change.detail);
    out.push_back(std::move(c));
  }
  return out;
}

DockerFleetCounters DockerFleet::Counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

}  // namespace pulse::docker
