// The browser suite's harness: a real pulse-server (PULSE_SERVER_BINARY) on a free loopback port
// with a fresh data dir and the demo fleet, tokens minted with its own `token create`, and
// Debian's chromium (PULSE_CHROMIUM) driven headless by playwright-core. Every test starts its
// own server and browser and stops both, so no state crosses tests. run.mjs sets the
// environment (ctest passes it on) and checks the tools before any test runs.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);

export const serverBinary = process.env.PULSE_SERVER_BINARY;
export const chromiumPath = process.env.PULSE_CHROMIUM || '/usr/bin/chromium';
export const artifactsDir = process.env.PULSE_CONSOLE_ARTIFACTS || join(tmpdir(), 'console-artifacts');

// The sizes every page is checked and photographed at: a laptop and a phone.
export const kViewports = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];

// `pulse-server token create`: the token. Throws with the command's stderr when it fails.
export function mintToken(dataDir, { name = 'operator', scopes = '*', kind = '' } = {}) {
  const args = ['token', 'create', '--data-dir', dataDir, '--name', name, '--scopes', scopes];
  if (kind) {
    args.push('--kind', kind);
  }
  const result = spawnSync(serverBinary, args, { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`token create failed (${result.status}): ${result.stderr}`);
  }
  return result.stdout.trim();
}

// One running pulse-server. Resolves once it printed its listen line.
export async function startServer({ args = [], patrolOnStart = false } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'pulse-console-'));
  const dataDir = join(root, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  const child = spawn(
    serverBinary,
    [
      '--data-dir', dataDir,
      '--listen', '127.0.0.1:0',
      '--fleet', 'demo',
      '--patrol-on-start', patrolOnStart ? 'on' : 'off',
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pulse-server did not start:\n${log}`)), 20000);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => {
      log += text;
      const match = /listening on 127\.0\.0\.1:(\d+)/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pulse-server exited (${code}) before listening:\n${log}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    port,
    url,
    dataDir,
    log: () => log,
    mint: (options) => mintToken(dataDir, options),
    // A plain API request with a token, as a script or the CLI sends it.
    async api(method, path, token, body) {
      const headers = { 'X-API-Token': token };
      if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
      }
      const response = await fetch(url + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      let json = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = null;
      }
      return { status: response.status, headers: response.headers, text, json };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

// Headless chromium with the flags this sandbox needs: no sandbox (root), no GPU, and none of
// the background connections to Google's hosts that a closed network refuses.
export async function launchBrowser() {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

// A new page that records what would otherwise pass unseen: script errors and Content-Security-
// Policy refusals (a console that breaks its own CSP is broken in every browser).
export async function newPage(browser, viewport = kViewports[0]) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (error) => page.problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) {
      page.problems.push(`CSP: ${message.text()}`);
    }
  });
  return page;
}

// Opens the console and signs in with `token` through the form.
export async function signIn(page, server, token) {
  await page.goto(`${server.url}/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Console pages' }).waitFor();
}

let axeSource = '';

// axe-core over the page as it is: the violations of serious or critical impact. axe is
// evaluated through the DevTools protocol, which the page's CSP does not govern; nothing is
// injected into the page's own markup.
export async function seriousViolations(page) {
  if (!axeSource) {
    axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  }
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const run = await axe.run(document, { resultTypes: ['violations'] });
    return run.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((node) => node.target.join(' ')),
    }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

// How far the page is wider than its viewport (0 when nothing overflows sideways).
export async function horizontalOverflow(page) {
  return page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
}

// Photographs the page at each viewport into the artifacts dir as <name>-<w>x<h>.png and
// returns the overflow at each size; waitFor (optional) re-checks the page is ready after the
// resize.
export async function photograph(page, name, waitFor = async () => {}) {
  mkdirSync(artifactsDir, { recursive: true });
  const overflows = {};
  for (const viewport of kViewports) {
    await page.setViewportSize(viewport);
    await waitFor();
    const size = `${viewport.width}x${viewport.height}`;
    await page.screenshot({ path: join(artifactsDir, `${name}-${size}.png`), fullPage: true });
    overflows[size] = await horizontalOverflow(page);
  }
  await page.setViewportSize(kViewports[0]);
  return overflows;
}

// Polls `probe` until it returns a truthy value (resolved) or `timeoutMs` passes (rejected).
export async function eventually(probe, { timeoutMs = 20000, intervalMs = 200, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await probe();
    if (last) {
      return last;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
