// Two `svc serve` replicas with a static token only (no `oauth`) sharing `state` on one throwaway
// PostgreSQL (test/helpers/postgres.ts), raw fetch alternating replicas with no affinity: an MCP 2025
// session initialized on 1 is called on 2; a task started on 1 is read on 2; a limits.shared quota counts
// calls on both; `server.workers: 2` on the same state shares those sessions, tasks and quotas (PostgreSQL,
// not its SQLite file); DELETE on 2 ends the session on 1 too. The store holds the session and no OAuth keys.
// Last, PostgreSQL stopped: /readyz says store_unreachable and a shared quota refuses until it is back.
import assert from 'node:assert/strict';
import pg from 'pg';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startPostgres, type PgCluster } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';
import { RawMcp } from '../helpers/mcp-app.js';

const TOKEN = 'state-postgres-e2e-token-0123456789abcdef';
const MANIFEST = `
version: 1
name: state
server: { host: 127.0.0.1 }
auth:
  token: ${TOKEN}
  scopes: [notes.read]
state:
  type: postgres
  url: \${DATABASE_URL}
limits:
  shared: true
profile:
  scopes: [notes.read]
routes:
  public: [/healthz, /readyz]
  protected: [/mcp, /svc]
tools:
  - name: notes.list
    description: Lists notes.
    required_scopes: [notes.read]
    content:
      - { type: text, text: "1. buy milk" }
  - name: notes.count
    description: Counts notes; 3 calls an hour per token, across every replica.
    required_scopes: [notes.read]
    limits: { requests: 3, window_ms: 3600000 }
    content:
      - { type: text, text: "2" }
  - name: notes.report
    description: A report, as a task.
    task: required
    required_scopes: [notes.read]
    template: "the report"
`;

type Msg = Record<string, unknown>;

