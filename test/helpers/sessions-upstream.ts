// A small MCP server over Streamable HTTP on 127.0.0.1, on the 1.x SDK's low-level Server, for the tests of
// how fastsvc treats an upstream's sessions and connections (test/helpers/sdk-http-host.ts counts them:
// sessions opened, sessions ended by DELETE, TCP connections open now). It declares tools and resources and
// has no resources/templates/list handler, so the SDK answers that method -32601 (method not found), as
// such a server does in the wild. Tools: `echo`; `hold`, which answers once release() is called; and `drop`,
// whose request's connection is destroyed before the server answers (a network failure, the server and its
// session still alive). failLists(true) makes
// tools/list fail (-32603), so every connect fails after initialize has opened a session.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListResourcesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { hostSdkServer, type SdkHost } from './sdk-http-host.js';

export const PAGE = 'sessions://page';

export interface SessionsUpstream extends SdkHost {
  /** While true, tools/list answers -32603. */
  failLists(on: boolean): void;
  /** hold calls waiting now; release() answers them. */
  holding(): number;
  release(): void;
}

export async function startSessionsUpstream(): Promise<SessionsUpstream> {
  let failing = false;
  const held: (() => void)[] = [];
  const build = () => {
    const server = new Server({ name: 'sessions', version: '1.0.0' }, { capabilities: { tools: {}, resources: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      if (failing) throw new McpError(-32603, 'the tool list is not available');
      return { tools: ['echo', 'hold', 'drop'].map((name) => ({ name, description: name, inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } } })) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req) => {
      if (req.params.name === 'hold') await new Promise<void>((resolve) => held.push(resolve));
      return { content: [{ type: 'text', text: String(req.params.arguments?.text ?? req.params.name) }] };
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [{ uri: PAGE, name: 'page', mimeType: 'text/plain' }] }));
    server.setRequestHandler(ReadResourceRequestSchema, async (req) => ({ contents: [{ uri: req.params.uri, mimeType: 'text/plain', text: 'a page' }] }));
    return server;
  };
  const host = await hostSdkServer(build, async (req) => {
    if (req.method !== 'POST') return undefined;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method?: string; params?: { name?: string } };
    if (body.method === 'tools/call' && body.params?.name === 'drop') {
      req.socket.destroy();
      return new Promise(() => undefined); // this request is never answered: its connection is gone
    }
    return body;
  });
  return {
    ...host,
    failLists: (on) => void (failing = on),
    holding: () => held.length,
    release: () => held.splice(0).forEach((done) => done()),
  };
}
