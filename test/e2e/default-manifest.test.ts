// What `npm start` gives a newcomer: the root svc.yaml (with demo/) copied to a temp dir and
// served by the real CLI (`node dist/cli.js serve <tmp>/svc.yaml`, no SVC_TOKEN, so a token is
// generated). An independent OAuth client (oauth4webapi) and the MCP SDK client's own OAuth
// support complete the flow and call tools on /svc, /mcp and /ws; step-up works; the generated
// token sees every tool; a restart on the same data/oauth.db keeps the client and live tokens.

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import WebSocket from 'ws';
import { parse } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { authorize, discover, exchange, insecure, register, ScriptedProvider } from './oauth-harness.js';
import { ROOT } from '../helpers/cli.js';
import { secret, secretTokens } from '../helpers/secrets.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';
import { snippetOf } from '../helpers/docs-page.js';

const run = promisify(execFile);

// Nothing listens here: the scripted browser stops at the first redirect off the server.
const CALLBACK = 'http://127.0.0.1:59999/callback';

/** The generated token's banner line on stderr: printed on purpose, so the secret scan skips it. */
const BANNER = /^ {2}export SVC_TOKEN=(\S+)$/m;

/** A served root manifest (SVC_TOKEN unset) with the token it generated, once the banner is out too. */
type Cli = Served & { token: string };
async function withToken(s: Served): Promise<Cli> {
  const token = await waitFor(() => BANNER.exec(s.stderr())?.[1], 'the generated token\'s banner', 20_000);
  return Object.assign(s, { token: secret(token) });
}

