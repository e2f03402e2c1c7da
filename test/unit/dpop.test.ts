// The DPoP proof verifier (src/auth/dpop.ts) and the replay cache under it: each check a
// proof must pass, nonces interchangeable with oidc-provider's, and a bounded jti store.
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, calculateJwkThumbprint, type CryptoKey, type JWK } from 'jose';
// oidc-provider's own nonce generator, to prove one nonce serves /token and the protected routes.
// @ts-expect-error: an internal module without types
import ServerChallenge from 'oidc-provider/lib/helpers/challenge.js';
import { DpopVerifier } from '../../src/auth/dpop.js';
import { ReplayCache } from '../../src/auth/replay.js';
import { SvcError } from '../../src/errors.js';

const ORIGIN = 'http://127.0.0.1:8080';
const secret = randomBytes(32);

describe('DpopVerifier', () => {
  let key: CryptoKey;
  let jwk: JWK;
  let jkt: string;
  before(async () => {
    const kp = await generateKeyPair('ES256', { extractable: true });
    key = kp.privateKey;
    jwk = await exportJWK(kp.publicKey);
    jkt = await calculateJwkThumbprint(jwk);
  });

  const proof = (claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) => new SignJWT({
    htm: 'POST', htu: `${ORIGIN}/svc/tools/x`, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims,
  }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk, ...header }).sign(key);
  const verifier = (nonces = false) => new DpopVerifier({ mode: 'required', nonces, origin: ORIGIN, secret });
  const req = { method: 'POST', path: '/svc/tools/x' };
  const refused = async (p: Promise<unknown>, error: string, message: RegExp) => {
    await assert.rejects(p, (e: SvcError) => {
      assert.ok(e instanceof SvcError);
      assert.equal(e.data?.error, error);
      assert.match(e.message, message);
      return true;
    });
  };

  it('returns the key thumbprint of a valid proof (query string ignored)', async () => {
    assert.equal(await verifier().verify(await proof(), { ...req, path: '/svc/tools/x?a=1' }), jkt);
  });

  it('checks method, URL, ath, iat and the bound key', async () => {
    const v = verifier();
    await refused(v.verify(await proof({ htm: 'GET' }), req), 'invalid_dpop_proof', /htm/);
    await refused(v.verify(await proof({ htu: `${ORIGIN}/mcp` }), req), 'invalid_dpop_proof', /htu/);
    await refused(v.verify(await proof({ htu: `http://evil.example/svc/tools/x` }), req), 'invalid_dpop_proof', /htu/);
    await refused(v.verify(await proof(), { ...req, accessToken: 'tok' }), 'invalid_dpop_proof', /ath/);
    const ath = createHash('sha256').update('tok').digest('base64url');
    assert.equal(await v.verify(await proof({ ath }), { ...req, accessToken: 'tok' }), jkt);
    await refused(v.verify(await proof({ iat: Math.floor(Date.now() / 1000) - 3600 }), req), 'invalid_dpop_proof', /iat/);
    await refused(v.verify(await proof(), { ...req, boundTo: 'someone-else' }), 'invalid_dpop_proof', /another key/);
  });

  it('accepts ws:// for the /ws handshake', async () => {
    assert.equal(await verifier().verify(await proof({ htm: 'GET', htu: 'ws://127.0.0.1:8080/ws' }), { method: 'GET', path: '/ws' }), jkt);
  });

  it('refuses a missing proof, a wrong typ and an embedded private key', async () => {
    const v = verifier();
    await refused(v.verify(undefined, req), 'invalid_dpop_proof', /required/);
    await refused(v.verify(await proof({}, { typ: 'JWT' }), req), 'invalid_dpop_proof', /not a valid/);
    const priv = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    await refused(v.verify(await proof({}, { jwk: priv }), req), 'invalid_dpop_proof', /(private key|not a valid)/);
  });

  it('uses a jti up only when everything else passed', async () => {
    const v = verifier();
    const p = await proof();
    await refused(v.verify(p, { ...req, boundTo: 'someone-else' }), 'invalid_dpop_proof', /another key/);
    assert.equal(await v.verify(p, { ...req, boundTo: jkt }), jkt);
    await refused(v.verify(p, { ...req, boundTo: jkt }), 'invalid_dpop_proof', /already used/);
  });

  it('with nonces: asks for one, accepts its own and oidc-provider\'s, refuses others', async () => {
    const v = verifier(true);
    await assert.rejects(v.verify(await proof(), req), (e: SvcError) => e.data?.error === 'use_dpop_nonce' && e.data.dpopNonce === v.nonce());
    assert.equal(await v.verify(await proof({ nonce: v.nonce() }), req), jkt);
    const theirs = new ServerChallenge(secret, 'DPoP');
    assert.equal(await v.verify(await proof({ nonce: theirs.nextChallenge() }), req), jkt);
    assert.equal(theirs.checkChallenge(v.nonce()), true);
    await refused(v.verify(await proof({ nonce: 'x'.repeat(43) }), req), 'use_dpop_nonce', /nonce/);
  });
});

describe('ReplayCache', () => {
  const now = () => Math.floor(Date.now() / 1000);

  it('says unique once per key while it lives, again after it expired', () => {
    const c = new ReplayCache();
    assert.equal(c.unique('a', now() + 60), true);
    assert.equal(c.unique('a', now() + 60), false);
    assert.equal(c.unique('b', now() - 1), true);
    assert.equal(c.unique('b', now() + 60), true);
  });

  it('stays bounded, dropping expired keys first', () => {
    const c = new ReplayCache(10);
    for (let i = 0; i < 5; i++) c.unique(`old${i}`, now() - 1);
    for (let i = 0; i < 30; i++) c.unique(`live${i}`, now() + 60 + i);
    assert.ok(c.size <= 10, String(c.size));
    assert.equal(c.unique('live29', now() + 60), false, 'the latest-expiring key is still remembered');
  });
});
