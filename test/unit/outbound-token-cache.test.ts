// The outbound token cache (src/outbound/fetched-tokens.ts) on a clock of the test's own: one
// fetch for many concurrent asks; a token kept until its margin (30 s, or half a short life) and
// fetched anew after; a failure shared by the askers in flight and not remembered; the bound (the
// oldest dropped first); a caller who gives up stops waiting while the others still get the token;
// forget() drops the refused token only, never a newer one another caller already fetched.

import assert from 'node:assert/strict';
import { EXPIRY_MARGIN_MS, FetchedTokens, type Fetched } from '../../src/outbound/fetched-tokens.js';

/** A fetch the test finishes by hand, counting how often it ran. */
function manualFetch() {
  const calls: { resolve: (f: Fetched) => void; reject: (e: unknown) => void }[] = [];
  const fetch = () => new Promise<Fetched>((resolve, reject) => calls.push({ resolve, reject }));
  return { fetch, calls };
}

describe('outbound token cache', () => {
  let now: number;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  it('makes one fetch for 50 concurrent asks, and all of them get its token', async () => {
    const cache = new FetchedTokens<string>(10, clock);
    const f = manualFetch();
    const asks = Array.from({ length: 50 }, () => cache.get('k', f.fetch));
    assert.equal(f.calls.length, 1);
    f.calls[0]!.resolve({ token: 'tok-1', expiresAt: now + 300_000 });
    assert.deepEqual(new Set(await Promise.all(asks)), new Set(['tok-1']));
    assert.equal(await cache.get('k', f.fetch), 'tok-1', 'kept');
    assert.equal(f.calls.length, 1);
  });

  it('hands a token out until the margin before its expiry, then fetches a new one', async () => {
    const cache = new FetchedTokens<string>(10, clock);
    let n = 0;
    const fetch = async () => ({ token: `tok-${++n}`, expiresAt: now + 300_000 });
    const t0 = now;
    assert.equal(await cache.get('k', fetch), 'tok-1');
    now = t0 + 300_000 - EXPIRY_MARGIN_MS - 1;
    assert.equal(await cache.get('k', fetch), 'tok-1', 'still more than the margin left');
    now = t0 + 300_000 - EXPIRY_MARGIN_MS;
    assert.equal(await cache.get('k', fetch), 'tok-2', 'at the margin: fetched anew');
    assert.equal(n, 2);
  });

  it('keeps a short-lived token for half its life', async () => {
    const cache = new FetchedTokens<string>(10, clock);
    let n = 0;
    const fetch = async () => ({ token: `tok-${++n}`, expiresAt: now + 10_000 });
    const t0 = now;
    await cache.get('k', fetch);
    now = t0 + 4_999;
    assert.equal(await cache.get('k', fetch), 'tok-1');
    now = t0 + 5_000;
    assert.equal(await cache.get('k', fetch), 'tok-2');
  });

  it('never keeps a token that is already expired', async () => {
    const cache = new FetchedTokens<string>(10, clock);
    let n = 0;
    const fetch = async () => ({ token: `tok-${++n}`, expiresAt: now - 1 });
    assert.equal(await cache.get('k', fetch), 'tok-1');
    assert.equal(cache.size, 0);
    assert.equal(await cache.get('k', fetch), 'tok-2');
  });

  it('fails every ask waiting on a failed fetch, and the next ask fetches again', async () => {
    const cache = new FetchedTokens<string>(10, clock);
    const f = manualFetch();
    const asks = [cache.get('k', f.fetch), cache.get('k', f.fetch)];
    const boom = new Error('token endpoint down');
    f.calls[0]!.reject(boom);
    for (const a of asks) await assert.rejects(a, (e) => e === boom);
    const next = cache.get('k', f.fetch);
    assert.equal(f.calls.length, 2, 'the failure was not remembered');
    f.calls[1]!.resolve({ token: 'tok-2', expiresAt: now + 300_000 });
    assert.equal(await next, 'tok-2');
  });

  it('keeps at most `max` tokens, dropping the oldest first', async () => {
    const cache = new FetchedTokens<string>(3, clock);
    const fetched: string[] = [];
    const fetch = (k: string) => async () => {
      fetched.push(k);
      return { token: `tok-${k}`, expiresAt: now + 300_000 };
    };
    for (const k of ['a', 'b', 'c', 'd']) await cache.get(k, fetch(k));
    assert.equal(cache.size, 3);
    await cache.get('d', fetch('d'));
    await cache.get('b', fetch('b'));
    assert.deepEqual(fetched, ['a', 'b', 'c', 'd'], 'b and d still kept');
    await cache.get('a', fetch('a'));
    assert.deepEqual(fetched, ['a', 'b', 'c', 'd', 'a'], 'a was dropped');
  });

  it('lets a caller give up without cancelling the fetch the others wait on', async () => {
    const cache = new FetchedTokens<string>(10, clock);
    const f = manualFetch();
    const gone = new AbortController();
    const leaving = cache.get('k', f.fetch, gone.signal);
    const staying = cache.get('k', f.fetch, new AbortController().signal);
    const why = new Error('caller went away');
    gone.abort(why);
    await assert.rejects(leaving, (e) => e === why);
    f.calls[0]!.resolve({ token: 'tok-1', expiresAt: now + 300_000 });
    assert.equal(await staying, 'tok-1');
    assert.equal(f.calls.length, 1);
    await assert.rejects(cache.get('other', f.fetch, gone.signal), (e) => e === why, 'with a token to fetch, an aborted signal rejects at once');
  });

  it('forgets a refused token (the next ask fetches), but not a newer one kept since', async () => {
    const cache = new FetchedTokens<string>(10, clock);
    let n = 0;
    const fetch = async () => ({ token: `tok-${++n}`, expiresAt: now + 300_000 });
    assert.equal(await cache.get('k', fetch), 'tok-1');
    cache.forget('k', 'tok-1');
    assert.equal(await cache.get('k', fetch), 'tok-2');
    cache.forget('k', 'tok-1'); // a second caller refused the same old token late
    assert.equal(await cache.get('k', fetch), 'tok-2', 'the newer token stays');
    assert.equal(n, 2);
  });
});
