#include "pulse/core/findings/finding_json.h"

#include <utility>

#include "fmt/format.h"
#include "pulse/core/findings/capacity_forecast.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/model/finding_wire.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

namespace w = finding_wire;

constexpr std::size_t kId = kMaxFindingIdentifierBytes;
constexpr std::size_t kText = kMaxFindingTextBytes;
constexpr std::int64_t kMaxCount = std::int64_t{1} << 53;  // exact in every JSON reader
constexpr JsonPresence kRequired = JsonPresence::kRequired;
// Enum members are read as strings of at most 64 bytes first; an empty optional one is absent.
constexpr JsonStringRule kRequiredEnum{64, kRequired};
constexpr JsonStringRule kOptionalEnum{64};

void WriteForecast(JsonWriter& out, const CapacityForecast& f) {
  out.StartObject();
  out.MemberIfNotEmpty(w::kForecastMetric, f.metric);
  out.Member(w::kForecastReading, ToString(f.reading));
  out.Member(w::kForecastSampleCount, f.sample_count);
  out.NumberMemberIfFinite(w::kForecastCurrentPct, f.current_pct);
  out.NumberMemberIfFinite(w::kForecastDailyChange, f.daily_change);
  out.Member(w::kForecastDaysToFull, f.days_to_full.value_or(-1));
  out.EndObject();
}

void WriteEvent(JsonWriter& out, const LifecycleEvent& e) {
  out.StartObject();
  out.TimeMember(w::kEventAt, e.at);
  out.Member(w::kEventType, ToString(e.type));
  out.MemberIfNotEmpty(w::kEventMessage, e.message);
  if (e.from.has_value()) {
    out.Member(w::kEventFrom, ToString(*e.from));
  }
  if (e.to.has_value()) {
    out.Member(w::kEventTo, ToString(*e.to));
  }
  if (!e.metadata.empty()) {
    out.Key(w::kEventMetadata);
    out.StartObject();
    for (const auto& [key, value] : e.metadata) {
      out.Member(key, value);
    }
    out.EndObject();
  }
  out.EndObject();
}

// Opaque sub-objects are written verbatim only when they are a well-formed, bounded JSON
// object; anything else is dropped so the output stays valid JSON.
void WriteOpaque(JsonWriter& out, std::string_view key, const std::string& json) {
  if (json.empty()) {
    return;
  }
  absl::StatusOr<rapidjson::Document> doc =
      ParseJson(json, JsonLimits{kMaxFindingJsonBytes, kMaxFindingJsonDepth});
  if (!doc.ok() || !doc->IsObject()) {
    return;
  }
  out.Key(key);
  out.RawValue(CanonicalJson(*doc));
}

