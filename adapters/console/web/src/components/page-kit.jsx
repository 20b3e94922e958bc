// Small pieces the chat, sessions, Patrol, fleet and settings pages share: loading a route into
// state, showing an API error with its stable code, and formatting times and JSON for people.
import { useCallback, useEffect, useState } from 'preact/hooks';

// Loads `load()` on mount and whenever `deps` change; `reload()` loads again. The error is the
// ApiError (or network error) of the last attempt, cleared by the next success.
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const reload = useCallback(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

// An API error as the operator should read it: the message, and the stable code to search for.
export function ErrorNote({ error, context }) {
  if (!error) {
    return null;
  }
  const code = error.code ? ` (${error.code})` : '';
  return (
    <p class="c-error" role="alert">
      {context ? `${context}: ` : ''}
      {error.message || String(error)}
      {code}
    </p>
  );
}

export function formatTime(iso) {
  if (!iso) {
    return '—';
  }
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? String(iso) : at.toLocaleString();
}

// Pretty-prints a JSON text (tool arguments arrive as one) and bounds it, so a huge tool output
// cannot swamp the page.
export function prettyJson(text, limit = 2000) {
  let out = text;
  if (typeof text === 'string') {
    try {
      out = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      out = text;
    }
  } else {
    out = JSON.stringify(text, null, 2);
  }
  if (out === undefined || out === null) {
    return '';
  }
  return out.length > limit
    ? `${out.slice(0, limit)}\n… (${out.length - limit} more characters)`
    : out;
}

// A status word with a class per value, so the colour comes from the style sheet (the CSP
// forbids inline styles) and the word itself carries the meaning for screen readers.
export function StatusBadge({ value }) {
  const word = value || 'unknown';
  return (
    <span class={`c-badge c-badge-${word.replace(/[^a-z0-9_-]/gi, '')}`}>
      {word.replace(/_/g, ' ')}
    </span>
  );
}

// The event streams' data arrives as a JSON text; a frame that is not JSON is skipped.
export function eventData(frame) {
  if (!frame) {
    return null;
  }
  if (typeof frame.data !== 'string') {
    return frame.data ?? null;
  }
  try {
    return JSON.parse(frame.data);
  } catch {
    return null;
  }
}
