// The whole OAuth 2.1 flow against the OAuth server on 127.0.0.1:0 (mounted by
// oauth-harness.ts, whose header says why it is not `svc serve`), driven by an
// independent client (oauth4webapi): discovery, registration, PKCE with resource,
// code, token, refresh rotation, replay detection, revocation, and every bad input
// answered with its RFC error code — never a 500, never a usable token left behind.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as oauth from 'oauth4webapi';
import { SvcError } from '../../src/errors.js';
import { SQLiteOAuthProvider } from '../../src/auth/oauth/providers/sqlite-provider.js';
import { InMemoryOAuthProvider } from '../../src/auth/oauth/providers/memory-provider.js';
import { createOAuthServer } from '../../src/auth/oauth/server.js';
import { pino } from 'pino';
import { callerResolver } from '../../src/http/forwarded.js';
import {
  authorize, Browser, discover, exchange, insecure, postForm, register, startOAuthApp, whoami, type Harness, resolvedOAuth,
} from './oauth-harness.js';
import { secret, secretTokens } from '../helpers/secrets.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start test/e2e/fixtures/oauth-sqlite-server.ts in a child process; resolves once it prints its URL. */
async function spawnServer(file: string, port = 0): Promise<{ child: ChildProcess; url: string }> {
  const fixture = fileURLToPath(new URL('./fixtures/oauth-sqlite-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, file, String(port)], { stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return { child, url };
}

async function fullFlow(h: { url: string }, scope = 'files.read files.write', resource = `${h.url}/mcp`) {
  const as = await discover(h.url);
  const client = await register(as);
  const a = await authorize(as, client, { scope, resource });
  const tokens = await exchange(as, client, oauth.None(), a, resource);
  return { as, client, a, tokens };
}

async function refresh(as: oauth.AuthorizationServer, client: oauth.Client, rt: string, auth = oauth.None(), extra: Record<string, string> = {}) {
  const res = await oauth.refreshTokenGrantRequest(as, client, auth, rt, { ...insecure, additionalParameters: extra });
  return secretTokens(await oauth.processRefreshTokenResponse(as, client, res));
}

/** The `error` of an error redirect, from the query or (for implicit-style response types) the fragment. */
const errorOf = (u: URL | undefined) => u?.searchParams.get('error') ?? new URLSearchParams(u?.hash.slice(1)).get('error');

async function rejects(p: Promise<unknown>, error: string, status?: number) {
  await assert.rejects(p, (e: oauth.ResponseBodyError | oauth.WWWAuthenticateChallengeError) => {
    const got = e instanceof oauth.WWWAuthenticateChallengeError ? e.cause[0]?.parameters.error : e.error;
    assert.equal(got, error, `expected ${error}, got ${got} (${(e as Error).message})`);
    if (status !== undefined) assert.equal(e.status, status);
    return true;
  });
}

describe('OAuth 2.1 flow (oauth4webapi against a real server)', function () {
  let h: Harness;
  beforeEach(async () => {
    h = await startOAuthApp();
  });
  afterEach(() => h.close());

  describe('discovery', () => {
    it('publishes RFC 8414 metadata from the configured issuer', async () => {
      const as = await discover(h.url);
      assert.equal(as.issuer, h.url);
      assert.equal(as.authorization_endpoint, `${h.url}/authorize`);
      assert.equal(as.token_endpoint, `${h.url}/token`);
      assert.equal(as.registration_endpoint, `${h.url}/register`);
      assert.equal(as.revocation_endpoint, `${h.url}/revoke`);
      assert.equal(as.introspection_endpoint, `${h.url}/introspect`);
      assert.equal(as.jwks_uri, `${h.url}/jwks`);
      assert.deepEqual(as.response_types_supported, ['code']);
      assert.deepEqual(as.grant_types_supported, ['authorization_code', 'refresh_token']);
      assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(as.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
      assert.deepEqual(as.scopes_supported, ['files.read', 'files.write', 'admin']);
      assert.equal(as.authorization_response_iss_parameter_supported, true);
    });

    it('ignores the Host header when building metadata', async () => {
      const res = await fetch(`${h.url}/.well-known/oauth-authorization-server`, { headers: { host: 'evil.example' } });
      assert.equal(((await res.json()) as { token_endpoint: string }).token_endpoint, `${h.url}/token`);
    });

    it('publishes RFC 9728 protected resource metadata, root and path-inserted', async () => {
      for (const [path, resource] of [['', h.url], ['/mcp', `${h.url}/mcp`], ['/svc', `${h.url}/svc`], ['/ws', `${h.url}/ws`]]) {
        const res = await fetch(`${h.url}/.well-known/oauth-protected-resource${path}`);
        assert.equal(res.status, 200, path);
        assert.deepEqual(await res.json(), {
          resource, authorization_servers: [h.url], scopes_supported: ['files.read', 'files.write', 'admin'],
          bearer_methods_supported: ['header'], resource_name: 'Test Server',
        });
      }
      assert.equal(h.prm.prmUrl('/mcp'), `${h.url}/.well-known/oauth-protected-resource/mcp`);
      assert.equal(h.prm.prmUrl(), `${h.url}/.well-known/oauth-protected-resource`);
      assert.equal(h.prm.prmUrl('/nope'), `${h.url}/.well-known/oauth-protected-resource`);
    });

    it('serves no registration endpoint when registration is off', async () => {
      const h2 = await startOAuthApp({ oauth: { registration: { enabled: false } } });
      try {
        const as = await discover(h2.url);
        assert.equal(as.registration_endpoint, undefined);
        const res = await fetch(`${h2.url}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"redirect_uris":["http://127.0.0.1/cb"]}' });
        assert.equal(res.status, 404);
      } finally {
        await h2.close();
      }
    });
  });

  describe('registration', () => {
    it('returns client_id and redirect_uris for a public client, plus client_secret for a confidential one', async () => {
      const as = await discover(h.url);
      const pub = await register(as);
      assert.ok(pub.client_id);
      assert.deepEqual(pub.redirect_uris, ['http://127.0.0.1:9/callback']);
      assert.equal(pub.client_secret, undefined);
      const conf = await register(as, { token_endpoint_auth_method: 'client_secret_basic' });
      assert.equal(typeof conf.client_secret, 'string');
      assert.ok((conf.client_secret as string).length >= 32);
    });

    it('refuses bad metadata with invalid_redirect_uri / invalid_client_metadata', async () => {
      const as = await discover(h.url);
      await rejects(register(as, { redirect_uris: ['not a url'] }), 'invalid_redirect_uri', 400);
      await rejects(register(as, { redirect_uris: ['http://127.0.0.1/cb#frag'] }), 'invalid_redirect_uri', 400);
      await rejects(register(as, { grant_types: ['client_credentials'] }), 'invalid_client_metadata', 400);
      const res = await fetch(`${h.url}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { error: string }).error, 'invalid_request');
    });
  });

  describe('the flow', () => {
    it('issues tokens for PKCE + resource, with iss and state in the redirect and no-store on /token', async () => {
      const as = await discover(h.url);
      const client = await register(as);
      const a = await authorize(as, client, { scope: 'files.read', resource: `${h.url}/mcp` });
      assert.equal(`${a.callback?.origin}${a.callback?.pathname}`, 'http://127.0.0.1:9/callback');
      assert.equal(a.callback?.searchParams.get('iss'), h.url);
      assert.equal(a.callback?.searchParams.get('state'), a.state);
      const params = oauth.validateAuthResponse(as, client, a.callback!, a.state);
      const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, a.redirectUri, a.verifier, { ...insecure, additionalParameters: { resource: `${h.url}/mcp` } });
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const tokens = secretTokens(await oauth.processAuthorizationCodeResponse(as, client, res));
      assert.equal(tokens.scope, 'files.read');
      assert.ok(tokens.refresh_token);
      assert.equal(tokens.expires_in, 900);
      const me = await whoami(h.url, tokens.access_token);
      assert.equal(me.status, 200);
      assert.deepEqual(me.body, { sub: 'dev', scopes: ['files.read'], kind: 'oauth', clientId: client.client_id, expiresAt: me.body.expiresAt, credentialId: me.body.credentialId, active: true });
    });

    it('binds every accepted resource indicator (origin, origin/, a protected route, none) to the server audience', async () => {
      for (const resource of [h.url, `${h.url}/`, `${h.url}/svc`, `${h.url}/mcp/sub`, undefined]) {
        const { tokens } = await fullFlow(h, 'files.read', resource);
        assert.equal((await whoami(h.url, tokens.access_token)).status, 200, String(resource));
      }
    });

    it('asks for the client\'s allowed scopes when the request names none', async () => {
      const as = await discover(h.url);
      const client = await register(as);
      const t = await exchange(as, client, oauth.None(), await authorize(as, client, {}));
      assert.equal(t.scope, 'files.read files.write admin', 'a registered client: all of profile.scopes');
      const h2 = await startOAuthApp({ oauth: { clients: [{ client_id: 'narrow', redirect_uris: ['http://127.0.0.1/cb'], scopes: ['files.read', 'admin'] }] } });
      try {
        const as2 = await discover(h2.url);
        const c: oauth.Client = { client_id: 'narrow', token_endpoint_auth_method: 'none' };
        const t2 = await exchange(as2, c, oauth.None(), await authorize(as2, c, { redirectUri: 'http://127.0.0.1:5000/cb' }));
        assert.equal(t2.scope, 'files.read admin', 'a pre-provisioned client: its scopes');
      } finally {
        await h2.close();
      }
    });

    it('does not hold a registered client to the scope it registered with (MCP clients step up later)', async () => {
      const as = await discover(h.url);
      const client = await register(as, { scope: 'files.read nuke.everything' });
      assert.equal(client.scope, undefined);
      const t = await exchange(as, client, oauth.None(), await authorize(as, client, { scope: 'files.read files.write' }));
      assert.equal(t.scope, 'files.read files.write');
    });

    it('drops scopes the server does not know', async () => {
      const { tokens } = await fullFlow(h, 'files.read made.up');
      assert.equal(tokens.scope, 'files.read');
    });

    it('rotates the refresh token on every use; the new pair works', async () => {
      const { as, client, tokens } = await fullFlow(h);
      const expiryOf = async (rt: string) => (await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, oauth.None(), rt, insecure))).exp;
      const firstExpiry = await expiryOf(tokens.refresh_token!);
      assert.equal(typeof firstExpiry, 'number');
      const r1 = await refresh(as, client, tokens.refresh_token!);
      assert.notEqual(r1.refresh_token, tokens.refresh_token);
      assert.equal(await expiryOf(r1.refresh_token!), firstExpiry, 'a rotated refresh token keeps the expiry of the first');
      assert.notEqual(r1.access_token, tokens.access_token);
      assert.equal(r1.scope, 'files.read files.write');
      const r2 = await refresh(as, client, r1.refresh_token!);
      assert.equal((await whoami(h.url, r2.access_token)).status, 200);
      const narrowed = await refresh(as, client, r2.refresh_token!, oauth.None(), { scope: 'files.read' });
      assert.equal(narrowed.scope, 'files.read');
      assert.deepEqual((await whoami(h.url, narrowed.access_token)).body.scopes, ['files.read']);
    });

    it('introspects its own token', async () => {
      const { as, client, tokens } = await fullFlow(h);
      const res = await oauth.introspectionRequest(as, client, oauth.None(), tokens.access_token, insecure);
      const body = await oauth.processIntrospectionResponse(as, client, res);
      assert.equal(body.active, true);
      assert.equal(body.aud, h.url);
      assert.equal(body.sub, 'dev');
    });
  });

  describe('replay and revocation', () => {
    it('a replayed rotated refresh token gets invalid_grant and kills the whole grant', async () => {
      const { as, client, tokens } = await fullFlow(h);
      const r1 = await refresh(as, client, tokens.refresh_token!);
      assert.equal((await whoami(h.url, r1.access_token)).status, 200, 'used once, so the verified-token cache holds it');
      await rejects(refresh(as, client, tokens.refresh_token!), 'invalid_grant', 400);
      assert.equal((await whoami(h.url, r1.access_token)).status, 401, 'access token of the grant refused');
      assert.equal((await whoami(h.url, tokens.access_token)).status, 401);
      await rejects(refresh(as, client, r1.refresh_token!), 'invalid_grant', 400);
      const logged = h.logs.find((l) => l.event === 'oauth.grant_error');
      assert.equal(logged?.detail, 'refresh token already used');
      assert.ok(h.logs.some((l) => l.event === 'oauth.grant_revoked'));
      const all = JSON.stringify(h.logs);
      for (const t of [tokens.access_token, tokens.refresh_token!, r1.access_token, r1.refresh_token!]) assert.ok(!all.includes(t), 'no token in logs');
    });

    it('a reused authorization code gets invalid_grant and kills the grant', async () => {
      const { as, client, a, tokens } = await fullFlow(h);
      await rejects(exchange(as, client, oauth.None(), a, `${h.url}/mcp`), 'invalid_grant', 400);
      assert.equal((await whoami(h.url, tokens.access_token)).status, 401);
      await rejects(refresh(as, client, tokens.refresh_token!), 'invalid_grant');
      assert.ok(h.logs.some((l) => l.event === 'oauth.grant_error' && /already used|consumed/.test(String(l.detail))), JSON.stringify(h.logs.map((l) => l.detail)));
    });

    it('revoking the access token refuses it (and its grant) on the very next request', async () => {
      const { as, client, tokens } = await fullFlow(h);
      const me = await whoami(h.url, tokens.access_token);
      assert.equal(me.status, 200);
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.access_token, insecure));
      assert.equal((await whoami(h.url, tokens.access_token)).status, 401);
      await rejects(refresh(as, client, tokens.refresh_token!), 'invalid_grant');
      const p = { sub: 'dev', scopes: new Set<string>(), kind: 'oauth' as const, credentialId: String(me.body.credentialId), expiresAt: Number(me.body.expiresAt) };
      assert.equal(await h.oauth.isActive(p), false, 'open sockets see it too');
    });

    it('revoking the refresh token refuses its access token on the very next request', async () => {
      const { as, client, tokens } = await fullFlow(h);
      assert.equal((await whoami(h.url, tokens.access_token)).status, 200, 'used once, so the verified-token cache holds it');
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
      const me = await whoami(h.url, tokens.access_token);
      assert.equal(me.status, 401);
      assert.equal(me.challenge, `Bearer resource_metadata="${h.url}/.well-known/oauth-protected-resource/svc"`);
    });

    it('another client cannot revoke my token', async () => {
      const { as, tokens } = await fullFlow(h);
      const other = await register(as);
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, other, oauth.None(), tokens.access_token, insecure));
      assert.equal((await whoami(h.url, tokens.access_token)).status, 200);
    });
  });

  describe('bad input gets its RFC error code, never a 500', () => {
    it('wrong code_verifier → invalid_grant', async () => {
      const as = await discover(h.url);
      const client = await register(as);
      const a = await authorize(as, client, { scope: 'files.read' });
      await rejects(exchange(as, client, oauth.None(), { ...a, verifier: oauth.generateRandomCodeVerifier() }), 'invalid_grant', 400);
    });

    it('wrong redirect_uri at /token → invalid_grant; at /authorize → an error page, no redirect', async () => {
      const as = await discover(h.url);
      const client = await register(as);
      const a = await authorize(as, client, { scope: 'files.read' });
      await rejects(exchange(as, client, oauth.None(), { ...a, redirectUri: 'http://127.0.0.1:9/other' }), 'invalid_grant', 400);
      const bad = await authorize(as, client, { scope: 'files.read', redirectUri: 'http://127.0.0.1:9/elsewhere' });
      assert.equal(bad.callback, undefined);
      assert.equal(bad.res.status, 400);
      assert.match(await bad.res.text(), /redirect_uri/);
    });

    it('a web client gets no loopback port wildcard; a pre-provisioned loopback (native) client does', async () => {
      const as = await discover(h.url);
      const web = await register(as);
      const bad = await authorize(as, web, { scope: 'files.read', redirectUri: 'http://127.0.0.1:10/callback' });
      assert.equal(bad.res.status, 400);
      const h2 = await startOAuthApp({ oauth: { clients: [{ client_id: 'cli', redirect_uris: ['http://127.0.0.1/callback'] }] } });
      try {
        const as2 = await discover(h2.url);
        const cli: oauth.Client = { client_id: 'cli', token_endpoint_auth_method: 'none' };
        const a = await authorize(as2, cli, { scope: 'files.read', redirectUri: 'http://127.0.0.1:54321/callback' });
        assert.equal(a.callback?.port, '54321');
        assert.ok((await exchange(as2, cli, oauth.None(), a)).access_token);
      } finally {
        await h2.close();
      }
    });

    it('PKCE is required for every client and plain is refused', async () => {
      const as = await discover(h.url);
      const client = await register(as, { token_endpoint_auth_method: 'client_secret_basic' });
      const base = { response_type: 'code', client_id: client.client_id, redirect_uri: 'http://127.0.0.1:9/callback', scope: 'files.read', state: 's' };
      const variants: Record<string, string>[] = [{}, { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }, { code_challenge: 'short', code_challenge_method: 'S256' }];
      for (const extra of variants) {
        const { leftTo, res } = await new Browser(h.url).follow(`${h.url}/authorize?${new URLSearchParams({ ...base, ...extra })}`);
        assert.ok(leftTo, `redirected with an error, got ${res.status}`);
        assert.equal(leftTo.searchParams.get('error'), 'invalid_request', JSON.stringify(extra));
        assert.equal(leftTo.searchParams.get('iss'), h.url);
        assert.equal(leftTo.searchParams.get('code'), null);
      }
    });

    it('unknown client → invalid_client (page at /authorize, 401 at /token)', async () => {
      const { res } = await new Browser(h.url).follow(`${h.url}/authorize?response_type=code&client_id=nobody&redirect_uri=http://127.0.0.1:9/cb&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`);
      assert.equal(res.status, 400);
      assert.match(await res.text(), /invalid_client/);
      const r = await postForm(`${h.url}/token`, { grant_type: 'authorization_code', code: 'x', client_id: 'nobody', redirect_uri: 'http://127.0.0.1:9/cb', code_verifier: 'a'.repeat(43) });
      assert.equal(r.status, 401);
      assert.equal(r.body.error, 'invalid_client');
    });

    it('wrong client secret → invalid_client, and the code stays unredeemed', async () => {
      const as = await discover(h.url);
      const client = await register(as, { token_endpoint_auth_method: 'client_secret_basic' });
      const a = await authorize(as, client, { scope: 'files.read' });
      await rejects(exchange(as, client, oauth.ClientSecretBasic('wrong'), a), 'invalid_client', 401);
      await rejects(exchange(as, client, oauth.ClientSecretPost('wrong'), a), 'invalid_client', 401);
      const t = await exchange(as, client, oauth.ClientSecretPost(client.client_secret as string), a);
      assert.ok(t.access_token, 'client_secret_post works for a client registered with basic');
    });

    it('expired code → invalid_grant', async () => {
      const h2 = await startOAuthApp({ oauth: { code_ttl: 1 } });
      try {
        const as = await discover(h2.url);
        const client = await register(as);
        const a = await authorize(as, client, { scope: 'files.read' });
        await sleep(2100);
        await rejects(exchange(as, client, oauth.None(), a), 'invalid_grant', 400);
      } finally {
        await h2.close();
      }
    });

    it('refresh token of another client → invalid_grant, and it still works for its owner', async () => {
      const { as, client, tokens } = await fullFlow(h);
      const thief = await register(as);
      await rejects(refresh(as, thief, tokens.refresh_token!), 'invalid_grant', 400);
      assert.ok((await refresh(as, client, tokens.refresh_token!)).access_token);
    });

    it('scope escalation on refresh → invalid_scope, and the refresh token still works', async () => {
      const { as, client, tokens } = await fullFlow(h, 'files.read');
      await rejects(refresh(as, client, tokens.refresh_token!, oauth.None(), { scope: 'files.read admin' }), 'invalid_scope', 400);
      const r = await refresh(as, client, tokens.refresh_token!);
      assert.equal(r.scope, 'files.read');
    });

    it('a resource that is not this server → invalid_target, at /authorize and at /token', async () => {
      const as = await discover(h.url);
      const client = await register(as);
      for (const resource of ['http://127.0.0.1:1/mcp', 'https://evil.example/', `${h.url}/admin-panel`, `${h.url}/mcp?x=1`]) {
        const a = await authorize(as, client, { scope: 'files.read', resource });
        assert.equal(a.callback?.searchParams.get('error'), 'invalid_target', resource);
        assert.equal(a.callback?.searchParams.get('code'), null);
      }
      const a = await authorize(as, client, { scope: 'files.read', resource: `${h.url}/mcp` });
      await rejects(exchange(as, client, oauth.None(), a, 'https://evil.example/'), 'invalid_target', 400);
    });

    it('a token for another audience is refused by the resource', async () => {
      const { tokens } = await fullFlow(h);
      const other = await startOAuthApp();
      try {
        assert.equal((await whoami(other.url, tokens.access_token)).status, 401);
      } finally {
        await other.close();
      }
      assert.equal(await h.oauth.verifyAccessToken('x'.repeat(5000)), null);
      assert.equal(await h.oauth.verifyAccessToken(''), null);
    });

    it('malformed token requests → invalid_request / unsupported_grant_type, never 500', async () => {
      const as = await discover(h.url);
      const client = await register(as);
      const cases: [Record<string, string>, string, Record<string, string>?][] = [
        [{}, 'invalid_request'],
        [{ grant_type: 'password', username: 'a', password: 'b', client_id: client.client_id }, 'unsupported_grant_type'],
        [{ grant_type: 'client_credentials', client_id: client.client_id }, 'unsupported_grant_type'],
        [{ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: client.client_id, device_code: 'x' }, 'unsupported_grant_type'],
        [{ grant_type: 'authorization_code', client_id: 'nobody' }, 'invalid_client'],
        [{ grant_type: 'refresh_token', client_id: 'nobody', refresh_token: 'x' }, 'invalid_client'],
        [{ grant_type: 'authorization_code', code: 'x' }, 'invalid_request', { authorization: 'Basic !!!' }],
      ];
      for (const [form, error, headers] of cases) {
        const r = await postForm(`${h.url}/token`, form, headers);
        assert.equal(r.body.error, error, JSON.stringify(form));
        assert.ok(r.status >= 400 && r.status < 500, String(r.status));
      }
      const unknownGrants: Record<string, string>[] = [
        { grant_type: 'authorization_code', client_id: client.client_id, code: 'nope', redirect_uri: 'http://127.0.0.1:9/callback', code_verifier: 'a'.repeat(43) },
        { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: 'nope' },
      ];
      for (const form of unknownGrants) {
        const r = await postForm(`${h.url}/token`, form);
        assert.equal(r.body.error, 'invalid_grant');
      }
      const json = await fetch(`${h.url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"refresh_token"}' });
      assert.equal(json.status, 400);
      const huge = await postForm(`${h.url}/token`, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: 'x'.repeat(100_000) });
      assert.ok(huge.status >= 400 && huge.status < 500, String(huge.status));
      const revoke = await postForm(`${h.url}/revoke`, { client_id: client.client_id });
      assert.equal(revoke.body.error, 'invalid_request');
      assert.ok(!h.logs.some((l) => l.event === 'oauth.server_error'), 'no server_error logged');
    });

    it('malformed authorization requests → an error redirect or page, never 500', async () => {
      const as = await discover(h.url);
      const client = await register(as);
      const base = { client_id: client.client_id, redirect_uri: 'http://127.0.0.1:9/callback', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256', state: 's' };
      const cases: [Record<string, string>, string][] = [
        [{ ...base, response_type: 'token' }, 'unsupported_response_type'],
        [{ ...base, response_type: 'code id_token' }, 'unsupported_response_type'],
        [{ ...base }, 'invalid_request'],
        [{ ...base, response_type: 'code', scope: 'files.read', prompt: 'none' }, 'login_required'],
        [{ ...base, response_type: 'code', scope: 'bad"scope' }, 'invalid_scope'],
      ];
      for (const [q, error] of cases) {
        const { leftTo, res } = await new Browser(h.url).follow(`${h.url}/authorize?${new URLSearchParams(q)}`);
        assert.ok(leftTo, `expected an error redirect for ${JSON.stringify(q)}, got ${res.status}`);
        assert.equal(errorOf(leftTo), error, JSON.stringify(q));
      }
      const { res } = await new Browser(h.url).follow(`${h.url}/authorize`);
      assert.equal(res.status, 400);
      const dup = await new Browser(h.url).follow(`${h.url}/authorize?${new URLSearchParams(base)}&client_id=again`);
      assert.equal(dup.res.status, 400);
      const ghost = await new Browser(h.url).follow(`${h.url}/interaction/does-not-exist`);
      assert.equal(ghost.res.status, 400);
      assert.ok(!h.logs.some((l) => l.event === 'oauth.server_error'));
    });

    it('a client restricted to some scopes gets invalid_scope for others', async () => {
      const h2 = await startOAuthApp({ oauth: { clients: [{ client_id: 'narrow', redirect_uris: ['http://127.0.0.1/cb'], scopes: ['files.read'] }] } });
      try {
        const as = await discover(h2.url);
        const c: oauth.Client = { client_id: 'narrow', token_endpoint_auth_method: 'none' };
        const a = await authorize(as, c, { scope: 'files.read admin', redirectUri: 'http://127.0.0.1/cb' });
        assert.equal(a.callback?.searchParams.get('error'), 'invalid_scope');
        const ok = await authorize(as, c, { scope: 'files.read', redirectUri: 'http://127.0.0.1/cb' });
        assert.equal((await exchange(as, c, oauth.None(), ok)).scope, 'files.read');
      } finally {
        await h2.close();
      }
    });

    it('rate-limits /token and /register with 429 and Retry-After', async () => {
      const h2 = await startOAuthApp({ limits: { token: { burst: 2, perMinute: 1 }, register: { burst: 1, perMinute: 1 } } });
      try {
        const codes = [];
        for (let i = 0; i < 3; i++) codes.push((await postForm(`${h2.url}/token`, { grant_type: 'refresh_token', client_id: 'x', refresh_token: 'y' })).status);
        assert.deepEqual(codes.slice(0, 2).map((c) => c === 429), [false, false]);
        const limited = await postForm(`${h2.url}/token`, {});
        assert.equal(limited.status, 429);
        assert.ok(Number(limited.headers.get('retry-after')) >= 1);
        const as = await discover(h2.url);
        await register(as);
        await rejects(register(as), 'temporarily_unavailable', 429);
      } finally {
        await h2.close();
      }
    });
  });

  describe('clients and configuration', () => {
    it('pre-provisioned confidential clients authenticate with basic or post', async () => {
      const h2 = await startOAuthApp({ oauth: { clients: [{ client_id: 'conf', client_name: 'Conf', client_secret: secret('s3cret-s3cret-s3cret'), redirect_uris: ['https://app.example/cb'] }] } });
      try {
        const as = await discover(h2.url);
        const c: oauth.Client = { client_id: 'conf' };
        const a = await authorize(as, c, { scope: 'files.read', redirectUri: 'https://app.example/cb' });
        assert.equal(a.callback?.host, 'app.example');
        const t = await exchange(as, c, oauth.ClientSecretBasic('s3cret-s3cret-s3cret'), a);
        const r = await refresh(as, c, t.refresh_token!, oauth.ClientSecretPost('s3cret-s3cret-s3cret'));
        assert.ok(r.access_token);
        await rejects(refresh(as, c, r.refresh_token!, oauth.None()), 'invalid_client', 401);
      } finally {
        await h2.close();
      }
    });

    it('refuses auto login on a non-loopback issuer, users mode without users, and no scopes (OAUTH_CONFIG)', async () => {
      const base = { profile: {}, baseUrl: 'https://api.example', protectedRoutes: ['/mcp'], scopes: ['a'], logger: pino({ level: 'silent' }), manifestDir: '.', name: 'x', caller: callerResolver(0) };
      const cases = [
        { ...base, issuer: 'https://api.example', oauth: resolvedOAuth({ login: { mode: 'auto' } }) },
        { ...base, issuer: 'http://127.0.0.1:1', oauth: resolvedOAuth({ login: { mode: 'users' } }) },
        { ...base, issuer: 'http://127.0.0.1:1', scopes: [], oauth: resolvedOAuth() },
        { ...base, issuer: 'http://127.0.0.1:1/oauth', oauth: resolvedOAuth() },
      ];
      for (const c of cases) {
        await assert.rejects(createOAuthServer({ ...c, provider: new InMemoryOAuthProvider() }), (e: SvcError) => e instanceof SvcError && e.code === 'OAUTH_CONFIG');
      }
    });
  });

  describe('SQLite provider across a restart', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'fastsvc-oauth-e2e-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('keeps clients, access and refresh tokens, and replay detection', async () => {
      const file = join(dir, 'oauth.db');
      const first = await startOAuthApp({ provider: new SQLiteOAuthProvider(file) });
      const port = Number(new URL(first.url).port);
      const { as, client, tokens } = await fullFlow(first);
      const r1 = await refresh(as, client, tokens.refresh_token!);
      await first.close();

      const second = await startOAuthApp({ provider: new SQLiteOAuthProvider(file), port });
      try {
        assert.equal(second.url, first.url);
        assert.equal((await whoami(second.url, r1.access_token)).status, 200, 'access token survives');
        const r2 = await refresh(as, client, r1.refresh_token!);
        assert.equal((await whoami(second.url, r2.access_token)).status, 200);
        const again = await authorize(as, client, { scope: 'files.read' });
        assert.ok(again.callback?.searchParams.get('code'), 'registered client survives');
        await rejects(refresh(as, client, tokens.refresh_token!), 'invalid_grant');
        assert.equal((await whoami(second.url, r2.access_token)).status, 401, 'replay after restart still kills the grant');
      } finally {
        await second.close();
      }
    });

    it('loses no registration or token it answered with when the server is killed with SIGKILL under load', async function () {
      this.timeout(60_000);
      const file = join(dir, 'killed.db');
      const first = await spawnServer(file);
      const issued: { client: oauth.Client; tokens: oauth.TokenEndpointResponse }[] = [];
      const exited = new Promise((r) => first.child.on('exit', r));
      const workers = [0, 1, 2].map(async () => {
        for (;;) {
          try {
            const { client, tokens } = await fullFlow(first, 'files.read');
            issued.push({ client, tokens });
          } catch {
            return; // the server is gone
          }
        }
      });
      while (issued.length < 15) await sleep(10);
      first.child.kill('SIGKILL');
      await Promise.all([exited, ...workers]);

      const second = await spawnServer(file, Number(new URL(first.url).port));
      try {
        const as = await discover(second.url);
        for (const { client, tokens } of issued) {
          assert.equal((await whoami(second.url, tokens.access_token)).status, 200, 'access token kept');
          assert.ok((await refresh(as, client, tokens.refresh_token!)).access_token, 'refresh token kept');
          assert.ok((await authorize(as, client, { scope: 'files.read' })).callback?.searchParams.get('code'), 'registration kept');
        }
      } finally {
        second.child.kill('SIGKILL');
      }
    });
  });
});
