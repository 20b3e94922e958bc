// FindingsService: the optimistic-concurrency core, operator operations, reads, suppression
// rules and the reminder sweep. Report lives in findings_report.cc; Patrol verdicts,
// reconciliation and forecasts in findings_patrol.cc.
#include "pulse/core/findings/findings_service.h"

#include <array>
#include <utility>

#include "findings_service_internal.h"
#include "fmt/format.h"
#include "pulse/core/findings/finding_errors.h"
#include "pulse/core/json/json_time.h"
#include "pulse/core/json/utf8.h"
#include "pulse/core/json/wire_enum.h"
#include "pulse/core/model/finding_wire.h"
#include "pulse/core/status_macros.h"

namespace pulse::core {
namespace {

namespace w = finding_wire;

constexpr std::array<WireName<ReportDisposition>, 9> kDispositions = {{
    {ReportDisposition::kCreated, "created"},
    {ReportDisposition::kHeartbeat, "heartbeat"},
    {ReportDisposition::kContentReplaced, "content_replaced"},
    {ReportDisposition::kRegressed, "regressed"},
    {ReportDisposition::kReactivated, "reactivated"},
    {ReportDisposition::kSeenWhileSuppressed, "seen_while_suppressed"},
    {ReportDisposition::kMerged, "merged"},
    {ReportDisposition::kBlockedBySuppressionRule, "blocked_by_suppression_rule"},
    {ReportDisposition::kDismissedByOperatorState, "dismissed_by_intent"},
}};

constexpr std::array<WireName<ResolveRefusal>, 4> kRefusals = {{
    {ResolveRefusal::kNoVerifier, "no_deterministic_verifier"},
    {ResolveRefusal::kSignalStillPresent, "verifier_still_detects"},
    {ResolveRefusal::kVerifierInconclusive, "verifier_inconclusive"},
    {ResolveRefusal::kVerifierError, "verifier_error"},
}};

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

absl::Status NotAllowed(const Finding& f, std::string_view message) {
  return FindingActionNotAllowed(f.id, message);
}

}  // namespace

namespace findings_internal {

std::string Trimmed(std::string_view text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && IsAsciiSpace(text[begin])) {
    ++begin;
  }
  while (end > begin && IsAsciiSpace(text[end - 1])) {
    --end;
  }
  return std::string(text.substr(begin, end - begin));
}

absl::Status CheckField(std::string_view field, std::string_view value, std::size_t max_bytes,
                        bool required) {
  if (required && value.empty()) {
    return InvalidFindingRequest(fmt::format("{} is required", field),
                                 {{std::string(field), "required"}});
  }
  if (value.size() > max_bytes) {
    return InvalidFindingRequest(
        fmt::format("{} is longer than {} bytes", field, max_bytes),
        {{std::string(field), fmt::format("must be at most {} bytes", max_bytes)}});
  }
  if (!IsValidUtf8(value)) {
    return InvalidFindingRequest(fmt::format("{} is not valid UTF-8", field),
                                 {{std::string(field), "must be valid UTF-8"}});
  }
  return absl::OkStatus();
}

}  // namespace findings_internal

using findings_internal::CheckField;

std::string_view ToString(ReportDisposition disposition) {
  return WireNameOf(kDispositions, disposition);
}

std::string_view ToString(ResolveRefusal refusal) { return WireNameOf(kRefusals, refusal); }

void findings_internal::Transition::Event(LifecycleEventType type, std::string_view message,
                                          const std::map<std::string, std::string>& metadata) {
  LifecycleEvent e;
  e.at = now;
  e.type = type;
  e.message = TruncateUtf8(message, kMaxFindingTextBytes);
  for (const auto& [key, value] : metadata) {
    if (e.metadata.size() >= kMaxEventMetadataEntries) {
      break;
    }
    e.metadata.emplace(TruncateUtf8(key, kMaxEventMetadataKeyBytes),
                       TruncateUtf8(value, kMaxEventMetadataValueBytes));
  }
  events.push_back(std::move(e));
}

