// The audit events of task decisions and of limit refusals, through `svc serve` as
// operators run it (test/helpers/serve.ts), read from the audit file (fsync always): a task
// start, a read and a cancel of that task by another principal (one `deny not_task_owner`
// each, answered as not found), the owner's cancel (who cancelled), the expiry of a finished
// task (task_ttl_ms), a start refused by task_max_running_per_principal, a /ws message
// beyond ws_max_in_flight and an initialize refused by mcp_max_sessions while the one
// session is busy — each one event with the principal, capability and transport, never a
// token; /metrics counts the running tasks, the open session and socket, and the refusals.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { serveManifest, type Served } from '../helpers/serve.js';
import { parseProm, valueOf } from '../helpers/prom-text.js';
import { secret } from '../helpers/secrets.js';
import { waitFor } from '../helpers/wait.js';

const ALICE = secret(randomBytes(18).toString('base64url'));
const BOB = secret(randomBytes(18).toString('base64url'));

const MANIFEST = `version: 1
name: observe-limits
audit:
  to: { file: audit.log }
  fsync: always
server:
  drain_timeout_ms: 500
  task_ttl_ms: 1000
  task_max_running_per_principal: 1
  ws_max_in_flight: 1
  mcp_max_sessions: 1
routes:
  public: [/metrics]
  protected: [/svc, /mcp, /ws]
profile:
  scopes: [jobs.run]
auth:
  tokens:
    - { name: alice, token: "\${ALICE_TOKEN}", scopes: [jobs.run] }
    - { name: bob, token: "\${BOB_TOKEN}", scopes: [jobs.run] }
tools:
  - name: job.sleep
    description: Sleeps a minute, as a task.
    task: required
    required_scopes: [jobs.run]
    exec: { argv: [/bin/sleep, '60'], timeout_ms: 120000 }
  - name: job.quick
    description: Answers at once; a task when asked.
    task: optional
    template: "done"
  - name: job.block
    description: Sleeps a minute in the call itself.
    exec: { argv: [/bin/sleep, '60'], timeout_ms: 120000 }
`;

type Event = Record<string, unknown>;

