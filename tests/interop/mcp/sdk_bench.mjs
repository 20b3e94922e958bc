// The tools/call round trip through pulse-mcp, driven by the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned in tests/interop/package.json), against the SDK's own stdio
// server answering the same tool from memory (sdk_baseline_server.mjs), in one run (issue 29).
//
// It captures the route's body once from pulse-server (the request pulse-mcp makes for the
// call: same route, same headers), then opens two SDK Clients over the SDK's
// StdioClientTransport: one spawns the real pulse-mcp against that pulse-server, the other
// spawns the baseline server with pulse-mcp's own definition of the tool and the captured bytes.
// Both clients list tools first, so the SDK validates each reply's structuredContent against
// the same outputSchema. After the warm-up it makes N rounds of one call to each, alternating
// which goes first (A B, B A, ...), so that a busy machine slows both alike, and times each
// callTool from the call to the resolved result (the SDK's encode, the pipe hops, the server's
// work, the SDK's decode and validation).
//
// Every reply is checked (not isError, the same number of resources as the captured body, the
// baseline's text the captured bytes); the figures never fail the run.
//
// Usage: node sdk_bench.mjs --modules DIR --mcp PULSE_MCP --server URL --token TOKEN
//          [--tool NAME] [--rounds N] [--warmup N] [--json FILE]
//   --modules  the node_modules directory the SDK is installed in
//   --token    an agent token with monitoring:read
//   --tool     get_fleet_context (default) or get_patrol_control_status
//   --rounds   measured rounds (default 2000); --warmup rounds before them (default 200)
//   --json     also write the figures to FILE
// Prints "ok <check>" or "FAIL <check>: <reason>" lines, the table, then "summary: ..."; exits 1
// when a check failed, 2 on bad usage.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// The read tools this measures, with the route pulse-mcp projects each onto (no arguments).
const kRoutes = {
  get_fleet_context: '/api/agent/fleet-context',
  get_patrol_control_status: '/api/agent/patrol-control/status',
};

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      modules: { type: 'string' },
      mcp: { type: 'string' },
      server: { type: 'string' },
      token: { type: 'string' },
      tool: { type: 'string', default: 'get_fleet_context' },
      rounds: { type: 'string', default: '2000' },
      warmup: { type: 'string', default: '200' },
      json: { type: 'string' },
    },
    strict: true,
  }));
  for (const name of ['modules', 'mcp', 'server', 'token']) {
    if (!options[name]) throw new Error(`--${name} is required`);
  }
  if (!kRoutes[options.tool]) throw new Error(`--tool must be one of ${Object.keys(kRoutes)}`);
  for (const name of ['rounds', 'warmup']) {
    const n = Number(options[name]);
    if (!Number.isInteger(n) || n < 0 || n > 1e6) throw new Error(`--${name} wants a count`);
    options[name] = n;
  }
  if (options.rounds === 0) throw new Error('--rounds must be at least 1');
} catch (error) {
  console.error(`sdk_bench: ${error.message}`);
  process.exit(2);
}

const sdkDir = path.join(options.modules, '@modelcontextprotocol', 'sdk');
const sdkPackage = JSON.parse(readFileSync(path.join(sdkDir, 'package.json'), 'utf8'));
async function importSdk(subpath) {
  const exact = sdkPackage.exports[`./${subpath}`];
  const target = exact ? exact.import : sdkPackage.exports['./*'].import.replace('*', subpath);
  return import(pathToFileURL(path.join(sdkDir, target)).href);
}
const { Client } = await importSdk('client');
const { StdioClientTransport } = await importSdk('client/stdio.js');

