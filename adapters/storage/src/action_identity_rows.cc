#include "action_identity_rows.h"

#include <sqlite3.h>

#include <limits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "action_rows.h"
#include "pulse/core/json/json.h"
#include "pulse/core/json/json_writer.h"
#include "pulse/core/status_macros.h"
#include "sqlite_connection.h"
#include "statement_cache.h"

namespace pulse::adapters::storage {
namespace {

std::string Str(std::string_view v) { return std::string(v); }

// A JSON array of strings. The items are checked text, so the writer changes none of them.
std::string EncodeList(std::span<const std::string> items) {
  core::JsonWriter w;
  w.StringArray(items);
  return w.Take();
}

// The sum of the identity's text, checked field by field as it is added.
class TextBudget {
 public:
  absl::Status Add(std::string_view text, std::string_view field,
                   std::size_t max_bytes = kMaxIdentityBytes) {
    PULSE_RETURN_IF_ERROR(CheckText(text, field));
    if (text.size() > max_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(field), " is longer than ", max_bytes, " bytes"));
    }
    used_ += text.size();
    if (used_ > kMaxIdentityBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the action identity is longer than ", kMaxIdentityBytes, " bytes at ", ToAbsl(field)));
    }
    return absl::OkStatus();
  }

  absl::Status AddList(std::span<const std::string> items, std::string_view field) {
    for (const std::string& item : items) {
      PULSE_RETURN_IF_ERROR(Add(item, field));
    }
    return absl::OkStatus();
  }

 private:
  std::size_t used_ = 0;
};

absl::Status CheckTexts(const core::ActionRecord& record) {
  const core::ActionRequest& r = record.request;
  const core::ActionPlan& p = record.plan;
  if (p.request_id != r.request_id || p.resource_id != r.resource_id ||
      p.capability_name != r.capability_name || p.params_json != r.params_json) {
    return absl::InvalidArgumentError("the plan does not match its request");
  }
  TextBudget budget;
  PULSE_RETURN_IF_ERROR(budget.Add(p.action_id, "action id", core::kMaxActionIdBytes));
  PULSE_RETURN_IF_ERROR(budget.Add(r.request_id, "request id", core::kMaxActionIdBytes));
  PULSE_RETURN_IF_ERROR(budget.Add(r.actor.id, "requester id", core::kMaxActionIdBytes));
  PULSE_RETURN_IF_ERROR(budget.Add(r.reason, "request reason", core::kMaxActionTextBytes));
  for (const auto& [text, field] : {
           std::pair<std::string_view, std::string_view>{r.resource_id, "resource id"},
           {r.capability_name, "capability name"},
           {r.params_json, "params"},
           {r.actor.name, "requester name"},
           {r.approval_posture, "approval posture"},
           {p.message, "plan message"},
           {p.resource_version, "resource version"},
           {p.policy_version, "policy version"},
           {p.plan_hash, "plan hash"},
           {p.preflight.target, "preflight target"},
           {p.preflight.current_state, "preflight current state"},
           {p.preflight.intended_change, "preflight intended change"},
           {p.preflight.dry_run_summary, "preflight dry-run summary"},
       }) {
    PULSE_RETURN_IF_ERROR(budget.Add(text, field));
  }
  PULSE_RETURN_IF_ERROR(budget.AddList(p.predicted_blast_radius, "predicted blast radius"));
  PULSE_RETURN_IF_ERROR(budget.AddList(p.preflight.safety_checks, "safety check"));
  PULSE_RETURN_IF_ERROR(budget.AddList(p.preflight.verification_steps, "verification step"));
  const int quorum = p.approval_requirement.quorum;
  if (quorum < 1 || quorum > 16) {
    return absl::InvalidArgumentError("the approval quorum must be 1..16");
  }
  return absl::OkStatus();
}

// Reads the columns of one identity in kIdentityColumns order.
class IdentityReader {
 public:
  IdentityReader(const SQLite::Statement& q, int first, std::string_view action_id)
      : q_(q), next_(first), id_(action_id) {}

  SQLite::Column Next() { return q_.getColumn(next_++); }
  std::string Text() { return Next().getString(); }

  template <class T, class Parse>
  absl::StatusOr<T> Enum(Parse parse, std::string_view what) {
    return ParseColumn<T>(Next(), parse, id_, what);
  }

  absl::StatusOr<std::int64_t> Integer(std::string_view what) {
    const SQLite::Column column = Next();
    if (column.getType() != SQLITE_INTEGER) {
      return CorruptAction(id_, absl::StrCat("a non-integer ", ToAbsl(what)));
    }
    return column.getInt64();
  }

