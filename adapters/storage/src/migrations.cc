#include "migrations.h"

#include <array>

namespace pulse::adapters::storage {
namespace {

// Version 1: every store of issue 5. Conventions (docs/storage.md): times are INTEGER
// nanoseconds since the Unix epoch (*_ns), enums are their wire strings, records whose shape
// the core owns are kept as the core's JSON next to the indexed or compared columns, and
// append-only tables refuse UPDATE and DELETE by trigger.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE schema_version (
  version INTEGER NOT NULL PRIMARY KEY,
  description TEXT NOT NULL
);

CREATE TABLE findings (
  id TEXT NOT NULL PRIMARY KEY,
  version INTEGER NOT NULL CHECK (version >= 1),
  resource_id TEXT NOT NULL,
  category TEXT NOT NULL,
  is_open INTEGER NOT NULL CHECK (is_open IN (0, 1)),
  snoozed_until_ns INTEGER,
  record_json TEXT NOT NULL
);
CREATE INDEX findings_by_resource ON findings (resource_id, category);
CREATE INDEX findings_by_category ON findings (category);

CREATE TABLE suppression_rules (
  id TEXT NOT NULL PRIMARY KEY,
  rule_json TEXT NOT NULL
);

CREATE TABLE actions (
  id TEXT NOT NULL PRIMARY KEY,
  request_id TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  capability_name TEXT NOT NULL,
  plan_hash TEXT NOT NULL,
  created_at_ns INTEGER NOT NULL,
  identity_json TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('planned', 'pending_approval', 'approved', 'rejected',
                                       'expired', 'executing', 'completed', 'failed')),
  decision_revision INTEGER NOT NULL CHECK (decision_revision >= 0),
  updated_at_ns INTEGER NOT NULL
);
CREATE INDEX actions_by_state ON actions (state, created_at_ns, id);
CREATE INDEX actions_by_resource ON actions (resource_id);
CREATE TRIGGER actions_identity_is_immutable
  BEFORE UPDATE OF id, request_id, resource_id, capability_name, plan_hash, created_at_ns,
                   identity_json ON actions
  BEGIN SELECT RAISE(ABORT, 'action identity is immutable'); END;
CREATE TRIGGER actions_are_never_deleted BEFORE DELETE ON actions
  BEGIN SELECT RAISE(ABORT, 'actions are never deleted'); END;

CREATE TABLE action_approvals (
  action_id TEXT NOT NULL REFERENCES actions (id),
  revision INTEGER NOT NULL CHECK (revision >= 1),
  actor_kind TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('approved', 'rejected')),
  reason TEXT NOT NULL,
  at_ns INTEGER NOT NULL,
  plan_hash TEXT NOT NULL,
  PRIMARY KEY (action_id, revision)
);

CREATE TABLE action_results (
  action_id TEXT NOT NULL PRIMARY KEY REFERENCES actions (id),
  execution_status TEXT NOT NULL,
  execution_reason_code TEXT NOT NULL,
  execution_summary TEXT NOT NULL,
  verification_status TEXT NOT NULL,
  evidence_class TEXT NOT NULL,
  verification_reason_code TEXT NOT NULL,
  verification_summary TEXT NOT NULL,
  observer_id TEXT NOT NULL,
  observed_at_ns INTEGER,
  error_message TEXT NOT NULL,
  dispatched INTEGER NOT NULL CHECK (dispatched IN (0, 1)),
  executor_id TEXT NOT NULL,
  started_at_ns INTEGER,
  finished_at_ns INTEGER NOT NULL
);

CREATE TABLE action_events (
  action_id TEXT NOT NULL REFERENCES actions (id),
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  at_ns INTEGER NOT NULL,
  state TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('transition', 'decision')),
  decision_revision INTEGER,
  decision TEXT,
  actor_kind TEXT,
  actor_id TEXT,
  message TEXT NOT NULL,
  PRIMARY KEY (action_id, sequence)
);

-- One row per admission into `executing`, written in the same commit: the durable proof that an
-- action was handed to its executor at most once.
CREATE TABLE action_dispatches (
  action_id TEXT NOT NULL PRIMARY KEY REFERENCES actions (id),
  attempt_id TEXT NOT NULL UNIQUE,
  admitted_at_ns INTEGER NOT NULL
);

CREATE TRIGGER action_approvals_append_only BEFORE UPDATE ON action_approvals
  BEGIN SELECT RAISE(ABORT, 'action approvals are append-only'); END;
CREATE TRIGGER action_approvals_never_deleted BEFORE DELETE ON action_approvals
  BEGIN SELECT RAISE(ABORT, 'action approvals are append-only'); END;
