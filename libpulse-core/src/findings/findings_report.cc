// FindingsService::Report: validation, same-id re-detection, suppression-rule blocking,
// equivalent-sibling merge and creation (docs/architecture.md "Findings").
#include <utility>

#include "findings_service_internal.h"
#include "fmt/format.h"
#include "pulse/core/findings/finding_errors.h"
#include "pulse/core/findings/finding_identity.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/finding_wire.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

namespace w = finding_wire;
using findings_internal::CheckField;
using findings_internal::Transition;
using findings_internal::Trimmed;

// Validates and normalizes a report into the finding it describes (id, key, text; no times).
absl::StatusOr<Finding> IncomingFinding(const FindingReport& report) {
  Finding f;
  f.resource_id = Trimmed(report.resource_id);
  f.resource_name = Trimmed(report.resource_name);
  f.resource_type = Trimmed(report.resource_type);
  f.node = Trimmed(report.node);
  f.title = Trimmed(report.title);
  f.description = Trimmed(report.description);
  f.impact = Trimmed(report.impact);
  f.recommendation = Trimmed(report.recommendation);
  f.evidence = Trimmed(report.evidence);
  f.source = Trimmed(report.source);
  const std::string raw_key = Trimmed(report.key);
  PULSE_RETURN_IF_ERROR(CheckField(w::kResourceId, f.resource_id, kMaxReportIdentifierBytes, true));
  PULSE_RETURN_IF_ERROR(
      CheckField(w::kResourceName, f.resource_name, kMaxReportIdentifierBytes, false));
  PULSE_RETURN_IF_ERROR(
      CheckField(w::kResourceType, f.resource_type, kMaxReportIdentifierBytes, false));
  PULSE_RETURN_IF_ERROR(CheckField(w::kNode, f.node, kMaxReportIdentifierBytes, false));
  PULSE_RETURN_IF_ERROR(CheckField(w::kKey, raw_key, kMaxReportKeyBytes, false));
  PULSE_RETURN_IF_ERROR(CheckField(w::kTitle, f.title, kMaxReportTitleBytes, true));
  PULSE_RETURN_IF_ERROR(CheckField(w::kDescription, f.description, kMaxReportTextBytes, true));
  PULSE_RETURN_IF_ERROR(CheckField(w::kImpact, f.impact, kMaxReportTextBytes, false));
  PULSE_RETURN_IF_ERROR(
      CheckField(w::kRecommendation, f.recommendation, kMaxReportTextBytes, true));
  PULSE_RETURN_IF_ERROR(CheckField(w::kEvidence, f.evidence, kMaxReportTextBytes, true));
  PULSE_RETURN_IF_ERROR(CheckField(w::kSource, f.source, kMaxReportIdentifierBytes, false));
  if (ToString(report.category) == "unknown") {
    return InvalidFindingRequest("category is not a known category",
                                 {{std::string(w::kCategory), "unknown category"}});
  }
  if (ToString(report.severity) == "unknown") {
    return InvalidFindingRequest("severity is not a known severity",
                                 {{std::string(w::kSeverity), "unknown severity"}});
  }
  if (f.source.empty()) {
    f.source = kDefaultFindingSource;
  }
  f.category = report.category;
  f.severity = report.severity;
  f.key = FindingKeyFor(raw_key, f.title);
  f.id = FindingIdFor(f.resource_id, f.category, f.key);
  return f;
}

// The proposed fix of the investigation record, kept when a resolved finding regresses.
// Empty when the record has none.
std::string ProposedFixSummary(const std::string& record_json) {
  if (record_json.empty()) {
    return {};
  }
  absl::StatusOr<rapidjson::Document> doc =
      ParseJson(record_json, JsonLimits{kMaxFindingTextBytes * 4, 16});
  if (!doc.ok()) {
    return {};
  }
  const rapidjson::Value* fix = GetMember(*doc, "proposed_fix");
  if (fix == nullptr) {
    return {};
  }
  std::optional<std::string_view> description = GetString(*fix, "description");
  return description.has_value() ? TruncateUtf8(*description, kMaxReportTextBytes) : std::string();
}

