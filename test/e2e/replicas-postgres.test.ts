// Two `svc serve` replicas of examples/replicas/svc.yaml on one throwaway PostgreSQL
// (test/helpers/postgres.ts), behind a tiny loopback round-robin proxy standing in for
// the load balancer (its URL is the issuer and base_url of both). An independent OAuth
// client (oauth4webapi) picks replicas explicitly — metadata from the proxy, endpoints
// pointed at one replica — or goes through the proxy, which alternates per request (an
// Mcp-Session-Id sticks to its replica); the 1.x MCP SDK client goes through the proxy.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import pg from 'pg';
import WebSocket from 'ws';
import { parse, stringify } from 'yaml';
import { childEnv, ROOT, run } from '../helpers/cli.js';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startPostgres, type PgCluster } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { authorize, discover, exchange, insecure, postForm, register, ScriptedProvider } from './oauth-harness.js';
import { secret, secretTokens } from '../helpers/secrets.js';
import { alive } from '../helpers/process.js';
import { frames } from '../helpers/sse.js';

const MANIFEST = join(ROOT, 'examples', 'replicas', 'svc.yaml');
/** Nothing listens here: the scripted browser stops at the first redirect off the server. */
const CALLBACK = 'http://127.0.0.1:59998/callback';
/** The example plus a task tool whose process a cancel must kill (tools: is its last section). */
const TASK_TOOL = `
  - name: job.sleep
    description: Writes its pid to a file, then sleeps a minute.
    task: required
    required_scopes: [notes.read]
    input_schema: { type: object, properties: { pidfile: { type: string } }, required: [pidfile] }
    exec:
      argv: [/bin/sh, -c, 'echo $$ > "$0"; exec sleep 60', '{{pidfile}}']
      timeout_ms: 120000
`;
/** A tool with a per-principal quota of 3 requests an hour (limits.shared is in the example). */
/** A tenant-bound task tool; the task re-authorisation test edits its required scope while the replicas run. */
const TENANT_TOOL = (scope: string) => `
  - name: report.run
    description: One tenant's report, as a task.
    task: required
    required_scopes: ["${scope}"]
    input_schema: { type: object, properties: { tenant: { type: string, pattern: "^[a-z]+$" } }, required: [tenant] }
    template: "report for {{tenant}}"
`;
const QUOTA_TOOL = `
  - name: notes.count
    description: Counts notes; 3 calls an hour per user, across every replica.
    required_scopes: [notes.read]
    limits: { requests: 3, window_ms: 3600000 }
    content:
      - { type: text, text: "2" }
  - name: notes.burst
    description: 2 calls an hour per user, across every replica (the concurrent-burst test's own quota).
    required_scopes: [notes.read]
    limits: { requests: 2, window_ms: 3600000 }
    content:
      - { type: text, text: "ok" }
`;

/**
 * Round-robin over `upstreams` (changeable); each request goes to the next one, except that a
 * request carrying an Mcp-Session-Id goes where that session was opened (sticky by header, as
 * the README asks of a load balancer for 2025-era sessions). `served` records each request's
 * upstream, method and path.
 */
function startProxy(upstreams: string[]) {
  let next = 0;
  const sessions = new Map<string, string>();
  const served: { upstream: string; method: string; path: string }[] = [];
  const server = http.createServer((req, res) => {
    const sid = req.headers['mcp-session-id'];
    const chosen = (typeof sid === 'string' && sessions.get(sid)) || upstreams[next++ % upstreams.length]!;
    served.push({ upstream: chosen, method: req.method!, path: req.url! });
    const target = new URL(chosen);
    const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      const opened = r.headers['mcp-session-id'];
      if (typeof opened === 'string') sessions.set(opened, chosen);
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  return new Promise<{ url: string; served: typeof served; close(): void }>((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  })));
}