CREATE TRIGGER action_results_write_once BEFORE UPDATE ON action_results
  BEGIN SELECT RAISE(ABORT, 'action results are written once'); END;
CREATE TRIGGER action_results_never_deleted BEFORE DELETE ON action_results
  BEGIN SELECT RAISE(ABORT, 'action results are written once'); END;
CREATE TRIGGER action_events_append_only BEFORE UPDATE ON action_events
  BEGIN SELECT RAISE(ABORT, 'action events are append-only'); END;
CREATE TRIGGER action_events_never_deleted BEFORE DELETE ON action_events
  BEGIN SELECT RAISE(ABORT, 'action events are append-only'); END;
CREATE TRIGGER action_dispatches_write_once BEFORE UPDATE ON action_dispatches
  BEGIN SELECT RAISE(ABORT, 'dispatch records are written once'); END;
CREATE TRIGGER action_dispatches_never_deleted BEFORE DELETE ON action_dispatches
  BEGIN SELECT RAISE(ABORT, 'dispatch records are written once'); END;

CREATE TABLE audit_log (
  seq INTEGER NOT NULL PRIMARY KEY,
  at_ns INTEGER NOT NULL,
  category TEXT NOT NULL,
  event TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  actor_kind TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  code TEXT NOT NULL,
  message TEXT NOT NULL,
  details_json TEXT NOT NULL
);
CREATE INDEX audit_log_by_subject ON audit_log (subject_id, seq);
CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log
  BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_never_deleted BEFORE DELETE ON audit_log
  BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

CREATE TABLE operator_state (
  resource_id TEXT NOT NULL PRIMARY KEY,
  never_auto_remediate INTEGER NOT NULL CHECK (never_auto_remediate IN (0, 1)),
  intentionally_offline INTEGER NOT NULL CHECK (intentionally_offline IN (0, 1)),
  monitoring_mode TEXT NOT NULL,
  lifecycle TEXT NOT NULL,
  maintenance_start_ns INTEGER,
  maintenance_end_ns INTEGER,
  maintenance_reason TEXT NOT NULL,
  criticality TEXT NOT NULL,
  note TEXT NOT NULL,
  set_at_ns INTEGER NOT NULL,
  set_by TEXT NOT NULL
);

-- NULL value = NaN (SQL has no NaN). The index covers the range query.
CREATE TABLE metric_samples (
  target_id TEXT NOT NULL,
  metric TEXT NOT NULL,
  at_ns INTEGER NOT NULL,
  value REAL
);
CREATE INDEX metric_samples_by_series ON metric_samples (target_id, metric, at_ns, value);

CREATE TABLE api_tokens (
  id TEXT NOT NULL PRIMARY KEY,
  token_hash BLOB NOT NULL UNIQUE,
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,
  created_at_ns INTEGER NOT NULL,
  last_used_at_ns INTEGER,
  expires_at_ns INTEGER
);
CREATE INDEX api_tokens_by_creation ON api_tokens (created_at_ns, id);

CREATE TABLE provider_credentials (
  provider TEXT NOT NULL PRIMARY KEY,
  sealed BLOB NOT NULL,
  updated_at_ns INTEGER NOT NULL
);

-- Which key file each secret-bearing table was written under (a key id, never the key).
CREATE TABLE key_bindings (
  purpose TEXT NOT NULL PRIMARY KEY,
  key_id TEXT NOT NULL
);

PRAGMA application_id = 1347767379;
)sql";

// Version 2: Assistant sessions (SessionStore). The record is the core's JSON; revision is the
// compare-and-swap column, and the others serve List without decoding the JSON.
constexpr char kSchemaV2[] = R"sql(
CREATE TABLE sessions (
  id TEXT NOT NULL PRIMARY KEY,
  revision INTEGER NOT NULL CHECK (revision >= 1),
  status TEXT NOT NULL CHECK (status IN ('idle', 'running', 'awaiting_approval',
                                         'awaiting_input')),
  message_count INTEGER NOT NULL CHECK (message_count >= 0),
  created_at_ns INTEGER NOT NULL,
  updated_at_ns INTEGER NOT NULL,
  record_json TEXT NOT NULL
);
CREATE INDEX sessions_by_update ON sessions (updated_at_ns DESC, id);
)sql";

// Version 3: the local-only data-handling flag of operator state (existing rows are not
// local-only). The partial index serves LocalOnlyResourceIds, read before every Assistant run.
constexpr char kSchemaV3[] = R"sql(
ALTER TABLE operator_state
  ADD COLUMN local_only INTEGER NOT NULL DEFAULT 0 CHECK (local_only IN (0, 1));