void OverwriteText(Finding& f, const Finding& incoming) {
  f.title = incoming.title;
  f.description = incoming.description;
  f.impact = incoming.impact;  // overwritten with description, even when empty
  f.recommendation = incoming.recommendation;
  f.evidence = incoming.evidence;
  f.severity = incoming.severity;
  if (!incoming.resource_name.empty()) {
    f.resource_name = incoming.resource_name;
  }
  if (!incoming.resource_type.empty()) {
    f.resource_type = incoming.resource_type;
  }
  if (!incoming.node.empty()) {
    f.node = incoming.node;
  }
}

void ClearInvestigation(Finding& f) {
  f.investigation_session_id.clear();
  f.investigation_status.reset();
  f.investigation_outcome.reset();
  f.last_investigated_at.reset();
  f.investigation_attempts = 0;
  f.investigation_record_json.clear();
  f.fix_action_id.clear();
}

bool HasMergedDuplicate(const Finding& f, const std::string& duplicate_id) {
  for (const LifecycleEvent& e : f.lifecycle) {
    if (e.type == LifecycleEventType::kDuplicateMerged) {
      auto it = e.metadata.find(std::string(w::kMetaDuplicateId));
      if (it != e.metadata.end() && it->second == duplicate_id) {
        return true;
      }
    }
  }
  return false;
}

// A dismissed or suppressed finding seen again (docs/architecture.md "Findings"): wakes it when the
// severity escalated or a will-fix-later reminder is due; otherwise records the sighting. Returns
// whether it woke.
bool WakeOrRecordSighting(Transition& tx, const Finding& incoming) {
  Finding& f = tx.finding;
  const bool escalated = SeverityRank(incoming.severity) > SeverityRank(f.severity);
  const bool reminder_due = f.dismissed_reason == DismissReason::kWillFixLater && !f.suppressed &&
                            f.remind_at.has_value() && tx.now >= *f.remind_at;
  if (!escalated && !reminder_due) {
    f.last_seen_at = tx.now;
    ++f.times_raised;
    // Consecutive sightings collapse into one event so they cannot push the dismissal itself
    // out of the bounded log.
    if (f.lifecycle.empty() ||
        f.lifecycle.back().type != LifecycleEventType::kSeenWhileSuppressed) {
      tx.Event(LifecycleEventType::kSeenWhileSuppressed);
    }
    return false;
  }
  if (escalated) {
    tx.Event(LifecycleEventType::kUndismissed, "Severity escalated",
             {{std::string(w::kMetaCause), "severity_escalated"},
              {std::string(w::kMetaPreviousSeverity), std::string(ToString(f.severity))},
              {std::string(w::kMetaSeverity), std::string(ToString(incoming.severity))}});
    // The operator's note stays: it is context for whoever looks next (issue 28, item 4).
  } else {
    ++f.remind_count;
    tx.Event(LifecycleEventType::kReminded, "Re-detected after the will-fix-later reminder",
             {{std::string(w::kMetaRemindCount), std::to_string(f.remind_count)}});
  }
  f.dismissed_reason.reset();
  f.suppressed = false;
  f.remind_at.reset();
  f.acknowledged_at.reset();
  f.snoozed_until.reset();
  return true;
}

// The lifecycle metadata of an operator-state dismissal.
std::map<std::string, std::string> OperatorStateMetadata(const OperatorStateProjection& op,
                                                         OperatorStateCause cause) {
  std::map<std::string, std::string> metadata = {
      {std::string(w::kMetaReason), std::string(ToString(DismissReason::kExpectedBehavior))},
      {kMetaOperatorStateCause, std::string(ToString(cause))}};
  if (cause == OperatorStateCause::kMaintenanceWindow && op.maintenance_end_at.has_value()) {
    metadata.emplace(kMetaMaintenanceEndAt, FormatRfc3339(*op.maintenance_end_at));
  }
  return metadata;
}

