// DPoP (oauth.dpop) against the real `svc serve`, with oauth4webapi's DPoP support as
// the client: tokens come from the jwt-bearer grant (an ID-JAG signed here), proofs
// and nonce retries from oauth4webapi's DPoP handle. For the /ws handshake the proof
// is still made by oauth4webapi (protectedResourceRequest with a customFetch that only
// records the headers it would send) and then presented on a real WebSocket. With
// `required` + nonces: a bound token is refused without its proof and accepted with
// it on /svc, /mcp and /ws; a stolen token with another key, a replayed proof and a
// proof for another URL are refused. With `allowed`: bearer tokens still work and a
// bound token still needs its proof.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import WebSocket from 'ws';
import { serveManifest, type Served } from '../helpers/serve.js';
import { RawWs } from '../helpers/mcp-app.js';
import { authorize, register } from './oauth-harness.js';
import { secret, secretTokens } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const IDP = 'https://idp.example';
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const JSON_SSE = 'application/json, text/event-stream';

const dpopKeys = () => generateKeyPair('ES256', { extractable: true }) as Promise<CryptoKeyPair>;

/** Runs `f`, once more if the server asked for a (fresh) DPoP nonce — the handle has stored it by then. */
async function withNonce<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (!oauth.isDPoPNonceError(e)) throw e;
    return f();
  }
}

interface Server { srv: Served; as: oauth.AuthorizationServer; idp: CryptoKey }

async function start(dpop: 'allowed' | 'required', nonce: boolean): Promise<Server> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const srv = await serveManifest({
    version: 1, name: 'dpop', description: 'DPoP test service.',
    server: { host: '127.0.0.1', port: 0 },
    profile: { scopes: ['echo.use'] },
    oauth: {
      enabled: true, dpop, dpop_nonce: nonce, registration: { enabled: true },
      clients: [{ client_id: 'agent', client_secret: secret('agent-secret'), redirect_uris: ['https://agent.example/cb'] }],
      enterprise_issuers: [{ issuer: IDP, jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1' }] }, algorithms: ['ES256'], allowed_clients: ['agent'] }],
    },
    tools: [{ name: 'echo.say', description: 'Echoes.', required_scopes: ['echo.use'], template: 'said {{text}}', input_schema: { type: 'object', properties: { text: { type: 'string' } } } }],
  });
  const issuer = new URL(srv.url);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  return { srv, as, idp: privateKey };
}

async function token(s: Server, DPoP?: oauth.DPoPHandle): Promise<oauth.TokenEndpointResponse> {
  const now = Math.floor(Date.now() / 1000);
  const client = { client_id: 'agent' };
  return withNonce(async () => {
    // A fresh ID-JAG per attempt: a refused DPoP proof does not use the assertion up, but each jti is single-use.
    const assertion = await new SignJWT({ sub: 'U1', aud: s.srv.url, client_id: 'agent', jti: randomUUID(), scope: 'echo.use' })
      .setProtectedHeader({ alg: 'ES256', typ: 'oauth-id-jag+jwt', kid: 'k1' }).setIssuer(IDP).setIssuedAt(now).setExpirationTime(now + 120).sign(s.idp);
    const res = await oauth.genericTokenEndpointRequest(s.as, client, oauth.ClientSecretBasic('agent-secret'), JWT_BEARER, { assertion }, { ...insecure, DPoP });
    return secretTokens(await oauth.processGenericTokenEndpointResponse(s.as, client, res));
  });
}

const ROUTES = {
  svc: { method: 'POST', path: '/svc/tools/echo.say', body: JSON.stringify({ text: 'hi' }), headers: { 'content-type': 'application/json' } },
  mcp: { method: 'POST', path: '/mcp', body: JSON.stringify(INIT), headers: { 'content-type': 'application/json', accept: JSON_SSE } },
} as const;

/** A protected-resource request through oauth4webapi (with DPoP when a handle is given), retried once for a nonce. */
function call(s: Server, route: keyof typeof ROUTES, accessToken: string, DPoP?: oauth.DPoPHandle): Promise<Response> {
  const r = ROUTES[route];
  return withNonce(() => oauth.protectedResourceRequest(accessToken, r.method, new URL(r.path, s.srv.url), new Headers(r.headers), r.body, { ...insecure, DPoP }));
}

/**
 * The Authorization and DPoP headers oauth4webapi would send for METHOD URL (nothing is
 * sent); `nonce` is answered back as DPoP-Nonce, so the handle uses it from then on.
 */
async function proofHeaders(accessToken: string, method: string, url: string, DPoP: oauth.DPoPHandle, nonce?: string): Promise<Record<string, string>> {
  let seen: Headers | undefined;
  const recorder = async (_url: string, init: { headers: Record<string, string> }) => {
    seen = new Headers(init.headers);
    return new Response(null, { status: 204, headers: nonce ? { 'dpop-nonce': nonce } : {} });
  };
  await oauth.protectedResourceRequest(accessToken, method, new URL(url), new Headers(), null, { ...insecure, DPoP, [oauth.customFetch]: recorder });
  return { authorization: seen!.get('authorization')!, dpop: seen!.get('dpop')! };
}

/** Opens /ws with these headers: 'open', or the refusal's status and WWW-Authenticate. */
function wsHandshake(url: string, headers: Record<string, string>): Promise<{ open: true; ws: RawWs } | { open: false; status: number; challenge: string; nonce?: string }> {
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers });
  const ws = new RawWs(socket);
  ws.ready.catch(() => undefined); // a refusal is reported below
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ open: true, ws }));
    socket.once('unexpected-response', (_req, res) => {
      resolve({ open: false, status: res.statusCode!, challenge: String(res.headers['www-authenticate'] ?? ''), nonce: res.headers['dpop-nonce'] as string | undefined });
      res.resume();
      socket.terminate();
    });
    socket.once('error', reject);
  });
}

