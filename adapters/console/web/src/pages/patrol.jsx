// Patrol: where the operations loop stands (get_patrol_control_status), Patrol's own status,
// run now, the recent runs with their counts, and the autonomy level.
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, hasScope } from '../api.js';
import PatrolAutonomy from '../components/patrol-autonomy.jsx';
import { ErrorNote, formatTime, StatusBadge, useLoad } from '../components/page-kit.jsx';
import '../components/pages.css';

const kPollMs = 1000;
const kNextStep = {
  run_patrol: 'Run Patrol',
  review_findings: 'Review the findings',
  open_assistant: 'Ask the Assistant',
  review_approvals: 'Review the approvals',
  open_mcp: 'Connect an agent over MCP',
  complete: 'Nothing waits',
};

function LoopStatus() {
  const { data, error } = useLoad(() => call('GET', '/api/agent/patrol-control/status'), []);
  return (
    <section class="c-card" aria-labelledby="loop-title">
      <h2 id="loop-title">Operations loop</h2>
      <ErrorNote error={error} context="The loop status could not be read" />
      {data && (
        <>
          <p>
            Next step: <strong>{kNextStep[data.nextAction] || data.nextAction}</strong>
            {data.progressLabel ? ` — ${data.progressLabel}` : ''}
          </p>
          <dl class="c-counts">
            <div>
              <dt>Active findings</dt>
              <dd>{data.activeFindingCount ?? 0}</dd>
            </div>
            <div>
              <dt>Approvals waiting</dt>
              <dd>{data.pendingApprovalCount ?? 0}</dd>
            </div>
            <div>
              <dt>Governed actions</dt>
              <dd>{data.governedActionCount ?? 0}</dd>
            </div>
            <div>
              <dt>Verified outcomes</dt>
              <dd>{data.verifiedOutcomeCount ?? 0}</dd>
            </div>
          </dl>
        </>
      )}
    </section>
  );
}

function RunsTable({ runs }) {
  if (runs.length === 0) {
    return <p class="c-muted">No Patrol runs yet.</p>;
  }
  return (
    <div class="c-table-wrap" role="region" aria-label="Recent Patrol runs" tabIndex={0}>
      <table class="c-table c-table-cards">
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Trigger</th>
            <th scope="col">Status</th>
            <th scope="col">Checked</th>
            <th scope="col">New</th>
            <th scope="col">Existing</th>
            <th scope="col">Resolved</th>
            <th scope="col">Model pass</th>
            <th scope="col">Tool calls</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.id} data-run-id={r.id}>
              <td data-label="Started">{formatTime(r.started_at)}</td>
              <td data-label="Trigger">{r.trigger_reason}</td>
              <td data-label="Status">
                <StatusBadge value={r.status} />
              </td>
              <td data-label="Checked">{r.resources_checked ?? '—'}</td>
              <td data-label="New">{r.new_findings ?? 0}</td>
              <td data-label="Existing">{r.existing_findings ?? 0}</td>
              <td data-label="Resolved">{r.resolved_findings ?? 0}</td>
              <td data-label="Model pass">
                {r.model_pass_ran ? 'ran' : r.model_pass_skipped_reason || 'skipped'}
              </td>
              <td data-label="Tool calls">{r.tool_call_count ?? 0}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default function PatrolPage({ session }) {
  const canRun = hasScope(session, 'ai:execute');
  const status = useLoad(
    () => (canRun ? call('GET', '/api/ai/patrol/status') : Promise.resolve(null)),
    [canRun],
  );
  const runs = useLoad(
    () => (canRun ? call('GET', '/api/ai/patrol/runs') : Promise.resolve(null)),
    [canRun],
  );
  const [running, setRunning] = useState(null);
  const [runError, setRunError] = useState(null);
  const timer = useRef(null);

  useEffect(() => () => clearTimeout(timer.current), []);

  // Polls the started run until it finishes, then reloads the list and the status.
  function watch(runId) {
    call('GET', `/api/ai/patrol/runs/${encodeURIComponent(runId)}`).then(
      (run) => {
        if (run.status === 'running') {
          timer.current = setTimeout(() => watch(runId), kPollMs);
          return;
        }
        setRunning(null);
        runs.reload();
        status.reload();
      },
      (e) => {
        setRunning(null);
        setRunError(e);
      },
    );
  }

  async function runNow() {
    setRunError(null);
    try {
      const started = await call('POST', '/api/ai/patrol/run', {});
      setRunning(started.run_id);
      watch(started.run_id);
    } catch (e) {
      setRunError(e);
    }
  }

  const s = status.data;
  // The route answers a bare array today although the manifest's output schema describes
  // {items, count}; both are read.
  const items = (runs.data && (Array.isArray(runs.data) ? runs.data : runs.data.items)) || [];
  return (
    <section class="c-page" aria-labelledby="patrol-title">
      <div class="c-head">
        <h1 id="patrol-title">Patrol</h1>
        {canRun && (
          <button
            type="button"
            class="c-primary"
            disabled={Boolean(running) || (s && s.running)}
            onClick={runNow}
          >
            {running ? 'Patrol is running…' : 'Run Patrol now'}
          </button>
        )}
      </div>
      <ErrorNote error={runError} context="Patrol did not start" />
      {running && <p role="status">Run {running} in progress…</p>}
      <LoopStatus />
      {canRun && (
        <section class="c-card" aria-labelledby="patrol-status-title">
          <h2 id="patrol-status-title">Status</h2>
          <ErrorNote error={status.error} context="Patrol's status could not be read" />
          {s && (
            <dl class="c-facts">
              <dt>State</dt>
              <dd>
                {s.runtime_state || '—'}
                {s.blocked_reason && ` (${s.blocked_reason}): ${s.blocked_message || ''}`}
              </dd>
              <dt>Last full patrol</dt>
              <dd>{s.last_patrol_at || 'none yet'}</dd>
              <dt>Schedule</dt>
              <dd>{s.enabled ? `every ${Math.round(s.interval_ms / 60000)} min` : 'off'}</dd>
              <dt>Running now</dt>
              <dd>{s.running ? 'yes' : 'no'}</dd>
              <dt>Model pass</dt>
              <dd>{s.model_configured ? 'available' : 'no model configured'}</dd>
              <dt>Autonomy</dt>
              <dd>{s.autonomy_level || '—'}</dd>
            </dl>
          )}
        </section>
      )}
      {canRun && (
        <section class="c-card" aria-labelledby="patrol-runs-title">
          <h2 id="patrol-runs-title">Recent runs</h2>
          <ErrorNote error={runs.error} context="The runs could not be read" />
          {runs.data && <RunsTable runs={items} />}
        </section>
      )}
      {hasScope(session, 'settings:write') && <PatrolAutonomy />}
    </section>
  );
}
