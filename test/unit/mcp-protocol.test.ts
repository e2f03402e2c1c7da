// The MCP session core over the real Runtime and a code-built catalog, no sockets:
// lifecycle, dispatch, error codes, scope denials, progress/logging, server→client
// requests, cancellation, batches and list-change notifications.

import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FastSvc } from '../../src/core/fast-svc.js';
import { buildCatalog } from '../../src/core/catalog.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { SvcError } from '../../src/errors.js';
import type { Principal } from '../../src/core/types.js';
import { McpSession, type Sink } from '../../src/mcp/protocol.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../../src/mcp/jsonrpc.js';

const log = pino({ level: 'silent' });

function app(extraTool = false): FastSvc {
  const svc = new FastSvc({ name: 'unit', version: '9.9.9', instructions: 'be nice' });
  svc.tool({ name: 'echo', description: 'echo', input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, handler: (i) => `echo:${i.text}` });
  svc.tool({
    name: 'paint', description: 'strict input',
    input_schema: { type: 'object', properties: { color: { enum: ['red', 'green'] }, coats: { type: 'integer', minimum: 1 } }, required: ['color', 'coats'], additionalProperties: false },
    handler: (i) => `${i.coats} coats of ${i.color}`,
  });
  svc.tool({ name: 'secret', description: 'needs admin', required_scopes: ['admin', 'read'], handler: () => 'classified' });
  svc.tool({ name: 'broken', description: 'fails', handler: () => { throw new SvcError('BACKEND_FAILED', 'upstream 500'); } });
  svc.tool({
    name: 'chatty', description: 'progress and logs',
    handler: async (_i, ctx) => {
      await ctx.channel.progress(0, 2);
      await ctx.channel.log('debug', 'hidden unless debug');
      await ctx.channel.log('info', 'step');
      await ctx.channel.progress(2, 2, 'done');
      return 'ok';
    },
  });
  svc.tool({
    name: 'ask', description: 'sampling',
    handler: async (_i, ctx) => {
      const r = await ctx.channel.request('sampling/createMessage', { messages: [], maxTokens: 5 }) as { content: { text: string } };
      return `model said ${r.content.text}`;
    },
  });
  svc.tool({
    name: 'slow', description: 'waits for abort',
    handler: (_i, ctx) => new Promise((_res, rej) => ctx.signal.addEventListener('abort', () => rej(new Error('aborted')))),
  });
  if (extraTool) svc.tool({ name: 'added', description: 'new', handler: () => 'x' });
  svc.resource({ uri: 'test://a', name: 'a', read: (uri) => [{ uri, text: 'A' }] });
  svc.resource({ uri_template: 'test://t/{id}', name: 't', read: (uri, v) => [{ uri, text: `id=${v.id}` }] });
  svc.prompt({ name: 'greet', arguments: [{ name: 'who', required: true, values: ['world', 'wally'] }], get: (a) => [{ role: 'user', content: { type: 'text', text: `hi ${a.who}` } }] });
  return svc;
}

function principal(scopes: string[] = []): Principal {
  return { sub: 'u1', kind: 'oauth', scopes: new Set(scopes) };
}

interface Harness { session: McpSession; runtime: Runtime; sent: JsonRpcMessage[] }

async function started(version = '2025-11-25', caps: Record<string, unknown> = { sampling: {} }): Promise<Harness> {
  const runtime = new Runtime(buildCatalog(app()), { inlineLimit: 16384, logger: log });
  const sent: JsonRpcMessage[] = [];
  const session = new McpSession({ runtime, logger: log, transport: 'mcp', send: (m) => (sent.push(m), true), requestTimeoutMs: 2000 });
  const init = await session.handle({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: caps, clientInfo: { name: 't', version: '1' } } }, principal());
  assert.equal((init as JsonRpcResponse).error, undefined);
  await session.handle({ jsonrpc: '2.0', method: 'notifications/initialized' }, principal());
  return { session, runtime, sent };
}

async function call(s: McpSession, method: string, params: Record<string, unknown> = {}, p = principal(), reply?: Sink): Promise<JsonRpcResponse> {
  return (await s.handle({ jsonrpc: '2.0', id: `r-${method}-${Math.random()}`, method, params }, p, { reply })) as JsonRpcResponse;
}

