// The corporate IdP (test/idp/corporate-idp.mjs) through its helper (test/helpers/idp.ts), checked
// with clients it did not write (oauth4webapi, jose) before other tests build on it: discovery;
// JWT access tokens that verify against its JWKS with the RFC 9068 claims; opaque tokens that
// introspect active with their claims, and inactive once revoked; code + PKCE through its
// sign-in page yielding an ID token with the account's claims; a key rotation that keeps old
// tokens verifying while new ones carry a new kid; RFC 8693 token exchange (another audience, the
// same subject, act naming the client); the faults and admin calls tests rely on;
// and the sign-in page working in headless Chromium (the redirect back to the client included).
// No fastsvc runs here, on purpose: this file tests the test harness's identity provider alone, so a
// failure in the fastsvc tests built on it (external-idp*, oauth-upstream*, outbound-credentials, upstream-*)
// can be told apart from a broken IdP.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import { ensureChromium, launchChromium } from '../helpers/chromium.js';
import { IDP_SCRIPT, startIdp, type Idp } from '../helpers/idp.js';
import { ROOT } from '../helpers/cli.js';
import { secretTokens } from '../helpers/secrets.js';

const API = 'http://127.0.0.1:9/mcp'; // a resource indicator: nobody listens there, the IdP only names it
const isJwt = (t: string) => t.split('.').length === 3;

async function verify(idp: Idp, token: string, audience = API) {
  const jwks = jose.createLocalJWKSet(await (await fetch(idp.metadata.jwks_uri!)).json() as jose.JSONWebKeySet);
  return jose.jwtVerify(token, jwks, { issuer: idp.issuer, audience, typ: 'at+jwt' });
}

