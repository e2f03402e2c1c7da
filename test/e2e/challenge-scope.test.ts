// The scope a first 401 asks for, from the real `svc serve FILE --port 0` (watching on), read
// with the MCP SDK client's own WWW-Authenticate parser: with bearer tokens only, the profile's
// declared scopes on /mcp, /svc and /ws, and after a hot reload that changes profile.scopes the
// new ones; with the OAuth server, exactly the scopes_supported of the protected-resource
// metadata the challenge points at — still after a reload that edits profile.scopes, which
// that server (and so its metadata) applies only on a restart; and never a scope no configured
// issuer can grant — the built-in server's users, clients and sign-in rules, each external
// issuer's scope_map, direct_scopes and `scopes` ceiling decide what is grantable.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { stringify } from 'yaml';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startJwtIssuer } from '../helpers/jwt-issuer.js';
import { secret } from '../helpers/secrets.js';
import { hashPassword } from '../../src/auth/oauth/password.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = randomBytes(18).toString('base64url');
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'challenge-scope', version: '1' } } });

/** The manifest: one tool per declared scope; bearer (a token holding the first scope) or the built-in OAuth server. */
function manifest(scopes: string[], mode: 'bearer' | 'oauth'): string {
  return stringify({
    version: 1,
    name: 'challenge-scope',
    server: { host: '127.0.0.1', port: 0 },
    routes: { public: ['/metadata'], protected: ['/svc', '/mcp', '/ws'] },
    ...(mode === 'bearer'
      ? { auth: { token: '${SVC_TOKEN}', scopes: [scopes[0]] } }
      : { oauth: { enabled: true, provider: { type: 'memory' }, login: { mode: 'auto', subject: 'dev' } } }),
    profile: { scopes: scopes.map((name) => ({ name, description: `The ${name} scope.` })) },
    tools: scopes.map((s) => ({ name: `${s}.probe`, description: `Needs ${s}.`, required_scopes: [s], template: s })),
  });
}

/** A tokenless (or wrong-token) POST /mcp initialize: its status and what the SDK client reads from the challenge. */
async function mcp401(url: string, token?: string) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token && { authorization: `Bearer ${token}` }) },
    body: INIT,
  });
  await res.arrayBuffer();
  return { status: res.status, ...extractWWWAuthenticateParams(res) };
}

/** The scope of the 401 challenge on GET /svc. */
async function svcScope(url: string): Promise<string | undefined> {
  const res = await fetch(`${url}/svc`);
  await res.arrayBuffer();
  assert.equal(res.status, 401);
  return extractWWWAuthenticateParams(res).scope;
}

/** The scope of the challenge on a refused /ws upgrade (a plain HTTP 401). */
function wsScope(url: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, 'mcp');
    ws.on('open', () => reject(new Error('a tokenless /ws upgrade was accepted')));
    ws.on('error', () => undefined); // the refusal below is the answer; ws also reports it as an error
    ws.on('unexpected-response', (_req, res) => {
      assert.equal(res.statusCode, 401);
      const header = String(res.headers['www-authenticate'] ?? '');
      res.resume();
      resolve(/scope="([^"]*)"/.exec(header)?.[1]);
    });
  });
}