CREATE INDEX operator_state_local_only ON operator_state (resource_id) WHERE local_only = 1;
)sql";

// Version 4: Patrol run history (the core's PatrolRunRecord JSON, newest 100 kept) and the
// Patrol settings (autonomy). IF NOT EXISTS keeps the migration safe to re-run on files a test
// rolled back.
constexpr char kSchemaV4[] = R"sql(
CREATE TABLE IF NOT EXISTS patrol_runs (
  id TEXT NOT NULL PRIMARY KEY,
  started_at_ns INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'healthy', 'issues_found', 'error')),
  record_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS patrol_runs_by_start ON patrol_runs (started_at_ns DESC, id DESC);
CREATE TABLE IF NOT EXISTS patrol_settings (
  name TEXT NOT NULL PRIMARY KEY,
  value_json TEXT NOT NULL
);
)sql";

// Version 5: the columns that find a new finding's sibling candidates without reading every
// finding (core::RelatedResourceFilter): the resource name, matched ASCII case-insensitively
// through a NOCASE index, and whether the finding may be on a storage resource
// (core::MayBeStorageResource: LIKE is ASCII case-insensitive like the core's fold), through a
// partial index. Existing rows are filled from their record.
constexpr char kSchemaV5[] = R"sql(
ALTER TABLE findings ADD COLUMN resource_name TEXT NOT NULL DEFAULT '';
ALTER TABLE findings
  ADD COLUMN may_be_storage INTEGER NOT NULL DEFAULT 0 CHECK (may_be_storage IN (0, 1));
UPDATE findings SET resource_name = coalesce(json_extract(record_json, '$.resource_name'), '');
UPDATE findings SET may_be_storage = 1
  WHERE coalesce(json_extract(record_json, '$.resource_type'), '') = 'storage'
     OR resource_id LIKE '%storage%' OR resource_id LIKE '%pool%' OR resource_id LIKE '%array%'
     OR resource_name LIKE '%storage%' OR resource_name LIKE '%pool%'
     OR resource_name LIKE '%array%';
CREATE INDEX findings_by_resource_name ON findings (resource_name COLLATE NOCASE);
CREATE INDEX findings_on_storage ON findings (may_be_storage) WHERE may_be_storage = 1;
)sql";

// Version 6: who holds an API token (core::ApiTokenKind; existing tokens were minted for
// humans) and the approver's display name beside its id (the token name; "" before).
constexpr char kSchemaV6[] = R"sql(
ALTER TABLE api_tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'human'
  CHECK (kind IN ('human', 'agent', 'service'));
ALTER TABLE action_approvals ADD COLUMN actor_name TEXT NOT NULL DEFAULT '';
)sql";

// Version 7: session ownership and kind. A chat session belongs to the API token that created
// it (its public id and name); a Patrol session is a system session owned by no one. Existing
// rows become unowned chat sessions, which only an admin (`*`) may read (docs/security.md).
// The index serves the default listing (the caller's own chat sessions, newest first).
constexpr char kSchemaV7[] = R"sql(
ALTER TABLE sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'patrol'));
ALTER TABLE sessions ADD COLUMN owner_token_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN owner_token_name TEXT NOT NULL DEFAULT '';
CREATE INDEX sessions_by_owner ON sessions (kind, owner_token_id, updated_at_ns DESC, id);
)sql";

