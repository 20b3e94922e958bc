// pulse-mcp driven by the official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// tests/interop/package.json): its Client over its StdioClientTransport spawns the real
// pulse-mcp against a live pulse-server on loopback. For each protocol version pulse-mcp
// supports, the client offers that version and checks that it is the one agreed, then lists
// tools and prompts, pings, calls read tools, reads a resource, renders a prompt, plans an
// action and gets the governed refusals. The SDK parses every reply with its schemas (and a
// tool's structuredContent against the tool's outputSchema); a reply it rejects fails the check
// that asked for it, and a line it cannot read fails the session.
//
// Usage: node sdk_client_test.mjs --modules DIR --mcp PULSE_MCP --server URL
//          --token TOKEN --planner-token TOKEN
//   --modules        the node_modules directory the SDK is installed in
//   --token          a token with every scope ("*")
//   --planner-token  a token without actions:approve (monitoring:read,ai:execute,actions:plan)
// Prints one line per check, "ok <check>" or "FAIL <check>: <reason>", then a summary; exits 1
// when any check failed, 2 on bad usage.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const kVersions = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
// A version the SDK speaks and pulse-mcp does not: pulse-mcp must answer with its newest.
const kUnsupportedVersion = '2024-10-07';

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      modules: { type: 'string' },
      mcp: { type: 'string' },
      server: { type: 'string' },
      token: { type: 'string' },
      'planner-token': { type: 'string' },
    },
    strict: true,
  }));
  for (const name of ['modules', 'mcp', 'server', 'token', 'planner-token']) {
    if (!options[name]) throw new Error(`--${name} is required`);
  }
} catch (error) {
  console.error(`sdk_client_test: ${error.message}`);
  process.exit(2);
}

// Imports a module of the SDK through the package's own "exports" map (its ESM build), from
// wherever --modules says it is installed.
const sdkDir = path.join(options.modules, '@modelcontextprotocol', 'sdk');
const sdkPackage = JSON.parse(readFileSync(path.join(sdkDir, 'package.json'), 'utf8'));
async function importSdk(subpath) {
  const exact = sdkPackage.exports[`./${subpath}`];
  const target = exact ? exact.import : sdkPackage.exports['./*'].import.replace('*', subpath);
  return import(pathToFileURL(path.join(sdkDir, target)).href);
}
const { Client } = await importSdk('client');
const { StdioClientTransport } = await importSdk('client/stdio.js');
const { McpError, SUPPORTED_PROTOCOL_VERSIONS } = await importSdk('types.js');

// ---- checks ----

