// Upstream for issue 31's start-up measurement: a stdio MCP server (the SDK's low-level Server) with N tools whose
// names and distinct input schemas are the large-manifest generator's (bench/lib/gen-manifest.mjs), as an upstream
// fronting a generated API catalog would list them. tools/call answers `NAME ARGS-AS-JSON`. With MARK_FILE, each
// tools/list appends the wall-clock time it was answered (Date.now(), one line each) to it: the moment "the upstream
// answered", which the harness compares with the moment fastsvc serves the imported tools.
//   node bench/peers/many-tools-stdio.mjs N [MARK_FILE]
import { appendFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { inputSchema, toolName } from '../lib/gen-manifest.mjs';

const n = Number(process.argv[2]);
const mark = process.argv[3];
if (!(Number.isInteger(n) && n > 0)) {
  console.error('usage: many-tools-stdio.mjs N [MARK_FILE]');
  process.exit(2);
}

const tools = Array.from({ length: n }, (_, i) => ({ name: toolName(i), description: `Generated operation ${i}.`, inputSchema: inputSchema(i) }));
const names = new Set(tools.map((t) => t.name));

const server = new Server({ name: `many-tools-${n}`, version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => {
  if (mark) appendFileSync(mark, `${Date.now()}\n`);
  return { tools };
});
server.setRequestHandler(CallToolRequestSchema, ({ params }) => (names.has(params.name)
  ? { content: [{ type: 'text', text: `${params.name} ${JSON.stringify(params.arguments ?? {})}` }] }
  : { content: [{ type: 'text', text: `unknown tool ${params.name}` }], isError: true }));
await server.connect(new StdioServerTransport());
