// Signing in with a real browser through the real server: headless Chromium (Debian's
// `chromium`, installed by scripts/ensure-chromium.sh; launched as the real binary, not
// Debian's /usr/bin/chromium wrapper script) driven by playwright-core, against
// `svc serve` processes started by test/helpers/cli-server.ts:
// - the hosted example (examples/hosted/svc.yaml, login.mode users) on loopback: login
//   with wrong and right passwords, consent showing client, redirect host and scopes,
//   Allow and Deny, remembered consent, forced consent for registered clients, CSRF,
//   rate limits, escaping, a page whose referrer policy a proxy rewrote; the token it
//   yields calls /svc;
// - the same with a client identified by its metadata document (served by the loopback
//   HTTPS server of test/helpers/cimd-docs.ts): its name and publishing host on the login
//   and consent pages, and the error page for a document that cannot be used;
// - the default manifest (root svc.yaml, login.mode auto): straight back with a code,
//   and the token calls /svc;
// - front-door refusals: an HTML page on the sign-in pages, JSON elsewhere, one log line each.
// Chromium's host resolver resolves no name (--host-resolver-rules), so the redirect to
// the client's https://app.example/cb fails without a DNS query: no traffic leaves
// 127.0.0.1. Screenshots go to test-artifacts/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import type { Page } from 'playwright-core';
import { ensureChromium, launchChromium } from '../helpers/chromium.js';
import WebSocket from 'ws';
import { parse } from 'yaml';
import { hashPassword } from '../../src/auth/oauth/password.js';
import { startDocServer, type DocServer } from '../helpers/cimd-docs.js';
import { ROOT } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { discover, exchange, register } from './oauth-harness.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const ARTIFACTS = join(ROOT, 'test-artifacts');
const WEB_CALLBACK = 'https://app.example/cb';
const LOOPBACK_CALLBACK = 'http://127.0.0.1:59999/callback';


/**
 * Open an authorization request. `callback()` resolves with the URL the browser is sent
 * back to (the client is not running: the navigation itself then fails, which is fine).
 */
