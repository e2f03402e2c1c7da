// The authorization server's rules at the MCP 2026-07-28 revision, on the module itself
// (oauth-harness.ts: why not `svc serve` is said there; the whole server is in
// oauth-cimd.test.ts): what a Client ID Metadata Document must be (client_id equal to
// its URL, no shared secret, exact redirect URIs, answered 200 without redirects, at
// most 5 KiB, within 2.5 s), the manifest's allowed_hosts and off switch; application_type (native:
// loopback redirect on any port; web: exact); RFC 9207 `iss` on successful and error
// authorization responses; offline_access neither advertised nor needed for refresh.
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { startDocServer, type DocServer } from '../helpers/cimd-docs.js';
import { authorize, discover, exchange, insecure, register, startOAuthApp, whoami, type Harness } from './oauth-harness.js';

const CALLBACK = 'http://127.0.0.1:59997/callback';
const meta = (extra: Record<string, unknown> = {}) => ({
  client_name: 'Rules App', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], ...extra,
});

describe('authorization server rules at 2026-07-28 (CIMD, application_type, iss, offline_access)', function () {
  this.timeout(30_000);
  let docs: DocServer;
  before(async () => {
    docs = await startDocServer();
  });
  after(() => docs.close());

  describe('client id metadata documents', () => {
    let h: Harness;
    before(async () => {
      h = await startOAuthApp({ oauth: { client_id_metadata_documents: { allow_private_addresses: true, ca_file: docs.caFile } } });
    });
    after(() => h.close());

    /** An authorization request for `clientId`; returns the callback (if any) and the page shown. */
    async function tryClient(clientId: string, redirectUri = CALLBACK) {
      const as = await discover(h.url);
      const a = await authorize(as, { client_id: clientId, token_endpoint_auth_method: 'none' }, { scope: 'files.read', redirectUri });
      return { ...a, page: a.callback ? '' : await a.res.text() };
    }

    it('a valid document: code flow with a public client, token accepted', async () => {
      const clientId = docs.publish('/ok.json', meta());
      const as = await discover(h.url);
      const client = { client_id: clientId, token_endpoint_auth_method: 'none' } as oauth.Client;
      const a = await authorize(as, client, { scope: 'files.read', redirectUri: CALLBACK });
      const tokens = await exchange(as, client, oauth.None(), a);
      const me = await whoami(h.url, tokens.access_token);
      assert.equal(me.status, 200);
      assert.equal(me.body.clientId, clientId);
    });

    for (const [name, path, answer, reason] of [
      ['a document whose client_id is another URL', '/other.json', { body: JSON.stringify({ client_id: 'https://elsewhere.example/app.json', ...meta() }) }, /client_id does not match/],
      ['a document with a client_secret', '/secret.json', undefined, /must not use shared-secret token endpoint authentication/],
      ['a redirect to a valid document', '/moved.json', { status: 302, headers: { location: '/ok.json' }, body: '' }, /answered 302 \(redirects are not followed\)/],
      ['a document larger than 5 KiB', '/big.json', undefined, /larger than 5120 bytes/],
      ['a 404', '/missing.json', { status: 404, body: '{}' }, /answered 404/],
      ['a document that does not finish arriving (2.5 s limit)', '/stalled.json', { body: '{"client_id":', stall: true }, /no complete answer within 2500 ms/],
    ] as const) {
      it(`refuses ${name}: an error page, no redirect to the client`, async () => {
        const clientId = path === '/secret.json' ? docs.publish(path, meta({ client_secret: 'shh', token_endpoint_auth_method: 'client_secret_post' }))
          : path === '/big.json' ? docs.publish(path, meta({ client_name: 'x'.repeat(6000) }))
            : docs.answer(path, answer!);
        const r = await tryClient(clientId);
        assert.equal(r.callback, undefined);
        assert.equal(r.res.status, 400);
        assert.match(r.page, /invalid_client/);
        const why = [h.logs.filter((l) => l.event === 'oauth.authorization.error').at(-1)?.detail,
          ...h.logs.filter((l) => l.event === 'oauth.cimd_refused' && l.url === clientId).map((l) => l.reason)].join(' | ');
        assert.match(why, reason);
        if (path !== '/other.json' && path !== '/secret.json') assert.equal(docs.hits.get(path), 1, 'a refused fetch is remembered, not repeated');
      });
    }

    it('redirect URIs are exact: another path on the listed origin is refused', async () => {
      const clientId = docs.publish('/exact.json', meta({ redirect_uris: ['https://app.example/cb'] }));
      const r = await tryClient(clientId, 'https://app.example/cb/../evil');
      assert.equal(r.callback, undefined);
      assert.match(r.page, /redirect_uri/);
    });

    it('a client_id URL with dot segments is not even fetched', async () => {
      const before = docs.hits.get('/ok.json') ?? 0;
      const r = await tryClient(`${docs.origin}/./ok.json`);
      assert.equal(r.callback, undefined);
      assert.equal(docs.hits.get('/ok.json') ?? 0, before);
    });
  });

  it('allowed_hosts: a host not listed is refused without a request', async () => {
    const h = await startOAuthApp({ oauth: { client_id_metadata_documents: { allowed_hosts: ['apps.example'], allow_private_addresses: true, ca_file: docs.caFile } } });
    try {
      const clientId = docs.publish('/unlisted.json', meta());
      const as = await discover(h.url);
      const a = await authorize(as, { client_id: clientId, token_endpoint_auth_method: 'none' }, { scope: 'files.read', redirectUri: CALLBACK });
      assert.equal(a.callback, undefined);
      assert.equal(a.res.status, 400);
      assert.equal(docs.hits.get('/unlisted.json'), undefined);
      assert.match(String(h.logs.find((l) => l.event === 'oauth.cimd_refused')?.reason), /not in oauth\.client_id_metadata_documents\.allowed_hosts/);
    } finally {
      await h.close();
    }
  });

  it('enabled: false — not advertised, and an https client_id is an unknown client', async () => {
    const h = await startOAuthApp({ oauth: { client_id_metadata_documents: { enabled: false, allow_private_addresses: true, ca_file: docs.caFile } } });
    try {
      const clientId = docs.publish('/off.json', meta());
      const as = await discover(h.url);
      assert.equal(as.client_id_metadata_document_supported, undefined);
      const a = await authorize(as, { client_id: clientId, token_endpoint_auth_method: 'none' }, { scope: 'files.read', redirectUri: CALLBACK });
      assert.equal(a.callback, undefined);
      assert.match(await a.res.text(), /invalid_client/);
      assert.equal(docs.hits.get('/off.json'), undefined);
    } finally {
      await h.close();
    }
  });

  describe('application_type, iss, offline_access (dynamic registration, still available)', () => {
    let h: Harness;
    let as: oauth.AuthorizationServer;
    before(async () => {
      h = await startOAuthApp();
      as = await discover(h.url);
    });
    after(() => h.close());

    it('native: a loopback redirect URI matches on any port', async () => {
      const client = await register(as, { application_type: 'native', redirect_uris: ['http://127.0.0.1:4000/callback'] });
      const a = await authorize(as, client, { scope: 'files.read', redirectUri: 'http://127.0.0.1:51234/callback' });
      assert.equal(a.callback?.origin, 'http://127.0.0.1:51234');
      assert.ok(a.callback?.searchParams.get('code'));
    });

    it('web: the same redirect URI on another port is refused', async () => {
      const client = await register(as, { application_type: 'web', redirect_uris: ['http://127.0.0.1:4000/callback'] });
      const a = await authorize(as, client, { scope: 'files.read', redirectUri: 'http://127.0.0.1:51234/callback' });
      assert.equal(a.callback, undefined);
      assert.match(await a.res.text(), /redirect_uri did not match/);
      const exact = await authorize(as, client, { scope: 'files.read', redirectUri: 'http://127.0.0.1:4000/callback' });
      assert.ok(exact.callback?.searchParams.get('code'));
    });

    it('iss is in error responses too (invalid_target for a foreign resource) as in successful ones', async () => {
      const client = await register(as);
      const bad = await authorize(as, client, { scope: 'files.read', resource: 'https://other.example/mcp' });
      assert.equal(bad.callback?.searchParams.get('error'), 'invalid_target');
      assert.equal(bad.callback?.searchParams.get('iss'), h.url);
      const ok = await authorize(as, client, { scope: 'files.read' });
      assert.equal(ok.callback?.searchParams.get('iss'), h.url);
    });

    it('offline_access is not advertised; a client asking for it still gets a working refresh token, and the scope is not granted', async () => {
      assert.ok(!(as.scopes_supported ?? []).includes('offline_access'));
      const client = await register(as);
      const a = await authorize(as, client, { scope: 'files.read offline_access' });
      const tokens = await exchange(as, client, oauth.None(), a);
      assert.deepEqual(tokens.scope?.split(' '), ['files.read']);
      assert.ok(tokens.refresh_token);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token, insecure));
      assert.equal((await whoami(h.url, refreshed.access_token)).status, 200);
    });
  });
});