// Version 8: an action's immutable identity as columns instead of the core's wire JSON
// (actions.identity_json held ActionRecordToJson, the API's camelCase shape, so renaming a wire
// member would have broken every stored action). It gets its own 1:1 table rather than more
// columns of `actions`: the new columns are NOT NULL with CHECKs and no DEFAULT (ALTER TABLE
// ADD COLUMN needs a default for NOT NULL, which would then stay in the schema), the whole row
// is write-once by one trigger with no column list to forget, and `actions` stays narrow for the
// compare-and-swap UPDATE and the state scans. `actions` keeps the identity columns that queries
// filter or compare on (id, request_id, resource_id, capability_name, plan_hash, created_at_ns);
// the plan's copies of the first three and of params_json equal the request's
// (core::ValidateNewActionRecord), so each is stored once. The three string lists are JSON
// arrays of strings (a storage-owned encoding: docs/storage.md).
//
// Existing rows are converted by SQLite's JSON functions reading the member names release 7
// wrote (frozen here, independent of today's codec). Times are RFC 3339 UTC text with 0..9
// fractional digits; the conversion checks the text is one that formats back to itself. A row
// that does not convert exactly (tampered JSON, a sub-nanosecond or post-2261 time) gets no
// identity row: its JSON is kept in unconverted_action_identities for an operator, and the
// action reads as DataLoss, as a corrupt identity_json did. One bad row never stops the
// database from opening.
constexpr char kSchemaV8[] = R"sql(
CREATE TABLE action_identities (
  action_id TEXT NOT NULL PRIMARY KEY REFERENCES actions (id),
  params_json TEXT NOT NULL,
  reason TEXT NOT NULL,
  actor_kind TEXT NOT NULL CHECK (actor_kind IN ('human', 'agent', 'policy', 'service')),
  actor_id TEXT NOT NULL,
  actor_name TEXT NOT NULL,
  approval_posture TEXT NOT NULL,
  allowed INTEGER NOT NULL CHECK (allowed IN (0, 1)),
  requires_approval INTEGER NOT NULL CHECK (requires_approval IN (0, 1)),
  approval_policy TEXT NOT NULL
    CHECK (approval_policy IN ('none', 'admin', 'mfa', 'dry_run_only')),
  approval_floor TEXT NOT NULL CHECK (approval_floor IN ('none', 'admin', 'mfa', 'dry_run_only')),
  approval_quorum INTEGER NOT NULL CHECK (approval_quorum BETWEEN 1 AND 16),
  approval_disallow_requester INTEGER NOT NULL CHECK (approval_disallow_requester IN (0, 1)),
  auto_authorization TEXT NOT NULL
    CHECK (auto_authorization IN ('never', 'low_risk', 'elevated')),
  risk TEXT NOT NULL CHECK (risk IN ('low', 'medium', 'high')),
  predicted_blast_radius TEXT NOT NULL,
  rollback_available INTEGER NOT NULL CHECK (rollback_available IN (0, 1)),
  message TEXT NOT NULL,
  planned_at_ns INTEGER NOT NULL,
  expires_at_ns INTEGER NOT NULL,
  resource_version TEXT NOT NULL,
  policy_version TEXT NOT NULL,
  preflight_target TEXT NOT NULL,
  preflight_current_state TEXT NOT NULL,
  preflight_intended_change TEXT NOT NULL,
  preflight_dry_run_available INTEGER NOT NULL CHECK (preflight_dry_run_available IN (0, 1)),
  preflight_dry_run_summary TEXT NOT NULL,
  preflight_safety_checks TEXT NOT NULL,
  preflight_verification_steps TEXT NOT NULL
);
CREATE TRIGGER action_identities_are_immutable BEFORE UPDATE ON action_identities
  BEGIN SELECT RAISE(ABORT, 'action identity is immutable'); END;
CREATE TRIGGER action_identities_never_deleted BEFORE DELETE ON action_identities
  BEGIN SELECT RAISE(ABORT, 'actions are never deleted'); END;

CREATE TABLE unconverted_action_identities (
  action_id TEXT NOT NULL PRIMARY KEY REFERENCES actions (id),
  identity_json TEXT NOT NULL
);

-- OR IGNORE skips a row that fails a NOT NULL or CHECK constraint (a member missing, mistyped or
-- not convertible exactly); the WHERE clause refuses what the constraints cannot see.
INSERT OR IGNORE INTO action_identities (
  action_id, params_json, reason, actor_kind, actor_id, actor_name, approval_posture, allowed,
  requires_approval, approval_policy, approval_floor, approval_quorum,
  approval_disallow_requester, auto_authorization, risk, predicted_blast_radius,
  rollback_available, message, planned_at_ns, expires_at_ns, resource_version, policy_version,
  preflight_target, preflight_current_state, preflight_intended_change,
  preflight_dry_run_available, preflight_dry_run_summary, preflight_safety_checks,
  preflight_verification_steps)
