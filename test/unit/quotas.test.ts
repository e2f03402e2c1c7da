// InProcessQuotas: fixed request windows and concurrency slots per key, all-or-none
// acquisition, and the principal keys quotaItems() gives (one principal never counts
// against another). Time is passed in, so nothing here waits.

import assert from 'node:assert/strict';
import { CONCURRENCY_RETRY_MS, InProcessQuotas, quotaItems } from '../../src/policy/quotas.js';
import { staticPrincipal } from '../../src/policy/principals.js';
import { principalKey } from '../../src/core/principal-key.js';
import type { Principal } from '../../src/core/types.js';

const T0 = 1_000_123; // any instant: a window opens at its first request

describe('quotas (in-process)', () => {
  it('admits `requests` per window, then refuses with the rest of the window as the wait; the next window admits again', () => {
    const q = new InProcessQuotas();
    const items = [{ key: 'token:a', limit: { requests: 2, window_ms: 1000 }, label: 'limits.token' }];
    assert.equal(q.acquire(items, T0).ok, true);
    assert.equal(q.acquire(items, T0 + 100).ok, true);
    const refused = q.acquire(items, T0 + 250);
    assert.deepEqual(refused, { ok: false, retryAfterMs: 750, label: 'limits.token' });
    assert.deepEqual(q.acquire(items, T0 + 900), { ok: false, retryAfterMs: 100, label: 'limits.token' }, 'the wait shrinks as the window runs out');
    assert.equal(q.acquire(items, T0 + 1000).ok, true);
  });

  it('counts concurrency until release (idempotent), refusing with the concurrency retry meanwhile', () => {
    const q = new InProcessQuotas();
    const items = [{ key: 'token:a|tool:x', limit: { concurrent: 1 }, label: 'tool:x per principal' }];
    const first = q.acquire(items, T0);
    assert.ok(first.ok);
    assert.deepEqual(q.acquire(items, T0), { ok: false, retryAfterMs: CONCURRENCY_RETRY_MS, label: 'tool:x per principal' });
    first.release();
    first.release();
    const second = q.acquire(items, T0);
    assert.ok(second.ok);
    assert.equal(q.acquire(items, T0).ok, false, 'a double release did not free a second slot');
  });

  it('takes from every limit or from none: a refusal by one limit consumes nothing of the others', () => {
    const q = new InProcessQuotas();
    const own = { key: 'token:a|tool:x', limit: { requests: 5, window_ms: 1000 }, label: 'own' };
    const cls = { key: 'token:a', limit: { requests: 1, window_ms: 1000 }, label: 'class' };
    assert.ok(q.acquire([own, cls], T0).ok);
    for (let i = 0; i < 3; i++) assert.equal(q.acquire([own, cls], T0).ok, false);
    // own was taken once only: four more fit in it.
    for (let i = 0; i < 4; i++) assert.ok(q.acquire([own], T0).ok);
    assert.equal(q.acquire([own], T0).ok, false);
  });

  it('keys by principal: two tokens, an OAuth user and its client count separately', () => {
    const classes = { token: { requests: 1 }, user: { requests: 1 }, oauth_client: { requests: 10 } };
    const a = staticPrincipal('a', []);
    const b = staticPrincipal('b', []);
    const u: Principal = { sub: 'ada', kind: 'oauth', clientId: 'web', scopes: new Set() };
    const who = (p: Principal) => principalKey(p, { client: false });
    assert.deepEqual(quotaItems(a, 'tool:x', { requests: 3 }, classes).map((i) => i.key), [`${who(a)}|tool:x`, who(a)]);
    assert.deepEqual(quotaItems(u, 'tool:x', undefined, classes).map((i) => i.key), [who(u), 'client:web']);
    assert.equal(who(u), who({ ...u, clientId: 'cli' }), 'a person is counted across the clients it uses');
    assert.deepEqual(quotaItems({ sub: 'anonymous', kind: 'anonymous', scopes: new Set() }, 'tool:x', { requests: 1 }, classes), []);
    const q = new InProcessQuotas();
    assert.ok(q.acquire(quotaItems(a, 'tool:x', undefined, classes), T0).ok);
    assert.equal(q.acquire(quotaItems(a, 'tool:x', undefined, classes), T0).ok, false);
    assert.ok(q.acquire(quotaItems(b, 'tool:x', undefined, classes), T0).ok, 'b is not throttled by a');
  });

  it('an external issuer\'s subject is its own principal: the same sub at two issuers never shares a quota, and each issuer\'s limits is its class', () => {
    const ext = (issuer: string): Principal => ({ sub: 'alice', kind: 'external', issuer, scopes: new Set() });
    const classes = { external: { 'https://idp-a.example': { requests: 1, window_ms: 1000 } } };
    const a = quotaItems(ext('https://idp-a.example'), 'tool:x', { requests: 1 }, classes);
    const b = quotaItems(ext('https://idp-b.example'), 'tool:x', { requests: 1 }, classes);
    const user = quotaItems({ sub: 'alice', kind: 'oauth', scopes: new Set() }, 'tool:x', { requests: 1 }, classes);
    const token = quotaItems(staticPrincipal('alice', []), 'tool:x', { requests: 1 }, classes);
    assert.deepEqual(a.map((i) => i.label), ['tool:x per principal', 'limits of external issuer https://idp-a.example']);
    assert.equal(a[1]!.key, principalKey(ext('https://idp-a.example'), { client: false }));
    assert.equal(b.length, 1, 'idp-b has no class limit');
    const keys = [a[0]!.key, b[0]!.key, user[0]!.key, token[0]!.key];
    assert.equal(new Set(keys).size, 4, `alice at two issuers, as an OAuth user and as a static token are four principals: ${keys.join(' ')}`);
    const q = new InProcessQuotas();
    assert.equal(q.acquire(a, T0).ok, true);
    assert.equal(q.acquire(a, T0 + 1).ok, false);
    assert.equal(q.acquire(b, T0 + 1).ok, true, 'the same sub at idp-b counts apart');
    assert.equal(q.acquire(user, T0 + 1).ok, true, 'and so does a built-in OAuth user of that name');
  });
});
