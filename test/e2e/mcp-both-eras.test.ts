// Both MCP eras against the real `svc serve` (npm start's manifest, OAuth on, a static bearer
// token from SVC_TOKEN): @modelcontextprotocol/client 2.4 negotiates 2026-07-28 (asserted)
// with a bearer token and with its own OAuth flow including the 403 insufficient_scope step-up,
// and never opens a session; the 1.x SDK client still gets the 2025 initialize handshake and an
// Mcp-Session-Id; /ws serves a modern message statelessly and a 2025 session on the same socket.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { auth as modernAuth, Client as ModernClient, StreamableHTTPClientTransport as ModernTransport, UnauthorizedError as ModernUnauthorized } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { ScriptedProvider } from './oauth-harness.js';
import { secret } from '../helpers/secrets.js';

// Nothing listens here: the scripted browser stops at the first redirect off the server.
const CALLBACK = 'http://127.0.0.1:59998/callback';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';

/** A fetch that records every request's and response's session header, to show the modern era never uses one. */
function recordingFetch(seen: { sent: (string | null)[]; got: (string | null)[]; methods: (string | null)[] }): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    seen.sent.push(headers.get('mcp-session-id'));
    seen.methods.push(headers.get('mcp-method'));
    const res = await fetch(input, init);
    seen.got.push(res.headers.get('mcp-session-id'));
    return res;
  };
}

