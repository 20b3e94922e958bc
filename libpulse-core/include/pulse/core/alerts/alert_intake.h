// Alert intake (docs/alerts.md): alerts another monitoring system hands to Pulse
// (POST /api/ai/investigate-alert) become findings with the alert as evidence and start a scoped
// Patrol run over the resources they concern. Two body shapes: Prometheus Alertmanager's webhook
// payload (version "4") and a small native one. An alert reaches a resource only through the
// documented label rules (MapAlert): one resource or none, never a guess. A resolved alert is
// evidence for the finding's verifier (FindingsService::ResolveByPatrol), never a resolution on
// its own. Investigations have a per-resource cooldown, so a repeating or flapping alert cannot
// start a Patrol run (and spend the model budget) more than once per cooldown.
// Thread-safety: the free functions are pure; AlertIntake is safe from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pulse/core/findings/findings_service.h"
#include "pulse/core/model/patrol_run.h"
#include "pulse/core/ports/clock.h"
#include "pulse/core/ports/fleet.h"

namespace pulse::core {

inline constexpr std::size_t kMaxAlertsPerRequest = 500;
inline constexpr std::size_t kMaxAlertLabels = 64;  // labels, and annotations
inline constexpr std::size_t kMaxAlertLabelNameBytes = 128;
inline constexpr std::size_t kMaxAlertLabelValueBytes = 1024;
inline constexpr std::size_t kMaxAlertAnnotationBytes = 4096;
inline constexpr absl::Duration kDefaultAlertCooldown = absl::Minutes(10);

// One alert, in Alertmanager's terms whichever shape brought it.
struct Alert {
  bool firing = true;  // false: resolved
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::optional<absl::Time> starts_at;
  std::optional<absl::Time> ends_at;  // a resolved alert's end; Alertmanager's zero time: none
  std::string fingerprint;            // Alertmanager's, or derived from name and resource
  std::string generator_url;

  std::string Name() const;  // the alertname label ("" when absent)
  friend bool operator==(const Alert&, const Alert&) = default;
};

struct AlertBatch {
  std::string shape;     // "alertmanager" or "native"
  std::string receiver;  // Alertmanager's receiver name ("" for native)
  std::vector<Alert> alerts;
};

// Parses a POST /api/ai/investigate-alert body. An object with "version" is Alertmanager's
// webhook payload: version "4", an "alerts" array of {status, labels, annotations, startsAt,
// endsAt, generatorURL, fingerprint} (members it does not use are ignored, as Alertmanager adds
// some over releases). Any other object is the native shape, read strictly (unknown members
// refused): {"alerts": [{"name", "status"?: firing|resolved, "resource_id"?, "severity"?,
// "summary"?, "description"?, "labels"?: {string: string}}]}. InvalidArgument saying what is
// wrong for malformed JSON, a wrong type, an unknown status, no alerts or more than
// kMaxAlertsPerRequest, an alert without alertname (name), labels or annotations over their
// limits, or control characters in a label.
[[nodiscard]] absl::StatusOr<AlertBatch> ParseAlertIntake(std::string_view body);

// How an alert reached (or did not reach) a resource.
struct AlertMapping {
  enum class Kind { kMapped, kUnmapped, kAmbiguous };
  Kind kind = Kind::kUnmapped;
  std::string resource_id;  // set when mapped
  std::string rule;         // the label that decided: pulse_resource, container, vmid, ...
  std::string reason;       // why unmapped or ambiguous (the candidates, at most 5)
};
// Wire: mapped, unmapped, ambiguous.
std::string_view ToString(AlertMapping::Kind kind);

// The documented rules, first present label decides (docs/alerts.md "Mapping"):
//  1. pulse_resource: a canonical id of a resource in `fleet`; an id not in the fleet maps to
//     nothing (the label is the sender's explicit intent: no other rule is tried);
//  2. container (or container_name): an app-container whose name or local id is the value;
//  3. vmid: a vm or lxc whose local id is the value (or ends in "/<value>" under a source
//     prefix);
//  4. instance ("host:port"), host or hostname: a node or host whose name, local id or ip /
//     address / hostname attribute is the host;
//  5. node: a node whose name or local id is the value.
// A node label also narrows rules 2 and 3 to resources whose parent is that node. Exactly one
// candidate maps; none is unmapped; more than one is ambiguous (never a guess).
AlertMapping MapAlert(const Alert& alert, const std::vector<FleetResource>& fleet);

// The finding an alert on `resource` reports: key "alert:<alertname>", source "alertmanager"
// (or "alert" for the native shape), severity from the severity label (critical, page, error,
// high -> critical; warning, warn, medium -> warning; info, low, none -> info; else warning),
// category from a pulse_category label (else reliability), title from the summary annotation
// (else "Alert <name> is firing"), description and recommendation from the annotations (a
// runbook_url becomes the recommendation), and the alert's labels, times and generator URL as
// evidence.
FindingReport AlertFindingReport(const Alert& alert, const FleetResource& resource,
                                 std::string_view shape);

struct AlertIntakeOptions {
  absl::Duration cooldown = kDefaultAlertCooldown;  // per resource, between investigations
};

// What became of one alert.
struct AlertOutcome {
  std::string name;
  std::string fingerprint;
  bool firing = true;
  AlertMapping mapping;
  std::string finding_id;  // "" when unmapped, or a resolved alert with no finding
  // created, updated, regressed, reactivated, dismissed_by_intent, blocked_by_suppression_rule
  // (a firing alert's report), resolved, kept (a resolved alert the verifier did not confirm:
  // the finding stays active with the reason), not_active, none, error.
  std::string finding_outcome;
  std::string detail;  // the verifier's or the store's words, when there are any
  // started, cooldown, already_running, not_started (unmapped), failed.
  std::string investigation;
};

struct AlertIntakeResult {
  std::vector<AlertOutcome> alerts;
  std::string run_id;  // the scoped Patrol run started ("" when none)
};

class AlertIntake {
 public:
  // Starts a Patrol run of `scope` (trigger alert) and answers its run id; FailedPrecondition
  // when a run of that scope is already running, any other error when it cannot start.
  using StartRun = std::function<absl::StatusOr<std::string>(const PatrolScope& scope)>;

  AlertIntake(Fleet& fleet, FindingsService& findings, const Clock& clock, StartRun start_run,
              AlertIntakeOptions options = {});

  // Maps every alert, reports or re-checks its finding, then starts one scoped Patrol run over
  // the mapped resources that are not in their cooldown. Unavailable when the fleet cannot be
  // listed (nothing is written then).
  [[nodiscard]] absl::StatusOr<AlertIntakeResult> Receive(const AlertBatch& batch);

 private:
  Fleet& fleet_;
  FindingsService& findings_;
  const Clock& clock_;
  StartRun start_run_;
  const AlertIntakeOptions options_;
  absl::Mutex mu_;
  std::map<std::string, absl::Time> investigated_at_ ABSL_GUARDED_BY(mu_);  // by resource id
};

}  // namespace pulse::core
