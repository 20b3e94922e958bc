// Settings: the AI provider and models at runtime, and the API tokens. Both need settings:write
// (and a human token); a session without it is told so instead of shown forms it cannot use.
import { hasScope } from '../api.js';
import SettingsAi from '../components/settings-ai.jsx';
import SettingsTokens from '../components/settings-tokens.jsx';
import '../components/pages.css';

export default function SettingsPage({ session }) {
  const allowed = hasScope(session, 'settings:write');
  return (
    <section class="c-page" aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      {allowed ? (
        <>
          <SettingsAi />
          <SettingsTokens session={session} />
        </>
      ) : (
        <p class="c-muted">
          Changing settings and tokens needs a token with the settings:write scope.
        </p>
      )}
    </section>
  );
}