std::string_view CauseMessage(OperatorStateCause cause) {
  switch (cause) {
    case OperatorStateCause::kMaintenanceWindow:
      return "Dismissed automatically: the resource is in a maintenance window";
    case OperatorStateCause::kIntentionallyOffline:
      return "Dismissed automatically: the operator marked the resource intentionally offline";
    case OperatorStateCause::kMuted:
      return "Dismissed automatically: the operator muted monitoring of the resource";
  }
  return "Dismissed automatically by operator state";
}

// Whether operator state keeps the resource quiet, the cause written to `cause`. False when
// none holds or the state is unknown (nullopt). (A flag and a plain value, not an optional:
// GCC 12 takes an inlined optional enum for maybe-uninitialized.)
bool QuietCause(const std::optional<OperatorStateProjection>& op, OperatorStateCause& cause) {
  if (!op.has_value()) {
    return false;
  }
  const std::optional<OperatorStateCause> held = op->SuppressionCause();
  if (!held.has_value()) {
    return false;
  }
  cause = *held;
  return true;
}

// Dismisses an active finding because operator state keeps its resource quiet (C-FND-9/10):
// expected_behavior, not acknowledged (no human looked at it), no reminder.
void DismissByOperatorState(Transition& tx, const OperatorStateProjection& op,
                            OperatorStateCause cause) {
  Finding& f = tx.finding;
  f.dismissed_reason = DismissReason::kExpectedBehavior;
  f.suppressed = false;
  f.remind_at.reset();
  f.snoozed_until.reset();
  tx.Event(LifecycleEventType::kDismissed, CauseMessage(cause), OperatorStateMetadata(op, cause));
}

// Wakes a finding operator state had dismissed once no cause holds any more (C-FND-11), with
// its lifecycle and counters.
void WakeSuppressionLifted(Transition& tx, const std::string& previous_cause) {
  Finding& f = tx.finding;
  f.dismissed_reason.reset();
  f.suppressed = false;
  f.remind_at.reset();
  f.acknowledged_at.reset();
  f.snoozed_until.reset();
  // A new occurrence for Patrol: investigated afresh (an earlier outcome would also leave it
  // in a state a dismissed finding may not move to); the lifecycle keeps what happened.
  ClearInvestigation(f);
  tx.Event(LifecycleEventType::kSuppressionLifted,
           "Re-detected after the operator state that dismissed it lifted",
           {{kMetaOperatorStateCause, previous_cause}});
}

// A resolved finding seen again is a new occurrence.
void Regress(Transition& tx) {
  Finding& f = tx.finding;
  std::map<std::string, std::string> metadata = {
      {std::string(w::kMetaPreviousResolvedAt), FormatRfc3339(*f.resolved_at)},
      {std::string(w::kMetaPreviousAcknowledged),
       f.acknowledged_at.has_value() ? "true" : "false"}};
  if (!f.resolve_reason.empty()) {
    metadata.emplace(w::kMetaPreviousResolveReason, f.resolve_reason);
  }
  const std::string fix = ProposedFixSummary(f.investigation_record_json);
  if (!fix.empty()) {
    f.previous_resolved_fix_summary = fix;
  }
  f.resolved_at.reset();
  f.auto_resolved = false;
  f.resolve_reason.clear();
  f.acknowledged_at.reset();
  f.snoozed_until.reset();
  ClearInvestigation(f);
  ++f.regression_count;
  f.last_regression_at = tx.now;
  tx.Event(LifecycleEventType::kRegressed, "Re-detected after it was resolved", metadata);
}

