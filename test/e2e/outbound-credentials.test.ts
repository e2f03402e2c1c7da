// Outbound credentials end to end (issue 31, point 4): the real `svc serve` in front of the
// corporate IdP (test/helpers/idp.ts: node-oidc-provider in its own process, with RFC 8693 token
// exchange) and a recording HTTP backend on 127.0.0.1 that keeps the Authorization and X-Api-Key
// headers each request brought. One manifest, one http tool per kind of `auth`; asserted at the
// backend: a static bearer token and a static header from a file arrive as written; a
// client-credentials token (aud the backend, sub the gateway client) arrives on 20 concurrent
// calls after one token request; an external caller's token is exchanged for one with the
// backend's audience and the caller's subject (act naming the gateway), once for several calls;
// a person who signed in through the IdP (oauth.login.mode upstream, consent page and all) gets
// their IdP token to the backend, refreshed when it is about to expire; callers without the credential a kind needs are refused
// (CALLER_CREDENTIAL_MISSING) and the backend never sees them; a token endpoint that fails gives
// OUTBOUND_AUTH_FAILED; no caller's token ever reaches the backend, and neither the secrets nor
// any token appear in fastsvc's output (the secret scan, test/helpers/secrets.ts, also checks).

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import { corporateFront, startIdp, type Idp } from '../helpers/idp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { freePort } from '../helpers/postgres.js';
import { secret } from '../helpers/secrets.js';
import { childEnv, run } from '../helpers/cli.js';
import { authorize, discover, exchange, register } from './oauth-harness.js';

type Json = Record<string, unknown>;
interface Seen { path: string; authorization?: string; apiKey?: string }

/**
 * The backend: answers every request with its path, and remembers what credential came with it; /revoked-once
 * answers 401 to the first credential it sees (a token revoked before its time) and 200 to any other; /refused
 * answers 401 to every one.
 */
