import assert from 'node:assert/strict';
import type { Adapter } from 'oidc-provider';
import type { Principal } from '../../src/core/types.js';
import { VerifiedTokens } from '../../src/auth/oauth/verified-tokens.js';

const principal = (grant: string, expiresInS = 600): Principal =>
  Object.freeze({ sub: 'u', scopes: new Set(['a']), kind: 'oauth', credentialId: grant, expiresAt: Math.floor(Date.now() / 1000) + expiresInS });

/** An adapter whose destroy/revokeByGrantId can be held open, to interleave a lookup with them. */
function slowAdapter() {
  const calls: string[] = [];
  let release: () => void = () => {};
  const held = () => new Promise<void>((r) => (release = r));
  const adapter = {
    upsert: async () => {}, find: async () => undefined, findByUid: async () => undefined, findByUserCode: async () => undefined,
    consume: async (id: string) => void calls.push(`consume ${id}`),
    destroy: async (id: string) => { calls.push(`destroy ${id}`); await held(); },
    revokeByGrantId: async (g: string) => { calls.push(`revoke ${g}`); await held(); },
  } as unknown as Adapter;
  return { adapter, calls, release: () => release() };
}

describe('VerifiedTokens (OAuth access-token cache)', () => {
  it('serves a verified token until it expires', () => {
    const c = new VerifiedTokens();
    c.set('t1', principal('g1'), c.begin());
    assert.equal(c.get('t1')?.credentialId, 'g1');
    c.set('t2', principal('g2', -1), c.begin());
    assert.equal(c.get('t2'), undefined, 'an expired token is never served');
    assert.equal(c.get('nope'), undefined);
  });

  it('forgets a token the moment its AccessToken is destroyed (revocation)', async () => {
    const c = new VerifiedTokens();
    const s = slowAdapter();
    const at = c.wrap('AccessToken', s.adapter);
    c.set('t1', principal('g1'), c.begin());
    const done = at.destroy('t1');
    assert.equal(c.get('t1'), undefined, 'dropped before the store finishes');
    s.release();
    await done;
    assert.deepEqual(s.calls, ['destroy t1']);
  });

  it('forgets every token of a grant revoked by id or destroyed', async () => {
    const c = new VerifiedTokens();
    const s = slowAdapter();
    c.set('t1', principal('g1'), c.begin());
    c.set('t2', principal('g1'), c.begin());
    c.set('t3', principal('g2'), c.begin());
    const revoked = c.wrap('RefreshToken', s.adapter).revokeByGrantId('g1');
    s.release();
    await revoked;
    assert.equal(c.get('t1'), undefined);
    assert.equal(c.get('t2'), undefined);
    assert.equal(c.knowsGrant('g1'), false);
    assert.equal(c.get('t3')?.credentialId, 'g2');
    const destroyed = c.wrap('Grant', s.adapter).destroy('g2');
    s.release();
    await destroyed;
    assert.equal(c.get('t3'), undefined);
  });

  it('does not cache a lookup that overlapped a revocation', async () => {
    const c = new VerifiedTokens();
    const s = slowAdapter();
    const epoch = c.begin(); // a verification starts…
    const revoked = c.wrap('Grant', s.adapter).destroy('g1'); // …a revocation runs meanwhile…
    c.set('t1', principal('g1'), epoch); // …and the verification ends with what it read before
    assert.equal(c.get('t1'), undefined);
    s.release();
    await revoked;
    c.set('t1', principal('g1'), epoch);
    assert.equal(c.get('t1'), undefined, 'still refused after the revocation finished');
  });

  it('passes consumption through without touching cached access tokens', async () => {
    const c = new VerifiedTokens();
    const s = slowAdapter();
    c.set('t1', principal('g1'), c.begin());
    await c.wrap('RefreshToken', s.adapter).consume('r1');
    assert.equal(c.get('t1')?.credentialId, 'g1');
    assert.deepEqual(s.calls, ['consume r1']);
  });
});