// Same-id re-detection (docs/architecture.md "Findings"): the latest report owns the text;
// events only for a wake, a content replacement or a regression.
// `op`: the resource's operator state (nullopt: unreadable, so it neither dismisses nor wakes).
ReportDisposition ApplyRedetection(Transition& tx, const Finding& incoming,
                                   const std::optional<OperatorStateProjection>& op) {
  Finding& f = tx.finding;
  ReportDisposition disposition = ReportDisposition::kHeartbeat;
  tx.dirty = true;
  OperatorStateCause cause = OperatorStateCause::kIntentionallyOffline;
  const bool quiet = QuietCause(op, cause);
  if (op.has_value()) {
    f.resource_criticality = std::string(ToString(op->criticality));
  }
  const bool dismissed = f.dismissed_reason.has_value() || f.suppressed;
  const std::string dismissed_by =
      dismissed && f.dismissed_reason == DismissReason::kExpectedBehavior
          ? OperatorStateDismissCause(f)
          : std::string();
  if (!dismissed_by.empty() && op.has_value()) {
    if (quiet) {
      // Still quiet: a sighting, never a wake (not even by an escalation).
      f.last_seen_at = tx.now;
      ++f.times_raised;
      if (f.lifecycle.empty() ||
          f.lifecycle.back().type != LifecycleEventType::kSeenWhileSuppressed) {
        tx.Event(LifecycleEventType::kSeenWhileSuppressed);
      }
      return ReportDisposition::kSeenWhileSuppressed;
    }
    WakeSuppressionLifted(tx, dismissed_by);
    disposition = ReportDisposition::kReactivated;
  } else if (dismissed) {
    if (!WakeOrRecordSighting(tx, incoming)) {
      return ReportDisposition::kSeenWhileSuppressed;
    }
    disposition = ReportDisposition::kReactivated;
  } else if (quiet && f.resolved_at.has_value()) {
    // A resolved finding stays resolved while its resource is kept quiet (a resolved finding
    // cannot become dismissed); once the cause lifts a re-detection reopens it.
    f.last_seen_at = tx.now;
    if (f.lifecycle.empty() ||
        f.lifecycle.back().type != LifecycleEventType::kSeenWhileSuppressed) {
      tx.Event(LifecycleEventType::kSeenWhileSuppressed, {},
               {{kMetaOperatorStateCause, std::string(ToString(cause))}});
    }
    return ReportDisposition::kSeenWhileSuppressed;
  }
  if (f.title != incoming.title &&
      KeywordOverlap(f.title, incoming.title) <= kContentReplacedMaxTitleOverlap) {
    tx.Event(LifecycleEventType::kContentReplaced, "Finding content replaced",
             {{std::string(w::kMetaPreviousTitle), f.title},
              {std::string(w::kMetaNewTitle), incoming.title}});
    if (disposition == ReportDisposition::kHeartbeat) {
      disposition = ReportDisposition::kContentReplaced;
    }
  }
  if (f.resolved_at.has_value()) {
    Regress(tx);
    disposition = ReportDisposition::kRegressed;
  }
  OverwriteText(f, incoming);
  ++f.times_raised;
  f.last_seen_at = tx.now;
  if (quiet && !f.dismissed_reason.has_value() && !f.suppressed) {
    DismissByOperatorState(tx, *op, cause);
    return ReportDisposition::kDismissedByOperatorState;
  }
  return disposition;
}

}  // namespace

absl::StatusOr<ReportOutcome> FindingsService::Report(const FindingReport& report) {
  PULSE_ASSIGN_OR_RETURN(Finding incoming, IncomingFinding(report));
  // One read of the resource's operator state per report (C-FND-7). Unreadable: the report is
  // handled as if the resource had none, and nothing operator state dismissed is woken.
  std::optional<OperatorStateProjection> op;
  if (absl::StatusOr<OperatorStateProjection> read =
          OperatorStateProjectionFor(incoming.resource_id);
      read.ok()) {
    op = *read;
    incoming.resource_criticality = std::string(ToString(read->criticality));
  }
  for (int attempt = 0; attempt < kMaxCasAttempts; ++attempt) {
    PULSE_ASSIGN_OR_RETURN(std::optional<ReportOutcome> outcome, ReportOnce(incoming, op));
    if (outcome.has_value()) {
      return std::move(*outcome);
    }
  }
  return MakeFindingError(
      absl::StatusCode::kAborted, AgentErrorCode::kFindingActionNotAllowed,
      fmt::format("finding {} kept changing concurrently; gave up after {} attempts", incoming.id,
                  kMaxCasAttempts),
      {{"finding_id", incoming.id}});
}

