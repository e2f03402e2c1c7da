// Upstream login (oauth.login.mode: upstream) through the OAuth server module (oauth-harness.ts,
// whose header says why it is not `svc serve`: here the audit events and the store are the
// test's) against an in-process identity provider (test/helpers/upstream-double.ts) that can
// misbehave on purpose: an MCP client registers with fastsvc, the person is sent to the
// provider, comes back to the callback, sees fastsvc's consent page, and the client exchanges
// the code. Asserted: the rules decide the subject, the scope ceiling and the claims (first
// match, default deny, verified email only); the negative matrix — an ID token whose nonce,
// aud or signature is wrong or which expired, a person no rule admits, a replayed callback
// (state), a replayed upstream code, a callback in another browser, an unknown state, a
// provider's error — each refused with its page, its audit reason, and access_denied for the
// application; two providers give a choice page, and a plain OAuth 2 provider (GitHub-like,
// identity from its user endpoint) works; the provider tokens are kept sealed with the grant
// (none in the SQLite file), handed out by signInTokens() and refreshed when due, and go with
// the grant; after a restart with narrower rules a person they no longer admit cannot refresh;
// no provider token, code or the client secret is in the log or the audit events; a code exchange
// the provider refuses because this server authenticates with a method its metadata does not list
// says so in the log line. Every
// provider token is registered with the secret scan too, so a log line holding one fails the run.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import { exportJWK, generateKeyPair } from 'jose';
import type { AuditEvent } from '../../src/observe/audit.js';
import { Observer } from '../../src/observe/observer.js';
import { SQLiteOAuthProvider } from '../../src/auth/oauth/providers/sqlite-provider.js';
import type { OAuthConfig, UpstreamRule } from '../../src/core/manifest-types.gen.js';
// Asserted by code: the upstream modules are imported on demand, a module instance of their own under mocha's loader.
import type { SvcError } from '../../src/errors.js';
import { authorize, Browser, discover, exchange, insecure, register, startOAuthApp, whoami, type Harness } from './oauth-harness.js';
import { startUpstreamDouble, type UpstreamDouble } from '../helpers/upstream-double.js';
import { secretTokens } from '../helpers/secrets.js';

const RULES = [
  { when: { email_domain: 'acme.example', group: 'mcp-admins' }, subject: 'email', scopes: ['files.read', 'files.write'], claims: { tenant: 'org_id' } },
  { when: { email_domain: 'acme.example' }, subject: 'email', scopes: ['files.read'] },
];
const ADA = { sub: 'u-ada', email: 'ada@acme.example', email_verified: true, groups: ['mcp-admins', 'staff'], org_id: 'acme' };
const GRACE = { sub: 'u-grace', email: 'grace@acme.example', email_verified: true, groups: ['staff'] };
const EVE = { sub: 'u-eve', email: 'eve@evil.example', email_verified: true, groups: ['mcp-admins'] };

function upstreamOAuth(idp: UpstreamDouble, more: Record<string, unknown>[] = []): Partial<OAuthConfig> {
  return {
    login: {
      mode: 'upstream',
      upstreams: [{ name: 'corp', display_name: 'Acme SSO', issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, rules: RULES }, ...more],
    } as unknown as OAuthConfig['login'],
  };
}

/** audit: this test's events (cleared before each); everAudited: all of them. */
interface Started { h: Harness; audit: AuditEvent[]; everAudited: AuditEvent[] }
async function start(oauthCfg: Partial<OAuthConfig>, extra: Parameters<typeof startOAuthApp>[0] = {}): Promise<Started> {
  const audit: AuditEvent[] = [];
  const everAudited: AuditEvent[] = [];
  const observer = new Observer({ enabled: true, allows: false, record: (e) => void (audit.push(e), everAudited.push(e)), close() {} }, undefined);
  // Each test registers a client or two: more than /register's default 10 a minute.
  const h = await startOAuthApp({ ...extra, observer, limits: { register: { burst: 100, perMinute: 100 } }, oauth: { registration: { enabled: true }, ...oauthCfg } });
  return { h, audit, everAudited };
}

const formOf = (html: string) => ({
  action: /<form method="post" action="([^"]+)"/.exec(html)?.[1],
  csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1],
});