describe('the corporate IdP', function () {
  let idp: Idp;
  before(async () => {
    idp = await startIdp();
  });
  after(async () => {
    const exit = await idp?.stop();
    if (exit) assert.equal(exit.code, 0, `the IdP exits 0 on SIGTERM; stderr:\n${idp.logs().slice(-5).map((l) => JSON.stringify(l)).join('\n')}`);
  });

  it('answers OIDC discovery and RFC 8414 metadata with its own endpoints', async () => {
    assert.equal(idp.metadata.issuer, idp.issuer);
    for (const k of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'introspection_endpoint', 'revocation_endpoint', 'userinfo_endpoint', 'registration_endpoint'] as const) {
      assert.ok(String(idp.metadata[k]).startsWith(`${idp.issuer}/oauth2/`), `${k} is under the issuer: ${idp.metadata[k]}`);
    }
    assert.deepEqual(idp.metadata.code_challenge_methods_supported, ['S256']);
    assert.ok(idp.metadata.grant_types_supported!.includes('client_credentials'));
    assert.equal(idp.metadata.authorization_response_iss_parameter_supported, true);
    const oauthMeta = await (await fetch(`${idp.url}/.well-known/oauth-authorization-server`)).json() as Record<string, unknown>;
    assert.equal(oauthMeta.issuer, idp.issuer);
    assert.equal(oauthMeta.token_endpoint, idp.metadata.token_endpoint);
    const jwks = await (await fetch(idp.metadata.jwks_uri!)).json() as { keys: Record<string, unknown>[] };
    assert.equal(jwks.keys.length, 1);
    assert.equal(jwks.keys[0]!.alg, 'RS256');
    assert.equal(jwks.keys[0]!.d, undefined, 'no private part published');
  });

  it('issues a machine JWT access token (client_credentials) that verifies against the JWKS with the RFC 9068 claims', async () => {
    const t = await idp.clientCredentialsToken({ scope: 'notes.read notes.write', resource: API, format: 'jwt' });
    assert.ok(isJwt(t.access_token));
    assert.equal(t.scope, 'notes.read notes.write');
    const { payload, protectedHeader } = await verify(idp, t.access_token);
    assert.equal(protectedHeader.typ, 'at+jwt');
    assert.equal(protectedHeader.alg, 'RS256');
    assert.ok(protectedHeader.kid);
    assert.equal(payload.iss, idp.issuer);
    assert.equal(payload.aud, API);
    assert.equal(payload.sub, 'build-bot');
    assert.equal(payload.client_id, 'build-bot');
    assert.equal(payload.scope, 'notes.read notes.write');
    assert.equal(typeof payload.jti, 'string');
    assert.ok(payload.exp! > payload.iat!);
    // A verifier expecting another audience refuses it.
    await assert.rejects(verify(idp, t.access_token, 'http://127.0.0.1:10/mcp'), { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
  });

  it('issues an opaque token that introspects active with its claims, and inactive after revocation', async () => {
    const t = await idp.clientCredentialsToken({ scope: 'notes.read', resource: API, format: 'opaque' });
    assert.ok(!isJwt(t.access_token));
    const before = await idp.introspect(t.access_token);
    assert.equal(before.active, true);
    assert.equal(before.iss, idp.issuer);
    assert.equal(before.aud, API);
    assert.equal(before.client_id, 'build-bot');
    assert.equal(before.sub, 'build-bot');
    assert.equal(before.scope, 'notes.read');
    assert.equal(before.token_type, 'Bearer');
    assert.ok((before.exp as number) > (before.iat as number));
    await idp.revoke(t.access_token);
    assert.deepEqual(await idp.introspect(t.access_token), { active: false });
    await assert.rejects(idp.revoke(t.access_token), /404 unknown_token/);
    // Introspection needs a confidential client: a public one learns nothing about others' tokens.
    const other = await idp.clientCredentialsToken({ scope: 'notes.read', resource: API, format: 'opaque' });
    assert.deepEqual(await idp.introspect(other.access_token, 'mcp-cli'), { active: false });
    // A JWT cannot be revoked at the IdP.
    const jwt = await idp.clientCredentialsToken({ scope: 'notes.read', resource: API });
    await assert.rejects(idp.revoke(jwt.access_token), /jwt_not_revocable/);
  });

  it('signs a person in through its login page (code + PKCE): the ID token and the JWT access token carry the account\'s claims', async () => {
    const t = await idp.userToken({ username: 'ada@acme.example', scope: 'openid email profile notes.read', resource: API, format: 'jwt' });
    const id = t.idTokenClaims!;
    assert.equal(id.iss, idp.issuer);
    assert.equal(id.aud, 'mcp-cli');
    assert.equal(id.sub, 'acme-1001');
    assert.equal(id.email, 'ada@acme.example');
    assert.equal(id.email_verified, true);
    assert.equal(id.name, 'Ada Lovelace');
    assert.deepEqual(id.groups, ['mcp-admins', 'staff']);
    assert.equal(id.org_id, 'acme');
    const { payload } = await verify(idp, t.access_token);
    assert.equal(payload.sub, 'acme-1001');
    assert.equal(payload.client_id, 'mcp-cli');
    assert.equal(payload.scope, 'notes.read', 'OIDC scopes stay out of the API token');
    assert.deepEqual(payload.groups, ['mcp-admins', 'staff']);
    assert.equal(payload.org_id, 'acme');
    assert.equal(payload.email, 'ada@acme.example');
    assert.ok(t.refresh_token, 'mcp-cli may refresh');
  });

  it('gives a person an opaque token whose introspection carries the same claims; another tenant\'s person gets theirs', async () => {
    const t = await idp.userToken({ username: 'eve@evil.example', scope: 'openid notes.read', resource: API, format: 'opaque' });
    assert.ok(!isJwt(t.access_token));
    assert.equal(t.idTokenClaims!.org_id, 'evil');
    const i = await idp.introspect(t.access_token);
    assert.equal(i.active, true);
    assert.equal(i.sub, 'evil-6666');
    assert.equal(i.org_id, 'evil');
    assert.deepEqual(i.groups, []);
    assert.equal(i.aud, API);
    assert.equal(i.scope, 'notes.read');
  });

  it('refuses a wrong password with its page (401, no redirect) and ends a cancelled sign-in with access_denied', async () => {
    const client = idp.clients['mcp-cli']!;
    const authorize = new URL(idp.metadata.authorization_endpoint!);
    authorize.search = new URLSearchParams({
      response_type: 'code', client_id: client.client_id, redirect_uri: 'http://127.0.0.1:7/callback', scope: 'openid', state: 's1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    }).toString();
    await assert.rejects(idp.signIn(authorize, 'ada@acme.example', { password: 'not-the-password' }), /did not redirect back \(401\)[\s\S]*Wrong username or password/);
    await assert.rejects(idp.signIn(authorize, 'nobody@acme.example'), /did not redirect back \(401\)/);

    // The page itself: a form with the fields signIn() relies on, no script, not cached.
    const jar = new Map<string, string>();
    let res = await fetch(authorize, { redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) jar.set(c.split('=')[0]!, c.split(';')[0]!.slice(c.indexOf('=') + 1));
    const page = new URL(res.headers.get('location')!, idp.url);
    assert.match(page.pathname, /^\/interaction\/[^/]+$/);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    res = await fetch(page, { headers: { cookie } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const html = await res.text();
    assert.match(html, /Acme MCP CLI/);
    for (const field of ['name="username"', 'name="password"', 'name="csrf"', 'id="sign-in"']) assert.ok(html.includes(field), field);
    assert.ok(!/<script/i.test(html));
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    res = await fetch(`${page.href}/abort`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf }) });
    assert.equal(res.status, 303);
    res = await fetch(new URL(res.headers.get('location')!, idp.url), { redirect: 'manual', headers: { cookie } });
    const back = new URL(res.headers.get('location')!);
    assert.equal(back.origin, 'http://127.0.0.1:7');
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('iss'), idp.issuer);
    // A forged form (wrong CSRF token) is refused.
    res = await fetch(`${page.href}/login`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf: 'forged', username: 'ada@acme.example', password: idp.password }) });
    assert.ok(res.status === 403 || res.status === 400, `forged form: ${res.status}`);
  });

  it('lets a test point fastsvc-login at a new redirect URI and sign in with the confidential client', async () => {
    const redirect = 'http://127.0.0.1:8/oauth/upstream/callback';
    const saved = await idp.saveClient({ client_id: 'fastsvc-login', redirect_uris: [redirect] });
    assert.deepEqual(saved.redirect_uris, [redirect]);
    assert.ok(saved.client_secret, 'the secret is kept');
    const t = await idp.userToken({ username: 'grace@acme.example', clientId: 'fastsvc-login', scope: 'openid email' });
    assert.equal(t.idTokenClaims!.sub, 'acme-1002');
    assert.equal(t.idTokenClaims!.email, 'grace@acme.example');
    assert.deepEqual(t.idTokenClaims!.groups, ['staff']);
    assert.equal(t.idTokenClaims!.name, undefined, 'no profile scope, no name');
    // Userinfo answers the resource-less access token.
    const ui = await fetch(idp.metadata.userinfo_endpoint!, { headers: { authorization: `Bearer ${t.access_token}` } });
    assert.equal(ui.status, 200);
    assert.equal((await ui.json() as Record<string, unknown>).sub, 'acme-1002');
    await assert.rejects(idp.saveClient({ client_id: 'broken', redirect_uris: ['not a url'] }), /400 invalid_client_metadata/);
    await assert.rejects(idp.clientCredentialsToken({ clientId: 'broken' }), /no client broken/);
  });

  it('lets a client register itself (RFC 7591, as MCP SDK clients do) and get a person\'s token for a resource', async () => {
    const insecure = { [oauth.allowInsecureRequests]: true } as const;
    const redirectUri = 'http://localhost:5/callback';
    const client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(idp.metadata, {
      client_name: 'Some MCP client', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'notes.read notes.write',
    }, insecure));
    const verifier = oauth.generateRandomCodeVerifier();
    const u = new URL(idp.metadata.authorization_endpoint!);
    u.search = new URLSearchParams({
      response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, scope: 'notes.write', resource: API, state: 's2',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }).toString();
    const back = await idp.signIn(u, 'grace@acme.example');
    const params = oauth.validateAuthResponse(idp.metadata, client, back, 's2');
    const t = await oauth.processAuthorizationCodeResponse(idp.metadata, client,
      await oauth.authorizationCodeGrantRequest(idp.metadata, client, oauth.None(), params, redirectUri, verifier, { ...insecure, additionalParameters: { resource: API } }));
    secretTokens(t);
    const { payload } = await verify(idp, t.access_token);
    assert.equal(payload.client_id, client.client_id);
    assert.equal(payload.sub, 'acme-1002');
    assert.equal(payload.scope, 'notes.write');
  });

  it('exchanges an access token for one of another audience (RFC 8693): same subject, act names the client; refuses a made-up subject token and a client not allowed the grant', async () => {
    const BACKEND = 'http://127.0.0.1:7/api';
    const insecure = { [oauth.allowInsecureRequests]: true } as const;
    const user = await idp.userToken({ username: 'ada@acme.example', resource: API, scope: 'openid notes.read' });
    const exchange = (clientId: string, subject: string) => oauth.genericTokenEndpointRequest(idp.metadata, { client_id: clientId }, oauth.ClientSecretBasic(idp.clients[clientId]!.client_secret!),
      'urn:ietf:params:oauth:grant-type:token-exchange',
      { subject_token: subject, subject_token_type: 'urn:ietf:params:oauth:token-type:access_token', resource: BACKEND, scope: 'api.read' }, insecure);
    const t = secretTokens(await oauth.processGenericTokenEndpointResponse(idp.metadata, { client_id: 'fastsvc-gateway' }, await exchange('fastsvc-gateway', user.access_token)));
    assert.equal(t.issued_token_type, 'urn:ietf:params:oauth:token-type:access_token');
    const { payload } = await verify(idp, t.access_token, BACKEND);
    assert.equal(payload.sub, 'acme-1001');
    assert.equal(payload.client_id, 'fastsvc-gateway');
    assert.deepEqual(payload.act, { sub: 'fastsvc-gateway' });
    assert.equal(payload.scope, 'api.read');
    const madeUp = await exchange('fastsvc-gateway', 'not-a-token-of-this-idp');
    assert.equal(madeUp.status, 400);
    assert.equal(((await madeUp.json()) as Record<string, unknown>).error, 'invalid_grant');
    const notAllowed = await exchange('build-bot', user.access_token);
    assert.equal(notAllowed.status, 400);
    assert.equal(((await notAllowed.json()) as Record<string, unknown>).error, 'invalid_request', 'oidc-provider: the grant type is not allowed for this client');
  });

  it('registers resources: their format applies by default and only their scopes are granted', async () => {
    const resource = 'http://127.0.0.1:11/mcp';
    await idp.saveResource({ resource, format: 'opaque', scopes: ['files.read'] });
    const t = await idp.clientCredentialsToken({ scope: 'files.read files.write', resource });
    assert.ok(!isJwt(t.access_token));
    assert.equal(t.scope, 'files.read');
    const i = await idp.introspect(t.access_token);
    assert.equal(i.aud, resource);
    const jwt = await idp.clientCredentialsToken({ scope: 'files.read', resource, format: 'jwt' });
    assert.equal((await verify(idp, jwt.access_token, resource)).payload.scope, 'files.read');
  });

  it('injects faults: the JWKS answers 503 while down and its keys again after', async () => {
    const before = (await idp.stats()).jwks!;
    await idp.jwksDown(true);
    assert.equal((await fetch(idp.metadata.jwks_uri!)).status, 503);
    await idp.fault('introspection', { status: 500 });
    const t = await idp.clientCredentialsToken({ scope: 'notes.read', resource: API, format: 'opaque' });
    await assert.rejects(idp.introspect(t.access_token));
    await idp.fault('introspection', null);
    assert.equal((await idp.introspect(t.access_token)).active, true);
    await idp.jwksDown(false);
    const res = await fetch(idp.metadata.jwks_uri!);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { keys: unknown[] }).keys.length, 1);
    assert.equal((await idp.stats()).jwks, before + 2, 'stats count JWKS requests, failed ones too');
  });
});

