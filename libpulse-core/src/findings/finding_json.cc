#include "pulse/core/findings/finding_json.h"

#include <utility>

#include "fmt/format.h"
#include "json_codec.h"
#include "pulse/core/findings/finding_wire.h"
#include "pulse/core/json/json.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

namespace w = finding_wire;
using findings_internal::JsonOut;
using findings_internal::ObjectIn;

constexpr std::size_t kId = kMaxFindingIdentifierBytes;
constexpr std::size_t kText = kMaxFindingTextBytes;
constexpr std::int64_t kMaxCount = std::int64_t{1} << 53;  // exact in every JSON reader

void WriteForecast(JsonOut& out, const CapacityForecast& f) {
  out.StartObject();
  out.FieldIfSet(w::kForecastMetric, f.metric);
  out.Field(w::kForecastReading, ToString(f.reading));
  out.Field(w::kForecastSampleCount, f.sample_count);
  out.FieldIfFinite(w::kForecastCurrentPct, f.current_pct);
  out.FieldIfFinite(w::kForecastDailyChange, f.daily_change);
  out.Field(w::kForecastDaysToFull, f.days_to_full.value_or(-1));
  out.EndObject();
}

void WriteEvent(JsonOut& out, const LifecycleEvent& e) {
  out.StartObject();
  out.FieldTime(w::kEventAt, e.at);
  out.Field(w::kEventType, ToString(e.type));
  out.FieldIfSet(w::kEventMessage, e.message);
  if (e.from.has_value()) {
    out.Field(w::kEventFrom, ToString(*e.from));
  }
  if (e.to.has_value()) {
    out.Field(w::kEventTo, ToString(*e.to));
  }
  if (!e.metadata.empty()) {
    out.Key(w::kEventMetadata);
    out.StartObject();
    for (const auto& [key, value] : e.metadata) {
      out.Field(key, value);
    }
    out.EndObject();
  }
  out.EndObject();
}

// Opaque sub-objects are written verbatim only when they are a well-formed, bounded JSON
// object; anything else is dropped so the output stays valid JSON.
void WriteOpaque(JsonOut& out, std::string_view key, const std::string& json) {
  if (json.empty()) {
    return;
  }
  absl::StatusOr<rapidjson::Document> doc =
      ParseJson(json, JsonLimits{kMaxFindingJsonBytes, kMaxFindingJsonDepth});
  if (!doc.ok() || !doc->IsObject()) {
    return;
  }
  out.Key(key);
  out.Raw(CanonicalJson(*doc));
}

