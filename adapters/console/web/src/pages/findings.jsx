// Findings: what Patrol found, filtered by severity, state and resource, with the operator's
// lifecycle actions (acknowledge, snooze, dismiss, resolve; a note where the route takes one)
// and, for a capacity finding, a chart of its forecast.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { ApiError, call, query } from '../api.js';

const kSeverities = ['critical', 'warning', 'watch', 'info'];
const kStates = ['active', 'acknowledged', 'snoozed', 'dismissed', 'resolved'];
const kSnoozeHours = [1, 4, 24, 72, 168];
const kDismissReasons = [
  ['not_an_issue', 'Not an issue (also suppresses future detections)'],
  ['expected_behavior', 'Expected behaviour'],
  ['will_fix_later', 'Will fix later (reminds again in 7 days)'],
];

// The finding's state as the operator sees it, from its lifecycle fields.
export function findingState(finding, now = Date.now()) {
  if (finding.resolved_at) {
    return 'resolved';
  }
  if (finding.dismissed_reason || finding.suppressed) {
    return 'dismissed';
  }
  if (finding.snoozed_until && Date.parse(finding.snoozed_until) > now) {
    return 'snoozed';
  }
  if (finding.acknowledged_at) {
    return 'acknowledged';
  }
  return 'active';
}

function when(text) {
  if (!text) {
    return '';
  }
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toLocaleString();
}

function errorText(failure) {
  return failure instanceof ApiError ? `${failure.message} (${failure.code})` : String(failure.message || failure);
}

// The forecast line of a capacity finding: its usage now and the trend it reported, projected
// until it is full (or 30 days), against the 100 % line.
function ForecastChart({ forecast, title }) {
  const box = useRef(null);
  useEffect(() => {
    if (!box.current || !Number.isFinite(forecast.current_pct)) {
      return undefined;
    }
    const daily = Number.isFinite(forecast.daily_change) ? forecast.daily_change : 0;
    const horizon =
      forecast.days_to_full > 0 ? Math.min(Math.max(forecast.days_to_full * 1.25, 1), 365) : 30;
    const start = Date.now() / 1000;
    const steps = 24;
    const xs = [];
    const ys = [];
    const full = [];
    for (let i = 0; i <= steps; i += 1) {
      const day = (horizon * i) / steps;
      xs.push(start + day * 86400);
      ys.push(Math.min(Math.max(forecast.current_pct + daily * day, 0), 100));
      full.push(100);
    }
    const width = () => Math.max(box.current.clientWidth, 200);
    const chart = new uPlot(
      {
        width: width(),
        height: 220,
        title: undefined,
        scales: { y: { range: [0, 105] } },
        axes: [{}, { values: (u, ticks) => ticks.map((t) => `${t}%`) }],
        series: [
          {},
          { label: 'forecast', stroke: '#0b5cad', width: 2 },
          { label: 'full', stroke: '#a4161a', dash: [6, 4], width: 1 },
        ],
      },
      [xs, ys, full],
      box.current,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: 220 }));
    resize.observe(box.current);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [forecast]);
  const days = forecast.days_to_full;
  return (
    <figure class="panel" aria-label={`Capacity forecast: ${title}`}>
      <figcaption>
        <strong>{forecast.metric || 'capacity'}</strong>: {Number(forecast.current_pct).toFixed(1)} % now
        {Number.isFinite(forecast.daily_change) && `, ${forecast.daily_change.toFixed(2)} points a day`}
        {days >= 0 ? `, full in about ${Number(days).toFixed(1)} days` : ', not filling up'} (from{' '}
        {forecast.sample_count} samples; the server offers no metrics history route yet, so the
        chart shows the forecast only)
      </figcaption>
      <div class="chart" ref={box} role="img" aria-label="forecast line of usage in percent over the coming days" />
    </figure>
  );
}

