// FindingStore: durable storage of findings and suppression rules. A finding is written whole
// together with its lifecycle log, under optimistic concurrency: every stored finding carries
// a version, and Put succeeds only when the caller's expected version is still current, so two
// writers can never lose each other's updates (the loser re-reads and re-applies).
// Thread-safety: implementations must be safe to call from any thread; Put is atomic.
// Codes: NotFound (unknown finding or rule id), Aborted (version clash), InvalidArgument
// (malformed argument), Unavailable or Internal (the backing store failed; nothing written).
// Real implementation: adapters/storage (SqliteFindingStore); tests use
// pulse::testing::InMemoryFindingStore. Every implementation must pass
// tests/contracts/finding_store_contract.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/finding.h"
#include "pulse/core/model/suppression_rule.h"

namespace pulse::core {

// A finding as stored, with the version the next Put must name. Versions start at 1 and
// grow by one per successful Put; 0 means "no such finding".
struct StoredFinding {
  Finding finding;
  std::int64_t version = 0;
};

// The findings that may be on the same resource as a given one: the candidates of
// SiblingEquivalence's related-resource test, so a new finding's siblings are found without
// reading every finding. Identity is the canonical resource id (which carries the resource's
// parent, e.g. storage:pve2/local-zfs); display names never relate two findings, since every
// Proxmox node has a `local-zfs` and an `nginx` may run on each. A finding matches when any of
// these holds:
//   * resource_id is not empty and equals its resource_id;
//   * storage_identity is not empty (a storage identity, StorageIdentityOf) and the finding
//     may be on a storage resource (its resource_type is "storage", or its resource_id or
//     resource_name contains "storage", "pool" or "array", ASCII case-insensitively) and its
//     resource_id contains every '-'-separated word of storage_identity as an ASCII
//     case-insensitive substring (a superset of the findings with that storage identity).
// core::MatchesRelatedResource (finding_identity.h) is the predicate.
struct RelatedResourceFilter {
  std::string resource_id;
  std::string storage_identity;

  friend bool operator==(const RelatedResourceFilter&, const RelatedResourceFilter&) = default;
};

// Which findings List returns; unset members do not filter. Results are ordered by id.
struct FindingFilter {
  std::optional<std::string> resource_id;
  std::optional<Category> category;
  // When set, only findings active at this instant (IsActive): not resolved, not suppressed,
  // not dismissed and not snoozed past it. When unset, every finding, inactive ones included.
  std::optional<absl::Time> active_at;
  // When set, only findings related to it (RelatedResourceFilter).
  std::optional<RelatedResourceFilter> related_to;
};

// A position in the findings list order (FindingPageOrder): the key of the last finding a page
// returned. The next page starts strictly after it.
struct FindingPagePosition {
  Severity severity = Severity::kInfo;
  absl::Time detected_at;
  std::string id;

  friend bool operator==(const FindingPagePosition&, const FindingPagePosition&) = default;
};

// One page of the findings list, in FindingPageOrder: most severe first, then newest detected,
// then id ascending (a total order, so equal timestamps never reorder between reads). Only
// findings of at least `min_severity` that are active at `now` (IsActive), or, with
// include_resolved, active or resolved (resolved_at set; snoozed, dismissed and suppressed
// findings are neither).
struct FindingPageQuery {
  std::optional<std::string> resource_id;  // exact resource id
  Severity min_severity = Severity::kWarning;
  absl::Time now;
  bool include_resolved = false;
  bool include_hidden = false;  // snoozed, dismissed and suppressed (not active, not resolved)
  std::optional<FindingPagePosition> after;  // start after this position (keyset pagination)
  std::size_t limit = 50;                    // at most this many; 0 returns none
};

// Active findings of one resource by severity bucket (CountActiveByResource).
struct ActiveFindingCounts {
  std::string resource_id;
  std::int64_t critical = 0;
  std::int64_t warning = 0;
  std::int64_t watch = 0;
  std::int64_t info = 0;

  friend bool operator==(const ActiveFindingCounts&, const ActiveFindingCounts&) = default;
};

// CountActiveByResource's counts and how long they hold (CountActiveUntilChange).
struct ActiveFindingCountsUntil {
  std::vector<ActiveFindingCounts> counts;
  // The earliest snoozed_until after `now` among the findings of the resources asked about
  // that are neither resolved, dismissed nor suppressed; nullopt when there is none.
  std::optional<absl::Time> next_snooze_end;
};

// An active finding as ListActiveKeys reads it: which finding, on which resource, how severe.
struct ActiveFindingKey {
  std::string id;
  std::string resource_id;
  Severity severity = Severity::kInfo;