describe('the corporate IdP rotating its signing key', function () {
  let idp: Idp;
  before(async () => {
    idp = await startIdp();
  });
  after(async () => {
    await idp?.stop();
  });

  it('publishes the new key beside the old: old tokens still verify, new ones carry the new kid; retiring drops the old', async () => {
    const old = await idp.clientCredentialsToken({ scope: 'notes.read', resource: API, format: 'jwt' });
    const oldKid = jose.decodeProtectedHeader(old.access_token).kid!;
    const oldUser = await idp.userToken({ username: 'grace@acme.example', scope: 'openid notes.read', resource: API });
    const opaque = await idp.clientCredentialsToken({ scope: 'notes.read', resource: API, format: 'opaque' });

    const { kid, kids } = await idp.rotateKey();
    assert.notEqual(kid, oldKid);
    assert.deepEqual(kids, [kid, oldKid]);
    const jwks = await (await fetch(idp.metadata.jwks_uri!)).json() as { keys: { kid: string }[] };
    assert.deepEqual(jwks.keys.map((k) => k.kid), [kid, oldKid]);

    const fresh = await idp.clientCredentialsToken({ scope: 'notes.read', resource: API, format: 'jwt' });
    assert.equal(jose.decodeProtectedHeader(fresh.access_token).kid, kid);
    const freshUser = await idp.userToken({ username: 'grace@acme.example', scope: 'openid notes.read', resource: API });
    assert.equal(jose.decodeProtectedHeader(freshUser.id_token!).kid, kid, 'ID tokens are signed with the new key too');
    for (const t of [old, oldUser, fresh, freshUser]) assert.equal((await verify(idp, t.access_token)).payload.iss, idp.issuer);
    assert.equal((await idp.introspect(opaque.access_token)).active, true, 'opaque tokens and grants survive the rotation');
    // A refresh token issued before the rotation still works.
    const rt = await idp.refresh(oldUser.refresh_token!, { resource: API });
    assert.equal(jose.decodeProtectedHeader(rt.access_token).kid, kid);
    assert.equal((await verify(idp, rt.access_token)).payload.sub, 'acme-1002');
    const opaqueRt = await idp.refresh(rt.refresh_token!, { resource: API, format: 'opaque' });
    assert.equal((await idp.introspect(opaqueRt.access_token)).sub, 'acme-1002');

    const { dropped } = await idp.retireKeys();
    assert.deepEqual(dropped, [oldKid]);
    await assert.rejects(verify(idp, old.access_token), { code: 'ERR_JWKS_NO_MATCHING_KEY' });
    assert.equal((await verify(idp, fresh.access_token)).payload.sub, 'build-bot');
  });
});