  absl::StatusOr<bool> Flag(std::string_view what) {
    PULSE_ASSIGN_OR_RETURN(const std::int64_t value, Integer(what));
    if (value != 0 && value != 1) {
      return CorruptAction(id_, absl::StrCat("a ", ToAbsl(what), " flag other than 0 or 1"));
    }
    return value == 1;
  }

  absl::StatusOr<absl::Time> Time(std::string_view what) {
    PULSE_ASSIGN_OR_RETURN(const std::int64_t nanos, Integer(what));
    return DecodeTime(nanos);
  }

  // A JSON array of UTF-8 strings without NUL (what EncodeList writes).
  absl::StatusOr<std::vector<std::string>> List(std::string_view what) {
    const std::string text = Text();
    auto malformed = [&] { return CorruptAction(id_, absl::StrCat("a malformed ", ToAbsl(what))); };
    absl::StatusOr<rapidjson::Document> doc =
        core::ParseJson(text, {std::numeric_limits<std::size_t>::max(), 1});
    if (!doc.ok() || !doc->IsArray()) {
      return malformed();
    }
    std::vector<std::string> items;
    items.reserve(doc->Size());
    for (const rapidjson::Value& item : doc->GetArray()) {
      if (!item.IsString()) {
        return malformed();
      }
      std::string value(item.GetString(), item.GetStringLength());
      if (!CheckText(value, what).ok()) {
        return malformed();
      }
      items.push_back(std::move(value));
    }
    return items;
  }

 private:
  const SQLite::Statement& q_;
  int next_;
  std::string_view id_;
};

}  // namespace

const char kIdentityColumns[] =
    "a.id, a.request_id, a.resource_id, a.capability_name, a.plan_hash, a.created_at_ns, "
    "i.action_id, i.params_json, i.reason, i.actor_kind, i.actor_id, i.actor_name, "
    "i.approval_posture, i.allowed, i.requires_approval, i.approval_policy, i.approval_floor, "
    "i.approval_quorum, i.approval_disallow_requester, i.auto_authorization, i.risk, "
    "i.predicted_blast_radius, i.rollback_available, i.message, i.planned_at_ns, "
    "i.expires_at_ns, i.resource_version, i.policy_version, i.preflight_target, "
    "i.preflight_current_state, i.preflight_intended_change, i.preflight_dry_run_available, "
    "i.preflight_dry_run_summary, i.preflight_safety_checks, i.preflight_verification_steps";

absl::StatusOr<IdentityRow> EncodeIdentity(const core::ActionRecord& record) {
  PULSE_RETURN_IF_ERROR(CheckTexts(record));
  const core::ActionPlan& p = record.plan;
  IdentityRow row;
  row.record = &record;
  PULSE_ASSIGN_OR_RETURN(row.created_at_ns, EncodeTime(record.created_at, "created_at"));
  PULSE_ASSIGN_OR_RETURN(row.planned_at_ns, EncodeTime(p.planned_at, "plan planned_at"));
  PULSE_ASSIGN_OR_RETURN(row.expires_at_ns, EncodeTime(p.expires_at, "plan expires_at"));
  row.predicted_blast_radius = EncodeList(p.predicted_blast_radius);
  row.safety_checks = EncodeList(p.preflight.safety_checks);
  row.verification_steps = EncodeList(p.preflight.verification_steps);
  return row;
}