/** The authorization up to the provider: returns where the browser is sent, with what it needs to go on. */
async function toProvider(s: Started, scope = 'files.read files.write') {
  const as = await discover(s.h.url);
  const client = await register(as);
  const a = await authorize(as, client, { scope, resource: `${s.h.url}/mcp` });
  return { as, client, a, browser: a.browser, atProvider: a.callback! };
}

/** What the provider answers (its redirect back to fastsvc's callback). */
async function providerAnswer(at: URL): Promise<URL> {
  const res = await fetch(at, { redirect: 'manual' });
  assert.equal(res.status, 302, `the provider redirects back (got ${res.status})`);
  return new URL(res.headers.get('location')!);
}

/** Back at fastsvc: follow the callback to the consent page (or a refusal page). */
async function back(browser: Browser, callback: URL) {
  const { res, leftTo } = await browser.follow(callback.href);
  return { res, leftTo, html: leftTo ? '' : await res.text() };
}

async function consent(s: Started, browser: Browser, html: string, decision = 'allow') {
  const f = formOf(html);
  assert.ok(f.action && f.csrf, 'a consent form');
  return browser.follow(`${s.h.url}${f.action}`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf: f.csrf!, decision }),
  });
}

/** The whole sign-in as `person`; returns the client's tokens and the consent page's text. */
async function signIn(s: Started, idp: UpstreamDouble, person: Record<string, unknown>, scope = 'files.read files.write') {
  idp.next = person as UpstreamDouble['next'];
  const p = await toProvider(s, scope);
  assert.equal(p.atProvider.origin, idp.issuer, 'sent to the provider');
  const cb = await providerAnswer(p.atProvider);
  const c = await back(p.browser, cb);
  assert.equal(c.res.status, 200, c.html);
  const done = await consent(s, p.browser, c.html);
  const tokens = await exchange(p.as, p.client, oauth.None(), { ...p.a, callback: done.leftTo }, `${s.h.url}/mcp`);
  return { ...p, consentPage: c.html, tokens };
}

/** The whole sign-in, choosing provider `name` on the choice page. */
async function signInThrough(s: Started, idp: UpstreamDouble, person: Record<string, unknown>, name: string) {
  idp.next = person as UpstreamDouble['next'];
  const as = await discover(s.h.url);
  const client = await register(as);
  const a = await authorize(as, client, { scope: 'files.read', resource: `${s.h.url}/mcp` });
  const f = formOf(await a.res.text());
  const chosen = await a.browser.follow(`${s.h.url}${f.action}`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf: f.csrf!, upstream: name }),
  });
  const c = await back(a.browser, await providerAnswer(chosen.leftTo!));
  const done = await consent(s, a.browser, c.html);
  return { as, client, tokens: await exchange(as, client, oauth.None(), { ...a, callback: done.leftTo }, `${s.h.url}/mcp`) };
}

const reasons = (audit: AuditEvent[]) => audit.filter((e) => e.transport === 'oauth' && ['deny', 'allow'].includes(e.decision)).map((e) => `${e.decision}:${e.reason}`);

