// A verified JWT is not remembered past the freshness of the key set it was checked against,
// through the real `svc serve`: the issuer (test/helpers/jwt-issuer.ts) serves its JWKS with
// `Cache-Control: max-age=3`; a token verified once keeps working while that set is fresh, and
// once the issuer withdraws the token's key, the same token — sent by the same caller, with no
// other token arriving to trigger anything — is refused (401, audit token_kid) within max-age
// of the withdrawal plus one fetch, after the server fetched the set again; an open /ws socket
// on such a token is closed (4401) within the same bound. A key that stays published keeps its
// tokens working across refetches.

import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startJwtIssuer, signingKey, type JwtIssuer } from '../helpers/jwt-issuer.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { waitFor } from '../helpers/wait.js';

const AUD = 'https://notes.example.com/mcp';
const MAX_AGE_S = 3;
/** One fetch of the key set and a request's round trip, at most (the server's fetch deadline is 5 s; on loopback it takes milliseconds). */
const SLACK_MS = 2000;

describe('a withdrawn signing key: cached verifications end with the key set\'s freshness (real svc serve)', function () {
  this.timeout(60_000);
  let srv: Served;
  let idp: JwtIssuer;

  before(async () => {
    idp = await startJwtIssuer({ audience: AUD });
    idp.jwksCacheControl = `public, max-age=${MAX_AGE_S}`;
    srv = await serveManifest({
      version: 1,
      name: 'key-freshness',
      server: { host: '127.0.0.1' },
      routes: { public: ['/healthz'], protected: ['/svc', '/mcp', '/ws'] },
      audit: { to: 'stderr' },
      profile: { scopes: ['notes.read'] },
      external_issuers: [{ issuer: idp.issuer, audience: AUD, jwks_uri: `${idp.url}/jwks`, jwks_refetch_interval: 1 }],
      tools: [{ name: 'notes.list', description: 'Lists notes.', required_scopes: ['notes.read'], template: 'none' }],
    });
  });
  after(async () => {
    await srv?.stop();
    await idp?.stop();
  });

  const call = async (token: string) => {
    const res = await fetch(`${srv.url}/svc/tools/notes.list`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    await res.arrayBuffer();
    return res.status;
  };

  it('a token verified once is refused within max-age of its key\'s withdrawal, with no other caller', async () => {
    const old = idp.keys[0]!;
    const token = await idp.mint({}, { key: old });
    assert.equal(await call(token), 200);
    assert.equal(await call(token), 200, 'answered from the verified-token cache');
    const next = await signingKey('k-next');
    const fetchesBefore = idp.hits('/jwks');
    idp.jwks({ keys: [next.publicJwk] }); // the old key leaves the set
    const withdrawnAt = Date.now();
    await waitFor(async () => ((await call(token)) === 401 ? true : undefined), 'the token to be refused once its key left the set', (MAX_AGE_S * 1000) + SLACK_MS + 1000, 100);
    const took = Date.now() - withdrawnAt;
    assert.ok(took <= MAX_AGE_S * 1000 + SLACK_MS, `refused after ${took} ms, more than max-age (${MAX_AGE_S} s) and one fetch`);
    assert.ok(idp.hits('/jwks') > fetchesBefore, 'the server fetched the key set again');
    await waitFor(() => srv.logs().find((l) => l.audit === true && l.decision === 'deny' && l.reason === 'token_kid'), 'the refusal\'s audit line (token_kid)');
    // A token signed with the key now published works.
    assert.equal(await call(await idp.mint({}, { key: next })), 200);
  });

  it('a key that stays published keeps its tokens working across refetches', async () => {
    const key = await signingKey('k-stays');
    idp.jwks({ keys: [key.publicJwk] });
    const token = await idp.mint({}, { key });
    await waitFor(async () => ((await call(token)) === 200 ? true : undefined), 'the new key to be fetched', (MAX_AGE_S * 1000) + SLACK_MS, 100);
    const fetches = idp.hits('/jwks');
    // Past one max-age: the set is fetched again, and the token stays good all along.
    await waitFor(async () => {
      assert.equal(await call(token), 200);
      return idp.hits('/jwks') > fetches ? true : undefined;
    }, 'a refetch of the stale set', (MAX_AGE_S * 1000) + SLACK_MS, 100);
    assert.equal(await call(token), 200);
  });

  it('an open /ws socket on a token whose key is withdrawn closes (4401) within the same bound', async () => {
    const key = await signingKey('k-ws');
    idp.jwks({ keys: [key.publicJwk] });
    const token = await idp.mint({}, { key });
    await waitFor(async () => ((await call(token)) === 200 ? true : undefined), 'the key to be fetched', (MAX_AGE_S * 1000) + SLACK_MS, 100);
    const s = new WebSocket(`${srv.url.replace(/^http/, 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${token}` } });
    const closed = new Promise<number>((resolve) => s.on('close', (code) => resolve(code)));
    const answers: Record<string, unknown>[] = [];
    s.on('message', (d) => answers.push(JSON.parse(String(d)) as Record<string, unknown>));
    await new Promise((resolve, reject) => s.on('open', resolve).on('error', reject));
    let id = 0;
    const ping = () => s.send(JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'ping' }));
    ping();
    await waitFor(() => (answers.some((a) => a.id === 1) ? true : undefined), 'the first answer');
    idp.jwks({ keys: [(await signingKey('k-after-ws')).publicJwk] });
    const withdrawnAt = Date.now();
    // Each message re-checks the credential.
    const code = await waitFor(async () => {
      if (s.readyState === WebSocket.OPEN) ping();
      return s.readyState === WebSocket.CLOSED ? closed : undefined;
    }, 'the socket to close', (MAX_AGE_S * 1000) + SLACK_MS + 1000, 100);
    assert.equal(code, 4401);
    assert.ok(Date.now() - withdrawnAt <= MAX_AGE_S * 1000 + SLACK_MS + 200, 'within max-age and one fetch');
  });
});