describe('MCP 2026-07-28 and 2025-11-25 side by side (real svc serve, real clients)', function () {
  this.timeout(60_000);
  let srv: Served;
  const token = secret(randomBytes(24).toString('base64url'));

  before(async () => {
    if (!existsSync(join(ROOT, 'demo', 'notes.db'))) execFileSync(process.execPath, [join(ROOT, 'scripts', 'make-demo-db.mjs')], { cwd: ROOT });
    srv = await serveManifest(readFileSync(join(ROOT, 'svc.yaml'), 'utf8'), { copy: { demo: 'demo' }, env: { SVC_TOKEN: token } });
  });

  after(() => srv?.stop());

  it('client 2.4 with a bearer token negotiates 2026-07-28 and lists, calls, reads and gets with no session', async () => {
    const seen = { sent: [] as (string | null)[], got: [] as (string | null)[], methods: [] as (string | null)[] };
    const client = new ModernClient({ name: 'eras-e2e', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const transport = new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => token }, fetch: recordingFetch(seen) });
    await client.connect(transport);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.equal(client.getProtocolEra(), 'modern');
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'greet.hello'), JSON.stringify(tools.tools.map((t) => t.name)));
      const called = await client.callTool({ name: 'greet.hello', arguments: { name: 'Modern' } });
      assert.deepEqual(called.content, [{ type: 'text', text: 'Hello, Modern!' }]);
      const read = await client.readResource({ uri: 'docs://welcome' });
      assert.equal(read.contents[0]?.uri, 'docs://welcome');
      assert.ok('text' in read.contents[0]! && read.contents[0].text.length > 0);
      const prompt = await client.getPrompt({ name: 'notes.summarize', arguments: { topic: 'hello' } });
      assert.ok(prompt.messages.length > 0);
    } finally {
      await client.close();
    }
    assert.ok(seen.methods.includes('server/discover'), `the client probed server/discover: ${seen.methods.join(', ')}`);
    assert.ok(!seen.methods.includes('initialize'));
    assert.deepEqual(seen.sent.filter((v) => v !== null), [], 'no request carried Mcp-Session-Id');
    assert.deepEqual(seen.got.filter((v) => v !== null), [], 'no response minted Mcp-Session-Id');
  });

  it('client 2.4 with its own OAuth flow: 2026-07-28, a 403 insufficient_scope naming the scope, step-up, then success', async () => {
    const provider = new ScriptedProvider(CALLBACK, 'eras-e2e 2.4');
    const mcpUrl = new URL(`${srv.url}/mcp`);
    assert.equal(await modernAuth(provider as never, { serverUrl: mcpUrl, scope: 'greet.use' }), 'REDIRECT');
    assert.equal(await modernAuth(provider as never, { serverUrl: mcpUrl, authorizationCode: await provider.code(), iss: provider.iss }), 'AUTHORIZED');
    assert.equal(provider.saved?.scope, 'greet.use');
    const transport = new ModernTransport(mcpUrl, { authProvider: provider as never });
    const client = new ModernClient({ name: 'eras-e2e-oauth', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(transport);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.deepEqual((await client.callTool({ name: 'greet.hello', arguments: { name: 'OAuth' } })).content, [{ type: 'text', text: 'Hello, OAuth!' }]);
      const note = { title: `added by client 2.4 ${process.pid}`, body: 'after a step-up' };
      await assert.rejects(client.callTool({ name: 'notes.add', arguments: note }), ModernUnauthorized);
      assert.equal(provider.authorizationUrls.length, 2, 'the 403 started one new authorization');
      const stepUp = provider.authorizationUrls.at(-1)!;
      assert.ok(stepUp.searchParams.get('scope')?.split(' ').includes('notes.write'), `step-up asks for notes.write: ${stepUp.searchParams.get('scope')}`);
      await transport.finishAuth(await provider.code(), provider.iss);
      assert.ok(provider.saved?.scope?.split(' ').includes('notes.write'));
      const added = await client.callTool({ name: 'notes.add', arguments: note });
      assert.notEqual(added.isError, true, JSON.stringify(added));
    } finally {
      await client.close();
    }
  });

  it('the 1.x SDK client still gets the 2025 handshake: initialize, a session id, 2025-11-25', async () => {
    const transport = new LegacyTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const client = new LegacyClient({ name: 'eras-e2e-legacy', version: '1.0.0' });
    await client.connect(transport);
    try {
      assert.equal(transport.protocolVersion, '2025-11-25');
      assert.match(transport.sessionId ?? '', /^[0-9a-f-]{36}$/);
      const called = await client.callTool({ name: 'greet.hello', arguments: { name: 'Legacy' } });
      assert.deepEqual(called.content, [{ type: 'text', text: 'Hello, Legacy!' }]);
      assert.equal((called as Record<string, unknown>).resultType, undefined, 'no 2026 fields on the legacy path');
      const tools = await client.listTools();
      assert.equal((tools as Record<string, unknown>).ttlMs, undefined);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });

  it('/ws: a modern message is served statelessly, and a 2025 session runs on the same socket', async () => {
    const ws = new WebSocket(`${srv.url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
    const answers = new Map<number, Record<string, unknown>>();
    const waiters = new Map<number, (m: Record<string, unknown>) => void>();
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as Record<string, unknown>;
      if (typeof m.id === 'number') {
        answers.set(m.id, m);
        waiters.get(m.id)?.(m);
      }
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const ask = (m: Record<string, unknown>) => new Promise<Record<string, unknown>>((resolve) => {
      waiters.set(m.id as number, resolve);
      ws.send(JSON.stringify({ jsonrpc: '2.0', ...m }));
    });
    const modernMeta = { [META_VERSION]: '2026-07-28', [META_CAPS]: {} };
    try {
      const first = await ask({ id: 1, method: 'tools/call', params: { name: 'greet.hello', arguments: { name: 'Socket' }, _meta: modernMeta } });
      assert.deepEqual((first.result as Record<string, unknown>).content, [{ type: 'text', text: 'Hello, Socket!' }]);
      assert.equal((first.result as Record<string, unknown>).resultType, 'complete');
      const discover = await ask({ id: 2, method: 'server/discover', params: { _meta: modernMeta } });
      assert.ok(((discover.result as { supportedVersions: string[] }).supportedVersions).includes('2026-07-28'));
      const bad = await ask({ id: 3, method: 'tools/list', params: { _meta: { [META_VERSION]: '2026-07-28' } } });
      assert.equal((bad.error as { code: number }).code, -32602, 'each modern message stands alone: no capabilities, no service');
      const init = await ask({ id: 4, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws', version: '1' } } });
      assert.equal((init.result as { protocolVersion: string }).protocolVersion, '2025-11-25');
      ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      const legacy = await ask({ id: 5, method: 'tools/call', params: { name: 'greet.hello', arguments: { name: 'Session' } } });
      assert.deepEqual((legacy.result as Record<string, unknown>).content, [{ type: 'text', text: 'Hello, Session!' }]);
      assert.equal((legacy.result as Record<string, unknown>).resultType, undefined);
      const modernAgain = await ask({ id: 6, method: 'tools/list', params: { _meta: modernMeta } });
      assert.equal((modernAgain.result as Record<string, unknown>).resultType, 'complete');
    } finally {
      ws.close();
    }
  });
});
