// The admission list (src/policy/admission.ts) without a server: its steps and their order, what
// each purpose (a call, a listing, a follow-up) runs for each kind, the refusal each step gives
// (step, code, message, why), the first refusal deciding, and the runtime's AdmittedTool, which
// only the runtime can make (a type-level check: the @ts-expect-error below fails the typecheck
// if an object of the right shape ever passes for one).

import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FastSvc } from '../../src/core/fast-svc.js';
import { buildCatalog, type Catalog } from '../../src/core/catalog.js';
import type { Principal } from '../../src/core/types.js';
import { admit, stepsFor, STEPS, type Ask, type Refusal } from '../../src/policy/admission.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { makeContext } from '../helpers/context.js';

const who = (scopes: string[], claims?: Record<string, string>): Principal => ({ sub: 'u', kind: 'static', scopes: new Set(scopes), ...(claims && { claims }) });

function catalog(): Catalog {
  const svc = new FastSvc({ name: 'admission' });
  svc.tool({ name: 'plain.echo', description: 'x', input_schema: { type: 'object', properties: { n: { type: 'integer', default: 1 } }, additionalProperties: false }, handler: () => 'ok' });
  svc.tool({ name: 'scoped.run', description: 'x', required_scopes: ['run'], handler: () => 'ok' });
  svc.tool({ name: 'app.only', description: 'x', required_scopes: ['run'], ui: { visibility: ['app'] }, handler: () => 'ok' });
  svc.tool({ name: 'task.only', description: 'x', task: 'required', handler: () => 'ok' });
  svc.tool({ name: 'asks.model', description: 'x', required_scopes: ['run'], asks: ['sampling'], handler: () => 'ok' });
  svc.tool({ name: 'mine.orders', description: 'x', required_scopes: ['t:{{tenant}}.read'], bind: { tenant: 'principal.claims.tenant' }, handler: () => 'ok' });
  svc.tool({ name: 'limited', description: 'x', limits: { requests: 5 }, handler: () => 'ok' });
  svc.resource({ uri_template: 'notes://{id}', name: 'note', required_scopes: ['run'], read: (uri) => [{ uri, text: '' }] });
  svc.prompt({ name: 'p.ask', arguments: [{ name: 'topic', required: true }], get: () => [] });
  return buildCatalog(svc, { withheld: new Map([['tool:vendor.new', { upstream: 'vendor', reason: 'new' }]]) });
}

