// AgentViews: the read side of the agent surface. Each method builds one route's JSON body
// (docs/api.md) from the fleet, the finding, action and operator-state stores
// and the clock, so an HTTP handler only parses, authorizes and serializes:
//   FleetContext          GET /api/agent/fleet-context            AgentFleetContext
//   ResourceContext       GET /api/agent/resource-context/{id}    AgentResourceContext
//   ResourceCapabilities  GET /api/agent/resource-capabilities/{id}
//   OperationsLoopStatus  GET /api/agent/patrol-control/status    (and the legacy alias)
//   ActionList            GET /api/actions?view=&limit=&cursor=
//   ActionDetail          GET /api/actions/{id}
//   FindingList           GET /api/ai/patrol/findings
// Views that read action state first let ActionService sweep plans past their TTL to expired
// (at most kActionSweepLimit), as Pulse materializes expiry on read and list; apart from that
// nothing is written. Every response is bounded: a fleet context lists at most
// kFleetMaxResults resources and each per-resource list has its own cap below.
// Resources an operator marked local-only are listed like any other: this is the local API,
// not the model boundary.
//
// Errors: NotFound for an unknown or non-canonical resource id (the route answers
// resource_not_found); a port's error otherwise, unchanged (Unavailable etc.; the route answers
// its 5xx code). An unreadable operator state fails the view rather than showing a resource as
// unlocked. Action refusals (missing_id, invalid_id, action_not_found) are Refusable results.
// Thread-safety: safe to call concurrently if the ports are; the only mutable state is the
// findings page cache and the fleet context cache (FindingPageCache, FleetContextCache, each
// internally locked).
// The ports and the ActionService are borrowed and must outlive the views.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/actions/action_refusal.h"
#include "pulse/core/actions/action_service.h"
#include "pulse/core/agent/agent_query.h"
#include "pulse/core/agent/finding_page_cache.h"
#include "pulse/core/agent/fleet_context_cache.h"
#include "pulse/core/agent/operations_loop.h"
#include "pulse/core/model/action_types.h"
#include "pulse/core/ports/action_store.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/finding_store.h"
#include "pulse/core/ports/fleet.h"
#include "pulse/core/ports/operator_state_store.h"

namespace pulse::core {

class JsonWriter;

// Caps of the resource context lists (the most relevant entries are kept; see ResourceContext).
inline constexpr std::size_t kMaxContextFindings = 50;
inline constexpr std::size_t kMaxContextPendingApprovals = 50;
inline constexpr std::size_t kMaxContextRecentActions = 20;
// Facts per context section, and the longest fact value (longer ones are cut).
inline constexpr std::size_t kMaxContextFacts = 64;
inline constexpr std::size_t kMaxContextFactBytes = 1024;
// Plans past their TTL moved to expired before a view reads action state.
inline constexpr std::size_t kActionSweepLimit = 500;
// The ActionStore lists at most this many records per call (ListByState's bound).
inline constexpr std::size_t kActionScanLimit = 1000;
// Shown instead of the value of a capability param declared sensitive.
inline constexpr char kRedactedParamValue[] = "[redacted]";

// What the readiness block of an action detail says (docs/api.md readiness codes). This build
// has no emergency stop and no separate executor registry, so action_emergency_stop,
// action_executor_unavailable and action_execution_unavailable are never produced.
enum class ActionReadinessCode {
  kReady,
  kReadinessCheckFailed,  // the fleet or the operator state could not be read
  kPlanExpired,           // refreshable
  kPlanDrift,             // refreshable
  kDryRunOnly,
  kRemediationLocked,
  kNotActionable,  // executing, completed, failed or rejected: nothing left to decide or run
};
// Wire: ready, readiness_check_failed, action_plan_expired, action_plan_drift,
// action_dry_run_only, resource_remediation_locked, action_not_actionable.
std::string_view ToString(ActionReadinessCode code);

struct ActionReadiness {
  bool ready = false;
  ActionReadinessCode code = ActionReadinessCode::kNotActionable;
  std::string message;
  bool refreshable = false;  // POST /api/actions/{id}/refresh would replace the plan
  absl::Time checked_at;
};

// What only the caller knows about the operations loop.
struct OperationsLoopInputs {
  // An external (MCP) agent can work the loop: the server publishes the MCP contract and one
  // unexpired API token covers every scope of the published Patrol-work capability set
  // (requirement POL-17). The server computes it from its token store and the manifest.
  bool external_agent_ready = false;
};

// One page of the findings list: the Finding[] body and, when more findings follow, the cursor
// of the next page (sent back as ?cursor=; the route returns it in the X-Next-Cursor header).
struct FindingPage {
  std::string body;
  std::optional<std::string> next_cursor;
};

// One page of the action list: its body and, when more actions follow, the cursor of the next
// page (the route returns it in the X-Next-Cursor header).
struct ActionPage {
  std::string body;
  std::optional<std::string> next_cursor;
};

class AgentViews {
 public:
  AgentViews(Fleet& fleet, const FindingStore& findings, ActionStore& actions,
             ActionService& action_service, OperatorStateStore& operator_state, const Clock& clock);