async function callSvc(url: string, token: string, tool: string, args: Record<string, unknown>) {
  const res = await fetch(`${url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, challenge: res.headers.get('www-authenticate') };
}

/** The SDK 1.x WebSocketClientTransport uses the global WebSocket; this one sends the bearer. */
function bearerWebSocket(token: string): typeof globalThis.WebSocket {
  return class extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols, { headers: { authorization: `Bearer ${token}` } });
    }
  } as unknown as typeof globalThis.WebSocket;
}

async function sdkCall(transport: StreamableHTTPClientTransport | WebSocketClientTransport, name: string, args: Record<string, unknown>) {
  const client = new Client({ name: 'default-manifest-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    const result = await client.callTool({ name, arguments: args });
    return { tools, result };
  } finally {
    await client.close();
  }
}

describe('npm start\'s manifest (root svc.yaml) served by the real CLI, OAuth on', function () {
  this.timeout(60_000);
  let dir: string;
  let manifest: string;
  let srv: Cli | undefined;
  let url: string;
  // From part 1, for the restart: the registered client, a live grant's tokens, a revoked token.
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;
  let kept: oauth.TokenEndpointResponse | undefined;
  let revoked: string | undefined;

  before(async () => {
    if (!existsSync(join(ROOT, 'demo', 'notes.db'))) execFileSync(process.execPath, [join(ROOT, 'scripts', 'make-demo-db.mjs')], { cwd: ROOT });
    srv = await withToken(await serveManifest(readFileSync(join(ROOT, 'svc.yaml'), 'utf8'), { copy: { demo: 'demo' }, unscanned: BANNER }));
    ({ dir, file: manifest, url } = srv);
  });

  after(async () => {
    delete (globalThis as { WebSocket?: unknown }).WebSocket;
    await srv?.stop();
  });

  it('starts on loopback with a generated token and its OAuth state under the manifest\'s data/', () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(url).port, '0');
    assert.match(srv!.token, /^[A-Za-z0-9_-]{32,}$/);
    assert.ok(existsSync(join(dir, 'data', 'oauth.db')), 'data/oauth.db is created next to the manifest');
  });

  it('the banner\'s export line and a /docs curl command, pasted one after the other into a shell, call the tool: both name SVC_TOKEN', async () => {
    const exportLine = BANNER.exec(srv!.stderr())![0].trim();
    const html = await (await fetch(`${url}/docs`)).text();
    assert.match(html, /<code>export SVC_TOKEN=…<\/code>/, '/docs names the variable the banner sets');
    const { stdout } = await run('/bin/bash', ['-c', `${exportLine}\n${snippetOf(html, 'greet.hello')}`], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    assert.equal(JSON.parse(stdout).result, 'Hello, example!');
  });

  it('an independent OAuth client (oauth4webapi): discovery, registration, PKCE with resource, calls on /svc, /mcp and /ws, 403 insufficient_scope, refresh, revocation', async () => {
    as = await discover(url);
    assert.equal(as.issuer, url);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.ok(as.registration_endpoint, 'registration is on');
    assert.ok(as.revocation_endpoint);
    client = await register(as, { redirect_uris: [CALLBACK], client_name: 'default-manifest e2e' });
    assert.ok(client.client_id);
    assert.deepEqual(client.redirect_uris, [CALLBACK]);

    const resource = `${url}/mcp`;
    const a = await authorize(as, client, { scope: 'greet.use', resource });
    assert.equal(a.callback?.origin + a.callback!.pathname, CALLBACK, `auto login ends at the redirect_uri (hops: ${a.browser.hops.join(' → ')})`);
    assert.equal(a.callback!.searchParams.get('iss'), url, 'RFC 9207 iss in the authorization response');
    const tokens = await exchange(as, client, oauth.None(), a, resource);
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(tokens.scope, 'greet.use');
    assert.ok(tokens.refresh_token);

    const svc = await callSvc(url, tokens.access_token, 'greet.hello', { name: 'REST' });
    assert.equal(svc.status, 200);
    assert.equal(svc.body.result, 'Hello, REST!');

    const mcp = await sdkCall(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } } }), 'greet.hello', { name: 'MCP' });
    assert.deepEqual(mcp.tools, ['greet.hello'], 'a greet.use token lists only greet.hello');
    assert.deepEqual(mcp.result.content, [{ type: 'text', text: 'Hello, MCP!' }]);

    (globalThis as { WebSocket?: unknown }).WebSocket = bearerWebSocket(tokens.access_token);
    try {
      const ws = await sdkCall(new WebSocketClientTransport(new URL(`${url.replace(/^http/, 'ws')}/ws`)), 'greet.hello', { name: 'WS' });
      assert.deepEqual(ws.tools, ['greet.hello']);
      assert.deepEqual(ws.result.content, [{ type: 'text', text: 'Hello, WS!' }]);
    } finally {
      delete (globalThis as { WebSocket?: unknown }).WebSocket;
    }

    const denied = await callSvc(url, tokens.access_token, 'notes.search', { q: '' });
    assert.equal(denied.status, 403);
    assert.match(denied.challenge ?? '', /^Bearer .*error="insufficient_scope"/);
    assert.match(denied.challenge ?? '', /scope="notes\.read"/);
    assert.match(denied.challenge ?? '', new RegExp(`resource_metadata="${url}/\\.well-known/oauth-protected-resource/svc"`));

    // Refresh rotates both tokens; the new access token works and keeps the scope.
    const refreshed = secretTokens(await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure)));
    assert.notEqual(refreshed.access_token, tokens.access_token);
    assert.ok(refreshed.refresh_token);
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    assert.equal(refreshed.scope, 'greet.use');
    assert.equal((await callSvc(url, refreshed.access_token, 'greet.hello', { name: 'again' })).body.result, 'Hello, again!');
    kept = refreshed;

    // A second authorization (a fresh browser, so a grant of its own), then revoked: the next call is 401.
    const b = await authorize(as, client, { scope: 'greet.use', resource });
    const other = await exchange(as, client, oauth.None(), b, resource);
    assert.equal((await callSvc(url, other.access_token, 'greet.hello', { name: 'B' })).status, 200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), other.access_token, insecure));
    const after = await callSvc(url, other.access_token, 'greet.hello', { name: 'B' });
    assert.equal(after.status, 401);
    assert.match(after.challenge ?? '', /^Bearer /);
    revoked = other.access_token;
    assert.equal((await callSvc(url, kept.access_token, 'greet.hello', { name: 'A' })).status, 200, 'the other grant is untouched');
  });

  it('the MCP SDK client\'s own OAuth support: discovers, registers, authorizes, meets 403 insufficient_scope on notes.add, steps up and succeeds', async () => {
    const provider = new ScriptedProvider(CALLBACK, 'default-manifest SDK');
    const mcpUrl = new URL(`${url}/mcp`);
    assert.equal(await auth(provider, { serverUrl: mcpUrl, scope: 'greet.use' }), 'REDIRECT');
    const first = provider.authorizationUrls[0]!;
    assert.equal(first.origin + first.pathname, `${url}/authorize`);
    assert.equal(first.searchParams.get('resource'), `${url}/mcp`);
    assert.equal(first.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(await auth(provider, { serverUrl: mcpUrl, authorizationCode: await provider.code() }), 'AUTHORIZED');
    assert.equal(provider.registrations, 1);
    assert.equal(provider.saved?.scope, 'greet.use');

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    const sdk = new Client({ name: 'default-manifest-sdk', version: '1.0.0' });
    await sdk.connect(transport);
    try {
      assert.deepEqual((await sdk.callTool({ name: 'greet.hello', arguments: { name: 'SDK' } })).content, [{ type: 'text', text: 'Hello, SDK!' }]);

      const note = { title: `added by the SDK client ${process.pid}`, body: 'after a step-up' };
      await assert.rejects(sdk.callTool({ name: 'notes.add', arguments: note }), UnauthorizedError);
      const stepUp = provider.authorizationUrls.at(-1)!;
      assert.equal(provider.authorizationUrls.length, 2);
      assert.ok(stepUp.searchParams.get('scope')?.split(' ').includes('notes.write'), `step-up asks for notes.write: ${stepUp.searchParams.get('scope')}`);
      await transport.finishAuth(await provider.code());
      assert.ok(provider.saved?.scope?.split(' ').includes('notes.write'));
      const added = await sdk.callTool({ name: 'notes.add', arguments: note });
      assert.notEqual(added.isError, true, JSON.stringify(added));
      assert.equal(provider.registrations, 1, 'registered once');

      // The row is really there (read with the static token, which holds notes.read).
      const found = await callSvc(url, srv!.token, 'notes.search', { q: note.title });
      assert.equal(found.status, 200);
      assert.deepEqual((found.body.result as { title: string }[]).map((r) => r.title), [note.title]);
    } finally {
      await sdk.close();
    }
  });

  it('the generated static token works on /svc and lists every tool; /metadata says bearer+oauth', async () => {
    const declared = (parse(readFileSync(manifest, 'utf8')) as { tools: { name: string }[] }).tools.map((t) => t.name).sort();
    const res = await fetch(`${url}/svc`, { headers: { authorization: `Bearer ${srv!.token}` } });
    assert.equal(res.status, 200);
    const listing = (await res.json()) as { tools: { name: string }[] };
    assert.deepEqual(listing.tools.map((t) => t.name).sort(), declared);
    assert.equal((await callSvc(url, srv!.token, 'greet.hello', { name: 'script' })).body.result, 'Hello, script!');
    assert.equal((await fetch(`${url}/svc`)).status, 401);

    const meta = (await (await fetch(`${url}/metadata`)).json()) as { auth: { mode: string } };
    assert.equal(meta.auth.mode, 'bearer+oauth');
  });

  it('a restart on the same data/oauth.db keeps the registered client and the live tokens; the revoked one stays dead', async () => {
    assert.ok(kept && revoked && client, 'part 1 ran');
    const oldToken = srv!.token;
    const port = Number(new URL(url).port);
    const stopped = srv!;
    // Same port: the issuer and the tokens' audience are this origin.
    srv = await withToken(await stopped.restart({ port }));
    assert.equal((await stopped.exit).code, 0, 'SIGTERM exits 0');
    assert.equal(srv.url, url);
    assert.notEqual(srv.token, oldToken, 'a generated token lives for one run');
    assert.equal((await callSvc(url, oldToken, 'greet.hello', { name: 'x' })).status, 401);

    const still = await callSvc(url, kept.access_token, 'greet.hello', { name: 'after restart' });
    assert.equal(still.status, 200);
    assert.equal(still.body.result, 'Hello, after restart!');
    assert.equal((await callSvc(url, revoked, 'greet.hello', { name: 'x' })).status, 401);

    // The refresh token from before the restart still rotates (keys and grant survived).
    const refreshed = secretTokens(await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), kept.refresh_token!, insecure)));
    assert.equal((await callSvc(url, refreshed.access_token, 'greet.hello', { name: 'rotated' })).body.result, 'Hello, rotated!');

    // The client registered before the restart authorizes again.
    const resource = `${url}/mcp`;
    const a = await authorize(await discover(url), client, { scope: 'greet.use', resource });
    assert.ok(a.callback?.searchParams.get('code'), `a code for the old client (hops: ${a.browser.hops.join(' → ')})`);
    const fresh = await exchange(as, client, oauth.None(), a, resource);
    assert.equal((await callSvc(url, fresh.access_token, 'greet.hello', { name: 'new code' })).body.result, 'Hello, new code!');
  });
});
