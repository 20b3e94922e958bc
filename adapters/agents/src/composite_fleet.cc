#include "pulse/adapters/agents/composite_fleet.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fleet_queries.h"
#include "pulse/adapters/agents/fleet_sources.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::adapters::agents {
namespace {

constexpr absl::Duration kMissRefreshInterval = absl::Seconds(1);

// Namespaced form of a source's id: <type>:@<source>/<local>.
std::string Namespaced(const core::CanonicalResourceId& id, const std::string& source) {
  return absl::StrCat(id.type, ":@", source, "/", id.local);
}

// The id is echoed only when it is canonical (hostile text stays out of messages).
absl::Status NoResource(std::string_view id) {
  return absl::NotFoundError(core::IsCanonicalResourceId(id)
                                 ? absl::StrCat("no resource ", core::ToAbsl(id))
                                 : std::string("no resource has this id (not a canonical id)"));
}

absl::Status Prefixed(const absl::Status& status, const std::string& source) {
  return absl::Status(status.code(),
                      absl::StrCat("fleet source \"", source, "\": ", status.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompositeFleet>> CompositeFleet::Create(
    std::vector<CompositeSource> sources) {
  if (sources.empty() || sources.size() > kMaxFleetSources) {
    return absl::InvalidArgumentError(
        absl::StrCat("a fleet needs 1..", kMaxFleetSources, " sources"));
  }
  std::set<std::string> names;
  for (const CompositeSource& s : sources) {
    if (!IsFleetSourceName(s.name) || !names.insert(s.name).second || s.fleet == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("fleet source \"", s.name.substr(0, 64),
                       "\": needs a unique name of a-z, 0-9 and '-' and a fleet"));
    }
  }
  std::unique_ptr<CompositeFleet> fleet(new CompositeFleet(std::move(sources)));
  fleet->Refresh();
  return fleet;
}

CompositeFleet::CompositeFleet(std::vector<CompositeSource> sources)
    : sources_(std::move(sources)) {
  {
    absl::MutexLock changes_lock(&changes_mu_);
    change_cursors_.assign(sources_.size(), 0);
  }
  absl::MutexLock lock(&mu_);
  seen_.resize(sources_.size());
  to_composite_.resize(sources_.size());
  for (const CompositeSource& s : sources_) {
    core::FleetSourceStatus state;
    state.name = s.name;
    state.kind = s.kind;
    states_.push_back(std::move(state));
  }
}

CompositeFleet::~CompositeFleet() = default;

void CompositeFleet::Refresh() {
  std::vector<absl::StatusOr<core::FleetTopology>> listed;
  listed.reserve(sources_.size());
  core::FleetTopologyQuery whole;
  whole.max_resources = core::kFleetMaxResults;
  for (CompositeSource& s : sources_) {
    listed.push_back(s.fleet->GetTopology(whole));
  }
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  // The merged view is rebuilt only when a source's listing or up state differs from what it
  // was (comparing costs no allocation; rebuilding copies and re-indexes every resource).
  bool changed = resources_.empty();
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    core::FleetSourceStatus& state = states_[i];
    if (listed[i].ok()) {
      std::optional<Seen>& seen = seen_[i];
      if (!state.up || !seen.has_value() || seen->resources != listed[i]->resources ||
          seen->relationships != listed[i]->relationships) {
        seen = Seen{std::move(listed[i]->resources), std::move(listed[i]->relationships)};
        changed = true;
      }
      state.up = true;
      state.error.clear();
      state.last_ok_at = now;
    } else {
      changed = changed || state.up;  // its resources are now listed as unknown
      state.up = false;
      state.error = std::string(listed[i].status().message()).substr(0, 512);
    }
  }
  if (changed) {
    RebuildLocked();
  }
}

void CompositeFleet::RebuildLocked() {
  ++listing_generation_;
  resources_.clear();
  relationships_.clear();
  owners_.clear();
  std::set<std::string> claimed;
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    std::map<std::string, std::string>& map = to_composite_[i];
    map.clear();
    states_[i].resources = 0;
    if (!seen_[i].has_value()) {
      continue;
    }
    // Ids first: earlier sources claim plain ids, later ones are namespaced on a collision.
    for (const core::FleetResource& r : seen_[i]->resources) {
      const std::optional<core::CanonicalResourceId> id = core::ParseCanonicalResourceId(r.id);
      if (!id.has_value()) {
        continue;  // a source breaking the port's id rule: left out rather than guessed at
      }
      std::string composite = r.id;
      if (id->local.front() == '@' || claimed.count(r.id) != 0) {
        composite = Namespaced(*id, sources_[i].name);
        if (!core::IsCanonicalResourceId(composite) || claimed.count(composite) != 0) {
          continue;  // too long once namespaced, or a duplicate inside the source
        }
      }
      claimed.insert(composite);
      map.emplace(r.id, composite);
    }
    const auto translate = [&map](const std::string& id) {
      const auto it = map.find(id);
      return it == map.end() ? id : it->second;
    };
    for (const core::FleetResource& r : seen_[i]->resources) {
      const auto it = map.find(r.id);
      if (it == map.end() || owners_.count(it->second) != 0) {
        continue;
      }
      core::FleetResource merged = r;
      merged.id = it->second;
      merged.parent_id = merged.parent_id.empty() ? "" : translate(merged.parent_id);
      merged.attributes[std::string(kSourceAttribute)] = sources_[i].name;
      if (!states_[i].up) {
        merged.status = "unknown";
      }
      owners_.emplace(merged.id, Entry{i, r.id});
      resources_.emplace(merged.id, std::move(merged));
      ++states_[i].resources;
    }
    for (const core::FleetRelationship& e : seen_[i]->relationships) {
      if (map.count(e.from_id) == 0 || map.count(e.to_id) == 0) {
        continue;
      }
      relationships_.push_back({translate(e.from_id), translate(e.to_id), e.kind});
    }
  }
}

std::optional<CompositeFleet::Entry> CompositeFleet::Find(std::string_view id) {
  if (!core::IsCanonicalResourceId(id)) {
    return std::nullopt;
  }
  {
    absl::MutexLock lock(&mu_);
    const auto it = owners_.find(id);
    if (it != owners_.end()) {
      return it->second;
    }
    const absl::Time now = absl::Now();
    if (now - last_miss_refresh_ < kMissRefreshInterval) {
      return std::nullopt;
    }
    last_miss_refresh_ = now;
  }
  Refresh();
  absl::MutexLock lock(&mu_);
  const auto it = owners_.find(id);
  if (it == owners_.end()) {
    return std::nullopt;
  }
  return it->second;
}

bool CompositeFleet::ListsFromMemory() const {
  return std::all_of(sources_.begin(), sources_.end(),
                     [](const CompositeSource& source) { return source.fleet->ListsFromMemory(); });
}

std::optional<std::uint64_t> CompositeFleet::ListingGeneration() {
  std::vector<std::uint64_t> current;
  current.reserve(sources_.size());
  for (const CompositeSource& source : sources_) {
    const std::optional<std::uint64_t> generation = source.fleet->ListingGeneration();
    if (!generation.has_value()) {
      return std::nullopt;
    }
    current.push_back(*generation);
  }
  absl::MutexLock lock(&mu_);
  if (current != source_generations_) {
    source_generations_ = std::move(current);
    ++listing_generation_;
  }
  return listing_generation_;
}

absl::StatusOr<std::vector<core::FleetResource>> CompositeFleet::ListResources(
    const core::FleetResourceQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateResourceQuery(query));
  Refresh();
  absl::MutexLock lock(&mu_);
  std::vector<core::FleetResource> out;
  for (const auto& [id, r] : resources_) {
    if (out.size() == query.limit) {
      break;
    }
    if (internal::MatchesQuery(r, query)) {
      out.push_back(r);
    }
  }
  return out;
}

