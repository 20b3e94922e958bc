// The fleet: its sources and every resource with the status the fleet observes now, the
// operator's intent and the active findings (GET /api/agent/fleet-context). The page listens to
// the event stream and reloads when the fleet, a finding or an action changed.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { call, hasScope, stream } from '../api.js';
import { ErrorNote, eventData, formatTime, StatusBadge, useLoad } from '../components/page-kit.jsx';
import '../components/pages.css';

// Events that change what this page shows; a burst of them reloads once.
const kRefreshOn = new Set([
  'fleet.change',
  'finding.created',
  'action.completed',
  'approval.pending',
]);
const kRefreshDelayMs = 500;

function intent(r) {
  const words = [];
  if (r.intentionallyOffline) words.push('offline on purpose');
  if (r.maintenanceWindowActive) words.push('in maintenance');
  if (r.neverAutoRemediate) words.push('remediation locked');
  if (r.lifecycleState && r.lifecycleState !== 'active') words.push(r.lifecycleState);
  if (r.monitoringMode && r.monitoringMode !== 'normal')
    words.push(r.monitoringMode.replace('_', ' '));
  return words.join(', ') || '—';
}

function Sources({ sources }) {
  if (!sources || sources.length === 0) {
    return <p class="c-muted">One fleet source.</p>;
  }
  return (
    <ul class="c-list" aria-label="Fleet sources">
      {sources.map((s) => (
        <li class="c-card c-source">
          <strong>{s.name}</strong> <span class="c-muted">{s.kind}</span>{' '}
          <StatusBadge value={s.state} />
          <span>{s.resourceCount} resources</span>
          {s.lastSeenAt && <span class="c-muted">seen {formatTime(s.lastSeenAt)}</span>}
          {s.error && <span class="c-error-text">{s.error}</span>}
        </li>
      ))}
    </ul>
  );
}

function useFleetEvents(onChange) {
  const [live, setLive] = useState(false);
  const timer = useRef(null);
  useEffect(() => {
    const handle = stream(
      'GET',
      '/api/agent/events',
      null,
      (frame) => {
        const data = eventData(frame);
        const kind = frame.event !== 'message' ? frame.event : data && data.kind;
        if (kind === 'stream.connected') {
          setLive(true);
        } else if (kRefreshOn.has(kind)) {
          clearTimeout(timer.current);
          timer.current = setTimeout(onChange, kRefreshDelayMs);
        }
      },
      () => setLive(false),
    );
    return () => {
      clearTimeout(timer.current);
      handle.close();
    };
  }, []);
  return live;
}

export default function FleetPage({ session }) {
  // The findings page needs ai:execute: without it the counts are plain numbers, not links.
  const findingsLinked = hasScope(session, 'ai:execute');
  const { data, error, loading, reload } = useLoad(
    () => call('GET', '/api/agent/fleet-context'),
    [],
  );
  const live = useFleetEvents(reload);
  const [filter, setFilter] = useState('');
  const [type, setType] = useState('');

  const resources = (data && data.resources) || [];
  const types = useMemo(() => [...new Set(resources.map((r) => r.resourceType))].sort(), [data]);
  const needle = filter.trim().toLowerCase();
  const shown = resources.filter(
    (r) =>
      (!type || r.resourceType === type) &&
      (!needle ||
        `${r.canonicalId} ${r.resourceName} ${r.technology || ''}`.toLowerCase().includes(needle)),
  );

  return (
    <section class="c-page" aria-labelledby="fleet-title">
      <div class="c-head">
        <h1 id="fleet-title">Fleet</h1>
        <span class="c-muted" role="status">
          {live ? 'Live updates on' : 'Live updates off'}
          {data ? ` · read ${formatTime(data.generatedAt)}` : ''}
        </span>
      </div>
      <ErrorNote error={error} context="The fleet could not be read" />
      <section aria-labelledby="sources-title">
        <h2 id="sources-title">Sources</h2>
        {data && <Sources sources={data.sources} />}
      </section>
      <section aria-labelledby="resources-title">
        <h2 id="resources-title">Resources</h2>
        <div class="c-filters">
          <div>
            <label for="fleet-filter">Search</label>
            <input
              id="fleet-filter"
              type="search"
              value={filter}
              onInput={(e) => setFilter(e.currentTarget.value)}
            />
          </div>
          <div>
            <label for="fleet-type">Type</label>
            <select id="fleet-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
              <option value="">All types</option>
              {types.map((t) => (
                <option value={t}>{t}</option>
              ))}
            </select>
          </div>
        </div>
        {loading && !data && <p role="status">Loading the fleet…</p>}
        {data && (
          <p class="c-muted">
            {shown.length} of {resources.length} resources
          </p>
        )}
        {shown.length > 0 && (
          <div class="c-table-wrap" role="region" aria-label="Resources" tabIndex={0}>
            <table class="c-table c-table-cards">
              <thead>
                <tr>
                  <th scope="col">Resource</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Findings</th>
                  <th scope="col">Approvals</th>
                  <th scope="col">Intent</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((r) => (
                  <tr key={r.canonicalId} data-resource-id={r.canonicalId}>
                    <td data-label="Resource">
                      <span class="c-block">{r.resourceName}</span>
                      <code class="c-muted c-wrap">{r.canonicalId}</code>
                    </td>
                    <td data-label="Type">
                      {r.resourceType}
                      {r.technology ? <span class="c-block c-muted">{r.technology}</span> : null}
                    </td>
                    <td data-label="Status">
                      <StatusBadge value={r.status} />
                    </td>
                    <td data-label="Findings">
                      {r.findings && r.findings.total > 0 && findingsLinked ? (
                        <a href="#/findings">
                          {r.findings.total}
                          {r.findings.critical ? ` (${r.findings.critical} critical)` : ''}
                        </a>
                      ) : (
                        (r.findings && r.findings.total) || 0
                      )}
                    </td>
                    <td data-label="Approvals">{r.pendingApprovalCount || 0}</td>
                    <td data-label="Intent">{intent(r)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </section>
  );
}
