// Pure parts of the gateway: the include/exclude matcher (globs on upstream names), the Slots
// bound (max in flight, a waiter that gives up never takes a slot), and what explain/diff say of
// upstreams offline (rules per upstream and override, a widening when scopes drop or one is added).

import assert from 'node:assert/strict';
import { matcher } from '../../../src/upstreams/import.js';
import { LazyAbort } from '../../../src/core/lazy-abort.js';
import { Slots } from '../../../src/upstreams/slots.js';
import { diffUpstreams, upstreamRules } from '../../../src/policy/gateway-rules.js';
import type { SvcManifest } from '../../../src/core/manifest-types.gen.js';

const manifest = (expose: Record<string, unknown>, extra: Record<string, unknown>[] = []) => ({
  version: 1, name: 'g', upstreams: [{ name: 'up', url: 'http://127.0.0.1:1/mcp', expose }, ...extra],
}) as unknown as SvcManifest;

describe('upstreams: filters, slots, offline rules', () => {
  it('include then exclude, * matching any run of characters and nothing else special', () => {
    const shown = matcher(['get_*', 'search'], ['get_secret*']);
    assert.deepEqual(['get_item', 'search', 'searchx', 'get_secret_key', 'delete', 'get.x'].filter(shown), ['get_item', 'search']);
    assert.equal(matcher(['a.b'], [])('aXb'), false, 'a dot is a dot');
    assert.equal(matcher(undefined, ['x*'])('y'), true, 'no include: everything not excluded');
  });

  it('Slots: at most max at once, in order, a free slot at once (no promise); an aborted waiter never takes a slot', async () => {
    const slots = new Slots(1);
    const got = slots.acquire(new LazyAbort());
    assert.equal(typeof got, 'function', 'a free slot is given at once');
    const first = got as () => void;
    const gaveUp = new LazyAbort();
    const waiting = slots.acquire(gaveUp) as Promise<() => void>;
    const next = slots.acquire(new LazyAbort());
    assert.ok(next instanceof Promise, 'a busy one is a promise');
    gaveUp.abort(new Error('gave up'));
    await assert.rejects(waiting, /gave up/);
    assert.equal(slots.inUse, 1);
    first();
    first();
    const release = await next;
    assert.equal(slots.inUse, 1, 'a double release frees one slot only');
    release();
    assert.equal(slots.inUse, 0);
  });

  it('explain: one rule per upstream and per override, allowed only when the scopes hold all', () => {
    const rules = upstreamRules(manifest({ prefix: 'v.', required_scopes: ['v.read'], overrides: { wipe: { required_scopes: ['v.admin'] }, t: { description: 'x' } } }), new Set(['v.read']));
    assert.deepEqual(rules.map((r) => [r.capability, r.required, r.allowed]), [['*', ['v.read'], true], ['wipe', ['v.admin'], false]]);
  });

  it('diff: fewer scopes, other filters or a new upstream widen; more scopes do not', () => {
    const a = manifest({ required_scopes: ['v.read'] });
    assert.equal(diffUpstreams(a, manifest({ required_scopes: ['v.read', 'v.admin'] })).widened, false);
    assert.deepEqual(diffUpstreams(a, manifest({ required_scopes: [] })), { added: [], removed: [], changed: ['up'], widened: true });
    assert.equal(diffUpstreams(a, manifest({ required_scopes: ['v.read'], exclude: ['x'] })).widened, true);
    assert.deepEqual(diffUpstreams(a, manifest({ required_scopes: ['v.read'] }, [{ name: 'new', url: 'http://127.0.0.1:2/mcp' }])).added, ['new']);
  });
});