  friend bool operator==(const ActiveFindingKey&, const ActiveFindingKey&) = default;
};

// Patrol's findings counted for the operations-loop status (CountPatrolFindings): every finding
// but the Patrol runtime finding (IsRuntimeFinding).
struct PatrolFindingCounts {
  std::int64_t seen_since = 0;         // last_seen_at at or after `since`
  std::int64_t issues_seen_since = 0;  // ... of those, severity warning or critical
  std::int64_t active_issues = 0;      // active at `now` (IsActive), severity warning or critical

  friend bool operator==(const PatrolFindingCounts&, const PatrolFindingCounts&) = default;
};

// One write of PutBatch: `finding` as Put would write it, if its stored version is still
// `expected_version` (0 = it must not exist yet).
struct FindingWrite {
  Finding finding;
  std::int64_t expected_version = 0;
};

// Whether `a` comes before `b` in the findings page order.
inline bool FindingPageOrder(const FindingPagePosition& a, const FindingPagePosition& b) {
  if (a.severity != b.severity) {
    return SeverityRank(a.severity) > SeverityRank(b.severity);
  }
  if (a.detected_at != b.detected_at) {
    return a.detected_at > b.detected_at;
  }
  return a.id < b.id;
}

// The page position of a stored finding.
inline FindingPagePosition PagePositionOf(const Finding& finding) {
  return FindingPagePosition{finding.severity, finding.detected_at, finding.id};
}

// Whether `finding` belongs in the pages of `query` (its filters; `after` and `limit` aside).
inline bool InFindingPage(const FindingPageQuery& query, const Finding& finding) {
  if (query.resource_id.has_value() && finding.resource_id != *query.resource_id) {
    return false;
  }
  if (SeverityRank(finding.severity) < SeverityRank(query.min_severity)) {
    return false;
  }
  if (IsActive(finding, query.now)) {
    return true;
  }
  return finding.resolved_at.has_value() ? query.include_resolved : query.include_hidden;
}

// Whether `finding` waits for the outcome of its Patrol fix: a fix action is linked and the
// finding's loop outcome is fix_queued or fix_executed (FixProjector::ReconcileAll's
// candidates; FindingStore::ListAwaitingFixOutcome).
inline bool AwaitsFixOutcome(const Finding& finding) {
  return !finding.fix_action_id.empty() &&
         (finding.investigation_outcome == InvestigationOutcome::kFixQueued ||
          finding.investigation_outcome == InvestigationOutcome::kFixExecuted);
}

class FindingStore {
 public:
  virtual ~FindingStore() = default;

  // The finding with this id. NotFound when there is none.
  [[nodiscard]] virtual absl::StatusOr<StoredFinding> Get(std::string_view id) const = 0;

  // The stored findings among `ids`, read in one consistent snapshot: one entry per id that
  // names a finding, in the order of `ids` (an id with no finding is left out; a repeated id
  // is returned each time). Bulk readers (Patrol's stale reconciliation) read a batch of
  // candidates with one call instead of a Get (a read transaction) per finding.
  [[nodiscard]] virtual absl::StatusOr<std::vector<StoredFinding>> GetBatch(
      const std::vector<std::string>& ids) const = 0;

  // Findings matching `filter`, ordered by id ascending.
  [[nodiscard]] virtual absl::StatusOr<std::vector<StoredFinding>> List(
      const FindingFilter& filter) const = 0;

  // One page of findings (FindingPageQuery). Its cost grows with the page, not with the number
  // of findings stored (the SQLite adapter reads an index range). InvalidArgument when `after`
  // has an empty id.
  [[nodiscard]] virtual absl::StatusOr<std::vector<StoredFinding>> ListPage(
      const FindingPageQuery& query) const = 0;

  // For each of `resource_ids` with at least one finding active at `now`, the count of its
  // active findings by severity, ordered by resource id (duplicates in `resource_ids` count
  // once). Computed without decoding a finding, at a cost that grows with the resources asked
  // about and their findings, not with the store.
  [[nodiscard]] virtual absl::StatusOr<std::vector<ActiveFindingCounts>> CountActiveByResource(
      absl::Time now, const std::vector<std::string>& resource_ids) const = 0;

  // Every finding active at `now` (IsActive) as its ActiveFindingKey, ordered by id ascending.
  // Read without decoding a finding (the SQLite adapter reads a covering index), for callers
  // that need to know which findings are active and how severe, not what they say (Patrol's
  // triage and run summary): a fraction of a List's cost and memory.
  [[nodiscard]] virtual absl::StatusOr<std::vector<ActiveFindingKey>> ListActiveKeys(
      absl::Time now) const = 0;

