// OAuth against the real server (serve() on 127.0.0.1:0 with oauth enabled): the token
// from an independent client (oauth4webapi) works on /svc, /mcp and /ws next to the
// static token; revocation reaches an already-open WebSocket; and the official MCP SDK
// client's own OAuth support discovers, registers, authorizes, meets a 403
// insufficient_scope, re-authorizes with the wider scope and succeeds.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { pino } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { FastSvc } from '../../src/core/fast-svc.js';
import { serve, type Served } from '../../src/server/listen.js';
import { RawMcp, RawWs } from '../helpers/mcp-app.js';
import { exchange, insecure, authorize, ScriptedProvider } from './oauth-harness.js';
import { secret } from '../helpers/secrets.js';

const SCOPES = [{ name: 'files.read', description: 'Read files' }, { name: 'files.write', description: 'Change files' }];
const CALLBACK = 'http://127.0.0.1:59999/callback';

function filesApp(): FastSvc {
  const svc = new FastSvc({ name: 'files' });
  svc.tool({ name: 'files.list', description: 'List files.', required_scopes: ['files.read'], handler: (_i, ctx) => `files of ${ctx.principal.sub}` });
  svc.tool({ name: 'files.delete', description: 'Delete a file.', required_scopes: ['files.read', 'files.write'], handler: () => 'deleted' });
  return svc;
}

async function start(staticToken: string): Promise<Served> {
  return serve(filesApp(), {
    server: { host: '127.0.0.1', port: 0 },
    routes: { public: ['/', '/metadata'], protected: ['/svc', '/mcp', '/ws'] },
    auth: { token: staticToken, subject: 'script' },
    oauth: { enabled: true, registration: { enabled: true }, login: { mode: 'auto', subject: 'dev' }, provider: { type: 'memory' } },
    profile: { scopes: SCOPES },
  }, {}, { logger: pino({ level: process.env.LOG_LEVEL ?? 'silent' }) });
}