describe('mcp protocol core', () => {
  it('negotiates the protocol version and answers initialize with capabilities and server info', async () => {
    const runtime = new Runtime(buildCatalog(app()), { inlineLimit: 16384, logger: log });
    const mk = () => new McpSession({ runtime, logger: log, transport: 'mcp', send: () => true });
    const init = (v: string) => mk().handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: v, capabilities: {} } }, principal()) as Promise<JsonRpcResponse>;
    const older = (await init('2025-06-18')).result as Record<string, unknown>;
    assert.equal(older.protocolVersion, '2025-06-18');
    assert.deepEqual(older.serverInfo, { name: 'unit', version: '9.9.9' });
    assert.equal(older.instructions, 'be nice');
    assert.deepEqual(older.capabilities, {
      tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, prompts: { listChanged: true }, logging: {}, completions: {},
      extensions: { 'io.modelcontextprotocol/ui': {} },
    });
    assert.equal(((await init('1999-01-01')).result as Record<string, unknown>).protocolVersion, '2025-11-25');
    assert.equal((await mk().handle({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, principal()) as JsonRpcResponse).error?.code, -32602);
  });

  it('allows only initialize and ping before initialization, and initialize only once', async () => {
    const runtime = new Runtime(buildCatalog(app()), { inlineLimit: 16384, logger: log });
    const s = new McpSession({ runtime, logger: log, transport: 'ws', send: () => true });
    assert.deepEqual(await s.handle({ jsonrpc: '2.0', id: 'p', method: 'ping' }, principal()), { jsonrpc: '2.0', id: 'p', result: {} });
    assert.equal((await call(s, 'tools/list')).error?.code, -32600);
    const { session } = await started();
    assert.equal((await call(session, 'initialize', { protocolVersion: '2025-11-25' })).error?.code, -32600);
  });

  it('rejects malformed messages with -32600 and unknown methods with -32601', async () => {
    const { session } = await started();
    assert.deepEqual(await session.handle(42, principal()), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'a JSON-RPC message must be an object' } });
    assert.equal((await session.handle({ jsonrpc: '1.0', id: 3, method: 'ping' }, principal()) as JsonRpcResponse).error?.code, -32600);
    assert.equal((await session.handle({ jsonrpc: '2.0', id: null, method: 'ping' }, principal()) as JsonRpcResponse).error?.code, -32600);
    assert.equal((await session.handle({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: [1] }, principal()) as JsonRpcResponse).error?.code, -32600);
    const unknown = await call(session, 'no/such');
    assert.equal(unknown.error?.code, -32601);
    assert.equal(await session.handle({ jsonrpc: '2.0', method: 'notifications/whatever' }, principal()), undefined);
  });

  it('lists only what the caller may use', async () => {
    const { session } = await started();
    const names = (p: Principal) => call(session, 'tools/list', {}, p).then((r) => (r.result as { tools: { name: string }[] }).tools.map((t) => t.name));
    assert.ok(!(await names(principal())).includes('secret'));
    assert.ok((await names(principal(['admin', 'read']))).includes('secret'));
    const res = (await call(session, 'resources/list')).result as { resources: { uri: string }[] };
    assert.deepEqual(res.resources.map((r) => r.uri), ['test://a']);
    const tpl = (await call(session, 'resources/templates/list')).result as { resourceTemplates: { uriTemplate: string }[] };
    assert.deepEqual(tpl.resourceTemplates.map((r) => r.uriTemplate), ['test://t/{id}']);
    assert.equal((await call(session, 'tools/list', { cursor: 'abc' })).error?.code, -32602);
  });

  it('calls tools, reads resources, gets prompts and completes arguments', async () => {
    const { session } = await started();
    assert.deepEqual((await call(session, 'tools/call', { name: 'echo', arguments: { text: 'hi' } })).result, { content: [{ type: 'text', text: 'echo:hi' }] });
    assert.deepEqual((await call(session, 'resources/read', { uri: 'test://t/42' })).result, { contents: [{ uri: 'test://t/42', text: 'id=42' }] });
    const prompt = (await call(session, 'prompts/get', { name: 'greet', arguments: { who: 'Ada' } })).result as { messages: unknown[] };
    assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: 'hi Ada' } }]);
    const done = (await call(session, 'completion/complete', { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'wa' } })).result;
    assert.deepEqual(done, { completion: { values: ['wally'], total: 1, hasMore: false } });
  });

  it('maps errors: unknown → -32602, missing scope → -32003 with data, backend failure → isError result', async () => {
    const { session } = await started();
    const missing = await call(session, 'tools/call', { name: 'nope' });
    assert.equal(missing.error?.code, -32602);
    assert.equal((missing.error?.data as { code: string }).code, 'NOT_FOUND');
    const denied = await call(session, 'tools/call', { name: 'secret' }, principal(['read']));
    assert.equal(denied.error?.code, -32003);
    assert.deepEqual(denied.error?.data, { code: 'INSUFFICIENT_SCOPE', required: ['admin', 'read'], missing: ['admin'], scope: 'admin read' });
    const broken = (await call(session, 'tools/call', { name: 'broken' })).result as { isError: boolean; content: { text: string }[] };
    assert.equal(broken.isError, true);
    assert.match(broken.content[0]!.text, /BACKEND_FAILED/);
    assert.equal((await call(session, 'resources/read', { uri: 'test://none' })).error?.code, -32602);
    assert.equal((await call(session, 'tools/call', {})).error?.code, -32602);
  });

  it('reports invalid tool arguments as a tool error on 2025-11-25 and as -32602 before it', async () => {
    const latest = await started('2025-11-25');
    const r = (await call(latest.session, 'tools/call', { name: 'echo', arguments: {} })).result as { isError: boolean };
    assert.equal(r.isError, true);
    const older = await started('2025-06-18');
    assert.equal((await call(older.session, 'tools/call', { name: 'echo', arguments: {} })).error?.code, -32602);
  });

  it('says what was wrong with the arguments: readable text, and the /svc error (path, message, params) as structuredContent', async () => {
    const { session } = await started('2025-11-25');
    const args = { color: 'blue', coats: 'hunter2-secret-value', brush: true };
    const r = (await call(session, 'tools/call', { name: 'paint', arguments: args })).result as {
      isError: boolean; content: { type: string; text: string }[];
      structuredContent: { error: { code: string; errors: { path: string; message: string; params?: Record<string, unknown> }[] } };
    };
    assert.equal(r.isError, true);
    const text = r.content[0]!.text;
    assert.match(text, /^INVALID_INPUT: invalid arguments for paint: /);
    assert.match(text, /\/color: must be equal to one of the allowed values \("red", "green"\)/);
    assert.match(text, /\/coats: must be integer/);
    assert.match(text, /must NOT have additional properties \("brush"\)/);
    assert.ok(!text.includes('hunter2'), 'argument values are never echoed');
    const { error } = r.structuredContent;
    assert.equal(error.code, 'INVALID_INPUT');
    assert.deepEqual(error.errors.find((e) => e.path === '/color')?.params, { allowedValues: ['red', 'green'] });
    assert.ok(error.errors.some((e) => e.path === '/coats' && e.message === 'must be integer'));
    assert.ok(!JSON.stringify(r).includes('hunter2'), 'argument values are never echoed');
  });

  it('before 2025-11-25 the -32602 error carries the same list in its message and data', async () => {
    const { session } = await started('2025-06-18');
    const e = (await call(session, 'tools/call', { name: 'paint', arguments: { color: 'blue', coats: 2 } })).error!;
    assert.equal(e.code, -32602);
    assert.match(e.message, /\/color: must be equal to one of the allowed values \("red", "green"\)/);
    const data = e.data as { code: string; errors: { path: string }[] };
    assert.equal(data.code, 'INVALID_INPUT');
    assert.deepEqual(data.errors.map((x) => x.path), ['/color']);
  });

  it('sends progress only with a progress token, and logs at or above the level set', async () => {
    const { session } = await started();
    const got: JsonRpcMessage[] = [];
    const reply: Sink = (m) => (got.push(m), true);
    await session.handle({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'chatty', _meta: { progressToken: 'tok' } } }, principal(), { reply });
    assert.deepEqual(got.map((m) => ('method' in m ? m.method : '')), ['notifications/progress', 'notifications/message', 'notifications/progress']);
    assert.deepEqual((got[2] as { params: unknown }).params, { progressToken: 'tok', progress: 2, total: 2, message: 'done' });
    got.length = 0;
    assert.deepEqual((await call(session, 'logging/setLevel', { level: 'debug' })).result, {});
    await call(session, 'tools/call', { name: 'chatty' }, principal(), reply);
    assert.deepEqual(got.map((m) => (m as unknown as { params: { level: string } }).params.level), ['debug', 'info']);
    assert.equal((await call(session, 'logging/setLevel', { level: 'loud' })).error?.code, -32602);
  });

  it('carries a server→client request and its answer, and fails it without the client capability', async () => {
    const { session } = await started('2025-11-25', { sampling: {} });
    const out: JsonRpcMessage[] = [];
    const pending = session.handle({ jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'ask' } }, principal(), { reply: (m) => (out.push(m), true) });
    await new Promise((r) => setImmediate(r));
    const req = out[0] as { id: string; method: string };
    assert.equal(req.method, 'sampling/createMessage');
    assert.equal(await session.handle({ jsonrpc: '2.0', id: req.id, result: { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm' } }, principal()), undefined);
    assert.deepEqual(((await pending) as JsonRpcResponse).result, { content: [{ type: 'text', text: 'model said hello' }] });

    const bare = await started('2025-11-25', {});
    const r = (await call(bare.session, 'tools/call', { name: 'ask' })).result as { isError: boolean; content: { text: string }[] };
    assert.equal(r.isError, true);
    assert.match(r.content[0]!.text, /sampling capability/);
  });

  it('turns a client error answer into a tool error and fails requests nothing can carry', async () => {
    const { session } = await started();
    const out: JsonRpcMessage[] = [];
    const pending = session.handle({ jsonrpc: '2.0', id: 'c2', method: 'tools/call', params: { name: 'ask' } }, principal(), { reply: (m) => (out.push(m), true) });
    await new Promise((r) => setImmediate(r));
    await session.handle({ jsonrpc: '2.0', id: (out[0] as { id: string }).id, error: { code: -1, message: 'user said no' } }, principal());
    assert.match(JSON.stringify(((await pending) as JsonRpcResponse).result), /user said no/);
    const nowhere = (await call(session, 'tools/call', { name: 'ask' }, principal(), () => false)).result as { isError: boolean };
    assert.equal(nowhere.isError, true);
  });

  it('does not answer a request the client cancelled, and leaves nothing in flight', async () => {
    const { session } = await started();
    const pending = session.handle({ jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'slow' } }, principal());
    await new Promise((r) => setImmediate(r));
    assert.equal(session.inflight, 1);
    assert.equal((await session.handle({ jsonrpc: '2.0', id: 99, method: 'ping' }, principal()) as JsonRpcResponse).result !== undefined, true);
    await session.handle({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } }, principal());
    assert.equal(await pending, undefined);
    assert.equal(session.inflight, 0);
  });

  it('rejects a duplicate in-flight request id', async () => {
    const { session } = await started();
    const first = session.handle({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow' } }, principal());
    await new Promise((r) => setImmediate(r));
    assert.equal((await session.handle({ jsonrpc: '2.0', id: 5, method: 'tools/list' }, principal()) as JsonRpcResponse).error?.code, -32600);
    session.close();
    assert.equal(((await first) as JsonRpcResponse).error?.code, -32602);
  });

  it('handles batches on 2025-03-26 and rejects them on later versions', async () => {
    const old = await started('2025-03-26');
    const answers = await old.session.handle([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'b' } } },
    ], principal()) as JsonRpcResponse[];
    assert.deepEqual(answers.map((a) => a.id), [1, 2]);
    const latest = await started('2025-11-25');
    const r = await latest.session.handle([{ jsonrpc: '2.0', id: 1, method: 'ping' }], principal()) as JsonRpcResponse;
    assert.equal(r.error?.code, -32600);
    assert.equal((await old.session.handle([], principal()) as JsonRpcResponse).error?.code, -32600);
  });

  it('announces list changes after a reload and updates subscribed resources', async () => {
    const { session, runtime, sent } = await started();
    assert.deepEqual((await call(session, 'resources/subscribe', { uri: 'test://a' })).result, {});
    assert.equal((await call(session, 'resources/subscribe', { uri: 'test://missing' })).error?.code, -32602);
    runtime.swap(buildCatalog(app(true)));
    assert.deepEqual(sent.map((m) => (m as { method: string }).method), ['notifications/tools/list_changed']);
    sent.length = 0;
    const svc = app(true);
    svc.resource({ uri: 'test://b', name: 'b', read: (uri) => [{ uri, text: 'B' }] });
    runtime.swap(buildCatalog(svc));
    assert.deepEqual(sent, [
      { jsonrpc: '2.0', method: 'notifications/resources/list_changed' },
      { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'test://a' } },
    ]);
    assert.deepEqual((await call(session, 'resources/unsubscribe', { uri: 'test://a' })).result, {});
    session.close();
    sent.length = 0;
    runtime.swap(buildCatalog(app()));
    assert.deepEqual(sent, []);
  });

  it('keeps no per-request state after many calls', async () => {
    const { session } = await started();
    for (let i = 0; i < 2000; i++) await session.handle({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }, principal());
    assert.equal(session.inflight, 0);
  });
});