  AgentViews(const AgentViews&) = delete;
  AgentViews& operator=(const AgentViews&) = delete;

  // AgentFleetContext {resources[], generatedAt}. One entry per resource (ordered by id, at
  // most kFleetMaxResults; resourceType and technology filters go to the fleet query):
  // canonicalId, resourceType, resourceName, technology (omitted when unknown), the operator
  // declaration (intentionallyOffline, monitoringMode, lifecycleState, neverAutoRemediate,
  // maintenanceWindowActive; the defaults normal/active/false when none is set), findings
  // {total, critical, warning, info} over active findings (watch counts as info, so total is
  // the sum of the three), pendingApprovalCount (pending_approval, plan not past its TTL).
  // has_findings keeps resources with total > 0; severity keeps those with a finding in that
  // bucket. A fleet of several sources adds sources[] (Fleet::SourceStatuses, unfiltered):
  // name, kind, state up|down, error (when down), resourceCount, lastSeenAt (once listed).
  // The fleet is listed on every call; resources[] is kept in a FleetContextCache when the
  // finding, action and operator-state stores report WriteGenerations and the finding store
  // reports CountActiveUntilChange, and served from it while the listing shows the same, no write
  // was made and no snooze, plan TTL or maintenance window edge it depends on passed: the same
  // bytes a read would give.
  [[nodiscard]] absl::StatusOr<std::string> FleetContext(const FleetContextQuery& query);
  // The fleet context cache's hits and misses so far.
  [[nodiscard]] FleetContextCacheStats FleetContextCacheCounts() const {
    return fleet_context_cache_.Stats();
  }

  // AgentResourceContext: canonicalId, resourceType, resourceName, technology?, operatorState?
  // (the operator-state wire object, when one is set), activeFindings[] (severity then newest
  // detected, at most kMaxContextFindings), pendingApprovals[] (soonest expiry, highest risk,
  // oldest request, then id; at most kMaxContextPendingApprovals), recentActions[] (every other
  // action on the resource, newest update first, at most kMaxContextRecentActions),
  // contextSections[] ({id, title, source, summary?, observedAt?, facts{}}: status, topology
  // and attributes, each present only when the fleet could read it), generatedAt.
  // A command is the capability and its params ("restart {\"mode\":\"graceful\"}"), with the
  // value of every param the resource's catalogue declares sensitive replaced by
  // kRedactedParamValue (all values when the catalogue cannot be read or no longer lists the
  // capability). When `redact_commands` (a caller without ai:execute), no command is shown and
  // every command-bearing entry carries commandRedacted:true instead.
  [[nodiscard]] absl::StatusOr<std::string> ResourceContext(std::string_view resource_id,
                                                            bool redact_commands);

  // {resourceId, capabilities[], generatedAt}: the resource's current catalogue in the
  // capability wire form (CapabilityToJson). Entries that fail ValidateCapability are left out,
  // as planning refuses them.
  [[nodiscard]] absl::StatusOr<std::string> ResourceCapabilities(std::string_view resource_id);

  // AgentOperationsLoopStatus over the last kOperationsLoopWindow (operations_loop.h says which
  // counts this build can derive and which are always 0).
  [[nodiscard]] absl::StatusOr<std::string> OperationsLoopStatus(
      const OperationsLoopInputs& inputs);

