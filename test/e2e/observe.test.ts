// What an operator watches, through `svc serve` as operators run it (test/helpers/serve.ts):
// the decision audit log in its own file (audit.to.file, fsync always) with one event per
// decision — allow, 403 deny, 401s, a front-door refusal, OAuth register/issue/refresh/
// revoke, reload applied and rejected — carrying the principal (token kind, a hash of the
// credential id, never a token), capability, transport, scopes, address and the caller's
// trace id; /metrics (protected by default) read with a strict Prometheus text parser, its
// counters moving by exactly the calls made; and the one readable start-up line on stderr
// while stdout keeps only the listening line.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { serveManifest, type Served } from '../helpers/serve.js';
import { parseProm, valueOf } from '../helpers/prom-text.js';
import { secret, secretTokens } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';
import { authorize, discover, exchange, insecure, register } from './oauth-harness.js';

const READER = secret(randomBytes(18).toString('base64url'));
const OPS = secret(randomBytes(18).toString('base64url'));
const SCRAPE = secret(randomBytes(18).toString('base64url'));
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

const manifest = (extra = '') => `version: 1
name: observe-e2e
audit:
  to: { file: audit.log }
  fsync: always
auth:
  tokens:
    - { name: reader, token: "\${READER_TOKEN}", scopes: [notes.read] }
    - { name: ops, token: "\${OPS_TOKEN}", scopes: [notes.read, notes.admin] }
    - { name: prometheus, token: "\${SCRAPE_TOKEN}", scopes: [] }
oauth:
  enabled: true
  registration: { enabled: true }
  login: { mode: auto, subject: dev }
profile:
  scopes: [notes.read, notes.admin]
tools:
  - name: notes.echo
    description: Echo.
    required_scopes: [notes.read]
    input_schema: { type: object, properties: { text: { type: string } } }
    template: "echo {{text}}"
  - name: notes.purge
    description: Admin only.
    required_scopes: [notes.admin]
    template: "purged"
${extra}`;

type Event = Record<string, unknown>;

