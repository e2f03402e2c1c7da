// The negative matrix of resource-server mode through the real `svc serve`: every token an
// external issuer must not get through gets its HTTP status and exactly one audit line whose
// reason names the check that failed — never a silent 401 loop: an issuer that cannot be
// asked is 503 IDP_UNAVAILABLE. Crafted tokens come from stand-in issuers on loopback
// (test/helpers/jwt-issuer.ts: alg none, HS256 keyed with the public key, jku/x5u pointing
// elsewhere, a JWKS publishing a private key); introspection rows use the corporate IdP
// (test/helpers/idp.ts), and a stand-in whose introspection answers the test sets (token_type,
// token_use, typ as RFC 7662 and real providers write them). The answer never names the check —
// every 401 carries one message and one error_description, every 503 one message — and never
// echoes the token; the log line names the check in words (a kid miss says whether the keys
// were fetched again or jwks_refetch_interval kept them from it). A DPoP-bound external token
// (cnf.jkt) needs a proof signed by its key, as the built-in server's bound tokens do (the same
// verifier, src/auth/dpop.ts). A refresh token of the corporate IdP presented as an access
// token is refused, although introspection is asked with token_type_hint=access_token (a hint
// the IdP may ignore, RFC 7662 §2.1).

import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startIdp, type Idp } from '../helpers/idp.js';
import { startJwtIssuer, signingKey, type JwtIssuer } from '../helpers/jwt-issuer.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';
import { secret } from '../helpers/secrets.js';

type Json = Record<string, unknown>;
const AUD = 'https://notes.example.com/mcp';

