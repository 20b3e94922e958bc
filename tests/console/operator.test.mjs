// The operator's console in a real browser against a real pulse-server with the demo fleet:
// sign-in, findings after a Patrol run and their lifecycle actions, the approvals queue from plan
// to a verified restart, what a token without actions:approve sees, forged decisions refused by
// the CSRF check, accessibility (axe-core) and layout at a laptop's and a phone's size.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  eventually,
  launchBrowser,
  newPage,
  photograph,
  seriousViolations,
  signIn,
  startServer,
} from './harness.mjs';

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

// Runs `body` with a fresh server (and its tokens) and stops it whatever happens.
async function withServer(options, body) {
  const server = await startServer(options);
  try {
    return await body(server);
  } catch (error) {
    error.message += `\n--- pulse-server log ---\n${server.log().slice(-4000)}`;
    throw error;
  } finally {
    await server.stop();
  }
}

// The active findings through the API, once Patrol's first run reported some.
async function waitForFindings(server, token) {
  // The Patrol run at start writes its findings as it makes them: wait until it has ended, so
  // every one is in (the capacity forecast may come last; under load a read between two
  // writes saw the others without it).
  await eventually(
    async () => {
      const status = await server.api('GET', '/api/ai/patrol/status', token);
      return status.status === 200 && status.json.last_full_run_id && !status.json.running;
    },
    { what: 'the Patrol run at start to end', timeoutMs: 30000 },
  );
  return eventually(
    async () => {
      const reply = await server.api('GET', '/api/ai/patrol/findings?limit=500', token);
      return reply.status === 200 && reply.json.length > 0 ? reply.json : null;
    },
    { what: 'Patrol findings', timeoutMs: 30000 },
  );
}

// Plans a restart of vm:101 (an admin-floor change that needs a human's approval) with a
// planner's token, as the Assistant or the CLI would.
async function planRestart(server, plannerToken) {
  const reply = await server.api('POST', '/api/actions/plan', plannerToken, {
    requestId: `console-${Date.now()}`,
    resourceId: 'vm:101',
    capabilityName: 'restart',
    params: { mode: 'reboot' },
    reason: 'the guest stopped answering',
    requestedBy: 'console-test',
  });
  assert.equal(reply.status, 200, reply.text);
  assert.equal(reply.json.requiresApproval, true);
  return reply.json;
}

function assertClean(page) {
  assert.deepEqual(page.problems, [], 'script errors or CSP refusals on the page');
}