describe('svc serve: audit events of task decisions and limit refusals', function () {
  this.timeout(60_000);
  let dir: string;
  let srv: Served;
  const events = (): Event[] => readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event);
  const svc = (path: string, token: string, init: RequestInit = {}) => fetch(`${srv.url}${path}`, {
    ...init, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...init.headers as Record<string, string> },
  });
  const metrics = async () => parseProm(await (await fetch(`${srv.url}/metrics`)).text());
  const mcpPost = (token: string, body: unknown, session?: string) => fetch(`${srv.url}/mcp`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`,
      ...(session && { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }),
    },
  });
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'limits', version: '1' } } };

  before(async () => {
    srv = await serveManifest(MANIFEST, { env: { ALICE_TOKEN: ALICE, BOB_TOKEN: BOB } });
    dir = srv.dir;
  });
  after(() => srv?.stop());

  it('records a task start, another principal refused as not found, the owner\'s cancel and a start over the cap', async () => {
    const n = events().length;
    const started = await svc('/svc/tools/job.sleep', ALICE, { method: 'POST', body: '{}' });
    assert.equal(started.status, 202);
    const id = String((await started.json() as { task_id: string }).task_id);
    assert.equal(valueOf(await metrics(), 'fastsvc_running_tasks'), 1);
    assert.equal((await svc('/svc/tools/job.sleep', ALICE, { method: 'POST', body: '{}' })).status, 429);
    assert.equal((await svc(`/svc/tasks/${id}`, BOB)).status, 404);
    assert.equal((await svc(`/svc/tasks/${id}`, BOB, { method: 'DELETE' })).status, 404);
    assert.equal((await svc(`/svc/tasks/${id}`, ALICE, { method: 'DELETE' })).status, 200);
    const got = events().slice(n).filter((e) => e.decision !== 'allow');
    assert.deepEqual(got.map((e) => [e.decision, e.reason, e.sub]), [
      ['task_start', 'admitted', 'alice'],
      ['refuse', 'task_limit', 'alice'],
      ['deny', 'not_task_owner', 'bob'],
      ['deny', 'not_task_owner', 'bob'],
      ['task_cancel', 'owner', 'alice'],
    ]);
    for (const e of got) {
      assert.equal(e.capability, 'tool:job.sleep');
      assert.equal(e.transport, 'svc');
      assert.equal(e.token_kind, 'static');
      assert.match(String(e.token_id), /^[0-9a-f]{16}$/);
      assert.equal(e.ip, '127.0.0.1');
    }
    for (const e of [got[0]!, got[2]!, got[4]!]) assert.equal(e.task_id, id);
    assert.equal(got[4]!.cancelled_by, 'alice');
    assert.equal(valueOf(await metrics(), 'fastsvc_running_tasks'), 0);
    assert.equal(valueOf(await metrics(), 'fastsvc_auth_failures_total', { reason: 'task_limit' }), 1);
  });

  it('records the expiry of a finished task, naming its owner', async () => {
    const started = await svc('/svc/tools/job.quick', BOB, { method: 'POST', body: '{}', headers: { prefer: 'respond-async' } });
    assert.equal(started.status, 202);
    const id = String((await started.json() as { task_id: string }).task_id);
    const expired = await waitFor(() => events().find((e) => e.decision === 'task_expire' && e.task_id === id), 'task_expire', 10_000);
    assert.equal(expired.reason, 'ttl');
    assert.equal(expired.sub, 'bob');
    assert.equal(expired.capability, 'tool:job.quick');
    assert.equal((await svc(`/svc/tasks/${id}`, BOB)).status, 404);
  });

  it('records a /ws message beyond ws_max_in_flight as one refuse event with the principal', async () => {
    const n = events().length;
    const ws = await new Promise<WebSocket>((resolve, reject) => {
      const s = new WebSocket(`${srv.url.replace('http', 'ws')}/ws`, 'mcp', { headers: { authorization: `Bearer ${ALICE}` } });
      s.once('open', () => resolve(s));
      s.once('error', reject);
    });
    const answers: { id: number; error?: { data?: { code?: string } } }[] = [];
    ws.on('message', (d) => answers.push(...[JSON.parse(String(d))].flat()));
    ws.send(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]));
    await waitFor(() => answers.length === 2 || undefined, 'two answers');
    assert.equal(valueOf(await metrics(), 'fastsvc_open_sessions', { transport: 'ws' }), 1, 'the socket is counted (session registry)');
    ws.close();
    assert.deepEqual(answers.map((a) => a.error?.data?.code), ['RATE_LIMITED', 'RATE_LIMITED']);
    const got = events().slice(n);
    assert.deepEqual(got.map((e) => [e.decision, e.reason, e.sub, e.transport, e.capability]), [['refuse', 'ws_max_in_flight', 'alice', 'ws', '/ws']]);
    assert.equal(got[0]!.ip, '127.0.0.1');
  });

  it('records an initialize refused by mcp_max_sessions while the one session is busy', async () => {
    const opened = await mcpPost(ALICE, initialize);
    assert.equal(opened.status, 200);
    const session = opened.headers.get('mcp-session-id')!;
    await opened.text();
    assert.equal((await mcpPost(ALICE, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202);
    assert.equal(valueOf(await metrics(), 'fastsvc_open_sessions', { transport: 'mcp' }), 1, 'the session is counted (session registry)');
    const n = events().length;
    const blocker = new AbortController();
    const busy = fetch(`${srv.url}/mcp`, {
      method: 'POST', signal: blocker.signal,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'job.block', arguments: {} } }),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${ALICE}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    }).catch(() => undefined);
    await waitFor(() => events().slice(n).some((e) => e.decision === 'allow' && e.capability === 'tool:job.block') || undefined, 'the blocking call admitted');
    const refused = await mcpPost(BOB, initialize);
    assert.equal(refused.status, 503);
    blocker.abort();
    await busy;
    const got = events().slice(n).filter((e) => e.decision === 'refuse');
    assert.deepEqual(got.map((e) => [e.reason, e.sub, e.transport, e.capability]), [['mcp_session_cap', 'bob', 'mcp', '/mcp']]);
    const text = readFileSync(join(dir, 'audit.log'), 'utf8');
    assert.ok(!text.includes(ALICE) && !text.includes(BOB), 'no token in the audit log');
  });
});
