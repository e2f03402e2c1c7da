// MCP 2026-07-28 without sockets: which era a request selects (table), the admission order
// and its codes/statuses (table), server/discover and lists per caller (nothing a caller may
// not use shows), resultType and serverInfo on results, cache hints, logLevel-gated logs, and
// -32021 for a server→client request the request's capabilities do not allow.

import { InputRounds } from '../../src/mcp/input-rounds.js';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FastSvc } from '../../src/core/fast-svc.js';
import { buildCatalog } from '../../src/core/catalog.js';
import { Runtime } from '../../src/runtime/runtime.js';
import type { Principal } from '../../src/core/types.js';
import { eraOf } from '../../src/mcp/era.js';
import { hintOf, ModernProtocol } from '../../src/mcp/modern.js';
import { META, SUPPORTED_VERSIONS } from '../../src/mcp/constants.js';
import { decodeHeaderValue } from '../../src/mcp/modern-headers.js';
import type { JsonRpcNotification, JsonRpcRequest } from '../../src/mcp/jsonrpc.js';

const log = pino({ level: 'silent' });
const V = '2026-07-28';

function runtime(cache?: FastSvc['cache']): Runtime {
  const svc = new FastSvc({ name: 'unit', version: '1.2.3', instructions: 'be nice', cache });
  svc.tool({ name: 'echo', description: 'echo', input_schema: { type: 'object', properties: { text: { type: 'string' }, region: { type: 'string', 'x-mcp-header': 'Region' } } }, handler: (i) => `echo:${i.text}` });
  svc.tool({ name: 'secret', description: 'needs admin', required_scopes: ['admin'], handler: () => 'classified' });
  svc.tool({ name: 'ask', description: 'sampling', handler: async (_i, ctx) => String(await ctx.channel.request('sampling/createMessage', { messages: [], maxTokens: 5 })) });
  svc.tool({ name: 'talk', description: 'logs', handler: async (_i, ctx) => { await ctx.channel.log('debug', 'low'); await ctx.channel.log('warning', 'high'); return 'done'; } });
  svc.resource({ uri: 'r://open', name: 'open', read: (uri) => [{ uri, text: 'o' }], cache: { ttl_ms: 5000, scope: 'public' } });
  svc.resource({ uri: 'r://closed', name: 'closed', required_scopes: ['admin'], read: (uri) => [{ uri, text: 'c' }], cache: { ttl_ms: 5000, scope: 'public' } });
  svc.prompt({ name: 'hello', messages: () => [{ role: 'user', content: { type: 'text', text: 'hi' } }] } as never);
  return new Runtime(buildCatalog(svc), { inlineLimit: 16384, logger: log });
}

const anon: Principal = { sub: 'anon', scopes: new Set(), kind: 'anonymous' };
const admin: Principal = { sub: 'root', scopes: new Set(['admin']), kind: 'static' };
const meta = (extra: Record<string, unknown> = {}) => ({ [META.protocolVersion]: V, [META.clientCapabilities]: {}, ...extra });
const req = (method: string, params: Record<string, unknown> = {}, id = 1): JsonRpcRequest => ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(params._meta as Record<string, unknown>) } });

const runtimes = new WeakMap<ModernProtocol, Runtime>();

function make(rt = runtime(), routePublic = true): ModernProtocol {
  const p = new ModernProtocol({ runtime: rt, logger: log, transport: 'mcp', routePublic, rounds: new InputRounds({ ttlMs: 60_000 }) });
  runtimes.set(p, rt);
  return p;
}

async function call(p: ModernProtocol, msg: JsonRpcRequest, who = anon, notes: JsonRpcNotification[] = []) {
  const adm = p.admit(msg);
  assert.ok(adm.ok, JSON.stringify(adm));
  return p.handle(msg, adm.meta, who, (m) => (notes.push(m), true), runtimes.get(p)!.current());
}

describe('MCP era selection (eraOf)', () => {
  const msg = (method: string, metaVersion?: string) => ({ jsonrpc: '2.0', id: 1, method, params: metaVersion === undefined ? {} : { _meta: { [META.protocolVersion]: metaVersion } } });
  const table: [string, unknown, boolean, string | undefined, 'legacy' | 'modern'][] = [
    ['modern _meta version', msg('tools/list', V), false, undefined, 'modern'],
    ['modern _meta even on a 2025 session', msg('tools/list', V), true, undefined, 'modern'],
    ['a 2025 session without _meta', msg('tools/list'), true, '2025-11-25', 'legacy'],
    ['2025 initialize, no header', msg('initialize'), false, undefined, 'legacy'],
    ['2025 initialize with a 2025 header', msg('initialize'), false, '2025-06-18', 'legacy'],
    ['initialize under a 2026 header (404 there)', msg('initialize'), false, V, 'modern'],
    ['server/discover with no _meta (-32602 there)', msg('server/discover'), false, V, 'modern'],
    ['server/discover with no header at all', msg('server/discover'), false, undefined, 'modern'],
    ['an unknown version header (-32022 there)', msg('tools/list'), false, 'v999.0.0', 'modern'],
    ['no session, no header, a shared method (2025 400)', msg('tools/list'), false, undefined, 'legacy'],
    ['a batch, even with modern _meta inside (2026 has none)', [msg('tools/list', V)], false, V, 'legacy'],
    ['a value that is not a message, under a 2026 header', 42, false, V, 'modern'],
  ];
  for (const [name, body, session, header, era] of table) it(`${name} → ${era}`, () => assert.equal(eraOf(body, session, header), era));
});

