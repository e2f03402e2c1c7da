// Sign-in through another identity provider (oauth.login.mode upstream) with each token-endpoint
// auth method, through the real `svc serve`, against two providers fastsvc's authors did not
// write. glewlwyd 2.7.5 (test/helpers/glewlwyd.ts) takes the id and secret of client_secret_basic
// as they are, without form-decoding them, and requires one method per client: client ids and
// secrets holding `-` (which a form-encoder that escapes `-` as %2D, as oauth4webapi's does, turns
// into credentials glewlwyd does not know) sign in with the default client_secret_basic, with
// client_secret_post, and with private_key_jwt (an RS256 key given as a JWK file, its assertion's
// aud the token endpoint); a provider set to a method its client may not use is refused
// (upstream_code_refused). The corporate IdP (node-oidc-provider, test/helpers/idp.ts) takes the
// same three: its fastsvc-login client is switched to each method in turn, and private_key_jwt
// with a PEM (PKCS#8) ES256 key. Each sign-in ends with fastsvc's token calling /svc as the person.

import assert from 'node:assert/strict';
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import { startGlewlwyd, type Glewlwyd } from '../helpers/glewlwyd.js';
import { startIdp, type Idp } from '../helpers/idp.js';
import { freePort } from '../helpers/postgres.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { authorize, discover, exchange, register } from './oauth-harness.js';

const PASSWORD = secret('wonder-land-2026');
const RULE = { when: {}, subject: 'sub', scopes: ['notes.read'] };

/** The manifest of a fastsvc whose people sign in through `upstreams`. */
function manifest(upstreams: Record<string, unknown>[]): Record<string, unknown> {
  return {
    version: 1,
    name: 'auth-methods',
    server: { host: '127.0.0.1' },
    routes: { public: ['/healthz'], protected: ['/svc', '/mcp', '/ws'] },
    oauth: { enabled: true, provider: { type: 'memory' }, registration: { enabled: true }, login: { mode: 'upstream', upstreams } },
    profile: { scopes: ['notes.read'] },
    tools: [{ name: 'notes.list', description: 'Lists notes.', required_scopes: ['notes.read'], template: 'none' }],
  };
}

const formOf = (html: string) => ({ action: /<form method="post" action="([^"]+)"/.exec(html)?.[1], csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] });

/**
 * An MCP client's authorization at `srv`, the person choosing provider `name` (when there is a choice) and signing in
 * there with `atProvider`; the client's token, or the page fastsvc showed instead of its consent page.
 */
async function signIn(srv: Served, name: string | undefined, atProvider: (url: URL) => Promise<URL>): Promise<{ token?: string; page: string; status: number }> {
  const as = await discover(srv.url);
  const client = await register(as);
  const a = await authorize(as, client, { scope: 'notes.read', resource: `${srv.url}/mcp` });
  let toProvider = a.callback;
  if (name !== undefined) {
    const f = formOf(await a.res.text());
    assert.ok(f.action && f.csrf, 'a choice page');
    toProvider = (await a.browser.follow(`${srv.url}${f.action}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf: f.csrf!, upstream: name }),
    })).leftTo;
  }
  assert.ok(toProvider, 'sent to the provider');
  const back = await atProvider(toProvider);
  const consentPage = await a.browser.follow(back.href);
  const page = await consentPage.res.text();
  const f = formOf(page);
  if (!f.action || !f.csrf) return { page, status: consentPage.res.status };
  const done = await a.browser.follow(`${srv.url}${f.action}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf: f.csrf, decision: 'allow' }) });
  const tokens = await exchange(as, client, oauth.None(), { ...a, callback: done.leftTo }, `${srv.url}/mcp`);
  return { token: tokens.access_token, page, status: consentPage.res.status };
}

async function callsSvc(srv: Served, token: string): Promise<number> {
  const res = await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
  await res.arrayBuffer();
  return res.status;
}

