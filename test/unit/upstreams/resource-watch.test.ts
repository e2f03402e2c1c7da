// One upstream subscription per watched URI (src/upstreams/resource-watch.ts): the first watch subscribes,
// the last unwatch unsubscribes (a second unwatch does nothing), updates reach the URI's watchers only,
// a new connection subscribes every URI still watched, and nothing is sent while there is none.

import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ResourceWatches } from '../../../src/upstreams/resource-watch.js';

describe('upstreams: ResourceWatches', () => {
  const sent: string[] = [];
  const link = { subscribe: async (uri: string) => void sent.push(`+${uri}`), unsubscribe: async (uri: string) => void sent.push(`-${uri}`) };
  beforeEach(() => void (sent.length = 0));

  it('subscribes once per URI, unsubscribes after the last watcher, tells only that URI\'s watchers', () => {
    const w = new ResourceWatches(pino({ level: 'silent' }));
    w.resubscribe(link);
    const got: string[] = [];
    const a = w.watch('r://a', () => got.push('a1'));
    const a2 = w.watch('r://a', () => got.push('a2'));
    const b = w.watch('r://b', () => got.push('b'));
    assert.deepEqual(sent, ['+r://a', '+r://b']);
    w.updated('r://a');
    assert.deepEqual(got, ['a1', 'a2']);
    a();
    a();
    assert.deepEqual(sent, ['+r://a', '+r://b'], 'a2 still watches');
    a2();
    b();
    assert.deepEqual(sent, ['+r://a', '+r://b', '-r://a', '-r://b']);
    w.updated('r://a');
    assert.deepEqual(got, ['a1', 'a2']);
  });

  it('sends nothing without a connection and subscribes every watched URI on the next one', () => {
    const w = new ResourceWatches(pino({ level: 'silent' }));
    const stop = w.watch('r://a', () => undefined);
    w.watch('r://b', () => undefined);
    assert.deepEqual(sent, []);
    w.resubscribe(link);
    assert.deepEqual(sent, ['+r://a', '+r://b']);
    w.resubscribe(undefined);
    stop();
    assert.deepEqual(sent, ['+r://a', '+r://b']);
    w.resubscribe(link);
    assert.deepEqual(sent, ['+r://a', '+r://b', '+r://b']);
  });
});
