// Each named endpoint is its own protected resource (real svc serve, the built-in OAuth server and an external
// issuer side by side): RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp/NAME whose resource is the
// endpoint's URL, and a 401 on the endpoint that points there; a token whose audience is the server (a resource
// indicator naming the origin or /mcp) is accepted on every endpoint; one minted for …/mcp/notes (RFC 8707 resource
// to the built-in server, or an external JWT whose aud is that URL) only on that endpoint, 401 elsewhere.

import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startJwtIssuer, type JwtIssuer } from '../helpers/jwt-issuer.js';
import { authorize, discover, exchange, register } from './oauth-harness.js';
import { waitFor } from '../helpers/wait.js';

type Json = Record<string, unknown>;

describe('endpoints as protected resources (built-in OAuth server and an external issuer)', function () {
  this.timeout(60_000);
  let srv: Served;
  let ext: JwtIssuer;

  before(async () => {
    ext = await startJwtIssuer({ audience: 'https://api.example/house' });
    srv = await serveManifest({
      version: 1,
      name: 'house',
      server: { host: '127.0.0.1' },
      routes: { public: ['/healthz'], protected: ['/svc', '/mcp', '/ws'] },
      oauth: { enabled: true, registration: { enabled: true }, login: { mode: 'auto', subject: 'dev' } },
      external_issuers: [{ issuer: ext.issuer, audience: ext.audience, jwks_uri: `${ext.url}/jwks` }],
      profile: { scopes: ['notes.read'] },
      tools: [
        { name: 'notes.list', description: 'Lists notes.', required_scopes: ['notes.read'], template: 'notes' },
        { name: 'ops.ping', description: 'Pings.', required_scopes: ['notes.read'], template: 'pong' },
      ],
      endpoints: { notes: { select: { names: ['notes.*'] } }, ops: { select: { names: ['ops.*'] } } },
    });
  });
  after(async () => {
    await srv?.stop();
    await ext?.stop();
  });

  /** The status of a first MCP request to `path` with `token`, and its challenge. */
  const mcp = async (path: string, token?: string) => {
    const res = await fetch(`${srv.url}${path}`, {
      method: 'POST',
      headers: { ...(token && { authorization: `Bearer ${token}` }), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'prm', version: '1' } } }),
    });
    return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '' };
  };
  const builtinToken = async (resource: string) => {
    const as = await discover(srv.url);
    const client = await register(as);
    const auth = await authorize(as, client, { scope: 'notes.read', resource });
    return (await exchange(as, client, oauth.None(), auth, resource)).access_token;
  };

  it('RFC 9728 per endpoint: its own document (resource = the endpoint\'s URL), named by its 401; an undeclared name has none', async () => {
    const doc = (await (await fetch(`${srv.url}/.well-known/oauth-protected-resource/mcp/notes`)).json()) as Json;
    assert.equal(doc.resource, `${srv.url}/mcp/notes`);
    assert.deepEqual(doc.authorization_servers, [srv.url, ext.issuer]);
    const svcDoc = (await (await fetch(`${srv.url}/.well-known/oauth-protected-resource/svc/notes`)).json()) as Json;
    assert.equal(svcDoc.resource, `${srv.url}/svc/notes`);
    assert.equal((await fetch(`${srv.url}/.well-known/oauth-protected-resource/mcp/nothing`)).status, 404);
    const first = await mcp('/mcp/notes');
    assert.equal(first.status, 401);
    assert.match(first.challenge, new RegExp(`resource_metadata="${srv.url}/\\.well-known/oauth-protected-resource/mcp/notes"`));
  });

  it('built-in server: a token for the server works on every endpoint; one minted for …/mcp/notes only there', async () => {
    const whole = await builtinToken(`${srv.url}/mcp`);
    assert.deepEqual([(await mcp('/mcp', whole)).status, (await mcp('/mcp/notes', whole)).status, (await mcp('/mcp/ops', whole)).status], [200, 200, 200]);
    const notes = await builtinToken(`${srv.url}/mcp/notes`);
    assert.equal((await mcp('/mcp/notes', notes)).status, 200);
    const elsewhere = await mcp('/mcp/ops', notes);
    assert.equal(elsewhere.status, 401);
    assert.match(elsewhere.challenge, /error="invalid_token"/);
    assert.equal((await mcp('/mcp', notes)).status, 401);
    // The endpoint is one resource on every transport.
    assert.equal((await fetch(`${srv.url}/svc/notes/tools/notes.list`, { method: 'POST', headers: { authorization: `Bearer ${notes}`, 'content-type': 'application/json' }, body: '{}' })).status, 200);
    assert.equal((await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers: { authorization: `Bearer ${notes}`, 'content-type': 'application/json' }, body: '{}' })).status, 401);
  });

  it('external issuer: aud = the issuer\'s configured audience works everywhere; aud = …/mcp/notes only on notes; any other aud nowhere', async () => {
    const whole = await ext.mint({ sub: 'dev' });
    assert.deepEqual([(await mcp('/mcp', whole)).status, (await mcp('/mcp/notes', whole)).status], [200, 200]);
    const notes = await ext.mint({ sub: 'dev', aud: `${srv.url}/mcp/notes` });
    assert.deepEqual([(await mcp('/mcp/notes', notes)).status, (await mcp('/mcp/ops', notes)).status, (await mcp('/mcp', notes)).status], [200, 401, 401]);
    const stranger = await ext.mint({ sub: 'dev', aud: `${srv.url}/mcp/nothing` });
    assert.equal((await mcp('/mcp/notes', stranger)).status, 401);
    await waitFor(() => srv.logs().find((l) => l.event === 'auth.failed' && l.check === 'token_audience'), 'a token used off its endpoint, logged as token_audience');
  });
});