describe('sign-in through glewlwyd 2.7.5 with each token-endpoint auth method (real svc serve)', function () {
  this.timeout(90_000);
  let glew: Glewlwyd;
  let srv: Served;

  before(async () => {
    glew = await startGlewlwyd({ users: [{ username: 'ada', password: PASSWORD, email: 'ada@acme.example' }] });
    const port = await freePort();
    const callback = (name: string) => `http://127.0.0.1:${port}/interaction/callback/${name}`;
    const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
    await glew.addClient({ client_id: 'fastsvc-basic', client_secret: 'sec-ret-basic', redirect_uri: callback('glew-basic'), methods: ['client_secret_basic'] });
    await glew.addClient({ client_id: 'fastsvc-post', client_secret: 'sec-ret-post', redirect_uri: callback('glew-post'), methods: ['client_secret_post'] });
    await glew.addClient({ client_id: 'fastsvc-jwt', redirect_uri: callback('glew-jwt'), methods: ['private_key_jwt'], jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'fastsvc-key-1', alg: 'RS256', use: 'sig' }] } });
    await glew.addClient({ client_id: 'fastsvc-only-post', client_secret: 'sec-ret-only-post', redirect_uri: callback('glew-wrong'), methods: ['client_secret_post'] });
    const provider = (name: string, clientId: string, more: Record<string, unknown>) => ({ name, issuer: glew.issuer, client_id: clientId, scopes: ['openid', 'email'], rules: [RULE], ...more });
    srv = await serveManifest(manifest([
      provider('glew-basic', 'fastsvc-basic', { client_secret: '${BASIC_SECRET}' }), // client_secret_basic: the default
      provider('glew-post', 'fastsvc-post', { client_secret: '${POST_SECRET}', auth_method: 'client_secret_post' }),
      provider('glew-jwt', 'fastsvc-jwt', { auth_method: 'private_key_jwt', private_key_file: 'fastsvc-key.jwk' }),
      provider('glew-wrong', 'fastsvc-only-post', { client_secret: '${ONLY_POST_SECRET}' }), // basic, which this client may not use
    ]), {
      port,
      env: { BASIC_SECRET: 'sec-ret-basic', POST_SECRET: 'sec-ret-post', ONLY_POST_SECRET: 'sec-ret-only-post' },
      files: { 'fastsvc-key.jwk': secret(JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'fastsvc-key-1', alg: 'RS256' })) },
    });
  });
  after(async () => {
    await srv?.stop();
    await glew?.stop();
  });

  const viaGlewlwyd = (url: URL) => glew.signIn(url, 'ada', PASSWORD);

  for (const name of ['glew-basic', 'glew-post', 'glew-jwt']) {
    it(`${name}: the person signs in, and fastsvc's token calls /svc`, async () => {
      const r = await signIn(srv, name, viaGlewlwyd);
      assert.ok(r.token, `no consent page (${r.status}); glewlwyd said:\n${glew.logs().split('\n').slice(-8).join('\n')}`);
      assert.equal(await callsSvc(srv, r.token), 200);
    });
  }

  it('a provider set to a method its client may not use: the code exchange is refused (upstream_code_refused)', async () => {
    const r = await signIn(srv, 'glew-wrong', viaGlewlwyd);
    assert.equal(r.token, undefined);
    assert.match(r.page, /Sign-in failed/);
    await waitFor(() => srv.logs().find((l) => l.event === 'oauth.upstream_refused' && l.reason === 'upstream_code_refused' && l.upstream === 'glew-wrong'), 'the refusal logged');
  });
});

describe('sign-in through the corporate IdP (node-oidc-provider) with each token-endpoint auth method (real svc serve)', function () {
  this.timeout(90_000);
  let idp: Idp;
  let srv: Served | undefined;
  let port: number;
  afterEach(async () => {
    await srv?.stop();
    srv = undefined;
  });
  before(async () => {
    port = await freePort();
    idp = await startIdp({ redirectUris: [`http://127.0.0.1:${port}/interaction/callback/corp`] });
  });
  after(() => idp?.stop());

  const viaIdp = (url: URL) => idp.signIn(url, 'ada@acme.example');
  const corp = (more: Record<string, unknown>) => ({ name: 'corp', issuer: idp.issuer, client_id: 'fastsvc-login', scopes: ['openid', 'email'], rules: [RULE], ...more });

  it('client_secret_basic (the default) and client_secret_post, each the only one the IdP takes from the client', async () => {
    for (const method of ['client_secret_basic', 'client_secret_post'] as const) {
      const c = await idp.saveClient({ client_id: 'fastsvc-login', token_endpoint_auth_method: method });
      srv = await serveManifest(manifest([corp({ client_secret: '${CORP_SECRET}', ...(method === 'client_secret_post' && { auth_method: method }) })]), { port, env: { CORP_SECRET: c.client_secret } });
      const r = await signIn(srv, undefined, viaIdp);
      assert.ok(r.token, `${method}: no consent page (${r.status}): ${r.page.slice(0, 300)}`);
      assert.equal(await callsSvc(srv, r.token), 200);
      await srv.stop();
      srv = undefined;
    }
  });

  it('private_key_jwt with a PEM (PKCS#8) ES256 key', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    await idp.saveClient({ client_id: 'fastsvc-login', token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256', jwks: { keys: [await exportJWK(publicKey)] } });
    srv = await serveManifest(manifest([corp({ auth_method: 'private_key_jwt', private_key_file: 'keys/fastsvc.pem' })]), {
      port, files: { 'keys/fastsvc.pem': secret(await exportPKCS8(privateKey)) },
    });
    const r = await signIn(srv, undefined, viaIdp);
    assert.ok(r.token, `no consent page (${r.status}): ${r.page.slice(0, 300)}`);
    assert.equal(await callsSvc(srv, r.token), 200);
  });
});