void WriteFinding(JsonOut& out, const Finding& f, const FindingJsonOptions& options) {
  out.StartObject();
  out.Field(w::kId, f.id);
  out.FieldIfSet(w::kKey, f.key);
  out.Field(w::kSeverity, ToString(f.severity));
  out.Field(w::kCategory, ToString(f.category));
  out.Field(w::kResourceId, f.resource_id);
  out.Field(w::kResourceName, f.resource_name);
  out.Field(w::kResourceType, f.resource_type);
  out.FieldIfSet(w::kResourceCriticality, f.resource_criticality);
  out.FieldIfSet(w::kNode, f.node);
  out.Field(w::kTitle, f.title);
  out.Field(w::kDescription, f.description);
  out.FieldIfSet(w::kImpact, f.impact);
  out.FieldIfSet(w::kPreviousResolvedFixSummary, f.previous_resolved_fix_summary);
  out.FieldIfSet(w::kRecommendation, f.recommendation);
  out.FieldIfSet(w::kEvidence, f.evidence);
  out.FieldIfSet(w::kSource, f.source);
  out.FieldIfSet(w::kFailureCause, f.failure_cause);
  out.FieldTime(w::kDetectedAt, f.detected_at);
  out.FieldTime(w::kLastSeenAt, f.last_seen_at);
  out.FieldIfSet(w::kResolvedAt, f.resolved_at);
  out.Field(w::kAutoResolved, f.auto_resolved);
  out.FieldIfSet(w::kResolveReason, f.resolve_reason);
  out.FieldIfSet(w::kAcknowledgedAt, f.acknowledged_at);
  out.FieldIfSet(w::kSnoozedUntil, f.snoozed_until);
  if (options.include_private) {
    out.FieldIfSet(w::kAlertIdentifier, f.alert_identifier);
  }
  if (f.dismissed_reason.has_value()) {
    out.Field(w::kDismissedReason, ToString(*f.dismissed_reason));
  }
  out.FieldIfSet(w::kUserNote, f.user_note);
  out.Field(w::kTimesRaised, f.times_raised);
  out.Field(w::kSuppressed, f.suppressed);
  out.FieldIfSet(w::kRemindAt, f.remind_at);
  if (f.remind_count != 0) {
    out.Field(w::kRemindCount, f.remind_count);
  }
  out.FieldIfSet(w::kInvestigationSessionId, f.investigation_session_id);
  if (f.investigation_status.has_value()) {
    out.Field(w::kInvestigationStatus, ToString(*f.investigation_status));
  }
  if (f.investigation_outcome.has_value()) {
    out.Field(w::kInvestigationOutcome, ToString(*f.investigation_outcome));
  }
  out.FieldIfSet(w::kLastInvestigatedAt, f.last_investigated_at);
  out.Field(w::kInvestigationAttempts, f.investigation_attempts);
  WriteOpaque(out, w::kInvestigationRecord, f.investigation_record_json);
  const std::optional<LoopState> loop_state =
      options.now.has_value() ? std::optional<LoopState>(DeriveLoopState(f, *options.now))
                              : f.loop_state;
  if (loop_state.has_value()) {
    out.Field(w::kLoopState, ToString(*loop_state));
  }
  if (!f.lifecycle.empty()) {
    out.Key(w::kLifecycle);
    out.StartArray();
    for (const LifecycleEvent& e : f.lifecycle) {
      WriteEvent(out, e);
    }
    out.EndArray();
  }
  if (f.regression_count != 0) {
    out.Field(w::kRegressionCount, f.regression_count);
  }
  out.FieldIfSet(w::kLastRegressionAt, f.last_regression_at);
  if (f.capacity_forecast.has_value()) {
    out.Key(w::kCapacityForecast);
    WriteForecast(out, *f.capacity_forecast);
  }
  WriteOpaque(out, w::kObjectiveContext, f.objective_context_json);
  out.EndObject();
}

absl::StatusOr<CapacityForecast> ReadForecast(const rapidjson::Value& value) {
  ObjectIn in(value, std::string(w::kCapacityForecast));
  PULSE_RETURN_IF_ERROR(in.Check({w::kForecastMetric, w::kForecastReading,
                                  w::kForecastSampleCount, w::kForecastCurrentPct,
                                  w::kForecastDailyChange, w::kForecastDaysToFull}));
  CapacityForecast f;
  PULSE_RETURN_IF_ERROR(in.String(w::kForecastMetric, kId, false, f.metric));
  std::optional<ForecastReading> reading;
  PULSE_RETURN_IF_ERROR(in.Enum(w::kForecastReading, ParseForecastReading, true, reading));
  f.reading = *reading;
  PULSE_RETURN_IF_ERROR(in.Int(w::kForecastSampleCount, 0, kMaxCount, f.sample_count));
  PULSE_RETURN_IF_ERROR(in.Double(w::kForecastCurrentPct, f.current_pct));
  PULSE_RETURN_IF_ERROR(in.Double(w::kForecastDailyChange, f.daily_change));
  std::optional<std::int64_t> days;
  PULSE_RETURN_IF_ERROR(in.OptionalInt(w::kForecastDaysToFull, -1, kMaxDaysToFull, days));
  if (days.has_value() && *days >= 0) {
    f.days_to_full = days;
  }
  return f;
}

