// The AI settings in force (GET/PUT /api/settings/ai): provider, base URL, model, Patrol model,
// the key (write-only: the page only ever says whether one is set), the spend caps, the last
// tool-call preflight of each model and the provider's model list. Only changed fields are sent,
// so saving the model never touches the key.
import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorNote, formatTime, StatusBadge, useLoad } from './page-kit.jsx';

const kProviders = ['anthropic', 'openai', 'openai-compatible', 'ollama', 'gemini'];
const kText = ['provider', 'base_url', 'model', 'patrol_model'];
const kBudgets = ['monthly_budget_usd', 'session_budget_usd'];

function modelIds(models) {
  if (!Array.isArray(models)) {
    return [];
  }
  return models.map((m) => (typeof m === 'string' ? m : m && (m.id || m.name))).filter(Boolean);
}

// The preflight result per model, whichever way it is keyed: one object, an array, or an object
// keyed by model.
function preflightRows(preflight) {
  if (!preflight || typeof preflight !== 'object') {
    return [];
  }
  if (Array.isArray(preflight)) {
    return preflight;
  }
  if ('model' in preflight || 'outcome' in preflight || 'status' in preflight) {
    return [preflight];
  }
  return Object.entries(preflight).map(([model, value]) => ({ model, ...(value || {}) }));
}

function Preflight({ preflight }) {
  const rows = preflightRows(preflight);
  if (rows.length === 0) {
    return <p class="c-muted">No tool-call preflight has run yet.</p>;
  }
  return (
    <ul class="c-list" aria-label="Tool-call preflight">
      {rows.map((r) => (
        <li class="c-preflight">
          <code>{r.model || r.role || 'model'}</code>{' '}
          <StatusBadge value={r.outcome || r.status || (r.ok ? 'ok' : 'failed')} />
          {(r.reason || r.message || r.detail) && (
            <span class="c-block">{r.reason || r.message || r.detail}</span>
          )}
          {(r.at || r.checked_at || r.ran_at) && (
            <span class="c-muted"> {formatTime(r.at || r.checked_at || r.ran_at)}</span>
          )}
        </li>
      ))}
    </ul>
  );
}

function formFrom(data) {
  const form = {};
  for (const k of kText) form[k] = data[k] ?? '';
  for (const k of kBudgets) form[k] = data[k] == null ? '' : String(data[k]);
  return { ...form, api_key: '', remove_key: false };
}

// The PUT body: the fields that differ from what the server answered. A budget field left empty
// is left unchanged.
function changes(form, data) {
  const body = {};
  for (const k of kText) {
    if (form[k] !== (data[k] ?? '')) body[k] = form[k].trim();
  }
  for (const k of kBudgets) {
    if (form[k] !== '' && Number(form[k]) !== data[k]) body[k] = Number(form[k]);
  }
  if (form.remove_key) body.api_key = null;
  else if (form.api_key) body.api_key = form.api_key;
  return body;
}

