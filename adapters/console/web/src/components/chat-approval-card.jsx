// The approval card the Assistant's chat shows for a plan its run proposed: what would change,
// its risk, plan hash and preflight, and — only for a session holding actions:approve — the
// approve/reject buttons, which record the decision through the same route as the approvals
// queue and the CLI (POST /api/actions/{id}/decision, bound to the plan hash).
import { useState } from 'preact/hooks';
import { call, hasScope } from '../api.js';
import { ErrorNote, StatusBadge } from './page-kit.jsx';

function PreflightSummary({ preflight }) {
  if (!preflight || typeof preflight !== 'object') {
    return null;
  }
  const lines = [preflight.summary, preflight.intended_change].filter(Boolean);
  return (
    <>
      <dt>Preflight</dt>
      <dd>
        <StatusBadge value={preflight.status} />
        {lines.map((line) => (
          <span class="c-block">{line}</span>
        ))}
      </dd>
    </>
  );
}

// approval: the approval_needed event's data (action_id, plan_hash, risk, capability,
// resource_id, preflight, state, approval_reason). onDecided(outcome) runs after the decision
// is recorded; onContinue() resumes the session when someone else decided.
export default function ChatApprovalCard({ approval, session, decided, onDecided, onContinue }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const canApprove = hasScope(session, 'actions:approve');
  const canContinue = hasScope(session, 'ai:execute');
  const idBase = `approval-${approval.action_id}`;

  async function decide(outcome) {
    setBusy(true);
    setError(null);
    try {
      await call('POST', `/api/actions/${encodeURIComponent(approval.action_id)}/decision`, {
        outcome,
        reason: reason.trim() || `${outcome} from the console chat`,
        planHash: approval.plan_hash,
      });
      onDecided(outcome);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="c-card c-approval" aria-labelledby={`${idBase}-title`}>
      <h3 id={`${idBase}-title`}>
        Approval needed: {approval.capability || approval.tool_name || 'action'}{' '}
        {approval.resource_id ? `on ${approval.resource_id}` : ''}
      </h3>
      <dl class="c-facts">
        <dt>Risk</dt>
        <dd>
          <StatusBadge value={approval.risk} />
        </dd>
        <dt>State</dt>
        <dd>
          <StatusBadge value={decided ? decided : approval.state} />
        </dd>
        {approval.approval_reason && (
          <>
            <dt>Why it waits</dt>
            <dd>{approval.approval_reason}</dd>
          </>
        )}
        <dt>Plan hash</dt>
        <dd>
          <code class="c-wrap">{approval.plan_hash}</code>
        </dd>
        <PreflightSummary preflight={approval.preflight} />
      </dl>
      {!decided && canApprove && (
        <div class="c-decide">
          <label for={`${idBase}-reason`}>Reason (recorded in the audit trail)</label>
          <input
            id={`${idBase}-reason`}
            type="text"
            maxLength={512}
            value={reason}
            onInput={(e) => setReason(e.currentTarget.value)}
          />
          <div class="c-buttons">
            <button
              type="button"
              class="c-primary"
              disabled={busy}
              onClick={() => decide('approved')}
            >
              Approve
            </button>
            <button
              type="button"
              class="c-danger"
              disabled={busy}
              onClick={() => decide('rejected')}
            >
              Reject
            </button>
          </div>
        </div>
      )}
      {!decided && !canApprove && (
        <div class="c-decide">
          <p>
            This plan waits for someone who may approve actions (scope actions:approve), in the
            approvals queue.
          </p>
          {canContinue && (
            <button type="button" disabled={busy} onClick={onContinue}>
              Continue after the decision
            </button>
          )}
        </div>
      )}
      <ErrorNote error={error} context="The decision was not recorded" />
    </section>
  );
}
