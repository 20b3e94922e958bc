// The baseline of the pulse-mcp round-trip benchmark (sdk_bench.mjs, issue 29): an MCP stdio
// server built on the official TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// tests/interop/package.json) that answers one tool from memory. It lists the tool with the
// definition it is given (pulse-mcp's own, so a client validates the same outputSchema against
// both servers) and answers every tools/call of it with the same CallToolResult: the bytes
// pulse-server returned for the route, captured once before it started, as the text content and,
// parsed once here, as structuredContent. The SDK's low-level Server does no more per call than
// route the request, run the handler and serialize the result, so this is the least an MCP stdio
// server on the SDK costs a client for this reply.
//
// Usage: node sdk_baseline_server.mjs --modules DIR --tool FILE --body FILE
//   --modules  the node_modules directory the SDK is installed in
//   --tool     a JSON file holding one Tool object of a tools/list result
//   --body     the route's body, as pulse-server sent it (a JSON object)
// Speaks JSON-RPC on stdin and stdout until stdin closes; exits 2 on bad usage.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

let options;
let tool;
let body;
try {
  ({ values: options } = parseArgs({
    options: {
      modules: { type: 'string' },
      tool: { type: 'string' },
      body: { type: 'string' },
    },
    strict: true,
  }));
  for (const name of ['modules', 'tool', 'body']) {
    if (!options[name]) throw new Error(`--${name} is required`);
  }
  tool = JSON.parse(readFileSync(options.tool, 'utf8'));
  body = readFileSync(options.body, 'utf8');
  if (typeof tool?.name !== 'string') throw new Error('--tool holds no tool name');
} catch (error) {
  console.error(`sdk_baseline_server: ${error.message}`);
  process.exit(2);
}

const sdkDir = path.join(options.modules, '@modelcontextprotocol', 'sdk');
const sdkPackage = JSON.parse(readFileSync(path.join(sdkDir, 'package.json'), 'utf8'));
async function importSdk(subpath) {
  const exact = sdkPackage.exports[`./${subpath}`];
  const target = exact ? exact.import : sdkPackage.exports['./*'].import.replace('*', subpath);
  return import(pathToFileURL(path.join(sdkDir, target)).href);
}
const { Server } = await importSdk('server/index.js');
const { StdioServerTransport } = await importSdk('server/stdio.js');
const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } =
  await importSdk('types.js');

// Built once: every call answers this very object.
const result = {
  content: [{ type: 'text', text: body }],
  structuredContent: JSON.parse(body),
};

const server = new Server(
  { name: 'sdk-baseline', version: '1.0.0' },
  { capabilities: { tools: {} } },
);
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [tool] }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name !== tool.name) {
    throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
  }
  return result;
});
process.stdin.on('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
