// Per-caller credentials of upstream MCP servers end to end (issue 31, point 4), the two kinds that
// carry a person's identity: the real `svc serve` as the gateway, the corporate IdP
// (test/helpers/idp.ts), and two upstreams.
// - upstream_login: a person signs in to the gateway through the IdP (oauth.login.mode upstream,
//   consent page and all) and calls a tool of a recording upstream (test/helpers/recording-upstream.ts,
//   2025-11-25) whose expose.auth is upstream_login: the upstream sees that person's IdP access token
//   (introspected at the IdP: active, their subject, issued to fastsvc-login) on the call, while
//   initialize and the lists carry the connection's own bearer; callers who did not sign in that way
//   are refused CALLER_CREDENTIAL_MISSING and the upstream sees nothing of them.
// - token_exchange on a 2026-07-28 connection: the upstream is a second `svc serve` that knows the
//   same IdP as an external issuer (audience its own /mcp, scopes from the token's groups) and
//   nothing of the gateway's callers; the gateway speaks 2026-07-28 to it and exchanges each caller's
//   external token for one with the upstream's audience. The second fastsvc itself authorizes the
//   exchanged token: its audit log records the call allowed for the caller's subject as an external
//   token of the IdP holding the scope it mapped, and its tool binds an argument to the token's
//   subject, so a caller naming another person is refused by the upstream (ARGUMENT_BOUND there).
// No caller's token reaches either upstream, and no secret or token appears in the gateway's output.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import * as oauth from 'oauth4webapi';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { corporateFront, startIdp, type Idp } from '../helpers/idp.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { freePort } from '../helpers/postgres.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/recording-upstream.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { authorize, discover, exchange, register } from './oauth-harness.js';

type Json = Record<string, unknown>;

const bearerOf = (h: IncomingHttpHeaders) => h.authorization?.replace(/^Bearer /, '') ?? '';