async function startAuthorization(page: Page, url: string, clientId: string, redirectUri: string, scope: string) {
  const verifier = secret(oauth.generateRandomCodeVerifier());
  const state = oauth.generateRandomState();
  const target = new URL(redirectUri);
  const sentBack = new Promise<URL>((resolve) => {
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.origin === target.origin && u.pathname === target.pathname) resolve(u);
    });
  });
  const q = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope, state, resource: `${url}/mcp`,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  });
  const first = await page.goto(`${url}/authorize?${q}`).catch(() => null);
  const callback = () => Promise.race([sentBack, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not sent back to the client')), 10_000))]);
  return { verifier, state, redirectUri, first, callback };
}

/** Click a button whose form answer sends the browser back to the client. */
async function clickAway(page: Page, name: string) {
  await page.getByRole('button', { name }).click({ noWaitAfter: true });
}

async function login(page: Page, username: string, password: string) {
  secret(password);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  const [res] = await Promise.all([page.waitForNavigation().catch(() => null), page.getByRole('button', { name: 'Sign in' }).click()]);
  return res;
}

async function callSvc(url: string, token: string, tool: string, args: Record<string, unknown>) {
  const res = await fetch(`${url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** node:http, because fetch will not send a Host of our choosing. */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body = ''): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { method, headers: { 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => void (text += c)).on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The hosted example, made runnable on loopback (its files beside the manifest): see the comments inside. */
async function hostedManifest(adjust: (doc: { oauth: Record<string, unknown> }) => void = () => {}): Promise<Record<string, unknown>> {
  const doc = parse(readFileSync(join(ROOT, 'examples', 'hosted', 'svc.yaml'), 'utf8'));
  delete doc.base_url; // the public URL: here the listening address is the base URL
  doc.server = { host: '127.0.0.1', port: 8080, allowed_origins: doc.server.allowed_origins }; // no allowed_hosts: loopback Host names
  doc.auth.tokens[0].token = secret('deploy-bot-token-for-the-browser-test');
  doc.oauth.provider = { type: 'sqlite', path: 'oauth.db' };
  doc.oauth.users = [
    { username: 'ada', password_hash: await hashPassword(secret('wonderland'), { N: 16384 }), scopes: ['notes.read', 'notes.write', 'notes.delete'] },
    { username: 'lin', password_hash: await hashPassword('builder', { N: 16384 }), scopes: ['notes.read'] },
  ];
  doc.oauth.clients = [
    { client_id: 'web', client_name: 'Notes Web', client_secret: secret('web-app-secret-value'), redirect_uris: [WEB_CALLBACK], scopes: ['notes.read', 'notes.write'] },
    { client_id: 'web2', client_name: 'Second App', redirect_uris: [WEB_CALLBACK] },
  ];
  // Tight per user (tested on carol; ada and lin sign in at most 4 times), loose per IP (every login here is from 127.0.0.1).
  doc.oauth.rate_limits = { login_per_user: { burst: 4, per_minute: 1 }, login_per_ip: { burst: 100, per_minute: 100 } };
  doc.audit = { to: { file: 'audit.log' } }; // the login rate-limit refusals are asserted there
  adjust(doc);
  return doc;
}

const refusals = (s: Served) => s.logs().filter((l) => l.event === 'front_door.refused');

describe('OAuth sign-in in headless Chromium through `svc serve`', () => {
  before(() => {
    ensureChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  describe('the hosted example (login.mode users)', function () {
    this.timeout(120_000);
    let dir: string;
    let srv: Served;
    let url: string;
    let browser: Awaited<ReturnType<typeof launchChromium>>;

    before(async () => {
      srv = await serveManifest(await hostedManifest());
      dir = srv.dir;
      url = srv.url;
    });
    after(async () => {
      assert.equal((await srv?.stop())?.code, 0);
    });
    beforeEach(async () => {
      browser = await launchChromium();
    });
    afterEach(async () => {
      await browser.close();
    });

    it('logs in, shows consent with client, redirect host and scopes, issues the intersection of scopes, and the token calls /svc', async () => {
      const page = await browser.ctx.newPage();
      const a = await startAuthorization(page, url, 'web', WEB_CALLBACK, 'notes.read notes.write');
      assert.equal(a.first?.status(), 200);
      assert.equal(a.first?.headers()['cache-control'], 'no-store');
      assert.equal(a.first?.headers()['referrer-policy'], 'same-origin');
      assert.match(a.first?.headers()['content-security-policy'] ?? '', /default-src 'none'/);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in to hosted');
      assert.match(await page.textContent('main') ?? '', /to continue to Notes Web/);
      await page.screenshot({ path: join(ARTIFACTS, 'oauth-login.png'), fullPage: true });

      // allHeaders() resolves later than the request event: keep the promises and await them all.
      const posts: Promise<Record<string, string>>[] = [];
      page.on('request', (r) => void (r.method() === 'POST' && posts.push(r.allHeaders())));
      const wrong = await login(page, 'lin', 'not-the-password');
      assert.equal(wrong?.status(), 401);
      assert.equal(await page.getByRole('alert').textContent(), 'Wrong username or password.');
      assert.equal(await page.getByLabel('Username').inputValue(), 'lin', 'username kept');

      const ok = await login(page, 'lin', 'builder');
      assert.equal(ok?.status(), 200);
      const origins = (await Promise.all(posts)).map((h) => h.origin);
      assert.deepEqual(origins, [url, url], 'the form posts name the server\'s origin');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Authorize Notes Web');
      const text = (await page.textContent('main')) ?? '';
      assert.match(text, /Signed in as lin/);
      assert.match(text, /sent back to app\.example/);
      assert.match(text, /notes\.read — Read team notes\./);
      assert.match(text, /notes\.write — Add team notes\. \(not available to your account; will not be granted\)/);
      assert.doesNotMatch(text, /notes\.delete/, 'only the scopes asked for are shown');
      assert.doesNotMatch(text, /registered itself/, 'a pre-provisioned client gets no self-registration warning');
      await page.screenshot({ path: join(ARTIFACTS, 'oauth-consent.png'), fullPage: true });

      await clickAway(page, 'Allow');
      const cb = await a.callback();
      assert.equal(cb.searchParams.get('iss'), url);
      const as = await discover(url);
      const t = await exchange(as, { client_id: 'web' }, oauth.ClientSecretBasic('web-app-secret-value'), { ...a, callback: cb }, `${url}/mcp`);
      assert.equal(t.scope, 'notes.read');
      const found = await callSvc(url, t.access_token, 'notes.search', { q: 'browser' });
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.result, "no notes match 'browser'");
      assert.equal((await callSvc(url, t.access_token, 'notes.add', { text: 'x' })).status, 403, 'notes.write was not granted');

      // Same browser session: consent remembered, no page at all.
      const again = await browser.ctx.newPage();
      const b = await startAuthorization(again, url, 'web', WEB_CALLBACK, 'notes.read');
      assert.ok((await b.callback()).searchParams.get('code'));
      assert.deepEqual(refusals(srv), [], 'the front door refused nothing');
    });

    it('remembers consent per user and client across browser sessions, and asks again for a new scope', async () => {
      const page = await browser.ctx.newPage();
      const a = await startAuthorization(page, url, 'web2', WEB_CALLBACK, 'notes.read');
      await login(page, 'ada', 'wonderland');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Authorize Second App');
      await clickAway(page, 'Allow');
      assert.ok((await a.callback()).searchParams.get('code'));

      const other = await launchChromium();
      try {
        const p2 = await other.ctx.newPage();
        const b = await startAuthorization(p2, url, 'web2', WEB_CALLBACK, 'notes.read');
        await login(p2, 'ada', 'wonderland');
        assert.ok((await b.callback()).searchParams.get('code'), 'no consent page in a new browser session');
        const lin = await other.ctx.newPage();
        await lin.context().clearCookies();
        const c = await startAuthorization(lin, url, 'web2', WEB_CALLBACK, 'notes.read');
        await login(lin, 'lin', 'builder');
        assert.equal(await lin.getByRole('heading', { level: 1 }).textContent(), 'Authorize Second App', 'another user is asked');
        await clickAway(lin, 'Allow');
        assert.ok((await c.callback()).searchParams.get('code'));
        const lin2 = await other.ctx.newPage();
        const wider = await startAuthorization(lin2, url, 'web2', WEB_CALLBACK, 'notes.read notes.write');
        assert.equal(wider.first?.status(), 200, 'a scope not yet consented to asks again');
        assert.equal(await lin2.getByRole('heading', { level: 1 }).textContent(), 'Authorize Second App');
        assert.match(await lin2.textContent('main') ?? '', /notes\.write — Add team notes\. \(not available to your account/);
      } finally {
        await other.close();
      }
    });

    it('always asks for consent for a dynamically registered client; Deny returns access_denied', async () => {
      const as = await discover(url);
      const client = await register(as, { client_name: '<img src=x onerror="document.title=1">Evil & Co', redirect_uris: [LOOPBACK_CALLBACK] });
      for (let round = 0; round < 2; round++) {
        const page = await browser.ctx.newPage();
        const a = await startAuthorization(page, url, client.client_id, LOOPBACK_CALLBACK, 'notes.read');
        if (round === 0) await login(page, 'lin', 'builder');
        assert.match(await page.getByRole('heading', { level: 1 }).textContent() ?? '', /^Authorize <img src=x onerror="document.title=1">Evil & Co$/);
        assert.equal(await page.locator('main img').count(), 0, 'client name is escaped');
        assert.match(await page.textContent('main') ?? '', /registered itself/);
        if (round === 0) await page.screenshot({ path: join(ARTIFACTS, 'oauth-consent-registered-client.png'), fullPage: true });
        if (round === 0) {
          await clickAway(page, 'Allow');
          assert.ok((await a.callback()).searchParams.get('code'));
        } else {
          await clickAway(page, 'Deny');
          const cb = await a.callback();
          assert.equal(cb.searchParams.get('error'), 'access_denied');
          assert.equal(cb.searchParams.get('code'), null);
        }
      }
    });

    it('signs in from pages whose referrer policy is no-referrer (as a proxy may impose): the posts carry Origin null, the CSRF token guards them', async () => {
      const page = await browser.ctx.newPage();
      const noReferrer = () => page.locator('meta[name=referrer]').evaluate((m) => m.setAttribute('content', 'no-referrer'));
      // allHeaders() resolves later than the request event: keep the promises and await them all.
      const posts: Promise<Record<string, string>>[] = [];
      page.on('request', (r) => void (r.method() === 'POST' && posts.push(r.allHeaders())));
      const a = await startAuthorization(page, url, 'web', WEB_CALLBACK, 'notes.read notes.write');
      await noReferrer();
      await login(page, 'ada', 'wonderland');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Authorize Notes Web');
      await noReferrer();
      await clickAway(page, 'Allow');
      assert.ok((await a.callback()).searchParams.get('code'));
      const origins = (await Promise.all(posts)).map((h) => h.origin);
      assert.deepEqual(origins, ['null', 'null'], 'Chromium sent Origin: null on both form posts');
    });

    it('refuses a login form with a bad CSRF token and rate-limits attempts per username', async () => {
      const page = await browser.ctx.newPage();
      await startAuthorization(page, url, 'web', WEB_CALLBACK, 'notes.read');
      await page.locator('input[name=csrf]').evaluate((el) => ((el as HTMLInputElement).value = 'forged'));
      const forged = await login(page, 'ada', 'wonderland');
      assert.equal(forged?.status(), 403);
      assert.match(await page.getByRole('alert').textContent() ?? '', /CSRF check failed/);

      const p2 = await browser.ctx.newPage();
      await startAuthorization(p2, url, 'web', WEB_CALLBACK, 'notes.read');
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await login(p2, 'carol', `guess-${i}`))?.status());
      assert.ok(statuses.includes(429), String(statuses));
      assert.equal(statuses.indexOf(429) >= 3, true, String(statuses));
      assert.match(await p2.getByRole('alert').textContent() ?? '', /Too many sign-in attempts/);
      // Each refused attempt is one `refuse` audit event with the caller's address.
      const audit = readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
      const limited = audit.filter((e) => e.reason === 'login_rate_limited');
      assert.equal(limited.length, statuses.filter((st) => st === 429).length);
      for (const e of limited) {
        assert.equal(e.decision, 'refuse');
        assert.equal(e.transport, 'oauth');
        assert.equal(e.capability, '/interaction/:uid/login', 'the route, not the interaction id');
        assert.equal(e.ip, '127.0.0.1');
      }
    });

    it('answers a refused form post on the sign-in pages with an HTML page and logs it; API routes and the /ws handshake keep their answers and are logged too', async () => {
      const before = refusals(srv).length;
      // A page with an opaque origin (data: URL) posting to /authorize: the browser sends Origin null.
      const page = await browser.ctx.newPage();
      const form = `<form method="post" action="${url}/authorize"><input name="client_id" value="web"><button>Go</button></form>`;
      await page.goto(`data:text/html,${encodeURIComponent(form)}`);
      const [res] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Go' }).click()]);
      assert.equal(res?.status(), 403);
      assert.match(res?.headers()['content-type'] ?? '', /^text\/html/);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Request refused');
      assert.match(await page.getByRole('alert').textContent() ?? '', /Origin null is not allowed/);

      const foreign = await raw(url, 'POST', '/interaction/some-uid/login', {
        origin: 'https://evil.example', accept: 'text/html,application/xhtml+xml,*/*;q=0.8', 'content-type': 'application/x-www-form-urlencoded',
      }, 'csrf=x&username=ada&password=wonderland');
      assert.equal(foreign.status, 403);
      assert.match(foreign.type, /^text\/html/);
      assert.match(foreign.body, /Origin https:\/\/evil\.example is not allowed/);
      const api = await raw(url, 'POST', '/svc/tools/notes.search', { origin: 'null', 'content-type': 'application/json' }, '{}');
      assert.equal(api.status, 403);
      assert.deepEqual(JSON.parse(api.body).error, { code: 'FORBIDDEN_ORIGIN', message: 'Origin null is not allowed', reason: 'origin_null' });
      const host = await raw(url, 'GET', '/authorize?client_id=web', { host: 'evil.example', accept: 'text/html' });
      assert.equal(host.status, 403);
      assert.match(host.body, /Host evil\.example is not allowed/);
      const query = await raw(url, 'GET', '/healthz?access_token=sekrit-in-the-query', {});
      assert.equal(query.status, 400);
      assert.match(query.type, /^application\/json/);
      const wsStatus = await new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, 'mcp', { origin: 'https://evil.example' });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
        ws.on('open', () => reject(new Error('the /ws handshake was accepted')));
        ws.on('error', () => {});
      });
      assert.equal(wsStatus, 403);

      // The server writes its log asynchronously: wait for the six lines.
      const lines = await waitFor(() => (refusals(srv).length >= before + 6 ? refusals(srv).slice(before) : undefined), 'six front_door.refused log lines');
      assert.deepEqual(lines.map((l) => [l.reason, l.method, l.path, l.host, l.origin]), [
        ['origin_null', 'POST', '/authorize', new URL(url).host, 'null'],
        ['origin_not_allowed', 'POST', '/interaction/some-uid/login', new URL(url).host, 'https://evil.example'],
        ['origin_null', 'POST', '/svc/tools/notes.search', new URL(url).host, 'null'],
        ['host_not_allowed', 'GET', '/authorize', 'evil.example', undefined],
        ['token_in_query', 'GET', '/healthz', new URL(url).host, undefined],
        ['origin_not_allowed', 'GET', '/ws', new URL(url).host, 'https://evil.example'],
      ]);
      assert.ok(lines.every((l) => l.level === 40 && typeof l.ip === 'string'), JSON.stringify(lines));
      assert.doesNotMatch(srv.stderr(), /sekrit|wonderland/, 'no credential reaches the log');
    });
  });

  describe('a client identified by its metadata document (the hosted example, development allowance)', function () {
    this.timeout(120_000);
    let docs: DocServer;
    let srv: Served;
    let browser: Awaited<ReturnType<typeof launchChromium>>;

    before(async () => {
      docs = await startDocServer();
      srv = await serveManifest(await hostedManifest((doc) => {
        doc.oauth.client_id_metadata_documents = { allow_private_addresses: true, ca_file: docs.caFile };
      }));
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      assert.equal((await srv?.stop())?.code, 0);
      await docs?.close();
    });

    it('login and consent name the client as its document does, with the host that publishes it; Allow gives a working token', async () => {
      const clientId = docs.publish('/acme/client.json', { client_name: 'Acme & <Notes>', redirect_uris: [WEB_CALLBACK], token_endpoint_auth_method: 'none' });
      const host = new URL(docs.origin).host;
      const page = await browser.ctx.newPage();
      const a = await startAuthorization(page, srv.url, clientId, WEB_CALLBACK, 'notes.read');
      assert.equal(a.first?.status(), 200);
      assert.equal((await page.textContent('main .muted'))?.trim(), `to continue to Acme & <Notes> (from ${host})`);
      await login(page, 'lin', 'builder');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Authorize Acme & <Notes>');
      const text = (await page.textContent('main')) ?? '';
      assert.match(text, new RegExp(`describes itself in a document published by ${host.replace('.', '\\.')}; its name is its own claim`));
      assert.ok(text.includes(`client id ${clientId}`), text);
      assert.doesNotMatch(text, /registered itself/);
      assert.match(text, /sent back to app\.example/);
      await page.screenshot({ path: join(ARTIFACTS, 'oauth-consent-cimd.png'), fullPage: true });
      await clickAway(page, 'Allow');
      const cb = await a.callback();
      assert.equal(cb.searchParams.get('iss'), srv.url);
      const t = await exchange(await discover(srv.url), { client_id: clientId }, oauth.None(), { ...a, callback: cb }, `${srv.url}/mcp`);
      assert.equal((await callSvc(srv.url, t.access_token, 'notes.search', { q: 'cimd' })).status, 200);
      assert.equal(docs.hits.get('/acme/client.json'), 1, 'fetched once for the whole sign-in');
    });

    it('a document that cannot be used (a redirect) gets the error page, not a redirect to the client', async () => {
      const clientId = docs.answer('/acme/moved.json', { status: 302, headers: { location: '/acme/client.json' }, body: '' });
      const page = await browser.ctx.newPage();
      const a = await startAuthorization(page, srv.url, clientId, WEB_CALLBACK, 'notes.read');
      assert.equal(a.first?.status(), 400);
      assert.match(a.first?.headers()['content-security-policy'] ?? '', /default-src 'none'/);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Authorization failed');
      assert.match((await page.getByRole('alert').textContent()) ?? '', /^invalid_client: /);
      await page.screenshot({ path: join(ARTIFACTS, 'oauth-error-cimd.png'), fullPage: true });
      await waitFor(() => srv.logs().find((l) => l.event === 'oauth.cimd_refused' && l.url === clientId && /answered 302/.test(String(l.reason))), 'the oauth.cimd_refused log line');
    });
  });

  describe('the default manifest (login.mode auto)', function () {
    this.timeout(60_000);
    let srv: Served;

    before(async () => {
      if (!existsSync(join(ROOT, 'demo', 'notes.db'))) execFileSync(process.execPath, [join(ROOT, 'scripts', 'make-demo-db.mjs')], { cwd: ROOT });
      srv = await serveManifest(readFileSync(join(ROOT, 'svc.yaml'), 'utf8'), { copy: { demo: 'demo' }, env: { SVC_TOKEN: undefined } });
    });
    after(async () => {
      assert.equal((await srv?.stop())?.code, 0);
    });

    it('sends the browser straight back with a code (no page on loopback), and the token calls /svc', async () => {
      const as = await discover(srv.url);
      const client = await register(as, { client_name: 'browser e2e', redirect_uris: [LOOPBACK_CALLBACK] });
      const browser = await launchChromium();
      try {
        const page = await browser.ctx.newPage();
        const a = await startAuthorization(page, srv.url, client.client_id, LOOPBACK_CALLBACK, 'greet.use');
        const cb = await a.callback();
        assert.equal(cb.searchParams.get('iss'), srv.url);
        const t = await exchange(as, client, oauth.None(), { ...a, callback: cb }, `${srv.url}/mcp`);
        assert.equal(t.scope, 'greet.use');
        const hello = await callSvc(srv.url, t.access_token, 'greet.hello', { name: 'Chromium' });
        assert.equal(hello.status, 200, JSON.stringify(hello.body));
        assert.equal(hello.body.result, 'Hello, Chromium!');
      } finally {
        await browser.close();
      }
      assert.deepEqual(refusals(srv), []);
    });
  });
});