void InsertIdentity(SQLite::Database& db, const IdentityRow& row) {
  const core::ActionRequest& r = row.record->request;
  const core::ActionPlan& p = row.record->plan;
  Prepared prepared_insert(
      db,
      "INSERT INTO action_identities (action_id, params_json, reason, actor_kind, actor_id, "
      "actor_name, approval_posture, allowed, requires_approval, approval_policy, "
      "approval_floor, approval_quorum, approval_disallow_requester, auto_authorization, risk, "
      "predicted_blast_radius, rollback_available, message, planned_at_ns, expires_at_ns, "
      "resource_version, policy_version, preflight_target, preflight_current_state, "
      "preflight_intended_change, preflight_dry_run_available, preflight_dry_run_summary, "
      "preflight_safety_checks, preflight_verification_steps) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::Statement& insert = *prepared_insert;
  int i = 1;
  insert.bind(i++, p.action_id);
  insert.bind(i++, r.params_json);
  insert.bind(i++, r.reason);
  insert.bind(i++, Str(core::ToString(r.actor.kind)));
  insert.bind(i++, r.actor.id);
  insert.bind(i++, r.actor.name);
  insert.bind(i++, r.approval_posture);
  insert.bind(i++, p.allowed ? 1 : 0);
  insert.bind(i++, p.requires_approval ? 1 : 0);
  insert.bind(i++, Str(core::ToString(p.approval_policy)));
  insert.bind(i++, Str(core::ToString(p.approval_requirement.floor)));
  insert.bind(i++, p.approval_requirement.quorum);
  insert.bind(i++, p.approval_requirement.disallow_requester ? 1 : 0);
  insert.bind(i++, Str(core::ToString(p.auto_authorization)));
  insert.bind(i++, Str(core::ToString(p.risk)));
  insert.bind(i++, row.predicted_blast_radius);
  insert.bind(i++, p.rollback_available ? 1 : 0);
  insert.bind(i++, p.message);
  insert.bind(i++, static_cast<std::int64_t>(row.planned_at_ns));
  insert.bind(i++, static_cast<std::int64_t>(row.expires_at_ns));
  insert.bind(i++, p.resource_version);
  insert.bind(i++, p.policy_version);
  insert.bind(i++, p.preflight.target);
  insert.bind(i++, p.preflight.current_state);
  insert.bind(i++, p.preflight.intended_change);
  insert.bind(i++, p.preflight.dry_run_available ? 1 : 0);
  insert.bind(i++, p.preflight.dry_run_summary);
  insert.bind(i++, row.safety_checks);
  insert.bind(i++, row.verification_steps);
  insert.exec();
}

absl::Status ReadIdentity(const SQLite::Statement& q, int first, core::ActionRecord& record) {
  const std::string id = q.getColumn(first).getString();
  IdentityReader in(q, first, id);
  core::ActionRequest& r = record.request;
  core::ActionPlan& p = record.plan;
  p.action_id = in.Text();
  r.request_id = p.request_id = in.Text();
  r.resource_id = p.resource_id = in.Text();
  r.capability_name = p.capability_name = in.Text();
  p.plan_hash = in.Text();
  PULSE_ASSIGN_OR_RETURN(record.created_at, in.Time("creation time"));
  if (in.Next().isNull()) {
    return CorruptAction(id, "no identity row (see unconverted_action_identities)");
  }
  r.params_json = p.params_json = in.Text();
  r.reason = in.Text();
  PULSE_ASSIGN_OR_RETURN(r.actor.kind,
                         in.Enum<core::ActorKind>(core::ParseActorKind, "actor kind"));
  r.actor.id = in.Text();
  r.actor.name = in.Text();
  r.approval_posture = in.Text();
  PULSE_ASSIGN_OR_RETURN(p.allowed, in.Flag("allowed"));
  PULSE_ASSIGN_OR_RETURN(p.requires_approval, in.Flag("requires approval"));
  PULSE_ASSIGN_OR_RETURN(p.approval_policy,
                         in.Enum<core::ApprovalLevel>(core::ParseApprovalLevel, "approval policy"));
  core::ApprovalRequirement& a = p.approval_requirement;
  PULSE_ASSIGN_OR_RETURN(a.floor,
                         in.Enum<core::ApprovalLevel>(core::ParseApprovalLevel, "approval floor"));
  PULSE_ASSIGN_OR_RETURN(const std::int64_t quorum, in.Integer("approval quorum"));
  if (quorum < 1 || quorum > 16) {
    return CorruptAction(id, "an approval quorum outside 1..16");
  }
  a.quorum = static_cast<int>(quorum);
  PULSE_ASSIGN_OR_RETURN(a.disallow_requester, in.Flag("disallow requester"));
  PULSE_ASSIGN_OR_RETURN(
      p.auto_authorization,
      in.Enum<core::AutoAuthorization>(core::ParseAutoAuthorization, "auto authorization"));
  PULSE_ASSIGN_OR_RETURN(p.risk, in.Enum<core::ActionRisk>(core::ParseActionRisk, "risk"));
  PULSE_ASSIGN_OR_RETURN(p.predicted_blast_radius, in.List("predicted blast radius"));
  PULSE_ASSIGN_OR_RETURN(p.rollback_available, in.Flag("rollback available"));
  p.message = in.Text();
  PULSE_ASSIGN_OR_RETURN(p.planned_at, in.Time("planned time"));
  PULSE_ASSIGN_OR_RETURN(p.expires_at, in.Time("expiry time"));
  p.resource_version = in.Text();
  p.policy_version = in.Text();
  p.preflight.target = in.Text();
  p.preflight.current_state = in.Text();
  p.preflight.intended_change = in.Text();
  PULSE_ASSIGN_OR_RETURN(p.preflight.dry_run_available, in.Flag("dry-run available"));
  p.preflight.dry_run_summary = in.Text();
  PULSE_ASSIGN_OR_RETURN(p.preflight.safety_checks, in.List("safety checks"));
  PULSE_ASSIGN_OR_RETURN(p.preflight.verification_steps, in.List("verification steps"));
  return absl::OkStatus();
}

}  // namespace pulse::adapters::storage