absl::StatusOr<core::FleetResource> CompositeFleet::GetResource(std::string_view id) {
  const std::optional<Entry> entry = Find(id);
  if (!entry.has_value()) {
    return NoResource(id);
  }
  CompositeSource& source = sources_[entry->source];
  absl::StatusOr<core::FleetResource> got = source.fleet->GetResource(entry->source_id);
  absl::MutexLock lock(&mu_);
  const auto remembered = resources_.find(std::string(id));
  if (!got.ok()) {
    if (absl::IsNotFound(got.status()) || remembered == resources_.end()) {
      return Prefixed(got.status(), source.name);
    }
    core::FleetResource unknown = remembered->second;
    unknown.status = "unknown";
    return unknown;
  }
  const std::map<std::string, std::string>& map = to_composite_[entry->source];
  got->id = std::string(id);
  if (!got->parent_id.empty()) {
    const auto parent = map.find(got->parent_id);
    if (parent != map.end()) {
      got->parent_id = parent->second;
    }
  }
  got->attributes[std::string(kSourceAttribute)] = source.name;
  return got;
}

absl::StatusOr<core::FleetTopology> CompositeFleet::GetTopology(
    const core::FleetTopologyQuery& query) {
  PULSE_RETURN_IF_ERROR(internal::ValidateTopologyQuery(query));
  if (!query.root_id.empty() && !core::IsCanonicalResourceId(query.root_id)) {
    return NoResource(query.root_id);
  }
  Refresh();
  absl::MutexLock lock(&mu_);
  if (!query.root_id.empty() && resources_.count(query.root_id) == 0) {
    return NoResource(query.root_id);
  }
  return internal::BuildTopology(resources_, relationships_, query);
}

