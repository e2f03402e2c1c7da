// /mcp over real HTTP: sessions (ids, 400/404, DELETE, binding to the subject, expiry, cap),
// the 403 step-up challenge, 401s, DNS-rebinding checks, the MCP-Protocol-Version rules,
// JSON-or-SSE answers, the GET stream, server→client requests, malformed bodies, and
// memory staying flat over many calls on one session.

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { createGate } from '../../src/auth/gate.js';
import { buildCatalog } from '../../src/core/catalog.js';
import { resolveConfig } from '../../src/core/config.js';
import type { Principal } from '../../src/core/types.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { mountMcp } from '../../src/transports/mcp-http.js';
import { SessionRegistry } from '../../src/mcp/sessions.js';
import { InputRounds } from '../../src/mcp/input-rounds.js';
import { JSON_AND_SSE, notesApp, RawMcp, readMessages, startMcpApp, type McpApp } from '../helpers/mcp-app.js';
import { collector } from '../helpers/gc.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** POST with full control of the headers (fetch cannot set Host). */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const u = new URL(`${url}/mcp`);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', accept: JSON_AND_SSE, ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** JSON-RPC messages of an SSE body, as they arrive. */
async function* sseMessages(res: Response): AsyncGenerator<Record<string, unknown>> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const data = buf.slice(0, i).split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        buf = buf.slice(i + 2);
        if (data) yield JSON.parse(data);
      }
    }
  } finally {
    await reader.cancel();
  }
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });

