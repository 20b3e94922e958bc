// Patrol's autonomy level (GET/PUT /api/ai/patrol/autonomy, settings:write) with the Autopilot
// acknowledgement flow: `full` acts only while a human's acknowledgement is recorded, so choosing
// it asks the operator to acknowledge first (POST .../acknowledgements) and saves the level with
// that acknowledgement id; a recorded acknowledgement can be revoked.
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorNote, formatTime, useLoad } from './page-kit.jsx';

const kLevels = [
  ['monitor', 'Watch only: findings, no investigation, no fixes'],
  ['approval', 'Ask first: investigates, every fix waits for a human'],
  ['assisted', 'Safe auto-fix: low-risk fixes run on their own'],
  ['full', 'Autopilot: low-risk and elevated fixes run on their own, while acknowledged'],
];

export default function PatrolAutonomy() {
  const { data, error, reload } = useLoad(() => call('GET', '/api/ai/patrol/autonomy'), []);
  const [level, setLevel] = useState('');
  const [ackId, setAckId] = useState('');
  const [understood, setUnderstood] = useState(false);
  const [busy, setBusy] = useState(false);
  const [saveError, setSaveError] = useState(null);
  const [saved, setSaved] = useState('');

  useEffect(() => {
    if (data) {
      setLevel(data.requested_autonomy_level || data.autonomy_level);
    }
  }, [data]);

  const ack = data && data.autopilot_acknowledgement;
  const needsAck = level === 'full' && !ack;

  async function save(e) {
    e.preventDefault();
    setBusy(true);
    setSaveError(null);
    setSaved('');
    try {
      const body = { autonomy_level: level };
      if (needsAck) {
        await call('POST', '/api/ai/patrol/autonomy/acknowledgements', {
          acknowledgement_id: ackId.trim(),
        });
        body.acknowledgement_id = ackId.trim();
      }
      const next = await call('PUT', '/api/ai/patrol/autonomy', body);
      setSaved(`Saved: effective level ${next.effective_autonomy_level}.`);
      reload();
    } catch (err) {
      setSaveError(err);
    } finally {
      setBusy(false);
    }
  }

  async function revoke() {
    setBusy(true);
    setSaveError(null);
    try {
      await call(
        'DELETE',
        `/api/ai/patrol/autonomy/acknowledgements/${encodeURIComponent(ack.acknowledgement_id)}`,
        {
          reason: 'revoked from the console',
        },
      );
      setSaved('Autopilot acknowledgement revoked: full now acts as approval.');
      reload();
    } catch (err) {
      setSaveError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="c-card" aria-labelledby="autonomy-title">
      <h2 id="autonomy-title">Autonomy</h2>
      <ErrorNote error={error} context="The autonomy level could not be read" />
      {data && (
        <form onSubmit={save}>
          <p>
            Effective level: <strong>{data.effective_autonomy_level}</strong>
            {data.requested_autonomy_level &&
            data.requested_autonomy_level !== data.effective_autonomy_level
              ? ` (requested ${data.requested_autonomy_level})`
              : ''}
          </p>
          <fieldset>
            <legend>How far Patrol may act on its own</legend>
            {kLevels.map(([value, label]) => (
              <label class="c-radio">
                <input
                  type="radio"
                  name="autonomy"
                  value={value}
                  checked={level === value}
                  onChange={() => setLevel(value)}
                />
                <span>
                  <strong>{value}</strong> — {label}
                </span>
              </label>
            ))}
          </fieldset>
          {needsAck && (
            <div class="c-ack">
              <p>
                Autopilot lets Patrol execute low-risk and elevated fixes without asking. It needs
                your acknowledgement, recorded under your name; it can be revoked at any time.
              </p>
              <label for="autonomy-ack-id">
                Acknowledgement reference (for example a change ticket)
              </label>
              <input
                id="autonomy-ack-id"
                type="text"
                maxLength={128}
                value={ackId}
                onInput={(e) => setAckId(e.currentTarget.value)}
              />
              <label class="c-check">
                <input
                  type="checkbox"
                  checked={understood}
                  onChange={(e) => setUnderstood(e.currentTarget.checked)}
                />
                I understand that Patrol will act without asking
              </label>
            </div>
          )}
          {ack && (
            <p>
              Autopilot acknowledged as <code>{ack.acknowledgement_id}</code> by {ack.actor_id} on{' '}
              {formatTime(ack.acknowledged_at)}.{' '}
              <button type="button" class="c-danger" disabled={busy} onClick={revoke}>
                Revoke acknowledgement
              </button>
            </p>
          )}
          <button
            type="submit"
            class="c-primary"
            disabled={busy || !level || (needsAck && (!understood || !ackId.trim()))}
          >
            Save autonomy
          </button>
          {saved && <p role="status">{saved}</p>}
          <ErrorNote error={saveError} context="The autonomy level was not changed" />
        </form>
      )}
    </section>
  );
}