FindingsService::FindingsService(FindingStore& store, const Clock& clock, FindingVerifier& verifier,
                                 const MetricsHistory& metrics, OperatorStateStore* operator_state)
    : store_(store),
      clock_(clock),
      verifier_(verifier),
      metrics_(metrics),
      operator_state_(operator_state) {}

absl::StatusOr<findings_internal::Mutation> findings_internal::ApplyChange(
    const Finding& before, absl::Time now, absl::FunctionRef<absl::Status(Transition&)> change) {
  Finding after = before;
  Transition tx{after, now, {}, false};
  PULSE_RETURN_IF_ERROR(change(tx));
  if (tx.events.empty() && !tx.dirty) {
    return Mutation{before, false, {}};
  }
  const LoopState from = DeriveLoopState(before, now);
  const LoopState to = DeriveLoopState(after, now);
  if (!IsLoopTransitionAllowed(from, to)) {
    return NotAllowed(after,
                      fmt::format("a {} finding cannot become {}", ToString(from), ToString(to)));
  }
  std::vector<LifecycleEventType> types;
  for (LifecycleEvent& e : tx.events) {
    if (from != to) {
      e.from = from;
      e.to = to;
    }
    types.push_back(e.type);
    AppendLifecycleEvent(after, std::move(e));
  }
  after.loop_state = to;
  return Mutation{std::move(after), true, std::move(types)};
}

absl::StatusOr<FindingsService::Mutation> FindingsService::Mutate(std::string_view finding_id,
                                                                  Change change) {
  for (int attempt = 0; attempt < kMaxCasAttempts; ++attempt) {
    absl::StatusOr<StoredFinding> stored = store_.Get(finding_id);
    if (!stored.ok()) {
      if (absl::IsNotFound(stored.status())) {
        return FindingNotFoundError(finding_id);
      }
      return stored.status();
    }
    PULSE_ASSIGN_OR_RETURN(Mutation m,
                           findings_internal::ApplyChange(stored->finding, clock_.Now(), change));
    if (!m.written) {
      return m;
    }
    absl::StatusOr<std::int64_t> put = store_.Put(m.finding, stored->version);
    if (put.ok()) {
      return m;
    }
    if (!absl::IsAborted(put.status())) {
      return put.status();
    }
  }
  return MakeFindingError(
      absl::StatusCode::kAborted, AgentErrorCode::kFindingActionNotAllowed,
      fmt::format("finding {} kept changing concurrently; gave up after {} attempts", finding_id,
                  kMaxCasAttempts),
      {{"finding_id", std::string(finding_id)}});
}

absl::StatusOr<Finding> FindingsService::MutateOperator(std::string_view finding_id,
                                                        Change change) {
  auto guarded = [&](Transition& tx) -> absl::Status {
    if (IsRuntimeFinding(tx.finding)) {
      return NotAllowed(tx.finding,
                        "the Patrol runtime finding clears only when Patrol runs again "
                        "successfully; it cannot be changed by hand");
    }
    return change(tx);
  };
  PULSE_ASSIGN_OR_RETURN(Mutation m, Mutate(finding_id, guarded));
  return std::move(m.finding);
}