describe('replicas on one PostgreSQL (svc serve ×2, round-robin proxy)', function () {
  this.timeout(60_000);
  let cluster: PgCluster;
  const upstreams: string[] = [];
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let a: Served;
  let b: Served;
  let viaProxy: oauth.AuthorizationServer;
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-replicas-'));
  const manifest = join(dir, 'svc.yaml');
  const text = (tenantScope: string) => readFileSync(MANIFEST, 'utf8') + TASK_TOOL + TENANT_TOOL(tenantScope) + QUOTA_TOOL;
  const doc = parse(text('tenant:{{tenant}}.read'));
  doc.profile.scopes.push('tenant:acme.read', 'tenant:acme.write');
  // Most tests register a client of their own on A, a dozen within a minute from 127.0.0.1: past /register's
  // default bucket (10 at once, then 10 a minute), which failed the last of them when the suite ran fast.
  doc.oauth.rate_limits = { register: { burst: 50, per_minute: 50 } };
  writeFileSync(manifest, stringify(doc));

  const env = () => ({ DATABASE_URL: cluster.url(), SVC_OAUTH_KEY_SECRET: 'replica-test-key-secret-0123456789abcdef', PUBLIC_URL: proxy.url });
  const start = () => serveManifest({ file: manifest }, { env: env() });
  /** The proxy's metadata with every endpoint on one replica. */
  const on = (replica: Served): oauth.AuthorizationServer =>
    ({ ...JSON.parse(JSON.stringify(viaProxy).replaceAll(proxy.url, replica.url)), issuer: viaProxy.issuer }) as oauth.AuthorizationServer;
  const callTool = (replica: Served, token: string) => fetch(`${replica.url}/svc/tools/notes.list`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}',
  });
  /** A registered public client and one unredeemed code for it (the authorize steps go through the proxy). */
  const codeFor = async (client?: oauth.Client) => {
    client ??= await register(on(a));
    const auth = await authorize(viaProxy, client, { scope: 'notes.read', resource: proxy.url });
    assert.ok(auth.callback, `authorization ended at ${auth.res.status}`);
    return { client, auth };
  };
  const tokenForm = (client: oauth.Client, x: Awaited<ReturnType<typeof codeFor>>['auth']) => ({
    grant_type: 'authorization_code', client_id: client.client_id, code: secret(x.callback!.searchParams.get('code')!),
    redirect_uri: x.redirectUri, code_verifier: x.verifier, resource: proxy.url,
  });

  before(async function () {
    this.timeout(120_000);
    cluster = await startPostgres();
    proxy = await startProxy(upstreams);
    [a, b] = await Promise.all([start(), start()]); // together: one migration, one set of keys
    upstreams.push(a.url, b.url);
    viaProxy = await discover(proxy.url);
  });
  after(async () => {
    if (process.env.DEBUG_REPLICAS) console.log(a.stderr().slice(-6000), b.stderr().slice(-3000));
    proxy?.close();
    await Promise.all([a?.stop(), b?.stop()]);
    cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers on A, authorizes through both, exchanges the code on A; the token works on A and B', async () => {
    const { client, auth } = await codeFor();
    const tokens = await exchange(on(a), client, oauth.None(), auth, proxy.url);
    for (const r of [a, b]) assert.equal((await callTool(r, tokens.access_token)).status, 200, r.url);
  });

  it('redeems a code once when both replicas receive it at the same moment; the loser gets invalid_grant and the grant dies', async () => {
    const { client, auth } = await codeFor();
    const form = tokenForm(client, auth);
    const answers = await Promise.all([a, b].map((r) => postForm(`${r.url}/token`, form)));
    const won = answers.filter((x) => x.status === 200);
    const lost = answers.filter((x) => x.status !== 200);
    assert.equal(won.length, 1, JSON.stringify(answers.map((x) => x.body)));
    assert.equal(lost[0]!.status, 400);
    assert.equal(lost[0]!.body.error, 'invalid_grant');
    const token = won[0]!.body.access_token as string;
    for (const r of [a, b]) await waitFor(async () => ((await callTool(r, token)).status === 401 ? true : undefined), `token refused on ${r.url}`);
  });

  it('rotates refresh tokens across replicas and detects a replay on the other one', async () => {
    const { client, auth } = await codeFor();
    const first = await exchange(on(a), client, oauth.None(), auth, proxy.url);
    const second = secretTokens(await oauth.processRefreshTokenResponse(on(b), client,
      await oauth.refreshTokenGrantRequest(on(b), client, oauth.None(), first.refresh_token!, insecure)));
    assert.ok(second.refresh_token && second.refresh_token !== first.refresh_token);
    const replay = await postForm(`${a.url}/token`, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: first.refresh_token! });
    assert.equal(replay.body.error, 'invalid_grant');
    const after = await postForm(`${b.url}/token`, { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: second.refresh_token });
    assert.equal(after.body.error, 'invalid_grant', 'the replay revoked the whole grant');
    assert.equal((await callTool(b, second.access_token)).status, 401);
  });

  it('closes an open /ws on B when the token is revoked on A, without waiting for a ping', async () => {
    const { client, auth } = await codeFor();
    const tokens = await exchange(on(a), client, oauth.None(), auth, proxy.url);
    assert.equal((await callTool(b, tokens.access_token)).status, 200); // B has it cached now
    const ws = new WebSocket(`${b.url.replace(/^http/, 'ws')}/ws`, ['mcp'], { headers: { authorization: `Bearer ${tokens.access_token}` } });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    const revoked = await oauth.revocationRequest(on(a), client, oauth.None(), tokens.access_token, insecure);
    await oauth.processRevocationResponse(revoked);
    assert.equal(await closed, 4401, 'closed for the revoked credential (the ping interval is 30 s)');
    assert.equal((await callTool(b, tokens.access_token)).status, 401);
  });

  it('the 1.x MCP SDK client registers, authorizes and calls tools through the proxy; its sessions stick, its token works on both', async () => {
    const provider = new ScriptedProvider(CALLBACK, 'replicas SDK 1.x');
    const mcpUrl = new URL(`${proxy.url}/mcp`);
    const from = proxy.served.length;
    assert.equal(await auth(provider, { serverUrl: mcpUrl, scope: 'notes.read' }), 'REDIRECT');
    assert.equal(await auth(provider, { serverUrl: mcpUrl, authorizationCode: await provider.code() }), 'AUTHORIZED');
    const oauthHits = proxy.served.slice(from).filter((s) => /^\/(register|authorize|interaction|token|\.well-known)/.test(s.path));
    assert.deepEqual(new Set(oauthHits.map((s) => s.upstream)), new Set([a.url, b.url]), 'the OAuth flow alternated between the replicas');
    // Two connections: each opens its session on the next replica and stays there.
    const clients: Client[] = [];
    const sessionsOn: string[] = [];
    for (const n of [1, 2]) {
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      const client = new Client({ name: `replicas-sdk-${n}`, version: '1.0.0' });
      await client.connect(transport);
      clients.push(client);
      assert.equal(transport.protocolVersion, '2025-11-25');
      const called = await client.callTool({ name: 'notes.list', arguments: {} });
      assert.deepEqual(called.content, [{ type: 'text', text: '1. buy milk\n2. write tests' }]);
      const hits = proxy.served.filter((s) => s.path === '/mcp' && s.method === 'POST').slice(-2);
      sessionsOn.push(hits[0]!.upstream);
      assert.equal(hits[1]!.upstream, hits[0]!.upstream, 'the session\'s later requests went where it was opened');
    }
    assert.deepEqual(new Set(sessionsOn), new Set([a.url, b.url]), 'one session on each replica, one token');
    assert.equal(provider.registrations, 1);
    await Promise.all(clients.map((c) => c.close()));
  });

  it('counts a quota across both replicas (limits.shared): the 4th call of 3 an hour gets 429, wherever it lands', async () => {
    const { client, auth } = await codeFor();
    const { access_token: token } = await exchange(on(a), client, oauth.None(), auth, proxy.url);
    const call = (r: Served) => fetch(`${r.url}/svc/tools/notes.count`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}',
    });
    // Earlier tests' tokens are for the same user (login subject dev) but never call notes.count.
    for (const r of [a, b, a]) assert.equal((await call(r)).status, 200, r.url);
    const refused = await call(b); // B served only one of the three: per replica it would pass
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 3000, `Retry-After ${refused.headers.get('retry-after')}`);
    assert.equal((await call(a)).status, 429);
    const explained = await fetch(`${b.url}/svc/explain`, { headers: { authorization: `Bearer ${token}` } });
    const row = ((await explained.json()) as { capabilities: { id: string; reasons: string[] }[] }).capabilities.find((c) => c.id === 'tool:notes.count');
    assert.ok(row?.reasons.includes('quota tool:notes.count per principal: 3 requests per 3600000 ms shared by all replicas'), JSON.stringify(row));
  });

  it('a concurrent burst over a shared quota on /mcp: as many calls as it allows answer, every other one is 429 with Retry-After', async () => {
    const { client, auth } = await codeFor();
    const { access_token: token } = await exchange(on(a), client, oauth.None(), auth, proxy.url);
    // 2026-07-28 calls, 4 on each replica at once: several pass the pre-dispatch check before any takes the quota.
    const call = (r: Served, id: number) => fetch(`${r.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'notes.burst',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'notes.burst', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    const answers = await Promise.all([a, b, a, b, a, b, a, b].map(async (r, i) => {
      const res = await call(r, i + 1);
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { result?: { content: unknown[] }; error?: { data?: { code?: string } } } };
    }));
    const passed = answers.filter((x) => x.status === 200);
    const refused = answers.filter((x) => x.status !== 200);
    assert.equal(passed.length, 2, JSON.stringify(answers));
    for (const x of passed) assert.deepEqual(x.body.result?.content, [{ type: 'text', text: 'ok' }]);
    for (const x of refused) {
      assert.equal(x.status, 429, JSON.stringify(x));
      assert.equal(x.body.error?.data?.code, 'RATE_LIMITED');
      assert.ok(Number(x.retryAfter) > 3000, `Retry-After ${x.retryAfter}`);
    }
  });

  it('runs a task on A that B reads, lists and cancels: A kills its process', async () => {
    const { client, auth } = await codeFor();
    const { access_token: token } = await exchange(on(a), client, oauth.None(), auth, proxy.url);
    const svc = (r: Served, path: string, init: RequestInit = {}) =>
      fetch(`${r.url}/svc${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    const pidfile = join(dir, 'pid');
    const started = await svc(a, '/tools/job.sleep', { method: 'POST', body: JSON.stringify({ pidfile }) });
    assert.equal(started.status, 202);
    const id = ((await started.json()) as { task_id: string }).task_id;
    const pid = await waitFor(() => {
      const s = (() => { try { return readFileSync(pidfile, 'utf8'); } catch { return ''; } })();
      return /^\d+\n$/.test(s) ? Number(s) : undefined;
    }, 'the pid of the task\'s process');
    assert.ok(alive(pid));
    const onB = await svc(b, `/tasks/${id}`);
    assert.equal(onB.status, 200);
    assert.equal(((await onB.json()) as { status: string }).status, 'working');
    const listed = (await (await svc(b, '/tasks')).json()) as { tasks: { task_id: string }[] };
    assert.ok(listed.tasks.some((t) => t.task_id === id), 'B lists the task A runs');
    const cancelled = await svc(b, `/tasks/${id}`, { method: 'DELETE' });
    assert.equal(cancelled.status, 200);
    assert.deepEqual(((await cancelled.json()) as { status: string; cancelled_by: string }), { ...((await svc(b, `/tasks/${id}`).then((x) => x.json())) as object), status: 'cancelled', cancelled_by: 'dev' });
    await waitFor(() => (alive(pid) ? undefined : true), `process ${pid} to be gone`);
    for (const r of [a, b]) {
      const body = (await (await svc(r, `/tasks/${id}`)).json()) as { status: string; cancelled_by: string };
      assert.equal(body.status, 'cancelled', r.url);
      assert.equal(body.cancelled_by, 'dev', r.url);
    }
  });

  it('re-authorises a task A ran on every replica with the arguments A stored: after a reload raises the tool\'s scope, A and B refuse it', async () => {
    const client = await register(on(a));
    const auth = await authorize(viaProxy, client, { scope: 'notes.read tenant:acme.read', resource: proxy.url });
    assert.ok(auth.callback, `authorization ended at ${auth.res.status}`);
    const { access_token: token } = await exchange(on(a), client, oauth.None(), auth, proxy.url);
    const svc = (r: Served, path: string, init: RequestInit = {}) =>
      fetch(`${r.url}/svc${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    const started = await svc(a, '/tools/report.run', { method: 'POST', body: JSON.stringify({ tenant: 'acme' }) });
    assert.equal(started.status, 202);
    const id = ((await started.json()) as { task_id: string }).task_id;
    await waitFor(async () => (((await (await svc(b, `/tasks/${id}`)).json()) as { status: string }).status === 'completed' ? true : undefined), 'B to read the finished task');
    const reloaded = (r: Served) => r.logs().filter((l) => l.event === 'config.reloaded').length;
    const before = [reloaded(a), reloaded(b)];
    const edited = parse(text('tenant:{{tenant}}.write'));
    edited.profile.scopes.push('tenant:acme.read', 'tenant:acme.write');
    edited.oauth.rate_limits = doc.oauth.rate_limits;
    writeFileSync(manifest, stringify(edited));
    await waitFor(() => (reloaded(a) > before[0]! && reloaded(b) > before[1]! ? true : undefined), 'both replicas to reload', 15_000);
    for (const r of [b, a]) {
      const read = await svc(r, `/tasks/${id}`);
      assert.equal(read.status, 403, r.url);
      assert.deepEqual(((await read.json()) as { error: { missing: string[] } }).error.missing, ['tenant:acme.write'], r.url);
      const listed = (await (await svc(r, '/tasks')).json()) as { tasks: { task_id: string }[] };
      assert.ok(!listed.tasks.some((t) => t.task_id === id), `${r.url} lists it no more`);
    }
  });

  it('/mcp 2026-07-28 subscriptions/listen on B follows tasks A runs: one notifications/tasks per cancel, made on A or on B', async () => {
    const { client, auth } = await codeFor();
    const { access_token: token } = await exchange(on(a), client, oauth.None(), auth, proxy.url);
    let n = 0;
    const post = (r: Served, method: string, params: Record<string, unknown>) => {
      const name = method === 'tools/call' ? params.name : params.taskId;
      return fetch(`${r.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(typeof name === 'string' && { 'mcp-name': name }),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++n, method, params: { ...params, _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        } } }),
      });
    };
    const start = async (pidfile: string) => {
      const res = await post(a, 'tools/call', { name: 'job.sleep', arguments: { pidfile } });
      assert.equal(res.status, 200);
      return ((await res.json()) as { result: { taskId: string } }).result.taskId;
    };
    const [t1, t2] = [await start(join(dir, 'pid-follow-1')), await start(join(dir, 'pid-follow-2'))];

    const listen = await post(b, 'subscriptions/listen', { notifications: { taskIds: [t1, t2, 'no-such-task'] } });
    assert.equal(listen.status, 200);
    const stream = frames(listen.body!);
    const ack = (await stream.next()).value!;
    assert.equal(ack.method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual((ack.params as { notifications: unknown }).notifications, { taskIds: [t1, t2] }, 'B follows both tasks A runs, not the unknown id');

    assert.equal((await post(a, 'tasks/cancel', { taskId: t1 })).status, 200); // on the replica running it
    assert.equal((await post(b, 'tasks/cancel', { taskId: t2 })).status, 200); // through the store, from the other one
    const seen = [];
    for (let i = 0; i < 2; i++) {
      const note = (await stream.next()).value!;
      assert.equal(note.method, 'notifications/tasks');
      const p = note.params as { taskId: string; status: string; statusMessage: string; _meta: Record<string, unknown> };
      assert.deepEqual(p._meta, { 'io.modelcontextprotocol/subscriptionId': (ack.params as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/subscriptionId'] });
      seen.push([p.taskId, p.status, p.statusMessage]);
    }
    // In order and once each: a repeated t1 would come before t2's.
    assert.deepEqual(seen, [[t1, 'cancelled', 'cancelled by dev'], [t2, 'cancelled', 'cancelled by dev']]);
    await stream.return(undefined);
  });

  it('answers 503 STORE_UNAVAILABLE at the statement timeout when the database is locked', async () => {
    const { client, auth } = await codeFor();
    const tokens = await exchange(on(a), client, oauth.None(), auth, proxy.url);
    const locker = new pg.Client(cluster.url());
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE fastsvc_oauth_state IN ACCESS EXCLUSIVE MODE');
      const res = await callTool(b, tokens.access_token); // B has never seen this token: it must ask the store
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { error?: { code?: string } }).error?.code, 'STORE_UNAVAILABLE');
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  });

  it('reports not-ready while PostgreSQL is down and recovers without a restart', async () => {
    cluster.stop();
    try {
      for (const r of [a, b]) {
        await waitFor(async () => ((await fetch(`${r.url}/readyz`)).status === 503 ? true : undefined), `${r.url} not ready`);
      }
      assert.equal((await fetch(`${a.url}/readyz`).then((x) => x.json()) as { status: string }).status, 'store_unreachable');
    } finally {
      cluster.start();
    }
    for (const r of [a, b]) await waitFor(async () => ((await fetch(`${r.url}/readyz`)).status === 200 ? true : undefined), `${r.url} ready again`, 15_000);
    const { client, auth } = await codeFor();
    const tokens = await exchange(on(b), client, oauth.None(), auth, proxy.url);
    assert.equal((await callTool(a, tokens.access_token)).status, 200);
  });

  it('loses no token acknowledged by a replica killed with SIGKILL under load; the other keeps serving', async () => {
    const client = await register(on(a)); // one client: /register is rate-limited per address
    const pending = [];
    for (let i = 0; i < 16; i++) pending.push(await codeFor(client));
    const acknowledged: string[] = [];
    let killed = false;
    await Promise.all(pending.map(async ({ client, auth }) => {
      const r = await postForm(`${b.url}/token`, tokenForm(client, auth)).catch(() => undefined);
      if (r?.status === 200) acknowledged.push(r.body.access_token as string);
      if (acknowledged.length >= 4 && !killed) {
        killed = true;
        b.proc.kill('SIGKILL');
      }
    }));
    assert.equal((await b.exit).signal, 'SIGKILL');
    assert.ok(acknowledged.length >= 4);
    for (const token of acknowledged) assert.equal((await callTool(a, token)).status, 200);
    upstreams.splice(upstreams.indexOf(b.url), 1);
    const last = await codeFor(client);
    const tokens = await exchange(on(a), client, oauth.None(), last.auth, proxy.url);
    assert.equal((await callTool(a, tokens.access_token)).status, 200);
  });

  it('rotates keys with `keys rotate` and a rolling restart: new key signs, old stays published, tokens keep working', async () => {
    // Runs after the SIGKILL test: only A serves. B comes back after the rotation, then A restarts.
    const kids = async (r: Served) => ((await (await fetch(`${r.url}/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    const [oldKid] = await kids(a);
    const before = await exchange(on(a), ...(await codeFor().then(({ client, auth }) => [client, oauth.None(), auth] as const)), proxy.url);
    const rotated = await run(['keys', 'rotate', manifest], { env: childEnv(env()) });
    assert.equal(rotated.code, 0, rotated.stderr);
    const newKid = /new signing key (\S+);/.exec(rotated.stdout)?.[1];
    assert.ok(newKid && newKid !== oldKid, rotated.stdout);
    assert.ok(!rotated.stdout.includes(env().SVC_OAUTH_KEY_SECRET) && !rotated.stdout.includes(cluster.url()), 'no secret printed');
    assert.deepEqual(await kids(a), [oldKid], 'A took its keys at start and keeps them until it restarts');
    b = await start();
    upstreams.push(b.url);
    assert.deepEqual(await kids(b), [newKid, oldKid], 'the restarted B signs with the new key and still publishes the old one');
    for (const r of [a, b]) assert.equal((await callTool(r, before.access_token)).status, 200, `a token from before the rotation on ${r.url}`);
    await a.stop();
    upstreams.splice(upstreams.indexOf(a.url), 1);
    a = await start();
    upstreams.push(a.url);
    assert.deepEqual(await kids(a), [newKid, oldKid]);
    const { client, auth } = await codeFor(); // through the proxy: both replicas, new keys everywhere
    const after = await exchange(on(b), client, oauth.None(), auth, proxy.url);
    for (const r of [a, b]) {
      assert.equal((await callTool(r, after.access_token)).status, 200, r.url);
      assert.equal((await callTool(r, before.access_token)).status, 200, r.url);
    }
  });
});