absl::StatusOr<core::FleetStatus> CompositeFleet::GetStatus(std::string_view id) {
  const std::optional<Entry> entry = Find(id);
  if (!entry.has_value()) {
    return NoResource(id);
  }
  CompositeSource& source = sources_[entry->source];
  absl::StatusOr<core::FleetStatus> status = source.fleet->GetStatus(entry->source_id);
  if (!status.ok()) {
    return Prefixed(status.status(), source.name);
  }
  status->resource_id = std::string(id);
  status->facts[std::string(kSourceAttribute)] = source.name;
  return status;
}

absl::StatusOr<core::FleetLogExcerpt> CompositeFleet::ReadLogs(std::string_view id,
                                                               const core::FleetLogQuery& query) {
  const std::optional<Entry> entry = Find(id);
  if (!entry.has_value()) {
    return NoResource(id);
  }
  return sources_[entry->source].fleet->ReadLogs(entry->source_id, query);
}

absl::StatusOr<core::FleetConfig> CompositeFleet::ReadConfig(std::string_view id) {
  const std::optional<Entry> entry = Find(id);
  if (!entry.has_value()) {
    return NoResource(id);
  }
  return sources_[entry->source].fleet->ReadConfig(entry->source_id);
}

absl::StatusOr<core::FleetMetricSeries> CompositeFleet::ReadMetricHistory(
    std::string_view id, const core::FleetMetricQuery& query) {
  const std::optional<Entry> entry = Find(id);
  if (!entry.has_value()) {
    return NoResource(id);
  }
  absl::StatusOr<core::FleetMetricSeries> series =
      sources_[entry->source].fleet->ReadMetricHistory(entry->source_id, query);
  if (series.ok()) {
    series->resource_id = std::string(id);
  }
  return series;
}

absl::StatusOr<std::vector<core::Capability>> CompositeFleet::ListCapabilities(
    std::string_view id) {
  const std::optional<Entry> entry = Find(id);
  if (!entry.has_value()) {
    return NoResource(id);
  }
  return sources_[entry->source].fleet->ListCapabilities(entry->source_id);
}

absl::StatusOr<core::DispatchReceipt> CompositeFleet::Dispatch(
    const core::DispatchRequest& request) {
  const std::optional<Entry> entry = Find(request.resource_id);
  if (!entry.has_value()) {
    return NoResource(request.resource_id);
  }
  core::DispatchRequest routed = request;
  routed.resource_id = entry->source_id;
  return sources_[entry->source].fleet->Dispatch(routed);
}