describe('the admission list', () => {
  const cat = catalog();
  const call = (key: string, p: Principal, o: Partial<Ask> = {}) => admit({ purpose: 'call', catalog: cat, kind: 'tool', key, principal: p, ...o });
  const refused = (v: ReturnType<typeof call>) => {
    assert.equal(v.ok, false, 'refused');
    const r = v as Refusal;
    return `${r.step} ${r.code}`;
  };

  it('is one list in one order: served, visible, access, task, input, quota', () => {
    assert.deepEqual(STEPS.map((s) => s.name), ['served', 'visible', 'access', 'task', 'input', 'quota']);
    assert.ok(STEPS.every((s) => s.says.length > 20), 'each step says what it checks');
  });

  it('runs, per purpose and kind, exactly the steps that apply', () => {
    const names = (purpose: 'call' | 'list' | 'follow', kind: 'tool' | 'resource' | 'prompt') => stepsFor(purpose, kind).map((s) => s.name).join(' ');
    assert.equal(names('call', 'tool'), 'served visible access task input quota');
    assert.equal(names('call', 'resource'), 'served access quota');
    assert.equal(names('call', 'prompt'), 'served access input quota');
    assert.equal(names('list', 'tool'), 'served visible access');
    assert.equal(names('follow', 'tool'), 'served access');
  });

  it('a call: each step refuses with its own code, and the first refusal decides', () => {
    assert.equal(refused(call('nope', who([]))), 'served NOT_FOUND');
    const withheld = call('vendor.new', who([])) as Refusal;
    assert.equal(`${withheld.step} ${withheld.code}`, 'served CAPABILITY_WITHHELD');
    assert.match(withheld.message, /fastsvc upstreams accept vendor/);
    // Not there for a plain caller comes before access: a caller lacking the scope is told NOT_FOUND, not 403.
    assert.equal(refused(call('app.only', who([]))), 'visible NOT_FOUND');
    assert.equal((call('app.only', who([])) as Refusal).message, 'no tool named app.only');
    assert.equal(refused(call('app.only', who([]), { apps: true })), 'access INSUFFICIENT_SCOPE');
    assert.equal(call('app.only', who(['run']), { apps: true }).ok, true);
    // A tool that asks its caller is not there for one that cannot answer (a /svc caller), before access too.
    assert.equal(refused(call('asks.model', who([]), { answers: false })), 'visible NOT_FOUND');
    assert.match((call('asks.model', who(['run']), { answers: false }) as Refusal).message, /^no tool named asks\.model here: it asks its caller for sampling, which only an MCP client/);
    assert.equal(call('asks.model', who(['run'])).ok, true, 'an MCP caller (answers not false) calls it');
    assert.equal(refused(call('asks.model', who([]))), 'access INSUFFICIENT_SCOPE');
    const denied = call('scoped.run', who([])) as Refusal;
    assert.deepEqual([denied.step, denied.code, denied.why, denied.denial?.missing], ['access', 'INSUFFICIENT_SCOPE', 'missing run', ['run']]);
    assert.equal(refused(call('mine.orders', who(['t:acme.read'], { tenant: 'acme' }), { args: { tenant: 'globex' } })), 'access ARGUMENT_BOUND');
    assert.equal(refused(call('task.only', who([]))), 'task TASK_REQUIRED');
    assert.equal(refused(call('plain.echo', who([]), { args: { n: 'x' } })), 'input INVALID_INPUT');
    assert.equal(refused(call('plain.echo', who([]), { args: [1] })), 'input INVALID_INPUT');
  });

  it('a cleared call carries its arguments (bound values filled in, defaults applied), its task mode and its quotas', () => {
    const echo = call('plain.echo', who([]));
    assert.ok(echo.ok);
    assert.deepEqual([echo.input, echo.bound, echo.task, echo.quotas.length], [{ n: 1 }, false, false, 0]);
    const mine = call('mine.orders', who(['t:acme.read'], { tenant: 'acme' }));
    assert.ok(mine.ok);
    assert.deepEqual([mine.input, mine.bound], [{ tenant: 'acme' }, true]);
    const task = call('task.only', who([]), { task: 'auto' });
    assert.ok(task.ok && task.task);
    const limited = call('limited', who([]));
    assert.ok(limited.ok);
    assert.deepEqual(limited.quotas.map((q) => q.label), ['tool:limited per principal']);
  });

  it('a listing decides without arguments; a follow-up neither asks for the extension nor checks input or task mode', () => {
    const list = (key: string, p: Principal, apps = false) => admit({ purpose: 'list', catalog: cat, kind: 'tool', key, principal: p, apps }).ok;
    assert.deepEqual([list('app.only', who(['run'])), list('app.only', who(['run']), true), list('mine.orders', who(['t:acme.read'], { tenant: 'acme' }))], [false, true, true]);
    const follow = (key: string, p: Principal, args: unknown) => admit({ purpose: 'follow', catalog: cat, kind: 'tool', key, principal: p, args });
    assert.equal(follow('app.only', who(['run']), {}).ok, true);
    assert.equal(follow('task.only', who([]), { anything: true }).ok, true);
    assert.equal(refused(follow('scoped.run', who([]), {})), 'access INSUFFICIENT_SCOPE');
    assert.equal((follow('gone', who([]), {}) as Refusal).message, 'tool gone is no longer served');
  });

  it('a resource is decided on its URI\'s variables; a prompt on its declared arguments', () => {
    const read = (uri: string, p: Principal) => admit({ purpose: 'call', catalog: cat, kind: 'resource', key: uri, principal: p });
    const note = read('notes://7', who(['run']));
    assert.ok(note.ok);
    assert.deepEqual(note.input, { id: '7' });
    assert.equal(refused(read('notes://7', who([]))), 'access INSUFFICIENT_SCOPE');
    const prompt = admit({ purpose: 'call', catalog: cat, kind: 'prompt', key: 'p.ask', principal: who([]), args: { topic: 3 } }) as Refusal;
    assert.deepEqual([prompt.step, prompt.code, prompt.data?.errors], ['input', 'INVALID_INPUT', [{ path: '/topic', message: 'must be string' }]]);
  });

  it('only the runtime makes an AdmittedTool', async () => {
    const rt = new Runtime(cat, { inlineLimit: 1024, logger: pino({ level: 'silent' }) });
    const forged = { entry: cat.tools.get('scoped.run')!, input: {}, release: undefined };
    // @ts-expect-error an object of the right shape is no AdmittedTool
    const run = () => rt.run(forged, makeContext({ scopes: [] }));
    assert.equal(typeof run, 'function');
  });
});