let failed = 0;
async function check(name, body) {
  try {
    const detail = await body();
    console.log(`ok ${name}${detail ? ` (${detail})` : ''}`);
    return true;
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
}
function expect(condition, message) {
  if (!condition) throw new Error(message);
}

const tool = options.tool;
// How many entries a reply lists: the resources of a fleet context, the keys of anything else.
const sizeOf = (value) =>
  Array.isArray(value?.resources) ? value.resources.length : Object.keys(value ?? {}).length;

const tmp = mkdtempSync(path.join(os.tmpdir(), 'pulse-sdk-bench-'));
const clients = [];
async function connect(command, args, env) {
  const transport = new StdioClientTransport({ command, args, env, stderr: 'inherit' });
  const client = new Client({ name: 'pulse-sdk-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  clients.push(client);
  return client;
}

let body;
let expected;
let mcp;
let baseline;
async function setUp() {
  const ok = await check(`captured ${kRoutes[tool]} from pulse-server`, async () => {
    const response = await fetch(options.server + kRoutes[tool], {
      headers: { 'X-API-Token': options.token, 'X-Pulse-Agent-Surface': 'pulse_mcp' },
    });
    body = await response.text();
    expect(response.status === 200, `HTTP ${response.status}: ${body.slice(0, 200)}`);
    expected = sizeOf(JSON.parse(body));
    return `${Buffer.byteLength(body)} bytes, ${expected} entries`;
  });
  if (!ok) return false;

  let definition;
  const mcpUp = await check('pulse-mcp lists the tool', async () => {
    mcp = await connect(options.mcp, ['--server', options.server], {
      PULSE_API_TOKEN: options.token,
    });
    const { tools } = await mcp.listTools();
    definition = tools.find((t) => t.name === tool);
    expect(definition, `${tool} is not listed`);
    expect(definition.outputSchema, `${tool} has no outputSchema`);
  });
  if (!mcpUp) return false;

  return check('the SDK baseline server lists the same tool', async () => {
    writeFileSync(path.join(tmp, 'tool.json'), JSON.stringify(definition));
    writeFileSync(path.join(tmp, 'body.json'), body);
    const script = fileURLToPath(new URL('./sdk_baseline_server.mjs', import.meta.url));
    baseline = await connect(process.execPath, [
      script,
      '--modules',
      options.modules,
      '--tool',
      path.join(tmp, 'tool.json'),
      '--body',
      path.join(tmp, 'body.json'),
    ]);
    expect(baseline.getServerVersion()?.name === 'sdk-baseline', 'not the baseline server');
    const { tools } = await baseline.listTools();
    expect(JSON.stringify(tools) === JSON.stringify([definition]), 'a different definition');
  });
}

// One call; throws unless it is a result (not isError) listing what the captured body listed.
async function call(client) {
  const result = await client.callTool({ name: tool, arguments: {} });
  if (result.isError || sizeOf(result.structuredContent) !== expected) {
    throw new Error(`unexpected result: ${JSON.stringify(result).slice(0, 300)}`);
  }
  return result;
}

async function timed(client) {
  const start = process.hrtime.bigint();
  await call(client);
  return Number(process.hrtime.bigint() - start) / 1e3;  // microseconds
}

function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  const mean = sorted.reduce((sum, s) => sum + s, 0) / sorted.length;
  return { p50_us: at(0.5), p99_us: at(0.99), mean_us: mean, calls: sorted.length };
}

async function measure() {
  await check('both servers answer the tool', async () => {
    const fromMcp = await call(mcp);
    const fromBaseline = await call(baseline);
    expect(fromBaseline.content[0].text === body, 'the baseline changed the captured bytes');
    expect(fromMcp.content[0].type === 'text', 'pulse-mcp sent no text content');
    return `${expected} entries each`;
  });
  if (failed) return;
  const series = { mcp: [], baseline: [] };
  await check(`${options.warmup} warm-up and ${options.rounds} measured rounds`, async () => {
    for (let i = 0; i < options.warmup; i += 1) {
      await call(mcp);
      await call(baseline);
    }
    for (let round = 0; round < options.rounds; round += 1) {
      if (round % 2 === 0) {
        series.mcp.push(await timed(mcp));
        series.baseline.push(await timed(baseline));
      } else {
        series.baseline.push(await timed(baseline));
        series.mcp.push(await timed(mcp));
      }
    }
  });
  if (failed) return;
  const figures = {
    tool,
    body_bytes: Buffer.byteLength(body),
    rounds: options.rounds,
    load_average: os.loadavg().map((l) => Number(l.toFixed(2))),
    pulse_mcp: summarize(series.mcp),
    sdk_server: summarize(series.baseline),
  };
  const ratio = (key) => figures.pulse_mcp[key] / figures.sdk_server[key];
  figures.ratio = { p50: ratio('p50_us'), p99: ratio('p99_us'), mean: ratio('mean_us') };
  const row = (name, f) =>
    `  ${name.padEnd(34)} ${f.p50_us.toFixed(1).padStart(9)} ${f.p99_us.toFixed(1).padStart(9)}` +
    ` ${f.mean_us.toFixed(1).padStart(9)}`;
  console.log(
    `\ntools/call ${tool} (${figures.body_bytes} bytes) through the SDK client, ` +
      `${options.rounds} rounds A B / B A after ${options.warmup} warm-up rounds ` +
      `(microseconds; load average ${figures.load_average.join(' ')}):`,
  );
  console.log(
    `  ${'server'.padEnd(34)} ${'p50'.padStart(9)} ${'p99'.padStart(9)} ${'mean'.padStart(9)}`,
  );
  console.log(row('pulse-mcp (pulse-server behind it)', figures.pulse_mcp));
  console.log(row('SDK stdio server, from memory', figures.sdk_server));
  console.log(
    `  ${'ratio pulse-mcp / SDK server'.padEnd(34)} ${figures.ratio.p50.toFixed(2).padStart(9)}` +
      ` ${figures.ratio.p99.toFixed(2).padStart(9)} ${figures.ratio.mean.toFixed(2).padStart(9)}`,
  );
  if (options.json) writeFileSync(options.json, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(
    `summary: p50 ${figures.pulse_mcp.p50_us.toFixed(1)} us through pulse-mcp, ` +
      `${figures.sdk_server.p50_us.toFixed(1)} us from the SDK server, ` +
      `ratio ${figures.ratio.p50.toFixed(2)}`,
  );
}

try {
  if (await setUp()) await measure();
} finally {
  for (const client of clients) await client.close().catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
