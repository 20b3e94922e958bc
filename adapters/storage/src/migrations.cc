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

constexpr std::array<Migration, 7> kMigrations = {{
    {1, "findings, actions, audit, operator state, metrics, tokens, credentials", kSchemaV1},
    {2, "sessions", kSchemaV2},
    {3, "operator state local_only", kSchemaV3},
    {4, "patrol runs and settings", kSchemaV4},
    {5, "findings resource name and storage columns", kSchemaV5},
    {6, "api token kind and approver name", kSchemaV6},
    {7, "session owner and kind", kSchemaV7},
}};

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

}  // namespace pulse::adapters::storage
