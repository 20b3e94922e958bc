#include "pulse/core/model/autonomy.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_reader.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

constexpr std::array<WireName<AutonomyLevel>, 4> kLevels = {{
    {AutonomyLevel::kMonitor, "monitor"},
    {AutonomyLevel::kApproval, "approval"},
    {AutonomyLevel::kAssisted, "assisted"},
    {AutonomyLevel::kFull, "full"},
}};

constexpr std::size_t kMaxAutonomyBodyBytes = 4096;

absl::Status InvalidRequest(const absl::Status& cause) {
  return absl::InvalidArgumentError(absl::StrCat("invalid_request: ", cause.message()));
}

}  // namespace

std::string_view ToString(AutonomyLevel level) { return WireNameOf(kLevels, level, "monitor"); }

std::optional<AutonomyLevel> ParseAutonomyLevel(std::string_view text) {
  return WireValueOf(kLevels, text);
}

AutonomyLevel EffectiveAutonomy(const AutonomySettings& settings) {
  if (settings.level == AutonomyLevel::kFull && !settings.acknowledgement.has_value()) {
    return AutonomyLevel::kApproval;
  }
  return settings.level;
}

bool Investigates(AutonomyLevel effective) { return effective != AutonomyLevel::kMonitor; }

bool AutoExecutes(AutonomyLevel effective, AutoAuthorization auto_class) {
  switch (effective) {
    case AutonomyLevel::kAssisted:
      return auto_class == AutoAuthorization::kLowRisk;
    case AutonomyLevel::kFull:
      return auto_class == AutoAuthorization::kLowRisk ||
             auto_class == AutoAuthorization::kElevated;
    case AutonomyLevel::kMonitor:
    case AutonomyLevel::kApproval:
      return false;
  }
  return false;
}

std::string AutonomyToJson(const AutonomySettings& settings) {
  const AutonomyLevel effective = EffectiveAutonomy(settings);
  JsonWriter w;
  w.StartObject();
  w.Member("autonomy_level", ToString(effective));
  w.Member("requested_autonomy_level", ToString(settings.level));
  w.Member("effective_autonomy_level", ToString(effective));
  w.Member("full_mode_unlocked", settings.acknowledgement.has_value());
  if (settings.acknowledgement.has_value()) {
    w.Key("autopilot_acknowledgement");
    w.StartObject();
    w.Member("acknowledgement_id", settings.acknowledgement->id);
    w.Member("actor_id", settings.acknowledgement->actor_id);
    w.TimeMember("acknowledged_at", settings.acknowledgement->acknowledged_at);
    w.EndObject();
  }
  if (settings.last_revocation.has_value()) {
    w.Key("autopilot_revocation");
    w.RawValue(RevocationToJson(*settings.last_revocation));
  }
  w.Member("investigation_budget", settings.investigation_budget);
  w.Member("investigation_timeout_sec", settings.investigation_timeout_sec);
  w.EndObject();
  return w.Take();
}