absl::StatusOr<Finding> FindingsService::Acknowledge(std::string_view finding_id) {
  return MutateOperator(finding_id, [](Transition& tx) {
    if (!tx.finding.acknowledged_at.has_value()) {
      tx.finding.acknowledged_at = tx.now;
      tx.Event(LifecycleEventType::kAcknowledged);
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<Finding> FindingsService::Snooze(std::string_view finding_id,
                                                std::int64_t duration_hours,
                                                std::string_view note) {
  if (duration_hours < kMinSnoozeHours || duration_hours > kMaxSnoozeHours) {
    return InvalidFindingRequest(
        fmt::format("duration_hours must be between {} and {}", kMinSnoozeHours, kMaxSnoozeHours),
        {{std::string(w::kDurationHours),
          fmt::format("must be between {} and {}", kMinSnoozeHours, kMaxSnoozeHours)}});
  }
  const std::string clean_note = findings_internal::Trimmed(note);
  PULSE_RETURN_IF_ERROR(CheckField(w::kNote, clean_note, kMaxNoteBytes, false));
  return MutateOperator(finding_id, [duration_hours, &clean_note](Transition& tx) {
    Finding& f = tx.finding;
    if (f.resolved_at.has_value()) {
      return NotAllowed(f, "a resolved finding cannot be snoozed");
    }
    if (f.dismissed_reason.has_value() || f.suppressed) {
      return NotAllowed(f, "a dismissed or suppressed finding cannot be snoozed");
    }
    f.snoozed_until = tx.now + absl::Hours(duration_hours);
    tx.Event(LifecycleEventType::kSnoozed,
             fmt::format("Finding snoozed for {} hours", duration_hours),
             {{std::string(w::kMetaUntil), FormatRfc3339(*f.snoozed_until)}});
    if (!clean_note.empty() && f.user_note != clean_note) {
      f.user_note = clean_note;
      tx.Event(LifecycleEventType::kUserNoteUpdated);
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<Finding> FindingsService::Unsnooze(std::string_view finding_id) {
  return MutateOperator(finding_id, [](Transition& tx) {
    Finding& f = tx.finding;
    if (f.resolved_at.has_value()) {
      return NotAllowed(f, "a resolved finding cannot be unsnoozed");
    }
    if (!IsSnoozed(f, tx.now)) {
      return NotAllowed(f, "the finding is not snoozed");
    }
    const absl::Time previous = *f.snoozed_until;
    f.snoozed_until.reset();
    tx.Event(LifecycleEventType::kUnsnoozed, {},
             {{std::string(w::kMetaPreviousUntil), FormatRfc3339(previous)}});
    return absl::OkStatus();
  });
}

absl::StatusOr<Finding> FindingsService::Dismiss(std::string_view finding_id, DismissReason reason,
                                                 std::string_view note) {
  if (reason == DismissReason::kSuppressed || ToString(reason) == "unknown") {
    return InvalidFindingRequest(
        "reason must be not_an_issue, expected_behavior or will_fix_later",
        {{std::string(w::kReason), "must be not_an_issue, expected_behavior or will_fix_later"}});
  }
  const std::string clean_note = findings_internal::Trimmed(note);
  PULSE_RETURN_IF_ERROR(CheckField(w::kNote, clean_note, kMaxNoteBytes, false));
  return MutateOperator(finding_id, [&](Transition& tx) {
    Finding& f = tx.finding;
    if (f.resolved_at.has_value()) {
      return NotAllowed(f, "a resolved finding cannot be dismissed");
    }
    if (f.suppressed) {
      return NotAllowed(f, "a suppressed finding must be undismissed before it is dismissed");
    }
    f.dismissed_reason = reason;
    if (!clean_note.empty()) {
      f.user_note = clean_note;
    }
    f.acknowledged_at = tx.now;
    f.snoozed_until.reset();
    std::map<std::string, std::string> metadata = {
        {std::string(w::kMetaReason), std::string(ToString(reason))}};
    switch (reason) {
      case DismissReason::kNotAnIssue:
        f.suppressed = true;
        f.remind_at.reset();
        break;
      case DismissReason::kWillFixLater:
        f.suppressed = false;
        f.remind_at = tx.now + kWillFixLaterRemindAfter;
        metadata.emplace(w::kMetaRemindAt, FormatRfc3339(*f.remind_at));
        break;
      case DismissReason::kExpectedBehavior:
      case DismissReason::kSuppressed:
        f.suppressed = false;
        f.remind_at.reset();
        break;
    }
    tx.Event(LifecycleEventType::kDismissed, clean_note, metadata);
    return absl::OkStatus();
  });
}

absl::StatusOr<Finding> FindingsService::Undismiss(std::string_view finding_id) {
  return MutateOperator(finding_id, [](Transition& tx) {
    Finding& f = tx.finding;
    if (!f.dismissed_reason.has_value() && !f.suppressed) {
      return NotAllowed(f, "the finding is not dismissed");
    }
    std::map<std::string, std::string> metadata;
    if (f.dismissed_reason.has_value()) {
      metadata.emplace(w::kMetaReason, std::string(ToString(*f.dismissed_reason)));
    }
    f.dismissed_reason.reset();
    f.suppressed = false;
    f.acknowledged_at.reset();
    f.remind_at.reset();
    tx.Event(LifecycleEventType::kUndismissed, {}, metadata);
    return absl::OkStatus();
  });
}

absl::StatusOr<Finding> FindingsService::Resolve(std::string_view finding_id,
                                                 std::string_view note) {
  const std::string clean_note = findings_internal::Trimmed(note);
  PULSE_RETURN_IF_ERROR(CheckField(w::kResolutionNote, clean_note, kMaxNoteBytes, false));
  return MutateOperator(finding_id, [&](Transition& tx) {
    Finding& f = tx.finding;
    if (f.resolved_at.has_value()) {
      return NotAllowed(f, "the finding is already resolved");
    }
    if (f.suppressed) {
      return NotAllowed(f, "a suppressed finding must be undismissed before it is resolved");
    }
    if (!clean_note.empty()) {
      f.user_note = clean_note;
    }
    f.resolved_at = tx.now;
    f.auto_resolved = false;
    f.resolve_reason.clear();
    f.snoozed_until.reset();
    f.remind_at.reset();
    f.dismissed_reason.reset();  // a resolution supersedes a dismissal
    tx.Event(LifecycleEventType::kResolved, clean_note);
    return absl::OkStatus();
  });
}

absl::StatusOr<SuppressOutcome> FindingsService::Suppress(std::string_view finding_id) {
  PULSE_ASSIGN_OR_RETURN(
      Finding finding, MutateOperator(finding_id, [](Transition& tx) {
        Finding& f = tx.finding;
        if (f.resolved_at.has_value()) {
          return NotAllowed(f, "a resolved finding cannot be suppressed");
        }
        if (f.suppressed && f.dismissed_reason == DismissReason::kSuppressed) {
          return absl::OkStatus();  // already suppressed: only make sure the rule exists
        }
        f.suppressed = true;
        f.dismissed_reason = DismissReason::kSuppressed;
        if (!f.acknowledged_at.has_value()) {
          f.acknowledged_at = tx.now;
        }
        f.snoozed_until.reset();
        f.remind_at.reset();
        tx.Event(LifecycleEventType::kSuppressed, {},
                 {{std::string(w::kMetaRuleId), SuppressionRuleIdFor(f.resource_id, f.category)}});
        return absl::OkStatus();
      }));
  SuppressionRule rule;
  rule.id = SuppressionRuleIdFor(finding.resource_id, finding.category);
  PULSE_ASSIGN_OR_RETURN(std::vector<SuppressionRule> rules, store_.ListSuppressionRules());
  for (const SuppressionRule& existing : rules) {
    if (existing.id == rule.id) {
      return SuppressOutcome{std::move(finding), existing};
    }
  }
  rule.resource_id = finding.resource_id;
  rule.resource_name = finding.resource_name;
  rule.category = finding.category;
  rule.description = TruncateUtf8("Suppressed from finding: " + finding.title, kMaxNoteBytes);
  rule.dismissed_reason = DismissReason::kSuppressed;
  rule.created_at = clock_.Now();
  rule.created_from = SuppressionOrigin::kSuppress;
  rule.finding_id = finding.id;
  PULSE_RETURN_IF_ERROR(store_.PutSuppressionRule(rule));
  return SuppressOutcome{std::move(finding), std::move(rule)};
}

absl::StatusOr<Finding> FindingsService::SetNote(std::string_view finding_id,
                                                 std::string_view note) {
  const std::string clean_note = findings_internal::Trimmed(note);
  PULSE_RETURN_IF_ERROR(CheckField(w::kNote, clean_note, kMaxNoteBytes, false));
  PULSE_ASSIGN_OR_RETURN(Mutation m, Mutate(finding_id, [&](Transition& tx) {
                           if (tx.finding.user_note != clean_note) {
                             tx.finding.user_note = clean_note;
                             tx.Event(LifecycleEventType::kUserNoteUpdated);
                           }
                           return absl::OkStatus();
                         }));
  return std::move(m.finding);
}

absl::StatusOr<Finding> FindingsService::RecordInvestigation(
    std::string_view finding_id, InvestigationStatus status,
    std::optional<InvestigationOutcome> outcome, std::string_view session_id,
    std::string_view fix_action_id) {
  PULSE_ASSIGN_OR_RETURN(Mutation m, Mutate(finding_id, [&](Transition& tx) {
                           tx.finding.investigation_status = status;
                           tx.finding.investigation_outcome = outcome;
                           tx.finding.investigation_session_id = std::string(session_id);
                           tx.finding.fix_action_id = std::string(fix_action_id);
                           tx.finding.last_investigated_at = tx.now;
                           ++tx.finding.investigation_attempts;
                           std::map<std::string, std::string> metadata;
                           metadata["status"] = std::string(ToString(status));
                           if (outcome.has_value()) {
                             metadata["outcome"] = std::string(ToString(*outcome));
                           }
                           if (!fix_action_id.empty()) {
                             metadata["action_id"] = std::string(fix_action_id);
                           }
                           tx.Event(LifecycleEventType::kInvestigationRecordUpdated,
                                    "Patrol investigation recorded", metadata);
                           return absl::OkStatus();
                         }));
  return std::move(m.finding);
}

absl::StatusOr<Finding> FindingsService::Get(std::string_view finding_id) const {
  absl::StatusOr<StoredFinding> stored = store_.Get(finding_id);
  if (!stored.ok()) {
    if (absl::IsNotFound(stored.status())) {
      return FindingNotFoundError(finding_id);
    }
    return stored.status();
  }
  return std::move(stored->finding);
}

absl::StatusOr<OperatorStateProjection> FindingsService::OperatorStateProjectionFor(
    std::string_view resource_id) const {
  if (operator_state_ == nullptr) {
    return OperatorStateProjection{};
  }
  absl::StatusOr<OperatorState> state = operator_state_->Get(resource_id);
  if (absl::IsNotFound(state.status()) || absl::IsInvalidArgument(state.status())) {
    return OperatorStateProjection{};  // nothing declared (a non-canonical id has nothing)
  }
  PULSE_RETURN_IF_ERROR(state.status());
  return ProjectOperatorState(*state, clock_.Now());
}

absl::StatusOr<std::vector<Finding>> FindingsService::List(const FindingQuery& query) const {
  FindingFilter filter;
  filter.resource_id = query.resource_id;
  filter.category = query.category;
  if (!query.include_inactive) {
    filter.active_at = clock_.Now();
  }
  PULSE_ASSIGN_OR_RETURN(std::vector<StoredFinding> stored, store_.List(filter));
  std::vector<Finding> out;
  out.reserve(stored.size());
  for (StoredFinding& s : stored) {
    out.push_back(std::move(s.finding));
  }
  return out;
}

absl::StatusOr<std::vector<Finding>> FindingsService::ListAwaitingFixOutcome() const {
  PULSE_ASSIGN_OR_RETURN(std::vector<StoredFinding> stored, store_.ListAwaitingFixOutcome());
  const absl::Time now = clock_.Now();
  std::vector<Finding> out;
  out.reserve(stored.size());
  for (StoredFinding& s : stored) {
    if (IsActive(s.finding, now)) {
      out.push_back(std::move(s.finding));
    }
  }
  return out;
}

absl::StatusOr<std::vector<ActiveFindingKey>> FindingsService::ListActiveKeys() const {
  return store_.ListActiveKeys(clock_.Now());
}

absl::StatusOr<std::vector<Finding>> FindingsService::GetMany(
    const std::vector<std::string>& ids) const {
  PULSE_ASSIGN_OR_RETURN(std::vector<StoredFinding> stored, store_.GetBatch(ids));
  std::vector<Finding> out;
  out.reserve(stored.size());
  for (StoredFinding& s : stored) {
    out.push_back(std::move(s.finding));
  }
  return out;
}

absl::StatusOr<SuppressionRule> FindingsService::AddSuppressionRule(
    const SuppressionRuleRequest& request) {
  SuppressionRule rule;
  rule.resource_id = findings_internal::Trimmed(request.resource_id);
  rule.resource_name = findings_internal::Trimmed(request.resource_name);
  rule.category = request.category;
  rule.description = findings_internal::Trimmed(request.description);
  PULSE_RETURN_IF_ERROR(
      CheckField(w::kResourceId, rule.resource_id, kMaxReportIdentifierBytes, false));
  PULSE_RETURN_IF_ERROR(
      CheckField(w::kResourceName, rule.resource_name, kMaxReportIdentifierBytes, false));
  PULSE_RETURN_IF_ERROR(CheckField(w::kRuleDescription, rule.description, kMaxNoteBytes, true));
  if (rule.category.has_value() && ToString(*rule.category) == "unknown") {
    return InvalidFindingRequest("category is not a known category",
                                 {{std::string(w::kCategory), "unknown category"}});
  }
  if (IsBroadRule(rule) && !request.allow_broad_scope) {
    return InvalidFindingRequest(
        "a rule for any resource or any category needs allow_broad_scope",
        {{std::string(w::kAllowBroadScope), "required for a wildcard resource or category"}});
  }
  rule.id = SuppressionRuleIdFor(rule.resource_id, rule.category);
  PULSE_ASSIGN_OR_RETURN(std::vector<SuppressionRule> rules, store_.ListSuppressionRules());
  for (const SuppressionRule& existing : rules) {
    if (existing.id == rule.id) {
      return existing;
    }
  }
  rule.created_at = clock_.Now();
  rule.created_from = SuppressionOrigin::kManual;
  PULSE_RETURN_IF_ERROR(store_.PutSuppressionRule(rule));
  return rule;
}

absl::StatusOr<std::vector<SuppressionRule>> FindingsService::ListSuppressionRules() const {
  return store_.ListSuppressionRules();
}

absl::Status FindingsService::DeleteSuppressionRule(std::string_view rule_id) {
  absl::Status status = store_.DeleteSuppressionRule(rule_id);
  if (absl::IsNotFound(status)) {
    return MakeFindingError(absl::StatusCode::kNotFound, AgentErrorCode::kFindingNotFound,
                            "Suppression rule not found", {{"rule_id", std::string(rule_id)}});
  }
  return status;
}

absl::StatusOr<std::vector<std::string>> FindingsService::SweepReminders() {
  FindingFilter all;
  PULSE_ASSIGN_OR_RETURN(std::vector<StoredFinding> stored, store_.List(all));
  std::vector<std::string> reminded;
  for (const StoredFinding& s : stored) {
    const Finding& f = s.finding;
    if (f.dismissed_reason != DismissReason::kWillFixLater || f.suppressed ||
        !f.remind_at.has_value()) {
      continue;
    }
    PULSE_ASSIGN_OR_RETURN(
        Mutation m, Mutate(f.id, [](Transition& tx) {
          Finding& x = tx.finding;
          if (x.dismissed_reason != DismissReason::kWillFixLater || x.suppressed ||
              !x.remind_at.has_value() || tx.now < *x.remind_at) {
            return absl::OkStatus();  // not due (or changed meanwhile)
          }
          x.dismissed_reason.reset();
          x.remind_at.reset();
          x.acknowledged_at.reset();
          ++x.remind_count;
          tx.Event(LifecycleEventType::kReminded,
                   "Reminder: this finding was dismissed as will fix later",
                   {{std::string(w::kMetaRemindCount), std::to_string(x.remind_count)}});
          return absl::OkStatus();
        }));
    if (m.written) {
      reminded.push_back(m.finding.id);
    }
  }
  return reminded;
}

}  // namespace pulse::core
