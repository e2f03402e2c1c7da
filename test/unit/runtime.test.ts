// The Runtime without sockets: a FastSvc built in code, compiled by buildCatalog,
// driven directly. Scope decisions, input validation, result shaping
// (output_mode, inline_ok), per-principal lists, and catalog swaps.

import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FastSvc } from '../../src/core/fast-svc.js';
import { buildCatalog } from '../../src/core/catalog.js';
import { Runtime, type AdmittedTool, type ChangeSet } from '../../src/runtime/runtime.js';
import type { Principal, ToolDef } from '../../src/core/types.js';
import { makeContext } from '../helpers/context.js';
import { rejectsWithCode } from '../helpers/errors.js';
import { SvcError } from '../../src/errors.js';
import { JsonReply } from '../../src/runtime/backends/contract.js';

const INLINE_LIMIT = 64;
const silent = pino({ level: 'silent' });

function app(extraTools: ToolDef[] = []): FastSvc {
  const svc = new FastSvc({ name: 'runtime-test' });
  svc.tool({
    name: 'greet.hello',
    description: 'greets',
    input_schema: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } }, required: ['name'], additionalProperties: false },
    required_scopes: ['greet.use'],
    handler: (input) => `Hello, ${input.name as string}!`,
  });
  svc.tool({ name: 'admin.both', description: 'needs two scopes', required_scopes: ['greet.use', 'admin.all'], handler: () => 'ok' });
  svc.tool({ name: 'open.ping', description: 'no scopes', handler: () => 'pong' });
  svc.tool({ name: 'json.obj', description: 'json object', output_mode: 'json', handler: () => '{"a":1,"b":[true]}' });
  svc.tool({ name: 'json.num', description: 'json scalar', output_mode: 'json', handler: () => '42' });
  svc.tool({ name: 'json.bad', description: 'json that is not', output_mode: 'json', handler: () => 'not json {' });
  svc.tool({ name: 'scalar.obj', description: 'scalar object', handler: () => ({ x: 1 }) });
  svc.tool({ name: 'big.linked', description: 'big, not inline', inline_ok: false, input_schema: { type: 'object', properties: { n: { type: 'integer' } } }, handler: (i) => 'x'.repeat(i.n as number) });
  svc.tool({ name: 'big.inline', description: 'big, inline', handler: () => 'y'.repeat(INLINE_LIMIT * 4) });
  for (const t of extraTools) svc.tool(t);
  svc.resource({ uri: 'docs://secret', name: 'secret', required_scopes: ['admin.all'], read: (uri) => [{ uri, text: 'classified' }] });
  svc.resource({ uri: 'docs://open', name: 'open', read: (uri) => [{ uri, text: 'public' }] });
  svc.resource({ uri_template: 'notes://{id}', name: 'note', required_scopes: ['greet.use'], read: (uri, vars) => [{ uri, text: `note ${vars.id}` }] });
  svc.prompt({ name: 'p.ask', arguments: [{ name: 'topic', required: true }], required_scopes: ['greet.use'], get: (a) => [{ role: 'user', content: { type: 'text', text: `about ${a.topic}` } }] });
  svc.prompt({ name: 'p.admin', required_scopes: ['admin.all'], get: () => [] });
  return svc;
}

const principal = (sub: string, scopes: string[]): Principal => ({ sub, scopes: new Set(scopes), kind: 'static' });
const ctxFor = (p: Principal) => makeContext({ principal: p });
const textOf = (r: { content: { type: string; text?: string }[] }) => r.content.map((c) => c.text ?? '').join('');
/** The lists part of a change set (no resource's contents change in these swaps). */
const lists = ({ tools, resources, prompts, updated }: ChangeSet) => (assert.equal(updated.size, 0), { tools, resources, prompts });
const names = (list: object[], key = 'name') => list.map((x) => (x as Record<string, string>)[key]).sort();

