// Resource-server mode end to end: the real `svc serve` accepting the access tokens of the
// corporate IdP (test/idp/corporate-idp.mjs: node-oidc-provider in its own process, an
// identity provider fastsvc did not write). Its JWT access tokens (RFC 9068) and its opaque
// ones (introspected, RFC 7662) call /svc, /mcp and /ws with the scopes their groups map to;
// the MCP SDK 1.x client finds the IdP from the 401 and the protected-resource metadata, signs
// a person in there and calls tools with the token it got; the v2 client calls with an
// external token in the 2026-07-28 era; tenant binding takes its value from the token's
// org_id claim; the IdP rotates its signing key mid-run and calls keep working with no
// restart; a token revoked at the IdP stops working within introspection.cache_ttl (an open
// /ws socket on it is closed with 4401); refused calls are in the audit log with the issuer.

import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { startIdp, type Idp } from '../helpers/idp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { freePort } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';
import { secret, secretTokens } from '../helpers/secrets.js';

const TENANT = { type: 'object', properties: { tenant: { type: 'string', pattern: '^[a-z0-9-]+$' } }, required: ['tenant'] };
const SCOPES = ['notes.read', 'notes.write', 'tenant:acme.read', 'tenant:evil.read'];
/** What the IdP's tokens can hold here (its scope_map; direct_scopes off): tenant:evil.read is declared, and no issuer grants it. */
const GRANTABLE = ['notes.read', 'notes.write', 'tenant:acme.read'];

type Json = Record<string, unknown>;

/** POST /svc/tools/NAME: status and body. */
async function svc(url: string, token: string, tool: string, args: Json = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  return { status: res.status, body: (await res.json()) as Json };
}

/** One /ws socket: the 2025 initialize, then tools/call; the call's JSON-RPC answer (or the handshake's HTTP status). */
function ws(url: string, token: string, tool: string, args: Json = {}): Promise<Json | number> {
  return new Promise((resolve, reject) => {
    const s = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
    s.on('unexpected-response', (_req, res) => resolve(res.statusCode!));
    s.on('error', reject);
    s.on('open', () => s.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'rs-e2e', version: '1' } } })));
    s.on('message', (data) => {
      const m = JSON.parse(String(data)) as Json;
      if (m.id === 1) {
        s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
        s.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: args } }));
      } else if (m.id === 2) {
        s.close();
        resolve(m);
      }
    });
  });
}

/** The SDK 1.x client over /mcp (2025-11-25, a session) with a token in the header: the tool's text. */
async function legacyCall(url: string, token: string, tool: string, args: Json = {}): Promise<string> {
  const client = new LegacyClient({ name: 'rs-e2e', version: '1.0.0' });
  await client.connect(new LegacyTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  try {
    const r = await client.callTool({ name: tool, arguments: args });
    return (r.content as { text: string }[])[0]!.text;
  } finally {
    await client.close();
  }
}

/** An MCP client that signs a person in at the corporate IdP, as a desktop client would with a browser. */
class IdpSignIn implements OAuthClientProvider {
  saved?: OAuthTokens;
  code?: string;
  readonly authorizationUrls: URL[] = [];
  #verifier = '';
  constructor(readonly idp: Idp, readonly username: string) {}
  get redirectUrl() {
    return 'http://127.0.0.1:59997/callback';
  }
  get clientMetadata() {
    return { client_name: 'Acme MCP CLI', redirect_uris: [this.redirectUrl], token_endpoint_auth_method: 'none' };
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: 'mcp-cli' }; // pre-registered at the IdP: a public native client
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = secretTokens(t);
  }
  async redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
    const back = await this.idp.signIn(url, this.username);
    this.code = secret(back.searchParams.get('code') ?? undefined);
  }
  saveCodeVerifier(v: string) {
    this.#verifier = secret(v);
  }
  codeVerifier() {
    return this.#verifier;
  }
}