SELECT id,
  json_extract(j, '$.plan.params'),
  json_extract(j, '$.request.reason'),
  json_extract(j, '$.request.actor.kind'),
  json_extract(j, '$.request.actor.id'),
  coalesce(json_extract(j, '$.request.actor.name'), ''),
  coalesce(json_extract(j, '$.request.approvalPosture'), ''),
  json_extract(j, '$.plan.allowed'),
  json_extract(j, '$.plan.requiresApproval'),
  json_extract(j, '$.plan.approvalPolicy'),
  json_extract(j, '$.plan.approvalRequirement.floor'),
  json_extract(j, '$.plan.approvalRequirement.quorum'),
  json_extract(j, '$.plan.approvalRequirement.disallowRequester'),
  json_extract(j, '$.plan.autoAuthorization'),
  json_extract(j, '$.plan.risk'),
  json_extract(j, '$.plan.predictedBlastRadius'),
  json_extract(j, '$.plan.rollbackAvailable'),
  json_extract(j, '$.plan.message'),
  CASE WHEN strftime('%Y-%m-%dT%H:%M:%S', substr(planned, 1, 19)) = substr(planned, 1, 19)
        AND unixepoch(substr(planned, 1, 19)) BETWEEN -9223372036 AND 9223372035
        AND (planned GLOB '???????????????????Z'
             OR (planned GLOB '???????????????????.?*Z' AND length(planned) <= 30
                 AND substr(planned, 21, length(planned) - 21) NOT GLOB '*[^0-9]*'))
    THEN unixepoch(substr(planned, 1, 19)) * 1000000000
         + CASE WHEN length(planned) = 20 THEN 0
                ELSE CAST(substr(substr(planned, 21, length(planned) - 21) || '00000000', 1, 9)
                          AS INTEGER) END END,
  CASE WHEN strftime('%Y-%m-%dT%H:%M:%S', substr(expires, 1, 19)) = substr(expires, 1, 19)
        AND unixepoch(substr(expires, 1, 19)) BETWEEN -9223372036 AND 9223372035
        AND (expires GLOB '???????????????????Z'
             OR (expires GLOB '???????????????????.?*Z' AND length(expires) <= 30
                 AND substr(expires, 21, length(expires) - 21) NOT GLOB '*[^0-9]*'))
    THEN unixepoch(substr(expires, 1, 19)) * 1000000000
         + CASE WHEN length(expires) = 20 THEN 0
                ELSE CAST(substr(substr(expires, 21, length(expires) - 21) || '00000000', 1, 9)
                          AS INTEGER) END END,
  json_extract(j, '$.plan.resourceVersion'),
  json_extract(j, '$.plan.policyVersion'),
  json_extract(j, '$.plan.preflight.target'),
  json_extract(j, '$.plan.preflight.currentState'),
  json_extract(j, '$.plan.preflight.intendedChange'),
  json_extract(j, '$.plan.preflight.dryRunAvailable'),
  json_extract(j, '$.plan.preflight.dryRunSummary'),
  json_extract(j, '$.plan.preflight.safetyChecks'),
  json_extract(j, '$.plan.preflight.verificationSteps')
FROM (SELECT id, request_id, resource_id, capability_name, plan_hash, identity_json AS j,
             json_extract(identity_json, '$.plan.plannedAt') AS planned,
             json_extract(identity_json, '$.plan.expiresAt') AS expires
        FROM actions WHERE json_valid(identity_json))
WHERE json_extract(j, '$.id') = id AND json_extract(j, '$.plan.actionId') = id
  AND json_extract(j, '$.request.requestId') = request_id
  AND json_extract(j, '$.plan.requestId') = request_id
  AND json_extract(j, '$.request.resourceId') = resource_id
  AND json_extract(j, '$.plan.resourceId') = resource_id
  AND json_extract(j, '$.request.capabilityName') = capability_name
  AND json_extract(j, '$.plan.capabilityName') = capability_name
  AND json_extract(j, '$.plan.planHash') = plan_hash
  AND json_type(j, '$.plan.params') = 'object'
  AND json_extract(j, '$.request.params') = json_extract(j, '$.plan.params')
  AND json_extract(j, '$.request.requestedBy') = json_extract(j, '$.request.actor.id')
  AND json_extract(j, '$.plan.approvalRequirement.version') = 1
  AND json_type(j, '$.plan.approvalRequirement.quorum') = 'integer'
  AND json_type(j, '$.plan.planHash') = 'text'
  AND json_type(j, '$.request.reason') = 'text'
  AND json_type(j, '$.request.actor.id') = 'text'
  AND coalesce(json_type(j, '$.request.actor.name'), 'text') = 'text'
  AND coalesce(json_type(j, '$.request.approvalPosture'), 'text') = 'text'
  AND json_type(j, '$.plan.message') = 'text'
  AND json_type(j, '$.plan.resourceVersion') = 'text'
  AND json_type(j, '$.plan.policyVersion') = 'text'
  AND json_type(j, '$.plan.preflight.target') = 'text'
  AND json_type(j, '$.plan.preflight.currentState') = 'text'
  AND json_type(j, '$.plan.preflight.intendedChange') = 'text'
  AND json_type(j, '$.plan.preflight.dryRunSummary') = 'text'
  AND json_type(j, '$.plan.predictedBlastRadius') = 'array'
  AND json_type(j, '$.plan.preflight.safetyChecks') = 'array'
  AND json_type(j, '$.plan.preflight.verificationSteps') = 'array'
  AND json_type(j, '$.plan.allowed') IN ('true', 'false')
  AND json_type(j, '$.plan.requiresApproval') IN ('true', 'false')
  AND json_type(j, '$.plan.approvalRequirement.disallowRequester') IN ('true', 'false')
  AND json_type(j, '$.plan.rollbackAvailable') IN ('true', 'false')
  AND json_type(j, '$.plan.preflight.dryRunAvailable') IN ('true', 'false');