// One attempt; nullopt when a concurrent writer got in the way and the caller should retry.
absl::StatusOr<std::optional<ReportOutcome>> FindingsService::ReportOnce(
    const Finding& incoming, const std::optional<OperatorStateProjection>& op) {
  absl::StatusOr<StoredFinding> existing = store_.Get(incoming.id);
  if (existing.ok()) {
    PULSE_ASSIGN_OR_RETURN(ReportOutcome outcome, ReportExisting(incoming, op));
    return std::optional<ReportOutcome>(std::move(outcome));
  }
  if (!absl::IsNotFound(existing.status())) {
    return existing.status();
  }
  PULSE_ASSIGN_OR_RETURN(bool blocked, BlockedByRule(incoming));
  if (blocked) {
    ReportOutcome outcome;
    outcome.finding_id = incoming.id;
    outcome.reported_id = incoming.id;
    outcome.disposition = ReportDisposition::kBlockedBySuppressionRule;
    return std::optional<ReportOutcome>(std::move(outcome));
  }
  const absl::Time now = clock_.Now();
  OperatorStateCause cause = OperatorStateCause::kIntentionallyOffline;
  const bool quiet = QuietCause(op, cause);
  if (!quiet) {
    // A report on a quiet resource is never merged into an active sibling (which may sit on a
    // related resource the operator did not quiet): it is kept on its own, dismissed.
    PULSE_ASSIGN_OR_RETURN(std::optional<ReportOutcome> merged, MergeIntoSibling(incoming, now));
    if (merged.has_value()) {
      return merged;
    }
  }
  Finding created = incoming;
  created.detected_at = now;
  created.last_seen_at = now;
  created.times_raised = 1;
  created.loop_state = DeriveLoopState(created, now);
  LifecycleEvent detected;
  detected.at = now;
  detected.type = LifecycleEventType::kDetected;
  detected.to = created.loop_state;
  AppendLifecycleEvent(created, std::move(detected));
  if (quiet) {
    // Stored for audit, dismissed in the same write: it never shows as active, so nothing
    // announces it (finding.created goes out for active findings only) or investigates it.
    LifecycleEvent dismissed;
    dismissed.at = now;
    dismissed.type = LifecycleEventType::kDismissed;
    dismissed.message = std::string(CauseMessage(cause));
    dismissed.metadata = OperatorStateMetadata(*op, cause);
    dismissed.from = created.loop_state;
    created.dismissed_reason = DismissReason::kExpectedBehavior;
    created.loop_state = DeriveLoopState(created, now);
    dismissed.to = created.loop_state;
    AppendLifecycleEvent(created, std::move(dismissed));
  }
  absl::StatusOr<std::int64_t> put = store_.Put(created, 0);
  if (!put.ok()) {
    if (absl::IsAborted(put.status())) {
      return std::optional<ReportOutcome>();  // created concurrently: retry as a re-detection
    }
    return put.status();
  }
  ReportOutcome outcome;
  outcome.finding_id = created.id;
  outcome.reported_id = created.id;
  outcome.is_new = !quiet;
  outcome.disposition =
      quiet ? ReportDisposition::kDismissedByOperatorState : ReportDisposition::kCreated;
  outcome.events = {LifecycleEventType::kDetected};
  if (quiet) {
    outcome.events.push_back(LifecycleEventType::kDismissed);
  }
  return std::optional<ReportOutcome>(std::move(outcome));
}