absl::StatusOr<AutonomySettings> ParseAutonomyUpdate(std::string_view json,
                                                     const AutonomySettings& current,
                                                     std::string_view actor_id, bool actor_is_human,
                                                     absl::Time now) {
  JsonLimits limits;
  limits.max_bytes = kMaxAutonomyBodyBytes;
  limits.max_depth = 4;
  absl::StatusOr<rapidjson::Document> doc = ParseJson(json, limits);
  if (!doc.ok()) {
    return InvalidRequest(doc.status());
  }
  JsonReaderOptions options;
  options.text = JsonTextRule::kCleanText;
  JsonObjectReader r(*doc, "autonomy", options);
  if (absl::Status members =
          r.ExpectMembers({"autonomy_level", "acknowledgement_id", "full_mode_unlocked",
                           "investigation_budget", "investigation_timeout_sec"});
      !members.ok()) {
    return InvalidRequest(members);
  }
  std::optional<std::string> level_text =
      r.String("autonomy_level", {.max_bytes = 32, .presence = JsonPresence::kRequired});
  if (!r.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid_autonomy_level: ", r.status().message()));
  }
  std::optional<AutonomyLevel> level = ParseAutonomyLevel(*level_text);
  if (!level.has_value()) {
    return absl::InvalidArgumentError(
        "invalid_autonomy_level: autonomy_level must be one of monitor, approval, assisted, full");
  }
  std::optional<std::string> ack_id =
      r.String("acknowledgement_id", {.max_bytes = kMaxAcknowledgementIdBytes, .trim = true});
  (void)r.Bool("full_mode_unlocked");
  std::optional<std::int64_t> budget = r.Int("investigation_budget", -1'000'000, 1'000'000);
  std::optional<std::int64_t> timeout =
      r.Int("investigation_timeout_sec", -1'000'000'000, 1'000'000'000);
  if (absl::Status done = r.Finish(); !done.ok()) {
    return InvalidRequest(done);
  }
  AutonomySettings next = current;
  next.level = *level;
  if (budget.has_value()) {
    next.investigation_budget =
        std::clamp(*budget, kMinInvestigationBudget, kMaxInvestigationBudget);
  }
  if (timeout.has_value()) {
    next.investigation_timeout_sec =
        std::clamp(*timeout, kMinInvestigationTimeoutSec, kMaxInvestigationTimeoutSec);
  }
  if (ack_id.has_value() && !ack_id->empty()) {
    if (!actor_is_human || actor_id.empty()) {
      return absl::InvalidArgumentError(
          "invalid_request: an Autopilot acknowledgement must be recorded by a human actor");
    }
    next.acknowledgement = AutopilotAcknowledgement{*ack_id, std::string(actor_id), now};
  }
  return next;
}

absl::StatusOr<std::string> ParseAcknowledgementRequest(std::string_view json) {
  JsonLimits limits;
  limits.max_bytes = kMaxAutonomyBodyBytes;
  limits.max_depth = 2;
  absl::StatusOr<rapidjson::Document> doc = ParseJson(json, limits);
  if (!doc.ok()) {
    return doc.status();
  }
  JsonReaderOptions options;
  options.text = JsonTextRule::kCleanText;
  JsonObjectReader r(*doc, "acknowledgement", options);
  PULSE_RETURN_IF_ERROR(r.ExpectMembers({"acknowledgement_id"}));
  std::optional<std::string> id = r.String(
      "acknowledgement_id",
      {.max_bytes = kMaxAcknowledgementIdBytes, .presence = JsonPresence::kRequired, .trim = true});
  PULSE_RETURN_IF_ERROR(r.Finish());
  if (!id.has_value() || id->empty()) {
    return absl::InvalidArgumentError("acknowledgement_id must not be blank");
  }
  return *std::move(id);
}

absl::StatusOr<std::string> ParseRevocationRequest(std::string_view json) {
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return std::string();
  }
  JsonLimits limits;
  limits.max_bytes = kMaxAutonomyBodyBytes;
  limits.max_depth = 2;
  absl::StatusOr<rapidjson::Document> doc = ParseJson(json, limits);
  if (!doc.ok()) {
    return doc.status();
  }
  JsonReaderOptions options;
  options.text = JsonTextRule::kCleanText;
  JsonObjectReader r(*doc, "revocation", options);
  PULSE_RETURN_IF_ERROR(r.ExpectMembers({"reason"}));
  std::optional<std::string> reason =
      r.String("reason", {.max_bytes = kMaxRevocationReasonBytes, .trim = true});
  PULSE_RETURN_IF_ERROR(r.Finish());
  return reason.value_or("");
}

AcknowledgementChange RecordAcknowledgement(const AutonomySettings& current, std::string_view id,
                                            std::string_view actor_id, absl::Time now) {
  AcknowledgementChange change{current, false};
  if (current.acknowledgement.has_value() && current.acknowledgement->id == id) {
    return change;
  }
  change.settings.acknowledgement =
      AutopilotAcknowledgement{std::string(id), std::string(actor_id), now};
  change.created = true;
  return change;
}

absl::StatusOr<AutonomySettings> RevokeAcknowledgement(const AutonomySettings& current,
                                                       std::string_view id,
                                                       std::string_view actor_id,
                                                       std::string_view reason, absl::Time now) {
  if (!current.acknowledgement.has_value() || current.acknowledgement->id != id) {
    return absl::NotFoundError("no Autopilot acknowledgement with this id is recorded");
  }
  AutonomySettings next = current;
  next.acknowledgement.reset();
  next.last_revocation =
      AutopilotRevocation{std::string(id), std::string(actor_id), now, std::string(reason)};
  return next;
}

