// Outbound credentials of upstream MCP servers end to end (issue 31, point 4): the real `svc serve` in
// front of the corporate IdP (test/helpers/idp.ts, with RFC 8693 token exchange) and three recording
// upstreams (test/helpers/recording-upstream.ts, 1.x SDK servers on 127.0.0.1 that keep every request's
// headers and JSON-RPC method). Asserted at the upstreams: a static bearer from ${VAR} on every request
// of the connection (initialize and lists included), and a tool's override (a header from a file) on
// that tool's calls instead; a client-credentials token (the gateway as subject, the upstream as
// audience) on every request, no token request for 20 concurrent calls; an external caller's token
// exchanged per call for one with the upstream's audience and the caller's subject (on /svc and /mcp),
// once for several calls, while initialize and the lists carry the connection's own token; a caller
// with no external token is refused (CALLER_CREDENTIAL_MISSING) before the upstream, and so is a call
// whose exchange the token endpoint refuses (OUTBOUND_AUTH_FAILED); an override's
// credential edited in the manifest applies on reload without a restart; no caller's token reaches an
// upstream on any request, and no secret or token appears in fastsvc's output.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import * as jose from 'jose';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { startIdp, type Idp } from '../helpers/idp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { freePort } from '../helpers/postgres.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/recording-upstream.js';
import { secret } from '../helpers/secrets.js';
import { childEnv, run } from '../helpers/cli.js';

type Json = Record<string, unknown>;

const bearerOf = (h: IncomingHttpHeaders) => h.authorization?.replace(/^Bearer /, '') ?? '';