describe('resource-server mode: the negative matrix (real svc serve)', function () {
  this.timeout(60_000);
  let srv: Served;
  let idp: Idp;
  let good: JwtIssuer; // accepted
  let leaky: JwtIssuer; // accepted, then publishes a private key
  let foreign: JwtIssuer; // not accepted: issuer A where only the others are
  let intro: JwtIssuer; // accepted, introspects: its answers set by the test
  const closed = 'http://127.0.0.1:9'; // nothing listens: an issuer that cannot be reached

  before(async () => {
    [idp, good, leaky, foreign, intro] = await Promise.all([startIdp(), startJwtIssuer({ audience: AUD }), startJwtIssuer({ audience: AUD }), startJwtIssuer({ audience: AUD }), startJwtIssuer({ audience: AUD })]);
    leaky.jwks({ keys: [leaky.keys[0]!.privateJwk] });
    srv = await serveManifest({
      version: 1,
      name: 'refusals',
      server: { host: '127.0.0.1' },
      routes: { public: ['/healthz'], protected: ['/svc', '/mcp', '/ws'] },
      audit: { to: 'stderr' },
      profile: { scopes: ['notes.read'] },
      external_issuers: [
        { issuer: good.issuer, audience: AUD, jwks_uri: `${good.url}/jwks`, max_token_length: 4096 },
        { issuer: leaky.issuer, audience: AUD, jwks_uri: `${leaky.url}/jwks` },
        { issuer: `${closed}/down`, audience: AUD, jwks_uri: `${closed}/jwks` },
        { issuer: idp.issuer, audience: AUD, introspection: { client_id: 'fastsvc-rs', client_secret: '${IDP_RS_SECRET}' } },
        { issuer: intro.issuer, audience: AUD, jwks_uri: `${intro.url}/jwks`, introspection: { endpoint: `${intro.url}/introspect`, client_id: 'rs', client_secret: '${INTRO_SECRET}', cache_ttl: 0 } },
      ],
      tools: [{ name: 'notes.list', description: 'Lists notes.', required_scopes: ['notes.read'], template: 'none' }],
    }, { env: { IDP_RS_SECRET: idp.clients['fastsvc-rs']!.client_secret, INTRO_SECRET: 'intro-secret' } });
  });
  after(async () => {
    await srv?.stop();
    await Promise.all([idp?.stop(), good?.stop(), leaky?.stop(), foreign?.stop(), intro?.stop()]);
  });

  const denials = () => srv.logs().filter((l) => l.audit === true && l.decision === 'deny');

  /**
   * Where the audit line of one more refused request (a token in the query of a path of its own, which the front door
   * refuses) is in denials(), once it is there: a line any earlier request adds comes before it.
   */
  async function marker(): Promise<number> {
    const path = `/audit-marker-${randomUUID()}`;
    assert.equal((await fetch(`${srv.url}${path}?access_token=marker`)).status, 400);
    return waitFor(() => {
      const at = denials().findIndex((l) => l.capability === path);
      return at < 0 ? undefined : at;
    }, 'the marker request\'s audit line');
  }

  /** One call on `route`: its status, its JSON or close body, and the one audit line it added. */
  async function call(route: '/svc' | '/mcp' | '/ws', token: string): Promise<{ status: number; body: string; audit: Json; challenge: string | null }> {
    const before = (await marker()) + 1; // every earlier line is in: this request's comes next
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    let status: number;
    let body: string;
    let challenge: string | null = null;
    if (route === '/ws') {
      ({ status, body, challenge } = await new Promise<{ status: number; body: string; challenge: string | null }>((resolve, reject) => {
        const s = new WebSocket(`${srv.url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers });
        s.on('unexpected-response', (_req, res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => void (text += c)).on('end', () => resolve({ status: res.statusCode!, body: text, challenge: (res.headers['www-authenticate'] as string | undefined) ?? null }));
        });
        s.on('open', () => reject(new Error('the handshake was accepted')));
        s.on('error', () => {});
      }));
    } else {
      const res = route === '/svc'
        ? await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers, body: '{}' })
        : await fetch(`${srv.url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'm', version: '1' } } }) });
      status = res.status;
      body = await res.text();
      challenge = res.headers.get('www-authenticate');
    }
    const audit = await waitFor(() => (denials().length > before ? denials()[before] : undefined), `the audit line of ${route}`);
    assert.equal(await marker(), before + 1, 'exactly one audit line per refused request');
    return { status, body, audit, challenge };
  }

  const now = () => Math.floor(Date.now() / 1000);
  const rows: [string, () => Promise<string>, 401 | 503, string][] = [
    ['wrong iss', () => good.mint({ iss: `${good.issuer}/other` }), 401, 'issuer_not_accepted'],
    ['wrong aud', () => good.mint({ aud: 'https://other.example.com/mcp' }), 401, 'token_aud'],
    ['missing aud', () => good.mint({}, { omit: ['aud'] }), 401, 'token_aud'],
    ['expired', () => good.mint({ exp: now() - 120 }), 401, 'token_exp'],
    ['not yet valid', () => good.mint({ nbf: now() + 600 }), 401, 'token_nbf'],
    ['alg: none', async () => good.unsigned(), 401, 'token_alg'],
    ['HS256 signed with the public key', () => good.hs256WithPublicKey(), 401, 'token_alg'],
    ['unknown kid after refetch', async () => good.mint({}, { key: await signingKey('nobody') }), 401, 'token_kid'],
    ['jku/x5u pointing elsewhere', async () => {
      const evil = await signingKey('evil');
      foreign.jwks({ keys: [evil.publicJwk] });
      return good.mint({}, { key: evil, header: { jku: `${foreign.url}/jwks`, x5u: `${foreign.url}/jwks` } });
    }, 401, 'token_kid'],
    ['oversized token', () => good.mint({ pad: 'x'.repeat(5000) }), 401, 'token_size'],
    ['a JWKS that contains a private key', () => leaky.mint(), 503, 'jwks_private_key'],
    ['the IdP unreachable, no keys held', () => good.mint({ iss: `${closed}/down` }), 503, 'jwks_unavailable'],
    ['introspection active: false', async () => secret('opaque-unknown-token-0123456789'), 401, 'introspection_inactive'],
    ['a token from issuer A where only B is accepted', () => foreign.mint(), 401, 'issuer_not_accepted'],
    ['introspected token_type refresh_token', async () => introspected({ token_type: 'refresh_token' }), 401, 'token_typ'],
    ['introspected token_type N_A (not an access token, RFC 8693)', async () => introspected({ token_type: 'N_A' }), 401, 'token_typ'],
    ['introspected token_use refresh_token (Ory Hydra)', async () => introspected({ token_use: 'refresh_token' }), 401, 'token_typ'],
    ['introspected typ Refresh (Keycloak)', async () => introspected({ typ: 'Refresh' }), 401, 'token_typ'],
  ];

  /** An opaque token the stand-in introspects as active for AUD, with `fields` over its answer. */
  function introspected(fields: Record<string, unknown>): string {
    const token = secret(`opaque-${randomUUID()}`);
    intro.introspection.set(token, { active: true, iss: intro.issuer, sub: 'user-9', aud: AUD, scope: 'notes.read', exp: now() + 300, ...fields });
    return token;
  }

  /** The message of every 401 and 503 answer, and every 401's error_description: one each, whatever the check. */
  const messages = { 401: new Set<string>(), 503: new Set<string>(), description: new Set<string>() };

  for (const [name, token, status, reason] of rows) {
    it(`${name}: ${status}, audit reason ${reason}`, async () => {
      const t = await token();
      const r = await call('/svc', t);
      assert.equal(r.status, status, r.body);
      assert.equal(r.audit.reason, reason);
      assert.equal(r.audit.capability, '/svc');
      assert.equal(JSON.parse(r.body).error.code, status === 401 ? 'UNAUTHENTICATED' : 'IDP_UNAVAILABLE');
      assert.ok(!r.body.includes(reason) && !r.body.includes(t), 'the answer names neither the check nor the token');
      messages[status].add(JSON.parse(r.body).error.message);
      if (status === 401) messages.description.add(/error_description="([^"]*)"/.exec(r.challenge!)?.[1] ?? '(none)');
      if (status === 401) {
        assert.match(r.challenge!, /^Bearer realm="refusals", error="invalid_token", scope="notes\.read", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/svc"/);
      }
      // The log and the audit log are written apart: the log line may come after the audit line.
      await waitFor(() => srv.logs().find((l) => l.event === 'auth.failed' && l.check === reason), 'a log line naming the check');
    });
  }

  it('the answer does not say which check failed: one message for every 401 and one for every 503', () => {
    assert.equal(messages[401].size, 1, [...messages[401]].join(' | '));
    assert.equal(messages[503].size, 1, [...messages[503]].join(' | '));
    assert.equal(messages.description.size, 1, [...messages.description].join(' | '));
  });

  it('introspected token_type Bearer, DPoP, access_token (the hint\'s word) or none: accepted', async () => {
    for (const fields of [{ token_type: 'Bearer' }, { token_type: 'access_token' }, { token_type: 'urn:ietf:params:oauth:token-type:access_token' }, { token_use: 'access_token', typ: 'Bearer' }, {}]) {
      const res = await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers: { authorization: `Bearer ${introspected(fields)}`, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 200, `${JSON.stringify(fields)}: ${await res.text()}`);
    }
  });

  it('a refresh token of the corporate IdP, sent as an access token, is refused (the hint is only a hint)', async () => {
    const t = await idp.userToken({ username: 'ada@acme.example', scope: 'openid email offline_access', resource: AUD, format: 'opaque' });
    assert.ok(t.refresh_token, 'the IdP issued a refresh token');
    const r = await call('/svc', t.refresh_token);
    assert.equal(r.status, 401, r.body);
    assert.ok(['token_typ', 'token_aud'].includes(String(r.audit.reason)), String(r.audit.reason));
  });

  it('a kid miss within jwks_refetch_interval of the last fetch says the keys were not fetched again', async () => {
    const first = await call('/svc', await good.mint({}, { key: await signingKey('nobody-1') }));
    assert.equal(first.audit.reason, 'token_kid');
    const fetches = good.hits('/jwks');
    const second = await call('/svc', await good.mint({}, { key: await signingKey('nobody-2') }));
    assert.equal(second.audit.reason, 'token_kid');
    assert.equal(good.hits('/jwks'), fetches, 'no fetch within jwks_refetch_interval');
    const line = srv.logs().filter((l) => l.event === 'auth.failed' && l.check === 'token_kid').at(-1)!;
    assert.doesNotMatch(String(line.reason), /after fetching its keys again/);
    assert.match(String(line.reason), /jwks_refetch_interval/);
  });

  it('introspection endpoint down: 503, audit reason introspection_unavailable', async () => {
    await idp.fault('introspection', { status: 500 });
    try {
      const r = await call('/svc', secret('opaque-token-while-down-0123456789'));
      assert.equal(r.status, 503);
      assert.equal(r.audit.reason, 'introspection_unavailable');
      assert.equal(JSON.parse(r.body).error.code, 'IDP_UNAVAILABLE');
    } finally {
      await idp.fault('introspection', null);
    }
  });

  it('the same refusals on /mcp and on the /ws handshake', async () => {
    for (const route of ['/mcp', '/ws'] as const) {
      const expired = await call(route, await good.mint({ exp: now() - 120 }));
      assert.deepEqual([expired.status, expired.audit.reason, expired.audit.capability], [401, 'token_exp', route]);
      assert.match(expired.challenge!, /error="invalid_token"/);
      const foreignToken = await call(route, await foreign.mint());
      assert.deepEqual([foreignToken.status, foreignToken.audit.reason], [401, 'issuer_not_accepted']);
      const leaked = await call(route, await leaky.mint());
      assert.deepEqual([leaked.status, leaked.audit.reason], [503, 'jwks_private_key']);
    }
  });

  it('a DPoP-bound external token (cnf.jkt) works only as DPoP with a proof signed by its key', async () => {
    const client = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(client.publicKey);
    const other = await generateKeyPair('ES256', { extractable: true });
    const token = await good.mint({ cnf: { jkt: await calculateJwkThumbprint(jwk) } });
    const url = `${srv.url}/svc/tools/notes.list`;
    const proof = async (key = client.privateKey, pub = jwk) => new SignJWT({ htm: 'POST', htu: url, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ath: createHash('sha256').update(token).digest('base64url') })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: pub }).sign(key);
    const post = (headers: Record<string, string>) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
    assert.equal((await post({ authorization: `Bearer ${token}` })).status, 401, 'a bound token sent as a bearer token');
    assert.equal((await post({ authorization: `DPoP ${token}` })).status, 401, 'no proof');
    const wrong = await post({ authorization: `DPoP ${token}`, dpop: await proof(other.privateKey, await exportJWK(other.publicKey)) });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get('www-authenticate')!, /DPoP algs="[^"]+", error="invalid_dpop_proof"/);
    assert.equal((await post({ authorization: `DPoP ${token}`, dpop: await proof() })).status, 200);
  });

  it('a good token from the same issuers still works', async () => {
    const res = await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers: { authorization: `Bearer ${await good.mint()}`, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 200);
    const opaque = (await idp.clientCredentialsToken({ scope: 'notes.read', resource: AUD, format: 'opaque' })).access_token;
    // After the introspection fault above, the endpoint is not asked again for a moment (INTROSPECTION_BACKOFF_MS).
    await waitFor(async () => {
      const res2 = await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers: { authorization: `Bearer ${opaque}`, 'content-type': 'application/json' }, body: '{}' });
      return res2.status === 200 ? true : undefined;
    }, 'the opaque token to be introspected active');
  });
});
