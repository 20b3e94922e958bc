// The Assistant's sessions: the caller's own chats (or Patrol's system sessions), newest first,
// with a title (the session's first message), kind, time and status; open one in the chat or
// delete it.
import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { ErrorNote, formatTime, StatusBadge, useLoad } from '../components/page-kit.jsx';
import '../components/pages.css';

// The list route answers no title, so the titles come from each listed session's first user
// message; only the newest kTitled are read, to bound the requests one visit makes.
const kTitled = 25;
const kTitleLength = 80;

async function loadSessions(kind) {
  const query = kind === 'patrol' ? '?kind=patrol&limit=100' : '?limit=100';
  const sessions = await call('GET', `/api/ai/sessions${query}`);
  const titled = await Promise.all(
    sessions.slice(0, kTitled).map(async (s) => {
      try {
        const detail = await call('GET', `/api/ai/sessions/${encodeURIComponent(s.id)}`);
        const first = (detail.messages || []).find((m) => m.role === 'user' && m.content);
        return { ...s, title: first ? first.content : '' };
      } catch {
        return s;
      }
    }),
  );
  return [...titled, ...sessions.slice(kTitled)];
}

function title(s) {
  if (!s.title) {
    return s.kind === 'patrol' ? 'Patrol session' : 'Untitled session';
  }
  return s.title.length > kTitleLength ? `${s.title.slice(0, kTitleLength)}…` : s.title;
}

function SessionRow({ s, onDelete }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <li class="c-card c-session">
      <div class="c-session-main">
        <a href={`#/chat/${encodeURIComponent(s.id)}`} class="c-session-title">
          {title(s)}
        </a>
        <span class="c-muted">
          {s.kind} · {formatTime(s.updated_at)} · {s.message_count} messages
        </span>
      </div>
      <StatusBadge value={s.status} />
      {confirming ? (
        <span class="c-buttons">
          <button type="button" class="c-danger" onClick={() => onDelete(s)}>
            Delete “{title(s)}”
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </span>
      ) : (
        <button
          type="button"
          aria-label={`Delete session ${title(s)}`}
          onClick={() => setConfirming(true)}
        >
          Delete
        </button>
      )}
    </li>
  );
}

export default function SessionsPage() {
  const [kind, setKind] = useState('chat');
  const { data, error, loading, reload } = useLoad(() => loadSessions(kind), [kind]);
  const [actionError, setActionError] = useState(null);

  async function remove(s) {
    setActionError(null);
    try {
      await call('DELETE', `/api/ai/sessions/${encodeURIComponent(s.id)}`);
      reload();
    } catch (e) {
      setActionError(e);
    }
  }

  return (
    <section class="c-page" aria-labelledby="sessions-title">
      <div class="c-head">
        <h1 id="sessions-title">Sessions</h1>
        <a class="c-button-link" href="#/chat">
          New chat
        </a>
      </div>
      <fieldset class="c-segmented">
        <legend>Show</legend>
        {[
          ['chat', 'My chats'],
          ['patrol', 'Patrol sessions'],
        ].map(([value, label]) => (
          <label>
            <input
              type="radio"
              name="session-kind"
              value={value}
              checked={kind === value}
              onChange={() => setKind(value)}
            />
            {label}
          </label>
        ))}
      </fieldset>
      <ErrorNote error={error} context="The sessions could not be read" />
      <ErrorNote error={actionError} context="The session was not deleted" />
      {loading && !data && <p role="status">Loading sessions…</p>}
      {data && data.length === 0 && <p class="c-muted">No sessions yet.</p>}
      {data && data.length > 0 && (
        <ul class="c-list" aria-label="Sessions">
          {data.map((s) => (
            <SessionRow key={s.id} s={s} onDelete={remove} />
          ))}
        </ul>
      )}
    </section>
  );
}
