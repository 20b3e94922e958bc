// The chat, sessions, Patrol, fleet and settings pages in a real browser against a real
// pulse-server (demo fleet) and, for the Assistant, the scripted loopback provider
// (scripted-provider.mjs): each test is a task an operator does on the console, checked on the
// page and then against the server's own record through the API.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  eventually,
  launchBrowser,
  newPage,
  photograph,
  seriousViolations,
  signIn,
  startServer,
} from './harness.mjs';
import {
  kHostileAnswer,
  kHostilePrompt,
  kModels,
  kQuestionPrompt,
  kRestartPrompt,
  kSlowPrompt,
  startScriptedProvider,
} from './scripted-provider.mjs';

// What an operator at the console holds: everything the five pages use, but not the wildcard
// (an admin reads every session; this operator only their own).
const kOperatorScopes = 'monitoring:read,ai:chat,ai:execute,actions:approve,settings:write';

// A server whose Assistant talks to the scripted provider, at the controlled level, so every
// plan waits for a recorded approval.
async function assistantServer(provider, extra = []) {
  return startServer({
    args: [
      '--provider',
      'openai-compatible',
      '--provider-base-url',
      provider.baseUrl,
      '--model',
      kModels[0],
      '--control-level',
      'controlled',
      '--patrol-interval',
      '0',
      ...extra,
    ],
  });
}

// Runs body(ctx) with a started server, browser and signed-in page, and stops all of them.
async function withConsole({ provider = null, scopes = kOperatorScopes, args = [] }, body) {
  const server = provider
    ? await assistantServer(provider, args)
    : await startServer({ args: ['--patrol-interval', '0', ...args] });
  const browser = await launchBrowser();
  let page = null;
  try {
    const token = server.mint({ name: 'operator', scopes });
    page = await newPage(browser);
    await signIn(page, server, token);
    await body({ server, page, token });
    assert.deepEqual(page.problems, [], 'no script error or CSP refusal on the page');
  } catch (error) {
    // What the page showed and logged, and the server's log: a timeout alone says too little.
    let shown = '';
    if (page) {
      shown = await page
        .evaluate(() => document.body.innerText)
        .catch((e) => `(unreadable: ${e.message})`);
      console.error(`--- page at failure: ${page.url()}\n${String(shown).slice(0, 2000)}`);
      console.error(`--- page problems: ${JSON.stringify(page.problems)}`);
    }
    console.error(`--- pulse-server log ---\n${server.log().slice(-4000)}`);
    error.message += `\n--- pulse-server log ---\n${server.log().slice(-4000)}`;
    throw error;
  } finally {
    await browser.close();
    await server.stop();
  }
}

async function go(page, route) {
  await page.goto(`${page.url().split('#')[0]}#/${route}`);
}

// Sends the restart request from the chat page and waits for the approval card.
async function chatUntilApprovalCard(page) {
  await go(page, 'chat');
  await page.getByLabel('Message').fill(kRestartPrompt);
  await page.getByRole('button', { name: 'Send' }).click();
  const card = page.getByRole('region', {
    name: /Approval needed: restart on app-container:grafana/,
  });
  await card.waitFor({ timeout: 30000 });
  // The card arrives with the approval_needed event, while the run still streams; the session
  // record names the plan it waits on once the run has saved it, just before its done event.
  await page.getByText('The run waits for a decision on the plan above.').waitFor({
    timeout: 30000,
  });
  return card;
}

