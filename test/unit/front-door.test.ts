// The front door's fast paths decide exactly as the full checks do: a Host that passed is
// let through again only without Origin and query string (a foreign Origin, a token in
// the query, another Host are still refused after it); admitNow() answers a Bearer static
// token at once and leaves everything else (unknown or OAuth tokens, the DPoP scheme, a
// malformed header) to admit(); a public route is anonymous.

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { TokenTable } from '../../src/auth/bearer.js';
import { ANONYMOUS, createGate } from '../../src/auth/gate.js';
import { resolveConfig } from '../../src/config.js';
import { buildCatalog } from '../../src/core/catalog.js';
import { FastSvc } from '../../src/core/fast-svc.js';
import { createFrontDoor } from '../../src/http/front-door.js';
import { hostPolicy, hostRefusal } from '../../src/http/host-check.js';
import { Observer } from '../../src/observe/observer.js';
import { PolicyStore } from '../../src/policy/store.js';
import { SvcError } from '../../src/errors.js';

const log = pino({ level: 'silent' });
const cfg = resolveConfig({ auth: { token: 'main-token', tokens: [{ name: 'ci', token: 'ci-token', scopes: [] }] } });
const store = new PolicyStore({ catalog: buildCatalog(new FastSvc({ name: 't' })), profile: cfg.profile, tokens: TokenTable.build(cfg.auth!, [], log) }, log);
const gate = createGate({ policy: () => store.current(), realm: 't', defaultScopes: () => [] });
const door = createFrontDoor({
  refusal: hostRefusal(hostPolicy(cfg.server)), gate, store, log, ipOf: () => '127.0.0.1', isProtected: (r) => r === '/svc', observer: Observer.NONE,
});
const req = (url: string, headers: Record<string, string>, method = 'POST') => ({ url, method, headers }) as unknown as IncomingMessage;
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
});