describe('MCP 2026-07-28 admission (order, codes, statuses)', () => {
  const h = (o: Record<string, string>) => (n: string) => o[n];
  const good = { 'mcp-method': 'tools/call', 'mcp-protocol-version': V, 'mcp-name': 'echo' };
  const call1 = (params: Record<string, unknown>, m: Record<string, unknown> = meta()) => ({ jsonrpc: '2.0' as const, id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, ...params, _meta: m } });
  const table: [string, JsonRpcRequest, Record<string, string>, number, number][] = [
    ['Mcp-Method missing first, even before bad _meta', { ...call1({}), params: {} }, { 'mcp-protocol-version': V }, 400, -32020],
    ['Mcp-Method differs (case matters)', call1({}), { ...good, 'mcp-method': 'TOOLS/CALL' }, 400, -32020],
    ['_meta missing', { ...call1({}), params: { name: 'echo' } }, good, 400, -32602],
    ['_meta without clientCapabilities', call1({}, { [META.protocolVersion]: V }), good, 400, -32602],
    ['header version differs from _meta (before the support check)', call1({}, meta({ [META.protocolVersion]: 'v999.0.0' })), good, 400, -32020],
    ['unsupported version', call1({}, meta({ [META.protocolVersion]: 'v999.0.0' })), { ...good, 'mcp-protocol-version': 'v999.0.0' }, 400, -32022],
    ['a 2025 version in the modern envelope', call1({}, meta({ [META.protocolVersion]: '2025-11-25' })), { ...good, 'mcp-protocol-version': '2025-11-25' }, 400, -32022],
    ['Mcp-Name missing', call1({}), { 'mcp-method': 'tools/call', 'mcp-protocol-version': V }, 400, -32020],
    ['Mcp-Name differs', call1({}), { ...good, 'mcp-name': 'other' }, 400, -32020],
    ['Mcp-Name bad base64 padding', call1({}), { ...good, 'mcp-name': '=?base64?ZWNobw?=' }, 400, -32020],
    ['Mcp-Param-Region missing while arguments.region is set', call1({ arguments: { region: 'eu' } }), good, 400, -32020],
    ['Mcp-Param-Region differs', call1({ arguments: { region: 'eu' } }), { ...good, 'mcp-param-region': 'us' }, 400, -32020],
    ['a logLevel that is not a level', call1({}, meta({ [META.logLevel]: 'loud' })), good, 400, -32602],
  ];
  for (const [name, msg, headers, status, code] of table) {
    it(`${name} → ${status} ${code}`, () => {
      const adm = make().admit(msg, h(headers));
      assert.ok(!adm.ok);
      assert.equal(adm.status, status);
      assert.equal(adm.answer.error?.code, code);
      assert.equal(adm.answer.id, 7, 'every error echoes the request id');
    });
  }
  it('the unsupported-version error lists the supported versions and echoes the requested one', () => {
    const adm = make().admit(call1({}, meta({ [META.protocolVersion]: '1900-01-01' })));
    assert.ok(!adm.ok);
    assert.deepEqual(adm.answer.error?.data, { supported: [...SUPPORTED_VERSIONS], requested: '1900-01-01' });
  });
  it('removed and unknown methods → 404 -32601', () => {
    for (const m of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'unknown/method']) {
      const adm = make().admit(req(m));
      assert.ok(!adm.ok, m);
      assert.deepEqual([adm.status, adm.answer.error?.code], [404, -32601], m);
    }
  });
  it('accepts matching headers, a base64-encoded Mcp-Name, a missing clientInfo and a null custom-header argument', () => {
    assert.ok(make().admit(call1({}), h(good)).ok);
    assert.ok(make().admit(call1({}), h({ ...good, 'mcp-name': `=?base64?${Buffer.from('echo').toString('base64')}?=` })).ok);
    assert.ok(make().admit(call1({ arguments: { region: null } }), h(good)).ok);
    assert.ok(make().admit(call1({ arguments: { region: 'eu' } }), h({ ...good, 'mcp-param-region': 'eu' })).ok);
  });
  it('decodes the base64 sentinel strictly', () => {
    assert.equal(decodeHeaderValue('=?base64?SGVsbG8=?='), 'Hello');
    assert.equal(decodeHeaderValue('=?base64?SGVsbG8?='), undefined);
    assert.equal(decodeHeaderValue('=?base64?SGVs!!!bG8=?='), undefined);
    assert.equal(decodeHeaderValue('plain'), 'plain');
  });
});

