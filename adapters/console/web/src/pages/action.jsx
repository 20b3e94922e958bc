// One governed action (GET /api/actions/{id}): its plan, its lifecycle timeline, its readiness,
// and its result on both axes: what the executor reported, and what the independent observer
// verified. An action still running is re-read until it settles.
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { Actor, DecisionForm, ExecuteButton, PlanFacts, errorText, when } from '../components/action_parts.jsx';

const kSettled = new Set(['completed', 'failed', 'rejected', 'expired']);

function Axis({ title, axis }) {
  if (!axis) {
    return null;
  }
  const good = ['succeeded', 'confirmed', 'verified'].includes(axis.status);
  return (
    <div class="panel">
      <h3>{title}</h3>
      <p>
        <span class={`badge ${good ? 'state-ok' : 'state-bad'}`}>{axis.status}</span>
        {axis.evidenceClass && <span class="muted"> · evidence: {axis.evidenceClass}</span>}
      </p>
      {axis.summary && <p>{axis.summary}</p>}
      {axis.reasonCode && (
        <p class="muted">
          reason <code>{axis.reasonCode}</code>
        </p>
      )}
      {axis.observerId && <p class="muted">observed by {axis.observerId} {when(axis.observedAt)}</p>}
    </div>
  );
}

function Timeline({ events }) {
  return (
    <ol class="timeline" aria-label="Lifecycle timeline">
      {events.map((event) => (
        <li key={event.sequence}>
          <strong>{event.state.replaceAll('_', ' ')}</strong>
          {event.kind === 'decision' && ` (decision: ${event.decision})`}
          {event.message && <div>{event.message}</div>}
          <div class="muted">
            {when(event.timestamp)}
            {event.actor && event.actor.id && ` · ${event.actor.kind} ${event.actor.id}`}
          </div>
        </li>
      ))}
    </ol>
  );
}

// The decisions recorded on the action, with who made them and why.
function Decisions({ approvals }) {
  if (!approvals || approvals.length === 0) {
    return <p class="muted">No decision yet.</p>;
  }
  return (
    <ul class="list" aria-label="Decisions">
      {approvals.map((approval, i) => (
        <li key={i}>
          <strong>{approval.outcome}</strong> by <Actor actor={approval.actor} /> {when(approval.timestamp)}
          {approval.reason && <div>Reason: {approval.reason}</div>}
        </li>
      ))}
    </ul>
  );
}

export default function ActionPage({ session, id }) {
  const [detail, setDetail] = useState(null);
  const [error, setError] = useState('');
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let live = true;
    let timer = 0;
    call('GET', `/api/actions/${encodeURIComponent(id)}`).then(
      (answer) => {
        if (!live) {
          return;
        }
        setDetail(answer);
        setError('');
        if (!kSettled.has(answer.audit.state) && answer.audit.state !== 'pending_approval') {
          timer = setTimeout(() => setGeneration((g) => g + 1), 1000);
        }
      },
      (failure) => live && setError(errorText(failure)),
    );
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, generation]);
  const reload = () => setGeneration(generation + 1);

  if (!id) {
    return <p role="alert">No action named. Open one from the approvals queue.</p>;
  }
  const audit = detail && detail.audit;
  const result = audit && audit.result;
  return (
    <section aria-labelledby="action-title">
      <p>
        <a href="#/approvals">← Approvals</a>
      </p>
      <h1 id="action-title">
        Action <code>{id}</code>
      </h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!audit && !error && <p role="status">Loading…</p>}
      {audit && (
        <>
          <p role="status">
            State: <strong data-testid="action-state">{audit.state.replaceAll('_', ' ')}</strong>
            {detail.readiness && detail.readiness.message && <span class="muted"> · {detail.readiness.message}</span>}
          </p>
          <div class="grid2">
            <div class="panel">
              <h2>Plan</h2>
              <PlanFacts audit={audit} />
              <DecisionForm session={session} audit={audit} onDecided={reload} />
              <ExecuteButton session={session} audit={audit} onExecuted={reload} />
            </div>
            <div class="panel">
              <h2>Timeline</h2>
              <Timeline events={detail.events || []} />
              <h3>Decisions</h3>
              <Decisions approvals={audit.approvals} />
            </div>
          </div>
          {result && (
            <section aria-labelledby="result-title">
              <h2 id="result-title">Result</h2>
              <div class="grid2">
                <Axis title="Execution (what the executor reported)" axis={result.execution} />
                <Axis title="Verification (what the observer saw)" axis={result.verification} />
              </div>
              {result.errorMessage && (
                <p role="alert" class="error">
                  {result.errorMessage}
                </p>
              )}
            </section>
          )}
        </>
      )}
    </section>
  );
}
