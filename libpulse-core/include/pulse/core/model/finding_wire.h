// The wire names of the findings feature, spelled exactly as on the wire (docs/api.md,
// docs/architecture.md "Findings"): Finding JSON members, lifecycle-event and forecast members,
// suppression-rule members, finding-route request members, and lifecycle metadata keys. Header-only
// constants.
#pragma once

#include <string_view>

namespace pulse::core::finding_wire {

// --- Finding (docs/architecture.md "Findings"), in wire order ---
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kKey = "key";
inline constexpr std::string_view kSeverity = "severity";
inline constexpr std::string_view kCategory = "category";
inline constexpr std::string_view kResourceId = "resource_id";
inline constexpr std::string_view kResourceName = "resource_name";
inline constexpr std::string_view kResourceType = "resource_type";
inline constexpr std::string_view kResourceCriticality = "resource_criticality";
inline constexpr std::string_view kNode = "node";
inline constexpr std::string_view kTitle = "title";
inline constexpr std::string_view kDescription = "description";
inline constexpr std::string_view kImpact = "impact";
inline constexpr std::string_view kPreviousResolvedFixSummary = "previous_resolved_fix_summary";
inline constexpr std::string_view kRecommendation = "recommendation";
inline constexpr std::string_view kEvidence = "evidence";
inline constexpr std::string_view kSource = "source";
inline constexpr std::string_view kFailureCause = "failure_cause";
inline constexpr std::string_view kDetectedAt = "detected_at";
inline constexpr std::string_view kLastSeenAt = "last_seen_at";
inline constexpr std::string_view kResolvedAt = "resolved_at";
inline constexpr std::string_view kAutoResolved = "auto_resolved";
inline constexpr std::string_view kResolveReason = "resolve_reason";
inline constexpr std::string_view kAcknowledgedAt = "acknowledged_at";
inline constexpr std::string_view kSnoozedUntil = "snoozed_until";
inline constexpr std::string_view kAlertIdentifier = "alert_identifier";
inline constexpr std::string_view kDismissedReason = "dismissed_reason";
inline constexpr std::string_view kUserNote = "user_note";
inline constexpr std::string_view kTimesRaised = "times_raised";
inline constexpr std::string_view kSuppressed = "suppressed";
inline constexpr std::string_view kRemindAt = "remind_at";
inline constexpr std::string_view kRemindCount = "remind_count";
inline constexpr std::string_view kInvestigationSessionId = "investigation_session_id";
inline constexpr std::string_view kInvestigationStatus = "investigation_status";
inline constexpr std::string_view kInvestigationOutcome = "investigation_outcome";
inline constexpr std::string_view kLastInvestigatedAt = "last_investigated_at";
inline constexpr std::string_view kInvestigationAttempts = "investigation_attempts";
inline constexpr std::string_view kInvestigationRecord = "investigation_record";
inline constexpr std::string_view kFixActionId = "fix_action_id";
inline constexpr std::string_view kLoopState = "loop_state";
inline constexpr std::string_view kLifecycle = "lifecycle";
inline constexpr std::string_view kRegressionCount = "regression_count";
inline constexpr std::string_view kLastRegressionAt = "last_regression_at";
inline constexpr std::string_view kCapacityForecast = "capacity_forecast";
inline constexpr std::string_view kObjectiveContext = "objective_context";

// --- Lifecycle event ---
inline constexpr std::string_view kEventAt = "at";
inline constexpr std::string_view kEventType = "type";
inline constexpr std::string_view kEventMessage = "message";
inline constexpr std::string_view kEventFrom = "from";
inline constexpr std::string_view kEventTo = "to";
inline constexpr std::string_view kEventMetadata = "metadata";

// --- Capacity forecast ---
inline constexpr std::string_view kForecastMetric = "metric";
inline constexpr std::string_view kForecastReading = "reading";
inline constexpr std::string_view kForecastSampleCount = "sample_count";
inline constexpr std::string_view kForecastCurrentPct = "current_pct";
inline constexpr std::string_view kForecastDailyChange = "daily_change";
inline constexpr std::string_view kForecastDaysToFull = "days_to_full";

// --- Suppression rule ---
inline constexpr std::string_view kRuleDescription = "description";
inline constexpr std::string_view kRuleCreatedAt = "created_at";
inline constexpr std::string_view kRuleCreatedFrom = "created_from";
inline constexpr std::string_view kRuleFindingId = "finding_id";
inline constexpr std::string_view kAllowBroadScope = "allow_broad_scope";

// --- Finding-route request bodies (docs/api.md) ---
inline constexpr std::string_view kFindingId = "finding_id";
inline constexpr std::string_view kDurationHours = "duration_hours";
inline constexpr std::string_view kReason = "reason";
inline constexpr std::string_view kNote = "note";
inline constexpr std::string_view kResolutionNote = "resolution_note";
inline constexpr std::string_view kVerdict = "verdict";

// --- Lifecycle metadata keys ---
inline constexpr std::string_view kMetaPreviousTitle = "previous_title";
inline constexpr std::string_view kMetaNewTitle = "new_title";
inline constexpr std::string_view kMetaPreviousResolvedAt = "previous_resolved_at";
inline constexpr std::string_view kMetaPreviousResolveReason = "previous_resolve_reason";
inline constexpr std::string_view kMetaPreviousAcknowledged = "previous_acknowledged";
inline constexpr std::string_view kMetaDuplicateId = "duplicate_id";
inline constexpr std::string_view kMetaDuplicateKey = "duplicate_key";
inline constexpr std::string_view kMetaDuplicateSeverity = "duplicate_severity";
inline constexpr std::string_view kMetaUntil = "until";
inline constexpr std::string_view kMetaPreviousUntil = "previous_until";
inline constexpr std::string_view kMetaReason = "reason";
inline constexpr std::string_view kMetaRemindAt = "remind_at";
inline constexpr std::string_view kMetaCause = "cause";
inline constexpr std::string_view kMetaPreviousSeverity = "previous_severity";
inline constexpr std::string_view kMetaSeverity = "severity";
inline constexpr std::string_view kMetaRuleId = "rule_id";
inline constexpr std::string_view kMetaEvidence = "evidence";
inline constexpr std::string_view kMetaVerification = "verification";
inline constexpr std::string_view kMetaRemindCount = "remind_count";

}  // namespace pulse::core::finding_wire
