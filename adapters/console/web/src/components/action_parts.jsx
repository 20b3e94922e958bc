// Pieces of a governed action shared by the approvals queue, the action page (and any page that
// shows a plan, such as the chat's approval cards): the plan with its hash and preflight, and
// the decision form that approves or rejects it through POST /api/actions/{id}/decision, the
// route the CLI uses. The form is only rendered for a session holding actions:approve.
import { useState } from 'preact/hooks';
import { ApiError, call, hasScope } from '../api.js';

export function when(text) {
  if (!text) {
    return '';
  }
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toLocaleString();
}

export function errorText(failure) {
  if (failure instanceof ApiError) {
    return `${failure.message} (${failure.code})`;
  }
  return String((failure && failure.message) || failure);
}

function List({ items }) {
  if (!items || items.length === 0) {
    return <span class="muted">none</span>;
  }
  return (
    <ul>
      {items.map((item, i) => (
        <li key={i}>{item}</li>
      ))}
    </ul>
  );
}

// Who acted: the token's name, its kind and its public id (tok_...), as the audit records it.
export function Actor({ actor, fallback = 'unknown' }) {
  if (!actor || !actor.id) {
    return <span>{fallback}</span>;
  }
  return (
    <span>
      {actor.name || actor.id} <span class="muted">({actor.kind}, <code>{actor.id}</code>)</span>
    </span>
  );
}

// What the plan says: the change, its risk and approval requirement, the plan hash the decision
// binds to, and the preflight (current state, intended change, safety checks, verification).
export function PlanFacts({ audit }) {
  const { request = {}, plan = {} } = audit;
  const preflight = plan.preflight || {};
  const requirement = plan.approvalRequirement || {};
  const params = request.params && Object.keys(request.params).length > 0 ? JSON.stringify(request.params) : '';
  return (
    <dl class="facts">
      <dt>Change</dt>
      <dd>
        <code>{request.capabilityName}</code> on <code>{request.resourceId}</code>
        {params && (
          <>
            {' '}
            with <code>{params}</code>
          </>
        )}
      </dd>
      <dt>Requested by</dt>
      <dd>
        <Actor actor={request.actor} fallback={request.requestedBy} />
      </dd>
      <dt>Reason</dt>
      <dd>{request.reason}</dd>
      <dt>Risk</dt>
      <dd>
        <span class={`badge risk-${plan.risk}`}>{plan.risk}</span>
        {plan.rollbackAvailable ? ' · rollback available' : ' · no rollback'}
      </dd>
      <dt>Approval</dt>
      <dd>
        {plan.requiresApproval ? `required: ${requirement.floor || 'approver'}` : 'not required'}
        {requirement.quorum > 1 && `, ${requirement.quorum} approvers`}
        {requirement.disallowRequester && ', not by the requester'}
      </dd>
      <dt>Plan hash</dt>
      <dd>
        <code>{plan.planHash}</code>
      </dd>
      <dt>Blast radius</dt>
      <dd>{(plan.predictedBlastRadius || []).join(', ') || 'this resource only'}</dd>
      <dt>Expires</dt>
      <dd>{when(plan.expiresAt)}</dd>
      <dt>Preflight</dt>
      <dd>
        <div>
          Target <code>{preflight.target}</code>: {preflight.currentState} → {preflight.intendedChange}
        </div>
        {preflight.dryRunSummary && <div>Dry run: {preflight.dryRunSummary}</div>}
      </dd>
      <dt>Safety checks</dt>
      <dd>
        <List items={preflight.safetyChecks} />
      </dd>
      <dt>Verification</dt>
      <dd>
        <List items={preflight.verificationSteps} />
      </dd>
    </dl>
  );
}

// Approve or reject one pending action with a reason, bound to the plan hash shown. onDecided
// gets the decision route's answer.
export function DecisionForm({ session, audit, onDecided }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  if (!hasScope(session, 'actions:approve') || audit.state !== 'pending_approval') {
    return null;
  }
  const id = audit.id;
  const decide = async (outcome) => {
    setBusy(true);
    setError('');
    try {
      const body = { outcome, planHash: audit.plan.planHash };
      if (reason.trim()) {
        body.reason = reason.trim();
      }
      const answer = await call('POST', `/api/actions/${encodeURIComponent(id)}/decision`, body);
      setReason('');
      onDecided(answer);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="decision" onSubmit={(event) => event.preventDefault()} aria-label={`Decide ${id}`}>
      <div class="field">
        <label for={`reason-${id}`}>Reason for the decision</label>
        <textarea id={`reason-${id}`} maxLength={2000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      </div>
      <div class="row">
        <button type="button" disabled={busy} onClick={() => decide('approved')}>
          Approve
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => decide('rejected')}>
          Reject
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </form>
  );
}

// Runs an approved (or approval-free) action once, bound to its plan hash; only for a session
// holding actions:execute.
export function ExecuteButton({ session, audit, onExecuted }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  if (!hasScope(session, 'actions:execute') || audit.state !== 'approved') {
    return null;
  }
  const execute = async () => {
    setBusy(true);
    setError('');
    try {
      const answer = await call('POST', `/api/actions/${encodeURIComponent(audit.id)}/execute`, {
        planHash: audit.plan.planHash,
      });
      onExecuted(answer);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      <button type="button" disabled={busy} onClick={execute}>
        {busy ? 'Executing…' : 'Execute'}
      </button>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </div>
  );
}