std::string AcknowledgementToJson(const AutopilotAcknowledgement& acknowledgement) {
  JsonWriter w;
  w.StartObject();
  w.Member("acknowledgement_id", acknowledgement.id);
  w.Member("actor_id", acknowledgement.actor_id);
  w.TimeMember("acknowledged_at", acknowledgement.acknowledged_at);
  w.EndObject();
  return w.Take();
}

std::string RevocationToJson(const AutopilotRevocation& revocation) {
  JsonWriter w;
  w.StartObject();
  w.Member("acknowledgement_id", revocation.acknowledgement_id);
  w.Member("actor_id", revocation.actor_id);
  w.TimeMember("revoked_at", revocation.revoked_at);
  w.MemberIfNotEmpty("reason", revocation.reason);
  w.EndObject();
  return w.Take();
}

std::string AutonomySettingsToStorageJson(const AutonomySettings& settings) {
  JsonWriter w;
  w.StartObject();
  w.Member("level", ToString(settings.level));
  w.Member("investigation_budget", settings.investigation_budget);
  w.Member("investigation_timeout_sec", settings.investigation_timeout_sec);
  if (settings.acknowledgement.has_value()) {
    w.Member("acknowledgement_id", settings.acknowledgement->id);
    w.Member("acknowledged_by", settings.acknowledgement->actor_id);
    w.TimeMember("acknowledged_at", settings.acknowledgement->acknowledged_at);
  }
  if (settings.last_revocation.has_value()) {
    w.Member("revoked_acknowledgement_id", settings.last_revocation->acknowledgement_id);
    w.Member("revoked_by", settings.last_revocation->actor_id);
    w.TimeMember("revoked_at", settings.last_revocation->revoked_at);
    w.Member("revocation_reason", settings.last_revocation->reason);
  }
  w.EndObject();
  return w.Take();
}

absl::StatusOr<AutonomySettings> AutonomySettingsFromStorageJson(std::string_view json) {
  PULSE_ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(json));
  JsonObjectReader r(doc, "autonomy_settings");
  AutonomySettings out;
  std::optional<AutonomyLevel> level = r.Enum("level", ParseAutonomyLevel, JsonPresence::kRequired);
  std::optional<std::int64_t> budget =
      r.Int("investigation_budget", kMinInvestigationBudget, kMaxInvestigationBudget);
  std::optional<std::int64_t> timeout =
      r.Int("investigation_timeout_sec", kMinInvestigationTimeoutSec, kMaxInvestigationTimeoutSec);
  std::optional<std::string> ack_id =
      r.String("acknowledgement_id", {.max_bytes = kMaxAcknowledgementIdBytes});
  std::optional<std::string> ack_by = r.String("acknowledged_by", {.max_bytes = 256});
  std::optional<absl::Time> ack_at = r.Time("acknowledged_at");
  std::optional<std::string> revoked_id =
      r.String("revoked_acknowledgement_id", {.max_bytes = kMaxAcknowledgementIdBytes});
  std::optional<std::string> revoked_by = r.String("revoked_by", {.max_bytes = 256});
  std::optional<absl::Time> revoked_at = r.Time("revoked_at");
  std::optional<std::string> revocation_reason =
      r.String("revocation_reason", {.max_bytes = kMaxRevocationReasonBytes});
  PULSE_RETURN_IF_ERROR(r.Finish());
  out.level = *level;
  out.investigation_budget = budget.value_or(kDefaultInvestigationBudget);
  out.investigation_timeout_sec = timeout.value_or(kDefaultInvestigationTimeoutSec);
  if (ack_id.has_value() && !ack_id->empty() && ack_by.has_value() && ack_at.has_value()) {
    out.acknowledgement = AutopilotAcknowledgement{*ack_id, *ack_by, *ack_at};
  }
  if (revoked_id.has_value() && !revoked_id->empty() && revoked_by.has_value() &&
      revoked_at.has_value()) {
    out.last_revocation =
        AutopilotRevocation{*revoked_id, *revoked_by, *revoked_at, revocation_reason.value_or("")};
  }
  return out;
}

}  // namespace pulse::core