describe('upstream login (login.mode upstream) against an in-process identity provider', function () {
  this.timeout(20_000);
  let idp: UpstreamDouble;
  let s: Started;
  before(async () => {
    idp = await startUpstreamDouble();
    s = await start(upstreamOAuth(idp));
  });
  after(async () => {
    await s?.h.close();
    await idp?.close();
  });
  beforeEach(() => {
    idp.misbehave = {};
    idp.accessTtl = 3600;
    s.audit.length = 0;
  });

  it('signs ada in through the provider: the first matching rule gives her email as subject, both scopes and her tenant claim', async () => {
    const r = await signIn(s, idp, ADA);
    assert.match(r.consentPage, /Signed in as <strong>ada@acme\.example<\/strong> through <strong>Acme SSO<\/strong>/);
    assert.equal(r.tokens.scope, 'files.read files.write');
    const me = await whoami(s.h.url, r.tokens.access_token);
    assert.equal(me.status, 200);
    assert.equal(me.body.sub, 'ada@acme.example');
    assert.equal(me.body.signedInAt, 'corp');
    assert.deepEqual(me.body.claims, { tenant: 'acme' });
    assert.equal(me.body.active, true);
    const authUrl = new URL(r.atProvider);
    for (const p of ['state', 'nonce', 'code_challenge']) assert.ok(authUrl.searchParams.get(p), `the provider is sent ${p}`);
    assert.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authUrl.searchParams.get('redirect_uri'), `${s.h.url}/interaction/callback/corp`);
    assert.deepEqual(reasons(s.audit), ['allow:upstream_login']);
    assert.equal(s.audit.find((e) => e.reason === 'upstream_login')!.detail?.sub, 'ada@acme.example');
  });

  it('bounds grace by her rule: she asks for both scopes and gets files.read, and the consent page says so', async () => {
    const r = await signIn(s, idp, GRACE);
    assert.equal(r.tokens.scope, 'files.read');
    assert.match(r.consentPage, /files\.write<\/code> — Change files <span class="muted">\(not available to your account/);
    const me = await whoami(s.h.url, r.tokens.access_token);
    assert.equal(me.body.sub, 'grace@acme.example');
    assert.equal(me.body.claims, undefined, 'her rule maps no claims');
  });

  it('refuses a person no rule admits: a refusal page, an audit line, and access_denied for the application when they go back', async () => {
    idp.next = EVE;
    const p = await toProvider(s);
    const c = await back(p.browser, await providerAnswer(p.atProvider));
    assert.equal(c.res.status, 403);
    assert.match(c.html, /Access refused/);
    assert.match(c.html, /Your Acme SSO account \(eve@evil\.example\) is not allowed to use Test Server/);
    const deny = s.audit.find((e) => e.reason === 'upstream_not_allowed');
    assert.equal(deny?.decision, 'deny');
    assert.equal(deny?.detail?.upstream, 'corp');
    assert.equal(deny?.detail?.identity, 'eve@evil.example');
    const link = /<a href="([^"]+)">Return to the application<\/a>/.exec(c.html)?.[1];
    const end = await p.browser.follow(new URL(link!.replace(/&amp;/g, '&'), s.h.url).href);
    assert.equal(end.leftTo?.searchParams.get('error'), 'access_denied');
  });

  it('refuses an unverified email address (the domain rule needs a verified one)', async () => {
    idp.next = { ...ADA, email_verified: false };
    const p = await toProvider(s);
    const c = await back(p.browser, await providerAnswer(p.atProvider));
    assert.equal(c.res.status, 403);
    assert.deepEqual(reasons(s.audit), ['deny:upstream_not_allowed']);
  });

  for (const [what, misbehave, claim] of [
    ['a wrong nonce', { nonce: 'not-the-nonce-sent' }, 'nonce'],
    ['a wrong aud', { aud: 'another-client' }, 'aud'],
    ['a wrong iss', { iss: 'http://127.0.0.1:1' }, 'iss'],
    ['a signature by a key the provider does not publish', { foreignKey: true }, 'signature'],
    ['an expiry in the past', { expired: true }, 'exp'],
  ] as const) {
    it(`refuses an ID token with ${what}: upstream_id_token_invalid (${claim}), and the application gets access_denied`, async () => {
      idp.next = ADA;
      idp.misbehave = misbehave;
      const p = await toProvider(s);
      const c = await back(p.browser, await providerAnswer(p.atProvider));
      assert.equal(c.res.status, 502);
      assert.match(c.html, /Signing in with Acme SSO failed/);
      const deny = s.audit.find((e) => e.decision === 'deny');
      assert.equal(deny?.reason, 'upstream_id_token_invalid');
      assert.equal(deny?.detail?.claim, claim);
      const link = /<a href="([^"]+)">/.exec(c.html)?.[1];
      const end = await p.browser.follow(new URL(link!.replace(/&amp;/g, '&'), s.h.url).href);
      assert.equal(end.leftTo?.searchParams.get('error'), 'access_denied');
    });
  }

  it('accepts a callback once: replaying it (same code and state) is upstream_state_replayed, and the provider is not asked again', async () => {
    idp.next = ADA;
    const p = await toProvider(s);
    const cb = await providerAnswer(p.atProvider);
    const first = await back(p.browser, cb);
    assert.equal(first.res.status, 200);
    const exchanges = idp.counts['/token'];
    const again = await back(p.browser, cb);
    assert.equal(again.res.status, 400);
    assert.match(again.html, /Sign-in expired/);
    assert.equal(idp.counts['/token'], exchanges, 'no second code exchange');
    assert.deepEqual(reasons(s.audit), ['allow:upstream_login', 'deny:upstream_state_replayed']);
  });

  it('refuses a replayed upstream code in a fresh sign-in: the provider says invalid_grant, audited as upstream_code_refused', async () => {
    idp.next = ADA;
    const used = await toProvider(s);
    const usedCb = await providerAnswer(used.atProvider);
    assert.equal((await back(used.browser, usedCb)).res.status, 200);
    const fresh = await toProvider(s);
    const forged = new URL(fresh.atProvider.searchParams.get('redirect_uri')!);
    forged.searchParams.set('state', fresh.atProvider.searchParams.get('state')!);
    forged.searchParams.set('iss', idp.issuer);
    forged.searchParams.set('code', usedCb.searchParams.get('code')!);
    const c = await back(fresh.browser, forged);
    assert.equal(c.res.status, 502);
    const deny = s.audit.find((e) => e.decision === 'deny');
    assert.equal(deny?.reason, 'upstream_code_refused');
    assert.equal(deny?.detail?.error, 'invalid_grant');
  });

  it('refuses a callback in a browser that did not start the sign-in, before using the code', async () => {
    idp.next = ADA;
    const p = await toProvider(s);
    const cb = await providerAnswer(p.atProvider);
    const exchanges = idp.counts['/token'];
    const other = new Browser(new URL(s.h.url).origin);
    const c = await back(other, cb);
    assert.equal(c.res.status, 400);
    assert.match(c.html, /started in another browser/);
    assert.equal(idp.counts['/token'], exchanges);
    assert.deepEqual(reasons(s.audit), ['deny:upstream_browser_mismatch']);
  });

  it('refuses an unknown state and a callback for another provider\'s name', async () => {
    const bogus = new URL(`${s.h.url}/interaction/callback/corp?state=nope&code=nope`);
    assert.equal((await back(new Browser(new URL(s.h.url).origin), bogus)).res.status, 400);
    const unknown = await fetch(`${s.h.url}/interaction/callback/elsewhere?state=nope&code=nope`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(reasons(s.audit), ['deny:upstream_state_unknown']);
  });

  it('passes the provider\'s refusal on: error=access_denied gives a page and access_denied for the application', async () => {
    idp.misbehave = { error: 'access_denied' };
    const p = await toProvider(s);
    const c = await back(p.browser, await providerAnswer(p.atProvider));
    assert.equal(c.res.status, 403);
    assert.match(c.html, /Sign-in cancelled/);
    const deny = s.audit.find((e) => e.decision === 'deny');
    assert.equal(deny?.reason, 'upstream_error');
    assert.equal(deny?.detail?.error, 'access_denied');
  });

  it('asks for a fresh sign-in and consent on every authorization, also in a browser that signed in before, and as another person', async () => {
    const first = await signIn(s, idp, ADA);
    idp.next = GRACE;
    const again = await authorize(first.as, first.client, { scope: 'files.read', resource: `${s.h.url}/mcp`, browser: first.browser });
    assert.equal(again.callback?.origin, idp.issuer, 'to the provider again');
    const c = await back(first.browser, await providerAnswer(again.callback!));
    assert.equal(c.res.status, 200);
    assert.match(c.html, /Signed in as <strong>grace@acme\.example/);
    const done = await consent(s, first.browser, c.html);
    const t = await exchange(first.as, first.client, oauth.None(), { ...again, callback: done.leftTo }, `${s.h.url}/mcp`);
    assert.equal((await whoami(s.h.url, t.access_token)).body.sub, 'grace@acme.example');
    assert.equal((await whoami(s.h.url, first.tokens.access_token)).body.sub, 'ada@acme.example', 'ada\'s token is still hers');
  });

  it('hands the provider access token to server code (signInTokens), refreshing it when due, and refreshes fastsvc\'s own tokens too', async () => {
    idp.accessTtl = 30; // within the refresh margin: due at once
    const r = await signIn(s, idp, ADA);
    const grantId = String((await whoami(s.h.url, r.tokens.access_token)).body.credentialId);
    const refreshes = idp.counts.refresh ?? 0;
    const t1 = await s.h.oauth.signInTokens!(grantId);
    assert.equal(idp.counts.refresh, refreshes + 1, 'refreshed at the provider');
    idp.accessTtl = 3600;
    const t2 = await s.h.oauth.signInTokens!(grantId);
    const t3 = await s.h.oauth.signInTokens!(grantId);
    assert.equal(t3.access_token, t2.access_token);
    assert.notEqual(t2.access_token, t1.access_token);
    assert.equal(idp.counts.refresh, refreshes + 2, 'refreshed once more (t1 was still due), then kept');
    const res = await oauth.refreshTokenGrantRequest(r.as, r.client, oauth.None(), r.tokens.refresh_token!, insecure);
    const renewed = secretTokens(await oauth.processRefreshTokenResponse(r.as, r.client, res));
    const me = await whoami(s.h.url, renewed.access_token);
    assert.equal(me.body.signedInAt, 'corp');
    assert.deepEqual(me.body.claims, { tenant: 'acme' });
    assert.ok(!JSON.stringify(renewed).includes(t3.access_token), 'no provider token in fastsvc\'s token response');
  });

  it('answers UPSTREAM_TOKEN_UNAVAILABLE when the provider refuses the refresh, and when the grant is gone', async () => {
    idp.accessTtl = 30;
    const r = await signIn(s, idp, ADA);
    const grantId = String((await whoami(s.h.url, r.tokens.access_token)).body.credentialId);
    idp.misbehave = { refuseRefresh: true };
    await assert.rejects(s.h.oauth.signInTokens!(grantId), (e: SvcError) => e.code === 'UPSTREAM_TOKEN_UNAVAILABLE' && e.data?.reason === 'upstream_refresh_refused');
    idp.misbehave = {};
    const revoked = await oauth.revocationRequest(r.as, r.client, oauth.None(), r.tokens.access_token, insecure);
    await oauth.processRevocationResponse(revoked);
    assert.equal((await whoami(s.h.url, r.tokens.access_token)).status, 401);
    await assert.rejects(s.h.oauth.signInTokens!(grantId), (e: SvcError) => e.code === 'UPSTREAM_TOKEN_UNAVAILABLE' && e.data?.reason === 'no_upstream_login');
  });

  it('wrote none of the provider\'s tokens, codes or the client secret to its log or audit events', () => {
    assert.ok(idp.issued.length >= 20 && idp.codes.length >= 10, 'the tests above signed in many times');
    const written = [...s.h.logs.map((l) => JSON.stringify(l)), ...s.everAudited.map((e) => JSON.stringify(e))].join('\n');
    assert.ok(written.includes('oauth.upstream_refused') && written.includes('"reason":"upstream_id_token_invalid"'), 'sign-ins and refusals were logged and audited');
    for (const t of [...idp.issued, ...idp.codes, idp.clientSecret]) assert.ok(!written.includes(t), 'a provider credential in the log');
  });
});

