// Client ID Metadata Documents through `svc serve`: a loopback HTTPS document server
// (test/helpers/cimd-docs.ts, its own throwaway CA) publishes the clients' documents.
// - With the development allowance (allow_private_addresses + ca_file), an independent
//   client (oauth4webapi, client_id = the document's URL, no registration) and the MCP
//   client 2.4 (clientMetadataUrl) complete the flow and call /svc and /mcp; the document
//   is fetched once and then served from the cache its Cache-Control allows. The 2026-07-28
//   client auth scenarios that apply to a server, with client 2.4: CIMD, pre-registration
//   with client_secret_basic, RFC 9207 iss (a wrong one is refused, fastsvc's accepted),
//   no offline_access asked of a server that does not advertise it.
// - With the defaults, the same URL (localhost resolves to 127.0.0.1) is refused before
//   any connection: the document server sees no request and the log says why.
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { auth, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';
import { startDocServer, type DocServer } from '../helpers/cimd-docs.js';
import { authorize, discover, exchange, ScriptedProvider } from './oauth-harness.js';

// Nothing listens here: the scripted browser stops at the first redirect off the server.
const CALLBACK = 'http://127.0.0.1:59998/callback';

const SECRET = 'a-long-client-secret-for-the-basic-client';

function manifest(cimd: Record<string, unknown>): Record<string, unknown> {
  return {
    version: 1,
    name: 'cimd-e2e',
    server: { host: '127.0.0.1', port: 8080 },
    routes: { public: ['/', '/healthz'], protected: ['/svc', '/mcp', '/ws'] },
    oauth: { enabled: true, provider: { type: 'memory' }, login: { mode: 'auto', subject: 'dev' }, client_id_metadata_documents: cimd,
      clients: [{ client_id: 'pre-registered', client_secret: SECRET, redirect_uris: [CALLBACK] }] },
    profile: { scopes: [{ name: 'notes.read', description: 'Read notes.' }] },
    tools: [{ name: 'notes.search', description: 'Finds notes.', input_schema: { type: 'object', properties: { q: { type: 'string' } } }, required_scopes: ['notes.read'], template: "no notes match '{{q}}'" }],
  };
}

const document = (name: string) => ({
  client_name: name, redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
  token_endpoint_auth_method: 'none', application_type: 'native',
});

describe('Client ID Metadata Documents through `svc serve`', function () {
  this.timeout(60_000);
  let docs: DocServer;
  before(async () => {
    docs = await startDocServer();
  });
  after(() => docs.close());

  describe('with the development allowance and the test CA', () => {
    let srv: Served;
    before(async () => {
      srv = await serveManifest(manifest({ allow_private_addresses: true, ca_file: docs.caFile }));
    });
    after(() => srv.stop());

    it('advertises client_id_metadata_document_supported and the iss parameter, not offline_access', async () => {
      const as = await discover(srv.url);
      assert.equal(as.client_id_metadata_document_supported, true);
      assert.equal(as.authorization_response_iss_parameter_supported, true);
      assert.ok(!(as.scopes_supported ?? []).includes('offline_access'));
    });

    it('oauth4webapi: the document URL is the client_id; code flow, token on /svc; the document is fetched once (Cache-Control)', async () => {
      const clientId = docs.publish('/apps/o4w.json', document('O4W Notes'), { 'cache-control': 'max-age=600' });
      const as = await discover(srv.url);
      const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none', redirect_uris: [CALLBACK] };
      for (const round of [1, 2]) {
        const a = await authorize(as, client, { scope: 'notes.read', resource: `${srv.url}/svc` });
        assert.equal(a.callback?.searchParams.get('iss'), srv.url, `round ${round}: RFC 9207 iss`);
        const tokens = await exchange(as, client, oauth.None(), a, `${srv.url}/svc`);
        const res = await fetch(`${srv.url}/svc/tools/notes.search`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' }, body: '{"q":"x"}' });
        assert.equal(res.status, 200, `round ${round}`);
        assert.equal(((await res.json()) as { result: string }).result, "no notes match 'x'");
      }
      assert.equal(docs.hits.get('/apps/o4w.json'), 1);
    });

    it('the MCP client 2.4 uses clientMetadataUrl instead of registering, authorizes and calls a tool on /mcp', async () => {
      const clientId = docs.publish('/apps/mcp-client.json', document('MCP Client 2.4'));
      const provider = Object.assign(new ScriptedProvider(CALLBACK, 'MCP Client 2.4'), { clientMetadataUrl: clientId });
      const mcpUrl = new URL(`${srv.url}/mcp`);
      assert.equal(await auth(provider as never, { serverUrl: mcpUrl, scope: 'notes.read' }), 'REDIRECT');
      assert.equal(provider.authorizationUrls[0]!.searchParams.get('client_id'), clientId);
      assert.equal(provider.clientInformation()?.client_id, clientId, 'the URL is the client id (registration is off here)');
      const code = await provider.code();
      assert.equal(provider.iss, srv.url, 'RFC 9207 iss in the authorization response');
      assert.equal(await auth(provider as never, { serverUrl: mcpUrl, authorizationCode: code, iss: provider.iss }), 'AUTHORIZED');
      const client = new Client({ name: 'cimd-e2e', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider as never }));
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
        const out = await client.callTool({ name: 'notes.search', arguments: { q: 'y' } });
        assert.deepEqual(out.content, [{ type: 'text', text: "no notes match 'y'" }]);
      } finally {
        await client.close();
      }
      assert.equal(docs.hits.get('/apps/mcp-client.json'), 1);
    });
    it('the MCP client 2.4, pre-registered confidential client: client_secret_basic at /token, iss checked, no offline_access asked', async () => {
      const provider = new ScriptedProvider(CALLBACK, 'pre-registered');
      provider.saveClientInformation({ client_id: 'pre-registered', client_secret: SECRET, token_endpoint_auth_method: 'client_secret_basic' });
      const mcpUrl = new URL(`${srv.url}/mcp`);
      assert.equal(await auth(provider as never, { serverUrl: mcpUrl }), 'REDIRECT');
      const asked = provider.authorizationUrls[0]!;
      assert.equal(asked.searchParams.get('client_id'), 'pre-registered');
      assert.equal(asked.searchParams.get('resource'), `${srv.url}/mcp`);
      assert.doesNotMatch(asked.searchParams.get('scope') ?? '', /offline_access/);
      const code = await provider.code();
      assert.equal(await auth(provider as never, { serverUrl: mcpUrl, authorizationCode: code, iss: provider.iss }), 'AUTHORIZED');
      const client = new Client({ name: 'cimd-e2e-basic', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider as never }));
      try {
        assert.deepEqual((await client.callTool({ name: 'notes.search', arguments: { q: 'z' } })).content, [{ type: 'text', text: "no notes match 'z'" }]);
      } finally {
        await client.close();
      }
      assert.deepEqual(srv.logs().filter((l) => l.event === 'oauth.grant_error'), [], 'no refused token request');
    });

    it('the MCP client 2.4 refuses an authorization response whose iss is wrong (RFC 9207) — fastsvc sends the right one', async () => {
      const clientId = docs.publish('/apps/iss.json', document('Iss Checker'));
      const provider = Object.assign(new ScriptedProvider(CALLBACK, 'Iss Checker'), { clientMetadataUrl: clientId });
      const mcpUrl = new URL(`${srv.url}/mcp`);
      assert.equal(await auth(provider as never, { serverUrl: mcpUrl, scope: 'notes.read' }), 'REDIRECT');
      const code = await provider.code();
      await assert.rejects(auth(provider as never, { serverUrl: mcpUrl, authorizationCode: code, iss: 'https://impostor.example' }), /iss|issuer/i);
    });
  });

  describe('with the defaults (no private addresses)', () => {
    let srv: Served;
    before(async () => {
      srv = await serveManifest(manifest({ ca_file: docs.caFile }));
    });
    after(() => srv.stop());

    it('refuses a client_id URL whose host resolves to a loopback address, without connecting to it', async () => {
      const clientId = docs.publish('/apps/ssrf.json', document('Looks Harmless'));
      const as = await discover(srv.url);
      const a = await authorize(as, { client_id: clientId, token_endpoint_auth_method: 'none' }, { scope: 'notes.read', redirectUri: CALLBACK });
      assert.equal(a.callback, undefined, 'never sent back with a code');
      assert.equal(a.res.status, 400);
      assert.match(await a.res.text(), /invalid_client/);
      assert.equal(docs.hits.get('/apps/ssrf.json'), undefined, 'no request reached the address');
      // The log is written asynchronously: the line may land just after the answer.
      const refused = await waitFor(() => srv.logs().find((l) => l.event === 'oauth.cimd_refused'), 'the oauth.cimd_refused log line');
      assert.equal(refused.url, clientId);
      assert.match(String(refused.reason), /localhost resolves to 127\.0\.0\.1, a non-public address/);
    });
  });
});