describe('the corporate IdP with a path issuer and other options', function () {
  it('serves a path issuer (Keycloak-like) with both discovery forms, ES256 keys, and opaque tokens by default', async () => {
    const idp = await startIdp({ issuerPath: '/realms/acme', signingAlg: 'ES256', defaultFormat: 'opaque' });
    try {
      assert.equal(idp.issuer, `${idp.url}/realms/acme`);
      const rfc8414 = await (await fetch(`${idp.url}/.well-known/oauth-authorization-server/realms/acme`)).json() as Record<string, unknown>;
      assert.equal(rfc8414.issuer, idp.issuer);
      assert.equal(rfc8414.token_endpoint, idp.metadata.token_endpoint, 'the path-inserted document lists the endpoints under the issuer\'s path too');
      assert.equal(rfc8414.jwks_uri, idp.metadata.jwks_uri);
      assert.ok(idp.metadata.token_endpoint!.startsWith(`${idp.issuer}/oauth2/`));
      const t = await idp.clientCredentialsToken({ scope: 'notes.read', resource: API });
      assert.ok(!isJwt(t.access_token));
      assert.equal((await idp.introspect(t.access_token)).iss, idp.issuer);
      const u = await idp.userToken({ username: 'ada@acme.example', scope: 'openid notes.read', resource: API, format: 'jwt' });
      const { payload, protectedHeader } = await verify(idp, u.access_token);
      assert.equal(protectedHeader.alg, 'ES256');
      assert.equal(payload.iss, idp.issuer);
      assert.equal(jose.decodeProtectedHeader(u.id_token!).alg, 'ES256');
    } finally {
      await idp.stop();
    }
  });

  it('refuses to listen anywhere but loopback, and a config with an unknown key', async () => {
    const run = (args: string[]) => new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [IDP_SCRIPT, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      p.stderr.setEncoding('utf8').on('data', (c: string) => void (stderr += c));
      p.on('close', (code) => resolve({ code, stderr }));
    });
    const wide = await run(['--host', '0.0.0.0']);
    assert.equal(wide.code, 2);
    assert.match(wide.stderr, /loopback/);
    const dir = mkdtempSync(join(tmpdir(), 'fastsvc-idp-test-'));
    try {
      writeFileSync(join(dir, 'idp.json'), JSON.stringify({ bogus: true }));
      const bad = await run(['--config', join(dir, 'idp.json')]);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /idp config: unknown key bogus/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the corporate IdP\'s sign-in page in headless Chromium', function () {
  this.timeout(120_000);
  let idp: Idp;
  before(async () => {
    ensureChromium();
    idp = await startIdp();
  });
  after(async () => {
    await idp?.stop();
  });

  it('renders the form, signs a person in and sends the browser back to the client with a code that exchanges', async () => {
    const { ctx, close } = await launchChromium();
    try {
      const page = await ctx.newPage();
      const redirectUri = 'http://127.0.0.1:6/callback'; // nobody listens: the navigation fails after the request is seen
      const sentBack = new Promise<URL>((resolve) => page.on('request', (r) => {
        if (r.url().startsWith(redirectUri)) resolve(new URL(r.url()));
      }));
      const verifier = oauth.generateRandomCodeVerifier();
      const u = new URL(idp.metadata.authorization_endpoint!);
      u.search = new URLSearchParams({
        response_type: 'code', client_id: 'mcp-cli', redirect_uri: redirectUri, scope: 'openid email notes.read', resource: API, state: 's3',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', login_hint: 'ada@acme.example',
      }).toString();
      await page.goto(u.href);
      assert.equal(await page.textContent('#client'), 'Acme MCP CLI');
      assert.equal(await page.inputValue('#username'), 'ada@acme.example', 'login_hint fills the username');
      await page.fill('#password', 'wrong');
      await page.click('#sign-in');
      assert.equal(await page.textContent('#error'), 'Wrong username or password.');
      await page.fill('#password', idp.password);
      await page.click('#sign-in');
      const back = await sentBack;
      const client = { client_id: 'mcp-cli' };
      const params = oauth.validateAuthResponse(idp.metadata, client, back, 's3');
      const t = secretTokens(await oauth.processAuthorizationCodeResponse(idp.metadata, client,
        await oauth.authorizationCodeGrantRequest(idp.metadata, client, oauth.None(), params, redirectUri, verifier, { [oauth.allowInsecureRequests]: true, additionalParameters: { resource: API } })));
      assert.equal(oauth.getValidatedIdTokenClaims(t)!.sub, 'acme-1001');
      assert.equal((await verify(idp, t.access_token)).payload.org_id, 'acme');
    } finally {
      await close();
    }
  });
});
