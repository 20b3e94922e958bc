// The console's shell: sign-in with a pasted token, the navigation (only the pages the
// session's scopes open), and a hash router that shows one page at a time. The server enforces
// every scope on every request; hiding a page only spares the operator a refusal.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, hasScope, setCsrf } from './api.js';
import './style.css';

// Each page: its hash, its title, the scope its main route needs, and its module under
// src/pages/ (loaded by name, so a page is one file and the shell needs no edit to bundle it).
const kPages = [
  { route: 'findings', title: 'Findings', scope: 'ai:execute' },
  { route: 'approvals', title: 'Approvals', scope: 'actions:approve' },
  { route: 'chat', title: 'Chat', scope: 'ai:chat' },
  { route: 'sessions', title: 'Sessions', scope: 'ai:chat' },
  { route: 'patrol', title: 'Patrol', scope: 'ai:execute' },
  { route: 'fleet', title: 'Fleet', scope: 'monitoring:read' },
  { route: 'settings', title: 'Settings', scope: 'settings:write' },
];
// Pages reached from another page, not from the navigation.
const kDetailPages = [{ route: 'actions', module: 'action', title: 'Action', scope: 'actions:approve' }];

// "#/actions/act_1" -> {route: 'actions', id: 'act_1'}; ids are percent-encoded in the hash.
function parseHash(hash) {
  const parts = hash.replace(/^#\/?/, '').split('/');
  let id = '';
  try {
    id = parts.length > 1 ? decodeURIComponent(parts.slice(1).join('/')) : '';
  } catch {
    id = '';
  }
  return { route: parts[0] || '', id };
}

function useHash() {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const onChange = () => setHash(window.location.hash);
    window.addEventListener('hashchange', onChange);
    // A hash change between the first render and this subscription fired no event we heard:
    // read the hash again, or the page shown and the address disagree until the next change.
    onChange();
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return parseHash(hash);
}

// The page module by name. esbuild's bundled glob import throws synchronously for a name it has
// no file for; inside then() that becomes a rejection, so only that page says it is missing.
function loadPage(module) {
  return Promise.resolve().then(() => import(`./pages/${module}.jsx`));
}

function Page({ page, session, id }) {
  const [loaded, setLoaded] = useState({ module: '', component: null, error: '' });
  const module = page.module || page.route;
  useEffect(() => {
    let live = true;
    loadPage(module).then(
      (exports) => live && setLoaded({ module, component: exports.default, error: '' }),
      () => live && setLoaded({ module, component: null, error: 'This page is not part of this build.' }),
    );
    return () => {
      live = false;
    };
  }, [module]);
  if (loaded.module !== module) {
    return <p role="status">Loading…</p>;
  }
  if (loaded.error) {
    return <p role="alert">{loaded.error}</p>;
  }
  const Component = loaded.component;
  return <Component session={session} id={id} />;
}

function SignIn({ onSignedIn, notice }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      const session = await call('POST', '/api/console/session', { token: token.trim() });
      setToken('');
      onSignedIn(session);
    } catch (failure) {
      setError(signInMessage(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <h1>Pulse console</h1>
      <form onSubmit={submit} aria-describedby="signin-help">
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={token}
          onInput={(event) => setToken(event.currentTarget.value)}
        />
        <p id="signin-help" class="hint">
          Paste a human token (<code>pulse-server token create</code>). It is sent once; the
          session lives in a cookie the page cannot read.
        </p>
        <button type="submit" disabled={busy || token.trim() === ''}>
          Sign in
        </button>
        {notice && <p role="status">{notice}</p>}
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function signInMessage(failure) {
  if (!(failure instanceof ApiError)) {
    return 'The server cannot be reached.';
  }
  switch (failure.code) {
    case 'unauthorized':
      return 'The server does not accept this token (unknown, revoked or expired).';
    case 'human_token_required':
      return 'Only a human token can sign in to the console; agent and service tokens cannot.';
    default:
      return `Sign-in failed: ${failure.message} (${failure.code}).`;
  }
}

function Shell({ session, onSignedOut }) {
  const { route, id } = useHash();
  const mainRef = useRef(null);
  const pages = kPages.filter((page) => hasScope(session, page.scope));
  const page =
    [...kPages, ...kDetailPages].find((candidate) => candidate.route === route) || pages[0];
  const allowed = page && hasScope(session, page.scope);

  useEffect(() => {
    if (page) {
      document.title = `${page.title} · Pulse console`;
    }
    // Moving focus to the page on navigation tells a screen reader that the content changed.
    if (route && mainRef.current) {
      mainRef.current.focus();
    }
  }, [route, id]);

  const signOut = async () => {
    try {
      await call('DELETE', '/api/console/session');
    } finally {
      setCsrf('');
      onSignedOut();
    }
  };

  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(event) => (event.preventDefault(), mainRef.current?.focus())}>
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">Pulse</span>
        <nav aria-label="Console pages">
          <ul>
            {pages.map((entry) => (
              <li key={entry.route}>
                <a
                  href={`#/${entry.route}`}
                  aria-current={page && page.route === entry.route ? 'page' : undefined}
                >
                  {entry.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span title={`token ${session.token.id}`}>
            {session.token.name} <span class="muted">({session.token.kind})</span>
          </span>
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        {!page && <p role="alert">This token's scopes open no page of the console.</p>}
        {page && !allowed && (
          <p role="alert">
            This page needs the scope <code>{page.scope}</code>, which this token does not hold.
          </p>
        )}
        {page && allowed && <Page key={`${page.route}/${id}`} page={page} session={session} id={id} />}
      </main>
    </div>
  );
}

function App() {
  const [state, setState] = useState({ phase: 'loading', session: null, notice: '' });
  const adopt = (session) => {
    setCsrf(session.csrf_token);
    setState({ phase: 'in', session, notice: '' });
  };
  useEffect(() => {
    const expired = () => {
      setCsrf('');
      setState({ phase: 'out', session: null, notice: 'The session ended; sign in again.' });
    };
    window.addEventListener('pulse:unauthorized', expired);
    return () => window.removeEventListener('pulse:unauthorized', expired);
  }, []);
  useEffect(() => {
    call('GET', '/api/console/session').then(adopt, (failure) => {
      const notice =
        failure instanceof ApiError && failure.status === 401
          ? ''
          : `The session could not be loaded: ${failure.message}`;
      setState({ phase: 'out', session: null, notice });
    });
  }, []);
  if (state.phase === 'loading') {
    return (
      <main id="main">
        <p role="status">Loading…</p>
      </main>
    );
  }
  if (state.phase === 'out') {
    return <SignIn onSignedIn={adopt} notice={state.notice} />;
  }
  return (
    <Shell
      session={state.session}
      onSignedOut={() => setState({ phase: 'out', session: null, notice: 'Signed out.' })}
    />
  );
}

render(<App />, document.getElementById('app'));
