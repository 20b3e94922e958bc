// The console's only way to the server: JSON requests and event streams on the same origin,
// authenticated by the session cookie. Every request that is not a GET carries the session's
// CSRF token, which the server checks for cookie requests (docs/console.md).

let csrfToken = '';

// The error envelope of a refused request: {error, message} (docs/api.md, "Errors").
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message || code || `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

// Set after sign-in and after the session is loaded; '' after sign-out.
export function setCsrf(token) {
  csrfToken = token || '';
}

function headersFor(method, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) {
    headers['X-CSRF-Token'] = csrfToken;
  }
  return headers;
}

async function errorFrom(response) {
  const text = await response.text();
  try {
    const envelope = JSON.parse(text);
    if (envelope && typeof envelope.error === 'string') {
      return new ApiError(response.status, envelope.error, envelope.message, envelope.details);
    }
  } catch {
    // Not the JSON envelope (a proxy's page, say): the status alone describes it.
  }
  return new ApiError(response.status, 'http_error', `HTTP ${response.status}`);
}

// One request; resolves to the parsed JSON answer (null for an empty one) and rejects with an
// ApiError for a refused request, or a TypeError when the server cannot be reached.
export async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: headersFor(method, body),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    const error = await errorFrom(response);
    // The session ended (expired, revoked, signed out elsewhere): the shell returns to sign-in.
    if (error.status === 401 && path !== '/api/console/session') {
      window.dispatchEvent(new CustomEvent('pulse:unauthorized'));
    }
    throw error;
  }
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

// A query string from an object, leaving out undefined, null and '' values.
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') {
      search.append(name, String(value));
    }
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

// Splits server-sent events as they arrive. Feed it text; it calls onEvent({event, data, id})
// for every complete event (comments, such as heartbeats, are skipped). Bounded: an event
// larger than maxEventBytes is a protocol error, not a reason to grow without end.
export function sseParser(onEvent, maxEventBytes = 4 * 1024 * 1024) {
  let buffer = '';
  let event = '';
  let data = [];
  let id = '';
  let size = 0;
  const dispatch = () => {
    if (data.length > 0) {
      onEvent({ event: event || 'message', data: data.join('\n'), id });
    }
    event = '';
    data = [];
    size = 0;
  };
  const line = (text) => {
    if (text === '') {
      return dispatch();
    }
    if (text.startsWith(':')) {
      return undefined;
    }
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    if (field === 'data') {
      size += value.length;
      if (size > maxEventBytes) {
        throw new Error('event stream: an event is over the size limit');
      }
      data.push(value);
    } else if (field === 'event') {
      event = value;
    } else if (field === 'id' && !value.includes('\0')) {
      id = value;
    }
    return undefined;
  };
  // A chunk that ended in CR may have split a CRLF: the LF that opens the next chunk is then not
  // a line of its own.
  let afterCR = false;
  return (chunk) => {
    buffer += afterCR && chunk.startsWith('\n') ? chunk.slice(1) : chunk;
    afterCR = chunk.endsWith('\r');
    let start = 0;
    for (;;) {
      const match = /\r\n|\r|\n/.exec(buffer.slice(start));
      if (!match) {
        break;
      }
      line(buffer.slice(start, start + match.index));
      start += match.index + match[0].length;
    }
    buffer = buffer.slice(start);
    if (buffer.length > maxEventBytes) {
      throw new Error('event stream: a line is over the size limit');
    }
  };
}

// Opens an event stream (a chat run's POST or the agent event stream's GET). onEvent gets each
// {event, data, id}; onEnd(error?) once when the stream ends, with the ApiError or network
// error that ended it, or nothing when the server closed it. close() stops it (no onEnd then).
export function stream(method, path, body, onEvent, onEnd = () => {}) {
  const controller = new AbortController();
  let closed = false;
  const run = async () => {
    const headers = headersFor(method, body);
    headers.Accept = 'text/event-stream';
    const response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers,
      body: body === undefined || body === null ? undefined : JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) {
      throw await errorFrom(response);
    }
    const feed = sseParser(onEvent);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        break;
      }
      feed(value);
    }
  };
  run().then(
    () => {
      if (!closed) {
        onEnd();
      }
    },
    (error) => {
      if (!closed) {
        onEnd(error);
      }
    },
  );
  return {
    close() {
      closed = true;
      controller.abort();
    },
  };
}

// Whether the session's token holds scope s ('*' holds every scope).
export function hasScope(session, s) {
  const scopes = (session && session.scopes) || [];
  return scopes.includes('*') || scopes.includes(s);
}
