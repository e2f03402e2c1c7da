import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
// @ts-expect-error oidc-provider ships no types for its internal helpers
import engineStorage from 'oidc-provider/lib/helpers/als.js';
import { EngineRequests } from '../../src/auth/oauth/engine-storage.js';

/** A request that enters the storage like oidc-provider does, and waits until released. */
function request(storage: AsyncLocalStorage<unknown>, ctx: string) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let peek!: () => unknown;
  let seenAfterWait: unknown;
  const run = () => storage.run(ctx, async () => {
    peek = AsyncLocalStorage.bind(() => storage.getStore());
    await released;
    seenAfterWait = storage.getStore();
  });
  return { run, release, peek: () => peek(), seen: () => seenAfterWait };
}

describe('EngineRequests (oidc-provider AsyncLocalStorage on only while it answers)', () => {
  it('uses the storage oidc-provider runs its requests in', () => {
    assert.equal(new EngineRequests().storage, engineStorage);
  });

  it('keeps the storage on while any request is in flight and switches it off after the last', async () => {
    const storage = new AsyncLocalStorage<unknown>();
    const engine = new EngineRequests(storage);
    const a = request(storage, 'a');
    const b = request(storage, 'b');
    const doneA = engine.run(a.run);
    const doneB = engine.run(b.run);
    a.release();
    await doneA;
    assert.equal(a.seen(), 'a');
    assert.equal(b.peek(), 'b', 'a request still in flight keeps its store when another one ends');
    b.release();
    await doneB;
    assert.equal(b.seen(), 'b');
    assert.equal(b.peek(), undefined, 'with no request in flight the storage is off');
    const c = request(storage, 'c');
    const doneC = engine.run(c.run);
    assert.equal(c.peek(), 'c', 'the next request switches it back on');
    c.release();
    await doneC;
    assert.equal(c.seen(), 'c');
  });

  it('switches the storage off after a request that fails', async () => {
    const storage = new AsyncLocalStorage<unknown>();
    const engine = new EngineRequests(storage);
    let peek!: () => unknown;
    const failing = () => storage.run('x', async () => {
      peek = AsyncLocalStorage.bind(() => storage.getStore());
      assert.equal(peek(), 'x');
      throw new Error('boom');
    });
    await assert.rejects(engine.run(failing), /boom/);
    assert.equal(peek(), undefined);
    await assert.rejects(engine.run(() => { throw new Error('sync'); }), /sync/);
  });
});
