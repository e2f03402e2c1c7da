// The official MCP SDK Client against /mcp (StreamableHTTPClientTransport) and /ws
// (WebSocketClientTransport): list, call, read, get, complete, progress, elicitation, a denied
// call and a bad token — the same cases over both transports.
//
// The SDK 1.x WebSocketClientTransport uses the global WebSocket, which Node 20 lacks and whose
// WHATWG API cannot set headers. A Node client sends the bearer by installing, as
// globalThis.WebSocket, a subclass of the `ws` package's WebSocket that adds the header.

import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { ElicitRequestSchema, McpError, ProgressNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import WebSocket from 'ws';
import { startMcpApp, type McpApp } from '../helpers/mcp-app.js';
import { waitFor } from '../helpers/wait.js';

function bearerWebSocket(token: string): typeof globalThis.WebSocket {
  return class extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols, { headers: { authorization: `Bearer ${token}` } });
    }
  } as unknown as typeof globalThis.WebSocket;
}

interface Flavor {
  name: string;
  transport(url: string, token: string): Transport;
  /** Assert how this transport reports a call the caller lacks scopes for. */
  denied(e: unknown): void;
  /** Assert how this transport reports a bad token at connect. */
  unauthenticated(e: unknown): void;
}

const FLAVORS: Flavor[] = [
  {
    name: 'Streamable HTTP (/mcp)',
    transport: (url, token) => new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    denied: (e) => {
      assert.ok(e instanceof StreamableHTTPError, String(e));
      assert.equal(e.code, 403);
    },
    unauthenticated: (e) => {
      assert.ok(e instanceof StreamableHTTPError, String(e));
      assert.equal(e.code, 401);
    },
  },
  {
    name: 'WebSocket (/ws)',
    transport: (url, token) => {
      (globalThis as { WebSocket?: unknown }).WebSocket = bearerWebSocket(token);
      return new WebSocketClientTransport(new URL(`${url.replace(/^http/, 'ws')}/ws`));
    },
    denied: (e) => {
      assert.ok(e instanceof McpError, String(e));
      assert.equal(e.code, -32003);
      assert.deepEqual((e.data as { missing: string[] }).missing, ['notes.write']);
    },
    unauthenticated: (e) => assert.match(String((e as Error)?.message ?? e), /401/),
  },
];

describe('MCP SDK client', () => {
  let app: McpApp;
  before(async () => {
    app = await startMcpApp();
  });
  after(async () => {
    delete (globalThis as { WebSocket?: unknown }).WebSocket;
    await app.close();
  });

  for (const flavor of FLAVORS) {
    describe(flavor.name, () => {
      let client: Client;
      beforeEach(async () => {
        client = new Client({ name: 'sdk-e2e', version: '1.0.0' }, { capabilities: { elicitation: {} } });
        await client.connect(flavor.transport(app.url, app.tokens.reader));
      });
      afterEach(() => client.close());

      it('initializes and lists only what the token may use', async () => {
        assert.deepEqual(client.getServerVersion(), { name: 'notes', version: '1.2.3' });
        assert.ok(client.getServerCapabilities()?.tools);
        const tools = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(tools.includes('notes.read') && tools.includes('echo'));
        assert.ok(!tools.includes('notes.write'));
        assert.deepEqual((await client.listResources()).resources.map((r) => r.uri), ['notes://readme']);
        assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ['summarize']);
      });

      it('calls a tool, reads a resource, gets a prompt and completes an argument', async () => {
        assert.deepEqual((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).content, [{ type: 'text', text: 'hi' }]);
        assert.deepEqual((await client.readResource({ uri: 'notes://readme' })).contents, [{ uri: 'notes://readme', mimeType: 'text/plain', text: 'read me' }]);
        const prompt = await client.getPrompt({ name: 'summarize', arguments: { topic: 'cats' } });
        assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: 'Summarize cats' } }]);
        const done = await client.complete({ ref: { type: 'ref/prompt', name: 'summarize' }, argument: { name: 'topic', value: 'ca' } });
        assert.deepEqual(done.completion.values, ['cats', 'cars']);
      });

      it('receives progress and answers an elicitation the tool sends', async () => {
        // The progress notification is read here, not through callTool's onprogress: the client drops a progress
        // notification whose request's answer it read in the same turn (over /ws when both frames came in one read).
        const progress: unknown[] = [];
        client.setNotificationHandler(ProgressNotificationSchema, (n) => void progress.push(n.params));
        await client.callTool({ name: 'chatty', _meta: { progressToken: 'chatty-1' } });
        await waitFor(() => (progress.length ? true : undefined), 'the progress notification');
        assert.deepEqual(progress, [{ progressToken: 'chatty-1', progress: 1, total: 2 }]);
        client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
        assert.deepEqual((await client.callTool({ name: 'ask' })).content, [{ type: 'text', text: 'hello Ada' }]);
      });

      it('is refused a tool its token lacks the scope for', async () => {
        let caught: unknown;
        try {
          await client.callTool({ name: 'notes.write' });
        } catch (e) {
          caught = e;
        }
        flavor.denied(caught);
        assert.deepEqual((await client.callTool({ name: 'notes.read' })).content, [{ type: 'text', text: 'all notes' }]);
      });

      it('cannot connect with a bad token', async () => {
        const other = new Client({ name: 'sdk-e2e-bad', version: '1.0.0' });
        let caught: unknown;
        try {
          await other.connect(flavor.transport(app.url, 'not-the-token'));
        } catch (e) {
          caught = e;
        }
        flavor.unauthenticated(caught);
        await other.close();
      });
    });
  }
});