describe('/mcp Streamable HTTP', () => {
  let app: McpApp;
  before(async () => {
    app = await startMcpApp({ server: { body_limit: '16kb' } });
  });
  after(() => app.close());

  it('opens a session on initialize: a random id, the negotiated version, a JSON answer', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    const r = await c.initialize();
    assert.match(c.sessionId ?? '', UUID);
    assert.equal(r.protocolVersion, '2025-11-25');
    assert.deepEqual(r.serverInfo, { name: 'notes', version: '1.2.3' });
    const other = new RawMcp(app.url, app.tokens.reader);
    await other.initialize();
    assert.notEqual(other.sessionId, c.sessionId);
  });

  it('needs the session header (400), answers 404 for unknown or ended sessions, and DELETE ends one', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    const id = c.sessionId!;
    c.sessionId = undefined;
    const missing = await c.post({ jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(missing.status, 400);
    assert.equal(((await missing.json()) as { error: { code: number } }).error.code, -32600);
    c.sessionId = 'b6a4f1d2-0000-4000-8000-000000000000';
    assert.equal((await c.post({ jsonrpc: '2.0', id: 1, method: 'ping' })).status, 404);
    c.sessionId = id;
    assert.equal((await c.request('ping')).res.status, 200);
    const del = await fetch(`${app.url}/mcp`, { method: 'DELETE', headers: c.headers() });
    assert.equal(del.status, 204);
    assert.equal((await c.post({ jsonrpc: '2.0', id: 2, method: 'ping' })).status, 404);
    assert.equal((await fetch(`${app.url}/mcp`, { method: 'DELETE', headers: c.headers() })).status, 404);
    assert.equal((await fetch(`${app.url}/mcp`, { method: 'PUT', headers: c.headers() })).status, 405);
  });

  it('binds a session to the subject that opened it: another token gets 404, the same token works', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    const thief = new RawMcp(app.url, app.tokens.operator);
    thief.sessionId = c.sessionId;
    assert.equal((await thief.post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).status, 404);
    assert.equal((await fetch(`${app.url}/mcp`, { method: 'DELETE', headers: thief.headers() })).status, 404);
    assert.equal((await c.request('ping')).res.status, 200);
  });

  it('answers a call the caller lacks scopes for with 403 and the exact insufficient_scope challenge /svc gives, before dispatch', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    const gate = app.served.handle.gate;
    const cases: [string, Record<string, unknown>, string[], string[]][] = [
      ['tools/call', { name: 'notes.write', arguments: {} }, ['notes.read', 'notes.write'], ['notes.write']],
      ['resources/read', { uri: 'notes://secret' }, ['notes.admin'], ['notes.admin']],
      ['prompts/get', { name: 'audit' }, ['notes.admin'], ['notes.admin']],
    ];
    for (const [method, params, required, missing] of cases) {
      const { res, answer } = await c.request(method, params);
      assert.equal(res.status, 403, method);
      const challenge = res.headers.get('www-authenticate');
      const message = (answer as { error: { message: string } }).error.message;
      assert.equal(challenge, gate.challenge({ error: 'insufficient_scope', scopes: required, route: '/mcp', description: message }));
      assert.equal(challenge, `Bearer realm="notes", error="insufficient_scope", scope="${required.join(' ')}", error_description="${message}"`);
      assert.match(message, new RegExp(`requires scope ${missing.join(' ')}$`));
      assert.deepEqual((answer as { error: unknown }).error, {
        code: -32003,
        message: (answer as { error: { message: string } }).error.message,
        data: { code: 'INSUFFICIENT_SCOPE', required, missing, scope: required.join(' ') },
      });
    }
    const ok = await c.request('tools/call', { name: 'notes.read', arguments: {} });
    assert.equal(ok.res.status, 200);
    assert.deepEqual((ok.answer as { result: unknown }).result, { content: [{ type: 'text', text: 'all notes' }] });
    const list = await c.request('tools/list');
    const names = ((list.answer as { result: { tools: { name: string }[] } }).result.tools).map((t) => t.name);
    assert.ok(names.includes('notes.read') && !names.includes('notes.write'));
  });

  it('answers 401 with a Bearer challenge without a token or with a bad one', async () => {
    for (const token of [undefined, 'not-a-real-token']) {
      const c = new RawMcp(app.url, token);
      const r = await c.post(JSON.parse(INIT));
      assert.equal(r.status, 401);
      assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer realm="notes"/);
    }
  });

  it('refuses a foreign Host or Origin (DNS rebinding) with 403 and accepts loopback ones', async () => {
    const auth = { authorization: `Bearer ${app.tokens.reader}` };
    const port = new URL(app.url).port;
    const evilHost = await rawPost(app.url, { ...auth, host: 'evil.example.com', origin: 'http://evil.example.com' }, INIT);
    assert.equal(evilHost.status, 403);
    assert.equal(JSON.parse(evilHost.body).error.code, 'FORBIDDEN_ORIGIN');
    const evilOrigin = await rawPost(app.url, { ...auth, host: `127.0.0.1:${port}`, origin: 'http://evil.example.com' }, INIT);
    assert.equal(evilOrigin.status, 403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const ok = await rawPost(app.url, { ...auth, host, origin: `http://${host}` }, INIT);
      assert.equal(ok.status, 200, host);
    }
  });

  it('refuses an unsupported MCP-Protocol-Version with 400 and accepts an absent or supported one', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    assert.equal((await c.post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' })).status, 400);
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      assert.equal((await c.post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': v })).status, 200, v);
    }
    const h = c.headers();
    delete h['mcp-protocol-version'];
    assert.equal((await fetch(`${app.url}/mcp`, { method: 'POST', headers: h, body: '{"jsonrpc":"2.0","id":9,"method":"ping"}' })).status, 200);
  });

  it('answers in JSON until a call sends something, then in SSE when the client accepts it', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    const plain = await c.request('tools/call', { name: 'echo', arguments: { text: 'x' } });
    assert.match(plain.res.headers.get('content-type') ?? '', /^application\/json/);
    const chatty = await c.request('tools/call', { name: 'chatty', _meta: { progressToken: 'p1' } });
    assert.match(chatty.res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.deepEqual(chatty.messages.map((m) => m.method ?? 'result'), ['notifications/message', 'notifications/progress', 'notifications/message', 'result']);
    assert.deepEqual((chatty.messages[1] as { params: unknown }).params, { progressToken: 'p1', progress: 1, total: 2 });
    const sseOnly = await c.request('tools/call', { name: 'echo', arguments: { text: 'y' } }, { accept: 'text/event-stream' });
    assert.match(sseOnly.res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.deepEqual((sseOnly.answer as { result: unknown }).result, { content: [{ type: 'text', text: 'y' }] });
  });

  it('sends what a JSON-only POST cannot carry on the GET stream; a second GET replaces the first', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    const first = await fetch(`${app.url}/mcp`, { headers: c.headers({ accept: 'text/event-stream' }) });
    assert.equal(first.status, 200);
    const second = await fetch(`${app.url}/mcp`, { headers: c.headers({ accept: 'text/event-stream' }) });
    assert.equal(second.status, 200);
    assert.equal(await first.text(), '', 'the replaced stream ends');
    const events = sseMessages(second);
    const call = await c.request('tools/call', { name: 'chatty' }, { accept: 'application/json' });
    assert.match(call.res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual((call.answer as { result: unknown }).result, { content: [{ type: 'text', text: 'chatted' }] });
    const got = [(await events.next()).value, (await events.next()).value] as { method: string; params: { data: string } }[];
    assert.deepEqual(got.map((m) => [m.method, m.params.data]), [['notifications/message', 'starting'], ['notifications/message', 'finishing']]);
    assert.equal((await fetch(`${app.url}/mcp`, { headers: c.headers({ accept: 'application/json' }) })).status, 406);
    await events.return(undefined);
  });

  it('carries a server→client request on the POST stream and takes the answer as a new POST', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    const res = await c.post({ jsonrpc: '2.0', id: 'ask-1', method: 'tools/call', params: { name: 'ask' } });
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = sseMessages(res);
    const req = (await events.next()).value as { id: string; method: string };
    assert.equal(req.method, 'elicitation/create');
    const ack = await c.post({ jsonrpc: '2.0', id: req.id, result: { action: 'accept', content: { name: 'Ada' } } });
    assert.equal(ack.status, 202);
    const answer = (await events.next()).value as { id: string; result: unknown };
    assert.equal(answer.id, 'ask-1');
    assert.deepEqual(answer.result, { content: [{ type: 'text', text: 'hello Ada' }] });
  });

  it('answers invalid tool arguments with a tool error that says what was wrong, as /svc does', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    const args = { text: 42, extra: 'do-not-echo-me' };
    const { answer } = await c.request('tools/call', { name: 'echo', arguments: args });
    const r = answer!.result as { isError: boolean; content: { text: string }[]; structuredContent: { error: Record<string, unknown> } };
    assert.equal(r.isError, true);
    assert.match(r.content[0]!.text, /^INVALID_INPUT: invalid arguments for echo: /);
    assert.match(r.content[0]!.text, /\/text: must be string/);
    assert.match(r.content[0]!.text, /\/: must NOT have additional properties \("extra"\)/);
    const svc = await fetch(`${app.url}/svc/tools/echo`, { method: 'POST', headers: { authorization: `Bearer ${app.tokens.reader}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
    assert.equal(svc.status, 400);
    assert.deepEqual(r.structuredContent, await svc.json(), 'the same {error} body /svc answers');
    assert.ok(!JSON.stringify(r).includes('do-not-echo-me'));
  });

  it('refuses malformed requests with the right status and JSON-RPC code', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    const send = (body: string, extra: Record<string, string> = {}) => fetch(`${app.url}/mcp`, { method: 'POST', headers: c.headers(extra), body });
    assert.equal((await send('{"jsonrpc":"2.0","id":1,"method":"ping"}', { 'content-type': 'text/plain' })).status, 415);
    assert.equal((await send('{"jsonrpc":"2.0","id":1,"method":"ping"}', { accept: 'text/html' })).status, 406);
    const bad = await send('{"jsonrpc":');
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { code: number } }).error.code, -32700);
    const big = await send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(20_000) } } }));
    assert.equal(big.status, 413);
    const batch = await readMessages(await send('[{"jsonrpc":"2.0","id":1,"method":"ping"}]'));
    assert.equal((batch[0] as { error: { code: number } }).error.code, -32600);
    const invalid = await send('{"jsonrpc":"2.0","id":1}');
    assert.equal(invalid.status, 400);
    assert.equal(((await invalid.json()) as { error: { code: number } }).error.code, -32600);
    const initAgain = await send(INIT);
    assert.equal(initAgain.status, 400);
    assert.equal((await c.request('ping')).res.status, 200, 'the session survives all of it');
  });

  it('announces a reload on the GET stream: list changes and updates of subscribed resources', async () => {
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    assert.deepEqual((await c.request('resources/subscribe', { uri: 'notes://readme' })).answer?.result, {});
    const stream = await fetch(`${app.url}/mcp`, { headers: c.headers({ accept: 'text/event-stream' }) });
    const events = sseMessages(stream);
    const runtime = app.served.handle.runtime;
    const before = runtime.current();
    const next = notesApp();
    next.tool({ name: 'added', description: 'New after the reload.', handler: () => 'new' });
    next.resource({ uri: 'notes://added', name: 'added', read: (uri) => [{ uri, text: 'new' }] });
    runtime.swap(buildCatalog(next));
    try {
      const got = [];
      for (let i = 0; i < 3; i++) got.push((await events.next()).value as { method: string; params?: unknown });
      assert.deepEqual(got, [
        { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
        { jsonrpc: '2.0', method: 'notifications/resources/list_changed' },
        { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'notes://readme' } },
      ]);
    } finally {
      runtime.swap(before);
      await events.return(undefined);
    }
  });

  it('keeps memory flat over thousands of calls on one session', async function () {
    this.timeout(180_000);
    const gc = collector();
    const c = new RawMcp(app.url, app.tokens.reader);
    await c.initialize();
    const burst = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await c.post({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: 'm' } } });
        assert.equal(r.status, 200);
        await r.arrayBuffer();
      }
    };
    await burst(300);
    gc();
    const before = process.memoryUsage().heapUsed;
    await burst(2000);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // The SDK's stateful JSON mode keeps ~5.7 KiB per request (11 MiB here); the bound leaves 1.5 KiB a call for noise.
    assert.ok(grown < 3 * 1024 * 1024, `heap grew by ${grown} bytes over 2000 calls`);
  });
});

describe('MCP session registry limits (through mountMcp)', () => {
  const anyone: Principal = { sub: 'someone', kind: 'static', scopes: new Set() };
  let server: http.Server;
  let url: string;
  let sessions: SessionRegistry;

  before(async () => {
    const logger = pino({ level: 'silent' });
    const app = express();
    sessions = new SessionRegistry({ logger, idleMs: 60_000, maxSessions: 2 });
    mountMcp(app, {
      runtime: new Runtime(buildCatalog(notesApp()), { inlineLimit: 16384, logger }),
      gate: createGate({ realm: 'limits' }),
      config: resolveConfig({ server: { host: '127.0.0.1' } }),
      logger,
      ipOf: (req) => req.socket.remoteAddress,
      guard: (_req, res, next) => {
        res.locals.principal = anyone;
        next();
      },
      sessions,
      rounds: new InputRounds({ ttlMs: 60_000 }),
    });
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    sessions.close();
    server.close();
  });

  it('ends the least recently used session when the cap is reached', async () => {
    const a = new RawMcp(url);
    await a.initialize();
    const b = new RawMcp(url);
    await b.initialize();
    assert.equal((await a.request('ping')).res.status, 200, 'a is now more recent than b');
    const c = new RawMcp(url);
    await c.initialize();
    assert.equal(sessions.count('mcp'), 2);
    assert.equal((await b.request('ping')).res.status, 404);
    assert.equal((await a.request('ping')).res.status, 200);
    assert.equal((await c.request('ping')).res.status, 200);
  });

  it('ends sessions idle past the limit, and keeps one with an open GET stream', async () => {
    sessions.sweep(Date.now() + 3_600_000);
    assert.equal(sessions.count('mcp'), 0);
    const idle = new RawMcp(url);
    await idle.initialize();
    const listening = new RawMcp(url);
    await listening.initialize();
    const stream = await fetch(`${url}/mcp`, { headers: listening.headers({ accept: 'text/event-stream' }) });
    assert.equal(stream.status, 200);
    sessions.sweep(Date.now() + 3_600_000);
    assert.equal((await idle.request('ping')).res.status, 404);
    assert.equal((await listening.request('ping')).res.status, 200);
    await stream.body?.cancel();
  });
});