void WriteFinding(JsonWriter& out, const Finding& f, const FindingJsonOptions& options) {
  out.StartObject();
  out.Member(w::kId, f.id);
  out.MemberIfNotEmpty(w::kKey, f.key);
  out.Member(w::kSeverity, ToString(f.severity));
  out.Member(w::kCategory, ToString(f.category));
  out.Member(w::kResourceId, f.resource_id);
  out.Member(w::kResourceName, f.resource_name);
  out.Member(w::kResourceType, f.resource_type);
  out.MemberIfNotEmpty(w::kResourceCriticality, f.resource_criticality);
  out.MemberIfNotEmpty(w::kNode, f.node);
  out.Member(w::kTitle, f.title);
  out.Member(w::kDescription, f.description);
  out.MemberIfNotEmpty(w::kImpact, f.impact);
  out.MemberIfNotEmpty(w::kPreviousResolvedFixSummary, f.previous_resolved_fix_summary);
  out.MemberIfNotEmpty(w::kRecommendation, f.recommendation);
  out.MemberIfNotEmpty(w::kEvidence, f.evidence);
  out.MemberIfNotEmpty(w::kSource, f.source);
  out.MemberIfNotEmpty(w::kFailureCause, f.failure_cause);
  out.TimeMember(w::kDetectedAt, f.detected_at);
  out.TimeMember(w::kLastSeenAt, f.last_seen_at);
  out.TimeMemberIfSet(w::kResolvedAt, f.resolved_at);
  out.Member(w::kAutoResolved, f.auto_resolved);
  out.MemberIfNotEmpty(w::kResolveReason, f.resolve_reason);
  out.TimeMemberIfSet(w::kAcknowledgedAt, f.acknowledged_at);
  out.TimeMemberIfSet(w::kSnoozedUntil, f.snoozed_until);
  if (options.include_private) {
    out.MemberIfNotEmpty(w::kAlertIdentifier, f.alert_identifier);
  }
  if (f.dismissed_reason.has_value()) {
    out.Member(w::kDismissedReason, ToString(*f.dismissed_reason));
  }
  out.MemberIfNotEmpty(w::kUserNote, f.user_note);
  out.Member(w::kTimesRaised, f.times_raised);
  out.Member(w::kSuppressed, f.suppressed);
  out.TimeMemberIfSet(w::kRemindAt, f.remind_at);
  if (f.remind_count != 0) {
    out.Member(w::kRemindCount, f.remind_count);
  }
  out.MemberIfNotEmpty(w::kInvestigationSessionId, f.investigation_session_id);
  if (f.investigation_status.has_value()) {
    out.Member(w::kInvestigationStatus, ToString(*f.investigation_status));
  }
  if (f.investigation_outcome.has_value()) {
    out.Member(w::kInvestigationOutcome, ToString(*f.investigation_outcome));
  }
  out.TimeMemberIfSet(w::kLastInvestigatedAt, f.last_investigated_at);
  out.Member(w::kInvestigationAttempts, f.investigation_attempts);
  out.MemberIfNotEmpty(w::kFixActionId, f.fix_action_id);
  WriteOpaque(out, w::kInvestigationRecord, f.investigation_record_json);
  const std::optional<LoopState> loop_state =
      options.now.has_value() ? std::optional<LoopState>(DeriveLoopState(f, *options.now))
                              : f.loop_state;
  if (loop_state.has_value()) {
    out.Member(w::kLoopState, ToString(*loop_state));
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
    out.Member(w::kRegressionCount, f.regression_count);
  }
  out.TimeMemberIfSet(w::kLastRegressionAt, f.last_regression_at);
  if (f.capacity_forecast.has_value()) {
    out.Key(w::kCapacityForecast);
    WriteForecast(out, *f.capacity_forecast);
  }
  WriteOpaque(out, w::kObjectiveContext, f.objective_context_json);
  out.EndObject();
}

absl::StatusOr<CapacityForecast> ReadForecast(const rapidjson::Value& value) {
  JsonObjectReader in(value, std::string(w::kCapacityForecast));
  PULSE_RETURN_IF_ERROR(
      in.ExpectMembers({w::kForecastMetric, w::kForecastReading, w::kForecastSampleCount,
                        w::kForecastCurrentPct, w::kForecastDailyChange, w::kForecastDaysToFull}));
  CapacityForecast f;
  f.metric = in.String(w::kForecastMetric, {kId}).value_or(f.metric);
  f.reading = in.Enum(w::kForecastReading, ParseForecastReading, kRequiredEnum).value_or(f.reading);
  f.sample_count = in.Int(w::kForecastSampleCount, 0, kMaxCount).value_or(f.sample_count);
  f.current_pct = in.Number(w::kForecastCurrentPct);
  f.daily_change = in.Number(w::kForecastDailyChange);
  const std::optional<std::int64_t> days = in.Int(w::kForecastDaysToFull, -1, kMaxDaysToFull);
  PULSE_RETURN_IF_ERROR(in.status());
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
    return absl::InvalidArgumentError(
        fmt::format("{}.metadata has more than {} entries", what, kMaxEventMetadataEntries));
  }
  for (const auto& m : value.GetObject()) {
    const std::string_view key = StringViewOf(m.name);
    if (key.empty() || key.size() > kMaxEventMetadataKeyBytes || !IsValidUtf8(key)) {
      return absl::InvalidArgumentError(fmt::format("{}.metadata has an invalid key", what));
    }
    if (!m.value.IsString() || m.value.GetStringLength() > kMaxEventMetadataValueBytes) {
      return absl::InvalidArgumentError(
          fmt::format("{}.metadata values must be strings of at most {} bytes", what,
                      kMaxEventMetadataValueBytes));
    }
    const std::string_view text = StringViewOf(m.value);
    if (!IsValidUtf8(text)) {
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
  JsonObjectReader in(value, what);
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({w::kEventAt, w::kEventType, w::kEventMessage,
                                          w::kEventFrom, w::kEventTo, w::kEventMetadata}));
  LifecycleEvent e;
  e.at = in.Time(w::kEventAt, kRequired).value_or(e.at);
  e.type = in.Enum(w::kEventType, ParseLifecycleEventType, kRequiredEnum).value_or(e.type);
  e.message = in.String(w::kEventMessage, {kText}).value_or(e.message);
  e.from = in.Enum(w::kEventFrom, ParseLoopState, kOptionalEnum);
  e.to = in.Enum(w::kEventTo, ParseLoopState, kOptionalEnum);
  PULSE_RETURN_IF_ERROR(in.status());
  // Unlike the other members, a null metadata is an error, not an absence.
  const rapidjson::Value* metadata = GetMember(value, w::kEventMetadata);
  if (metadata != nullptr) {
    PULSE_RETURN_IF_ERROR(ReadMetadata(*metadata, what, e.metadata));
  }
  return e;
}

