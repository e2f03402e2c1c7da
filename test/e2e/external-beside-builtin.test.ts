// External issuers beside the built-in OAuth server and static tokens, in one real `svc serve`:
// the protected-resource metadata lists the built-in issuer first, then the external ones; a
// built-in access token (opaque) is looked up locally and never sent to an external issuer's
// introspection endpoint; an external JWT goes only to its issuer; an external opaque token is
// introspected after the built-in server does not know it; a static token still works; and the
// same subject from the built-in server and from an external issuer are two principals (an /mcp
// session opened by one is not found for the other); the issuer's `limits` counts each of its
// subjects apart.

import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startJwtIssuer, type JwtIssuer } from '../helpers/jwt-issuer.js';
import { secret } from '../helpers/secrets.js';
import { authorize, discover, exchange, register } from './oauth-harness.js';

type Json = Record<string, unknown>;

describe('external issuers beside the built-in OAuth server (real svc serve)', function () {
  this.timeout(60_000);
  let srv: Served;
  let ext: JwtIssuer;
  const opsToken = secret('ops-token-0123456789abcdef');

  before(async () => {
    ext = await startJwtIssuer({ audience: 'http://127.0.0.1/mcp' });
    srv = await serveManifest({
      version: 1,
      name: 'beside',
      server: { host: '127.0.0.1' },
      routes: { public: ['/healthz'], protected: ['/svc', '/mcp', '/ws'] },
      auth: { token: '${OPS_TOKEN}', subject: 'ops' },
      oauth: { enabled: true, registration: { enabled: true }, login: { mode: 'auto', subject: 'dev' } },
      external_issuers: [{
        issuer: ext.issuer, audience: ext.audience, jwks_uri: `${ext.url}/jwks`, limits: { requests: 3, window_ms: 600000 },
        introspection: { client_id: 'rs', client_secret: 'rs-secret-0123456789', endpoint: `${ext.url}/introspect` },
      }],
      profile: { scopes: ['notes.read'] },
      tools: [{ name: 'notes.list', description: 'Lists notes.', required_scopes: ['notes.read'], template: 'none' }],
    }, { env: { OPS_TOKEN: opsToken } });
  });
  after(async () => {
    await srv?.stop();
    await ext?.stop();
  });

  const call = async (token: string) => (await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' })).status;

  it('the metadata lists the built-in issuer first, then the external one', async () => {
    const prm = (await (await fetch(`${srv.url}/.well-known/oauth-protected-resource/mcp`)).json()) as Json;
    assert.deepEqual(prm.authorization_servers, [srv.url, ext.issuer]);
    assert.deepEqual(prm.scopes_supported, ['notes.read']);
  });

  it('every kind of token works, and a built-in token never reaches the external introspection endpoint', async () => {
    const as = await discover(srv.url);
    const client = await register(as);
    const auth = await authorize(as, client, { scope: 'notes.read', resource: `${srv.url}/mcp` });
    const builtin = (await exchange(as, client, oauth.None(), auth, `${srv.url}/mcp`)).access_token;
    assert.equal(await call(builtin), 200);
    assert.equal(await call(opsToken), 200);
    assert.equal(await call(await ext.mint({ sub: 'dev' })), 200);
    assert.equal(ext.hits('/introspect'), 0, 'neither the built-in token nor the JWT was introspected');
    const opaque = secret('external-opaque-token-0123456789');
    ext.introspection.set(opaque, { active: true, aud: ext.audience, sub: 'dev', scope: 'notes.read' });
    assert.equal(await call(opaque), 200);
    assert.equal(ext.hits('/introspect'), 1);
    assert.equal(await call(secret('nobody-knows-this-token-0123')), 401);
  });

  it('the built-in user dev and the external issuer\'s sub dev never share an /mcp session', async () => {
    const as = await discover(srv.url);
    const client = await register(as);
    const auth = await authorize(as, client, { scope: 'notes.read', resource: `${srv.url}/mcp` });
    const builtin = (await exchange(as, client, oauth.None(), auth, `${srv.url}/mcp`)).access_token;
    const external = await ext.mint({ sub: 'dev' });
    const headers = (token: string, session?: string) => ({
      authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25',
      ...(session && { 'mcp-session-id': session }),
    });
    const init = await fetch(`${srv.url}/mcp`, {
      method: 'POST', headers: headers(builtin),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    assert.equal(init.status, 200);
    const session = init.headers.get('mcp-session-id')!;
    const list = (token: string) => fetch(`${srv.url}/mcp`, { method: 'POST', headers: headers(token, session), body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    assert.equal((await list(builtin)).status, 200);
    assert.equal((await list(external)).status, 404, 'the same sub from another issuer does not find the session');
  });

  it('the issuer\'s limits is a quota per subject of that issuer: one subject refused, another not', async () => {
    const [q1, q2] = [await ext.mint({ sub: 'q1' }), await ext.mint({ sub: 'q2' })];
    for (let i = 0; i < 3; i++) assert.equal(await call(q1), 200);
    const over = await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers: { authorization: `Bearer ${q1}`, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) > 0);
    assert.equal(((await over.json()) as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.equal(await call(q2), 200);
  });
});
