// A stdio MCP server on the 1.x SDK's low-level Server that exits, saying why on stderr, when its first
// message is not `initialize` — what servers built on SDKs that terminate on any pre-initialize request do
// with a 2026-07-28 client's server/discover probe. Started as `node strict-stdio.mjs`. Its tool `echo`
// answers its text; `die` writes a line to stderr and exits with code 7, as a server that crashes mid-run.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'strict', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: ['echo', 'die'].map((name) => ({ name, description: name, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } })),
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  if (req.params.name === 'die') {
    process.stderr.write('strict: dying on purpose\n');
    process.exit(7);
  }
  return { content: [{ type: 'text', text: String(req.params.arguments?.text ?? '') }] };
});
const transport = new StdioServerTransport();
await server.connect(transport);
const deliver = transport.onmessage;
let first = true;
transport.onmessage = (message, extra) => {
  if (first && message.method !== 'initialize') {
    process.stderr.write(`strict: ${message.method} before initialize; exiting\n`);
    process.exit(1);
  }
  first = false;
  deliver?.(message, extra);
};