async function waitFor<T>(what: string, probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('upstream credentials: what reaches an upstream MCP server (real svc serve, the corporate IdP, recording upstreams)', function () {
  this.timeout(60_000);
  let idp: Idp;
  let srv: Served;
  let plain: RecordingUpstream;
  let machine: RecordingUpstream;
  let user: RecordingUpstream;
  let manifest: Json;
  let ada = '';
  const svcToken = secret(randomBytes(24).toString('base64url'));
  const upBearer = secret(`up-${randomBytes(18).toString('base64url')}`);
  const upBearer2 = secret(`up2-${randomBytes(18).toString('base64url')}`);
  const toolKey = secret(`tool-${randomBytes(18).toString('base64url')}`);
  const callerTokens: string[] = [svcToken];
  const all = () => [plain, machine, user];

  const call = async (tool: string, token: string, args: Json = {}) => {
    const res = await fetch(`${srv.url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  /** The requests an upstream got for one JSON-RPC method (POSTs only), their headers. */
  const sent = (up: RecordingUpstream, rpc: string) => up.requests.filter((r) => r.rpc === rpc).map((r) => r.headers);

  before(async () => {
    [plain, machine, user] = await Promise.all([startRecordingUpstream(), startRecordingUpstream(), startRecordingUpstream()]);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    idp = await startIdp();
    const gateway = { token_url: idp.metadata.token_endpoint!, client_id: 'fastsvc-gateway', client_secret: '${GATEWAY_SECRET}' };
    const expose = (prefix: string, more: Json = {}) => ({ prefix, include: ['echo', 'admin_op'], required_scopes: ['up.use'], ...more });
    manifest = {
      version: 1,
      name: 'gateway',
      base_url: url,
      server: { host: '127.0.0.1' },
      routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp'] },
      profile: { scopes: ['up.use'] },
      auth: { token: '${SVC_TOKEN}' },
      external_issuers: [{ issuer: idp.issuer, audience: `${url}/mcp`, scopes_from: ['groups'], direct_scopes: false, scope_map: { staff: ['up.use'] } }],
      upstreams: [
        {
          name: 'plain', url: plain.url, auth: { static: { bearer: '${UP_BEARER}' } },
          expose: expose('a.', { overrides: { admin_op: { auth: { static: { header: 'X-Api-Key', value_file: 'tool.key' } } } } }),
        },
        { name: 'machine', url: machine.url, auth: { client_credentials: { ...gateway, resource: machine.url } }, expose: expose('b.') },
        {
          name: 'user', url: user.url, auth: { client_credentials: { ...gateway, resource: user.url } },
          expose: expose('c.', { auth: { token_exchange: { ...gateway, resource: user.url } } }),
        },
      ],
    };
    srv = await serveManifest(manifest, {
      port,
      files: { 'tool.key': `${toolKey}\n` },
      env: { SVC_TOKEN: svcToken, UP_BEARER: upBearer, UP_BEARER2: upBearer2, GATEWAY_SECRET: idp.clients['fastsvc-gateway']!.client_secret },
    });
    ada = (await idp.userToken({ username: 'ada@acme.example', resource: `${url}/mcp`, format: 'jwt' })).access_token;
    callerTokens.push(ada);
  });
  after(async () => {
    await srv?.stop();
    await idp?.stop();
    await Promise.all(all().map((u) => u?.close()));
  });

  it('all three upstreams connect (/readyz: ready)', async () => {
    const r = await (await fetch(`${srv.url}/readyz`)).json() as { upstreams: Record<string, { state: string; tools: number }> };
    for (const name of ['plain', 'machine', 'user']) assert.equal(r.upstreams[name]?.state, 'ready', name);
  });

  it('explain names each imported tool\'s credential kind, never the credential: /svc/explain per tool at run time, svc explain per upstream and override offline', async () => {
    const res = await fetch(`${srv.url}/svc/explain`, { headers: { authorization: `Bearer ${svcToken}` } });
    assert.equal(res.status, 200);
    const text = await res.text();
    const kinds = Object.fromEntries((JSON.parse(text) as { capabilities: { id: string; credential?: string }[] }).capabilities.map((c) => [c.id, c.credential]));
    assert.deepEqual([kinds['tool:a.echo'], kinds['tool:a.admin_op'], kinds['tool:b.echo'], kinds['tool:c.echo']], ['static', 'static', 'client_credentials', 'token_exchange']);
    const offline = await run(['explain', srv.file, '--scopes', 'up.use', '--allow-unset-env'], { env: childEnv() });
    assert.equal(offline.code, 0, offline.stderr);
    const lines = offline.stdout.split('\n');
    const rule = (start: string) => lines.find((l) => l.startsWith(start)) ?? assert.fail(`no line ${start}: ${offline.stdout}`);
    assert.match(rule('upstream plain every import'), /: allowed — needs up\.use \(names known at run time only\); credential to the upstream: static$/);
    assert.match(rule('upstream plain tool admin_op'), /; credential to the upstream: static$/);
    assert.match(rule('upstream machine every import'), /; credential to the upstream: client_credentials$/);
    assert.match(rule('upstream user every import'), /; credential to the upstream: token_exchange \(the connection's own requests: client_credentials\)$/);
    for (const s of [upBearer, toolKey, idp.clients['fastsvc-gateway']!.client_secret!, 'tool.key', 'fastsvc-gateway']) {
      assert.ok(!text.includes(s) && !offline.stdout.includes(s), 'explain shows the kind only');
    }
  });

  it('a static bearer reaches the upstream on initialize, the lists and the calls; a tool\'s override sends its own header instead', async () => {
    assert.equal((await call('a.echo', svcToken, { text: 'hi' })).status, 200);
    assert.equal((await call('a.admin_op', svcToken)).status, 200);
    for (const rpc of ['initialize', 'tools/list']) {
      assert.ok(sent(plain, rpc).length > 0, rpc);
      for (const h of sent(plain, rpc)) assert.equal(h.authorization, `Bearer ${upBearer}`, rpc);
    }
    const calls = sent(plain, 'tools/call');
    assert.equal(calls.length, 2);
    assert.deepEqual(calls.map((h) => [h.authorization, h['x-api-key']]), [[`Bearer ${upBearer}`, undefined], [undefined, toolKey]], 'echo with the upstream\'s bearer, admin_op with its own key only');
  });

  it('a client-credentials token (the gateway\'s, for the upstream) is on every request, and 20 concurrent calls make no token request', async () => {
    const before = (await idp.stats()).token;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => call('b.echo', svcToken, { text: `n${i}` })));
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
    assert.equal((await idp.stats()).token - before, 0, 'the token fetched when connecting is used');
    assert.equal(sent(machine, 'tools/call').length, 20);
    const tokens = new Set(machine.requests.map((r) => bearerOf(r.headers)));
    assert.equal(tokens.size, 1, 'one token on initialize, lists and calls');
    const { payload } = await verify([...tokens][0]!, machine.url);
    assert.equal(payload.sub, 'fastsvc-gateway');
  });

  it('replaces a client-credentials token the upstream starts refusing (401) and sends the request once more; later requests carry the new one', async () => {
    const before = (await idp.stats()).token;
    const old = bearerOf(machine.requests.at(-1)!.headers);
    machine.refuse(old);
    const from = machine.requests.length;
    const r = await call('b.echo', svcToken, { text: 'after revocation' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const calls = machine.requests.slice(from).filter((q) => q.rpc === 'tools/call').map((q) => bearerOf(q.headers));
    assert.equal(calls.length, 2, 'the call was sent twice: refused, then with a new token');
    assert.equal(calls[0], old);
    assert.notEqual(calls[1], old);
    assert.equal((await idp.stats()).token - before, 1, 'one new token');
    assert.equal((await call('b.echo', svcToken, { text: 'again' })).status, 200);
    assert.equal(bearerOf(machine.requests.at(-1)!.headers), calls[1]);
    assert.equal((await idp.stats()).token - before, 1);
  });

  it('exchanges an external caller\'s token per call (the upstream\'s audience, the caller\'s subject), once for several calls; initialize and lists keep the connection\'s token', async () => {
    const exchanges = async () => (await idp.settledLogs()).filter((l) => l.event === 'token_exchange').length;
    const before = await exchanges();
    for (let i = 0; i < 3; i++) assert.equal((await call('c.echo', ada, { text: `ada${i}` })).status, 200);
    assert.equal(await exchanges() - before, 1, 'one exchange, then the cached token');
    const exchanged = new Set(sent(user, 'tools/call').map(bearerOf));
    assert.equal(exchanged.size, 1);
    const { payload } = await verify([...exchanged][0]!, user.url);
    assert.equal(payload.sub, 'acme-1001', 'the caller\'s subject');
    assert.deepEqual(payload.act, { sub: 'fastsvc-gateway' });
    for (const rpc of ['initialize', 'tools/list']) {
      for (const h of sent(user, rpc)) {
        const own = await verify(bearerOf(h), user.url);
        assert.equal(own.payload.sub, 'fastsvc-gateway', `${rpc}: the connection's client-credentials token`);
        assert.equal(own.payload.act, undefined);
      }
    }
    // Another person, through /mcp (client 2.x): a token of their own.
    const grace = (await idp.userToken({ username: 'grace@acme.example', resource: `${srv.url}/mcp`, format: 'jwt' })).access_token;
    callerTokens.push(grace);
    const client = new ModernClient({ name: 'upauth-e2e', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new ModernTransport(new URL(`${srv.url}/mcp`), { authProvider: { token: async () => grace } }));
    try {
      const res = await client.callTool({ name: 'c.echo', arguments: { text: 'grace' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'grace' }]);
    } finally {
      await client.close();
    }
    assert.equal((await verify(bearerOf(sent(user, 'tools/call').at(-1)!), user.url)).payload.sub, 'acme-1002');
  });

  it('refuses a caller without an external token (CALLER_CREDENTIAL_MISSING) before anything reaches the upstream', async () => {
    const calls = user.calls.length;
    const r = await call('c.echo', svcToken, { text: 'static' });
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.equal((r.body.error as Json).code, 'CALLER_CREDENTIAL_MISSING');
    assert.equal(user.calls.length, calls, 'the upstream saw no call');
  });

  it('fails a call whose exchange the token endpoint refuses with OUTBOUND_AUTH_FAILED, and the upstream is not called', async () => {
    const mallory = (await idp.userToken({ username: 'mallory@acme.example', resource: `${srv.url}/mcp`, format: 'jwt' })).access_token;
    callerTokens.push(mallory);
    const calls = user.calls.length;
    await idp.fault('token', { status: 503 });
    try {
      const r = await call('c.echo', mallory, { text: 'mallory' });
      assert.equal(r.status, 502, JSON.stringify(r.body));
      assert.equal((r.body.error as Json).code, 'OUTBOUND_AUTH_FAILED');
    } finally {
      await idp.fault('token', null);
    }
    assert.equal(user.calls.length, calls);
    assert.equal((await call('c.echo', mallory, { text: 'mallory' })).status, 200, 'the failure was not remembered');
  });

  it('applies an override\'s edited credential on reload, without a restart', async () => {
    const reloads = () => srv.logs().filter((l) => l.event === 'config.reloaded');
    const ups = manifest.upstreams as Json[];
    const edited = { ...ups[0], expose: { ...(ups[0]!.expose as Json), overrides: { admin_op: { auth: { static: { bearer: '${UP_BEARER2}' } } } } } };
    srv.write({ ...manifest, upstreams: [edited, ups[1], ups[2]] });
    const line = await waitFor('the reload', () => reloads()[0]);
    assert.deepEqual(line.restart_required, [], 'expose.overrides.NAME.auth is live');
    assert.equal((await call('a.admin_op', svcToken)).status, 200);
    const last = sent(plain, 'tools/call').at(-1)!;
    assert.deepEqual([last.authorization, last['x-api-key']], [`Bearer ${upBearer2}`, undefined]);
  });

  it('never lets a caller\'s token reach an upstream on any request, nor a secret or a token into fastsvc\'s output', () => {
    const seen = all().flatMap((u) => u.requests);
    assert.ok(seen.length > 30);
    for (const r of seen) {
      const values = Object.values(r.headers).flat().join('\n');
      for (const t of callerTokens) assert.ok(!values.includes(t), `a caller's token reached the upstream on ${r.http} ${r.rpc ?? ''}`);
    }
    const sentTokens = [...new Set(seen.map((r) => bearerOf(r.headers)).filter((t) => t.length >= 8))].map((t) => secret(t));
    const output = srv.stdout() + srv.stderr();
    for (const t of [upBearer, upBearer2, toolKey, idp.clients['fastsvc-gateway']!.client_secret!, ...sentTokens, ...callerTokens]) {
      assert.ok(!output.includes(t), 'a secret or a token in fastsvc\'s output');
    }
  });

  async function verify(token: string, audience: string) {
    const jwks = jose.createLocalJWKSet(await (await fetch(idp.metadata.jwks_uri!)).json() as jose.JSONWebKeySet);
    return jose.jwtVerify(token, jwks, { issuer: idp.issuer, audience });
  }
});
