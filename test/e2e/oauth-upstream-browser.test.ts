// Upstream login end to end, with nothing of fastsvc's own on the other side: the real
// `svc serve` (examples/upstream-login/svc.yaml, made runnable on loopback) in front of the
// corporate IdP (test/helpers/idp.ts: node-oidc-provider in its own process, its own sign-in
// page), a person in headless Chromium (playwright-core; see oauth-pages.test.ts for why the
// real binary), and an MCP client's authorization request made with oauth4webapi (registered
// with fastsvc by DCR). Asserted: fastsvc's authorization → the IdP's sign-in page (Chromium
// fills it) → back to fastsvc's consent page (who signed in, through which provider, which
// scopes) → code → token, and the token works on /svc, /mcp (SDK client) and /ws (SDK client)
// with the rule's claims bound into the arguments; a person outside the rules (another
// domain, an unverified address) sees a refusal page and the client gets access_denied; two
// providers give a choice page. No JWT (the IdP's ID and access tokens are JWTs) appears in
// fastsvc's output or in its SQLite files. Screenshots go to test-artifacts/. Chromium
// resolves no name (--host-resolver-rules): no traffic leaves 127.0.0.1.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import type { Page } from 'playwright-core';
import { ensureChromium, launchChromium } from '../helpers/chromium.js';
import WebSocket from 'ws';
import { parse } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { ROOT } from '../helpers/cli.js';
import { startIdp, type Idp } from '../helpers/idp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { discover, exchange, register } from './oauth-harness.js';

const ARTIFACTS = join(ROOT, 'test-artifacts');
const CALLBACK = 'http://127.0.0.1:59999/callback';
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./;


/** The example, runnable on loopback in front of `idp`; `adjust` changes the document further. */
function exampleManifest(adjust: (doc: Record<string, any>) => void = () => {}): Record<string, unknown> {
  const doc = parse(readFileSync(join(ROOT, 'examples', 'upstream-login', 'svc.yaml'), 'utf8'));
  delete doc.base_url; // the public URL: here the listening address is the base URL
  doc.server = { host: '127.0.0.1', port: 8080 }; // no allowed_hosts: loopback Host names
  doc.oauth.provider = { type: 'sqlite', path: 'oauth.db' };
  adjust(doc);
  return doc;
}