// The lifecycle actions of one finding. Each asks for what its route takes: hours for a snooze,
// a reason and optional note for a dismissal, an optional note for a resolution.
function FindingActions({ finding, onDone }) {
  const [open, setOpen] = useState('');
  const [hours, setHours] = useState(24);
  const [reason, setReason] = useState('not_an_issue');
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const state = findingState(finding);
  const id = finding.id;

  const run = async (path, body, message) => {
    setBusy(true);
    setError('');
    try {
      await call('POST', path, body);
      setOpen('');
      setNote('');
      onDone(message);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  const submit = (event) => {
    event.preventDefault();
    if (open === 'snooze') {
      run('/api/ai/patrol/snooze', { finding_id: id, duration_hours: Number(hours) }, `Snoozed for ${hours} h.`);
    } else if (open === 'dismiss') {
      const body = { finding_id: id, reason };
      if (note.trim()) {
        body.note = note.trim();
      }
      run('/api/ai/patrol/dismiss', body, 'Dismissed.');
    } else if (open === 'resolve') {
      const body = { finding_id: id };
      if (note.trim()) {
        body.resolution_note = note.trim();
      }
      run('/api/ai/patrol/resolve', body, 'Marked resolved.');
    }
  };
  const formId = `act-${id}`;
  const toggle = (name) => {
    setOpen(open === name ? '' : name);
    setError('');
  };

  if (state === 'resolved') {
    return null;
  }
  return (
    <div>
      <div class="row" role="group" aria-label={`Actions on ${finding.title}`}>
        {state === 'active' && (
          <button type="button" class="secondary" disabled={busy}
            onClick={() => run('/api/ai/patrol/acknowledge', { finding_id: id }, 'Acknowledged.')}>
            Acknowledge
          </button>
        )}
        {state === 'snoozed' && (
          <button type="button" class="secondary" disabled={busy}
            onClick={() => run('/api/ai/patrol/unsnooze', { finding_id: id }, 'Snooze ended.')}>
            End snooze
          </button>
        )}
        {state === 'dismissed' && (
          <button type="button" class="secondary" disabled={busy}
            onClick={() => run('/api/ai/patrol/reopen', { finding_id: id }, 'Reopened.')}>
            Reopen
          </button>
        )}
        {(state === 'active' || state === 'acknowledged') &&
          ['snooze', 'dismiss', 'resolve'].map((name) => (
            <button type="button" class="secondary" aria-expanded={open === name} aria-controls={formId}
              onClick={() => toggle(name)} key={name}>
              {name[0].toUpperCase() + name.slice(1)}…
            </button>
          ))}
      </div>
      {open && (
        <form id={formId} class="panel" onSubmit={submit} aria-label={`${open} ${finding.title}`}>
          {open === 'snooze' && (
            <div class="field">
              <label for={`${formId}-hours`}>Snooze for</label>
              <select id={`${formId}-hours`} value={hours} onChange={(e) => setHours(e.currentTarget.value)}>
                {kSnoozeHours.map((h) => (
                  <option value={h} key={h}>{h === 1 ? '1 hour' : `${h} hours`}</option>
                ))}
              </select>
            </div>
          )}
          {open === 'dismiss' && (
            <div class="field">
              <label for={`${formId}-reason`}>Reason</label>
              <select id={`${formId}-reason`} value={reason} onChange={(e) => setReason(e.currentTarget.value)}>
                {kDismissReasons.map(([value, label]) => (
                  <option value={value} key={value}>{label}</option>
                ))}
              </select>
            </div>
          )}
          {(open === 'dismiss' || open === 'resolve') && (
            <div class="field">
              <label for={`${formId}-note`}>{open === 'resolve' ? 'What was done (optional)' : 'Note (optional)'}</label>
              <textarea id={`${formId}-note`} maxLength={2000} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
            </div>
          )}
          <div class="row">
            <button type="submit" disabled={busy}>
              {open === 'snooze' ? 'Snooze' : open === 'dismiss' ? 'Dismiss' : 'Resolve'}
            </button>
            <button type="button" class="secondary" onClick={() => setOpen('')}>Cancel</button>
          </div>
        </form>
      )}
      {error && <p role="alert" class="error">{error}</p>}
    </div>
  );
}

function FindingCard({ finding, onDone }) {
  const state = findingState(finding);
  return (
    <li class="card" aria-labelledby={`f-${finding.id}`}>
      <div class="row">
        <span class={`badge sev-${finding.severity}`}>{finding.severity}</span>
        <span class="badge">{state}</span>
      </div>
      <h3 id={`f-${finding.id}`}>{finding.title}</h3>
      <div class="meta">
        <span>
          Resource <code>{finding.resource_id}</code>
          {finding.resource_name && finding.resource_name !== finding.resource_id && ` (${finding.resource_name})`}
        </span>
        <span>Detected {when(finding.detected_at)}</span>
        {finding.last_seen_at && <span>Last seen {when(finding.last_seen_at)}</span>}
        {state === 'snoozed' && <span>Until {when(finding.snoozed_until)}</span>}
      </div>
      {finding.description && <p>{finding.description}</p>}
      {finding.recommendation && (
        <p>
          <strong>Recommendation:</strong> {finding.recommendation}
        </p>
      )}
      {finding.user_note && (
        <p>
          <strong>Operator note:</strong> {finding.user_note}
        </p>
      )}
      {finding.capacity_forecast && <ForecastChart forecast={finding.capacity_forecast} title={finding.title} />}
      <FindingActions finding={finding} onDone={onDone} />
    </li>
  );
}

// The list route needs ai:execute, which the shell checked before showing this page.
export default function FindingsPage() {
  const [findings, setFindings] = useState(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [severity, setSeverity] = useState('');
  const [state, setState] = useState('open');
  const [resource, setResource] = useState('');
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let live = true;
    // Every finding the list route gives (hidden and resolved ones too); the filters apply here,
    // so changing one needs no round trip.
    call('GET', `/api/ai/patrol/findings${query({ include_resolved: 1, include_hidden: 1, limit: 500 })}`).then(
      (page) => live && (setFindings(page.items || []), setError('')),
      (failure) => live && setError(errorText(failure)),
    );
    return () => {
      live = false;
    };
  }, [generation]);

  const refresh = (message) => {
    setNotice(message || '');
    setGeneration(generation + 1);
  };
  const all = findings || [];
  const resources = [...new Set(all.map((f) => f.resource_id))].sort();
  const shown = all.filter((f) => {
    const s = findingState(f);
    const stateOk =
      state === 'all' || (state === 'open' ? s === 'active' || s === 'acknowledged' : s === state);
    return stateOk && (!severity || f.severity === severity) && (!resource || f.resource_id === resource);
  });

  return (
    <section aria-labelledby="findings-title">
      <h1 id="findings-title">Findings</h1>
      <form class="toolbar" onSubmit={(e) => e.preventDefault()} aria-label="Filter findings">
        <div class="field">
          <label for="filter-severity">Severity</label>
          <select id="filter-severity" value={severity} onChange={(e) => setSeverity(e.currentTarget.value)}>
            <option value="">All</option>
            {kSeverities.map((s) => <option value={s} key={s}>{s}</option>)}
          </select>
        </div>
        <div class="field">
          <label for="filter-state">State</label>
          <select id="filter-state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
            <option value="open">Open (active or acknowledged)</option>
            {kStates.map((s) => <option value={s} key={s}>{s}</option>)}
            <option value="all">All</option>
          </select>
        </div>
        <div class="field">
          <label for="filter-resource">Resource</label>
          <select id="filter-resource" value={resource} onChange={(e) => setResource(e.currentTarget.value)}>
            <option value="">All resources</option>
            {resources.map((r) => <option value={r} key={r}>{r}</option>)}
          </select>
        </div>
        <button type="button" class="secondary" onClick={() => refresh('')}>Refresh</button>
      </form>
      <p role="status" class="muted">
        {findings === null && !error ? 'Loading findings…' : `${shown.length} of ${all.length} findings shown.`}
        {notice && ` ${notice}`}
      </p>
      {error && <p role="alert" class="error">{error}</p>}
      {findings !== null && all.length === 0 && (
        <p>No findings yet. Patrol reports here after its next run.</p>
      )}
      <ul class="list" aria-label="Findings">
        {shown.map((finding) => (
          <FindingCard finding={finding} onDone={refresh} key={finding.id} />
        ))}
      </ul>
    </section>
  );
}