describe('state: two replicas on PostgreSQL with a static token only (no OAuth server), no affinity', function () {
  this.timeout(60_000);
  let cluster: PgCluster;
  let one: Served;
  let two: Served;
  /** One client per replica, both on the session `onOne` opens. */
  let onOne: RawMcp;
  let onTwo: RawMcp;
  const svc = (on: Served, path: string, init: RequestInit = {}) => fetch(`${on.url}${path}`, {
    ...init, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  });
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    const c = new pg.Client(cluster.url());
    await c.connect();
    try {
      return (await c.query<R>(text, values)).rows;
    } finally {
      await c.end();
    }
  };

  before(async function () {
    this.timeout(120_000);
    cluster = await startPostgres();
    one = await serveManifest(MANIFEST, { env: { DATABASE_URL: cluster.url() } });
    two = await one.again();
    onOne = new RawMcp(one.url, TOKEN);
    onTwo = new RawMcp(two.url, TOKEN);
  });
  after(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    cluster?.destroy();
  });

  it('both replicas are ready: the state store is reachable', async () => {
    for (const r of [one, two]) assert.equal((await fetch(`${r.url}/readyz`)).status, 200, r.url);
  });

  it('initializes on 1, calls on 2; the session is a row in the state database, which holds no OAuth keys', async () => {
    await onOne.initialize(onTwo); // notifications/initialized through 2
    const session = onOne.sessionId;
    assert.ok(session, 'an Mcp-Session-Id');
    const call = await onTwo.request('tools/call', { name: 'notes.list', arguments: {} });
    assert.equal(call.res.status, 200, JSON.stringify(call.messages));
    assert.deepEqual((call.answer?.result as Msg).content, [{ type: 'text', text: '1. buy milk' }]);
    assert.deepEqual((await query<{ id: string }>('SELECT id FROM fastsvc_sessions')).map((r) => r.id), [session]);
    assert.deepEqual(await query('SELECT name FROM fastsvc_oauth_keys'), [], 'a state store never seals or stores keys');
  });

  it('a task started on 1 (/svc) is read on 2, its result included', async () => {
    const started = await svc(one, '/svc/tools/notes.report', { method: 'POST', body: '{}' });
    assert.equal(started.status, 202, await started.clone().text());
    const id = ((await started.json()) as { task_id: string }).task_id;
    const done = await waitFor(async () => {
      const res = await svc(two, `/svc/tasks/${id}`);
      assert.equal(res.status, 200, 'replica 2 knows the task');
      const body = (await res.json()) as { status: string; result?: unknown };
      return body.status === 'completed' ? body : undefined;
    }, 'the task completed, as read on 2');
    assert.ok(JSON.stringify(done.result).includes('the report'), JSON.stringify(done));
    const listed = (await (await svc(two, '/svc/tasks')).json()) as { tasks: { task_id: string }[] };
    assert.ok(listed.tasks.some((t) => t.task_id === id), 'listed on 2');
  });

  it('counts a quota across both replicas (limits.shared): the 4th call of 3 an hour gets 429, wherever it lands', async () => {
    const call = (r: Served) => svc(r, '/svc/tools/notes.count', { method: 'POST', body: '{}' });
    for (const r of [one, two, one]) assert.equal((await call(r)).status, 200, r.url);
    const refused = await call(two); // 2 served only one of the three: per replica it would pass
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 3000, `Retry-After ${refused.headers.get('retry-after')}`);
    assert.equal((await call(one)).status, 429);
  });

  it('server.workers: 2 with state keeps sessions, tasks and quotas on PostgreSQL, shared with the replicas', async () => {
    const box = await serveManifest(MANIFEST.replace('server: { host: 127.0.0.1 }', 'server: { host: 127.0.0.1, workers: 2 }'), { env: { DATABASE_URL: cluster.url() } });
    try {
      const onBox = new RawMcp(box.url, TOKEN);
      await onBox.initialize();
      const id = onBox.sessionId ?? '';
      assert.deepEqual((await query<{ id: string }>('SELECT id FROM fastsvc_sessions WHERE id = $1', [id])).map((r) => r.id), [id], 'the session is a row in PostgreSQL');
      // The quota the replicas used up above is the one the workers count: not a fresh SQLite counter.
      assert.equal((await svc(box, '/svc/tools/notes.count', { method: 'POST', body: '{}' })).status, 429);
      const started = await svc(box, '/svc/tools/notes.report', { method: 'POST', body: '{}' });
      assert.equal(started.status, 202);
      const task = ((await started.json()) as { task_id: string }).task_id;
      assert.equal((await svc(one, `/svc/tasks/${task}`)).status, 200, 'a task started on the workers is read on replica 1');
    } finally {
      await box.stop();
    }
  });

  it('DELETE on 2 ends the session: 1 answers 404', async () => {
    assert.equal((await onOne.request('tools/list')).res.status, 200, '1 still serves it');
    const del = await fetch(`${two.url}/mcp`, { method: 'DELETE', headers: onTwo.headers() });
    assert.equal(del.status, 204);
    assert.equal((await onOne.request('tools/list')).res.status, 404);
    assert.equal((await onTwo.request('tools/list')).res.status, 404);
  });

  it('PostgreSQL down: /readyz answers 503 store_unreachable and a shared quota refuses (STORE_UNAVAILABLE); back up, ready again', async () => {
    cluster.stop();
    try {
      await waitFor(async () => {
        const res = await fetch(`${one.url}/readyz`);
        return res.status === 503 ? ((await res.json()) as { status: string }) : undefined;
      }, '/readyz 503 on 1', 15_000).then((b) => assert.equal(b.status, 'store_unreachable'));
      const refused = await svc(two, '/svc/tools/notes.count', { method: 'POST', body: '{}' });
      assert.equal(refused.status, 503);
      const err = ((await refused.json()) as { error: { code: string; message: string } }).error;
      assert.equal(err.code, 'STORE_UNAVAILABLE');
      assert.match(err.message, /shared state store/);
    } finally {
      cluster.start();
    }
    for (const r of [one, two]) await waitFor(async () => ((await fetch(`${r.url}/readyz`)).status === 200 || undefined), `/readyz 200 on ${r.url}`, 15_000);
  });
});