absl::StatusOr<core::PostconditionObservation> CompositeFleet::ObservePostcondition(
    const core::PostconditionQuery& query) {
  const std::optional<Entry> entry = Find(query.resource_id);
  if (!entry.has_value()) {
    return NoResource(query.resource_id);
  }
  core::PostconditionQuery routed = query;
  routed.resource_id = entry->source_id;
  return sources_[entry->source].fleet->ObservePostcondition(routed);
}

absl::StatusOr<core::ExecOutput> CompositeFleet::RunReadOnlyCommand(std::string_view resource_id,
                                                                    std::string_view command) {
  const std::optional<Entry> entry = Find(resource_id);
  if (!entry.has_value()) {
    return NoResource(resource_id);
  }
  return sources_[entry->source].fleet->RunReadOnlyCommand(entry->source_id, command);
}

std::optional<std::string> CompositeFleet::CompositeIdLocked(std::size_t source,
                                                             const std::string& id) const {
  if (id.empty()) {
    return std::string();  // a change about the whole source
  }
  const auto known = to_composite_[source].find(id);
  if (known != to_composite_[source].end()) {
    return known->second;
  }
  const std::optional<core::CanonicalResourceId> parsed = core::ParseCanonicalResourceId(id);
  if (!parsed.has_value()) {
    return std::nullopt;
  }
  // Not listed (yet, or any more): named as RebuildLocked would name it now.
  if (parsed->local.front() != '@' && owners_.count(id) == 0) {
    return id;
  }
  std::string namespaced = Namespaced(*parsed, sources_[source].name);
  if (!core::IsCanonicalResourceId(namespaced)) {
    return std::nullopt;
  }
  return namespaced;
}

void CompositeFleet::PullChanges() {
  struct Pulled {
    std::size_t source = 0;
    core::FleetChange change;
  };
  std::vector<Pulled> batch;
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    // A feed answers at most kFleetMaxChanges at a time; a few rounds drain a busy one.
    for (int round = 0; round < 4; ++round) {
      std::vector<core::FleetChange> got =
          sources_[i].fleet->ChangesSince(change_cursors_[i], core::kFleetMaxChanges);
      const bool more = got.size() >= core::kFleetMaxChanges;
      for (core::FleetChange& c : got) {
        if (c.seq <= change_cursors_[i]) {
          continue;  // a feed breaking its own order: nothing is taken twice
        }
        change_cursors_[i] = c.seq;
        batch.push_back(Pulled{i, std::move(c)});
      }
      if (!more) {
        break;
      }
    }
  }
  if (batch.empty()) {
    return;
  }
  std::stable_sort(batch.begin(), batch.end(),
                   [](const Pulled& a, const Pulled& b) { return a.change.at < b.change.at; });
  absl::MutexLock lock(&mu_);
  for (Pulled& p : batch) {
    std::optional<std::string> id = CompositeIdLocked(p.source, p.change.resource_id);
    if (!id.has_value()) {
      continue;
    }
    core::FleetChange& c = p.change;
    c.resource_id = *std::move(id);
    c.source = sources_[p.source].name;
    c.seq = next_change_++;
    changes_.push_back(std::move(c));
    if (changes_.size() > core::kFleetMaxChanges) {
      changes_.pop_front();
    }
  }
}

std::vector<core::FleetChange> CompositeFleet::ChangesSince(std::uint64_t after_seq,
                                                            std::size_t max) {
  absl::MutexLock lock(&changes_mu_);
  PullChanges();
  std::vector<core::FleetChange> out;
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

std::vector<core::FleetSourceStatus> CompositeFleet::SourceStatuses() {
  absl::MutexLock lock(&mu_);
  return states_;
}

absl::StatusOr<std::pair<std::string, std::string>> CompositeFleet::Locate(std::string_view id) {
  const std::optional<Entry> entry = Find(id);
  if (!entry.has_value()) {
    return NoResource(id);
  }
  return std::make_pair(sources_[entry->source].name, entry->source_id);
}

core::Fleet* CompositeFleet::SourceFleet(std::string_view name) {
  for (CompositeSource& s : sources_) {
    if (s.name == name) {
      return s.fleet.get();
    }
  }
  return nullptr;
}

}  // namespace pulse::adapters::agents