describe('runtime', () => {
  let rt: Runtime;
  beforeEach(() => {
    rt = new Runtime(buildCatalog(app()), { inlineLimit: INLINE_LIMIT, logger: silent });
  });

  describe('scopes', () => {
    it('allows a call when the principal holds every required scope', async () => {
      const r = await rt.callTool('greet.hello', { name: 'Ada' }, makeContext({ scopes: ['greet.use'] }));
      assert.equal(textOf(r), 'Hello, Ada!');
    });

    it('denies with INSUFFICIENT_SCOPE, data.required = all required, data.missing = what is lacking', async () => {
      const err = await rejectsWithCode(rt.callTool('admin.both', {}, makeContext({ scopes: ['greet.use'] })), 'INSUFFICIENT_SCOPE');
      assert.deepEqual([...(err.data!.required as string[])], ['greet.use', 'admin.all']);
      assert.deepEqual(err.data!.missing, ['admin.all']);
    });

    it('denies before validating input or running the backend', async () => {
      let ran = false;
      const r2 = new Runtime(buildCatalog(app([{ name: 'guarded.run', description: 'x', required_scopes: ['admin.all'], input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, handler: () => { ran = true; return 'ran'; } }])), { inlineLimit: INLINE_LIMIT, logger: silent });
      await rejectsWithCode(r2.callTool('guarded.run', { n: 'not a number' }, makeContext({ scopes: [] })), 'INSUFFICIENT_SCOPE');
      assert.equal(ran, false);
    });

    it('a capability with no required_scopes is usable by any principal, even one with no scopes', async () => {
      assert.equal(textOf(await rt.callTool('open.ping', {}, makeContext({ scopes: [] }))), 'pong');
      assert.deepEqual((await rt.readResource('docs://open', makeContext({ scopes: [] })))[0], { uri: 'docs://open', text: 'public' });
      assert.equal(rt.refollow('open.ping', {}, principal('x', [])), undefined);
    });

    it('resources and prompts are checked too', async () => {
      const none = makeContext({ scopes: [] });
      const e1 = await rejectsWithCode(rt.readResource('docs://secret', none), 'INSUFFICIENT_SCOPE');
      assert.deepEqual(e1.data!.missing, ['admin.all']);
      await rejectsWithCode(rt.readResource('notes://7', none), 'INSUFFICIENT_SCOPE');
      await rejectsWithCode(rt.getPrompt('p.ask', { topic: 't' }, none), 'INSUFFICIENT_SCOPE');
      const ok = makeContext({ scopes: ['greet.use'] });
      assert.equal((await rt.readResource('notes://7', ok))[0]!.uri, 'notes://7');
      assert.deepEqual((await rt.readResource('notes://7', ok)).map((c) => ('text' in c ? c.text : '')), ['note 7']);
      const prompt = await rt.getPrompt('p.ask', { topic: 'tides' }, ok);
      assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: 'about tides' } }]);
    });

    it('refollow() admits a call again without running it: undefined, or the refusal (access, NOT_FOUND for a tool no longer served); refusal() makes its error', () => {
      const ctx = makeContext({ scopes: ['greet.use'] });
      assert.equal(rt.refollow('greet.hello', { name: 'a' }, ctx.principal), undefined);
      const denied = rt.refollow('admin.both', {}, ctx.principal);
      assert.equal(denied?.step, 'access');
      const err = rt.refusal(denied!, 'tool', 'admin.both', ctx);
      assert.equal(err.code, 'INSUFFICIENT_SCOPE');
      assert.deepEqual(err.data?.missing, ['admin.all']);
      const gone = rt.refollow('nope.nope', {}, ctx.principal);
      assert.equal(gone?.step, 'served');
      assert.equal(rt.refusal(gone!, 'tool', 'nope.nope', ctx).code, 'NOT_FOUND');
    });

    it('mayRead() filters resources without logging: fixed and templated URIs by their scopes, unknown ones never', () => {
      assert.equal(rt.mayRead('docs://open', principal('x', [])), true);
      assert.equal(rt.mayRead('docs://secret', principal('x', [])), false);
      assert.equal(rt.mayRead('docs://secret', principal('x', ['admin.all'])), true);
      assert.equal(rt.mayRead('notes://7', principal('x', ['greet.use'])), true);
      assert.equal(rt.mayRead('nope://1', principal('x', ['admin.all'])), false);
    });
  });

  describe('the one decision: task or plain call, quota', () => {
    const tasked = (task: 'forbidden' | 'optional' | 'required', extra: Partial<ToolDef> = {}): ToolDef => ({ name: `t.${task}`, description: task, task, handler: () => 'ran plain', ...extra });
    const make = (tools: ToolDef[]) => new Runtime(buildCatalog(app(tools)), { inlineLimit: INLINE_LIMIT, logger: silent });

    it('runs as a task exactly when the tool and the way the call asked say so; a plain MCP call to a task-only tool is TASK_REQUIRED', async () => {
      const r = make([tasked('forbidden'), tasked('optional'), tasked('required')]);
      const ctx = makeContext({ scopes: [] });
      const outcome = async (name: string, ask: 'asked' | 'plain' | 'auto') => {
        const got = await r.callTool(name, {}, ctx, { task: ask, startTask: async (call) => `task of ${call.entry.def.name}` });
        return typeof got === 'string' ? got : textOf(got);
      };
      assert.deepEqual(await Promise.all([outcome('t.forbidden', 'asked'), outcome('t.forbidden', 'auto'), outcome('t.forbidden', 'plain')]), ['ran plain', 'ran plain', 'ran plain']);
      assert.deepEqual(await Promise.all([outcome('t.optional', 'asked'), outcome('t.optional', 'auto'), outcome('t.optional', 'plain')]), ['task of t.optional', 'ran plain', 'ran plain']);
      assert.deepEqual(await Promise.all([outcome('t.required', 'asked'), outcome('t.required', 'auto')]), ['task of t.required', 'task of t.required']);
      await rejectsWithCode(outcome('t.required', 'plain'), 'TASK_REQUIRED');
      await rejectsWithCode(r.callTool('t.required', {}, ctx), 'TASK_REQUIRED');
    });

    it('decides access before the task question, and validates the arguments before any task starts', async () => {
      const r = make([tasked('required', { required_scopes: ['admin.all'], input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } })]);
      let started = 0;
      const start = async () => ++started;
      await rejectsWithCode(r.callTool('t.required', { n: 1 }, makeContext({ scopes: [] }), { task: 'plain', startTask: start }), 'INSUFFICIENT_SCOPE');
      await rejectsWithCode(r.callTool('t.required', { n: 'x' }, makeContext({ scopes: ['admin.all'] }), { task: 'asked', startTask: start }), 'INVALID_INPUT');
      assert.equal(started, 0);
    });

    it('takes the quota at admission: a task holds its slot until its run ends, and a start that fails gives it back', async () => {
      const r = make([tasked('optional', { limits: { concurrent: 1 } })]);
      const ctx = makeContext({ scopes: [] });
      let held: AdmittedTool | undefined;
      await r.callTool('t.optional', {}, ctx, { task: 'asked', startTask: async (call) => (held = call) });
      const limited = await rejectsWithCode(r.callTool('t.optional', {}, ctx, { task: 'asked', startTask: async () => 'never' }), 'RATE_LIMITED');
      assert.equal(typeof limited.data?.retryAfterMs, 'number');
      assert.equal(textOf(await r.run(held!, ctx)), 'ran plain', 'the task runs its admitted call');
      await rejectsWithCode(r.callTool('t.optional', {}, ctx, { task: 'asked', startTask: async () => { throw new SvcError('TASK_LIMIT_REACHED', 'full'); } }), 'TASK_LIMIT_REACHED');
      assert.equal(textOf(await r.callTool('t.optional', {}, ctx)), 'ran plain', 'the failed start released the slot it took');
    });
  });

  describe('input and lookup', () => {
    it('INVALID_INPUT carries the schema errors', async () => {
      const ctx = makeContext({ scopes: ['greet.use'] });
      const err = await rejectsWithCode(rt.callTool('greet.hello', { name: 'far too long a name', extra: 1 }, ctx), 'INVALID_INPUT');
      const errors = err.data!.errors as { path: string; message: string }[];
      assert.ok(Array.isArray(errors) && errors.length >= 2, `expected ≥2 schema errors, got ${JSON.stringify(errors)}`);
      assert.ok(errors.some((e) => e.path === '/name'), 'the maxLength error points at /name');
      const missing = await rejectsWithCode(rt.callTool('greet.hello', {}, ctx), 'INVALID_INPUT');
      assert.ok((missing.data!.errors as unknown[]).length >= 1);
    });

    it('arguments that are not an object are INVALID_INPUT', async () => {
      const ctx = makeContext({ scopes: ['greet.use'] });
      await rejectsWithCode(rt.callTool('greet.hello', [1, 2], ctx), 'INVALID_INPUT');
      await rejectsWithCode(rt.callTool('greet.hello', 'Ada', ctx), 'INVALID_INPUT');
    });

    it('prompt arguments are checked: required present, undeclared refused', async () => {
      const ctx = makeContext({ scopes: ['greet.use'] });
      await rejectsWithCode(rt.getPrompt('p.ask', {}, ctx), 'INVALID_INPUT');
      await rejectsWithCode(rt.getPrompt('p.ask', { topic: 't', other: 'x' }, ctx), 'INVALID_INPUT');
    });

    it('unknown tool, resource and prompt are NOT_FOUND', async () => {
      const ctx = makeContext({ scopes: ['greet.use', 'admin.all'] });
      await rejectsWithCode(rt.callTool('nope.nope', {}, ctx), 'NOT_FOUND');
      await rejectsWithCode(rt.readResource('docs://nope', ctx), 'NOT_FOUND');
      await rejectsWithCode(rt.getPrompt('nope', {}, ctx), 'NOT_FOUND');
    });
  });

  describe('result shaping', () => {
    const any = () => makeContext({ scopes: [] });

    it('output_mode json: parsed into structuredContent, and text is the JSON', async () => {
      const r = await rt.callTool('json.obj', {}, any());
      assert.deepEqual(r.structuredContent, { a: 1, b: [true] });
      assert.deepEqual(JSON.parse(textOf(r)), { a: 1, b: [true] });
      const n = await rt.callTool('json.num', {}, any());
      assert.deepEqual(n.structuredContent, { result: 42 });
    });

    it('output_mode json with output that is not JSON is BACKEND_FAILED', async () => {
      await rejectsWithCode(rt.callTool('json.bad', {}, any()), 'BACKEND_FAILED');
    });

    it('output_mode scalar: text only, objects rendered as JSON text', async () => {
      const r = await rt.callTool('scalar.obj', {}, any());
      assert.equal(r.structuredContent, undefined);
      assert.deepEqual(JSON.parse(textOf(r)), { x: 1 });
    });

    // What an http backend answers for a JSON body (JsonReply): structured whatever output_mode says.
    const replies = () => new Runtime(buildCatalog(app([
      { name: 'reply.obj', description: 'a JSON answer', handler: () => new JsonReply({ id: 7 }) },
      { name: 'reply.list', description: 'a JSON list answer', handler: () => new JsonReply([1, 2]) },
      { name: 'reply.big', description: 'a big JSON answer, not inline', inline_ok: false, handler: () => new JsonReply({ s: 'z'.repeat(INLINE_LIMIT) }) },
    ])), { inlineLimit: INLINE_LIMIT, logger: silent });

    it('a JsonReply (an http JSON answer) is structured content and its JSON text, in scalar mode too', async () => {
      const rt = replies();
      const r = await rt.callTool('reply.obj', {}, any());
      assert.deepEqual(r.structuredContent, { id: 7 });
      assert.equal(textOf(r), '{"id":7}');
      assert.deepEqual((await rt.callTool('reply.list', {}, any())).structuredContent, { result: [1, 2] });
    });

    it('a JsonReply over the inline limit of an inline_ok: false tool becomes a link to application/json', async () => {
      const r = await replies().callTool('reply.big', {}, any());
      assert.equal(r.content[0]!.type, 'resource_link');
      assert.equal((r.content[0] as { mimeType: string }).mimeType, 'application/json');
    });

    it('inline_ok true keeps even a big result inline', async () => {
      const r = await rt.callTool('big.inline', {}, any());
      assert.equal(r.content[0]!.type, 'text');
      assert.equal(textOf(r).length, INLINE_LIMIT * 4);
    });

    it('inline_ok false: a small result stays inline', async () => {
      const r = await rt.callTool('big.linked', { n: INLINE_LIMIT }, any());
      assert.deepEqual(r.content, [{ type: 'text', text: 'x'.repeat(INLINE_LIMIT) }]);
    });

    it('inline_ok false: a result over the inline limit becomes a svc://results/ID link readable by the same subject only', async () => {
      const alice = principal('alice', []);
      const r = await rt.callTool('big.linked', { n: INLINE_LIMIT + 1 }, ctxFor(alice));
      assert.equal(r.content.length, 1);
      const link = r.content[0]!;
      assert.equal(link.type, 'resource_link');
      const uri = (link as { uri: string }).uri;
      assert.match(uri, /^svc:\/\/results\/[A-Za-z0-9-]+$/);
      const read = await rt.readResource(uri, ctxFor(alice));
      assert.deepEqual(read.map((c) => ('text' in c ? c.text : '')), ['x'.repeat(INLINE_LIMIT + 1)]);
      // Another subject — even one holding every scope — cannot read it.
      await rejectsWithCode(rt.readResource(uri, ctxFor(principal('bob', ['greet.use', 'admin.all']))), 'NOT_FOUND');
      await rejectsWithCode(rt.readResource('svc://results/not-an-id', ctxFor(alice)), 'NOT_FOUND');
    });
  });

  describe('lists', () => {
    it('show each principal only what it may use', () => {
      const none = principal('none', []);
      const greeter = principal('greeter', ['greet.use']);
      const admin = principal('admin', ['greet.use', 'admin.all']);
      const open = ['big.inline', 'big.linked', 'json.bad', 'json.num', 'json.obj', 'open.ping', 'scalar.obj'];
      assert.deepEqual(names(rt.listTools(none)), open);
      assert.deepEqual(names(rt.listTools(greeter)), [...open, 'greet.hello'].sort());
      assert.deepEqual(names(rt.listTools(admin)), [...open, 'admin.both', 'greet.hello'].sort());
      assert.deepEqual(names(rt.listResources(none), 'uri'), ['docs://open']);
      assert.deepEqual(names(rt.listResources(admin), 'uri'), ['docs://open', 'docs://secret']);
      assert.deepEqual(names(rt.listResourceTemplates(none), 'uriTemplate'), []);
      assert.deepEqual(names(rt.listResourceTemplates(greeter), 'uriTemplate'), ['notes://{id}']);
      assert.deepEqual(names(rt.listPrompts(greeter)), ['p.ask']);
      assert.deepEqual(names(rt.listPrompts(admin)), ['p.admin', 'p.ask']);
    });

    it('tool listings use the MCP wire shape', () => {
      const t = rt.listTools(principal('g', ['greet.use'])).find((x) => (x as { name: string }).name === 'greet.hello') as Record<string, unknown>;
      assert.equal(t.description, 'greets');
      assert.deepEqual((t.inputSchema as { required: string[] }).required, ['name']);
    });
  });

  describe('swap', () => {
    it('returns the change set and tells onChange listeners; unchanged kinds are false', () => {
      const seen: ChangeSet[] = [];
      const off = rt.onChange((c) => seen.push(c));
      const next = app();
      next.prompt({ name: 'p.new', get: () => [] });
      const changes = rt.swap(buildCatalog(next));
      assert.deepEqual(lists(changes), { tools: false, resources: false, prompts: true });
      assert.deepEqual(seen.map(lists), [{ tools: false, resources: false, prompts: true }]);
      assert.ok(rt.current().prompts.has('p.new'));

      const withTool = app([{ name: 'new.tool', description: 'n', handler: () => 'n' }]);
      withTool.prompt({ name: 'p.new', get: () => [] });
      assert.deepEqual(lists(rt.swap(buildCatalog(withTool))), { tools: true, resources: false, prompts: false });
      assert.equal(seen.length, 2);

      off();
      assert.deepEqual(lists(rt.swap(buildCatalog(app()))), { tools: true, resources: false, prompts: true });
      assert.equal(seen.length, 2, 'an unsubscribed listener is not called');
    });

    it('a swap with no visible change reports nothing and calls no listener', () => {
      let calls = 0;
      rt.onChange(() => calls++);
      assert.deepEqual(lists(rt.swap(buildCatalog(app()))), { tools: false, resources: false, prompts: false });
      assert.equal(calls, 0);
    });

    it('a scope change counts as a change', () => {
      const next = new FastSvc({ name: 'runtime-test' });
      for (const [, def] of app().tools) next.tool(def.name === 'open.ping' ? { ...def, required_scopes: ['admin.all'] } : def);
      for (const [, def] of app().resources) next.resource(def);
      for (const [, def] of app().prompts) next.prompt(def);
      assert.deepEqual(lists(rt.swap(buildCatalog(next))), { tools: true, resources: false, prompts: false });
      return rejectsWithCode(rt.callTool('open.ping', {}, makeContext({ scopes: [] })), 'INSUFFICIENT_SCOPE');
    });

    it('a call that started before a swap finishes with the catalog it started with', async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let started!: () => void;
      const running = new Promise<void>((r) => (started = r));
      const before = app([{ name: 'slow.op', description: 'v1', output_mode: 'json', handler: async () => { started(); await gate; return '{"version":1}'; } }]);
      const after = app([{ name: 'slow.op', description: 'v2', required_scopes: ['admin.all'], handler: () => 'version 2' }]);
      const r2 = new Runtime(buildCatalog(before), { inlineLimit: INLINE_LIMIT, logger: silent });
      const ctx = makeContext({ scopes: [] });

      const call = r2.callTool('slow.op', {}, ctx);
      await running;
      r2.swap(buildCatalog(after));
      release();
      const r = await call;
      // v1's handler and v1's output_mode (json → structuredContent), not v2's.
      assert.deepEqual(r.structuredContent, { version: 1 });
      // A new call sees the new catalog: v2 requires admin.all.
      await rejectsWithCode(r2.callTool('slow.op', {}, ctx), 'INSUFFICIENT_SCOPE');
      assert.equal(textOf(await r2.callTool('slow.op', {}, makeContext({ scopes: ['admin.all'] }))), 'version 2');
    });
  });
});
