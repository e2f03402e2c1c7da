// The task engine without sockets: a code-built catalog, a real Runtime and the memory store;
// every task starts as every transport starts one, from the runtime's one decision (admit()).
// Ownership (subject + client), the access re-check on every read after a policy change (a
// tenant-bound task included, with the arguments it was admitted with), the
// running caps, expiry of finished tasks, the module handler's signal aborting on cancel, and
// input requests answered piecewise (the 2026-07-28 tasks/update path), and startAfterInput
// (ask_before_task): no task until startTask(), an unanswered question leaves none behind; follow()
// of another replica's task through a shared store (two engines on one in-memory table).

import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FastSvc } from '../../src/core/fast-svc.js';
import { buildCatalog } from '../../src/core/catalog.js';
import type { CallContext, Principal } from '../../src/core/types.js';
import { Runtime, type AdmittedTool } from '../../src/runtime/runtime.js';
import { makeContext } from '../helpers/context.js';
import { PolicyStore } from '../../src/policy/store.js';
import { TokenTable } from '../../src/auth/bearer.js';
import { TaskEngine, type TaskRecord } from '../../src/tasks/engine.js';
import { MemoryTaskStore, type SharedTaskStore } from '../../src/tasks/task-store.js';
import type { Audit, AuditEvent } from '../../src/observe/audit.js';
import { Observer } from '../../src/observe/observer.js';
import { rejectsWithCode } from '../helpers/errors.js';
import { waitFor } from '../helpers/wait.js';

const silent = pino({ level: 'silent' });
const who = (sub: string, scopes: string[] = ['jobs.run'], clientId?: string): Principal => ({ sub, scopes: new Set(scopes), kind: 'oauth', ...(clientId && { clientId }) });

