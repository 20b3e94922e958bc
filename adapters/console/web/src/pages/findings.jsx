// Findings: what Patrol found, filtered by severity, state and resource, with the operator's
// lifecycle actions (acknowledge; snooze, dismiss and resolve with a note)
// and, for a capacity finding, a chart of the recorded usage and its forecast.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { ApiError, call, hasScope, query } from '../api.js';

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

// The capacity chart of a finding with a forecast: the resource's recorded utilization of the
// metric (GET /api/resources/{id}/metrics, needs monitoring:read) and the forecast's line to the
// day it is full, against the 100 % line.
function CapacityChart({ finding, session }) {
  const box = useRef(null);
  const [series, setSeries] = useState(null);
  const [error, setError] = useState('');
  const forecast = finding.capacity_forecast;
  const allowed = hasScope(session, 'monitoring:read');
  useEffect(() => {
    if (!allowed) {
      return undefined;
    }
    let live = true;
    const path = `/api/resources/${encodeURIComponent(finding.resource_id)}/metrics${query({
      metric: forecast.metric,
      hours: 720,
    })}`;
    call('GET', path).then(
      (answer) => live && setSeries(answer),
      (failure) => live && setError(errorText(failure)),
    );
    return () => {
      live = false;
    };
  }, [finding.id]);
  useEffect(() => {
    const element = box.current;
    if (!element || !series) {
      return undefined;
    }
    // One x axis for both series: each point's time, the other series empty (null) there.
    const points = new Map();
    const add = (list, index) => {
      for (const point of list || []) {
        const x = Date.parse(point.at) / 1000;
        const row = points.get(x) || [null, null];
        row[index] = point.value;
        points.set(x, row);
      }
    };
    add(series.samples, 0);
    add(series.line, 1);
    const xs = [...points.keys()].sort((a, b) => a - b);
    const data = [
      xs,
      xs.map((x) => points.get(x)[0]),
      xs.map((x) => points.get(x)[1]),
      xs.map(() => 100),
    ];
    const width = () => Math.max(element.clientWidth, 200);
    const chart = new uPlot(
      {
        width: width(),
        height: 220,
        scales: { y: { range: [0, 105] } },
        axes: [{}, { values: (u, ticks) => ticks.map((t) => `${t}%`) }],
        series: [
          {},
          { label: 'recorded', stroke: '#1b1f24', width: 1.5 },
          { label: 'forecast', stroke: '#0b5cad', width: 2, dash: [8, 4], spanGaps: true },
          { label: 'full', stroke: '#a4161a', width: 1, dash: [3, 3] },
        ],
      },
      data,
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: width(), height: 220 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [series]);
  const days = forecast.days_to_full;
  return (
    <figure class="panel" aria-label={`Capacity of ${finding.resource_id}`}>
      <figcaption>
        <strong>{forecast.metric || 'capacity'}</strong>: {Number(forecast.current_pct).toFixed(1)} % now
        {Number.isFinite(forecast.daily_change) && `, ${forecast.daily_change.toFixed(2)} points a day`}
        {days >= 0 ? `, full in about ${Number(days).toFixed(1)} days` : ', not filling up'} (from{' '}
        {forecast.sample_count} samples)
      </figcaption>
      {!allowed && <p class="muted">The recorded history needs the monitoring:read scope.</p>}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {series && (
        <div
          class="chart"
          ref={box}
          role="img"
          aria-label={`${series.recorded} readings of ${series.metric} over the last 30 days, and the forecast line to full`}
        />
      )}
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
      const body = { finding_id: id, duration_hours: Number(hours) };
      if (note.trim()) {
        body.note = note.trim();
      }
      run('/api/ai/patrol/snooze', body, `Snoozed for ${hours} h.`);
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
          {open && (
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

function FindingCard({ finding, session, onDone }) {
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
      {finding.capacity_forecast && <CapacityChart finding={finding} session={session} />}
      <FindingActions finding={finding} onDone={onDone} />
    </li>
  );
}

// The list route needs ai:execute, which the shell checked before showing this page.
export default function FindingsPage({ session }) {
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
      (list) => live && (setFindings(Array.isArray(list) ? list : []), setError('')),
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
        {findings === null && !error ? 'Loading findings…' : `${shown.length} of ${all.length} ${all.length === 1 ? 'finding' : 'findings'} shown.`}
        {notice && ` ${notice}`}
      </p>
      {error && <p role="alert" class="error">{error}</p>}
      {findings !== null && all.length === 0 && (
        <p>No findings yet. Patrol reports here after its next run.</p>
      )}
      <ul class="list" aria-label="Findings">
        {shown.map((finding) => (
          <FindingCard finding={finding} session={session} onDone={refresh} key={finding.id} />
        ))}
      </ul>
    </section>
  );
}
