#include "pulse/core/agent/agent_views.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent_views_internal.h"
#include "pulse/core/actions/action_json.h"
#include "pulse/core/agent/agent_wire.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/findings/finding_json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/model/resource_id.h"
#include "pulse/core/status_macros.h"
#include "pulse/core/string_view.h"

namespace pulse::core {

namespace agent_internal {

absl::StatusOr<std::vector<ActionRecord>> ScanActions(ActionStore& store,
                                                      const std::vector<ActionState>& states) {
  std::vector<ActionRecord> out;
  for (ActionState state : states) {
    PULSE_ASSIGN_OR_RETURN(std::vector<ActionRecord> some,
                           store.ListByState({state}, kActionScanLimit));
    out.insert(out.end(), std::make_move_iterator(some.begin()),
               std::make_move_iterator(some.end()));
  }
  return out;
}

bool AwaitsDecision(const ActionRecord& record, absl::Time now) {
  return record.state == ActionState::kPendingApproval && now < record.plan.expires_at;
}

bool HasApprovedDecision(const ActionRecord& record) {
  return std::any_of(record.approvals.begin(), record.approvals.end(), [](const ApprovalRecord& a) {
    return a.outcome == DecisionOutcome::kApproved;
  });
}

bool MoreUrgentFinding(const Finding& a, const Finding& b) {
  const int ra = SeverityRank(a.severity);
  const int rb = SeverityRank(b.severity);
  if (ra != rb) {
    return ra > rb;
  }
  if (a.detected_at != b.detected_at) {
    return a.detected_at > b.detected_at;
  }
  return a.id < b.id;
}

bool BeforeInApprovalQueue(const ActionRecord& a, const ActionRecord& b) {
  if (a.plan.expires_at != b.plan.expires_at) {
    return a.plan.expires_at < b.plan.expires_at;
  }
  if (a.plan.risk != b.plan.risk) {
    return a.plan.risk > b.plan.risk;  // ActionRisk is ordered low < medium < high
  }
  if (a.created_at != b.created_at) {
    return a.created_at < b.created_at;
  }
  return a.id() < b.id();
}

bool MoreRecentlyUpdated(const ActionRecord& a, const ActionRecord& b) {
  if (a.updated_at != b.updated_at) {
    return a.updated_at > b.updated_at;
  }
  return a.id() < b.id();
}

bool CreatedEarlier(const ActionRecord& a, const ActionRecord& b) {
  return std::tie(a.created_at, a.id()) < std::tie(b.created_at, b.id());
}

}  // namespace agent_internal

namespace {

namespace w = agent_wire;

// Active findings of one resource, by the fleet context's buckets.
struct FindingCounts {
  std::int64_t total = 0;
  std::int64_t critical = 0;
  std::int64_t warning = 0;
  std::int64_t info = 0;  // info and watch: the wire has no watch bucket

  void Add(Severity severity, std::int64_t n) {
    total += n;
    switch (severity) {
      case Severity::kCritical:
        critical += n;
        break;
      case Severity::kWarning:
        warning += n;
        break;
      case Severity::kInfo:
      case Severity::kWatch:
        info += n;
        break;
    }
  }

