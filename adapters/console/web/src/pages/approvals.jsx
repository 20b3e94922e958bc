// Approvals: the governed actions waiting for a decision or a run (GET /api/actions, the pending
// view), each with its plan, plan hash, preflight, risk and requester; approve or reject with a
// reason, then execute an approved one. Decisions go through the route the CLI uses.
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { DecisionForm, ExecuteButton, PlanFacts, errorText, when } from '../components/action_parts.jsx';

function waiting(count) {
  return count === 1 ? '1 action waiting.' : `${count} actions waiting.`;
}

function ActionCard({ session, audit, onChanged }) {
  const request = audit.request || {};
  const titleId = `a-${audit.id}`;
  return (
    <li class="card" aria-labelledby={titleId}>
      <div class="row">
        <span class="badge">{audit.state.replaceAll('_', ' ')}</span>
        <span class="muted">planned {when(audit.createdAt)}</span>
      </div>
      <h3 id={titleId}>
        {request.capabilityName} {request.resourceId}
      </h3>
      <PlanFacts audit={audit} />
      <DecisionForm
        session={session}
        audit={audit}
        onDecided={(answer) => onChanged(`Action ${audit.id} is ${answer.state.replaceAll('_', ' ')}.`)}
      />
      <ExecuteButton
        session={session}
        audit={audit}
        onExecuted={() => {
          window.location.hash = `#/actions/${encodeURIComponent(audit.id)}`;
        }}
      />
      <p>
        <a href={`#/actions/${encodeURIComponent(audit.id)}`}>Timeline of {audit.id}</a>
      </p>
    </li>
  );
}

export default function ApprovalsPage({ session }) {
  const [actions, setActions] = useState(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let live = true;
    call('GET', '/api/actions?view=pending&limit=500').then(
      (answer) => live && (setActions(answer.actions || []), setError('')),
      (failure) => live && setError(errorText(failure)),
    );
    return () => {
      live = false;
    };
  }, [generation]);
  const changed = (message) => {
    setNotice(message);
    setGeneration(generation + 1);
  };
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      <div class="row">
        <p role="status" class="muted">
          {actions === null && !error ? 'Loading the queue…' : waiting((actions || []).length)}
          {notice && ` ${notice}`}
        </p>
        <button type="button" class="secondary" onClick={() => changed('')}>
          Refresh
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {actions !== null && actions.length === 0 && <p>Nothing waits for a decision.</p>}
      <ul class="list" aria-label="Pending actions">
        {(actions || []).map((audit) => (
          <ActionCard session={session} audit={audit} onChanged={changed} key={audit.id} />
        ))}
      </ul>
    </section>
  );
}