async function callSvc(url: string, token: string, tool: string) {
  const res = await fetch(`${url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, challenge: res.headers.get('www-authenticate') };
}

describe('OAuth on the real server: /svc, /mcp and /ws', () => {
  let served: Served;
  const staticToken = secret(randomBytes(18).toString('base64url'));
  before(async () => {
    served = await start(staticToken);
  });
  after(() => served.close());

  /** Discovery the way a client does it: 401 → resource_metadata → authorization_servers[0] → RFC 8414. */
  async function discoverFrom401(route: string) {
    const res = await fetch(`${served.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer /);
    const prmUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    assert.equal(prmUrl, `${served.url}/.well-known/oauth-protected-resource${route}`);
    const prm = (await (await fetch(prmUrl!)).json()) as { resource: string; authorization_servers: string[] };
    assert.equal(prm.resource, `${served.url}${route}`);
    const issuer = new URL(prm.authorization_servers[0]!);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    return { as, resource: prm.resource };
  }

  async function tokenFor(scope: string) {
    const { as, resource } = await discoverFrom401('/mcp');
    const client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, {
      redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
    }, insecure));
    const a = await authorize(as, client, { scope, resource });
    return { as, client, tokens: await exchange(as, client, oauth.None(), a, resource) };
  }

  it('publishes the OAuth metadata and accepts the issued token on /svc, /mcp and /ws, beside the static token', async () => {
    const { tokens } = await tokenFor('files.read files.write');
    const svc = await callSvc(served.url, tokens.access_token, 'files.list');
    assert.equal(svc.status, 200);
    assert.equal(svc.body.result, 'files of dev');
    assert.equal((await callSvc(served.url, staticToken, 'files.list')).body.result, 'files of script');

    const mcp = new RawMcp(served.url, tokens.access_token);
    await mcp.initialize();
    const { answer } = await mcp.request('tools/call', { name: 'files.delete', arguments: {} });
    assert.deepEqual((answer?.result as { content: unknown[] }).content, [{ type: 'text', text: 'deleted' }]);

    const ws = RawWs.open(served.url, tokens.access_token);
    await ws.initialize();
    const r = await ws.call('tools/call', { name: 'files.list', arguments: {} });
    assert.deepEqual((r.result as { content: unknown[] }).content, [{ type: 'text', text: 'files of dev' }]);
    ws.socket.close();

    const meta = (await (await fetch(`${served.url}/metadata`)).json()) as { auth: { mode: string }; profile: { issuer: string } };
    assert.equal(meta.auth.mode, 'bearer+oauth');
    assert.equal(meta.profile.issuer, served.url);
  });

  it('answers a missing scope with 403 insufficient_scope naming every scope the tool needs', async () => {
    const { tokens } = await tokenFor('files.read');
    const r = await callSvc(served.url, tokens.access_token, 'files.delete');
    assert.equal(r.status, 403);
    assert.match(r.challenge ?? '', /^Bearer .*error="insufficient_scope"/);
    assert.match(r.challenge ?? '', /scope="files\.read files\.write"/);
    assert.match(r.challenge ?? '', new RegExp(`resource_metadata="${served.url}/.well-known/oauth-protected-resource/svc"`));
  });

  it('a revocation takes effect on the very next request on every transport, including an open WebSocket', async () => {
    const { as, client, tokens } = await tokenFor('files.read');
    const ws = RawWs.open(served.url, tokens.access_token);
    await ws.initialize();
    assert.ok((await ws.call('tools/call', { name: 'files.list', arguments: {} })).result);
    const mcp = new RawMcp(served.url, tokens.access_token);
    await mcp.initialize();

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));

    assert.equal((await callSvc(served.url, tokens.access_token, 'files.list')).status, 401);
    assert.equal((await mcp.request('tools/list')).res.status, 401);
    ws.send({ jsonrpc: '2.0', id: 'after', method: 'tools/call', params: { name: 'files.list', arguments: {} } });
    assert.equal((await ws.closedWith()).code, 4401);
    assert.equal(ws.messages.find((m) => m.id === 'after'), undefined, 'the request after revocation was not answered');
  });

  it('the MCP SDK client discovers, registers, authorizes, meets 403 insufficient_scope, re-authorizes wider and succeeds', async () => {
    const provider = new ScriptedProvider(CALLBACK, 'SDK e2e');
    const mcpUrl = new URL(`${served.url}/mcp`);
    // First authorization through the SDK's own auth(), narrower than the tool will need.
    assert.equal(await auth(provider, { serverUrl: mcpUrl, scope: 'files.read' }), 'REDIRECT');
    assert.equal(await auth(provider, { serverUrl: mcpUrl, authorizationCode: await provider.code() }), 'AUTHORIZED');
    assert.equal(provider.registrations, 1);
    assert.equal(provider.saved?.scope, 'files.read');
    assert.ok(provider.authorizationUrls[0]!.searchParams.get('resource')?.startsWith(served.url));

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    const client = new Client({ name: 'sdk-e2e', version: '1.0.0' });
    await client.connect(transport);
    const listed = await client.callTool({ name: 'files.list', arguments: {} });
    assert.deepEqual(listed.content, [{ type: 'text', text: 'files of dev' }]);

    // files.delete needs files.write: 403 → the SDK re-authorizes with the scope from the challenge.
    await assert.rejects(client.callTool({ name: 'files.delete', arguments: {} }), UnauthorizedError);
    const stepUp = provider.authorizationUrls.at(-1)!;
    assert.equal(stepUp.searchParams.get('scope'), 'files.read files.write');
    await transport.finishAuth(await provider.code());
    assert.equal(provider.saved?.scope, 'files.read files.write');
    const deleted = await client.callTool({ name: 'files.delete', arguments: {} });
    assert.deepEqual(deleted.content, [{ type: 'text', text: 'deleted' }]);
    assert.equal(provider.registrations, 1, 'registered once');
    await client.close();
  });
});