describe('svc serve: audit log, /metrics, start-up line', function () {
  this.timeout(60_000);
  let dir: string;
  let srv: Served;
  const events = (): Event[] => readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event);
  const eventsAfter = (n: number) => events().slice(n);
  const call = (token: string | undefined, tool: string, headers: Record<string, string> = {}) => fetch(`${srv.url}/svc/tools/${tool}`, {
    method: 'POST', body: JSON.stringify({ text: 'x' }),
    headers: { 'content-type': 'application/json', ...(token !== undefined && { authorization: `Bearer ${token}` }), ...headers },
  });
  const metrics = async () => {
    // The README's scraper set-up: a named token holding no scope.
    const res = await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${SCRAPE}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parseProm(await res.text());
  };

  before(async () => {
    srv = await serveManifest(manifest(), { env: { READER_TOKEN: READER, OPS_TOKEN: OPS, SCRAPE_TOKEN: SCRAPE } });
    dir = srv.dir;
  });
  after(() => srv?.stop());

  it('prints one readable start-up line on stderr; stdout keeps only the listening line', async () => {
    assert.equal(srv.stdout(), `listening on ${srv.url}\n`);
    const line = await waitFor(() => srv.stderr().split('\n').find((l) => l.startsWith('fastsvc: serving ')), 'the start-up line');
    assert.equal(line, `fastsvc: serving observe-e2e on ${srv.url}: 2 tools, 0 resources, 0 prompts; auth bearer+oauth; oauth provider memory; audit to ${join(dir, 'audit.log')}; metrics at /metrics (protected); watching ${join(dir, 'svc.yaml')}`);
  });

  it('records allow, 403, each 401 and a front-door refusal as one event each, with the principal but never the token', async () => {
    const n = events().length;
    assert.equal((await call(READER, 'notes.echo', { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` })).status, 200);
    assert.equal((await call(READER, 'notes.purge')).status, 403);
    assert.equal((await call(undefined, 'notes.echo')).status, 401);
    assert.equal((await call('not-a-known-token', 'notes.echo')).status, 401);
    assert.equal((await fetch(`${srv.url}/svc/tools/notes.echo`, { method: 'POST', headers: { authorization: 'Basic abc' } })).status, 401);
    assert.equal((await fetch(`${srv.url}/svc/tools/notes.echo?access_token=${READER}`, { method: 'POST' })).status, 400);
    const got = eventsAfter(n);
    assert.deepEqual(got.map((e) => [e.decision, e.reason]), [
      ['allow', 'scopes_ok'], ['deny', 'insufficient_scope'], ['deny', 'missing_token'], ['deny', 'invalid_token'],
      ['deny', 'malformed_authorization'], ['deny', 'token_in_query'],
    ]);
    const [allow, deny] = got as [Event, Event];
    for (const e of [allow, deny]) {
      assert.equal(e.sub, 'reader');
      assert.equal(e.token_kind, 'static');
      assert.match(String(e.token_id), /^[0-9a-f]{16}$/);
      assert.equal(e.transport, 'svc');
      assert.deepEqual(e.scopes_held, ['notes.read']);
      assert.equal(e.ip, '127.0.0.1');
      assert.match(String(e.time), /^\d{4}-\d\d-\d\dT/);
    }
    assert.equal(allow.capability, 'tool:notes.echo');
    assert.deepEqual(allow.scopes_required, ['notes.read']);
    assert.equal(allow.trace_id, TRACE_ID);
    assert.equal(deny.capability, 'tool:notes.purge');
    assert.deepEqual(deny.scopes_required, ['notes.admin']);
    assert.equal(got[2]!.capability, '/svc');
    assert.equal(got[5]!.capability, '/svc/tools/notes.echo');
    const text = readFileSync(join(dir, 'audit.log'), 'utf8');
    assert.ok(!text.includes(READER) && !text.includes('not-a-known-token'), 'no token in the audit log');
  });

  it('counts calls by capability, transport and outcome, latency and auth failures, exactly as made', async () => {
    assert.equal((await fetch(`${srv.url}/metrics`)).status, 401, '/metrics is protected by default');
    const before = await metrics();
    const ok = { kind: 'tool', capability: 'notes.echo', transport: 'svc', outcome: 'ok' };
    const denied = { kind: 'tool', capability: 'notes.purge', transport: 'svc', outcome: 'INSUFFICIENT_SCOPE' };
    for (let i = 0; i < 3; i++) assert.equal((await call(READER, 'notes.echo')).status, 200);
    assert.equal((await call(READER, 'notes.purge')).status, 403);
    assert.equal((await call(READER, 'no.such.tool')).status, 404);
    assert.equal((await call('nope-nope-nope', 'notes.echo')).status, 401);
    const after = await metrics();
    assert.equal(after.types.get('fastsvc_calls_total'), 'counter');
    assert.equal(after.types.get('fastsvc_call_duration_seconds'), 'histogram');
    assert.equal(valueOf(after, 'fastsvc_calls_total', ok) - valueOf(before, 'fastsvc_calls_total', ok), 3);
    assert.equal(valueOf(after, 'fastsvc_calls_total', denied) - valueOf(before, 'fastsvc_calls_total', denied), 1);
    assert.equal(valueOf(after, 'fastsvc_calls_total', { capability: '_unknown', outcome: 'NOT_FOUND' }) - valueOf(before, 'fastsvc_calls_total', { capability: '_unknown', outcome: 'NOT_FOUND' }), 1);
    const count = { kind: 'tool', capability: 'notes.echo' };
    assert.equal(valueOf(after, 'fastsvc_call_duration_seconds_count', count) - valueOf(before, 'fastsvc_call_duration_seconds_count', count), 3);
    assert.equal(valueOf(after, 'fastsvc_call_duration_seconds_bucket', { ...count, le: '+Inf' }), valueOf(after, 'fastsvc_call_duration_seconds_count', count));
    assert.equal(valueOf(after, 'fastsvc_auth_failures_total', { reason: 'invalid_token' }) - valueOf(before, 'fastsvc_auth_failures_total', { reason: 'invalid_token' }), 1);
    assert.equal(valueOf(after, 'fastsvc_auth_failures_total', { reason: 'insufficient_scope' }) - valueOf(before, 'fastsvc_auth_failures_total', { reason: 'insufficient_scope' }), 1);
    assert.equal(valueOf(after, 'fastsvc_calls_in_flight'), 0);
    assert.equal(valueOf(after, 'fastsvc_open_sessions', { transport: 'mcp' }), 0);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds']) {
      assert.ok(after.samples.some((s) => s.name === name), `${name} is exported`);
    }
  });

  it('records OAuth registration, issuance, refresh and revocation, and counts the tokens', async () => {
    const n = events().length;
    const before = await metrics();
    const as = await discover(srv.url);
    const client = await register(as);
    const resource = `${srv.url}/svc`;
    const a = await authorize(as, client, { scope: 'notes.read', resource });
    const tokens = await exchange(as, client, oauth.None(), a, resource);
    assert.equal((await call(tokens.access_token, 'notes.echo')).status, 200);
    const refreshed = secretTokens(await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure)));
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), refreshed.access_token, insecure));
    const got = eventsAfter(n);
    const kinds = got.map((e) => e.decision);
    for (const k of ['register', 'issue', 'allow', 'refresh', 'revoke']) assert.ok(kinds.includes(k), `${k} is recorded: ${kinds.join(' ')}`);
    const issue = got.find((e) => e.decision === 'issue')!;
    assert.equal(issue.client_id, client.client_id);
    assert.equal(issue.sub, 'dev');
    assert.equal(issue.reason, 'authorization_code');
    const allow = got.find((e) => e.decision === 'allow')!;
    assert.equal(allow.token_kind, 'oauth');
    assert.equal(allow.token_id, issue.token_id, 'the call and the issuance name the same grant');
    const text = JSON.stringify(got);
    for (const s of [tokens.access_token, tokens.refresh_token!, refreshed.access_token, a.verifier]) assert.ok(!text.includes(s));
    const after = await metrics();
    for (const e of ['issued', 'refreshed', 'revoked']) {
      assert.equal(valueOf(after, 'fastsvc_oauth_tokens_total', { event: e }) - valueOf(before, 'fastsvc_oauth_tokens_total', { event: e }), 1, e);
    }
  });

  it('records a reload applied (new config hash in the info metric) and one rejected with its problems', async () => {
    const before = await metrics();
    const oldHash = before.samples.find((s) => s.name === 'fastsvc_config_info')!.labels.config_hash!;
    const n = events().length;
    srv.write(manifest(`  - name: notes.more
    description: Added by a reload.
    template: "more"
`));
    const applied = await waitFor(() => eventsAfter(n).find((e) => e.decision === 'reload_applied'), 'reload_applied', 10_000);
    assert.equal(applied.hash_before, oldHash);
    assert.notEqual(applied.hash_after, oldHash);
    const mid = await metrics();
    assert.equal(valueOf(mid, 'fastsvc_config_info', { config_hash: String(applied.hash_after) }), 1);
    assert.equal(mid.samples.filter((s) => s.name === 'fastsvc_config_info').length, 1);
    srv.write(manifest('  - name: 42\n'));
    const rejected = await waitFor(() => eventsAfter(n).find((e) => e.decision === 'reload_rejected'), 'reload_rejected', 10_000);
    assert.ok(Array.isArray(rejected.problems) && rejected.problems.length > 0);
    assert.match(String((rejected.problems as string[])[0]), /svc\.yaml:\d+:\d+: [A-Z_]+: /);
    const after = await metrics();
    assert.equal(valueOf(after, 'fastsvc_reloads_total', { result: 'applied' }) - valueOf(before, 'fastsvc_reloads_total', { result: 'applied' }), 1);
    assert.equal(valueOf(after, 'fastsvc_reloads_total', { result: 'rejected' }) - valueOf(before, 'fastsvc_reloads_total', { result: 'rejected' }), 1);
  });
});