absl::Status ReadMetadata(const rapidjson::Value& value, const std::string& what,
                          std::map<std::string, std::string>& out) {
  if (!value.IsObject()) {
    return absl::InvalidArgumentError(fmt::format("{}.metadata must be an object", what));
  }
  if (value.MemberCount() > kMaxEventMetadataEntries) {
    return absl::InvalidArgumentError(fmt::format("{}.metadata has more than {} entries", what,
                                                  kMaxEventMetadataEntries));
  }
  for (const auto& m : value.GetObject()) {
    const std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (key.empty() || key.size() > kMaxEventMetadataKeyBytes ||
        !findings_internal::IsValidUtf8(key)) {
      return absl::InvalidArgumentError(fmt::format("{}.metadata has an invalid key", what));
    }
    if (!m.value.IsString() || m.value.GetStringLength() > kMaxEventMetadataValueBytes) {
      return absl::InvalidArgumentError(fmt::format(
          "{}.metadata values must be strings of at most {} bytes", what,
          kMaxEventMetadataValueBytes));
    }
    const std::string_view text(m.value.GetString(), m.value.GetStringLength());
    if (!findings_internal::IsValidUtf8(text)) {
      return absl::InvalidArgumentError(fmt::format("{}.metadata value is not UTF-8", what));
    }
    if (!out.emplace(std::string(key), std::string(text)).second) {
      return absl::InvalidArgumentError(fmt::format("{}.metadata has a duplicate key", what));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<LifecycleEvent> ReadEvent(const rapidjson::Value& value, std::size_t index) {
  const std::string what = fmt::format("lifecycle[{}]", index);
  ObjectIn in(value, what);
  PULSE_RETURN_IF_ERROR(in.Check(
      {w::kEventAt, w::kEventType, w::kEventMessage, w::kEventFrom, w::kEventTo,
       w::kEventMetadata}));
  LifecycleEvent e;
  PULSE_RETURN_IF_ERROR(in.RequiredTime(w::kEventAt, e.at));
  std::optional<LifecycleEventType> type;
  PULSE_RETURN_IF_ERROR(in.Enum(w::kEventType, ParseLifecycleEventType, true, type));
  e.type = *type;
  PULSE_RETURN_IF_ERROR(in.String(w::kEventMessage, kText, false, e.message));
  PULSE_RETURN_IF_ERROR(in.Enum(w::kEventFrom, ParseLoopState, false, e.from));
  PULSE_RETURN_IF_ERROR(in.Enum(w::kEventTo, ParseLoopState, false, e.to));
  if (const rapidjson::Value* metadata = in.Find(w::kEventMetadata)) {
    PULSE_RETURN_IF_ERROR(ReadMetadata(*metadata, what, e.metadata));
  }
  return e;
}

absl::Status ReadOpaque(const ObjectIn& in, std::string_view key, std::string& out) {
  const rapidjson::Value* v = in.Find(key);
  if (v == nullptr || v->IsNull()) {
    return absl::OkStatus();
  }
  if (!v->IsObject()) {
    return in.Invalid(key, "must be an object");
  }
  out = CanonicalJson(*v);
  return absl::OkStatus();
}

absl::Status ReadText(const ObjectIn& in, Finding& f) {
  PULSE_RETURN_IF_ERROR(in.String(w::kId, kId, true, f.id));
  PULSE_RETURN_IF_ERROR(in.String(w::kKey, kId, false, f.key));
  PULSE_RETURN_IF_ERROR(in.String(w::kResourceId, kId, true, f.resource_id));
  PULSE_RETURN_IF_ERROR(in.String(w::kResourceName, kId, false, f.resource_name));
  PULSE_RETURN_IF_ERROR(in.String(w::kResourceType, kId, false, f.resource_type));
  PULSE_RETURN_IF_ERROR(in.String(w::kResourceCriticality, kId, false, f.resource_criticality));
  PULSE_RETURN_IF_ERROR(in.String(w::kNode, kId, false, f.node));
  PULSE_RETURN_IF_ERROR(in.String(w::kTitle, kText, true, f.title));
  PULSE_RETURN_IF_ERROR(in.String(w::kDescription, kText, false, f.description));
  PULSE_RETURN_IF_ERROR(in.String(w::kImpact, kText, false, f.impact));
  PULSE_RETURN_IF_ERROR(
      in.String(w::kPreviousResolvedFixSummary, kText, false, f.previous_resolved_fix_summary));
  PULSE_RETURN_IF_ERROR(in.String(w::kRecommendation, kText, false, f.recommendation));
  PULSE_RETURN_IF_ERROR(in.String(w::kEvidence, kText, false, f.evidence));
  PULSE_RETURN_IF_ERROR(in.String(w::kSource, kId, false, f.source));
  PULSE_RETURN_IF_ERROR(in.String(w::kFailureCause, kText, false, f.failure_cause));
  PULSE_RETURN_IF_ERROR(in.String(w::kResolveReason, kText, false, f.resolve_reason));
  PULSE_RETURN_IF_ERROR(in.String(w::kAlertIdentifier, kId, false, f.alert_identifier));
  PULSE_RETURN_IF_ERROR(in.String(w::kUserNote, kText, false, f.user_note));
  PULSE_RETURN_IF_ERROR(
      in.String(w::kInvestigationSessionId, kId, false, f.investigation_session_id));
  return absl::OkStatus();
}

absl::Status ReadState(const ObjectIn& in, Finding& f) {
  std::optional<Severity> severity;
  PULSE_RETURN_IF_ERROR(in.Enum(w::kSeverity, ParseSeverity, true, severity));
  f.severity = *severity;
  std::optional<Category> category;
  PULSE_RETURN_IF_ERROR(in.Enum(w::kCategory, ParseCategory, true, category));
  f.category = *category;
  PULSE_RETURN_IF_ERROR(in.RequiredTime(w::kDetectedAt, f.detected_at));
  PULSE_RETURN_IF_ERROR(in.RequiredTime(w::kLastSeenAt, f.last_seen_at));
  PULSE_RETURN_IF_ERROR(in.Time(w::kResolvedAt, f.resolved_at));
  PULSE_RETURN_IF_ERROR(in.Bool(w::kAutoResolved, f.auto_resolved));
  PULSE_RETURN_IF_ERROR(in.Time(w::kAcknowledgedAt, f.acknowledged_at));
  PULSE_RETURN_IF_ERROR(in.Time(w::kSnoozedUntil, f.snoozed_until));
  PULSE_RETURN_IF_ERROR(in.Enum(w::kDismissedReason, ParseDismissReason, false,
                                f.dismissed_reason));
  PULSE_RETURN_IF_ERROR(in.Int(w::kTimesRaised, 0, kMaxCount, f.times_raised));
  PULSE_RETURN_IF_ERROR(in.Bool(w::kSuppressed, f.suppressed));
  PULSE_RETURN_IF_ERROR(in.Time(w::kRemindAt, f.remind_at));
  PULSE_RETURN_IF_ERROR(in.Int(w::kRemindCount, 0, kMaxCount, f.remind_count));
  PULSE_RETURN_IF_ERROR(in.Enum(w::kInvestigationStatus, ParseInvestigationStatus, false,
                                f.investigation_status));
  PULSE_RETURN_IF_ERROR(in.Enum(w::kInvestigationOutcome, ParseInvestigationOutcome, false,
                                f.investigation_outcome));
  PULSE_RETURN_IF_ERROR(in.Time(w::kLastInvestigatedAt, f.last_investigated_at));
  PULSE_RETURN_IF_ERROR(
      in.Int(w::kInvestigationAttempts, 0, kMaxCount, f.investigation_attempts));
  PULSE_RETURN_IF_ERROR(in.Enum(w::kLoopState, ParseLoopState, false, f.loop_state));
  PULSE_RETURN_IF_ERROR(in.Int(w::kRegressionCount, 0, kMaxCount, f.regression_count));
  PULSE_RETURN_IF_ERROR(in.Time(w::kLastRegressionAt, f.last_regression_at));
  return absl::OkStatus();
}

absl::Status ReadLifecycle(const ObjectIn& in, Finding& f) {
  const rapidjson::Value* lifecycle = in.Find(w::kLifecycle);
  if (lifecycle == nullptr || lifecycle->IsNull()) {
    return absl::OkStatus();
  }
  if (!lifecycle->IsArray()) {
    return in.Invalid(w::kLifecycle, "must be an array");
  }
  if (lifecycle->Size() > kMaxLifecycleEvents) {
    return in.Invalid(w::kLifecycle, fmt::format("has more than {} events", kMaxLifecycleEvents));
  }
  f.lifecycle.reserve(lifecycle->Size());
  std::size_t index = 0;
  for (const auto& event : lifecycle->GetArray()) {
    PULSE_ASSIGN_OR_RETURN(LifecycleEvent e, ReadEvent(event, index++));
    f.lifecycle.push_back(std::move(e));
  }
  return absl::OkStatus();
}

absl::StatusOr<rapidjson::Document> ParseBounded(std::string_view json) {
  return ParseJson(json, JsonLimits{kMaxFindingJsonBytes, kMaxFindingJsonDepth});
}

}  // namespace

std::string FindingToJson(const Finding& finding, const FindingJsonOptions& options) {
  JsonOut out;
  WriteFinding(out, finding, options);
  return out.Take();
}

std::string FindingListToJson(std::span<const Finding> findings,
                              const FindingJsonOptions& options) {
  JsonOut out;
  out.StartArray();
  for (const Finding& f : findings) {
    WriteFinding(out, f, options);
  }
  out.EndArray();
  return out.Take();
}

absl::StatusOr<Finding> FindingFromJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBounded(json));
  ObjectIn in(doc, "finding");
  PULSE_RETURN_IF_ERROR(in.Check({
      w::kId, w::kKey, w::kSeverity, w::kCategory, w::kResourceId, w::kResourceName,
      w::kResourceType, w::kResourceCriticality, w::kNode, w::kTitle, w::kDescription, w::kImpact,
      w::kPreviousResolvedFixSummary, w::kRecommendation, w::kEvidence, w::kSource,
      w::kFailureCause, w::kDetectedAt, w::kLastSeenAt, w::kResolvedAt, w::kAutoResolved,
      w::kResolveReason, w::kAcknowledgedAt, w::kSnoozedUntil, w::kAlertIdentifier,
      w::kDismissedReason, w::kUserNote, w::kTimesRaised, w::kSuppressed, w::kRemindAt,
      w::kRemindCount, w::kInvestigationSessionId, w::kInvestigationStatus,
      w::kInvestigationOutcome, w::kLastInvestigatedAt, w::kInvestigationAttempts,
      w::kInvestigationRecord, w::kLoopState, w::kLifecycle, w::kRegressionCount,
      w::kLastRegressionAt, w::kCapacityForecast, w::kObjectiveContext,
  }));
  Finding f;
  PULSE_RETURN_IF_ERROR(ReadText(in, f));
  PULSE_RETURN_IF_ERROR(ReadState(in, f));
  PULSE_RETURN_IF_ERROR(ReadLifecycle(in, f));
  PULSE_RETURN_IF_ERROR(ReadOpaque(in, w::kInvestigationRecord, f.investigation_record_json));
  PULSE_RETURN_IF_ERROR(ReadOpaque(in, w::kObjectiveContext, f.objective_context_json));
  if (const rapidjson::Value* forecast = in.Find(w::kCapacityForecast);
      forecast != nullptr && !forecast->IsNull()) {
    PULSE_ASSIGN_OR_RETURN(CapacityForecast parsed, ReadForecast(*forecast));
    f.capacity_forecast = std::move(parsed);
  }
  return f;
}

std::string CapacityForecastToJson(const CapacityForecast& forecast) {
  JsonOut out;
  WriteForecast(out, forecast);
  return out.Take();
}

absl::StatusOr<CapacityForecast> CapacityForecastFromJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBounded(json));
  return ReadForecast(doc);
}

}  // namespace pulse::core
