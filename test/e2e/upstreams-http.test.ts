// An upstream MCP server over Streamable HTTP (a recording SDK server, test/helpers/recording-upstream.ts)
// behind the real `svc serve`: its tools appear per caller with fastsvc's scopes on /svc, /mcp (client
// 2.x on 2026-07-28, client 1.x on 2025-11-25) and /ws; a denied call never reaches it; no request it
// receives carries the caller's token (only the manifest's own header); a call past its timeout is
// cancelled upstream (BACKEND_TIMEOUT), so is one whose caller aborts; progress and log notifications
// reach the caller; an answer over max_bytes fails with too_large; a tool added upstream reaches the
// catalog through the policy swap (a 2025 session gets tools/list_changed; one log line says so).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/recording-upstream.js';
import { secret } from '../helpers/secrets.js';

const READER = secret(randomBytes(24).toString('base64url'));
const ADMIN = secret(randomBytes(24).toString('base64url'));
const UP_KEY = secret(randomBytes(24).toString('base64url'));

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('upstreams: a Streamable HTTP upstream behind svc serve (scopes, no token passthrough, bounds, list_changed)', function () {
  this.timeout(60_000);
  let up: RecordingUpstream;
  let srv: Served;
  const svc = (path: string, token: string, body?: unknown) => fetch(`${srv.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const names = async (token: string) => ((await (await svc('/svc', token)).json()) as { tools: { name: string }[] }).tools.map((t) => t.name).sort();

  before(async () => {
    up = await startRecordingUpstream();
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      auth: { tokens: [{ name: 'reader', token: '${READER}', scopes: ['rec.use'] }, { name: 'admin', token: '${ADMIN}', scopes: ['rec.use', 'rec.admin'] }] },
      profile: { scopes: ['rec.use', 'rec.admin'] },
      routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp', '/ws'] },
      upstreams: [{
        name: 'rec',
        url: up.url,
        headers: { 'x-upstream-key': '${UP_KEY}' },
        max_bytes: '64kb',
        expose: {
          prefix: 'rec.',
          exclude: ['big*x'],
          required_scopes: ['rec.use'],
          overrides: { admin_op: { required_scopes: ['rec.admin'], description: 'Admins only.' }, slow: { timeout_ms: 1500 } },
        },
      }],
    }, { env: { READER, ADMIN, UP_KEY } });
  });

  after(async () => {
    await srv?.stop();
    await up?.close();
  });

  it('/readyz reports the upstream ready on 2025-11-25 with its tool count', async () => {
    const r = await (await fetch(`${srv.url}/readyz`)).json() as { upstreams: Record<string, { state: string; protocol_version: string; tools: number }> };
    assert.equal(r.upstreams.rec?.state, 'ready');
    assert.equal(r.upstreams.rec?.protocol_version, '2025-11-25');
    assert.equal(r.upstreams.rec?.tools, 5);
  });

  it('/svc lists imported tools per caller, and a denied call never reaches the upstream', async () => {
    assert.deepEqual(await names(READER), ['rec.big', 'rec.chatty', 'rec.echo', 'rec.slow']);
    assert.deepEqual(await names(ADMIN), ['rec.admin_op', 'rec.big', 'rec.chatty', 'rec.echo', 'rec.slow']);
    const denied = await svc('/svc/tools/rec.admin_op', READER, {});
    assert.equal(denied.status, 403);
    assert.equal(((await denied.json()) as { error: { code: string } }).error.code, 'INSUFFICIENT_SCOPE');
    assert.equal(up.calls.filter((c) => c.name === 'admin_op').length, 0, 'the upstream saw no admin_op call');
    const bad = await svc('/svc/tools/rec.echo', READER, { text: 7 });
    assert.equal(bad.status, 400, 'arguments are checked against the upstream schema before the call');
    const ok = await svc('/svc/tools/rec.echo', READER, { text: 'via svc' });
    assert.equal(ok.status, 200);
    assert.deepEqual(((await ok.json()) as { content: unknown[] }).content, [{ type: 'text', text: 'via svc' }]);
    assert.deepEqual(up.calls.filter((c) => c.name === 'echo').map((c) => c.args), [{ text: 'via svc' }]);
    const admin = await svc('/svc/tools/rec.admin_op', ADMIN, {});
    assert.equal(admin.status, 200);
    assert.equal(up.calls.filter((c) => c.name === 'admin_op').length, 1);
  });

  it('/mcp: client 2.x (2026-07-28) and client 1.x (2025-11-25) see only what their scopes allow; the override is fastsvc\'s text', async () => {
    const modern = new ModernClient({ name: 'up-e2e', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await modern.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => READER } }));
    try {
      assert.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28');
      const listed = (await modern.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(listed, ['rec.big', 'rec.chatty', 'rec.echo', 'rec.slow']);
      const res = await modern.callTool({ name: 'rec.echo', arguments: { text: 'modern' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'modern' }]);
      await assert.rejects(modern.callTool({ name: 'rec.admin_op', arguments: {} }));
    } finally {
      await modern.close();
    }
    const transport = new LegacyTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ADMIN}` } } });
    const legacy = new LegacyClient({ name: 'up-e2e-legacy', version: '1' });
    await legacy.connect(transport);
    try {
      const tools = (await legacy.listTools()).tools;
      assert.equal(tools.find((t) => t.name === 'rec.admin_op')?.description, 'Admins only.');
      const res = await legacy.callTool({ name: 'rec.echo', arguments: { text: 'legacy' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'legacy' }]);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await legacy.close();
    }
    assert.equal(up.calls.filter((c) => c.name === 'admin_op').length, 1, 'still only the admin\'s /svc call');
  });

  it('/ws: a reader lists without admin_op and is refused it', async () => {
    const ws = new WebSocket(`${srv.url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${READER}` } });
    const waiters = new Map<number, (m: Record<string, unknown>) => void>();
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as Record<string, unknown>;
      if (typeof m.id === 'number') waiters.get(m.id)?.(m);
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const ask = (id: number, method: string, params: Record<string, unknown>) => new Promise<Record<string, unknown>>((resolve) => {
      waiters.set(id, resolve);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }));
    });
    try {
      const list = await ask(1, 'tools/list', {});
      const listed = ((list.result as { tools: { name: string }[] }).tools).map((t) => t.name);
      assert.ok(listed.includes('rec.echo') && !listed.includes('rec.admin_op'), listed.join(' '));
      const denied = await ask(2, 'tools/call', { name: 'rec.admin_op', arguments: {} });
      assert.ok(denied.error, JSON.stringify(denied));
    } finally {
      ws.close();
    }
    assert.equal(up.calls.filter((c) => c.name === 'admin_op').length, 1);
  });

  it('the upstream never saw the caller\'s token: no Authorization header at all, the manifest\'s own header on every request', () => {
    assert.ok(up.headers.length > 5);
    for (const h of up.headers) {
      assert.equal(h.authorization, undefined);
      assert.equal(h['x-upstream-key'], UP_KEY);
      for (const v of Object.values(h)) assert.ok(![READER, ADMIN].some((t) => String(v).includes(t)));
    }
  });

  it('a call past its timeout_ms answers BACKEND_TIMEOUT and is cancelled upstream', async () => {
    const before = up.cancelled.length;
    const r = await svc('/svc/tools/rec.slow', READER, { ms: 20_000 });
    assert.equal(r.status, 504);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'BACKEND_TIMEOUT');
    await until('the cancellation upstream', () => (up.cancelled.length > before ? true : undefined));
  });

  it('a caller that aborts cancels the call upstream (client 1.x on /mcp)', async () => {
    const transport = new LegacyTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${READER}` } } });
    const client = new LegacyClient({ name: 'up-e2e-cancel', version: '1' });
    await client.connect(transport);
    const before = up.cancelled.length;
    const calls = up.calls.length;
    try {
      const ac = new AbortController();
      const call = client.callTool({ name: 'rec.slow', arguments: { ms: 1000 * 1000 } }, undefined, { signal: ac.signal });
      await until('the call upstream', () => (up.calls.length > calls ? true : undefined));
      ac.abort();
      await assert.rejects(call);
      await until('the cancellation upstream', () => (up.cancelled.length > before ? true : undefined));
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it('progress and log notifications of the upstream reach the caller', async () => {
    const transport = new LegacyTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${READER}` } } });
    const client = new LegacyClient({ name: 'up-e2e-progress', version: '1' });
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.data));
    await client.connect(transport);
    try {
      const progress: number[] = [];
      const res = await client.callTool({ name: 'rec.chatty', arguments: {} }, undefined, { onprogress: (p) => void progress.push(p.progress) });
      assert.deepEqual(res.content, [{ type: 'text', text: 'chatted' }]);
      assert.deepEqual(progress, [1, 2, 3]);
      await until('the log message', () => (logs.includes('chatty says hello') ? true : undefined));
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it('an answer larger than max_bytes fails with BACKEND_FAILED too_large, and a small one passes', async () => {
    const big = await svc('/svc/tools/rec.big', READER, { bytes: 200 * 1024 });
    assert.equal(big.status, 502);
    const err = ((await big.json()) as { error: { code: string; reason?: string } }).error;
    assert.equal(err.code, 'BACKEND_FAILED');
    assert.equal(err.reason, 'too_large');
    assert.equal((await svc('/svc/tools/rec.big', READER, { bytes: 1000 })).status, 200);
  });

  it('a tool added upstream reaches /svc and a 2025 session (tools/list_changed), with one log line', async () => {
    const transport = new LegacyTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${READER}` } } });
    const client = new LegacyClient({ name: 'up-e2e-changes', version: '1' });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    await client.connect(transport);
    try {
      // The session's GET stream carries list_changed: wait until it is open (a listing is a cheap way to let it start).
      await client.listTools();
      up.addTool('fresh');
      await until('rec.fresh on /svc', async () => ((await names(READER)).includes('rec.fresh') ? true : undefined));
      await until('list_changed on the session', () => (changed > 0 ? true : undefined));
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'rec.fresh'));
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
    const lines = srv.logs().filter((l) => l.event === 'upstreams.catalog_changed');
    assert.equal(lines.length, 1);
    assert.deepEqual((lines[0]!.changes as { tools: { added: string[] } }).tools.added, ['rec.fresh']);
  });
});