let failed = 0;
let passed = 0;
async function check(name, body) {
  try {
    const detail = await body();
    passed += 1;
    console.log(`ok ${name}${detail ? ` (${detail})` : ''}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
function expect(condition, message) {
  if (!condition) throw new Error(message);
}
const json = (value) => JSON.stringify(value).slice(0, 300);

// ---- the transport: the SDK's stdio transport, offering a chosen protocol version ----

// The SDK's Client always offers its newest version. This wraps its StdioClientTransport and
// rewrites the outgoing initialize request's protocolVersion, so each version pulse-mcp
// supports is offered in turn; the Client reports the version it agreed through
// setProtocolVersion. Lines the SDK cannot read as JSON-RPC arrive as transport errors.
class OfferingTransport {
  constructor(inner, version) {
    this.inner = inner;
    this.version = version;
    this.offered = undefined;
    this.agreed = undefined;
    this.errors = [];
  }
  async start() {
    this.inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => {
      this.errors.push(error);
      this.onerror?.(error);
    };
    await this.inner.start();
  }
  async send(message, sendOptions) {
    if (message.method === 'initialize' && message.id !== undefined) {
      this.offered = this.version;
      message = { ...message, params: { ...message.params, protocolVersion: this.version } };
    }
    return this.inner.send(message, sendOptions);
  }
  async close() {
    return this.inner.close();
  }
  setProtocolVersion(version) {
    this.agreed = version;
  }
}

async function connect(version, token) {
  const transport = new OfferingTransport(
    new StdioClientTransport({
      command: options.mcp,
      args: ['--server', options.server],
      env: { PULSE_API_TOKEN: token },
      stderr: 'inherit',
    }),
    version,
  );
  const client = new Client({ name: 'pulse-interop-sdk', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
}

// ---- what every version must do ----

// The request ids plan_action needs must not repeat across sessions of one run.
const runId = `${process.pid}-${Date.now()}`;

async function session(version) {
  const tag = (name) => `${version} ${name}`;
  let client;
  let transport;
  await check(tag('initialize'), async () => {
    ({ client, transport } = await connect(version, options.token));
    expect(transport.offered === version, `offered ${transport.offered}, not ${version}`);
    expect(transport.agreed === version, `agreed ${transport.agreed}, offered ${version}`);
    const info = client.getServerVersion();
    expect(info?.name === 'pulse-mcp', `serverInfo ${json(info)}`);
    const caps = client.getServerCapabilities();
    expect(caps?.tools && caps?.prompts && caps?.resources, `capabilities ${json(caps)}`);
    expect(client.getInstructions()?.includes('governed'), 'no operating-model instructions');
    return `agreed ${transport.agreed}`;
  });
  if (!client) return;

  let tools = [];
  await check(tag('tools/list'), async () => {
    ({ tools } = await client.listTools());
    const names = tools.map((t) => t.name);
    for (const name of ['get_fleet_context', 'list_findings', 'plan_action', 'decide_action']) {
      expect(names.includes(name), `${name} is not listed`);
    }
    expect(!names.includes('subscribe_events'), 'the event stream is listed as a tool');
    return `${tools.length} tools`;
  });

  await check(tag('prompts/list'), async () => {
    const { prompts } = await client.listPrompts();
    const names = prompts.map((p) => p.name);
    expect(names.includes('pulse_investigate_resource'), `prompts ${json(names)}`);
    return `${prompts.length} prompts`;
  });

  await check(tag('ping'), async () => {
    await client.ping();
  });

  await check(tag('read tool get_fleet_context'), async () => {
    const result = await client.callTool({ name: 'get_fleet_context', arguments: {} });
    expect(!result.isError, `isError: ${json(result)}`);
    expect(Array.isArray(result.structuredContent?.resources), 'no resources array');
    expect(result.structuredContent.resources.length > 0, 'an empty fleet');
    expect(result.content?.[0]?.type === 'text', 'no text content');
    return `${result.structuredContent.resources.length} resources`;
  });

  await check(tag('read tool list_findings as items and count'), async () => {
    const result = await client.callTool({
      name: 'list_findings',
      arguments: { include_resolved: true, limit: 5 },
    });
    expect(!result.isError, `isError: ${json(result)}`);
    expect(Array.isArray(result.structuredContent?.items), `no items: ${json(result)}`);
    expect(result.structuredContent.count === result.structuredContent.items.length, 'count');
  });

  let uri;
  await check(tag('resources/list'), async () => {
    const { resources } = await client.listResources();
    expect(resources.length > 0, 'no resources');
    uri = resources.find((r) => r.uri === 'pulse://resource/vm%3A101')?.uri ?? resources[0].uri;
    expect(uri.startsWith('pulse://resource/'), `uri ${uri}`);
    return `${resources.length} resources`;
  });

  await check(tag('resources/read'), async () => {
    expect(uri, 'no resource to read');
    const { contents } = await client.readResource({ uri });
    expect(contents.length === 1 && contents[0].uri === uri, `contents ${json(contents)}`);
    expect(contents[0].mimeType === 'application/json', `mimeType ${contents[0].mimeType}`);
    const context = JSON.parse(contents[0].text);
    expect(typeof context.canonicalId === 'string', `context ${json(context)}`);
    return uri;
  });

  await check(tag('prompts/get'), async () => {
    const prompt = await client.getPrompt({
      name: 'pulse_investigate_resource',
      arguments: { resourceId: 'vm:101' },
    });
    const text = prompt.messages?.[0]?.content?.text ?? '';
    expect(text.includes('vm:101'), `prompt ${json(prompt)}`);
  });

  const plan = (suffix) => ({
    name: 'plan_action',
    arguments: {
      requestId: `sdk-${runId}-${version}-${suffix}`,
      resourceId: 'vm:101',
      capabilityName: 'restart',
      params: {},
      reason: 'interop test of the MCP SDK',
      requestedBy: 'pulse-interop-sdk',
    },
  });

  let actionId;
  await check(tag('plan_action'), async () => {
    const result = await client.callTool(plan('operator'));
    expect(!result.isError, `isError: ${json(result)}`);
    actionId = result.structuredContent?.actionId;
    expect(typeof actionId === 'string' && actionId.length > 0, `plan ${json(result)}`);
    return actionId;
  });

  await check(tag('refusal: an agent may not approve'), async () => {
    expect(actionId, 'no planned action');
    const result = await client.callTool({
      name: 'decide_action',
      arguments: { actionId, outcome: 'approved', reason: 'interop' },
    });
    expect(result.isError === true, `not an error: ${json(result)}`);
    const code = result.structuredContent?.error;
    expect(code === 'action_approval_forbidden', `code ${code}`);
    return code;
  });

  await check(tag('argument error is a tool result'), async () => {
    const result = await client.callTool({ name: 'get_resource_context', arguments: {} });
    expect(result.isError === true, `not an error: ${json(result)}`);
    expect(result.structuredContent?.error === 'invalid_request', json(result));
    expect(result.structuredContent?.details?.resourceId === 'required', json(result));
  });

  await check(tag('unknown tool is a protocol error'), async () => {
    try {
      await client.callTool({ name: 'subscribe_events', arguments: {} });
    } catch (error) {
      expect(error instanceof McpError && error.code === -32602, `threw ${error}`);
      return `${error.code}`;
    }
    throw new Error('subscribe_events was callable');
  });

  await client.close();

  // A token without actions:approve: it may plan, and approving is refused for the scope.
  await check(tag('refusal: a token without actions:approve'), async () => {
    const planner = await connect(version, options['planner-token']);
    try {
      const planned = await planner.client.callTool(plan('planner'));
      expect(!planned.isError, `plan refused: ${json(planned)}`);
      const result = await planner.client.callTool({
        name: 'decide_action',
        arguments: { actionId: planned.structuredContent.actionId, outcome: 'approved' },
      });
      expect(result.isError === true, `not an error: ${json(result)}`);
      const envelope = result.structuredContent;
      expect(envelope?.error === 'missing_scope', `code ${envelope?.error}`);
      expect(envelope?.requiredScope === 'actions:approve', `scope ${envelope?.requiredScope}`);
      expect(planner.transport.errors.length === 0, `${planner.transport.errors[0]}`);
      return envelope.error;
    } finally {
      await planner.client.close();
    }
  });

  await check(tag('every line was JSON-RPC the SDK could read'), async () => {
    expect(transport.errors.length === 0, `${transport.errors.length} transport errors: ` +
      `${transport.errors[0]}`);
  });
}

for (const version of kVersions) {
  expect(SUPPORTED_PROTOCOL_VERSIONS.includes(version), `the SDK does not speak ${version}`);
  await session(version);
}

await check(`${kUnsupportedVersion} negotiate: an unsupported version gets the newest`, async () => {
  const { client, transport } = await connect(kUnsupportedVersion, options.token);
  await client.close();
  expect(transport.agreed === kVersions[0], `agreed ${transport.agreed}`);
  return `agreed ${transport.agreed}`;
});

console.log(`summary: ${passed + failed} checks, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