describe('resource-server mode with the corporate IdP (real svc serve, real clients)', function () {
  this.timeout(60_000);
  let idp: Idp;
  let srv: Served;
  let port: number;
  const audits = () => srv.logs().filter((l) => l.audit === true);

  before(async () => {
    port = await freePort();
    // At the issuer's origin: with an issuer path the IdP's RFC 8414 path-inserted document lists endpoints without
    // that path (an IdP helper bug, reported); a path issuer's discovery is covered in test/unit/external-issuers.test.ts.
    idp = await startIdp();
    srv = await serveManifest({
      version: 1,
      name: 'acme-notes',
      server: { host: '127.0.0.1' },
      routes: { public: ['/healthz'], protected: ['/svc', '/mcp', '/ws'] },
      audit: { to: 'stderr' },
      profile: { scopes: SCOPES },
      external_issuers: [{
        issuer: idp.issuer,
        audience: `http://127.0.0.1:${port}/mcp`,
        jwks_refetch_interval: 1,
        scopes_from: ['groups', 'scope'],
        direct_scopes: false,
        scope_map: { staff: ['notes.read', 'tenant:acme.read'], 'mcp-admins': ['notes.write'], 'machines.read': ['notes.read'] },
        claims: { tenant: 'org_id' },
        introspection: { client_id: 'fastsvc-rs', client_secret: '${IDP_RS_SECRET}', cache_ttl: 1 },
      }],
      tools: [
        { name: 'notes.list', description: 'Lists notes.', required_scopes: ['notes.read'], template: 'no notes yet' },
        { name: 'notes.add', description: 'Adds a note.', input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, required_scopes: ['notes.read', 'notes.write'], template: 'added {{text}}' },
        { name: 'orders.mine', description: 'Orders of the caller\'s tenant.', input_schema: TENANT, bind: { tenant: 'principal.claims.tenant' }, required_scopes: ['tenant:{{tenant}}.read'], template: 'orders of {{tenant}}: 3' },
      ],
    }, { port, env: { IDP_RS_SECRET: idp.clients['fastsvc-rs']!.client_secret } });
  });
  after(async () => {
    await srv?.stop();
    await idp?.stop();
  });

  const userJwt = async (username: string, scope?: string) => (await idp.userToken({ username, resource: `${srv.url}/mcp`, format: 'jwt', ...(scope && { scope }) })).access_token;

  it('publishes the IdP in the protected-resource metadata, and the 401 points there, asking only for scopes it can grant', async () => {
    const res = await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST' });
    assert.equal(res.status, 401);
    const challenge = res.headers.get('www-authenticate')!;
    assert.match(challenge, /^Bearer /);
    assert.ok(challenge.includes(`resource_metadata="${srv.url}/.well-known/oauth-protected-resource/svc"`), challenge);
    assert.ok(challenge.includes(`scope="${GRANTABLE.join(' ')}"`), challenge);
    const prm = (await (await fetch(`${srv.url}/.well-known/oauth-protected-resource/mcp`)).json()) as Json;
    assert.equal(prm.resource, `${srv.url}/mcp`);
    assert.deepEqual(prm.authorization_servers, [idp.issuer]);
    assert.deepEqual(prm.scopes_supported, GRANTABLE);
    const bad = await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers: { authorization: 'Bearer not-a-token-anyone-knows' } });
    assert.equal(bad.status, 401);
    assert.ok(bad.headers.get('www-authenticate')!.includes(`error="invalid_token", scope="${GRANTABLE.join(' ')}"`), bad.headers.get('www-authenticate')!);
  });

  it('a JWT access token calls /svc, /mcp and /ws with the scopes its groups map to', async () => {
    const ada = await userJwt('ada@acme.example'); // groups mcp-admins, staff
    const grace = await userJwt('grace@acme.example'); // staff only
    assert.equal(ada.split('.').length, 3);
    const added = await svc(srv.url, ada, 'notes.add', { text: 'hi' });
    assert.equal(added.status, 200);
    assert.deepEqual(added.body.content, [{ type: 'text', text: 'added hi' }]);
    assert.equal((await svc(srv.url, grace, 'notes.add', { text: 'hi' })).status, 403);
    assert.equal((await svc(srv.url, grace, 'notes.list')).status, 200);
    assert.equal(await legacyCall(srv.url, ada, 'notes.add', { text: 'via mcp' }), 'added via mcp');
    const viaWs = await ws(srv.url, ada, 'notes.add', { text: 'via ws' }) as Json;
    assert.deepEqual((viaWs.result as Json).content, [{ type: 'text', text: 'added via ws' }]);
    const deniedWs = await ws(srv.url, grace, 'notes.add', { text: 'no' }) as { error: { code: number; data: { missing: string[] } } };
    assert.equal(deniedWs.error.code, -32003);
    assert.deepEqual(deniedWs.error.data.missing, ['notes.write']);
    const denial = await waitFor(() => audits().find((l) => l.decision === 'deny' && l.sub === 'acme-1002' && l.capability === 'tool:notes.add'), 'grace\'s denial in the audit log');
    assert.equal(denial.token_kind, 'external');
    assert.equal(denial.issuer, idp.issuer);
  });

  it('an introspected opaque token calls /svc, /mcp and /ws the same way', async () => {
    const t = (await idp.userToken({ username: 'ada@acme.example', resource: `${srv.url}/mcp`, format: 'opaque' })).access_token;
    assert.notEqual(t.split('.').length, 3, 'opaque');
    assert.equal((await svc(srv.url, t, 'notes.add', { text: 'opaque' })).status, 200);
    assert.equal(await legacyCall(srv.url, t, 'notes.list'), 'no notes yet');
    assert.deepEqual(((await ws(srv.url, t, 'notes.list')) as { result: Json }).result.content, [{ type: 'text', text: 'no notes yet' }]);
    const machine = (await idp.clientCredentialsToken({ scope: 'machines.read', resource: `${srv.url}/mcp`, format: 'opaque' })).access_token;
    assert.equal((await svc(srv.url, machine, 'notes.list')).status, 200);
    assert.equal((await svc(srv.url, machine, 'notes.add', { text: 'x' })).status, 403);
  });

  it('tenant binding takes the tenant from the token\'s org_id claim', async () => {
    const ada = await userJwt('ada@acme.example');
    assert.deepEqual((await svc(srv.url, ada, 'orders.mine')).body.content, [{ type: 'text', text: 'orders of acme: 3' }]);
    const other = await svc(srv.url, ada, 'orders.mine', { tenant: 'evil' });
    assert.equal(other.status, 403);
    assert.equal((other.body.error as Json).code, 'ARGUMENT_BOUND');
    const opaque = (await idp.userToken({ username: 'ada@acme.example', resource: `${srv.url}/mcp`, format: 'opaque' })).access_token;
    assert.equal((await svc(srv.url, opaque, 'orders.mine')).status, 200);
  });

  it('the SDK 1.x client finds the IdP from the 401, signs the person in there, and calls tools with the token', async () => {
    const provider = new IdpSignIn(idp, 'ada@acme.example');
    const mcpUrl = new URL(`${srv.url}/mcp`);
    const first = new LegacyTransport(mcpUrl, { authProvider: provider });
    await assert.rejects(new LegacyClient({ name: 'rs-e2e', version: '1' }).connect(first), /Unauthorized/);
    assert.equal(provider.authorizationUrls[0]?.origin, idp.url, 'sent to the IdP, not to fastsvc');
    assert.equal(provider.authorizationUrls[0]?.searchParams.get('resource'), `${srv.url}/mcp`);
    await first.finishAuth(provider.code!);
    const client = new LegacyClient({ name: 'rs-e2e', version: '1' });
    await client.connect(new LegacyTransport(mcpUrl, { authProvider: provider }));
    try {
      const listed = await client.listTools();
      assert.deepEqual(listed.tools.map((t) => t.name).sort(), ['notes.add', 'notes.list', 'orders.mine']);
      assert.deepEqual((await client.callTool({ name: 'orders.mine', arguments: {} })).content, [{ type: 'text', text: 'orders of acme: 3' }]);
    } finally {
      await client.close();
    }
  });

  it('the v2 client calls /mcp in the 2026-07-28 era with an external token', async () => {
    const token = await userJwt('ada@acme.example');
    const client = new ModernClient({ name: 'rs-e2e', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => token } }));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.deepEqual((await client.callTool({ name: 'notes.add', arguments: { text: 'modern' } })).content, [{ type: 'text', text: 'added modern' }]);
    } finally {
      await client.close();
    }
  });

  it('the IdP rotates its signing key mid-run: tokens signed with the new key work with no restart, old ones too', async () => {
    const before = await userJwt('ada@acme.example');
    assert.equal((await svc(srv.url, before, 'notes.list')).status, 200);
    const { kid } = await idp.rotateKey();
    const after = await userJwt('ada@acme.example');
    assert.equal(JSON.parse(Buffer.from(after.split('.')[0]!, 'base64url').toString()).kid, kid);
    await waitFor(async () => ((await svc(srv.url, after, 'notes.list')).status === 200 ? true : undefined), 'the new key to be fetched (at most one jwks_refetch_interval)');
    assert.equal((await svc(srv.url, after, 'notes.add', { text: 'rotated' })).status, 200);
    assert.equal(await legacyCall(srv.url, after, 'notes.list'), 'no notes yet');
    assert.equal((await svc(srv.url, before, 'notes.list')).status, 200, 'the old key is still published');
    await waitFor(() => srv.logs().find((l) => l.event === 'external.keys_fetched' && (l.kids as string[]).includes(kid)), 'the external.keys_fetched log line naming the new key');
  });

  it('a token revoked at the IdP stops working within introspection.cache_ttl', async () => {
    const t = (await idp.userToken({ username: 'grace@acme.example', resource: `${srv.url}/mcp`, format: 'opaque' })).access_token;
    assert.equal((await svc(srv.url, t, 'notes.list')).status, 200);
    await idp.revoke(t);
    const refused = await waitFor(async () => {
      const r = await svc(srv.url, t, 'notes.list');
      return r.status === 401 ? r : undefined;
    }, 'the revocation to be seen (cache_ttl: 1 s)');
    assert.equal((refused.body.error as Json).code, 'UNAUTHENTICATED');
    await waitFor(() => audits().find((l) => l.reason === 'introspection_inactive' && l.capability === '/svc'), 'the refusal\'s audit line');
  });

  it('an open /ws socket on an introspected token closes (4401) once the token is revoked and cache_ttl has passed', async () => {
    const t = (await idp.userToken({ username: 'grace@acme.example', resource: `${srv.url}/mcp`, format: 'opaque' })).access_token;
    const s = new WebSocket(`${srv.url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${t}` } });
    const closed = new Promise<number>((resolve) => s.on('close', (code) => resolve(code)));
    const answers: Json[] = [];
    s.on('message', (d) => answers.push(JSON.parse(String(d)) as Json));
    await new Promise((resolve, reject) => s.on('open', resolve).on('error', reject));
    let id = 0;
    const ping = () => s.send(JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'ping' }));
    ping();
    await waitFor(() => (answers.some((a) => a.id === 1) ? true : undefined), 'the first answer');
    await idp.revoke(t);
    // Each message re-checks the credential; once the introspection answer is older than cache_ttl it is asked again.
    const code = await waitFor(async () => {
      if (s.readyState === WebSocket.OPEN) ping();
      return s.readyState === WebSocket.CLOSED ? closed : undefined;
    }, 'the socket to close', 5000, 200);
    assert.equal(code, 4401);
  });
});
