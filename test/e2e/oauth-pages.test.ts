// The login and consent pages (login.mode: users) in real headless Chromium (Debian's
// `chromium`, installed by scripts/ensure-chromium.sh) driven by playwright-core:
// login with wrong and right passwords, consent showing client, redirect host and
// scopes, remembered consent, forced consent for registered clients, CSRF, rate
// limits, escaping. Screenshots go to test-artifacts/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { hashPassword } from '../../src/auth/oauth/password.js';
import { discover, exchange, register, startOAuthApp, type Harness } from './oauth-harness.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts');
const WEB_CALLBACK = 'https://app.example/cb';

async function launch(): Promise<{ ctx: BrowserContext; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 720, height: 900 },
  });
  return { ctx, close: async () => { await ctx.close(); rmSync(dir, { recursive: true, force: true }); } };
}

/**
 * Open an authorization request. `callback()` resolves with the URL the browser is sent
 * back to (the client is not running: the navigation itself then fails, which is fine).
 */
async function startAuthorization(page: Page, h: Harness, clientId: string, redirectUri: string, scope: string) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const target = new URL(redirectUri);
  const sentBack = new Promise<URL>((resolve) => {
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.origin === target.origin && u.pathname === target.pathname) resolve(u);
    });
  });
  const q = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope, state, resource: `${h.url}/mcp`,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  });
  const first = await page.goto(`${h.url}/authorize?${q}`).catch(() => null);
  const callback = () => Promise.race([sentBack, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not sent back to the client')), 10_000))]);
  return { verifier, state, redirectUri, first, callback };
}

/** Click a button whose form answer sends the browser back to the client. */
async function clickAway(page: Page, name: string) {
  await page.getByRole('button', { name }).click({ noWaitAfter: true });
}

async function login(page: Page, username: string, password: string) {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  const [res] = await Promise.all([page.waitForNavigation().catch(() => null), page.getByRole('button', { name: 'Sign in' }).click()]);
  return res;
}

describe('OAuth login and consent pages in headless Chromium', function () {
  this.timeout(120_000);
  let h: Harness;
  let browser: Awaited<ReturnType<typeof launch>>;

  before(async () => {
    execFileSync('sh', ['scripts/ensure-chromium.sh'], { stdio: 'inherit' });
    mkdirSync(ARTIFACTS, { recursive: true });
    h = await startOAuthApp({
      oauth: {
        login: { mode: 'users' },
        users: [
          { username: 'alice', password_hash: await hashPassword('wonderland', { N: 16384 }), scopes: ['files.read', 'files.write'] },
          { username: 'bob', password_hash: await hashPassword('builder', { N: 16384 }), scopes: ['files.read'] },
        ],
        clients: [
          { client_id: 'webapp', client_name: 'Web App', client_secret: 'web-app-secret-value', redirect_uris: [WEB_CALLBACK] },
          { client_id: 'webapp2', client_name: 'Second App', redirect_uris: [WEB_CALLBACK] },
        ],
      },
      limits: { loginPerUser: { burst: 4, perMinute: 1 } },
    });
  });
  after(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    browser = await launch();
  });
  afterEach(async () => {
    await browser.close();
  });

  it('logs in, shows consent with client, redirect host and scopes, and issues the intersection of scopes', async () => {
    const page = await browser.ctx.newPage();
    const a = await startAuthorization(page, h, 'webapp', WEB_CALLBACK, 'files.read files.write admin');
    assert.equal(a.first?.status(), 200);
    assert.equal(a.first?.headers()['cache-control'], 'no-store');
    assert.match(a.first?.headers()['content-security-policy'] ?? '', /default-src 'none'/);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in to Test Server');
    assert.match(await page.textContent('main') ?? '', /to continue to Web App/);
    await page.screenshot({ path: join(ARTIFACTS, 'oauth-login.png'), fullPage: true });

    const wrong = await login(page, 'alice', 'not-the-password');
    assert.equal(wrong?.status(), 401);
    assert.equal(await page.getByRole('alert').textContent(), 'Wrong username or password.');
    assert.equal(await page.getByLabel('Username').inputValue(), 'alice', 'username kept');

    const ok = await login(page, 'alice', 'wonderland');
    assert.equal(ok?.status(), 200);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Authorize Web App');
    const text = (await page.textContent('main')) ?? '';
    assert.match(text, /Signed in as alice/);
    assert.match(text, /sent back to app\.example/);
    assert.match(text, /files\.read — Read files/);
    assert.match(text, /files\.write — Change files/);
    assert.match(text, /admin — Administer the server \(not available to your account; will not be granted\)/);
    assert.doesNotMatch(text, /registered itself/, 'a pre-provisioned client gets no self-registration warning');
    await page.screenshot({ path: join(ARTIFACTS, 'oauth-consent.png'), fullPage: true });

    await clickAway(page, 'Allow');
    const cb = await a.callback();
    assert.equal(cb.searchParams.get('iss'), h.url);
    const as = await discover(h.url);
    const t = await exchange(as, { client_id: 'webapp' }, oauth.ClientSecretBasic('web-app-secret-value'), { ...a, callback: cb }, `${h.url}/mcp`);
    assert.equal(t.scope, 'files.read files.write');

    // Same browser session: consent remembered, no page at all.
    const again = await browser.ctx.newPage();
    const b = await startAuthorization(again, h, 'webapp', WEB_CALLBACK, 'files.read');
    assert.ok((await b.callback()).searchParams.get('code'));
  });

  it('remembers consent per user and client across browser sessions, and asks again for a new scope', async () => {
    const page = await browser.ctx.newPage();
    const a = await startAuthorization(page, h, 'webapp2', WEB_CALLBACK, 'files.read');
    await login(page, 'alice', 'wonderland');
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Authorize Second App');
    await clickAway(page, 'Allow');
    assert.ok((await a.callback()).searchParams.get('code'));

    const other = await launch();
    try {
      const p2 = await other.ctx.newPage();
      const b = await startAuthorization(p2, h, 'webapp2', WEB_CALLBACK, 'files.read');
      await login(p2, 'alice', 'wonderland');
      assert.ok((await b.callback()).searchParams.get('code'), 'no consent page in a new browser session');
      const bob = await other.ctx.newPage();
      await bob.context().clearCookies();
      const c = await startAuthorization(bob, h, 'webapp2', WEB_CALLBACK, 'files.read');
      await login(bob, 'bob', 'builder');
      assert.equal(await bob.getByRole('heading', { level: 1 }).textContent(), 'Authorize Second App', 'another user is asked');
      await clickAway(bob, 'Allow');
      assert.ok((await c.callback()).searchParams.get('code'));
      const bob2 = await other.ctx.newPage();
      const wider = await startAuthorization(bob2, h, 'webapp2', WEB_CALLBACK, 'files.read files.write');
      assert.equal(wider.first?.status(), 200, 'a scope not yet consented to asks again');
      assert.equal(await bob2.getByRole('heading', { level: 1 }).textContent(), 'Authorize Second App');
      assert.match(await bob2.textContent('main') ?? '', /files\.write — Change files \(not available to your account/);
    } finally {
      await other.close();
    }
  });

  it('always asks for consent for a dynamically registered client; Deny returns access_denied', async () => {
    const as = await discover(h.url);
    const client = await register(as, { client_name: '<img src=x onerror="document.title=1">Evil & Co', redirect_uris: ['http://127.0.0.1:59999/callback'] });
    for (let round = 0; round < 2; round++) {
      const page = await browser.ctx.newPage();
      const a = await startAuthorization(page, h, client.client_id, 'http://127.0.0.1:59999/callback', 'files.read');
      if (round === 0) await login(page, 'bob', 'builder');
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

  it('refuses a login form with a bad CSRF token and rate-limits attempts per username', async () => {
    const page = await browser.ctx.newPage();
    await startAuthorization(page, h, 'webapp', WEB_CALLBACK, 'files.read');
    await page.locator('input[name=csrf]').evaluate((el) => ((el as HTMLInputElement).value = 'forged'));
    const forged = await login(page, 'alice', 'wonderland');
    assert.equal(forged?.status(), 403);

    const p2 = await browser.ctx.newPage();
    await startAuthorization(p2, h, 'webapp', WEB_CALLBACK, 'files.read');
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await login(p2, 'carol', `guess-${i}`))?.status());
    assert.ok(statuses.includes(429), String(statuses));
    assert.equal(statuses.indexOf(429) >= 3, true, String(statuses));
    assert.match(await p2.getByRole('alert').textContent() ?? '', /Too many sign-in attempts/);
  });
});
