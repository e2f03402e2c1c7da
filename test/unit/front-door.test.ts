// The front door's fast paths decide exactly as the full checks do: a Host that passed is
// let through again only without Origin and query string (a foreign Origin, a token in
// the query, another Host are still refused after it); admitNow() answers a Bearer static
// token or a cached OAuth token at once and leaves everything else (unknown or uncached
// tokens, the DPoP scheme, a DPoP-bound token, an OAuth token when DPoP is required, a
// malformed header) to admit(); a public route is anonymous.

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { TokenTable } from '../../src/auth/bearer.js';
import { createGate } from '../../src/auth/gate.js';
import { ANONYMOUS } from '../../src/policy/principals.js';
import { resolveConfig } from '../../src/core/config.js';
import { buildCatalog } from '../../src/core/catalog.js';
import { FastSvc } from '../../src/core/fast-svc.js';
import { createFrontDoor } from '../../src/transports/front-door.js';
import { hostPolicy, hostRefusal } from '../../src/http/host-check.js';
import { Observer } from '../../src/observe/observer.js';
import { PolicyStore } from '../../src/policy/store.js';
import { SvcError } from '../../src/errors.js';
import type { Principal } from '../../src/core/types.js';
import type { DpopVerifier } from '../../src/auth/dpop.js';

const log = pino({ level: 'silent' });
const cfg = resolveConfig({ auth: { token: 'main-token', tokens: [{ name: 'ci', token: 'ci-token', scopes: [] }] } });
const store = new PolicyStore({ catalog: buildCatalog(new FastSvc({ name: 't' })), profile: cfg.profile, tokens: TokenTable.build(cfg.auth!, [], log) }, log);
const gate = createGate({ policy: () => store.current(), realm: 't' });
const door = createFrontDoor({
  refusal: hostRefusal(hostPolicy(cfg.server)), gate, store, log, ipOf: () => '127.0.0.1', isProtected: (r) => r === '/svc', observer: Observer.NONE,
});
/** A request on a connection of its own, unless `socket` names a shared one; `raw`: its header lines, when not one per header. */
const req = (url: string, headers: Record<string, string>, method = 'POST', socket: object = {}, raw = Object.entries(headers).flat()) => ({ url, method, headers, rawHeaders: raw, socket }) as unknown as IncomingMessage;
const reason = (e: SvcError | undefined) => e?.data?.reason;