  // One page of {view, actions[], count, readOnly:false}: each action is its audit record
  // (ActionRecordToJson); count is the page's. pending: planned, pending_approval, approved and
  // executing, oldest created first. settled: rejected, expired, completed and failed, newest
  // update first. Ties by id. Read through ActionStore::ListPage: the cost is the page, never
  // the whole store; next_cursor (EncodeActionCursor) is set when more actions follow. The key
  // of an action never changes while it stays in its view, so paging with the cursor never
  // repeats or skips an action that stays listed, whatever is written between the reads.
  [[nodiscard]] absl::StatusOr<ActionPage> ActionListPage(const ActionListQuery& query);
  // ActionListPage's body alone.
  [[nodiscard]] absl::StatusOr<std::string> ActionList(const ActionListQuery& query);

  // {audit, events[], readiness{ready, code, message, refreshable, checkedAt}, readOnly:false}.
  // Refusals as ActionService::Get: missing_id, invalid_id, action_not_found.
  [[nodiscard]] absl::StatusOr<Refusable<std::string>> ActionDetail(std::string_view action_id);

  // Whether `record` can still be decided or executed now. For planned, pending_approval and
  // approved plans, in order: TTL passed -> action_plan_expired; dry-run-only floor ->
  // action_dry_run_only; the plan rebuilt from the live fleet differs (or the resource is gone)
  // -> action_plan_drift; remediation lock -> resource_remediation_locked; the fleet or the
  // lock unreadable -> readiness_check_failed; else ready. expired -> action_plan_expired;
  // every other state -> action_not_actionable.
  ActionReadiness CheckReadiness(const ActionRecord& record);

  // The Finding[] array of docs/api.md (public finding JSON, loop state evaluated now): findings of
  // severity warning or critical that are active (with include_resolved: active or resolved),
  // optionally of one resource, critical first, then newest detected, then id; at most the
  // query's limit (see FindingListQuery).
  // Read through FindingStore::ListPage: the cost is the page, never the whole store. The order
  // is total (severity, detected time, id), so paging with the cursor never repeats or skips a
  // finding that stays listed, whatever is written between the reads. A malformed or foreign
  // cursor is InvalidArgument with the AgentQueryError payload (invalid_finding_request); nothing
  // is read then.
  // An active-only page (no include_resolved, no include_hidden) is kept in a FindingPageCache
  // when the store reports a WriteGeneration and NextSnoozeEnd, and served from it while no
  // write was made and no snooze in its range ended: the same bytes and cursor a read would give.
  [[nodiscard]] absl::StatusOr<FindingPage> FindingListPage(const FindingListQuery& query);
  // FindingListPage's body alone.
  [[nodiscard]] absl::StatusOr<std::string> FindingList(const FindingListQuery& query);
  // The findings page cache's hits and misses so far.
  [[nodiscard]] FindingPageCacheStats FindingPageCacheCounts() const { return page_cache_.Stats(); }

 private:
  // The operations-loop counts at `now`.
  absl::StatusOr<OperationsLoopCounts> CountOperationsLoop(const OperationsLoopInputs& inputs,
                                                           absl::Time now);
  // ResourceContext's contextSections[].
  void WriteContextSections(JsonWriter& out, const FleetResource& resource);
  // FleetContext's resources[] for `resources` at `now` and, when `keep` (the array is to be
  // cached), the first instant after `now` at which time alone would change it.
  struct FleetContextArray {
    std::string json;
    std::optional<absl::Time> expires_at;  // nullopt: time alone never changes it
    bool expiry_known = false;  // false: not asked, or a store could not say; never kept then
  };
  absl::StatusOr<FleetContextArray> BuildFleetContextArray(
      const FleetContextQuery& query, const std::vector<FleetResource>& resources, absl::Time now,
      bool keep);

  Fleet& fleet_;
  const FindingStore& findings_;
  ActionStore& actions_;
  ActionService& action_service_;
  OperatorStateStore& operator_state_;
  const Clock& clock_;
  FindingPageCache page_cache_;
  FleetContextCache fleet_context_cache_;
};

}  // namespace pulse::core