/** /ws with a proof from `DPoP`, retried once with the nonce the refusal carried. */
async function wsWithProof(s: Server, accessToken: string, DPoP: oauth.DPoPHandle) {
  const wsUrl = new URL('/ws', s.srv.url).href;
  let r = await wsHandshake(s.srv.url, await proofHeaders(accessToken, 'GET', wsUrl, DPoP));
  if (!r.open && r.nonce) {
    await proofHeaders(accessToken, 'GET', wsUrl, DPoP, r.nonce);
    r = await wsHandshake(s.srv.url, await proofHeaders(accessToken, 'GET', wsUrl, DPoP));
  }
  return r;
}

const challengeOf = (res: Response) => res.headers.get('www-authenticate') ?? '';

describe('svc serve: DPoP required, with nonces', function () {
  this.timeout(30_000);
  let s: Server;
  let keys: CryptoKeyPair;
  let handle: oauth.DPoPHandle;
  let bound: string;

  before(async () => {
    s = await start('required', true);
    keys = await dpopKeys();
    handle = oauth.DPoP({}, keys);
    const t = await token(s, handle);
    assert.equal(t.token_type, 'dpop');
    bound = t.access_token;
  });
  after(() => s?.srv.stop());

  it('advertises DPoP in both metadata documents', async () => {
    assert.deepEqual(s.as.dpop_signing_alg_values_supported, ['ES256', 'EdDSA', 'Ed25519']);
    const prm = await (await fetch(`${s.srv.url}/.well-known/oauth-protected-resource/mcp`)).json() as Record<string, unknown>;
    assert.equal(prm.dpop_bound_access_tokens_required, true);
  });

  for (const [what, meta] of [['a registered client', {}], ['a client that registered dpop_bound_access_tokens: false', { dpop_bound_access_tokens: false }]] as const) {
  it(`binds the authorization-code flow's token and its refresh too (${what}, auto login)`, async () => {
    const client = await register(s.as, meta);
    const codeFor = async () => {
      const a = await authorize(s.as, client, { scope: 'echo.use', resource: `${s.srv.url}/mcp` });
      return { a, params: oauth.validateAuthResponse(s.as, client, a.callback!, a.state) };
    };
    const plain = await codeFor();
    await assert.rejects(oauth.processAuthorizationCodeResponse(s.as, client,
      await oauth.authorizationCodeGrantRequest(s.as, client, oauth.None(), plain.params, plain.a.redirectUri, plain.a.verifier, insecure)),
    (e: oauth.ResponseBodyError) => {
      assert.equal(e.error, 'invalid_dpop_proof');
      return true;
    });
    await waitFor(() => s.srv.logs().some((l) => l.event === 'oauth.grant_error' && /dpop/i.test(String(l.detail))) || undefined, 'the refusal logged as for the missing DPoP proof');
    // The refused request used nothing up: the same code, now with a proof, gets a bound token.
    const h = oauth.DPoP({}, await dpopKeys());
    const t = await withNonce(async () => secretTokens(await oauth.processAuthorizationCodeResponse(s.as, client,
      await oauth.authorizationCodeGrantRequest(s.as, client, oauth.None(), plain.params, plain.a.redirectUri, plain.a.verifier, { ...insecure, DPoP: h }))));
    assert.equal(t.token_type, 'dpop');
    assert.equal((await call(s, 'svc', t.access_token, h)).status, 200);
    assert.equal((await fetch(`${s.srv.url}/svc/tools/echo.say`, { method: 'POST', headers: { authorization: `Bearer ${t.access_token}`, 'content-type': 'application/json' }, body: '{}' })).status, 401);
    // Its refresh: refused without a proof, bound with one.
    await assert.rejects(oauth.processRefreshTokenResponse(s.as, client, await oauth.refreshTokenGrantRequest(s.as, client, oauth.None(), t.refresh_token!, insecure)),
      (e: oauth.ResponseBodyError) => e.error === 'invalid_dpop_proof');
    const r = await withNonce(async () => secretTokens(await oauth.processRefreshTokenResponse(s.as, client,
      await oauth.refreshTokenGrantRequest(s.as, client, oauth.None(), t.refresh_token!, { ...insecure, DPoP: h }))));
    assert.equal(r.token_type, 'dpop');
    assert.equal((await call(s, 'svc', r.access_token, h)).status, 200);
  });
  }

  it('refuses to issue a token without a DPoP proof', async () => {
    await assert.rejects(token(s), (e: oauth.ResponseBodyError) => e.error === 'invalid_dpop_proof');
  });

  it('accepts the bound token with its proof on /svc and /mcp', async () => {
    const svc = await call(s, 'svc', bound, handle);
    assert.equal(svc.status, 200);
    assert.match(await svc.text(), /said hi/);
    const mcp = await call(s, 'mcp', bound, handle);
    assert.equal(mcp.status, 200);
    assert.match(await mcp.text(), /"protocolVersion"/);
  });

  it('accepts the bound token with its proof on /ws', async () => {
    const r = await wsWithProof(s, bound, handle);
    assert.ok(r.open, JSON.stringify(r));
    const init = await r.ws.initialize();
    assert.ok((init.result as Record<string, unknown>).protocolVersion);
    r.ws.socket.close();
  });

  it('refuses the bound token without a proof on all three transports', async () => {
    for (const route of ['svc', 'mcp'] as const) {
      const r = ROUTES[route];
      const res = await fetch(`${s.srv.url}${r.path}`, { method: r.method, headers: { ...r.headers, authorization: `DPoP ${bound}` }, body: r.body });
      assert.equal(res.status, 401, route);
      assert.match(challengeOf(res), /^Bearer .*, DPoP algs="[^"]+", error="invalid_dpop_proof"/, route);
      const asBearer = await fetch(`${s.srv.url}${r.path}`, { method: r.method, headers: { ...r.headers, authorization: `Bearer ${bound}` }, body: r.body });
      assert.equal(asBearer.status, 401, route);
      assert.match(challengeOf(asBearer), /error="invalid_token", .*DPoP-bound/, route);
    }
    const ws = await wsHandshake(s.srv.url, { authorization: `DPoP ${bound}` });
    assert.equal(ws.open, false);
    assert.ok(!ws.open && ws.status === 401 && /error="invalid_dpop_proof"/.test(ws.challenge), JSON.stringify(ws));
  });

  it('refuses a stolen token presented with another key on all three transports', async () => {
    const thief = oauth.DPoP({}, await dpopKeys());
    for (const route of ['svc', 'mcp'] as const) {
      await assert.rejects(call(s, route, bound, thief), (e: oauth.WWWAuthenticateChallengeError) => {
        assert.ok(e instanceof oauth.WWWAuthenticateChallengeError, String(e));
        const d = e.cause.find((c) => c.scheme === 'dpop');
        assert.equal(d?.parameters.error, 'invalid_dpop_proof', route);
        assert.match(String(d?.parameters.error_description), /another key/);
        return true;
      });
    }
    const ws = await wsWithProof(s, bound, thief);
    assert.ok(!ws.open && ws.status === 401 && /another key/.test(ws.challenge), JSON.stringify(ws));
  });

  it('refuses a replayed proof and a proof for another URL', async () => {
    const h = await proofHeaders(bound, 'POST', `${s.srv.url}/svc/tools/echo.say`, handle);
    const post = (path: string) => fetch(`${s.srv.url}${path}`, { method: 'POST', headers: { ...h, 'content-type': 'application/json', accept: JSON_SSE }, body: JSON.stringify(INIT) });
    const elsewhere = await post('/mcp');
    assert.equal(elsewhere.status, 401);
    assert.match(challengeOf(elsewhere), /htu is not this request URL/);
    assert.equal((await post('/svc/tools/echo.say')).status, 200);
    const again = await post('/svc/tools/echo.say');
    assert.equal(again.status, 401);
    assert.match(challengeOf(again), /already used/);
  });

  it('asks for a fresh nonce (use_dpop_nonce and DPoP-Nonce) when the proof has none', async () => {
    const fresh = oauth.DPoP({}, keys); // same key, no nonce remembered
    const h = await proofHeaders(bound, 'POST', `${s.srv.url}/svc/tools/echo.say`, fresh);
    const res = await fetch(`${s.srv.url}/svc/tools/echo.say`, { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 401);
    assert.match(challengeOf(res), /DPoP algs="[^"]+", error="use_dpop_nonce"/);
    assert.match(res.headers.get('dpop-nonce') ?? '', /^[A-Za-z0-9_-]{43}$/);
  });
});

describe('svc serve: DPoP allowed, without nonces', function () {
  this.timeout(30_000);
  let s: Server;

  before(async () => {
    s = await start('allowed', false);
  });
  after(() => s?.srv.stop());

  it('still issues and accepts bearer tokens', async () => {
    const t = await token(s);
    assert.equal(t.token_type, 'bearer');
    assert.equal((await call(s, 'svc', t.access_token)).status, 200);
  });

  it('binds a token to the key of a client that sends a proof, which then needs it', async () => {
    const handle = oauth.DPoP({}, await dpopKeys());
    const t = await token(s, handle);
    assert.equal(t.token_type, 'dpop');
    assert.equal((await call(s, 'mcp', t.access_token, handle)).status, 200);
    const res = await fetch(`${s.srv.url}/svc/tools/echo.say`, { method: 'POST', headers: { authorization: `Bearer ${t.access_token}`, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 401);
  });
});