/** A shared store whose writes land only when the test says so (flush() waits for land() or fail()). */
class HeldStore extends MemoryTaskStore implements SharedTaskStore {
  #waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  flush(): Promise<void> {
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }
  land(): void {
    for (const w of this.#waiting.splice(0)) w.resolve();
  }
  fail(): void {
    for (const w of this.#waiting.splice(0)) w.reject(new Error('database down'));
  }
  fetch = async (id: string) => this.get(id);
  listShared = async (owner: string) => this.list(owner);
  requestCancel = async () => {};
  onCancel(): void {}
  onChange(): void {}
}

/**
 * One "database" two replicas' stores share: each write is announced to every store's onChange, twice (as repeated
 * notifications may be); while held (hold()), announcements wait until release(), as one late to a busy replica does.
 */
class SharedTable {
  readonly rows = new Map<string, string>();
  readonly #changes: ((id: string) => void)[] = [];
  #held?: string[];
  hold(): void {
    this.#held = [];
  }
  release(): void {
    const ids = this.#held ?? [];
    this.#held = undefined;
    for (const id of ids) this.#announce(id);
  }
  #announce(id: string): void {
    if (this.#held) return void this.#held.push(id);
    setImmediate(() => { for (const fn of this.#changes) { fn(id); fn(id); } });
  }
  store(): SharedTaskStore {
    const table = this;
    return new (class extends MemoryTaskStore implements SharedTaskStore {
      override put(task: TaskRecord): void {
        super.put(task);
        table.rows.set(task.id, JSON.stringify(task));
        table.#announce(task.id);
      }
      flush = async () => {};
      fetch = async (id: string) => { const r = table.rows.get(id); return r === undefined ? undefined : JSON.parse(r) as TaskRecord; };
      listShared = async () => [];
      requestCancel = async () => {};
      onCancel(): void {}
      onChange(fn: (id: string) => void): void { table.#changes.push(fn); }
    })();
  }
}

function setup(limits: Partial<{ ttlMs: number; maxRunning: number; maxRunningPerPrincipal: number }> = {}, observer?: Observer, store?: SharedTaskStore) {
  let aborted: unknown;
  const svc = new FastSvc({ name: 'tasks-unit' });
  svc.tool({
    name: 'job.wait', description: 'waits for its signal', required_scopes: ['jobs.run'], task: 'required',
    handler: (_i, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => { aborted = ctx.signal.reason; reject(ctx.signal.reason); })),
  });
  svc.tool({ name: 'job.now', description: 'answers at once', task: 'optional', required_scopes: ['jobs.run'], handler: () => 'now' });
  svc.tool({ name: 'job.soon', description: 'answers in a moment', task: 'optional', required_scopes: ['jobs.run'], handler: () => new Promise((r) => setTimeout(() => r('soon'), 5)) });
  svc.tool({
    name: 'job.ask', description: 'asks twice', task: 'required',
    handler: async (_i, ctx) => {
      const [a, b] = await Promise.all([ctx.channel.request('elicitation/create', { message: 'a' }, { key: 'a' }), ctx.channel.request('elicitation/create', { message: 'b' }, { key: 'b' })]);
      return `${(a as { v: string }).v}${(b as { v: string }).v}`;
    },
  });
  const runtime = new Runtime(buildCatalog(svc), { inlineLimit: 1024, logger: silent });
  const tasks = new TaskEngine({ runtime, logger: silent, ttlMs: 1000, pollIntervalMs: 100, maxRunning: 10, maxRunningPerPrincipal: 2, ...limits, observer, store });
  return { runtime, tasks, svc, abortedWith: () => aborted };
}

/** The admission the runtime gives a call that asked to run as a task: what a transport hands to start(). */
async function admit(runtime: Runtime, name: string, principal: Principal, args: Record<string, unknown> = {}): Promise<AdmittedTool> {
  let call: AdmittedTool | undefined;
  await runtime.callTool(name, args, makeContext({ principal }), { task: 'asked', startTask: async (c) => (call = c) });
  assert.ok(call, `${name} was admitted as a task`);
  return call;
}

const settle = (t: TaskRecord) => waitFor(() => (['completed', 'failed', 'cancelled'].includes(t.status) ? t : undefined), 'the task to end');

describe('TaskEngine', () => {
  const as = (principal: Principal) => ({ principal, transport: 'code' as const });

  it('a task is its owner\'s: another subject, or the same subject through another client, gets NOT_FOUND', async () => {
    const { tasks, runtime } = setup();
    const alice = who('alice', ['jobs.run'], 'app-1');
    const t = await tasks.start({ call: await admit(runtime, 'job.wait', alice), principal: alice, transport: 'code' });
    assert.match(t.id, /^[A-Za-z0-9_-]{22}$/);
    assert.equal((await tasks.get(t.id, as(alice))).status, 'working');
    await rejectsWithCode(tasks.get(t.id, as(who('bob'))), 'NOT_FOUND');
    await rejectsWithCode(tasks.cancel(t.id, as(who('alice', ['jobs.run'], 'app-2'))), 'NOT_FOUND');
    assert.deepEqual(await tasks.list(as(who('bob'))), []);
    await tasks.cancel(t.id, as(alice));
    tasks.close();
  });

  it('the same sub at two external issuers is two owners: neither sees nor cancels the other\'s task', async () => {
    const { tasks, runtime } = setup();
    const ext = (issuer: string): Principal => ({ sub: 'alice', scopes: new Set(['jobs.run']), kind: 'external', issuer, clientId: 'app-1' });
    const [a, b] = [ext('https://idp-a.example'), ext('https://idp-b.example')];
    const t = await tasks.start({ call: await admit(runtime, 'job.wait', a), principal: a, transport: 'code' });
    assert.equal((await tasks.get(t.id, as(a))).status, 'working');
    await rejectsWithCode(tasks.get(t.id, as(b)), 'NOT_FOUND');
    await rejectsWithCode(tasks.cancel(t.id, as(b)), 'NOT_FOUND');
    await rejectsWithCode(tasks.get(t.id, as(who('alice', ['jobs.run'], 'app-1'))), 'NOT_FOUND');
    assert.deepEqual(await tasks.list(as(b)), []);
    await tasks.cancel(t.id, as(a));
    tasks.close();
  });

  it('every read re-checks access: a caller without the tool\'s scope, or a reload that drops the tool, loses access', async () => {
    const { tasks, runtime, svc } = setup();
    const alice = who('alice');
    const t = await tasks.start({ call: await admit(runtime, 'job.now', alice), principal: alice, transport: 'code' });
    await settle(t);
    assert.equal((await tasks.get(t.id, as(alice))).result?.content[0]?.type, 'text');
    await rejectsWithCode(tasks.get(t.id, as(who('alice', []))), 'INSUFFICIENT_SCOPE');
    assert.deepEqual(await tasks.list(as(who('alice', []))), []);
    svc.tools.delete('job.now');
    runtime.swap(buildCatalog(svc));
    await rejectsWithCode(tasks.get(t.id, as(alice)), 'NOT_FOUND');
    tasks.close();
  });

  it('a tenant-bound task is re-checked with the arguments it was admitted with: losing the tenant\'s scope ends every read of it', async () => {
    const svc = new FastSvc({ name: 'tenants' });
    svc.tool({
      name: 'report.run', description: 'per tenant', task: 'required', required_scopes: ['tenant:{{tenant}}.read'],
      input_schema: { type: 'object', properties: { tenant: { type: 'string', pattern: '^[a-z]+$' } }, required: ['tenant'] },
      handler: (i) => `report for ${String(i.tenant)}`,
    });
    const runtime = new Runtime(buildCatalog(svc), { inlineLimit: 1024, logger: silent });
    const tasks = new TaskEngine({ runtime, logger: silent, ttlMs: 1000, pollIntervalMs: 100, maxRunning: 10, maxRunningPerPrincipal: 2 });
    const both = who('ci', ['tenant:acme.read', 'tenant:globex.read']);
    const t = await tasks.start({ call: await admit(runtime, 'report.run', both, { tenant: 'acme' }), principal: both, transport: 'code' });
    await settle(t);
    assert.deepEqual(t.args, { tenant: 'acme' });
    assert.equal((await tasks.get(t.id, as(both))).status, 'completed');
    const globexOnly = who('ci', ['tenant:globex.read']);
    const denied = await rejectsWithCode(tasks.get(t.id, as(globexOnly)), 'INSUFFICIENT_SCOPE');
    assert.deepEqual(denied.data?.missing, ['tenant:acme.read']);
    assert.deepEqual(await tasks.list(as(globexOnly)), []);
    await rejectsWithCode(tasks.cancel(t.id, as(globexOnly)), 'INSUFFICIENT_SCOPE');
    await rejectsWithCode(tasks.settled(t.id, as(globexOnly)), 'INSUFFICIENT_SCOPE');
    assert.deepEqual((await tasks.list(as(both))).map((x) => x.id), [t.id]);
    tasks.close();
  });

  it('a followed task\'s status change reaches its follower only while the token that opened the follow is current and still allows it', async () => {
    const svc = new FastSvc({ name: 'follow' });
    svc.tool({
      name: 'report.wait', description: 'per tenant, until cancelled', task: 'required', required_scopes: ['tenant:{{tenant}}.read'],
      input_schema: { type: 'object', properties: { tenant: { type: 'string', pattern: '^[a-z]+$' } }, required: ['tenant'] },
      handler: (_i, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
    });
    const auth = (scopes: string[]) => ({ subject: 'ops', tokens: [{ name: 'ci', token: 'ci-token-value-1', scopes }] });
    const all = ['tenant:acme.read', 'tenant:globex.read'];
    const store = new PolicyStore({ catalog: buildCatalog(svc), profile: { scopes: all }, tokens: TokenTable.build(auth(all), all, silent) });
    const runtime = new Runtime(store, { inlineLimit: 1024, logger: silent });
    const tasks = new TaskEngine({ runtime, logger: silent, ttlMs: 1000, pollIntervalMs: 100, maxRunning: 10, maxRunningPerPrincipal: 5 });
    const before = store.current().tokens!.match('ci-token-value-1')!;
    const start = async (tenant: string) => tasks.start({ call: await admit(runtime, 'report.wait', before, { tenant }), principal: before, transport: 'code' });
    const [acme, globex, third] = [await start('acme'), await start('globex'), await start('acme')];
    const seen: string[] = [];
    (await tasks.follow([acme.id, globex.id, third.id], as(before))).watch((t) => seen.push(`${t.id === globex.id ? 'globex' : t.id === acme.id ? 'acme' : 'third'} ${t.status}`));
    await tasks.cancel(third.id, as(before));
    assert.deepEqual(seen, ['third cancelled'], 'delivered while nothing changed');
    // A reload that changes the token (it loses tenant:acme.read): the follow's credential is no longer the current one.
    store.swap({ ...store.current(), tokens: TokenTable.build(auth(['tenant:globex.read']), all, silent, store.current().tokens) });
    const after = store.current().tokens!.match('ci-token-value-1')!;
    await tasks.cancel(globex.id, as(after));
    await tasks.cancel(acme.id, as(before));
    assert.deepEqual(seen, ['third cancelled'], 'nothing reaches a follow whose token a reload changed');
    assert.equal(runtime.mayDeliver('report.wait', { tenant: 'globex' }, { principal: after, transport: 'code', log: silent }), true);
    assert.equal(runtime.mayDeliver('report.wait', { tenant: 'acme' }, { principal: after, transport: 'code', log: silent }), false, 'the current token no longer covers acme');
    tasks.close();
  });

  it('list() and follow() leave out a task the caller may no longer follow, whatever refuses it (a bound claim that changed too), and keep the others', async () => {
    const svc = new FastSvc({ name: 'bound' });
    const waits = (_i: unknown, ctx: CallContext) => new Promise<string>((_r, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
    svc.tool({ name: 'mine.wait', description: 'bound to the tenant claim', task: 'required', required_scopes: ['t:{{tenant}}.read'], bind: { tenant: 'principal.claims.tenant' }, handler: waits });
    svc.tool({ name: 'any.wait', description: 'open', task: 'required', handler: waits });
    const runtime = new Runtime(buildCatalog(svc), { inlineLimit: 1024, logger: silent });
    const tasks = new TaskEngine({ runtime, logger: silent, ttlMs: 1000, pollIntervalMs: 100, maxRunning: 10, maxRunningPerPrincipal: 5 });
    const at = (tenant: string): Principal => ({ sub: 'ci', kind: 'static', scopes: new Set(['t:acme.read', 't:globex.read']), claims: { tenant } });
    const bound = await tasks.start({ call: await admit(runtime, 'mine.wait', at('acme')), principal: at('acme'), transport: 'code' });
    const open = await tasks.start({ call: await admit(runtime, 'any.wait', at('acme')), principal: at('acme'), transport: 'code' });
    // The same caller, its tenant claim now globex: the bound task is refused (ARGUMENT_BOUND), the other stays its own.
    await rejectsWithCode(tasks.get(bound.id, as(at('globex'))), 'ARGUMENT_BOUND');
    assert.deepEqual((await tasks.list(as(at('globex')))).map((t) => t.id), [open.id]);
    assert.deepEqual((await tasks.follow([bound.id, open.id], as(at('globex')))).ids, [open.id]);
    assert.deepEqual((await tasks.follow([bound.id, open.id], as(at('acme')))).ids, [bound.id, open.id]);
    await Promise.all([tasks.cancel(bound.id, as(at('acme'))), tasks.cancel(open.id, as(at('acme')))]);
    tasks.close();
  });

  it('cancelling aborts the handler\'s signal and records who cancelled', async () => {
    const { tasks, runtime, abortedWith } = setup();
    const alice = who('alice');
    const t = await tasks.start({ call: await admit(runtime, 'job.wait', alice), principal: alice, transport: 'code' });
    await tasks.cancel(t.id, as(alice));
    assert.equal(t.status, 'cancelled');
    assert.equal(t.cancelledBy, 'alice');
    assert.equal((abortedWith() as { code?: string }).code, 'CANCELLED');
    tasks.close();
  });

  it('caps running tasks per principal and overall with TASK_LIMIT_REACHED', async () => {
    const { tasks, runtime } = setup({ maxRunning: 3 });
    const start = async (p: Principal) => tasks.start({ call: await admit(runtime, 'job.wait', p), principal: p, transport: 'code' });
    await start(who('alice'));
    await start(who('alice'));
    await rejectsWithCode(start(who('alice')), 'TASK_LIMIT_REACHED');
    await start(who('bob'));
    await rejectsWithCode(start(who('carol')), 'TASK_LIMIT_REACHED');
    assert.equal(tasks.counts().running, 3);
    tasks.close();
  });

  it('a finished task expires ttlMs after it ended; a running one never does', async () => {
    const { tasks, runtime } = setup();
    const alice = who('alice');
    const done = await tasks.start({ call: await admit(runtime, 'job.now', alice), principal: alice, transport: 'code' });
    const running = await tasks.start({ call: await admit(runtime, 'job.wait', alice), principal: alice, transport: 'code' });
    await settle(done);
    tasks.sweep(Date.now() + 60_000);
    await rejectsWithCode(tasks.get(done.id, as(alice)), 'NOT_FOUND');
    assert.equal((await tasks.get(running.id, as(alice))).status, 'working');
    tasks.close();
  });

  it('input requests park the task as input_required until every one is answered', async () => {
    const { tasks, runtime } = setup();
    const alice = who('alice');
    const t = await tasks.start({ call: await admit(runtime, 'job.ask', alice), principal: alice, transport: 'code', askable: new Set(['elicitation/create']) });
    await waitFor(() => (Object.keys(t.inputRequests ?? {}).length === 2 ? true : undefined), 'two input requests');
    assert.equal(t.status, 'input_required');
    await tasks.update(t.id, as(alice), { a: { v: 'x' }, unknown: {} });
    assert.equal(t.status, 'input_required');
    assert.deepEqual(Object.keys(t.inputRequests!), ['b']);
    await tasks.update(t.id, as(alice), { b: { v: 'y' } });
    await settle(t);
    assert.deepEqual(t.result?.content, [{ type: 'text', text: 'xy' }]);
    tasks.close();
  });

  it('drain cancels what is still running when the time is up, by shutdown', async () => {
    const { tasks, runtime } = setup();
    const alice = who('alice');
    const quick = await tasks.start({ call: await admit(runtime, 'job.soon', alice), principal: alice, transport: 'code' });
    const slow = await tasks.start({ call: await admit(runtime, 'job.wait', alice), principal: alice, transport: 'code' });
    const r = await tasks.drain(50);
    assert.deepEqual(r, { finished: [quick.id], cancelled: [slow.id] });
    assert.equal(slow.cancelledBy, 'shutdown');
    tasks.close();
  });

  it('audits a cancel by shutdown and an expiry without a caller, naming the task\'s owner', async () => {
    const recorded: AuditEvent[] = [];
    const audit: Audit = { enabled: true, allows: false, record: (e) => void recorded.push(e), close() {} };
    const { tasks, runtime } = setup({}, new Observer(audit, undefined));
    const alice = who('alice', ['jobs.run'], 'app-1');
    const t = await tasks.start({ call: await admit(runtime, 'job.wait', alice), principal: alice, transport: 'code' });
    await tasks.drain(10);
    tasks.sweep(Date.now() + 2000);
    tasks.close();
    assert.deepEqual(recorded.map((e) => [e.decision, e.reason, e.principal?.sub, e.capability, e.detail]), [
      ['task_start', 'admitted', 'alice', 'tool:job.wait', { task_id: t.id }],
      ['task_cancel', 'shutdown', undefined, 'tool:job.wait', { task_id: t.id, sub: 'alice', client_id: 'app-1', cancelled_by: 'shutdown' }],
      ['task_expire', 'ttl', undefined, 'tool:job.wait', { task_id: t.id, sub: 'alice', client_id: 'app-1', cancelled_by: 'shutdown' }],
    ]);
  });

  it('start() and cancel() on a shared store resolve only once the store has the change; a failed write cancels the running task and rejects', async () => {
    const store = new HeldStore();
    const { tasks, runtime } = setup({}, undefined, store);
    const alice = who('alice');
    let saved = false;
    const p = tasks.start({ call: await admit(runtime, 'job.wait', alice), principal: alice, transport: 'code' }).then((t) => ((saved = true), t));
    await new Promise((r) => setImmediate(r));
    assert.equal(saved, false, 'not before the write landed');
    store.land();
    const task = await p;
    assert.equal(saved, true);
    const failing = tasks.start({ call: await admit(runtime, 'job.wait', alice), principal: alice, transport: 'code' });
    await new Promise((r) => setImmediate(r));
    const next = store.running(task.owner).find((t) => t.id !== task.id)!;
    store.fail();
    await assert.rejects(failing, /database down/);
    assert.equal(next.status, 'cancelled');
    assert.equal(next.cancelledBy, 'shutdown');
    // A cancel too is answered only once the store has it.
    let cancelled = false;
    const cancelling = tasks.cancel(task.id, as(alice)).then(() => (cancelled = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(cancelled, false, 'not before the cancel landed');
    store.land();
    await cancelling;
    assert.equal(task.status, 'cancelled');
    tasks.close();
  });

  it('follow(): another replica\'s task is followed through the shared store — each status change delivered once, in order, until stopped', async () => {
    const table = new SharedTable();
    const a = setup({}, undefined, table.store());
    const b = setup({}, undefined, table.store());
    const alice = as(who('alice'));
    const t1 = await a.tasks.start({ call: await admit(a.runtime, 'job.wait', alice.principal), principal: alice.principal, transport: 'code' });
    const t2 = await a.tasks.start({ call: await admit(a.runtime, 'job.wait', alice.principal), principal: alice.principal, transport: 'code' });
    const followed = await b.tasks.follow([t1.id, t2.id, t1.id, 'no-such-task'], alice);
    assert.deepEqual(followed.ids, [t1.id, t2.id]);
    assert.deepEqual((await b.tasks.follow([t1.id], as(who('bob')))).ids, [], 'not someone else\'s');
    const seen: string[] = [];
    const stop = followed.watch((t) => seen.push(`${t.id === t1.id ? 't1' : 't2'} ${t.status}`));
    await a.tasks.cancel(t1.id, alice);
    await a.tasks.cancel(t2.id, alice);
    await waitFor(() => (seen.length >= 2 ? true : undefined), 'both cancellations on B');
    assert.deepEqual(seen, ['t1 cancelled', 't2 cancelled'], 't1\'s repeated notification, read before t2\'s, delivered nothing');
    stop();
    const t3 = await a.tasks.start({ call: await admit(a.runtime, 'job.wait', alice.principal), principal: alice.principal, transport: 'code' });
    const later = await b.tasks.follow([t3.id], alice);
    const after: string[] = [];
    later.watch((t) => after.push(t.status));
    await a.tasks.cancel(t3.id, alice);
    await waitFor(() => (after.length ? true : undefined), 'the third task\'s cancellation on B');
    assert.deepEqual(seen, ['t1 cancelled', 't2 cancelled'], 'a stopped follow hears nothing more');
    a.tasks.close();
    b.tasks.close();
  });

  it('follow(): another replica\'s task as it was when the follow began is no change, though its announcement reaches the follower later', async () => {
    const table = new SharedTable();
    const a = setup({}, undefined, table.store());
    const b = setup({}, undefined, table.store());
    const alice = as(who('alice'));
    table.hold(); // B is busy: A's announcements of the tasks it creates reach B only after B's follow
    const start = async () => a.tasks.start({ call: await admit(a.runtime, 'job.wait', alice.principal), principal: alice.principal, transport: 'code' });
    const [t1, t2] = [await start(), await start()];
    const followed = await b.tasks.follow([t1.id, t2.id], alice);
    const seen: string[] = [];
    followed.watch((t) => seen.push(`${t.id === t1.id ? 't1' : 't2'} ${t.status}`));
    table.release();
    // B reads announced changes one at a time, in order: t2's cancellation is read after both creations.
    await a.tasks.cancel(t2.id, alice);
    await waitFor(() => (seen.includes('t2 cancelled') ? true : undefined), 't2\'s cancellation on B');
    await a.tasks.cancel(t1.id, alice);
    await waitFor(() => (seen.includes('t1 cancelled') ? true : undefined), 't1\'s cancellation on B');
    assert.deepEqual(seen, ['t2 cancelled', 't1 cancelled'], 'both were working when B began to follow them: their creation is no status change');
    a.tasks.close();
    b.tasks.close();
  });

  it('startAfterInput: questions go to the round until startTask(); the task then runs on; a run that ends first is dropped or made a finished task', async () => {
    const { tasks, runtime } = setup();
    const alice = who('alice');
    const asked: string[] = [];
    const before = (answer?: unknown) => ({
      progress: async () => {}, log: async () => {}, supports: () => true,
      request: (_m: string, _p: Record<string, unknown>, o?: { key?: string }) => { asked.push(o!.key!); return answer ? Promise.resolve(answer) : Promise.reject(new Error('not answered yet')); },
    });
    const ask = async () => ({ call: await admit(runtime, 'job.ask', alice), principal: alice, transport: 'code' as const });
    // Unanswered: the run ends before startTask(); dropping `ended` leaves no task.
    const dropped = await tasks.startAfterInput(await ask(), before());
    assert.ok('ended' in dropped);
    assert.deepEqual(asked, ['a', 'b']);
    assert.deepEqual(await tasks.list(as(alice)), []);
    // Answered, no startTask(): the caller makes it a finished task.
    const ended = await tasks.startAfterInput(await ask(), before({ v: 'x' }));
    assert.ok('ended' in ended);
    const finished = await ended.ended();
    assert.equal(finished.status, 'completed');
    assert.deepEqual((await tasks.list(as(alice))).map((t) => t.id), [finished.id]);
    assert.deepEqual(finished.result?.content, [{ type: 'text', text: 'xx' }]);
    tasks.close();
  });

  it('startAfterInput: startTask() makes the task there; the run goes on as it and a later question parks it input_required', async () => {
    const svc = new FastSvc({ name: 'ask-first' });
    svc.tool({
      name: 'greet', description: 'asks a name, then confirms inside the task', task: 'required', ask_before_task: true,
      handler: async (_i, ctx) => {
        const name = await ctx.channel.request('elicitation/create', { message: 'name?' }, { key: 'name' }) as { v: string };
        ctx.channel.startTask!();
        const ok = await ctx.channel.request('elicitation/create', { message: 'sure?' }, { key: 'sure' }) as { v: string };
        return `${name.v} ${ok.v}`;
      },
    });
    const runtime = new Runtime(buildCatalog(svc), { inlineLimit: 1024, logger: silent });
    const tasks = new TaskEngine({ runtime, logger: silent, ttlMs: 1000, pollIntervalMs: 100, maxRunning: 10, maxRunningPerPrincipal: 2 });
    const alice = who('alice');
    const before = { progress: async () => {}, log: async () => {}, supports: () => true, request: () => Promise.resolve({ v: 'Ada' }) };
    const got = await tasks.startAfterInput({ call: await admit(runtime, 'greet', alice), principal: alice, transport: 'code', askable: new Set(['elicitation/create']) }, before);
    assert.ok('task' in got);
    const t = got.task;
    await waitFor(() => (t.status === 'input_required' ? t : undefined), 'the in-task question');
    assert.deepEqual(Object.keys(t.inputRequests ?? {}), ['sure']);
    await tasks.update(t.id, as(alice), { sure: { v: 'yes' } });
    await settle(t);
    assert.deepEqual(t.result?.content, [{ type: 'text', text: 'Ada yes' }]);
    tasks.close();
  });
});