export default function SettingsAi() {
  const { data, error, reload } = useLoad(() => call('GET', '/api/settings/ai'), []);
  const [form, setForm] = useState(null);
  const [busy, setBusy] = useState(false);
  const [saveError, setSaveError] = useState(null);
  const [saved, setSaved] = useState('');

  useEffect(() => data && setForm(formFrom(data)), [data]);
  const set = (k) => (e) =>
    setForm({
      ...form,
      [k]: e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value,
    });

  async function save(e) {
    e.preventDefault();
    const body = changes(form, data);
    if (Object.keys(body).length === 0) {
      setSaved('Nothing changed.');
      return;
    }
    setBusy(true);
    setSaveError(null);
    setSaved('');
    try {
      await call('PUT', '/api/settings/ai', body);
      setSaved('Saved: the next run uses these settings.');
      reload();
    } catch (err) {
      setSaveError(err);
    } finally {
      setBusy(false);
    }
  }

  const unavailable = error && (error.status === 503 || error.code === 'service_unavailable');
  const models = data ? modelIds(data.models) : [];
  return (
    <section class="c-card" aria-labelledby="ai-title">
      <h2 id="ai-title">AI provider and model</h2>
      {unavailable ? (
        <p class="c-muted" role="status">
          Runtime AI settings are not available on this server ({error.message}). Provider and model
          are set by the server's start-up flags.
        </p>
      ) : (
        <ErrorNote error={error} context="The AI settings could not be read" />
      )}
      {data && form && (
        <form onSubmit={save} class="c-form">
          <label for="ai-provider">Provider</label>
          <input
            id="ai-provider"
            list="ai-provider-list"
            value={form.provider}
            onInput={set('provider')}
            maxLength={64}
          />
          <datalist id="ai-provider-list">
            {kProviders.map((p) => (
              <option value={p} />
            ))}
          </datalist>
          <label for="ai-base-url">Base URL</label>
          <input
            id="ai-base-url"
            type="url"
            value={form.base_url}
            onInput={set('base_url')}
            maxLength={2048}
          />
          <label for="ai-model">Model</label>
          <input
            id="ai-model"
            list="ai-model-list"
            value={form.model}
            onInput={set('model')}
            maxLength={256}
          />
          <label for="ai-patrol-model">
            Patrol model (empty: the chat model
            {data.effective_patrol_model ? `, now ${data.effective_patrol_model}` : ''})
          </label>
          <input
            id="ai-patrol-model"
            list="ai-model-list"
            value={form.patrol_model}
            onInput={set('patrol_model')}
            maxLength={256}
          />
          <datalist id="ai-model-list">
            {models.map((m) => (
              <option value={m} />
            ))}
          </datalist>
          <label for="ai-key">
            API key{' '}
            <span class="c-muted">
              (currently {data.api_key_set ? 'set' : 'not set'}; never shown)
            </span>
          </label>
          <input
            id="ai-key"
            type="password"
            autocomplete="off"
            value={form.api_key}
            onInput={set('api_key')}
            maxLength={4096}
            disabled={form.remove_key}
          />
          {data.api_key_set && (
            <label class="c-check">
              <input type="checkbox" checked={form.remove_key} onChange={set('remove_key')} />
              Remove the stored key
            </label>
          )}
          <label for="ai-monthly">Monthly spend cap in USD (0: none)</label>
          <input
            id="ai-monthly"
            type="number"
            min="0"
            step="0.01"
            value={form.monthly_budget_usd}
            onInput={set('monthly_budget_usd')}
          />
          {data.month_spend && (
            <p class={data.month_spend.cap_reached ? 'error' : 'hint'}>
              Metered spend in {data.month_spend.month} (UTC):{' '}
              {data.month_spend.cost_usd.toFixed(4)} USD
              {data.month_spend.cap_reached &&
                ': the monthly cap is reached, so the Assistant and Patrol make no more model calls this month.'}
            </p>
          )}
          <label for="ai-session">Per-session spend cap in USD (0: none)</label>
          <input
            id="ai-session"
            type="number"
            min="0"
            step="0.01"
            value={form.session_budget_usd}
            onInput={set('session_budget_usd')}
          />
          <div class="c-buttons">
            <button type="submit" class="c-primary" disabled={busy}>
              Save AI settings
            </button>
          </div>
          {saved && <p role="status">{saved}</p>}
          <ErrorNote error={saveError} context="The AI settings were not changed" />
        </form>
      )}
      {data && (
        <>
          {data.updated_at && (
            <p class="c-muted">
              Last changed {formatTime(data.updated_at)}
              {data.updated_by ? ` by ${data.updated_by}` : ''}.
            </p>
          )}
          <h3>Tool-call preflight</h3>
          <Preflight preflight={data.preflight} />
          {models.length > 0 && <p class="c-muted">The provider offers {models.length} models.</p>}
          {data.models_error && (
            <p class="c-muted">The provider's model list could not be read: {data.models_error}</p>
          )}
        </>
      )}
    </section>
  );
}