  std::int64_t Bucket(Severity severity) const {
    switch (severity) {
      case Severity::kCritical:
        return critical;
      case Severity::kWarning:
        return warning;
      case Severity::kInfo:
      case Severity::kWatch:
        return info;
    }
    return 0;
  }
};

absl::Status UnknownResource(std::string_view id) {
  return absl::NotFoundError(absl::StrCat("no resource with id ", ToAbsl(id)));
}

}  // namespace

AgentViews::AgentViews(Fleet& fleet, const FindingStore& findings, ActionStore& actions,
                       ActionService& action_service, OperatorStateStore& operator_state,
                       const Clock& clock)
    : fleet_(fleet),
      findings_(findings),
      actions_(actions),
      action_service_(action_service),
      operator_state_(operator_state),
      clock_(clock) {}

absl::StatusOr<std::string> AgentViews::FleetContext(const FleetContextQuery& query) {
  PULSE_RETURN_IF_ERROR(action_service_.SweepExpired(kActionSweepLimit));
  const absl::Time now = clock_.Now();
  // Read after the sweep's writes and before any store read below, so that a write made
  // between them makes a later lookup miss (FleetContextCache).
  const std::optional<std::uint64_t> finding_generation = findings_.WriteGeneration();
  const std::optional<std::uint64_t> action_generation = actions_.WriteGeneration();
  const std::optional<std::uint64_t> state_generation = operator_state_.WriteGeneration();
  const bool cacheable = finding_generation.has_value() && action_generation.has_value() &&
                         state_generation.has_value();
  std::string key;
  FleetContextGenerations generations;
  std::shared_ptr<const std::string> array;
  if (cacheable) {
    key = FleetContextCache::Key(query);
    // Read before the listing: a change after it makes the next lookup miss.
    generations = {*finding_generation, *action_generation, *state_generation,
                   fleet_.ListingGeneration()};
    if (generations.fleet.has_value()) {
      array = fleet_context_cache_.Find(key, generations, nullptr, now);
    }
  }
  if (array == nullptr) {
    FleetResourceQuery fleet_query;
    fleet_query.type = query.resource_type;
    fleet_query.technology = query.technology;
    fleet_query.limit = kFleetMaxResults;
    PULSE_ASSIGN_OR_RETURN(std::vector<FleetResource> resources, fleet_.ListResources(fleet_query));
    // With the fleet's generation known the lookup above was the one that could hit.
    if (cacheable && !generations.fleet.has_value()) {
      array = fleet_context_cache_.Find(key, generations, &resources, now);
    }
    if (array == nullptr) {
      PULSE_ASSIGN_OR_RETURN(FleetContextArray built,
                             BuildFleetContextArray(query, resources, now, cacheable));
      array = std::make_shared<const std::string>(std::move(built.json));
      if (cacheable && built.expiry_known) {
        fleet_context_cache_.Store(key, generations, resources, now, built.expires_at, array);
      }
    }
  }

  JsonWriter out;
  out.StartObject();
  out.Key(w::kResources);
  out.RawValue(*array);
  const std::vector<FleetSourceStatus> sources = fleet_.SourceStatuses();
  if (!sources.empty()) {
    out.Key(w::kSources);
    out.StartArray();
    for (const FleetSourceStatus& source : sources) {
      out.StartObject();
      out.Member(w::kSourceName, source.name);
      out.Member(w::kSourceKind, source.kind);
      out.Member(w::kSourceState, source.up ? "up" : "down");
      out.MemberIfNotEmpty(w::kSourceError, source.error);
      out.Member(w::kSourceResourceCount, static_cast<std::int64_t>(source.resources));
      if (source.last_ok_at.has_value()) {
        out.TimeMember(w::kSourceLastSeenAt, *source.last_ok_at);
      }
      out.EndObject();
    }
    out.EndArray();
  }
  out.TimeMember(w::kGeneratedAt, now);
  out.EndObject();
  return out.Take();
}

absl::StatusOr<AgentViews::FleetContextArray> AgentViews::BuildFleetContextArray(
    const FleetContextQuery& query, const std::vector<FleetResource>& resources, absl::Time now,
    bool keep) {
  FleetContextArray built;
  built.expiry_known = keep;
  // The first instant after `now` at which time alone changes what is built below.
  const auto bound = [&built](std::optional<absl::Time> t) {
    if (t.has_value() && (!built.expires_at.has_value() || *t < *built.expires_at)) {
      built.expires_at = t;
    }
  };

  // Counted by the store for the listed resources only (index seeks), never by decoding every
  // active finding.
  std::vector<std::string> listed_ids;
  listed_ids.reserve(resources.size());
  for (const FleetResource& r : resources) {
    listed_ids.push_back(r.id);
  }
  // When the array may be kept, with the instant a snoozed finding of a listed resource counts
  // again (the same store pass); a store that cannot say is only counted.
  std::vector<ActiveFindingCounts> active;
  absl::StatusOr<ActiveFindingCountsUntil> until =
      keep ? findings_.CountActiveUntilChange(now, listed_ids)
           : absl::StatusOr<ActiveFindingCountsUntil>(absl::UnimplementedError("not kept"));
  if (until.ok()) {
    active = std::move(until->counts);
    bound(until->next_snooze_end);
  } else if (absl::IsUnimplemented(until.status())) {
    built.expiry_known = false;
    PULSE_ASSIGN_OR_RETURN(active, findings_.CountActiveByResource(now, listed_ids));
  } else {
    return until.status();
  }
  std::map<std::string, FindingCounts, std::less<>> counts;
  for (const ActiveFindingCounts& a : active) {
    FindingCounts& c = counts[a.resource_id];
    c.Add(Severity::kCritical, a.critical);
    c.Add(Severity::kWarning, a.warning);
    c.Add(Severity::kWatch, a.watch);
    c.Add(Severity::kInfo, a.info);
  }

  PULSE_ASSIGN_OR_RETURN(std::vector<ActionRecord> pending,
                         agent_internal::ScanActions(actions_, {ActionState::kPendingApproval}));
  std::map<std::string, std::int64_t, std::less<>> pending_counts;
  for (const ActionRecord& r : pending) {
    if (agent_internal::AwaitsDecision(r, now)) {
      ++pending_counts[r.plan.resource_id];
      bound(r.plan.expires_at);  // it stops counting when its plan expires
    }
  }

  const auto counts_of = [&counts](const FleetResource& r) {
    const auto found = counts.find(r.id);
    return found == counts.end() ? FindingCounts{} : found->second;
  };
  const auto shown = [&query](const FindingCounts& c) {
    return !(query.has_findings && c.total == 0) &&
           !(query.severity.has_value() && c.Bucket(*query.severity) == 0);
  };
  // Read only for listed resources (a filtered fleet costs no operator-state reads), all in
  // one store call.
  std::vector<std::string> shown_ids;
  shown_ids.reserve(resources.size());
  for (const FleetResource& r : resources) {
    if (shown(counts_of(r))) {
      shown_ids.push_back(r.id);
    }
  }
  PULSE_ASSIGN_OR_RETURN(std::vector<OperatorState> states, operator_state_.GetMany(shown_ids));
  std::map<std::string_view, const OperatorState*, std::less<>> declared_by_id;
  for (const OperatorState& s : states) {
    declared_by_id.emplace(s.resource_id, &s);
    bound(NextMaintenanceWindowEdge(s, now));  // maintenanceWindowActive flips there
  }

  JsonWriter out;
  out.StartArray();
  for (const FleetResource& r : resources) {
    const FindingCounts c = counts_of(r);
    if (!shown(c)) {
      continue;
    }
    const auto set = declared_by_id.find(r.id);
    const bool has_state = set != declared_by_id.end();
    const OperatorState declared = has_state ? *set->second : OperatorState{};
    const auto approvals = pending_counts.find(r.id);

    out.StartObject();
    out.Member(w::kCanonicalId, r.id);
    out.Member(w::kResourceType, r.type);
    out.Member(w::kResourceName, r.name);
    out.MemberIfNotEmpty(w::kTechnology, r.technology);
    // What the fleet observes now (running, stopped, exited, ...), beside the operator's intent.
    out.MemberIfNotEmpty(w::kStatus, r.status);
    out.Member(w::kIntentionallyOffline, declared.intentionally_offline);
    out.Member(w::kMonitoringMode, ToString(declared.monitoring_mode));
    out.Member(w::kLifecycleState, ToString(declared.lifecycle));
    out.Member(w::kNeverAutoRemediate, declared.never_auto_remediate);
    out.Member(w::kMaintenanceWindowActive, has_state && MaintenanceWindowActive(declared, now));
    out.Key(w::kFindings);
    out.StartObject();
    out.Member(w::kTotal, c.total);
    out.Member(w::kCritical, c.critical);
    out.Member(w::kWarning, c.warning);
    out.Member(w::kInfo, c.info);
    out.EndObject();
    out.Member(w::kPendingApprovalCount,
               approvals == pending_counts.end() ? std::int64_t{0} : approvals->second);
    out.EndObject();
  }
  out.EndArray();
  built.json = out.Take();
  return built;
}

absl::StatusOr<std::string> AgentViews::ResourceCapabilities(std::string_view resource_id) {
  if (!IsCanonicalResourceId(resource_id)) {
    return UnknownResource(resource_id);
  }
  PULSE_ASSIGN_OR_RETURN(std::vector<Capability> catalogue, fleet_.ListCapabilities(resource_id));
  JsonWriter out;
  out.StartObject();
  out.Member(w::kResourceId, resource_id);
  out.Key(w::kCapabilities);
  out.StartArray();
  for (const Capability& c : catalogue) {
    if (ValidateCapability(c).ok()) {
      out.RawValue(CapabilityToJson(c));
    }
  }
  out.EndArray();
  out.TimeMember(w::kGeneratedAt, clock_.Now());
  out.EndObject();
  return out.Take();
}

absl::StatusOr<FindingPage> AgentViews::FindingListPage(const FindingListQuery& query) {
  FindingPageQuery page;
  if (query.cursor.has_value()) {
    PULSE_ASSIGN_OR_RETURN(page.after, DecodeFindingCursor(*query.cursor));
  }
  const bool widened = query.include_resolved || query.include_hidden;
  std::size_t limit = query.limit;
  if (limit == 0) {
    limit = widened ? kDefaultResolvedFindingListLimit : kMaxFindingListLimit;
  }
  limit = std::min(limit, kMaxFindingListLimit);
  const absl::Time now = clock_.Now();
  page.resource_id = query.resource_id;
  page.min_severity = Severity::kWarning;
  page.now = now;
  page.include_resolved = query.include_resolved;
  page.include_hidden = query.include_hidden;
  page.limit = limit + 1;  // one more than shown says whether a next page exists
  // Only active-only pages are cached: NextSnoozeEnd bounds how long they stay true.
  std::optional<std::uint64_t> generation;
  std::string cache_key;
  if (!widened) {
    generation = findings_.WriteGeneration();  // read before the page, so a write between misses
  }
  if (generation.has_value()) {
    cache_key = FindingPageCache::Key(query.resource_id, query.cursor, limit);
    if (std::optional<CachedFindingPage> hit = page_cache_.Find(cache_key, *generation, now)) {
      return FindingPage{std::move(hit->body), std::move(hit->next_cursor)};
    }
  }
  PULSE_ASSIGN_OR_RETURN(std::vector<StoredFinding> stored, findings_.ListPage(page));
  FindingPage out;
  std::optional<FindingPagePosition> last_shown;
  if (stored.size() > limit) {
    stored.resize(limit);
    last_shown = PagePositionOf(stored.back().finding);
    out.next_cursor = EncodeFindingCursor(*last_shown);
  }
  std::vector<Finding> listed;
  listed.reserve(stored.size());
  for (StoredFinding& s : stored) {
    listed.push_back(std::move(s.finding));
  }
  FindingJsonOptions options;
  options.include_private = false;
  options.now = now;
  out.body = FindingListToJson(std::span<const Finding>(listed), options);
  if (generation.has_value()) {
    // A full page changes with time only when a snoozed finding before its last row wakes; a
    // short one when any snoozed finding after the cursor does. A store that cannot say (an
    // error) just leaves the page uncached.
    absl::StatusOr<std::optional<absl::Time>> expires = findings_.NextSnoozeEnd(page, last_shown);
    if (expires.ok()) {
      page_cache_.Store(cache_key, *generation, now, *expires,
                        CachedFindingPage{out.body, out.next_cursor});
    }
  }
  return out;
}

absl::StatusOr<std::string> AgentViews::FindingList(const FindingListQuery& query) {
  PULSE_ASSIGN_OR_RETURN(FindingPage page, FindingListPage(query));
  return std::move(page.body);
}

absl::StatusOr<std::string> AgentViews::OperationsLoopStatus(const OperationsLoopInputs& inputs) {
  PULSE_RETURN_IF_ERROR(action_service_.SweepExpired(kActionSweepLimit));
  const absl::Time now = clock_.Now();
  PULSE_ASSIGN_OR_RETURN(OperationsLoopCounts counts, CountOperationsLoop(inputs, now));
  return OperationsLoopStatusToJson(counts, now - kOperationsLoopWindow, now);
}

absl::StatusOr<OperationsLoopCounts> AgentViews::CountOperationsLoop(
    const OperationsLoopInputs& inputs, absl::Time now) {
  const absl::Time window_start = now - kOperationsLoopWindow;
  OperationsLoopCounts c;
  c.external_agent_ready = inputs.external_agent_ready;

  // Counted by the store (index ranges in SQLite), never by decoding every finding.
  PULSE_ASSIGN_OR_RETURN(PatrolFindingCounts findings,
                         findings_.CountPatrolFindings(window_start, now));
  c.patrol_evidence = findings.seen_since;
  c.patrol_issue_evidence = findings.issues_seen_since;
  c.active_findings = findings.active_issues;

  PULSE_ASSIGN_OR_RETURN(std::vector<ActionRecord> actions,
                         agent_internal::ScanActions(actions_, AllActionStates()));
  for (const ActionRecord& r : actions) {
    c.pending_approvals += agent_internal::AwaitsDecision(r, now) ? 1 : 0;
    c.governed_actions += r.created_at >= window_start ? 1 : 0;
    for (const ApprovalRecord& a : r.approvals) {
      if (a.at >= window_start) {
        ++(a.outcome == DecisionOutcome::kApproved ? c.approved_decisions : c.rejected_decisions);
      }
    }
    if (r.result.has_value() && IsVerifiedFix(*r.result) && r.result->finished_at >= window_start) {
      ++c.verified_outcomes;
      c.resolved_loops += agent_internal::HasApprovedDecision(r) ? 1 : 0;
    }
  }
  return c;
}

}  // namespace pulse::core