/** Open an MCP client's authorization request in the page; callback() is the URL the browser is sent back to. */
async function startAuthorization(page: Page, url: string, scope: string) {
  const as = await discover(url);
  const client = await register(as, { redirect_uris: [CALLBACK], application_type: 'native', client_name: 'Notes Agent' });
  const verifier = secret(oauth.generateRandomCodeVerifier());
  const state = oauth.generateRandomState();
  const sentBack = new Promise<URL>((resolve) => {
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.origin + u.pathname === CALLBACK) resolve(u);
    });
  });
  const q = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, scope, state, resource: `${url}/mcp`,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  });
  await page.goto(`${url}/authorize?${q}`);
  const callback = () => Promise.race([sentBack, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not sent back to the client')), 15_000))]);
  return { as, client, verifier, state, redirectUri: CALLBACK, callback };
}

/** Sign in on the IdP's own page. */
async function idpSignIn(page: Page, idp: Idp, username: string) {
  assert.equal(new URL(page.url()).origin, idp.url, `at the IdP (${page.url()})`);
  assert.equal(await page.locator('h1').textContent(), 'Acme Corp');
  await page.locator('#username').fill(username);
  await page.locator('#password').fill(idp.password);
  await Promise.all([page.waitForURL((u) => u.origin !== idp.url), page.locator('#sign-in').click()]);
}

async function callSvc(url: string, token: string, tool: string, args: Record<string, unknown>) {
  const res = await fetch(`${url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function sdkCall(transport: StreamableHTTPClientTransport | WebSocketClientTransport, name: string, args: Record<string, unknown>) {
  const client = new Client({ name: 'upstream-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    return await client.callTool({ name, arguments: args });
  } finally {
    await client.close();
  }
}

/** The SDK 1.x WebSocketClientTransport uses the global WebSocket; this one sends the bearer. */
function bearerWebSocket(token: string): typeof globalThis.WebSocket {
  return class extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols, { headers: { authorization: `Bearer ${token}` } });
    }
  } as unknown as typeof globalThis.WebSocket;
}

describe('upstream login in headless Chromium: `svc serve` in front of the corporate IdP', function () {
  this.timeout(120_000);
  let idp: Idp;
  let srv: Served;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  before(async () => {
    ensureChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
    idp = await startIdp();
    srv = await serveManifest(exampleManifest(), {
      env: { CORP_ISSUER: idp.issuer, CORP_CLIENT_ID: 'fastsvc-login', CORP_CLIENT_SECRET: idp.clients['fastsvc-login']!.client_secret },
    });
    await idp.saveClient({ client_id: 'fastsvc-login', redirect_uris: [`${srv.url}/interaction/callback/corp`] });
  });
  after(async () => {
    assert.equal((await srv?.stop())?.code, 0);
    await idp?.stop();
  });
  beforeEach(async () => {
    browser = await launchChromium();
  });
  afterEach(async () => {
    await browser.close();
  });

  it('ada: fastsvc → the IdP\'s sign-in page → fastsvc\'s consent → code; her token works on /svc, /mcp and /ws with her tenant bound', async () => {
    const page = await browser.ctx.newPage();
    const a = await startAuthorization(page, srv.url, 'notes.read notes.write');
    await page.screenshot({ path: join(ARTIFACTS, 'upstream-idp-login.png'), fullPage: true });
    assert.equal(await page.locator('#client').textContent(), 'fastsvc', 'the IdP shows fastsvc as the application');
    await idpSignIn(page, idp, 'ada@acme.example');
    assert.equal(new URL(page.url()).origin, srv.url, 'back at fastsvc');
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Authorize Notes Agent');
    const text = (await page.textContent('main')) ?? '';
    assert.match(text, /Signed in as ada@acme\.example through Acme SSO/);
    assert.match(text, /notes\.read — Read team notes\./);
    assert.match(text, /notes\.write — Add team notes\./);
    assert.doesNotMatch(text, /not available to your account/);
    await page.screenshot({ path: join(ARTIFACTS, 'upstream-consent.png'), fullPage: true });
    await page.getByRole('button', { name: 'Allow' }).click({ noWaitAfter: true });
    const cb = await a.callback();
    assert.equal(cb.searchParams.get('iss'), srv.url);
    const t = await exchange(a.as, a.client, oauth.None(), { ...a, callback: cb }, `${srv.url}/mcp`);
    assert.equal(t.scope, 'notes.read notes.write');
    assert.ok(!JWT.test(JSON.stringify(t)), 'no IdP token inside fastsvc\'s token response');

    const svc = await callSvc(srv.url, t.access_token, 'notes.search', { q: 'plans' });
    assert.equal(svc.status, 200, JSON.stringify(svc.body));
    assert.equal(svc.body.result, 'no notes of acme match \'plans\'', 'tenant bound from org_id');
    const other = await callSvc(srv.url, t.access_token, 'notes.search', { tenant: 'evil', q: 'plans' });
    assert.equal(other.status, 403);
    assert.equal((other.body.error as { code?: string })?.code ?? other.body.code, 'ARGUMENT_BOUND');

    const mcp = await sdkCall(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.access_token}` } } }), 'notes.add', { text: 'from MCP' });
    assert.deepEqual(mcp.content, [{ type: 'text', text: 'noted for acme: from MCP' }]);
    (globalThis as { WebSocket?: unknown }).WebSocket = bearerWebSocket(t.access_token);
    try {
      const ws = await sdkCall(new WebSocketClientTransport(new URL(`${srv.url.replace(/^http/, 'ws')}/ws`)), 'notes.add', { text: 'from WS' });
      assert.deepEqual(ws.content, [{ type: 'text', text: 'noted for acme: from WS' }]);
    } finally {
      delete (globalThis as { WebSocket?: unknown }).WebSocket;
    }
    const login = await waitFor(() => srv.logs().find((l) => l.event === 'oauth.upstream_login'), 'the oauth.upstream_login log line');
    assert.deepEqual([login?.upstream, login?.sub, login?.rule], ['corp', 'ada@acme.example', 1]);
  });

  it('grace: her rule gives notes.read only — the consent page says so, and notes.add is 403', async () => {
    const page = await browser.ctx.newPage();
    const a = await startAuthorization(page, srv.url, 'notes.read notes.write');
    await idpSignIn(page, idp, 'grace@acme.example');
    const text = (await page.textContent('main')) ?? '';
    assert.match(text, /Signed in as grace@acme\.example through Acme SSO/);
    assert.match(text, /notes\.write — Add team notes\. \(not available to your account; will not be granted\)/);
    await page.getByRole('button', { name: 'Allow' }).click({ noWaitAfter: true });
    const t = await exchange(a.as, a.client, oauth.None(), { ...a, callback: await a.callback() }, `${srv.url}/mcp`);
    assert.equal(t.scope, 'notes.read');
    assert.equal((await callSvc(srv.url, t.access_token, 'notes.add', { text: 'x' })).status, 403);
    assert.equal((await callSvc(srv.url, t.access_token, 'notes.search', { q: 'x' })).status, 200);
  });

  for (const [who, why] of [['eve@evil.example', 'another domain'], ['mallory@acme.example', 'an address the IdP never verified']] as const) {
    it(`${who} (${why}): a refusal page, an audit line, and access_denied for the client`, async () => {
      const page = await browser.ctx.newPage();
      const a = await startAuthorization(page, srv.url, 'notes.read');
      await idpSignIn(page, idp, who);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Access refused');
      assert.match((await page.getByRole('alert').textContent()) ?? '', new RegExp(`Your Acme SSO account \\(${who.replace('.', '\\.')}\\) is not allowed to use team-notes`));
      if (who.startsWith('eve')) await page.screenshot({ path: join(ARTIFACTS, 'upstream-refused.png'), fullPage: true });
      await page.getByRole('link', { name: 'Return to the application' }).click({ noWaitAfter: true });
      const cb = await a.callback();
      assert.equal(cb.searchParams.get('error'), 'access_denied');
      const refused = await waitFor(() => {
        const lines = srv.logs().filter((l) => l.event === 'oauth.upstream_refused' && l.identity === who);
        return lines.length ? lines : undefined;
      }, 'the oauth.upstream_refused log line');
      assert.equal(refused.length, 1);
      assert.equal(refused[0]!.reason, 'upstream_not_allowed');
    });
  }

  it('leaves no IdP token (a JWT) in its output or its SQLite files', () => {
    assert.ok(srv.logs().some((l) => l.event === 'oauth.upstream_login'), 'sign-ins happened');
    assert.doesNotMatch(srv.stdout() + srv.stderr(), JWT);
    const files = readdirSync(srv.dir).filter((f) => f.startsWith('oauth.db'));
    assert.ok(files.length > 0);
    for (const f of files) assert.doesNotMatch(readFileSync(join(srv.dir, f)).toString('latin1'), JWT, f);
  });
});