INSERT INTO unconverted_action_identities (action_id, identity_json)
  SELECT id, identity_json FROM actions
   WHERE id NOT IN (SELECT action_id FROM action_identities);

DROP TRIGGER actions_identity_is_immutable;
ALTER TABLE actions DROP COLUMN identity_json;
CREATE TRIGGER actions_identity_is_immutable
  BEFORE UPDATE OF id, request_id, resource_id, capability_name, plan_hash, created_at_ns
  ON actions
  BEGIN SELECT RAISE(ABORT, 'action identity is immutable'); END;
)sql";

// Version 9 (issue 29): the keys of the findings list order, so a page is an index range and the
// per-resource counts an index scan, never a decode of every finding (docs/storage.md).
// severity_key: 0 critical, 1 warning, 2 watch, 3 info (ascending = most severe first);
// detected_key: minus detected_at in Unix nanoseconds (ascending = newest first); is_resolved:
// resolved_at is set. Existing rows are filled from their JSON; a detected_at that does not
// convert exactly sorts as the epoch, and the next Put of that finding rewrites it.
constexpr char kSchemaV9[] = R"sql(
ALTER TABLE findings ADD COLUMN severity_key INTEGER NOT NULL DEFAULT 3;
ALTER TABLE findings ADD COLUMN detected_key INTEGER NOT NULL DEFAULT 0;
ALTER TABLE findings ADD COLUMN is_resolved INTEGER NOT NULL DEFAULT 0;
UPDATE findings SET
  severity_key = CASE json_extract(record_json, '$.severity')
                   WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 WHEN 'watch' THEN 2 ELSE 3 END,
  is_resolved = coalesce(json_type(record_json, '$.resolved_at') = 'text', 0);
UPDATE findings SET detected_key = coalesce(-(
    CASE WHEN strftime('%Y-%m-%dT%H:%M:%S', substr(d, 1, 19)) = substr(d, 1, 19)
          AND unixepoch(substr(d, 1, 19)) BETWEEN -9223372036 AND 9223372035
          AND (d GLOB '???????????????????Z'
               OR (d GLOB '???????????????????.?*Z' AND length(d) <= 30
                   AND substr(d, 21, length(d) - 21) NOT GLOB '*[^0-9]*'))
      THEN unixepoch(substr(d, 1, 19)) * 1000000000
           + CASE WHEN length(d) = 20 THEN 0
                  ELSE CAST(substr(substr(d, 21, length(d) - 21) || '00000000', 1, 9)
                            AS INTEGER) END END), 0)
  FROM (SELECT id AS finding_id, json_extract(record_json, '$.detected_at') AS d FROM findings)
 WHERE finding_id = findings.id;
CREATE INDEX findings_open_page ON findings (severity_key, detected_key, id) WHERE is_open = 1;
CREATE INDEX findings_page ON findings (severity_key, detected_key, id);
CREATE INDEX findings_resource_page ON findings (resource_id, severity_key, detected_key, id);
CREATE INDEX findings_open_counts ON findings (resource_id, severity_key, snoozed_until_ns)
  WHERE is_open = 1;
)sql";

// Version 10 (issue 25): the host agent registry (core/ports/host_agent_store.h). One row per
// host; a token serves at most one host (UNIQUE), so a stolen token can never speak for a
// second one. token_id is not a foreign key into api_tokens: a revoked token's row stays
// until an operator binds the host to a new token, and the registry must outlive that.
// last_report is the last accepted report's wire JSON, "" before the first.
constexpr char kSchemaV10[] = R"sql(
CREATE TABLE host_agents (
  host TEXT NOT NULL PRIMARY KEY,
  token_id TEXT NOT NULL UNIQUE,
  bound_at_ns INTEGER NOT NULL,
  agent_version TEXT NOT NULL DEFAULT '',
  last_report_at_ns INTEGER,
  report_seq INTEGER NOT NULL DEFAULT 0 CHECK (report_seq >= 0),
  last_report TEXT NOT NULL DEFAULT ''
);
)sql";

// Version 11 (issue 26): the AI settings an operator changed at runtime (PUT
// /api/settings/ai), one row. The API key is not here: it is sealed in provider_credentials
// (docs/security.md). A spend cap of 0 means none.
constexpr char kSchemaV11[] = R"sql(
CREATE TABLE ai_settings (
  id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  provider TEXT NOT NULL,
  base_url TEXT NOT NULL,
  model TEXT NOT NULL,
  patrol_model TEXT NOT NULL,
  monthly_budget_usd REAL NOT NULL CHECK (monthly_budget_usd >= 0),
  session_budget_usd REAL NOT NULL CHECK (session_budget_usd >= 0),
  updated_at_ns INTEGER NOT NULL,
  updated_by TEXT NOT NULL
);
)sql";

