// The policy store: a reader holding a snapshot keeps it across swaps; a swap is
// seen whole by the next reader; listeners are told once per swap with the change set.

import { resolveConfig } from '../../src/core/config.js';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { buildCatalog } from '../../src/core/catalog.js';
import { FastSvc } from '../../src/core/fast-svc.js';
import { TokenTable } from '../../src/auth/bearer.js';
import { PolicyStore, type ChangeSet } from '../../src/policy/store.js';

const log = pino({ level: 'silent' });

function catalog(tools: string[]) {
  const svc = new FastSvc({ name: 'store-test', description: 'Policy store test.' });
  for (const name of tools) svc.tool({ name, description: name, handler: () => name });
  return buildCatalog(svc);
}

describe('PolicyStore', () => {
  it('swap replaces the whole snapshot at once; a snapshot taken before keeps its catalog, profile and tokens', () => {
    const first = { catalog: catalog(['a.one']), profile: { scopes: ['s.read'] }, tokens: TokenTable.build(resolveConfig({ auth: { token: 'old-token' } }).auth!, ['s.read'], log) };
    const store = new PolicyStore(first, log);
    const held = store.current();
    assert.ok(Object.isFrozen(held));

    const next = { catalog: catalog(['a.one', 'b.two']), profile: { scopes: ['s.read', 's.write'] }, tokens: TokenTable.build(resolveConfig({ auth: { token: 'new-token' } }).auth!, ['s.read', 's.write'], log) };
    store.swap(next);

    assert.deepEqual([...held.catalog.tools.keys()], ['a.one']);
    assert.deepEqual(held.profile.scopes, ['s.read']);
    assert.ok(held.tokens!.match('old-token'));
    const now = store.current();
    assert.deepEqual([...now.catalog.tools.keys()], ['a.one', 'b.two']);
    assert.deepEqual(now.profile.scopes, ['s.read', 's.write']);
    assert.equal(now.tokens!.match('old-token'), undefined);
    assert.ok(now.tokens!.match('new-token'));
  });

  it('tells each listener once with the change set, and not at all when no list changed', () => {
    const store = new PolicyStore({ catalog: catalog(['a.one']), profile: { scopes: [] } }, log);
    const seen: ChangeSet[] = [];
    const off = store.onChange((c) => seen.push(c));
    const changes = store.swap({ ...store.current(), catalog: catalog(['a.one', 'b.two']) });
    const lists = (c: ChangeSet) => ({ tools: c.tools, resources: c.resources, prompts: c.prompts, updated: [...c.updated] });
    assert.deepEqual(lists(changes), { tools: true, resources: false, prompts: false, updated: [] });
    assert.deepEqual(seen, [changes]);

    // A swap that only changes the tokens or profile changes no list: no notification.
    const none = store.swap({ ...store.current(), profile: { scopes: ['x'] } });
    assert.deepEqual(lists(none), { tools: false, resources: false, prompts: false, updated: [] });
    assert.equal(seen.length, 1);

    off();
    store.swap({ ...store.current(), catalog: catalog([]) });
    assert.equal(seen.length, 1, 'an unsubscribed listener is not called');
  });

  it('a failing listener does not stop the swap or the other listeners', () => {
    const store = new PolicyStore({ catalog: catalog([]), profile: { scopes: [] } }, log);
    let told = 0;
    store.onChange(() => {
      throw new Error('listener bug');
    });
    store.onChange(() => told++);
    store.swap({ ...store.current(), catalog: catalog(['a.one']) });
    assert.equal(told, 1);
    assert.ok(store.current().catalog.tools.has('a.one'));
  });

  it('a swap that changes only what a resource is made from (its revision) names it in updated, and tells the listeners; the lists are unchanged', () => {
    const resources = (a: string, b: string) => {
      const svc = new FastSvc({ name: 'store-test' });
      svc.resource({ uri: 'x://a', name: 'a', revision: a, read: (uri) => [{ uri, text: a }] });
      svc.resource({ uri_template: 'x://b/{id}', name: 'b', revision: b, read: (uri) => [{ uri, text: b }] });
      return buildCatalog(svc);
    };
    const store = new PolicyStore({ catalog: resources('a1', 'b1'), profile: { scopes: [] } }, log);
    const seen: ChangeSet[] = [];
    store.onChange((c) => seen.push(c));
    const c = store.swap({ ...store.current(), catalog: resources('a2', 'b1') });
    assert.deepEqual([c.resources, [...c.updated]], [false, ['x://a']]);
    assert.deepEqual(seen, [c]);
    assert.deepEqual([...store.swap({ ...store.current(), catalog: resources('a2', 'b2') }).updated], ['x://b/{id}']);
    assert.equal(store.swap({ ...store.current(), catalog: resources('a2', 'b2') }).updated.size, 0);
    assert.equal(seen.length, 2, 'a swap that changes nothing tells no one');
  });
});