absl::StatusOr<ReportOutcome> FindingsService::ReportExisting(
    const Finding& incoming, const std::optional<OperatorStateProjection>& op) {
  ReportDisposition disposition = ReportDisposition::kHeartbeat;
  PULSE_ASSIGN_OR_RETURN(Mutation m, Mutate(incoming.id, [&](Transition& tx) {
                           disposition = ApplyRedetection(tx, incoming, op);
                           return absl::OkStatus();
                         }));
  ReportOutcome outcome;
  outcome.finding_id = m.finding.id;
  outcome.reported_id = incoming.id;
  outcome.disposition = disposition;
  outcome.events = std::move(m.events);
  return outcome;
}

absl::StatusOr<bool> FindingsService::BlockedByRule(const Finding& incoming) const {
  PULSE_ASSIGN_OR_RETURN(std::vector<SuppressionRule> rules, store_.ListSuppressionRules());
  for (const SuppressionRule& rule : rules) {
    if (RuleMatches(rule, incoming.resource_id, incoming.category)) {
      return true;
    }
  }
  return false;
}

// nullopt when no equivalent active sibling exists (or it stopped being one meanwhile).
absl::StatusOr<std::optional<ReportOutcome>> FindingsService::MergeIntoSibling(
    const Finding& incoming, absl::Time now) {
  // Only findings on a related resource can be equivalent (SiblingEquivalence), so the store
  // narrows to those through its indexes instead of returning every active finding.
  FindingFilter active;
  active.active_at = now;
  active.related_to = RelatedResourceFilter{incoming.resource_id, StorageIdentityOf(incoming)};
  PULSE_ASSIGN_OR_RETURN(std::vector<StoredFinding> candidates, store_.List(active));
  const Finding* best = nullptr;
  double best_score = -1;
  for (const StoredFinding& c : candidates) {
    std::optional<double> score = SiblingEquivalence(c.finding, incoming);
    // Candidates come ordered by id, so a strict '>' keeps the smallest id on ties.
    if (score.has_value() && *score > best_score) {
      best = &c.finding;
      best_score = *score;
    }
  }
  if (best == nullptr) {
    return std::optional<ReportOutcome>();
  }
  bool still_equivalent = true;
  PULSE_ASSIGN_OR_RETURN(
      Mutation m, Mutate(best->id, [&](Transition& tx) {
        Finding& f = tx.finding;
        still_equivalent = IsActive(f, tx.now) && SiblingEquivalence(f, incoming).has_value();
        if (!still_equivalent) {
          return absl::OkStatus();
        }
        tx.dirty = true;
        f.last_seen_at = tx.now;
        ++f.times_raised;
        if (SeverityRank(incoming.severity) >= SeverityRank(f.severity)) {
          f.severity = incoming.severity;
          for (auto [field, value] : {std::pair{&f.title, &incoming.title},
                                      std::pair{&f.description, &incoming.description},
                                      std::pair{&f.impact, &incoming.impact},
                                      std::pair{&f.recommendation, &incoming.recommendation},
                                      std::pair{&f.evidence, &incoming.evidence}}) {
            if (!value->empty()) {
              *field = *value;
            }
          }
        }
        if (f.node.empty()) {
          f.node = incoming.node;
        }
        if (!HasMergedDuplicate(f, incoming.id)) {
          tx.Event(
              LifecycleEventType::kDuplicateMerged,
              fmt::format("Merged an equivalent report ({})", incoming.title),
              {{std::string(w::kMetaDuplicateId), incoming.id},
               {std::string(w::kMetaDuplicateKey), incoming.key},
               {std::string(w::kMetaDuplicateSeverity), std::string(ToString(incoming.severity))}});
        }
        return absl::OkStatus();
      }));
  if (!still_equivalent) {
    return std::optional<ReportOutcome>();
  }
  ReportOutcome outcome;
  outcome.finding_id = m.finding.id;
  outcome.reported_id = incoming.id;
  outcome.disposition = ReportDisposition::kMerged;
  outcome.events = std::move(m.events);
  return std::optional<ReportOutcome>(std::move(outcome));
}

}  // namespace pulse::core