// Version 12 (issue 26): metered model spend per calendar month (UTC), for the monthly spend
// cap: one row a month, "YYYY-MM", added to after every priced provider call.
constexpr char kSchemaV12[] = R"sql(
CREATE TABLE ai_spend (
  month TEXT NOT NULL PRIMARY KEY CHECK (length(month) = 7),
  cost_usd REAL NOT NULL CHECK (cost_usd >= 0),
  calls INTEGER NOT NULL CHECK (calls >= 0)
);
)sql";

// Version 13 (issue 27): notification channels and the durable outbox (docs/notifications.md).
// A channel's secrets (HMAC key, access token, a Slack or Discord webhook URL) are not here:
// they are sealed in provider_credentials as notify.<name> and notify.<name>.url. An outbox row
// is one event for one channel, written in the transaction of the write that caused it; unique
// per (channel, event_key), so a retried write queues nothing twice. state: pending until the
// sender marks it delivered or dead; next_attempt_ns orders the queue.
constexpr char kSchemaV13[] = R"sql(
CREATE TABLE notification_channels (
  name TEXT NOT NULL PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('webhook', 'slack', 'discord', 'ntfy', 'gotify')),
  url TEXT NOT NULL,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  min_severity TEXT NOT NULL CHECK (min_severity IN ('info', 'watch', 'warning', 'critical')),
  events_json TEXT NOT NULL,
  quiet_json TEXT NOT NULL,
  rate_per_minute INTEGER NOT NULL CHECK (rate_per_minute BETWEEN 1 AND 600),
  updated_at_ns INTEGER NOT NULL,
  updated_by TEXT NOT NULL
);
CREATE TABLE notification_outbox (
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  channel TEXT NOT NULL,
  event_kind TEXT NOT NULL,
  event_key TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  idempotency_key TEXT NOT NULL UNIQUE,
  attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_ns INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
  last_error TEXT NOT NULL DEFAULT '',
  created_at_ns INTEGER NOT NULL,
  delivered_at_ns INTEGER,
  UNIQUE (channel, event_key)
);
CREATE INDEX notification_outbox_due ON notification_outbox (next_attempt_ns, id)
  WHERE state = 'pending';
)sql";

// Version 14 (issue 27): email channels. SQLite cannot widen a CHECK in place, so the channel
// table is rebuilt with 'email' among its kinds and email_json, an email channel's addressing
// ({from, to, username}; '' for the other kinds); every stored channel is kept as it was.
constexpr char kSchemaV14[] = R"sql(
CREATE TABLE notification_channels_v14 (
  name TEXT NOT NULL PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('webhook', 'slack', 'discord', 'ntfy', 'gotify', 'email')),
  url TEXT NOT NULL,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  min_severity TEXT NOT NULL CHECK (min_severity IN ('info', 'watch', 'warning', 'critical')),
  events_json TEXT NOT NULL,
  quiet_json TEXT NOT NULL,
  rate_per_minute INTEGER NOT NULL CHECK (rate_per_minute BETWEEN 1 AND 600),
  updated_at_ns INTEGER NOT NULL,
  updated_by TEXT NOT NULL,
  email_json TEXT NOT NULL DEFAULT '',
  CHECK ((kind = 'email') = (email_json != ''))
);
INSERT INTO notification_channels_v14 (name, kind, url, enabled, min_severity, events_json,
  quiet_json, rate_per_minute, updated_at_ns, updated_by)
  SELECT name, kind, url, enabled, min_severity, events_json, quiet_json, rate_per_minute,
    updated_at_ns, updated_by FROM notification_channels;
DROP TABLE notification_channels;
ALTER TABLE notification_channels_v14 RENAME TO notification_channels;
)sql";

// Version 15 (issue 29): what the operations-loop status counts, without decoding a finding
// (FindingStore::CountPatrolFindings): last_seen_ns is last_seen_at in Unix nanoseconds,
// is_runtime marks the Patrol runtime finding (resource ai-service, key ai-patrol-error).
// Existing rows are filled from their JSON as migration 9 filled detected_key; a last_seen_at
// that does not convert exactly counts as the epoch until the next Put of that finding.
constexpr char kSchemaV15[] = R"sql(
ALTER TABLE findings ADD COLUMN last_seen_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE findings ADD COLUMN is_runtime INTEGER NOT NULL DEFAULT 0;
UPDATE findings SET is_runtime = 1
 WHERE resource_id = 'ai-service' AND json_extract(record_json, '$.key') = 'ai-patrol-error';