describe('the first 401 names the scopes to ask for', function () {
  this.timeout(60_000);
  let srv: Served | undefined;
  afterEach(async () => {
    await srv?.stop();
    srv = undefined;
  });

  it('bearer: the profile scopes on /mcp, /svc and /ws, and the new ones after a hot reload', async () => {
    srv = await serveManifest(manifest(['notes.read', 'notes.write'], 'bearer'), { env: { SVC_TOKEN: TOKEN } });
    const none = await mcp401(srv.url);
    assert.equal(none.status, 401);
    assert.equal(none.scope, 'notes.read notes.write');
    assert.equal(none.resourceMetadataUrl, undefined, 'no OAuth server, so no protected-resource metadata');
    const wrong = await mcp401(srv.url, randomBytes(18).toString('base64url'));
    assert.deepEqual([wrong.status, wrong.error, wrong.scope], [401, 'invalid_token', 'notes.read notes.write']);
    assert.equal(await svcScope(srv.url), 'notes.read notes.write');
    assert.equal(await wsScope(srv.url), 'notes.read notes.write');

    srv.write(manifest(['notes.read', 'notes.export', 'notes.admin'], 'bearer'));
    const s = srv;
    await waitFor(async () => ((await mcp401(s.url)).scope === 'notes.read notes.export notes.admin' ? true : undefined), 'the reloaded scopes in the 401', 15_000);
    const meta = (await (await fetch(`${srv.url}/metadata`)).json()) as { last_reload: { ok: boolean }; restart_required: string[]; profile: { scopes: string[] } };
    assert.equal(meta.last_reload.ok, true);
    assert.deepEqual(meta.restart_required, []);
    assert.deepEqual(meta.profile.scopes, ['notes.read', 'notes.export', 'notes.admin']);
    assert.equal(await svcScope(srv.url), 'notes.read notes.export notes.admin');
    assert.equal(await wsScope(srv.url), 'notes.read notes.export notes.admin');
  });

  it('OAuth: exactly the scopes_supported of the metadata the challenge points at, before and after a reload that edits profile.scopes', async () => {
    srv = await serveManifest(manifest(['files.read', 'files.write'], 'oauth'));
    const prmScopes = async () => {
      const first = await mcp401(srv!.url);
      assert.equal(first.status, 401);
      assert.equal(first.resourceMetadataUrl?.href, `${srv!.url}/.well-known/oauth-protected-resource/mcp`);
      const prm = (await (await fetch(first.resourceMetadataUrl!)).json()) as { scopes_supported: string[] };
      return { challenge: first.scope, prm: prm.scopes_supported.join(' ') };
    };
    assert.deepEqual(await prmScopes(), { challenge: 'files.read files.write', prm: 'files.read files.write' });

    srv.write(manifest(['files.read', 'files.write', 'files.admin'], 'oauth'));
    const s = srv;
    const meta = await waitFor(async () => {
      const m = (await (await fetch(`${s.url}/metadata`)).json()) as { last_reload: { ok: boolean } | null; restart_required: string[] };
      return m.last_reload ? m : undefined;
    }, 'the reload', 15_000);
    assert.equal(meta.last_reload!.ok, true);
    assert.ok(meta.restart_required.includes('profile.scopes'), `restart_required: ${meta.restart_required.join(', ')}`);
    assert.deepEqual(await prmScopes(), { challenge: 'files.read files.write', prm: 'files.read files.write' });
    assert.equal(await svcScope(srv.url), 'files.read files.write');
  });

  it('never a scope no configured issuer can grant: the built-in server\'s users and an external issuer\'s ceiling decide', async () => {
    const idp = await startJwtIssuer({ audience: 'https://notes.example.com/mcp' });
    try {
      const scopes = ['notes.read', 'notes.write', 'notes.admin', 'billing.read', 'unused.scope'];
      srv = await serveManifest(stringify({
        version: 1,
        name: 'challenge-scope',
        server: { host: '127.0.0.1', port: 0 },
        routes: { public: ['/metadata'], protected: ['/svc', '/mcp', '/ws'] },
        oauth: {
          enabled: true, provider: { type: 'memory' }, login: { mode: 'users' },
          users: [{ username: 'ada', password_hash: await hashPassword(secret('wonderland'), { N: 16384 }), scopes: ['notes.read', 'notes.write'] }],
        },
        external_issuers: [
          { issuer: idp.issuer, audience: 'https://notes.example.com/mcp', jwks_uri: `${idp.url}/jwks`, scopes: ['notes.read', 'notes.admin'] },
          { issuer: `${idp.url}/other`, audience: 'https://notes.example.com/mcp', jwks_uri: `${idp.url}/jwks`, direct_scopes: false, scope_map: { finance: ['billing.read'] } },
        ],
        profile: { scopes },
        tools: scopes.map((sc) => ({ name: `${sc}.probe`, description: `Needs ${sc}.`, required_scopes: [sc], template: sc })),
      }));
      const grantable = 'notes.read notes.write notes.admin billing.read';
      const first = await mcp401(srv.url);
      assert.equal(first.scope, grantable);
      const wrong = await mcp401(srv.url, randomBytes(18).toString('base64url'));
      assert.deepEqual([wrong.status, wrong.error, wrong.scope], [401, 'invalid_token', grantable]);
      assert.equal(await svcScope(srv.url), grantable);
      assert.equal(await wsScope(srv.url), grantable);
      const prm = (await (await fetch(first.resourceMetadataUrl!)).json()) as { scopes_supported: string[] };
      assert.equal(prm.scopes_supported.join(' '), grantable);
    } finally {
      await idp.stop();
    }
  });
});