describe('upstream login in headless Chromium: two providers give a choice', function () {
  this.timeout(120_000);
  let idp: Idp;
  let srv: Served;

  before(async () => {
    ensureChromium();
    idp = await startIdp();
    // The same IdP a second time, as a partner's, admitting the evil.example tenant to notes.read.
    srv = await serveManifest(exampleManifest((doc) => {
      const corp = doc.oauth.login.upstreams[0];
      doc.oauth.login.upstreams.push({
        ...corp, name: 'partner', display_name: 'Partner SSO', client_secret: '${CORP_CLIENT_SECRET}',
        rules: [{ when: { email_domain: 'evil.example' }, subject: 'sub', scopes: ['notes.read'], claims: { tenant: 'org_id' } }],
      });
    }), { env: { CORP_ISSUER: idp.issuer, CORP_CLIENT_ID: 'fastsvc-login', CORP_CLIENT_SECRET: idp.clients['fastsvc-login']!.client_secret } });
    await idp.saveClient({ client_id: 'fastsvc-login', redirect_uris: ['corp', 'partner'].map((n) => `${srv.url}/interaction/callback/${n}`) });
  });
  after(async () => {
    assert.equal((await srv?.stop())?.code, 0);
    await idp?.stop();
  });

  it('shows both on fastsvc\'s sign-in page; choosing the partner signs eve in under its rule', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.ctx.newPage();
      const a = await startAuthorization(page, srv.url, 'notes.read');
      assert.equal(new URL(page.url()).origin, srv.url, 'a page of fastsvc first');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in to team-notes');
      assert.deepEqual(await page.getByRole('button').allTextContents(), ['Acme SSO', 'Partner SSO']);
      await page.screenshot({ path: join(ARTIFACTS, 'upstream-choice.png'), fullPage: true });
      await Promise.all([page.waitForURL((u) => u.origin === idp.url), page.getByRole('button', { name: 'Partner SSO' }).click()]);
      await idpSignIn(page, idp, 'eve@evil.example');
      assert.match((await page.textContent('main')) ?? '', /Signed in as evil-6666 through Partner SSO/);
      await page.getByRole('button', { name: 'Allow' }).click({ noWaitAfter: true });
      const t = await exchange(a.as, a.client, oauth.None(), { ...a, callback: await a.callback() }, `${srv.url}/mcp`);
      const found = await callSvc(srv.url, t.access_token, 'notes.search', { q: 'x' });
      assert.equal(found.body.result, 'no notes of evil match \'x\'');
    } finally {
      await browser.close();
    }
  });
});
