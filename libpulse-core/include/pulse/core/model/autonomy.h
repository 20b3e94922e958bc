// Patrol autonomy (docs/patrol.md): how far Patrol may go on its own. monitor (the
// default) only records findings; approval investigates and queues every fix for a human;
// assisted also executes low_risk capabilities automatically; full executes any
// auto-authorizable capability, but only while an Autopilot acknowledgement recorded for a
// human actor exists — without one the effective level clamps to approval. Plain values and
// pure functions (the wire codecs of GET/PUT /api/ai/patrol/autonomy); thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "pulse/core/model/capability.h"

namespace pulse::core {

enum class AutonomyLevel { kMonitor, kApproval, kAssisted, kFull };
// Wire: monitor, approval, assisted, full.
std::string_view ToString(AutonomyLevel level);
// Exact match of the four wire strings; anything else is nullopt.
std::optional<AutonomyLevel> ParseAutonomyLevel(std::string_view text);

// Investigation budget (evidence calls per investigation) and timeout bounds (clamped as
// docs/patrol.md says).
inline constexpr std::int64_t kMinInvestigationBudget = 5;
inline constexpr std::int64_t kMaxInvestigationBudget = 30;
inline constexpr std::int64_t kDefaultInvestigationBudget = 12;
inline constexpr std::int64_t kMinInvestigationTimeoutSec = 60;
inline constexpr std::int64_t kMaxInvestigationTimeoutSec = 1800;
inline constexpr std::int64_t kDefaultInvestigationTimeoutSec = 300;
inline constexpr std::size_t kMaxAcknowledgementIdBytes = 128;

// The human acknowledgement that unlocks Autopilot.
struct AutopilotAcknowledgement {
  std::string id;        // the acknowledgement id the operator submitted
  std::string actor_id;  // the human who acknowledged (a token id)
  absl::Time acknowledged_at;

  friend bool operator==(const AutopilotAcknowledgement&,
                         const AutopilotAcknowledgement&) = default;
};

// The last revocation of an acknowledgement, kept for the operator's record.
struct AutopilotRevocation {
  std::string acknowledgement_id;  // what was revoked
  std::string actor_id;            // the human who revoked it
  absl::Time revoked_at;
  std::string reason;  // "" when none was given

  friend bool operator==(const AutopilotRevocation&, const AutopilotRevocation&) = default;
};

inline constexpr std::size_t kMaxRevocationReasonBytes = 512;

struct AutonomySettings {
  AutonomyLevel level = AutonomyLevel::kMonitor;  // requested (saved) level
  std::optional<AutopilotAcknowledgement> acknowledgement;
  std::optional<AutopilotRevocation> last_revocation;
  std::int64_t investigation_budget = kDefaultInvestigationBudget;
  std::int64_t investigation_timeout_sec = kDefaultInvestigationTimeoutSec;

  friend bool operator==(const AutonomySettings&, const AutonomySettings&) = default;
};

// The level Patrol acts at: the saved level, except full without an acknowledgement, which
// clamps to approval.
AutonomyLevel EffectiveAutonomy(const AutonomySettings& settings);

// Whether Patrol investigates new findings at this effective level (not monitor).
bool Investigates(AutonomyLevel effective);

// Whether a capability of auto-authorization class `auto_class` may be executed by Patrol
// without a human at effective level `effective`: assisted → low_risk only; full → low_risk
// or elevated; monitor and approval → never.
bool AutoExecutes(AutonomyLevel effective, AutoAuthorization auto_class);

// GET body: {autonomy_level, requested_autonomy_level, effective_autonomy_level,
// full_mode_unlocked, autopilot_acknowledgement?{acknowledgement_id, actor_id,
// acknowledged_at}, autopilot_revocation?{acknowledgement_id, actor_id, revoked_at, reason?},
// investigation_budget, investigation_timeout_sec}.
std::string AutonomyToJson(const AutonomySettings& settings);

// Decodes a PUT body {autonomy_level (required), acknowledgement_id?, full_mode_unlocked?
// (deprecated, ignored), investigation_budget?, investigation_timeout_sec?} over `current`:
// budget and timeout are clamped into their bounds; an acknowledgement_id records a new
// acknowledgement for `actor_id` when `actor_is_human` (a non-human's is refused); full
// without a valid acknowledgement (new or kept) is accepted and reads back as effective
// approval. Unknown members are refused. Errors (nothing changes): InvalidArgument whose
// message starts "invalid_autonomy_level" for an unknown level, else "invalid_request".
[[nodiscard]] absl::StatusOr<AutonomySettings> ParseAutonomyUpdate(std::string_view json,
                                                                   const AutonomySettings& current,
                                                                   std::string_view actor_id,
                                                                   bool actor_is_human,
                                                                   absl::Time now);

// POST /api/ai/patrol/autonomy/acknowledgements body: exactly {acknowledgement_id}, clean
// text, trimmed, 1..kMaxAcknowledgementIdBytes. InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<std::string> ParseAcknowledgementRequest(std::string_view json);

// DELETE .../acknowledgements/{id} body: empty, or exactly {reason?} (clean text, at most
// kMaxRevocationReasonBytes). Returns the reason ("" when none). InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<std::string> ParseRevocationRequest(std::string_view json);

struct AcknowledgementChange {
  AutonomySettings settings;  // what to save (unchanged when !created)
  bool created = false;
};

// Records acknowledgement `id` for the human `actor_id` at `now`. The current acknowledgement
// with the same id is kept as it is (created=false: the original actor and time stand);
// any other id replaces the current one (created=true). The level is not changed: full
// becomes effective only if it is the saved level.
AcknowledgementChange RecordAcknowledgement(const AutonomySettings& current, std::string_view id,
                                            std::string_view actor_id, absl::Time now);

// Revokes the current acknowledgement when its id is `id`, keeping the revocation (who, when,
// why); the saved level is kept, so full acts as approval from now on. NotFound when no
// acknowledgement with that id is recorded (nothing changes).
[[nodiscard]] absl::StatusOr<AutonomySettings> RevokeAcknowledgement(
    const AutonomySettings& current, std::string_view id, std::string_view actor_id,
    std::string_view reason, absl::Time now);

// {acknowledgement_id, actor_id, acknowledged_at} and {acknowledgement_id, actor_id,
// revoked_at, reason?}.
std::string AcknowledgementToJson(const AutopilotAcknowledgement& acknowledgement);
std::string RevocationToJson(const AutopilotRevocation& revocation);

// The persisted form (same members as AutonomyToJson's input; used by stores) and its decoder.
std::string AutonomySettingsToStorageJson(const AutonomySettings& settings);
[[nodiscard]] absl::StatusOr<AutonomySettings> AutonomySettingsFromStorageJson(
    std::string_view json);

}  // namespace pulse::core