describe('upstream per-caller credentials: upstream_login through an upstream, token_exchange to a second fastsvc over 2026-07-28', function () {
  this.timeout(90_000);
  let idp: Idp;
  let gw: Served;
  let notes: Served;
  let rec: RecordingUpstream;
  let signedIn = '';
  let ada = '';
  let grace = '';
  const svcToken = secret(randomBytes(24).toString('base64url'));
  const recBearer = secret(`rec-${randomBytes(18).toString('base64url')}`);
  const notesToken = secret(`notes-${randomBytes(18).toString('base64url')}`);
  const callerTokens: string[] = [svcToken];

  const call = async (tool: string, token: string, args: Json = {}) => {
    const res = await fetch(`${gw.url}/svc/tools/${tool}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const sent = (rpc: string) => rec.requests.filter((r) => r.rpc === rpc).map((r) => r.headers);
  /** The second fastsvc's audit lines for its whoami tool. */
  const notesAudit = () => notes.logs().filter((l) => l.audit === true && l.capability === 'tool:whoami');

  before(async () => {
    rec = await startRecordingUpstream();
    const [gwPort, notesPort] = [await freePort(), await freePort()];
    const gwUrl = `http://127.0.0.1:${gwPort}`;
    const notesUrl = `http://127.0.0.1:${notesPort}`;
    idp = await startIdp({ redirectUris: [`${gwUrl}/interaction/callback/corp`] });
    notes = await serveManifest({
      version: 1,
      name: 'notes',
      base_url: notesUrl,
      server: { host: '127.0.0.1' },
      audit: { to: 'stderr' },
      routes: { public: ['/healthz'], protected: ['/mcp'] },
      profile: { scopes: ['notes.read'] },
      auth: { token: '${NOTES_TOKEN}' },
      external_issuers: [{ issuer: idp.issuer, audience: `${notesUrl}/mcp`, scopes_from: ['groups'], direct_scopes: false, scope_map: { staff: ['notes.read'] } }],
      tools: [{
        name: 'whoami',
        description: 'Says whose notes these are: the subject of the token that called.',
        input_schema: { type: 'object', properties: { user: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' } }, required: ['user'] },
        bind: { user: 'principal.sub' },
        required_scopes: ['notes.read'],
        template: 'notes of {{user}}',
      }],
    }, { port: notesPort, env: { NOTES_TOKEN: notesToken } });
    const gateway = { token_url: idp.metadata.token_endpoint!, client_id: 'fastsvc-gateway', client_secret: '${GATEWAY_SECRET}' };
    gw = await serveManifest({
      version: 1,
      name: 'gateway',
      base_url: gwUrl,
      server: { host: '127.0.0.1' },
      routes: { public: ['/healthz', '/readyz'], protected: ['/svc', '/mcp'] },
      profile: { scopes: ['up.use'] },
      ...corporateFront(idp, gwUrl, 'up.use'),
      upstreams: [
        {
          name: 'rec', url: rec.url, auth: { static: { bearer: '${REC_BEARER}' } },
          expose: { prefix: 'r.', include: ['echo'], required_scopes: ['up.use'], auth: { upstream_login: { upstream: 'corp' } } },
        },
        {
          name: 'notes', url: `${notesUrl}/mcp`, auth: { static: { bearer: '${NOTES_TOKEN}' } },
          expose: { prefix: 'n.', required_scopes: ['up.use'], auth: { token_exchange: { ...gateway, resource: `${notesUrl}/mcp` } } },
        },
      ],
    }, {
      port: gwPort,
      env: {
        SVC_TOKEN: svcToken, REC_BEARER: recBearer, NOTES_TOKEN: notesToken,
        GATEWAY_SECRET: idp.clients['fastsvc-gateway']!.client_secret, CORP_SECRET: idp.clients['fastsvc-login']!.client_secret,
      },
    });
    ada = (await idp.userToken({ username: 'ada@acme.example', resource: `${gwUrl}/mcp`, format: 'jwt' })).access_token;
    grace = (await idp.userToken({ username: 'grace@acme.example', resource: `${gwUrl}/mcp`, format: 'jwt' })).access_token;
    callerTokens.push(ada, grace);
  });
  after(async () => {
    await gw?.stop();
    await notes?.stop();
    await idp?.stop();
    await rec?.close();
  });

  it('both upstreams are connected; the second fastsvc over 2026-07-28', async () => {
    const r = await (await fetch(`${gw.url}/readyz`)).json() as { upstreams: Record<string, { state: string; protocol_version?: string }> };
    assert.equal(r.upstreams.rec?.state, 'ready');
    assert.equal(r.upstreams.notes?.state, 'ready');
    assert.equal(r.upstreams.notes?.protocol_version, '2026-07-28');
  });

  it('upstream_login: a person who signed in through the IdP calls the upstream with their own IdP token; the connection keeps its bearer', async () => {
    const as = await discover(gw.url);
    const client = await register(as);
    const a = await authorize(as, client, { scope: 'up.use', resource: `${gw.url}/mcp` });
    assert.equal(a.callback?.origin, idp.url, 'sent to the IdP');
    const back = await idp.signIn(a.callback!, 'ada@acme.example');
    const consentPage = await a.browser.follow(back.href);
    const html = await consentPage.res.text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    assert.ok(action && csrf, `a consent page: ${html.slice(0, 300)}`);
    const done = await a.browser.follow(`${gw.url}${action}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf: csrf!, decision: 'allow' }) });
    const tokens = await exchange(as, client, oauth.None(), { ...a, callback: done.leftTo }, `${gw.url}/mcp`);
    signedIn = tokens.access_token;
    callerTokens.push(signedIn);

    const r = await call('r.echo', signedIn, { text: 'from ada' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const calls = sent('tools/call');
    assert.equal(calls.length, 1);
    const idpToken = secret(bearerOf(calls[0]!));
    const info = await idp.introspect(idpToken);
    assert.equal(info.active, true);
    assert.equal(info.sub, 'acme-1001', 'the person who signed in');
    assert.equal(info.client_id, 'fastsvc-login', 'the token fastsvc got when they signed in');
    for (const rpc of ['initialize', 'tools/list']) {
      assert.ok(sent(rpc).length > 0, rpc);
      for (const h of sent(rpc)) assert.equal(h.authorization, `Bearer ${recBearer}`, `${rpc}: the connection's own bearer`);
    }
  });

  it('upstream_login: callers who did not sign in through the IdP are refused before the upstream (CALLER_CREDENTIAL_MISSING)', async () => {
    const before = rec.calls.length;
    for (const token of [svcToken, ada]) {
      const r = await call('r.echo', token, { text: 'no login' });
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal((r.body.error as Json).code, 'CALLER_CREDENTIAL_MISSING');
    }
    assert.equal(rec.calls.length, before, 'the upstream saw no call');
  });

  it('token_exchange over 2026-07-28: the second fastsvc authorizes the exchanged token as the caller (its audit: allow, the caller\'s subject, an external token of the IdP, the scope it mapped)', async () => {
    const r = await call('n.whoami', ada, { user: 'acme-1001' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(JSON.stringify(r.body), /notes of acme-1001/);
    const line = await waitFor(() => notesAudit().find((l) => l.decision === 'allow' && l.sub === 'acme-1001'), 'the call in the second fastsvc\'s audit log');
    assert.equal(line.token_kind, 'external');
    assert.equal(line.issuer, idp.issuer);
    assert.ok((line.scopes_held as string[]).includes('notes.read'), 'the scope the second fastsvc mapped from the exchanged token\'s groups');
    // Through /mcp too (client 2.x), as another person: their own identity reaches the upstream.
    const client = new Client({ name: 'per-caller-e2e', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { authProvider: { token: async () => grace } }));
    try {
      const res = await client.callTool({ name: 'n.whoami', arguments: { user: 'acme-1002' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'notes of acme-1002' }]);
    } finally {
      await client.close();
    }
    await waitFor(() => notesAudit().find((l) => l.decision === 'allow' && l.sub === 'acme-1002'), 'grace\'s call in the second fastsvc\'s audit log');
  });

  it('token_exchange: the upstream itself refuses a caller naming another person (ARGUMENT_BOUND at the second fastsvc), and a caller without an external token never reaches it', async () => {
    const r = await call('n.whoami', grace, { user: 'acme-1001' });
    assert.equal(r.status, 502, JSON.stringify(r.body));
    const err = r.body.error as Json;
    assert.deepEqual([err.code, err.upstream, err.rpc_code], ['BACKEND_FAILED', 'notes', -32003], 'the upstream\'s own refusal, passed on');
    assert.match(String(err.message), /argument user is bound to principal\.sub \(acme-1002\)/, 'the upstream saw grace\'s identity, not ada\'s');
    await waitFor(() => notesAudit().find((l) => l.decision === 'deny' && l.sub === 'acme-1002'), 'the refusal in the second fastsvc\'s audit log');
    const before = notesAudit().length;
    for (const token of [svcToken, signedIn]) {
      const refused = await call('n.whoami', token, { user: 'acme-1001' });
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal((refused.body.error as Json).code, 'CALLER_CREDENTIAL_MISSING');
    }
    // A call that does reach it comes after them: its audit line is the first one since.
    assert.equal((await call('n.whoami', ada, { user: 'acme-1001' })).status, 200);
    await waitFor(() => (notesAudit().length > before ? true : undefined), 'the later call in the second fastsvc\'s audit log');
    assert.deepEqual(notesAudit().slice(before).map((l) => [l.decision, l.sub]), [['allow', 'acme-1001']], 'nothing else reached the second fastsvc');
  });

  it('no caller\'s token reaches an upstream; no secret or token in the gateway\'s output', () => {
    for (const r of rec.requests) {
      const values = Object.values(r.headers).flat().join('\n');
      for (const t of callerTokens) assert.ok(!values.includes(t), `a caller's token reached the recording upstream on ${r.http} ${r.rpc ?? ''}`);
    }
    // Every decision the second fastsvc made was about an exchanged token (the IdP's, for its audience): it refused no
    // credential it could not verify, as it would a caller's own token sent on (another audience).
    const audits = notes.logs().filter((l) => l.audit === true);
    assert.ok(audits.length >= 3);
    for (const l of audits) assert.deepEqual([l.token_kind, l.issuer], ['external', idp.issuer], JSON.stringify(l));
    const output = gw.stdout() + gw.stderr();
    for (const t of [recBearer, notesToken, idp.clients['fastsvc-gateway']!.client_secret!, idp.clients['fastsvc-login']!.client_secret!, ...callerTokens]) {
      assert.ok(!output.includes(t), 'a secret or a token in the gateway\'s output');
    }
  });
});