async function recordingBackend(): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  let revoked: string | undefined;
  const server = createServer((req, res) => {
    const authorization = req.headers.authorization;
    secret(authorization?.replace(/^Bearer /, ''));
    seen.push({ path: req.url ?? '', authorization, apiKey: req.headers['x-api-key'] as string | undefined });
    if (req.url === '/revoked-once') revoked ??= authorization;
    if (req.url === '/refused' || (req.url === '/revoked-once' && authorization === revoked)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' }).end('{"error":"invalid_token"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`ok ${req.url}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

async function call(url: string, token: string, tool: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
  return { status: res.status, body: (await res.json()) as Json };
}

const bearerOf = (s: Seen) => s.authorization?.replace(/^Bearer /, '') ?? '';

describe('outbound credentials: what reaches a backend (real svc serve, the corporate IdP, a recording backend)', function () {
  this.timeout(60_000);
  let idp: Idp;
  let srv: Served;
  let backend: Awaited<ReturnType<typeof recordingBackend>>;
  /** The fastsvc access token of ada, signed in through the IdP (upstream login). */
  let signedIn: string;
  const svcToken = secret(randomBytes(24).toString('base64url'));
  const backendToken = secret(`backend-${randomBytes(18).toString('base64url')}`);
  const apiKey = secret(`key-${randomBytes(18).toString('base64url')}`);
  const callerTokens: string[] = [svcToken];
  const seenAt = (path: string) => backend.seen.filter((s) => s.path === path);

  before(async () => {
    backend = await recordingBackend();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // Tokens living 40 s: less than the 60 s before expiry at which fastsvc refreshes a provider token, so every
    // provider-token call refreshes; the other kinds keep theirs for half that life (more than this test runs).
    idp = await startIdp({ redirectUris: [`${url}/interaction/callback/corp`], accessTokenTtl: 40 });
    const tokenUrl = idp.metadata.token_endpoint!;
    const gateway = { token_url: tokenUrl, client_id: 'fastsvc-gateway', client_secret: '${GATEWAY_SECRET}' };
    // A second machine client that authenticates with client_secret_post (the machine.post tool).
    const poster = await idp.saveClient({ client_id: 'gateway-post', token_endpoint_auth_method: 'client_secret_post', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] });
    const http = (path: string, auth: Json) => ({ url: `${backend.url}${path}`, auth });
    const tool = (name: string, path: string, auth: Json) => ({ name, description: `Calls the backend's ${path}.`, required_scopes: ['api.use'], http: http(path, auth) });
    srv = await serveManifest({
      version: 1,
      name: 'gateway',
      base_url: url,
      server: { host: '127.0.0.1' },
      routes: { public: ['/healthz'], protected: ['/svc', '/mcp'] },
      profile: { scopes: ['api.use'] },
      ...corporateFront(idp, url, 'api.use'),
      tools: [
        tool('static.bearer', '/static', { static: { bearer: '${BACKEND_TOKEN}' } }),
        tool('static.header', '/header', { static: { header: 'X-Api-Key', value_file: 'api.key' } }),
        tool('machine', '/machine', { client_credentials: { ...gateway, scopes: ['api.read'], resource: `${backend.url}/` } }),
        tool('machine.post', '/machine-post', { client_credentials: { token_url: tokenUrl, client_id: 'gateway-post', client_secret: '${POST_SECRET}', auth_method: 'client_secret_post', resource: `${backend.url}/` } }),
        tool('exchanged', '/exchanged', { token_exchange: { ...gateway, scopes: ['api.read'], resource: `${backend.url}/` } }),
        tool('provider', '/provider', { upstream_login: { upstream: 'corp' } }),
        tool('machine.down', '/down', { client_credentials: { ...gateway, resource: `${backend.url}/`, timeout_ms: 2000 } }),
        tool('machine.revoked', '/revoked-once', { client_credentials: { ...gateway, resource: `${backend.url}/` } }),
        tool('machine.refused', '/refused', { client_credentials: { ...gateway, resource: `${backend.url}/` } }),
      ],
    }, {
      port,
      files: { 'api.key': `${apiKey}\n` },
      env: {
        SVC_TOKEN: svcToken, BACKEND_TOKEN: backendToken, GATEWAY_SECRET: idp.clients['fastsvc-gateway']!.client_secret,
        POST_SECRET: poster.client_secret, CORP_SECRET: idp.clients['fastsvc-login']!.client_secret,
      },
    });
  });
  after(async () => {
    await srv?.stop();
    await idp?.stop();
    await new Promise((r) => backend?.server.close(r));
  });

  it('explain names each http tool\'s credential kind, never the credential: /svc/explain and svc explain agree', async () => {
    const res = await fetch(`${srv.url}/svc/explain`, { headers: { authorization: `Bearer ${svcToken}` } });
    assert.equal(res.status, 200);
    const text = await res.text();
    const kinds = Object.fromEntries((JSON.parse(text) as { capabilities: { id: string; credential?: string }[] }).capabilities.map((c) => [c.id, c.credential]));
    assert.deepEqual(kinds, {
      'tool:static.bearer': 'static', 'tool:static.header': 'static', 'tool:machine': 'client_credentials', 'tool:machine.post': 'client_credentials',
      'tool:exchanged': 'token_exchange', 'tool:provider': 'upstream_login', 'tool:machine.down': 'client_credentials',
      'tool:machine.revoked': 'client_credentials', 'tool:machine.refused': 'client_credentials',
    });
    const offline = await run(['explain', srv.file, '--scopes', 'api.use', '--allow-unset-env'], { env: childEnv() });
    assert.equal(offline.code, 0, offline.stderr);
    assert.match(offline.stdout, /^tool:provider +visible +callable: yes +holds api\.use; credential to its backend: upstream_login$/m);
    assert.match(offline.stdout, /^tool:exchanged +visible .*; credential to its backend: token_exchange$/m);
    for (const s of [backendToken, apiKey, idp.clients['fastsvc-gateway']!.client_secret!, 'api.key', 'fastsvc-gateway']) {
      assert.ok(!text.includes(s) && !offline.stdout.includes(s), 'explain shows the kind only');
    }
  });

  it('sends a static bearer token and a static header read from a file', async () => {
    assert.equal((await call(srv.url, svcToken, 'static.bearer')).status, 200);
    assert.equal((await call(srv.url, svcToken, 'static.header')).status, 200);
    assert.deepEqual(seenAt('/static').map((s) => s.authorization), [`Bearer ${backendToken}`]);
    assert.deepEqual(seenAt('/header').map((s) => [s.authorization, s.apiKey]), [[undefined, apiKey]]);
  });

  it('gets one client-credentials token for 20 concurrent calls, with the backend as audience and the gateway as subject', async () => {
    const before = (await idp.stats()).token;
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(srv.url, svcToken, 'machine')));
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
    assert.equal((await idp.stats()).token - before, 1, 'one token request');
    const tokens = new Set(seenAt('/machine').map(bearerOf));
    assert.equal(tokens.size, 1);
    const { payload } = await verify([...tokens][0]!, `${backend.url}/`);
    assert.equal(payload.sub, 'fastsvc-gateway');
    assert.equal(payload.scope, 'api.read');
  });

  it('replaces a token the backend refuses with 401 (revoked before its time) and sends the request once more; the new one is kept', async () => {
    const before = (await idp.stats()).token;
    assert.equal((await call(srv.url, svcToken, 'machine.revoked')).status, 200);
    const [refused, renewed, ...rest] = seenAt('/revoked-once').map(bearerOf);
    assert.deepEqual(rest, [], 'two requests: the refused token, then a new one');
    assert.notEqual(renewed, refused);
    assert.equal((await idp.stats()).token - before, 2, 'the refused token was fetched again, once');
    assert.equal((await call(srv.url, svcToken, 'machine.revoked')).status, 200);
    assert.deepEqual(seenAt('/revoked-once').slice(2).map(bearerOf), [renewed], 'the next call keeps the new token');
    assert.equal((await idp.stats()).token - before, 2);
  });

  it('fails a call whose backend refuses every token after one new token, never more (no loop)', async () => {
    const before = (await idp.stats()).token;
    const r = await call(srv.url, svcToken, 'machine.refused');
    assert.equal(r.status, 502);
    assert.equal((r.body.error as Json).code, 'BACKEND_FAILED');
    assert.equal(seenAt('/refused').length, 2);
    assert.equal((await idp.stats()).token - before, 2);
  });

  it('authenticates with client_secret_post when the manifest says so', async () => {
    assert.equal((await call(srv.url, svcToken, 'machine.post')).status, 200);
    const { payload } = await verify(bearerOf(seenAt('/machine-post')[0]!), `${backend.url}/`);
    assert.equal(payload.client_id, 'gateway-post');
  });

  it('exchanges an external caller\'s token for one of the backend\'s audience and the caller\'s subject, once for several calls', async () => {
    const ada = (await idp.userToken({ username: 'ada@acme.example', resource: `${srv.url}/mcp`, format: 'jwt' })).access_token;
    callerTokens.push(ada);
    const exchanges = async () => (await idp.settledLogs()).filter((l) => l.event === 'token_exchange').length;
    const before = await exchanges();
    for (let i = 0; i < 3; i++) assert.equal((await call(srv.url, ada, 'exchanged')).status, 200);
    assert.equal(await exchanges() - before, 1, 'one exchange, then the cached token');
    const sent = new Set(seenAt('/exchanged').map(bearerOf));
    assert.equal(sent.size, 1);
    const { payload } = await verify([...sent][0]!, `${backend.url}/`);
    assert.equal(payload.sub, 'acme-1001', 'the caller\'s subject');
    assert.deepEqual(payload.act, { sub: 'fastsvc-gateway' });
    // Another person gets a token of their own.
    const grace = (await idp.userToken({ username: 'grace@acme.example', resource: `${srv.url}/mcp`, format: 'jwt' })).access_token;
    callerTokens.push(grace);
    assert.equal((await call(srv.url, grace, 'exchanged')).status, 200);
    assert.equal((await verify(bearerOf(seenAt('/exchanged').at(-1)!), `${backend.url}/`)).payload.sub, 'acme-1002');
  });

  it('hands a person who signed in through the IdP their IdP access token, and refuses callers who did not', async () => {
    const as = await discover(srv.url);
    const client = await register(as);
    const a = await authorize(as, client, { scope: 'api.use', resource: `${srv.url}/mcp` });
    assert.equal(a.callback?.origin, idp.url, 'sent to the IdP');
    const back = await idp.signIn(a.callback!, 'ada@acme.example');
    const consentPage = await a.browser.follow(back.href);
    const html = await consentPage.res.text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    assert.ok(action && csrf, `a consent page: ${html.slice(0, 300)}`);
    const done = await a.browser.follow(`${srv.url}${action}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf: csrf!, decision: 'allow' }) });
    const tokens = await exchange(as, client, oauth.None(), { ...a, callback: done.leftTo }, `${srv.url}/mcp`);
    callerTokens.push(tokens.access_token);
    signedIn = tokens.access_token;
    assert.equal((await call(srv.url, tokens.access_token, 'provider')).status, 200);
    const sent = bearerOf(seenAt('/provider')[0]!);
    const info = await idp.introspect(sent);
    assert.equal(info.active, true);
    assert.equal(info.sub, 'acme-1001');
    assert.equal(info.client_id, 'fastsvc-login', 'the token fastsvc got when ada signed in');
    // Callers without an upstream login, and a signed-in person on a tool that needs an external token.
    const ada = callerTokens[1]!;
    for (const [token, tool] of [[svcToken, 'provider'], [ada, 'provider'], [svcToken, 'exchanged'], [tokens.access_token, 'exchanged']] as const) {
      const r = await call(srv.url, token, tool);
      assert.equal(r.status, 403, `${tool}: ${JSON.stringify(r.body)}`);
      assert.equal((r.body.error as Json).code, 'CALLER_CREDENTIAL_MISSING');
    }
    assert.equal(seenAt('/provider').length, 1, 'refused calls never reach the backend');
  });

  it('refreshes the provider token when it is about to expire, and the refreshed one works for the next refresh too', async () => {
    const before = (await idp.stats()).token;
    for (let i = 0; i < 2; i++) assert.equal((await call(srv.url, signedIn, 'provider')).status, 200);
    assert.equal((await idp.stats()).token - before, 2, 'one refresh per call: each token had less than 60 s left');
    const sent = seenAt('/provider').map(bearerOf);
    assert.equal(new Set(sent).size, 3, 'a new token each time');
    const info = await idp.introspect(sent.at(-1)!);
    assert.equal(info.active, true);
    assert.equal(info.sub, 'acme-1001');
  });

  it('fails the call with OUTBOUND_AUTH_FAILED when the token endpoint fails, and the backend is not called', async () => {
    await idp.fault('token', { status: 503 });
    try {
      const r = await call(srv.url, svcToken, 'machine.down');
      assert.equal(r.status, 502);
      assert.equal((r.body.error as Json).code, 'OUTBOUND_AUTH_FAILED');
      assert.equal((r.body.error as Json).reason, 'token_refused');
    } finally {
      await idp.fault('token', null);
    }
    assert.equal(seenAt('/down').length, 0);
    assert.equal((await call(srv.url, svcToken, 'machine.down')).status, 200, 'the failure was not remembered');
  });

  it('never lets a caller\'s token reach the backend, nor a secret or a token into fastsvc\'s output', () => {
    assert.ok(backend.seen.length > 0);
    for (const s of backend.seen) for (const t of callerTokens) assert.ok(!s.authorization?.includes(t), `a caller's token reached ${s.path}`);
    const output = srv.stdout() + srv.stderr();
    const sent = backend.seen.flatMap((s) => [bearerOf(s), s.apiKey ?? '']).filter((t) => t.length >= 8);
    for (const t of [backendToken, apiKey, idp.clients['fastsvc-gateway']!.client_secret!, ...sent, ...callerTokens]) {
      assert.ok(!output.includes(t), 'a secret or a token in fastsvc\'s output');
    }
  });

  async function verify(token: string, audience: string) {
    const jwks = jose.createLocalJWKSet(await (await fetch(idp.metadata.jwks_uri!)).json() as jose.JSONWebKeySet);
    return jose.jwtVerify(token, jwks, { issuer: idp.issuer, audience });
  }
});