describe('front door fast paths', () => {
  it('a Host that passed passes again, and everything the full check refuses is still refused after it', () => {
    assert.equal(door.refuse(req('/svc/tools/a', { host: '127.0.0.1:8080' })), undefined);
    assert.equal(door.refuse(req('/svc/tools/a', { host: '127.0.0.1:8080' })), undefined);
    assert.equal(reason(door.refuse(req('/svc/tools/a', { host: '127.0.0.1:8080', origin: 'http://evil.example' }))), 'origin_not_allowed');
    assert.equal(reason(door.refuse(req('/svc/tools/a', { host: '127.0.0.1:8080', origin: 'null' }))), 'origin_null');
    assert.equal(reason(door.refuse(req('/svc/tools/a?access_token=x', { host: '127.0.0.1:8080' }))), 'token_in_query');
    assert.equal(reason(door.refuse(req('/svc/tools/a', { host: 'evil.example' }))), 'host_not_allowed');
    assert.equal(reason(door.refuse(req('/svc/tools/a', { host: '127.0.0.1:8080@evil' }))), 'host_invalid');
    assert.equal(reason(door.refuse(req('/svc/tools/a', {}))), 'host_not_allowed');
    assert.equal(door.refuse(req('/svc/tools/a', { host: '127.0.0.1:8080' })), undefined);
    // Node keeps the first Authorization of two: the raw lines still show both, and the Host that passed does not skip that check.
    const twice = ['Host', '127.0.0.1:8080', 'Authorization', 'Bearer ci-token', 'authorization', 'Bearer other'];
    assert.equal(reason(door.refuse(req('/svc/tools/a', { host: '127.0.0.1:8080', authorization: 'Bearer ci-token' }, 'POST', {}, twice))), 'header_repeated');
    assert.equal(reason(door.refuse(req('/svc/tools/a', { host: '127.0.0.1:8080' }, 'POST', {}, ['Host', '127.0.0.1:8080', 'HOST', 'evil.example']))), 'header_repeated');
  });

  it('admitNow answers a Bearer static token at once, the same principal admit() gives', async () => {
    const snap = store.current();
    const now = door.admitNow(req('/svc/tools/a', { authorization: 'bearer ci-token' }), '/svc', snap);
    assert.equal(now?.sub, 'ci');
    assert.equal(await door.admit(req('/svc/tools/a', { authorization: 'Bearer ci-token' }), '/svc', snap), now);
    assert.equal(door.admitNow(req('/svc/tools/a', { authorization: 'Bearer main-token' }), '/svc', snap)?.sub, cfg.auth!.subject);
  });

  it('admitNow leaves unknown tokens, the DPoP scheme and malformed headers to admit(); a public route is anonymous', async () => {
    const snap = store.current();
    for (const authorization of ['Bearer nope', 'DPoP ci-token', 'Basic Y2k6eA==', 'Bearer ci token', '']) {
      assert.equal(door.admitNow(req('/svc/tools/a', { authorization }), '/svc', snap), undefined, authorization);
      assert.ok(await door.admit(req('/svc/tools/a', { authorization }), '/svc', snap, true) instanceof SvcError, authorization);
    }
    assert.equal(door.admitNow(req('/svc/tools/a', {}), '/svc', snap), undefined);
    assert.equal(door.admitNow(req('/mcp', {}), '/mcp', snap), ANONYMOUS);
  });

  it('admitNow answers a cached OAuth token at once, and leaves an uncached one and DPoP cases to admit()', async () => {
    const oauthP = (jkt?: string): Principal => Object.freeze({ sub: 'u', scopes: new Set<string>(), kind: 'oauth', credentialId: 'g', ...(jkt && { jkt }) });
    const cached = new Map([['cached', oauthP()], ['bound', oauthP('thumb')]]);
    const verifier = (dpop?: Partial<DpopVerifier>) => ({
      verifyAccessToken: async (t: string) => cached.get(t) ?? null,
      cachedAccessToken: (t: string) => cached.get(t),
      isActive: async () => true, prmUrl: () => '', scopesSupported: [], dpop: dpop as DpopVerifier | undefined,
    });
    const doorWith = (dpop?: Partial<DpopVerifier>) => createFrontDoor({
      refusal: hostRefusal(hostPolicy(cfg.server)), store, log, ipOf: () => '127.0.0.1', isProtected: (r) => r === '/svc', observer: Observer.NONE,
      gate: createGate({ policy: () => store.current(), oauth: verifier(dpop), realm: 't' }),
    });
    const snap = store.current();
    const plain = doorWith();
    const now = plain.admitNow(req('/svc/tools/a', { authorization: 'Bearer cached' }), '/svc', snap);
    assert.equal(now, cached.get('cached'));
    assert.equal(await plain.admit(req('/svc/tools/a', { authorization: 'Bearer cached' }), '/svc', snap), now);
    assert.equal(plain.admitNow(req('/svc/tools/a', { authorization: 'Bearer uncached' }), '/svc', snap), undefined);
    assert.equal(plain.admitNow(req('/svc/tools/a', { authorization: 'Bearer ci-token' }), '/svc', snap)?.sub, 'ci', 'static tokens first');

    const allowed = doorWith({ mode: 'allowed' });
    assert.equal(allowed.admitNow(req('/svc/tools/a', { authorization: 'Bearer cached' }), '/svc', snap), now);
    assert.equal(allowed.admitNow(req('/svc/tools/a', { authorization: 'Bearer bound' }), '/svc', snap), undefined);
    assert.ok(await allowed.admit(req('/svc/tools/a', { authorization: 'Bearer bound' }), '/svc', snap, true) instanceof SvcError);
    const required = doorWith({ mode: 'required' });
    assert.equal(required.admitNow(req('/svc/tools/a', { authorization: 'Bearer cached' }), '/svc', snap), undefined);
    assert.ok(await required.admit(req('/svc/tools/a', { authorization: 'Bearer cached' }), '/svc', snap, true) instanceof SvcError);
    assert.equal(required.admitNow(req('/svc/tools/a', { authorization: 'Bearer ci-token' }), '/svc', snap)?.sub, 'ci', 'a static token stays bearer');

    // One keep-alive connection: its header is read once while it stays the same, but every request still asks the cache.
    const conn = {};
    const on = (authorization: string) => plain.admitNow(req('/svc/tools/a', { authorization }, 'POST', conn), '/svc', snap);
    assert.equal(on('Bearer cached'), now);
    assert.equal(on('Bearer cached'), now);
    cached.delete('cached'); // revoked, expired or evicted: the cache no longer answers
    assert.equal(on('Bearer cached'), undefined, 'the remembered header decides nothing by itself');
    assert.equal(on('Bearer ci-token')?.sub, 'ci', 'a new header is read anew');
    assert.equal(on('DPoP ci-token'), undefined);
    assert.equal(on('Bearer ci-token')?.sub, 'ci');
  });
});
