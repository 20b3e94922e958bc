// API tokens (/api/security/tokens, settings:write, humans only): the live tokens, minting one
// with a name, kind, scopes (none beyond the caller's own) and lifetime — its secret is shown
// once — and revoking one.
import { useState } from 'preact/hooks';
import { call, hasScope } from '../api.js';
import { ErrorNote, formatTime, useLoad } from './page-kit.jsx';

const kScopes = [
  'monitoring:read',
  'monitoring:write',
  'settings:read',
  'settings:write',
  'audit:read',
  'ai:chat',
  'ai:execute',
  'actions:plan',
  'actions:approve',
  'actions:execute',
  'agent:report',
  'agent:exec',
];

function NewSecret({ created, onDone }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="c-card c-secret" role="alert">
      <p>
        Token <strong>{created.record.name}</strong> created. Copy its secret now: it is shown only
        once.
      </p>
      <label for="token-secret">Secret</label>
      <input
        id="token-secret"
        type="text"
        readOnly
        value={created.token}
        onFocus={(e) => e.currentTarget.select()}
      />
      <div class="c-buttons">
        <button
          type="button"
          onClick={() =>
            navigator.clipboard &&
            navigator.clipboard.writeText(created.token).then(() => setCopied(true))
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </div>
  );
}

function CreateToken({ session, onCreated }) {
  const grantable = hasScope(session, '*')
    ? kScopes
    : kScopes.filter((s) => (session.scopes || []).includes(s));
  const [name, setName] = useState('');
  const [kind, setKind] = useState('human');
  const [expires, setExpires] = useState('');
  const [scopes, setScopes] = useState([]);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  const toggle = (s) =>
    setScopes(scopes.includes(s) ? scopes.filter((x) => x !== s) : [...scopes, s]);

  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = { name: name.trim(), scopes, kind };
      if (expires.trim()) body.expiresIn = expires.trim();
      const created = await call('POST', '/api/security/tokens', body);
      setName('');
      setScopes([]);
      setExpires('');
      onCreated(created);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} class="c-form" aria-labelledby="token-create-title">
      <h3 id="token-create-title">Create a token</h3>
      <label for="token-name">Name</label>
      <input
        id="token-name"
        type="text"
        maxLength={128}
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
      />
      <label for="token-kind">Kind (only human tokens may approve)</label>
      <select id="token-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
        <option value="human">human</option>
        <option value="agent">agent</option>
        <option value="service">service</option>
      </select>
      <label for="token-expires">Expires in (for example 12h or 30d; empty: never)</label>
      <input
        id="token-expires"
        type="text"
        maxLength={12}
        value={expires}
        onInput={(e) => setExpires(e.currentTarget.value)}
      />
      <fieldset class="c-scopes">
        <legend>Scopes (none beyond your own)</legend>
        {grantable.map((s) => (
          <label class="c-check">
            <input type="checkbox" checked={scopes.includes(s)} onChange={() => toggle(s)} />
            {s}
          </label>
        ))}
      </fieldset>
      <div class="c-buttons">
        <button
          type="submit"
          class="c-primary"
          disabled={busy || !name.trim() || scopes.length === 0}
        >
          Create token
        </button>
      </div>
      <ErrorNote error={error} context="The token was not created" />
    </form>
  );
}

function TokenRow({ t, onRevoke }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <tr data-token-id={t.id}>
      <td data-label="Token">
        <span class="c-block">{t.name}</span>
        <code class="c-muted c-wrap">{t.id}</code>
      </td>
      <td data-label="Kind">{t.kind}</td>
      <td class="c-wrap" data-label="Scopes">
        {(t.scopes || []).join(', ')}
      </td>
      <td data-label="Created">{formatTime(t.createdAt)}</td>
      <td data-label="Last used">{formatTime(t.lastUsedAt)}</td>
      <td data-label="Expires">{t.expiresAt ? formatTime(t.expiresAt) : 'never'}</td>
      <td data-label="Revoke">
        {confirming ? (
          <span class="c-buttons">
            <button type="button" class="c-danger" onClick={() => onRevoke(t)}>
              Revoke {t.name}
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </span>
        ) : (
          <button
            type="button"
            aria-label={`Revoke token ${t.name}`}
            onClick={() => setConfirming(true)}
          >
            Revoke
          </button>
        )}
      </td>
    </tr>
  );
}

export default function SettingsTokens({ session }) {
  const { data, error, reload } = useLoad(() => call('GET', '/api/security/tokens'), []);
  const [created, setCreated] = useState(null);
  const [revokeError, setRevokeError] = useState(null);

  async function revoke(t) {
    setRevokeError(null);
    try {
      await call('DELETE', `/api/security/tokens/${encodeURIComponent(t.id)}`);
      reload();
    } catch (err) {
      setRevokeError(err);
    }
  }

  const tokens = (data && data.tokens) || [];
  return (
    <section class="c-card" aria-labelledby="tokens-title">
      <h2 id="tokens-title">API tokens</h2>
      <ErrorNote error={error} context="The tokens could not be read" />
      <ErrorNote error={revokeError} context="The token was not revoked" />
      {created && <NewSecret created={created} onDone={() => setCreated(null)} />}
      {data && (
        <div class="c-table-wrap" role="region" aria-label="API tokens" tabIndex={0}>
          <table class="c-table c-table-cards">
            <thead>
              <tr>
                <th scope="col">Token</th>
                <th scope="col">Kind</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="c-sr-only">Revoke</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <TokenRow key={t.id} t={t} onRevoke={revoke} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreateToken
        session={session}
        onCreated={(c) => {
          setCreated(c);
          reload();
        }}
      />
    </section>
  );
}