  // Every finding that AwaitsFixOutcome (active or not), ordered by id ascending. Its cost
  // grows with those findings, not with the store (the SQLite adapter reads a partial index),
  // so start-up reconciliation never decodes every stored finding.
  [[nodiscard]] virtual absl::StatusOr<std::vector<StoredFinding>> ListAwaitingFixOutcome()
      const = 0;

  // PatrolFindingCounts at `now` for the window from `since`, computed without decoding a
  // finding (the SQLite adapter counts index ranges), so its cost never includes a read of
  // every finding's record.
  [[nodiscard]] virtual absl::StatusOr<PatrolFindingCounts> CountPatrolFindings(
      absl::Time since, absl::Time now) const = 0;

  // Writes `finding` (keyed by finding.id) if the stored version equals `expected_version`
  // (0 = the finding must not exist yet) and returns the new version (expected_version + 1).
  // Aborted when the stored version differs, including a create of an existing id; nothing
  // is written then. InvalidArgument for an empty id or a negative expected_version.
  [[nodiscard]] virtual absl::StatusOr<std::int64_t> Put(const Finding& finding,
                                                         std::int64_t expected_version) = 0;

  // Applies `writes` in order as one atomic unit (the SQLite adapter: one transaction, one
  // sync), so bulk changes cost a write per finding, not a commit. One result per write, in
  // order: its new version, or the error Put would have returned for it alone (Aborted on a
  // version clash, InvalidArgument), in which case that write changed nothing and the others
  // still apply. A later write sees an earlier one's effect: two writes of one id need
  // consecutive versions. A failure of the store itself is the whole result, and then nothing
  // of the batch was written.
  [[nodiscard]] virtual absl::StatusOr<std::vector<absl::StatusOr<std::int64_t>>> PutBatch(
      const std::vector<FindingWrite>& writes) = 0;

  // For caches of ListPage results (AgentViews' findings page cache): a number that changes
  // after every Put or PutBatch made through this store object has returned (successful or
  // not), so two equal readings bracket no write made through it. nullopt (the default) when
  // the store does not track writes; a caller must not cache then. Writes made by another store
  // object or another process are not seen: only use it where this object is the one writer.
  [[nodiscard]] virtual std::optional<std::uint64_t> WriteGeneration() const {
    return std::nullopt;
  }

  // For caches of an active-only page (query.include_resolved and include_hidden false): the
  // earliest snoozed_until after query.now among the findings that are neither resolved,
  // dismissed nor suppressed, match query's resource and min_severity, and lie after
  // query.after and up to and including `through` in the page order (no upper bound when
  // `through` is nullopt). Those are the only findings whose presence in the page can change
  // with time alone, without a write: the page read at query.now stays the same page until that
  // instant. nullopt when there is none. Its cost grows with that range, like ListPage's.
  // Unimplemented (the default) when the store cannot answer; InvalidArgument for a query that
  // includes resolved or hidden findings.
  [[nodiscard]] virtual absl::StatusOr<std::optional<absl::Time>> NextSnoozeEnd(
      const FindingPageQuery& /*query*/,
      const std::optional<FindingPagePosition>& /*through*/) const {
    return absl::UnimplementedError("this finding store does not report snooze ends");
  }

  // For caches of views over CountActiveByResource (AgentViews' fleet context): its counts,
  // read in the same pass as next_snooze_end. The findings with a snooze ending after `now` are
  // the only ones whose count can change with time alone, without a write: the counts read at
  // `now` stay the counts until that instant. Its cost is CountActiveByResource's.
  // Unimplemented (the default) when the store cannot answer.
  [[nodiscard]] virtual absl::StatusOr<ActiveFindingCountsUntil> CountActiveUntilChange(
      absl::Time /*now*/, const std::vector<std::string>& /*resource_ids*/) const {
    return absl::UnimplementedError("this finding store does not report snooze ends");
  }

  // Every suppression rule, ordered by id ascending.
  [[nodiscard]] virtual absl::StatusOr<std::vector<SuppressionRule>> ListSuppressionRules()
      const = 0;

  // Inserts or replaces the rule with rule.id. InvalidArgument for an empty id.
  [[nodiscard]] virtual absl::Status PutSuppressionRule(const SuppressionRule& rule) = 0;

  // Removes the rule. NotFound when there is none.
  [[nodiscard]] virtual absl::Status DeleteSuppressionRule(std::string_view id) = 0;
};

}  // namespace pulse::core