// An opaque sub-object, kept as canonical JSON text.
std::string ReadOpaque(JsonObjectReader& in, std::string_view key) {
  const rapidjson::Value* v = in.Member(key);
  if (v == nullptr) {
    return {};
  }
  if (!v->IsObject()) {
    in.Fail(key, "must be an object");
    return {};
  }
  return CanonicalJson(*v);
}

void ReadText(JsonObjectReader& in, Finding& f) {
  const JsonStringRule id{kId};
  const JsonStringRule text{kText};
  f.id = in.String(w::kId, {kId, kRequired}).value_or("");
  f.key = in.String(w::kKey, id).value_or("");
  f.resource_id = in.String(w::kResourceId, {kId, kRequired}).value_or("");
  f.resource_name = in.String(w::kResourceName, id).value_or("");
  f.resource_type = in.String(w::kResourceType, id).value_or("");
  f.resource_criticality = in.String(w::kResourceCriticality, id).value_or("");
  f.node = in.String(w::kNode, id).value_or("");
  f.title = in.String(w::kTitle, {kText, kRequired}).value_or("");
  f.description = in.String(w::kDescription, text).value_or("");
  f.impact = in.String(w::kImpact, text).value_or("");
  f.previous_resolved_fix_summary = in.String(w::kPreviousResolvedFixSummary, text).value_or("");
  f.recommendation = in.String(w::kRecommendation, text).value_or("");
  f.evidence = in.String(w::kEvidence, text).value_or("");
  f.source = in.String(w::kSource, id).value_or("");
  f.failure_cause = in.String(w::kFailureCause, text).value_or("");
  f.resolve_reason = in.String(w::kResolveReason, text).value_or("");
  f.alert_identifier = in.String(w::kAlertIdentifier, id).value_or("");
  f.user_note = in.String(w::kUserNote, text).value_or("");
  f.investigation_session_id = in.String(w::kInvestigationSessionId, id).value_or("");
  f.fix_action_id = in.String(w::kFixActionId, id).value_or("");
}

void ReadState(JsonObjectReader& in, Finding& f) {
  f.severity = in.Enum(w::kSeverity, ParseSeverity, kRequiredEnum).value_or(f.severity);
  f.category = in.Enum(w::kCategory, ParseCategory, kRequiredEnum).value_or(f.category);
  f.detected_at = in.Time(w::kDetectedAt, kRequired).value_or(f.detected_at);
  f.last_seen_at = in.Time(w::kLastSeenAt, kRequired).value_or(f.last_seen_at);
  f.resolved_at = in.Time(w::kResolvedAt);
  f.auto_resolved = in.Bool(w::kAutoResolved).value_or(f.auto_resolved);
  f.acknowledged_at = in.Time(w::kAcknowledgedAt);
  f.snoozed_until = in.Time(w::kSnoozedUntil);
  f.dismissed_reason = in.Enum(w::kDismissedReason, ParseDismissReason, kOptionalEnum);
  f.times_raised = in.Int(w::kTimesRaised, 0, kMaxCount).value_or(f.times_raised);
  f.suppressed = in.Bool(w::kSuppressed).value_or(f.suppressed);
  f.remind_at = in.Time(w::kRemindAt);
  f.remind_count = in.Int(w::kRemindCount, 0, kMaxCount).value_or(f.remind_count);
  f.investigation_status =
      in.Enum(w::kInvestigationStatus, ParseInvestigationStatus, kOptionalEnum);
  f.investigation_outcome =
      in.Enum(w::kInvestigationOutcome, ParseInvestigationOutcome, kOptionalEnum);
  f.last_investigated_at = in.Time(w::kLastInvestigatedAt);
  f.investigation_attempts =
      in.Int(w::kInvestigationAttempts, 0, kMaxCount).value_or(f.investigation_attempts);
  f.loop_state = in.Enum(w::kLoopState, ParseLoopState, kOptionalEnum);
  f.regression_count = in.Int(w::kRegressionCount, 0, kMaxCount).value_or(f.regression_count);
  f.last_regression_at = in.Time(w::kLastRegressionAt);
}