describe('upstream login with two providers, one of them plain OAuth 2 (GitHub-like)', function () {
  this.timeout(20_000);
  let idp: UpstreamDouble;
  let s: Started;
  let dir: string;
  let github: Record<string, unknown>;
  before(async () => {
    idp = await startUpstreamDouble();
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-upstream-'));
    github = {
      name: 'github', display_name: 'GitHub', ...idp.plain, client_id: idp.clientId, client_secret: idp.clientSecret, scopes: ['read:user'],
      rules: [{ when: { claim: { login: ['octo-ada'] } }, subject: 'login', scopes: ['files.read'], claims: { gh_id: 'id' } }],
    };
    s = await start(upstreamOAuth(idp, [github]), { provider: new SQLiteOAuthProvider(join(dir, 'oauth.db')) });
  });
  after(async () => {
    await s?.h.close();
    await idp?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('offers a choice page, and signs in through the plain provider with its user endpoint\'s login as subject', async () => {
    idp.next = { sub: 'octo-ada', login: 'octo-ada', id: 583231 };
    const as = await discover(s.h.url);
    const client = await register(as);
    const a = await authorize(as, client, { scope: 'files.read', resource: `${s.h.url}/mcp` });
    assert.equal(a.callback, undefined, 'no redirect yet: a page');
    const html = await a.res.text();
    assert.match(html, /Choose where you sign in/);
    assert.match(html, /<button type="submit" name="upstream" value="corp">Acme SSO<\/button>/);
    assert.match(html, /<button type="submit" name="upstream" value="github">GitHub<\/button>/);
    const f = formOf(html);
    const chosen = await a.browser.follow(`${s.h.url}${f.action}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf: f.csrf!, upstream: 'github' }),
    });
    assert.equal(chosen.leftTo?.pathname, '/login/oauth/authorize');
    assert.equal(chosen.leftTo?.searchParams.get('nonce'), null, 'no nonce for a plain OAuth 2 provider');
    const c = await back(a.browser, await providerAnswer(chosen.leftTo!));
    assert.equal(c.res.status, 200, c.html);
    assert.match(c.html, /Signed in as <strong>octo-ada<\/strong> through <strong>GitHub/);
    const done = await consent(s, a.browser, c.html);
    const t = await exchange(as, client, oauth.None(), { ...a, callback: done.leftTo }, `${s.h.url}/mcp`);
    const me = await whoami(s.h.url, t.access_token);
    assert.equal(me.body.sub, 'octo-ada');
    assert.equal(me.body.signedInAt, 'github');
    assert.deepEqual(me.body.claims, { gh_id: '583231' });
  });

  it('after a restart with narrower rules, a person they no longer admit cannot refresh, while the one they do still can', async () => {
    const port = Number(new URL(s.h.url).port);
    const ada = await signInThrough(s, idp, { ...ADA, groups: ['mcp-admins'] }, 'corp');
    const grace = await signInThrough(s, idp, GRACE, 'corp');
    await s.h.close();
    const staffOnly: [UpstreamRule] = [{ when: { email_domain: 'acme.example', group: 'staff' }, subject: 'email', scopes: ['files.read'] }];
    const narrower = upstreamOAuth(idp, [github]);
    narrower.login!.upstreams![0]!.rules = staffOnly;
    s = await start(narrower, { port, provider: new SQLiteOAuthProvider(join(dir, 'oauth.db')) });
    const refresh = (r: typeof ada) => oauth.refreshTokenGrantRequest(r.as, r.client, oauth.None(), r.tokens.refresh_token!, insecure)
      .then((res) => oauth.processRefreshTokenResponse(r.as, r.client, res)).then(secretTokens);
    await assert.rejects(refresh(ada), (e: oauth.ResponseBodyError) => e.error === 'invalid_grant', 'ada is in no staff group: refused');
    const renewed = await refresh(grace);
    assert.equal((await whoami(s.h.url, renewed.access_token)).body.sub, 'grace@acme.example');
  });

  it('keeps the provider tokens only sealed: none of them is in the SQLite files', async () => {
    const { tokens } = await signInThrough(s, idp, ADA, 'corp');
    const grantId = String((await whoami(s.h.url, tokens.access_token)).body.credentialId);
    const upstream = await s.h.oauth.signInTokens!(grantId);
    const stored = readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1')).join('\n');
    assert.ok(stored.length > 0);
    assert.ok(!stored.includes(upstream.access_token), 'no provider access token at rest');
    assert.ok(!stored.includes(upstream.refresh_token!), 'no provider refresh token at rest');
    assert.ok(!stored.includes('mcp-admins'), 'the person\'s groups are sealed too');
  });
});

describe('upstream login with an auth_method the provider does not list', function () {
  this.timeout(20_000);
  let idp: UpstreamDouble;
  let s: Started;
  let dir: string;
  before(async () => {
    idp = await startUpstreamDouble();
    dir = mkdtempSync(join(tmpdir(), 'fastsvc-upstream-key-'));
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    writeFileSync(join(dir, 'key.jwk'), JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'k-1' }));
    s = await start({
      login: {
        mode: 'upstream',
        upstreams: [{ name: 'corp', issuer: idp.issuer, client_id: idp.clientId, auth_method: 'private_key_jwt', private_key_file: join(dir, 'key.jwk'), rules: RULES }],
      } as unknown as OAuthConfig['login'],
    });
  });
  after(async () => {
    await s?.h.close();
    await idp?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the refused code exchange (invalid_client) says which methods the provider lists, and to set auth_method', async () => {
    idp.next = ADA;
    const p = await toProvider(s);
    const c = await back(p.browser, await providerAnswer(p.atProvider));
    assert.equal(c.res.status, 502);
    assert.equal(s.audit.find((e) => e.decision === 'deny')?.reason, 'upstream_code_refused');
    const line = s.h.logs.find((l) => l.event === 'oauth.upstream_refused' && l.reason === 'upstream_code_refused');
    assert.match(String(line?.msg), /invalid_client \(this server authenticates with private_key_jwt; the provider lists client_secret_basic, client_secret_post: set auth_method\)/);
  });
});