test('chat: the plan the Assistant proposes is approved from its card and the verified answer arrives; the sessions page lists and reopens the session', async () => {
  const provider = await startScriptedProvider();
  try {
    await withConsole({ provider }, async ({ server, page, token }) => {
      const card = await chatUntilApprovalCard(page);
      // The tool activity the run showed on the way: the query that established the target.
      await page.getByText('pulse_query', { exact: true }).first().waitFor();
      const sessionId = decodeURIComponent(/#\/chat\/([^/]+)$/.exec(page.url())[1]);
      const sessions = (await server.api('GET', '/api/ai/sessions', token)).json;
      assert.deepEqual(
        sessions.map((s) => s.id),
        [sessionId],
        'the hash names the session the server created',
      );
      const detail = (await server.api('GET', `/api/ai/sessions/${sessionId}`, token)).json;
      assert.equal(detail.status, 'awaiting_approval');
      const actionId = detail.awaiting_action.action_id;
      // The card shows the plan hash the decision binds to.
      await card.getByText(detail.awaiting_action.plan_hash).waitFor();

      await card
        .getByLabel('Reason (recorded in the audit trail)')
        .fill('grafana is stuck, restart it');
      await card.getByRole('button', { name: 'Approve' }).click();
      await page
        .getByText(/The restart of grafana finished; its status now:[\s\S]*"status":"running"/)
        .waitFor({ timeout: 30000 });

      const action = (await server.api('GET', `/api/actions/${actionId}`, token)).json;
      assert.equal(action.audit.state, 'completed');
      assert.equal(action.audit.approvals.length, 1);
      assert.equal(action.audit.approvals[0].reason, 'grafana is stuck, restart it');
      assert.equal(action.audit.approvals[0].planHash, detail.awaiting_action.plan_hash);
      assert.equal(
        (await server.api('GET', `/api/ai/sessions/${sessionId}`, token)).json.status !==
          'awaiting_approval',
        true,
      );

      // The sessions page lists it by its first message and reopens it in the chat.
      await go(page, 'sessions');
      const link = page.getByRole('link', { name: kRestartPrompt });
      await link.waitFor();
      await link.click();
      await page.getByRole('heading', { name: 'Assistant' }).waitFor();
      assert.match(page.url(), new RegExp(`#/chat/${sessionId}$`));
      await page
        .getByRole('log', { name: 'Conversation' })
        .getByText(/The restart of grafana finished/)
        .waitFor();
      // The navigation's Chat link starts a new conversation.
      await page
        .getByRole('navigation', { name: 'Console pages' })
        .getByRole('link', { name: 'Chat' })
        .click();
      await page.getByText('Ask about the fleet, a finding or a resource.').waitFor();
      assert.match(page.url(), /#\/chat$/);
    });
  } finally {
    await provider.close();
  }
});

test('chat: a plan rejected from its card is not executed, and the Assistant says so', async () => {
  const provider = await startScriptedProvider();
  try {
    await withConsole({ provider }, async ({ server, page, token }) => {
      const card = await chatUntilApprovalCard(page);
      const [session] = (await server.api('GET', '/api/ai/sessions', token)).json;
      const { awaiting_action: waiting } = (
        await server.api('GET', `/api/ai/sessions/${session.id}`, token)
      ).json;
      await card.getByLabel('Reason (recorded in the audit trail)').fill('not during the demo');
      await card.getByRole('button', { name: 'Reject' }).click();
      await page.getByText('The restart of grafana was rejected; nothing was changed.').waitFor({
        timeout: 30000,
      });
      const action = (await server.api('GET', `/api/actions/${waiting.action_id}`, token)).json;
      assert.equal(action.audit.state, 'rejected');
      assert.equal(action.audit.approvals[0].outcome, 'rejected');
      assert.equal(action.audit.approvals[0].reason, 'not during the demo');
    });
  } finally {
    await provider.close();
  }
});

test('chat: a question the Assistant asks is answered with one of its options, also after a reload, and the run continues', async () => {
  const provider = await startScriptedProvider();
  try {
    await withConsole({ provider }, async ({ server, page, token }) => {
      await go(page, 'chat');
      await page.getByLabel('Message').fill(kQuestionPrompt);
      await page.getByRole('button', { name: 'Send' }).click();
      const card = page.getByRole('region', { name: 'The Assistant asks: Which grafana?' });
      await card.waitFor({ timeout: 30000 });
      // Reopened later (a reload), the session still offers its open question.
      await page.reload();
      await card.waitFor();
      await card
        .getByRole('group', { name: 'Suggested answers' })
        .getByRole('button', { name: 'staging' })
        .click();
      await page.getByText('Noted: staging').waitFor({ timeout: 30000 });
      await card.getByText('Answered: staging').waitFor();
      const [session] = (await server.api('GET', '/api/ai/sessions', token)).json;
      const messages = (await server.api('GET', `/api/ai/sessions/${session.id}/messages`, token))
        .json;
      assert.ok(
        messages.some((m) => m.role === 'user' && m.content === 'staging'),
        'the answer is the next user message',
      );
    });
  } finally {
    await provider.close();
  }
});

test('chat: abort stops a run that waits for the model, and the chat can be used again', async () => {
  const provider = await startScriptedProvider();
  try {
    await withConsole({ provider }, async ({ server, page, token }) => {
      await go(page, 'chat');
      await page.getByLabel('Message').fill(kSlowPrompt);
      await page.getByRole('button', { name: 'Send' }).click();
      await eventually(() => provider.requests.some((r) => r.lastUser.includes(kSlowPrompt)), {
        what: 'the provider request',
      });
      await page.waitForURL(/#\/chat\/ses_/);
      await page.getByRole('button', { name: 'Abort' }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: /cancel/i })
        .first()
        .waitFor({ timeout: 15000 });
      assert.equal(await page.getByRole('button', { name: 'Abort' }).count(), 0);
      const [session] = (await server.api('GET', '/api/ai/sessions', token)).json;
      const abort = await server.api('POST', `/api/ai/sessions/${session.id}/abort`, token, {});
      assert.equal(abort.json.aborted, false, 'nothing is left running');
      // The same session goes on.
      await page.getByLabel('Message').fill('and now?');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByText('Scripted answer: nothing else to report.').waitFor({ timeout: 30000 });
    });
  } finally {
    await provider.close();
  }
});

test('chat: markup in an answer is shown as text, never rendered or run', async () => {
  const provider = await startScriptedProvider();
  try {
    await withConsole({ provider }, async ({ page }) => {
      await go(page, 'chat');
      await page.getByLabel('Message').fill(kHostilePrompt);
      await page.getByLabel('Message').press('Enter');
      const log = page.getByRole('log', { name: 'Conversation' });
      await log.getByText(kHostileAnswer, { exact: true }).waitFor({ timeout: 30000 });
      assert.equal(await log.locator('img, script, strong').count(), 0);
      assert.equal(await page.evaluate(() => window.__pwned), undefined);
    });
  } finally {
    await provider.close();
  }
});

test('sessions: deleting a session from the list removes it on the server', async () => {
  const provider = await startScriptedProvider();
  try {
    await withConsole({ provider }, async ({ server, page, token }) => {
      await go(page, 'chat');
      await page.getByLabel('Message').fill('how is the fleet?');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByText('Scripted answer: nothing else to report.').waitFor({ timeout: 30000 });
      const [session] = (await server.api('GET', '/api/ai/sessions', token)).json;

      await go(page, 'sessions');
      await page.getByRole('button', { name: 'Delete session how is the fleet?' }).click();
      await page.getByRole('button', { name: 'Delete “how is the fleet?”' }).click();
      await page.getByText('No sessions yet.').waitFor();
      assert.equal((await server.api('GET', `/api/ai/sessions/${session.id}`, token)).status, 404);
    });
  } finally {
    await provider.close();
  }
});

test('chat: a session without actions:approve sees the plan but no approve or reject button, and continues once an approver decided', async () => {
  const provider = await startScriptedProvider();
  try {
    await withConsole(
      { provider, scopes: 'monitoring:read,ai:chat,ai:execute' },
      async ({ server, page, token }) => {
        const card = await chatUntilApprovalCard(page);
        await card.getByText(/waits for someone who may approve actions/).waitFor();
        assert.equal(await card.getByRole('button', { name: 'Approve' }).count(), 0);
        assert.equal(await card.getByRole('button', { name: 'Reject' }).count(), 0);
        assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0);

        // A second operator approves in the queue (here through the API, as the CLI would).
        const [session] = (await server.api('GET', '/api/ai/sessions', token)).json;
        const { awaiting_action: waiting } = (
          await server.api('GET', `/api/ai/sessions/${session.id}`, token)
        ).json;
        const approver = server.mint({ name: 'approver', scopes: 'actions:approve' });
        const decided = await server.api(
          'POST',
          `/api/actions/${waiting.action_id}/decision`,
          approver,
          { outcome: 'approved', reason: 'second pair of eyes', planHash: waiting.plan_hash },
        );
        assert.equal(decided.status, 200, decided.text);
        await card.getByRole('button', { name: 'Continue after the decision' }).click();
        await page
          .getByText(/The restart of grafana finished; its status now:[\s\S]*"status":"running"/)
          .waitFor({ timeout: 30000 });
      },
    );
  } finally {
    await provider.close();
  }
});

test('patrol: run now from the page shows the run with the counts the server recorded', async () => {
  await withConsole({}, async ({ server, page, token }) => {
    await go(page, 'patrol');
    await page.getByText('No Patrol runs yet.').waitFor();
    await page.getByRole('button', { name: 'Run Patrol now' }).click();
    const runs = page.getByRole('region', { name: 'Recent Patrol runs' });
    await runs.waitFor({ timeout: 30000 });
    const listed = (await server.api('GET', '/api/ai/patrol/runs', token)).json;
    const [run] = Array.isArray(listed) ? listed : listed.items;
    assert.equal(run.trigger_reason, 'manual');
    assert.ok(run.new_findings > 0, 'the demo fleet has problems Patrol finds');
    const row = runs.locator(`tr[data-run-id="${run.id}"]`);
    const cells = await row.locator('td').allInnerTexts();
    assert.equal(cells[1], 'manual');
    assert.equal(cells[2], run.status.replace(/_/g, ' '));
    assert.equal(cells[3], String(run.resources_checked));
    assert.equal(cells[4], String(run.new_findings));
    // The loop status counts the findings the run opened.
    await page.reload();
    const active = page
      .getByRole('term')
      .filter({ hasText: 'Active findings' })
      .locator('xpath=following-sibling::dd');
    await eventually(async () => (await active.innerText()) !== '0', {
      what: 'active findings counted',
    });
  });
});

test('patrol: the autonomy level is saved, and Autopilot only with a recorded acknowledgement', async () => {
  await withConsole({}, async ({ server, page, token }) => {
    await go(page, 'patrol');
    await page.getByRole('radio', { name: /^approval/ }).check();
    await page.getByRole('button', { name: 'Save autonomy' }).click();
    await page.getByText('Saved: effective level approval.').waitFor();
    assert.equal(
      (await server.api('GET', '/api/ai/patrol/autonomy', token)).json.autonomy_level,
      'approval',
    );

    await page.getByRole('radio', { name: /^full/ }).check();
    const save = page.getByRole('button', { name: 'Save autonomy' });
    assert.equal(await save.isDisabled(), true, 'no Autopilot without the acknowledgement');
    await page.getByLabel(/Acknowledgement reference/).fill('ops-console-test');
    await page.getByLabel('I understand that Patrol will act without asking').check();
    await save.click();
    await page.getByText('Saved: effective level full.').waitFor();
    const autonomy = (await server.api('GET', '/api/ai/patrol/autonomy', token)).json;
    assert.equal(autonomy.effective_autonomy_level, 'full');
    assert.equal(autonomy.autopilot_acknowledgement.acknowledgement_id, 'ops-console-test');

    await page.getByRole('button', { name: 'Revoke acknowledgement' }).click();
    await page.getByText(/Autopilot acknowledgement revoked/).waitFor();
    assert.notEqual(
      (await server.api('GET', '/api/ai/patrol/autonomy', token)).json.effective_autonomy_level,
      'full',
    );
  });
});

test('fleet: the demo resources are listed with their live status and the findings column follows the event stream', async () => {
  await withConsole({}, async ({ server, page, token }) => {
    await go(page, 'fleet');
    await page.getByText('Live updates on').waitFor();
    const context = (await server.api('GET', '/api/agent/fleet-context', token)).json;
    await page
      .getByText(`${context.resources.length} of ${context.resources.length} resources`)
      .waitFor();
    const status = (id) => page.locator(`tr[data-resource-id="${id}"] td`).nth(2).innerText();
    assert.equal(await status('app-container:grafana'), 'running');
    assert.equal(await status('app-container:worker'), 'exited');
    assert.equal(await status('vm:108'), 'stopped');
    const findings = page.locator('tr[data-resource-id="app-container:worker"] td').nth(3);
    assert.equal(await findings.innerText(), '0');

    // A Patrol run started elsewhere (the API) opens findings: the page shows them without a reload.
    const run = await server.api('POST', '/api/ai/patrol/run', token, {});
    assert.equal(run.status, 200, run.text);
    await eventually(async () => (await findings.innerText()) !== '0', {
      what: 'the worker finding on the fleet page',
    });

    await page.getByLabel('Type').selectOption('vm');
    await page.getByText(`12 of ${context.resources.length} resources`).waitFor();
  });
});

test('settings: a token created on the page works with its secret shown once, and revoking it on the page refuses it', async () => {
  await withConsole({}, async ({ server, page }) => {
    await go(page, 'settings');
    await page.getByLabel('Name').fill('grafana-dashboard');
    await page.getByLabel(/^Kind/).selectOption('service');
    await page.getByRole('checkbox', { name: 'monitoring:read' }).check();
    // A scope the operator does not hold is not offered.
    assert.equal(await page.getByRole('checkbox', { name: 'actions:execute' }).count(), 0);
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = await page.getByLabel('Secret').inputValue();
    assert.ok(secret.length > 20);
    const row = page.locator('tr', { hasText: 'grafana-dashboard' });
    await row.waitFor();
    assert.match(await row.innerText(), /service/);
    assert.equal((await server.api('GET', '/api/agent/fleet-context', secret)).status, 200);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    assert.equal(await page.getByLabel('Secret').count(), 0, 'the secret is not shown again');

    await page.getByRole('button', { name: 'Revoke token grafana-dashboard' }).click();
    await page.getByRole('button', { name: 'Revoke grafana-dashboard' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await server.api('GET', '/api/agent/fleet-context', secret)).status, 401);
  });
});

test('settings: the model changed on the page is the model the next chat asks for', async () => {
  const provider = await startScriptedProvider();
  try {
    await withConsole({ provider }, async ({ page }) => {
      await go(page, 'settings');
      const model = page.getByLabel('Model', { exact: true });
      await model.waitFor();
      assert.equal(await model.inputValue(), kModels[0]);
      // The month's metered spend the monthly cap is checked against (a local route: none).
      const month = new Date().toISOString().slice(0, 7);
      await page.getByText(`Metered spend in ${month} (UTC): 0.0000 USD`).waitFor();
      await model.fill(kModels[1]);
      await page.getByRole('button', { name: 'Save AI settings' }).click();
      await page.getByText('Saved: the next run uses these settings.').waitFor();
      // Setting a model runs its tool-call preflight, which the scripted model passes.
      const preflight = page.getByRole('list', { name: 'Tool-call preflight' }).locator('li');
      await preflight.filter({ hasText: kModels[1] }).filter({ hasText: 'ok' }).waitFor();

      const before = provider.requests.length;
      await go(page, 'chat');
      await page.getByLabel('Message').fill('which model answers?');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByText('Scripted answer: nothing else to report.').waitFor({ timeout: 30000 });
      const chat = provider.requests
        .slice(before)
        .filter((r) => r.lastUser.includes('which model answers?'));
      assert.ok(chat.length > 0, 'the chat reached the provider');
      assert.deepEqual([...new Set(chat.map((r) => r.model))], [kModels[1]]);
    });
  } finally {
    await provider.close();
  }
});

test('chat, sessions, Patrol, fleet and settings: no serious or critical axe violation, and no sideways overflow, at 1280x800 and 390x844', async () => {
  const provider = await startScriptedProvider();
  try {
    await withConsole({ provider, scopes: '*' }, async ({ server, page, token }) => {
      // Content on every page first: a Patrol run (findings, a run row) and a chat with its card.
      assert.equal((await server.api('POST', '/api/ai/patrol/run', token, {})).status, 200);
      await chatUntilApprovalCard(page);
      const ready = {
        chat: () => page.getByRole('region', { name: /Approval needed/ }).waitFor(),
        sessions: () => page.getByRole('link', { name: kRestartPrompt }).waitFor(),
        patrol: () => page.getByRole('region', { name: 'Recent Patrol runs' }).waitFor(),
        fleet: () => page.getByText('Live updates on').waitFor(),
        settings: () => page.getByRole('heading', { name: 'API tokens' }).waitFor(),
      };
      for (const [name, waitFor] of Object.entries(ready)) {
        if (name !== 'chat') {
          await go(page, name);
        }
        await waitFor();
        for (const viewport of [
          { width: 390, height: 844 },
          { width: 1280, height: 800 },
        ]) {
          await page.setViewportSize(viewport);
          assert.deepEqual(
            await seriousViolations(page),
            [],
            `${name} at ${viewport.width}x${viewport.height}`,
          );
        }
        const overflow = await photograph(page, name, waitFor);
        assert.deepEqual(overflow, { '1280x800': 0, '390x844': 0 }, `${name} overflows sideways`);
      }
    });
  } finally {
    await provider.close();
  }
});