absl::Status ReadLifecycle(JsonObjectReader& in, Finding& f) {
  const rapidjson::Value* lifecycle = in.Member(w::kLifecycle);
  if (lifecycle == nullptr) {
    return absl::OkStatus();
  }
  if (!lifecycle->IsArray()) {
    in.Fail(w::kLifecycle, "must be an array");
    return in.status();
  }
  if (lifecycle->Size() > kMaxLifecycleEvents) {
    in.Fail(w::kLifecycle, fmt::format("has more than {} events", kMaxLifecycleEvents));
    return in.status();
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
  JsonWriter out;
  WriteFinding(out, finding, options);
  return out.Take();
}

std::string FindingListToJson(std::span<const Finding> findings,
                              const FindingJsonOptions& options) {
  JsonWriter out;
  out.StartArray();
  for (const Finding& f : findings) {
    WriteFinding(out, f, options);
  }
  out.EndArray();
  return out.Take();
}

absl::StatusOr<Finding> FindingFromJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBounded(json));
  JsonObjectReader in(doc, "finding");
  PULSE_RETURN_IF_ERROR(in.ExpectMembers({
      w::kId,
      w::kKey,
      w::kSeverity,
      w::kCategory,
      w::kResourceId,
      w::kResourceName,
      w::kResourceType,
      w::kResourceCriticality,
      w::kNode,
      w::kTitle,
      w::kDescription,
      w::kImpact,
      w::kPreviousResolvedFixSummary,
      w::kRecommendation,
      w::kEvidence,
      w::kSource,
      w::kFailureCause,
      w::kDetectedAt,
      w::kLastSeenAt,
      w::kResolvedAt,
      w::kAutoResolved,
      w::kResolveReason,
      w::kAcknowledgedAt,
      w::kSnoozedUntil,
      w::kAlertIdentifier,
      w::kDismissedReason,
      w::kUserNote,
      w::kTimesRaised,
      w::kSuppressed,
      w::kRemindAt,
      w::kRemindCount,
      w::kInvestigationSessionId,
      w::kInvestigationStatus,
      w::kInvestigationOutcome,
      w::kLastInvestigatedAt,
      w::kInvestigationAttempts,
      w::kInvestigationRecord,
      w::kFixActionId,
      w::kLoopState,
      w::kLifecycle,
      w::kRegressionCount,
      w::kLastRegressionAt,
      w::kCapacityForecast,
      w::kObjectiveContext,
  }));
  Finding f;
  ReadText(in, f);
  ReadState(in, f);
  PULSE_RETURN_IF_ERROR(in.status());
  PULSE_RETURN_IF_ERROR(ReadLifecycle(in, f));
  f.investigation_record_json = ReadOpaque(in, w::kInvestigationRecord);
  f.objective_context_json = ReadOpaque(in, w::kObjectiveContext);
  const rapidjson::Value* forecast = in.Member(w::kCapacityForecast);
  PULSE_RETURN_IF_ERROR(in.status());
  if (forecast != nullptr) {
    PULSE_ASSIGN_OR_RETURN(CapacityForecast parsed, ReadForecast(*forecast));
    f.capacity_forecast = std::move(parsed);
  }
  return f;
}

std::string CapacityForecastToJson(const CapacityForecast& forecast) {
  JsonWriter out;
  WriteForecast(out, forecast);
  return out.Take();
}

absl::StatusOr<CapacityForecast> CapacityForecastFromJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseBounded(json));
  return ReadForecast(doc);
}

}  // namespace pulse::core