describe('sign-in', () => {
  test('a human token signs in; the session survives a reload and sign-out ends it', async () => {
    await withServer({}, async (server) => {
      const token = server.mint({ name: 'alice', scopes: '*' });
      const page = await newPage(browser);
      await page.goto(`${server.url}/`);
      assert.deepEqual(await seriousViolations(page), []);
      assert.deepEqual(await photograph(page, 'signin'), { '1280x800': 0, '390x844': 0 });

      await page.getByLabel('API token').fill('pulse_not-a-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'does not accept this token' }).waitFor();

      await page.getByLabel('API token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const nav = page.getByRole('navigation', { name: 'Console pages' });
      await nav.waitFor();
      assert.match(await page.locator('.who').innerText(), /alice/);
      // The cookie is HttpOnly: the page's script cannot read it.
      assert.equal(await page.evaluate(() => document.cookie), '');
      const cookies = await page.context().cookies();
      const session = cookies.find((c) => c.name === 'pulse_session');
      assert.ok(session, 'a pulse_session cookie');
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Strict');

      await page.reload();
      await nav.waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API token').waitFor();
      await page.reload();
      await page.getByLabel('API token').waitFor();
      assertClean(page);
    });
  });

  test('an agent token cannot sign in to the console', async () => {
    await withServer({}, async (server) => {
      const agent = server.mint({ name: 'bot', scopes: '*', kind: 'agent' });
      const page = await newPage(browser);
      await page.goto(`${server.url}/`);
      await page.getByLabel('API token').fill(agent);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Only a human token' }).waitFor();
      assert.equal((await page.context().cookies()).length, 0);
      assertClean(page);
    });
  });
});

describe('findings', () => {
  test('findings appear after a Patrol run; one is snoozed, one dismissed with a note, one acknowledged, one resolved with a note', async () => {
    await withServer({ patrolOnStart: true }, async (server) => {
      const token = server.mint({ name: 'alice', scopes: '*' });
      const findings = await waitForFindings(server, token);
      const page = await newPage(browser);
      await signIn(page, server, token);
      await page.goto(`${server.url}/#/findings`);
      const list = page.getByRole('list', { name: 'Findings' });
      await list.getByRole('listitem').first().waitFor();
      // The page's default view is every open finding, of any severity.
      const everything = await server.api('GET', '/api/ai/patrol/findings?include_hidden=1&include_resolved=1&limit=500', token);
      const open = everything.json.filter((f) => !f.resolved_at && !f.dismissed_reason && !f.snoozed_until);
      assert.ok(open.length >= findings.length);
      assert.equal(await list.getByRole('listitem').count(), open.length);
      // A capacity finding charts the storage's recorded usage and the forecast line.
      const capacity = findings.find((f) => f.capacity_forecast);
      assert.ok(capacity, 'the demo fleet has a storage that is filling up');
      const chart = page.getByRole('figure', { name: `Capacity of ${capacity.resource_id}` }).first();
      const plot = chart.getByRole('img', { name: /^[1-9]\d* readings of .* and the forecast line to full$/ });
      await plot.waitFor();
      // uPlot draws into its canvas after the labelled element is in the page.
      await plot.locator('canvas').first().waitFor();
      assert.equal(await plot.locator('canvas').count(), 1);
      assert.deepEqual(await seriousViolations(page), []);
      const overflow = await photograph(page, 'findings', () =>
        list.getByRole('listitem').first().waitFor(),
      );
      assert.deepEqual(overflow, { '1280x800': 0, '390x844': 0 });
      if (process.env.PULSE_CONSOLE_DOCS_SCREENSHOT) {
        await page.screenshot({ path: process.env.PULSE_CONSOLE_DOCS_SCREENSHOT });
      }

      // The severity filter narrows the list to that severity.
      const severity = findings[0].severity;
      await page.getByLabel('Severity').selectOption(severity);
      const expected = open.filter((f) => f.severity === severity).length;
      // The list re-renders after the change event; wait for it rather than count at once.
      await eventually(async () => (await list.getByRole('listitem').count()) === expected, {
        what: `${expected} ${severity} findings listed`,
      });
      await page.getByLabel('Severity').selectOption('');

      // Snooze the first finding for 4 hours.
      const first = findings[0];
      const card = list.getByRole('listitem').filter({ has: page.getByRole('heading', { name: first.title, exact: true }) }).first();
      await card.getByRole('button', { name: 'Snooze…' }).click();
      await card.getByLabel('Snooze for').selectOption('4');
      await card.getByLabel('Note (optional)').fill('Waiting for the vendor patch on Friday');
      await card.getByRole('button', { name: 'Snooze', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Snoozed for 4 h.' }).waitFor();
      const hidden = await server.api('GET', '/api/ai/patrol/findings?include_hidden=1&limit=500', token);
      const snoozed = hidden.json.find((f) => f.id === first.id);
      const hours = (Date.parse(snoozed.snoozed_until) - Date.now()) / 3600000;
      assert.ok(hours > 3.9 && hours <= 4.01, `snoozed for ${hours} h`);
      assert.equal(snoozed.user_note, 'Waiting for the vendor patch on Friday');
      // It left the open list; the snoozed filter shows it.
      await page.getByLabel('State').selectOption('snoozed');
      await list.getByRole('heading', { name: first.title, exact: true }).first().waitFor();
      await page.getByLabel('State').selectOption('open');

      // Dismiss another as expected behaviour, with a note the operator wrote.
      const second = findings.find((f) => f.id !== first.id && f.title !== first.title);
      assert.ok(second, 'a second finding');
      const other = list.getByRole('listitem').filter({ has: page.getByRole('heading', { name: second.title, exact: true }) }).first();
      await other.getByRole('button', { name: 'Dismiss…' }).click();
      await other.getByLabel('Reason').selectOption('expected_behavior');
      await other.getByLabel('Note (optional)').fill('batch job window, every night at 02:00');
      await other.getByRole('button', { name: 'Dismiss', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Dismissed.' }).waitFor();
      const after = await server.api('GET', '/api/ai/patrol/findings?include_hidden=1&limit=500', token);
      const dismissed = after.json.find((f) => f.id === second.id);
      assert.equal(dismissed.dismissed_reason, 'expected_behavior');
      assert.equal(dismissed.user_note, 'batch job window, every night at 02:00');
      await page.getByLabel('State').selectOption('dismissed');
      await list.getByText('batch job window, every night at 02:00').waitFor();

      // Acknowledge a third; resolve a fourth with what was done.
      await page.getByLabel('State').selectOption('open');
      const rest = findings.filter((f) => f.id !== first.id && f.id !== second.id);
      assert.ok(rest.length >= 2, 'two more findings');
      const byTitle = (f) =>
        list.getByRole('listitem').filter({ has: page.getByRole('heading', { name: f.title, exact: true }) }).first();
      await byTitle(rest[0]).getByRole('button', { name: 'Acknowledge' }).click();
      await page.getByRole('status').filter({ hasText: 'Acknowledged.' }).waitFor();
      await byTitle(rest[0]).getByText('acknowledged', { exact: true }).waitFor();
      await byTitle(rest[1]).getByRole('button', { name: 'Resolve…' }).click();
      await byTitle(rest[1]).getByLabel('What was done (optional)').fill('restarted the unit by hand');
      await byTitle(rest[1]).getByRole('button', { name: 'Resolve', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Marked resolved.' }).waitFor();
      const last = await server.api('GET', '/api/ai/patrol/findings?include_hidden=1&include_resolved=1&limit=500', token);
      assert.ok(last.json.find((f) => f.id === rest[0].id).acknowledged_at);
      const resolved = last.json.find((f) => f.id === rest[1].id);
      assert.ok(resolved.resolved_at);
      assert.match(JSON.stringify(resolved), /restarted the unit by hand/);
      assertClean(page);
    });
  });
});

describe('approvals', () => {
  test('plan, approve with a reason and execute a restart; the timeline completes', async () => {
    await withServer({}, async (server) => {
      const planner = server.mint({ name: 'planner', scopes: 'actions:plan', kind: 'agent' });
      const operator = server.mint({ name: 'alice', scopes: '*' });
      const plan = await planRestart(server, planner);

      const page = await newPage(browser);
      await signIn(page, server, operator);
      await page.getByRole('link', { name: 'Approvals' }).click();
      const card = page.getByRole('listitem').filter({ hasText: plan.actionId });
      await card.waitFor();
      // The plan as the operator decides on it: hash, preflight, risk, requester.
      await card.getByText(plan.planHash).waitFor();
      assert.match(await card.innerText(), /restart/);
      assert.match(await card.innerText(), /vm:101/);
      assert.match(await card.innerText(), /medium/);
      assert.match(await card.innerText(), /tok_/);
      assert.deepEqual(await seriousViolations(page), []);
      assert.deepEqual(await photograph(page, 'approvals', () => card.waitFor()), {
        '1280x800': 0,
        '390x844': 0,
      });

      await card.getByLabel('Reason for the decision').fill('checked with the VM owner');
      await card.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('status').filter({ hasText: 'is approved' }).waitFor();
      const approved = page.getByRole('listitem').filter({ hasText: plan.actionId });
      await approved.getByRole('button', { name: 'Execute' }).click();

      // The action page: the timeline through execution to completion, both result axes.
      await page.waitForURL(/#\/actions\//);
      const state = page.getByTestId('action-state');
      await eventually(async () => (await state.innerText()) === 'completed', {
        what: 'the action to complete',
      });
      const timeline = page.getByRole('list', { name: 'Lifecycle timeline' });
      const steps = await timeline.innerText();
      for (const step of ['planned', 'pending approval', 'approved', 'executing', 'completed']) {
        assert.match(steps, new RegExp(step), `timeline names ${step}`);
      }
      assert.match(await page.getByRole('list', { name: 'Decisions' }).innerText(), /approved[\s\S]*checked with the VM owner/);
      const result = page.getByRole('region', { name: 'Result' });
      assert.match(await result.innerText(), /Execution[\s\S]*succeeded/);
      assert.match(await result.innerText(), /Verification[\s\S]*confirmed/);
      assert.deepEqual(await seriousViolations(page), []);
      assert.deepEqual(await photograph(page, 'action', () => state.waitFor()), {
        '1280x800': 0,
        '390x844': 0,
      });

      // The server agrees.
      const detail = await server.api('GET', `/api/actions/${plan.actionId}`, operator);
      assert.equal(detail.json.audit.state, 'completed');
      assert.equal(detail.json.audit.approvals[0].reason, 'checked with the VM owner');
      assertClean(page);
    });
  });

  test('without actions:approve there is no approve button, and forged decisions are refused', async () => {
    await withServer({}, async (server) => {
      const planner = server.mint({ name: 'planner', scopes: 'actions:plan', kind: 'agent' });
      const operator = server.mint({ name: 'alice', scopes: '*' });
      const viewer = server.mint({ name: 'bob', scopes: 'ai:execute,ai:chat,monitoring:read' });
      const plan = await planRestart(server, planner);
      const decision = `${server.url}/api/actions/${plan.actionId}/decision`;
      const body = { outcome: 'approved', reason: 'forged', planHash: plan.planHash };

      // bob: no Approvals page, no approve button anywhere, and the server refuses him too.
      const page = await newPage(browser);
      await signIn(page, server, viewer);
      assert.equal(await page.getByRole('link', { name: 'Approvals' }).count(), 0);
      await page.goto(`${server.url}/#/approvals`);
      await page.getByRole('alert').filter({ hasText: 'actions:approve' }).waitFor();
      await page.goto(`${server.url}/#/actions/${plan.actionId}`);
      await page.getByRole('alert').filter({ hasText: 'actions:approve' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0);
      const csrf = await page.evaluate(async () => (await (await fetch('/api/console/session')).json()).csrf_token);
      const refused = await page.context().request.post(decision, {
        data: body,
        headers: { 'X-CSRF-Token': csrf },
      });
      assert.equal(refused.status(), 403);
      assert.equal((await refused.json()).error, 'missing_scope');

      // alice's session: a decision without the CSRF token, with a wrong one, or from another
      // origin is refused before it reaches the action.
      const admin = await newPage(browser);
      await signIn(admin, server, operator);
      const request = admin.context().request;
      const aliceCsrf = await admin.evaluate(async () => (await (await fetch('/api/console/session')).json()).csrf_token);
      const forged = [
        {},
        { 'X-CSRF-Token': 'wrong' },
        { 'X-CSRF-Token': aliceCsrf, Origin: 'http://attacker.example' },
      ];
      for (const headers of forged) {
        const reply = await request.post(decision, { data: body, headers });
        assert.equal(reply.status(), 403, JSON.stringify(headers));
        assert.equal((await reply.json()).error, 'csrf_rejected', JSON.stringify(headers));
      }
      const still = await server.api('GET', `/api/actions/${plan.actionId}`, operator);
      assert.equal(still.json.audit.state, 'pending_approval');
      assert.equal(still.json.audit.approvals.length, 0);
      assertClean(page);
      assertClean(admin);
    });
  });
});
