// /ws with raw `ws` clients: authentication and other refusals at the handshake (plain HTTP
// answers, never an open socket), the MCP methods over frames, hostile frames, the size limit
// (1009), the in-flight cap, credentials that lapse on an open socket (4401) and keep-alive.

import { resolveConfig } from '../../src/core/config.js';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { pino } from 'pino';
import { TokenTable } from '../../src/auth/bearer.js';
import { SCOPES, RawWs, startMcpApp, type McpApp } from '../helpers/mcp-app.js';

/** Try an upgrade; resolve to the HTTP answer if it is refused, or 'open' if a socket opened. */
function handshake(url: string, opts: { token?: string; protocol?: string | null; path?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: IncomingMessage['headers']; body: string } | 'open'> {
  const protocols = opts.protocol === null ? [] : [opts.protocol ?? 'mcp'];
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${opts.path ?? '/ws'}`, protocols, {
    headers: { ...(opts.token && { authorization: `Bearer ${opts.token}` }), ...opts.headers },
  });
  return new Promise((resolve, reject) => {
    ws.on('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    ws.on('error', (e) => reject(e));
  });
}

describe('/ws JSON-RPC over WebSocket', () => {
  let app: McpApp;
  before(async () => {
    app = await startMcpApp({ server: { body_limit: '8kb', ws_max_in_flight: 3, ws_ping_interval_ms: 1000 } });
  });
  after(() => app.close());

  it('authenticates at the upgrade: no token or a bad one gets HTTP 401 with the challenge, never a socket', async () => {
    for (const token of [undefined, 'wrong-token']) {
      const r = await handshake(app.url, { token });
      assert.notEqual(r, 'open');
      if (r === 'open') return;
      assert.equal(r.status, 401);
      assert.match(r.headers['www-authenticate'] ?? '', /^Bearer realm="notes"/);
      assert.equal(JSON.parse(r.body).error.code, 'UNAUTHENTICATED');
    }
    assert.equal(await handshake(app.url, { token: app.tokens.reader }), 'open');
  });

  it('refuses a foreign Origin (403), a missing mcp subprotocol (400), a token in the URL (400) and other paths (404)', async () => {
    const token = app.tokens.reader;
    const status = async (o: Parameters<typeof handshake>[1]) => {
      const r = await handshake(app.url, o);
      return r === 'open' ? 'open' : r.status;
    };
    assert.equal(await status({ token, headers: { origin: 'http://evil.example.com' } }), 403);
    assert.equal(await status({ token, headers: { origin: app.url } }), 'open');
    assert.equal(await status({ token, protocol: null }), 400);
    assert.equal(await status({ token, protocol: 'graphql-ws' }), 400);
    assert.equal(await status({ token, path: `/ws?access_token=${token}` }), 400);
    assert.equal(await status({ token, path: '/mcp' }), 404);
  });

  it('runs the MCP lifecycle and methods over frames, with scope denials as -32003 errors', async () => {
    const c = RawWs.open(app.url, app.tokens.reader);
    assert.equal(c.socket.protocol, '');
    const init = (await c.initialize()) as { result: { protocolVersion: string; serverInfo: unknown } };
    assert.equal(c.socket.protocol, 'mcp');
    assert.equal(init.result.protocolVersion, '2025-11-25');
    const list = (await c.call('tools/list')) as { result: { tools: { name: string }[] } };
    assert.ok(list.result.tools.some((t) => t.name === 'notes.read'));
    assert.deepEqual((await c.call('tools/call', { name: 'notes.read' })).result, { content: [{ type: 'text', text: 'all notes' }] });
    const denied = (await c.call('tools/call', { name: 'notes.write' })) as { error: { code: number; data: unknown } };
    assert.equal(denied.error.code, -32003);
    assert.deepEqual(denied.error.data, { code: 'INSUFFICIENT_SCOPE', required: ['notes.read', 'notes.write'], missing: ['notes.write'], scope: 'notes.read notes.write' });
    const progress = c.call('tools/call', { name: 'chatty', _meta: { progressToken: 7 } });
    assert.equal((await c.next((m) => m.method === 'notifications/progress')).params !== undefined, true);
    assert.deepEqual((await progress).result, { content: [{ type: 'text', text: 'chatted' }] });
    c.socket.close();
  });

  it('answers invalid tool arguments with the problems: a tool error on 2025-11-25, -32602 with data before it', async () => {
    const latest = RawWs.open(app.url, app.tokens.reader);
    await latest.initialize();
    const r = (await latest.call('tools/call', { name: 'echo', arguments: { text: 1 } })).result as { isError: boolean; content: { text: string }[]; structuredContent: { error: { code: string; errors: { path: string; message: string }[] } } };
    assert.equal(r.isError, true);
    assert.match(r.content[0]!.text, /\/text: must be string/);
    assert.deepEqual(r.structuredContent.error.errors.map((e) => [e.path, e.message]), [['/text', 'must be string']]);
    latest.socket.close();
    const older = RawWs.open(app.url, app.tokens.reader);
    await older.initialize('2025-06-18');
    const e = (await older.call('tools/call', { name: 'echo', arguments: {} })).error as { code: number; message: string; data: { errors: { path: string }[] } };
    assert.equal(e.code, -32602);
    assert.match(e.message, /must have required property 'text'/);
    assert.deepEqual(e.data.errors.map((x) => x.path), ['/']);
    older.socket.close();
  });

  it('answers hostile frames with JSON-RPC errors and keeps serving', async () => {
    const c = RawWs.open(app.url, app.tokens.reader);
    await c.initialize();
    const errorFor = async (frame: string | Buffer, binary = false) => {
      c.socket.send(frame, { binary });
      return ((await c.next((m) => m.id === null)) as { error: { code: number } }).error.code;
    };
    assert.equal(await errorFor('{"jsonrpc":'), -32700);
    assert.equal(await errorFor('not json at all'), -32700);
    assert.equal(await errorFor(Buffer.from([0xde, 0xad, 0xbe, 0xef]), true), -32700);
    for (const frame of ['null', '42', '"text"', '[]', '{"jsonrpc":"2.0","id":{},"method":"ping"}', '{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}'.replace('"id":1', '"id":null'), '[1,2,3]', '['.repeat(3000) + ']'.repeat(3000)]) {
      assert.equal(await errorFor(frame), -32600, frame.slice(0, 40));
    }
    assert.deepEqual((await c.call('ping')).result, {});
    // Bytes that are not UTF-8 in a text frame: the socket is closed (1007), the server lives on.
    c.socket.send(Buffer.from([0xff, 0xfe, 0xfd]), { binary: false });
    assert.equal((await c.closedWith()).code, 1007);
    const again = RawWs.open(app.url, app.tokens.reader);
    await again.initialize();
    assert.deepEqual((await again.call('ping')).result, {});
    again.socket.close();
  });

  it('closes the socket with 1009 when a message exceeds server.body_limit', async () => {
    const c = RawWs.open(app.url, app.tokens.reader);
    await c.initialize();
    c.send({ jsonrpc: '2.0', id: 'big', method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(10_000) } } });
    assert.equal((await c.closedWith()).code, 1009);
  });

  it('refuses requests beyond ws_max_in_flight with a JSON-RPC error and serves the rest', async () => {
    const c = RawWs.open(app.url, app.tokens.reader);
    await c.initialize();
    for (let i = 0; i < 4; i++) c.send({ jsonrpc: '2.0', id: `slow${i}`, method: 'tools/call', params: { name: 'wait', arguments: { ms: 200 } } });
    const answers = await Promise.all([0, 1, 2, 3].map((i) => c.next((m) => m.id === `slow${i}`)));
    const refused = answers.filter((a) => a.error);
    assert.equal(refused.length, 1);
    assert.equal(refused[0]!.id, 'slow3');
    assert.deepEqual((refused[0]!.error as { code: number; data: { code: string } }).code, -32000);
    assert.equal((refused[0]!.error as { data: { code: string } }).data.code, 'RATE_LIMITED');
    assert.equal(answers.filter((a) => a.result).length, 3);
    assert.deepEqual((await c.call('tools/call', { name: 'wait', arguments: { ms: 1 } })).result, { content: [{ type: 'text', text: 'waited 1' }] });
    c.socket.close();
  });

  it('counts the requests of a batch against ws_max_in_flight, not its notifications', async () => {
    const c = RawWs.open(app.url, app.tokens.reader);
    await c.initialize();
    const slow = (id: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait', arguments: { ms: 200 } } });
    c.send([slow('b0'), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nobody' } }, slow('b1')]);
    c.send(slow('third'));
    c.send(slow('fourth'));
    const [third, fourth] = await Promise.all([c.next((m) => m.id === 'third'), c.next((m) => m.id === 'fourth')]);
    assert.ok(third.result, 'two batched requests and one more fit under the cap of 3');
    assert.equal((fourth.error as { data: { code: string } }).data.code, 'RATE_LIMITED');
    c.socket.close();
  });

  it('drops a socket that stops answering pings', async () => {
    const c = RawWs.open(app.url, app.tokens.reader, { autoPong: false });
    await c.initialize();
    assert.equal((await c.closedWith()).code, 1006);
  });
});

describe('/ws credentials that lapse on an open socket', () => {
  let app: McpApp;
  before(async () => {
    app = await startMcpApp({ server: { ws_ping_interval_ms: 1000 } });
  });
  after(() => app.close());

  it('keeps the socket open across a policy snapshot that leaves its token unchanged', async () => {
    const c = RawWs.open(app.url, app.tokens.reader);
    await c.initialize();
    assert.deepEqual((await c.call('ping')).result, {});
    const { store } = app.served.handle;
    store.swap({ ...store.current(), tokens: TokenTable.build(resolveConfig({ auth: app.authConfig() }).auth!, SCOPES, pino({ level: 'silent' }), store.current().tokens) });
    assert.deepEqual((await c.call('ping')).result, {});
    c.socket.close();
  });

  it('closes with 4401 on the next message once the token is rotated, and on the periodic check when idle', async () => {
    const busy = RawWs.open(app.url, app.tokens.reader);
    await busy.initialize();
    const idle = RawWs.open(app.url, app.tokens.reader);
    await idle.initialize();
    assert.deepEqual((await busy.call('ping')).result, {});
    const cfg = app.authConfig();
    const { store } = app.served.handle;
    const rotated = { ...cfg, tokens: cfg.tokens!.map((t) => (t.name === 'reader' ? { ...t, token: 'rotated-reader-token' } : t)) };
    store.swap({ ...store.current(), tokens: TokenTable.build(resolveConfig({ auth: rotated }).auth!, SCOPES, pino({ level: 'silent' }), store.current().tokens) });
    busy.send({ jsonrpc: '2.0', id: 'after-rotation', method: 'tools/list' });
    assert.deepEqual(await busy.closedWith(), { code: 4401, reason: 'credential expired or revoked' });
    assert.ok(!busy.messages.some((m) => m.id === 'after-rotation'), 'no answer after the credential lapsed');
    assert.equal((await idle.closedWith()).code, 4401);
    const r = await handshake(app.url, { token: app.tokens.reader });
    assert.ok(r !== 'open' && r.status === 401, 'the old token cannot open a new socket either');
    assert.equal(await handshake(app.url, { token: 'rotated-reader-token' }), 'open');
  });
});

describe('/ws as a public route', () => {
  let app: McpApp;
  before(async () => {
    app = await startMcpApp({ open: true });
  });
  after(() => app.close());

  it('needs no token, and the caller is anonymous: no scope, so scoped capabilities are denied', async () => {
    const c = RawWs.open(app.url);
    await c.initialize();
    const names = ((await c.call('tools/list')) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
    assert.ok(names.includes('echo') && !names.includes('notes.read'));
    assert.equal(((await c.call('tools/call', { name: 'notes.read' })) as { error: { code: number } }).error.code, -32003);
    c.socket.close();
  });
});