describe('MCP 2026-07-28 results', () => {
  it('server/discover: versions, capabilities, instructions, serverInfo, resultType and cache hints; the same for every caller', async () => {
    const p = make();
    const a = (await call(p, req('server/discover'))).answer.result as Record<string, unknown>;
    const b = (await call(p, req('server/discover'), admin)).answer.result as Record<string, unknown>;
    assert.deepEqual(a, b);
    assert.deepEqual(a.supportedVersions, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']);
    assert.equal(a.resultType, 'complete');
    assert.equal(a.instructions, 'be nice');
    assert.deepEqual((a._meta as Record<string, unknown>)[META.serverInfo], { name: 'unit', version: '1.2.3' });
    assert.ok(!JSON.stringify(a).includes('secret'), 'no capability names in discover');
    assert.deepEqual([a.ttlMs, a.cacheScope], [0, 'public']);
  });
  it('lists are filtered per caller and, when they depend on scopes, private', async () => {
    const p = make(runtime({ ttl_ms: 60000, scope: 'public' }));
    const mine = (await call(p, req('tools/list'))).answer.result as { tools: { name: string }[]; ttlMs: number; cacheScope: string; resultType: string };
    assert.deepEqual(mine.tools.map((t) => t.name), ['echo', 'ask', 'talk']);
    assert.deepEqual([mine.ttlMs, mine.cacheScope, mine.resultType], [60000, 'private', 'complete']);
    const theirs = (await call(p, req('tools/list'), admin)).answer.result as { tools: { name: string }[] };
    assert.ok(theirs.tools.some((t) => t.name === 'secret'));
    const prompts = (await call(p, req('prompts/list'))).answer.result as { cacheScope: string };
    assert.equal(prompts.cacheScope, 'public', 'a list no scope filters may be public');
  });
  it('resources/read carries the resource\'s hint; a scoped resource is private whatever it says', async () => {
    const p = make();
    const open = (await call(p, req('resources/read', { uri: 'r://open' }))).answer.result as Record<string, unknown>;
    assert.deepEqual([open.ttlMs, open.cacheScope], [5000, 'public']);
    const closed = (await call(p, req('resources/read', { uri: 'r://closed' }), admin)).answer.result as Record<string, unknown>;
    assert.deepEqual([closed.ttlMs, closed.cacheScope], [5000, 'private']);
  });
  it('auto is public only on a public route for a caller-independent answer', () => {
    assert.equal(hintOf({ ttl_ms: 1, scope: 'auto' }, false, true).cacheScope, 'public');
    assert.equal(hintOf({ ttl_ms: 1, scope: 'auto' }, false, false).cacheScope, 'private');
    assert.equal(hintOf({ ttl_ms: 1, scope: 'public' }, true, true).cacheScope, 'private');
    assert.equal(hintOf({ ttl_ms: 1, scope: 'private' }, false, true).cacheScope, 'private');
  });
  it('a missing resource is -32602 with data.uri', async () => {
    const r = await call(make(), req('resources/read', { uri: 'r://nope' }));
    assert.equal(r.answer.error?.code, -32602);
    assert.equal((r.answer.error?.data as { uri: string }).uri, 'r://nope');
  });
  it('tools/call has resultType; a tool the caller lacks scopes for is refused', async () => {
    const ok = await call(make(), req('tools/call', { name: 'echo', arguments: { text: 'hi' } }));
    assert.deepEqual(ok.answer.result, { content: [{ type: 'text', text: 'echo:hi' }], resultType: 'complete', _meta: { [META.serverInfo]: { name: 'unit', version: '1.2.3' } } });
    const denied = await call(make(), req('tools/call', { name: 'secret' }));
    assert.equal(denied.answer.error?.code, -32003);
  });
  it('notifications/message only when the request names a logLevel, at or above it', async () => {
    const none: JsonRpcNotification[] = [];
    await call(make(), req('tools/call', { name: 'talk' }), anon, none);
    assert.deepEqual(none, []);
    const some: JsonRpcNotification[] = [];
    await call(make(), req('tools/call', { name: 'talk', _meta: { [META.logLevel]: 'info' } }), anon, some);
    assert.deepEqual(some.map((n) => (n.params as { data: string }).data), ['high']);
  });
  it('a server→client request the request did not declare the capability for → 400 -32021 with requiredCapabilities', async () => {
    const r = await call(make(), req('tools/call', { name: 'ask' }));
    assert.equal(r.status, 400);
    assert.equal(r.answer.error?.code, -32021);
    assert.deepEqual(r.answer.error?.data, { requiredCapabilities: { sampling: {} } });
  });
  it('subscriptions/listen acknowledges only what the caller may see, tagged with the request id, before anything else', async () => {
    const sent: JsonRpcNotification[] = [];
    const stop = await make().listen(req('subscriptions/listen', { notifications: { toolsListChanged: true, resourceSubscriptions: ['r://open', 'r://closed', 'r://nope'], bogus: true } }, 42), anon, (m) => sent.push(m) > 0);
    assert.deepEqual(sent.map((m) => [m.method, m.params]), [['notifications/subscriptions/acknowledged', { _meta: { [META.subscriptionId]: 42 }, notifications: { toolsListChanged: true, resourceSubscriptions: ['r://open'] } }]]);
    stop();
  });
});

describe('MCP 2026-07-28 per-call state (built only when needed)', () => {
  const SAMPLING = { [META.clientCapabilities]: { sampling: {} } };
  const sampled = { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' };

  /** A protocol whose requestState sealer counts its seals and opens. */
  function counted(tasks?: unknown) {
    const rounds = new InputRounds({ ttlMs: 60_000 });
    const uses = { seal: 0, open: 0 };
    const { seal, open } = rounds.sealer;
    rounds.sealer.seal = (...a) => (uses.seal++, seal.apply(rounds.sealer, a));
    rounds.sealer.open = (...a) => (uses.open++, open.apply(rounds.sealer, a));
    const rt = runtime();
    const p = new ModernProtocol({ runtime: rt, logger: log, transport: 'mcp', routePublic: true, rounds, tasks: tasks as never });
    runtimes.set(p, rt);
    return { p, uses };
  }

  it('a call that carries no state and asks nothing seals and opens nothing, and never reads its signal', async () => {
    const { p, uses } = counted();
    const msg = req('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    const adm = p.admit(msg);
    assert.ok(adm.ok);
    let reads = 0;
    const source = { get signal() { reads++; return new AbortController().signal; } };
    const r = await p.handle(msg, adm.meta, anon, () => true, runtimes.get(p)!.current(), source);
    assert.equal((r.answer.result as { resultType: string }).resultType, 'complete');
    assert.deepEqual(uses, { seal: 0, open: 0 });
    assert.equal(reads, 0);
  });

  it('a handler\'s first request builds the round: input_required, then the answer, and the state is good once', async () => {
    const { p, uses } = counted();
    const first = await call(p, req('tools/call', { name: 'ask', _meta: SAMPLING }));
    const asked = first.answer.result as { resultType: string; inputRequests: Record<string, unknown>; requestState: string };
    assert.equal(asked.resultType, 'input_required');
    assert.deepEqual(Object.keys(asked.inputRequests), ['input-1']);
    assert.deepEqual(uses, { seal: 1, open: 0 });
    const again = { name: 'ask', requestState: asked.requestState, inputResponses: { 'input-1': sampled }, _meta: SAMPLING };
    const done = await call(p, req('tools/call', again));
    assert.equal((done.answer.result as { resultType: string }).resultType, 'complete');
    const replay = await call(p, req('tools/call', again));
    assert.equal(replay.answer.error?.code, -32602);
    assert.equal((replay.answer.error?.data as { code: string }).code, 'REQUEST_STATE_INVALID');
  });

  it('a carried requestState is checked before the handler runs, even when the handler asks nothing', async () => {
    const { p } = counted();
    const r = await call(p, req('tools/call', { name: 'echo', arguments: { text: 'hi' }, requestState: 'v1.forged.state' }));
    assert.equal((r.answer.error?.data as { code: string }).code, 'REQUEST_STATE_INVALID');
    const bad = await call(p, req('tools/call', { name: 'echo', arguments: { text: 'hi' }, inputResponses: { 'input-1': 'not an object' } }));
    assert.equal((bad.answer.error?.data as { code: string }).code, 'INPUT_RESPONSES_INVALID');
  });

  it('a tool whose task mode is forbidden never consults the task engine', async () => {
    const touched: PropertyKey[] = [];
    const engine = new Proxy({}, { get: (_t, k) => (touched.push(k), () => { throw new Error('task engine used'); }) });
    const { p } = counted(engine);
    const r = await call(p, req('tools/call', { name: 'echo', arguments: { text: 'hi' } }));
    assert.deepEqual(r.answer.result, { content: [{ type: 'text', text: 'echo:hi' }], resultType: 'complete', _meta: { [META.serverInfo]: { name: 'unit', version: '1.2.3' } } });
    assert.deepEqual(touched, []);
  });
});
