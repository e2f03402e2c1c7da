// Enterprise-managed authorization against the real `svc serve`: ID-JAGs signed with
// test keys (jose) by two enterprise identity providers — one publishing its keys on a
// loopback JWKS server, one configured with inline keys — exchanged at /token with the
// RFC 7523 jwt-bearer grant by oauth4webapi. The happy path yields a fastsvc access
// token that calls a tool; every rejection answers with its spec error code and a
// description naming the reason.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import * as oauth from 'oauth4webapi';
import { stringify } from 'yaml';
import { run } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { secret, secretTokens } from '../helpers/secrets.js';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const IDP_A = 'https://idp-a.example';
const IDP_B = 'https://idp-b.example';

interface Signer { key: CryptoKey; kid: string; jwk: JWK }
async function signer(kid: string): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { key: privateKey, kid, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

describe('svc serve: ID-JAG (jwt-bearer grant, enterprise-managed authorization)', function () {
  this.timeout(30_000);
  let dir: string;
  let jwks: http.Server;
  let srv: Served;
  let a: Signer;
  let b: Signer;
  let forger: Signer;
  let as: oauth.AuthorizationServer;
  const agent: oauth.Client = { client_id: 'agent' };
  const other: oauth.Client = { client_id: 'other' };
  const agentAuth = oauth.ClientSecretBasic(secret('agent-secret'));
  const otherAuth = oauth.ClientSecretBasic(secret('other-secret'));

  before(async () => {
    [a, b, forger] = await Promise.all([signer('a1'), signer('b1'), signer('a1')]);
    jwks = http.createServer((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [a.jwk] })));
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    srv = await serveManifest({
      version: 1,
      name: 'idjag',
      description: 'ID-JAG test service.',
      server: { host: '127.0.0.1', port: 0 },
      profile: { scopes: ['echo.use', 'echo.admin'] },
      oauth: {
        enabled: true,
        clients: [
          { client_id: 'agent', client_secret: 'agent-secret', redirect_uris: ['https://agent.example/cb'] },
          { client_id: 'other', client_secret: 'other-secret', redirect_uris: ['https://other.example/cb'] },
        ],
        enterprise_issuers: [
          { issuer: IDP_A, jwks_uri: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`, algorithms: ['ES256'], allowed_clients: ['agent'], claims: { email: 'email' } },
          { issuer: IDP_B, jwks: { keys: [b.jwk] }, algorithms: ['ES256'], allowed_clients: ['other'], scopes: ['echo.use'] },
        ],
      },
      tools: [
        { name: 'echo.say', description: 'Echoes.', required_scopes: ['echo.use'], template: 'said {{text}}', input_schema: { type: 'object', properties: { text: { type: 'string' } } } },
      ],
    });
    dir = srv.dir;
    const issuer = new URL(srv.url);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  });

  after(async () => {
    await srv?.stop();
    jwks?.close();
  });

  /** An ID-JAG as the IdP would mint it; `claims` override or (undefined) remove defaults. */
  function idJag(s: Signer, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const payload: Record<string, unknown> = {
      iss: IDP_A, sub: 'U0194', email: 'user@example.com', aud: srv.url, resource: `${srv.url}/mcp`,
      client_id: 'agent', jti: randomUUID(), iat: now, exp: now + 120, scope: 'echo.use', ...claims,
    };
    for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
    return new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'oauth-id-jag+jwt', kid: s.kid, ...header }).sign(s.key);
  }

  async function exchange(assertion: string, o: { client?: oauth.Client; auth?: oauth.ClientAuth; params?: Record<string, string> } = {}) {
    const client = o.client ?? agent;
    const res = await oauth.genericTokenEndpointRequest(as, client, o.auth ?? agentAuth, JWT_BEARER, { assertion, ...o.params }, insecure);
    return secretTokens(await oauth.processGenericTokenEndpointResponse(as, client, res));
  }

  async function refused(p: Promise<unknown>, error: string, description: RegExp) {
    await assert.rejects(p, (e: oauth.ResponseBodyError) => {
      assert.ok(e instanceof oauth.ResponseBodyError, String(e));
      assert.equal(e.error, error, `${e.error}: ${e.error_description}`);
      assert.match(String(e.error_description), description);
      return true;
    });
  }

  const callTool = (token: string) => fetch(`${srv.url}/svc/tools/echo.say`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hi' }),
  });

  it('advertises the jwt-bearer grant and the ID-JAG grant profile', () => {
    assert.ok(as.grant_types_supported?.includes(JWT_BEARER));
    assert.deepEqual(as.authorization_grant_profiles_supported, ['urn:ietf:params:oauth:grant-profile:id-jag']);
  });

  it('exchanges an ID-JAG verified with the JWKS URL for a token that calls a tool', async () => {
    const t = await exchange(await idJag(a));
    assert.equal(t.token_type, 'bearer');
    assert.equal(t.scope, 'echo.use');
    assert.equal(t.refresh_token, undefined);
    const res = await callTool(t.access_token);
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(JSON.stringify(await res.json()), /said hi/);
  });

  it('exchanges an ID-JAG verified with inline keys, bounded by that provider\'s scopes', async () => {
    const t = await exchange(await idJag(b, { iss: IDP_B, client_id: 'other', scope: undefined }), { client: other, auth: otherAuth });
    assert.equal(t.scope, 'echo.use');
    assert.equal((await callTool(t.access_token)).status, 200);
  });

  it('grants requested ∩ ID-JAG scopes', async () => {
    const t = await exchange(await idJag(a, { scope: 'echo.use echo.admin' }), { params: { scope: 'echo.admin' } });
    assert.equal(t.scope, 'echo.admin');
  });

  it('refuses a bad signature', async () => {
    await refused(exchange(await idJag(forger)), 'invalid_grant', /signature verification failed/);
  });

  it('refuses a wrong audience', async () => {
    await refused(exchange(await idJag(a, { aud: 'https://other-as.example' })), 'invalid_grant', /aud claim/);
  });

  it('refuses an expired ID-JAG', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(exchange(await idJag(a, { iat: now - 600, exp: now - 300 })), 'invalid_grant', /expired/);
  });

  it('refuses a replayed jti', async () => {
    const jag = await idJag(a);
    await exchange(jag);
    await refused(exchange(jag), 'invalid_grant', /already used/);
  });

  it('refuses an unknown issuer', async () => {
    await refused(exchange(await idJag(a, { iss: 'https://evil-idp.example' })), 'invalid_grant', /not a trusted enterprise identity provider/);
  });

  it('refuses a client the identity provider does not allow, and an ID-JAG issued to another client', async () => {
    await refused(exchange(await idJag(a, { client_id: 'other' }), { client: other, auth: otherAuth }), 'invalid_grant', /may not use ID-JAGs from this identity provider/);
    await refused(exchange(await idJag(a, { client_id: 'someone-else' })), 'invalid_grant', /issued to another client/);
  });

  it('refuses a resource parameter that is not this server\'s or differs from the ID-JAG (invalid_target)', async () => {
    await refused(exchange(await idJag(a), { params: { resource: 'https://elsewhere.example/mcp' } }), 'invalid_target', /not a resource of this server/);
    await refused(exchange(await idJag(a), { params: { resource: `${srv.url}/svc` } }), 'invalid_target', /differs from the ID-JAG/);
  });

  it('refuses an ID-JAG for another resource, without typ, or lived too long (invalid_grant)', async () => {
    await refused(exchange(await idJag(a, { resource: 'https://elsewhere.example/mcp' })), 'invalid_grant', /resource is not a resource of this server/);
    await refused(exchange(await idJag(a, {}, { typ: 'JWT' })), 'invalid_grant', /typ/);
    const now = Math.floor(Date.now() / 1000);
    await refused(exchange(await idJag(a, { iat: now, exp: now + 3600 })), 'invalid_grant', /lives longer/);
  });

  it('refuses scopes beyond the ID-JAG or the provider (invalid_scope)', async () => {
    await refused(exchange(await idJag(a), { params: { scope: 'echo.admin' } }), 'invalid_scope', /echo\.admin/);
    await refused(exchange(await idJag(b, { iss: IDP_B, client_id: 'other', scope: 'echo.admin' }), { client: other, auth: otherAuth }), 'invalid_scope', /no scope/);
  });

  it('refuses to start with an allowed client oauth.clients lacks, or a plain-http jwks_uri off loopback; svc validate says the same', async () => {
    const bad = async (issuer: Record<string, unknown>) => {
      const f = join(dir, `bad-${randomUUID()}.yaml`);
      writeFileSync(f, stringify({
        version: 1, name: 'bad', description: 'Bad.', server: { host: '127.0.0.1', port: 0 }, profile: { scopes: ['echo.use'] },
        oauth: { enabled: true, clients: [{ client_id: 'agent', redirect_uris: ['https://a.example/cb'] }], enterprise_issuers: [{ issuer: IDP_A, ...issuer }] },
        tools: [{ name: 'echo.say', description: 'E.', template: 'hi' }],
      }));
      const serve = await run(['serve', f, '--port', '0']);
      const validate = await run(['validate', f, '--no-io']);
      assert.notEqual(serve.code, 0);
      assert.equal(validate.code, 1, `svc validate must fail where serve does: ${validate.stdout}${validate.stderr}`);
      return { serve: serve.stderr, validate: validate.stderr };
    };
    const ghost = await bad({ jwks: { keys: [a.jwk] }, allowed_clients: ['ghost'] });
    for (const out of [ghost.serve, ghost.validate]) assert.match(out, /OAUTH_CONFIG: .*allows client ghost, which oauth.clients does not declare/);
    const plainHttp = await bad({ jwks_uri: 'http://idp.example/jwks', allowed_clients: ['agent'] });
    for (const out of [plainHttp.serve, plainHttp.validate]) assert.match(out, /OAUTH_CONFIG: .*jwks_uri must be https/);
  });

  it('never logs an assertion', () => {
    assert.ok(srv.logs().some((l) => l.event === 'oauth.grant_error'), 'refusals are logged');
    assert.doesNotMatch(srv.stderr() + srv.stdout(), /eyJ[A-Za-z0-9_-]{20,}\.eyJ/);
  });
});