UPDATE findings SET last_seen_ns = coalesce((
    CASE WHEN strftime('%Y-%m-%dT%H:%M:%S', substr(d, 1, 19)) = substr(d, 1, 19)
          AND unixepoch(substr(d, 1, 19)) BETWEEN -9223372036 AND 9223372035
          AND (d GLOB '???????????????????Z'
               OR (d GLOB '???????????????????.?*Z' AND length(d) <= 30
                   AND substr(d, 21, length(d) - 21) NOT GLOB '*[^0-9]*'))
      THEN unixepoch(substr(d, 1, 19)) * 1000000000
           + CASE WHEN length(d) = 20 THEN 0
                  ELSE CAST(substr(substr(d, 21, length(d) - 21) || '00000000', 1, 9)
                            AS INTEGER) END END), 0)
  FROM (SELECT id AS finding_id, json_extract(record_json, '$.last_seen_at') AS d FROM findings)
 WHERE finding_id = findings.id;
CREATE INDEX findings_seen ON findings (is_runtime, last_seen_ns, severity_key);
CREATE INDEX findings_open_issues
  ON findings (is_runtime, severity_key, snoozed_until_ns, is_open) WHERE is_open = 1;
)sql";

// Version 16 (issue 29): the two action queue views (core/ports/action_store.h ActionPageView)
// as partial indexes in each view's order, so a page of GET /api/actions is an index range that
// reads only the actions it lists. The state lists must stay exactly the ones
// SqliteActionStore::ListPage writes in its WHERE clause: SQLite uses a partial index only when
// the query repeats its WHERE term.
constexpr char kSchemaV16[] = R"sql(
CREATE INDEX actions_in_flight_page ON actions (created_at_ns, id)
  WHERE state IN ('planned', 'pending_approval', 'approved', 'executing');
CREATE INDEX actions_settled_page ON actions (updated_at_ns DESC, id)
  WHERE state IN ('rejected', 'expired', 'completed', 'failed');
)sql";

// Version 17 (issue 29): two reads that no longer decode every finding.
// * The findings whose Patrol fix waits for its outcome (core::AwaitsFixOutcome: a fix action
//   linked, loop outcome fix_queued or fix_executed), marked by awaits_fix and listed through a
//   partial index, so the start-up reconciliation (FixProjector::ReconcileAll,
//   FindingStore::ListAwaitingFixOutcome) reads those findings, not every stored one. Existing
//   rows are filled from their JSON.
// * The active findings' keys (FindingStore::ListActiveKeys: id, resource, severity) from a
//   covering partial index in id order, for Patrol's triage and run summary.
constexpr char kSchemaV17[] = R"sql(
ALTER TABLE findings ADD COLUMN awaits_fix INTEGER NOT NULL DEFAULT 0 CHECK (awaits_fix IN (0, 1));
UPDATE findings SET awaits_fix = 1
 WHERE coalesce(json_extract(record_json, '$.fix_action_id'), '') <> ''
   AND json_extract(record_json, '$.investigation_outcome') IN ('fix_queued', 'fix_executed');
CREATE INDEX findings_awaiting_fix ON findings (id) WHERE awaits_fix = 1;
CREATE INDEX findings_active_keys
  ON findings (id, resource_id, severity_key, snoozed_until_ns, is_open) WHERE is_open = 1;
)sql";

constexpr std::array<Migration, 17> kMigrations = {{
    {1, "findings, actions, audit, operator state, metrics, tokens, credentials", kSchemaV1},
    {2, "sessions", kSchemaV2},
    {3, "operator state local_only", kSchemaV3},
    {4, "patrol runs and settings", kSchemaV4},
    {5, "findings resource name and storage columns", kSchemaV5},
    {6, "api token kind and approver name", kSchemaV6},
    {7, "session owner and kind", kSchemaV7},
    {8, "action identity columns instead of its wire JSON", kSchemaV8},
    {9, "findings list order keys and page indexes", kSchemaV9},
    {10, "host agent registry", kSchemaV10},
    {11, "runtime AI settings", kSchemaV11},
    {12, "metered model spend per month", kSchemaV12},
    {13, "notification channels and outbox", kSchemaV13},
    {14, "email notification channels", kSchemaV14},
    {15, "findings last-seen and runtime columns for the status counts", kSchemaV15},
    {16, "action queue page indexes", kSchemaV16},
    {17, "findings awaiting their fix's outcome, active finding keys", kSchemaV17},
}};

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

}  // namespace pulse::adapters::storage
