// One MCP 2025 session served by two `svc serve` replicas on one throwaway PostgreSQL
// (test/helpers/postgres.ts), with no affinity: raw fetch picks the replica per request.
// Initialize on 1; list and call on 2; the GET stream held by 1 hears the log lines of a call
// on 2 (a JSON-only POST cannot carry them), numbered as SSE ids, and the end of a task started on 2, once (the
// task then leaves the session's record);
// DELETE on 2 ends 1's stream, then 1 answers 404.
import assert from 'node:assert/strict';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startPostgres, type PgCluster } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';
import { RawMcp } from '../helpers/mcp-app.js';
import { sseEvents } from '../helpers/sse.js';
import pg from 'pg';

const TOKEN = 'shared-sessions-e2e-token-0123456789abcdef';
const MANIFEST = `
version: 1
name: shared
server: { host: 127.0.0.1 }
auth:
  token: ${TOKEN}
  scopes: [notes.read]
oauth:
  enabled: true
  provider:
    type: postgres
    url: \${DATABASE_URL}
    key_secret: \${SVC_OAUTH_KEY_SECRET}
  login: { mode: auto, subject: dev }
profile:
  scopes: [notes.read]
routes:
  public: [/healthz]
  protected: [/mcp]
tools:
  - name: notes.list
    description: Lists notes.
    required_scopes: [notes.read]
    content:
      - { type: text, text: "1. buy milk" }
  - name: notes.say
    description: Logs a line to the caller, then answers.
    required_scopes: [notes.read]
    input_schema: { type: object, properties: { line: { type: string } }, required: [line] }
    module: ./say.mjs#say
  - name: notes.report
    description: A report, as a task.
    task: required
    required_scopes: [notes.read]
    template: "the report"
`;
const SAY = `export async function say(input, context) {
  await context.channel.log('info', input.line);
  return 'said';
}
`;

type Msg = Record<string, unknown>;

describe('one MCP 2025 session on two replicas sharing PostgreSQL, no affinity', function () {
  this.timeout(60_000);
  let cluster: PgCluster;
  let one: Served;
  let two: Served;
  /** One client per replica, both on the session `onOne` opens. */
  let onOne: RawMcp;
  let onTwo: RawMcp;
  const getStream = (on: RawMcp) => fetch(`${on.url}/mcp`, { headers: on.headers({ accept: 'text/event-stream' }) });
  const result = (r: { answer?: Msg }) => r.answer?.result as Msg;

  before(async function () {
    this.timeout(120_000);
    cluster = await startPostgres();
    const env = { DATABASE_URL: cluster.url(), SVC_OAUTH_KEY_SECRET: 'shared-sessions-key-secret-0123456789abcdef' };
    one = await serveManifest(MANIFEST, { files: { 'say.mjs': SAY }, env });
    two = await one.again();
    onOne = new RawMcp(one.url, TOKEN);
    onTwo = new RawMcp(two.url, TOKEN);
  });
  after(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    cluster?.destroy();
  });

  it('initializes on 1, lists and calls on 2', async () => {
    await onOne.initialize(onTwo); // notifications/initialized through 2
    assert.ok(onOne.sessionId, 'an Mcp-Session-Id');
    const list = await onTwo.request('tools/list');
    assert.equal(list.res.status, 200, JSON.stringify(list.messages));
    assert.deepEqual((result(list).tools as { name: string }[]).map((t) => t.name).sort(), ['notes.list', 'notes.report', 'notes.say']);
    const call = await onTwo.request('tools/call', { name: 'notes.list', arguments: {} });
    assert.deepEqual(result(call).content, [{ type: 'text', text: '1. buy milk' }]);
  });

  it('the GET stream on 1 hears what a call on 2 sends, each event numbered', async () => {
    const stream = await getStream(onOne);
    assert.equal(stream.status, 200);
    const events = sseEvents(stream);
    try {
      // A JSON-only POST cannot carry the call's log line: it goes to the session's stream, which 1 holds.
      const call = await onTwo.request('tools/call', { name: 'notes.say', arguments: { line: 'said on two' } }, { accept: 'application/json' });
      assert.equal(call.res.status, 200, JSON.stringify(call.messages));
      const next = await events.next();
      assert.ok(!next.done);
      assert.deepEqual(next.value.msg, { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'said on two' } });
      assert.match(next.value.id ?? '', /^[1-9]\d*$/);
    } finally {
      await events.return(undefined);
    }
  });

  it('a task started on 2: the GET stream on 1 tells its end, once', async () => {
    const stream = await getStream(onOne);
    assert.equal(stream.status, 200);
    const events = sseEvents(stream);
    try {
      const started = await onTwo.request('tools/call', { name: 'notes.report', arguments: {}, task: {} });
      assert.equal(started.res.status, 200, JSON.stringify(started.messages));
      const taskId = (result(started).task as { taskId: string }).taskId;
      const ends = (m: Msg) => m.method === 'notifications/tasks/status' && (m.params as { taskId?: string; status?: string }).taskId === taskId
        && (m.params as { status?: string }).status === 'completed';
      const seen: Msg[] = [];
      for (;;) {
        const next = await events.next();
        assert.ok(!next.done, 'the stream ended before the task did');
        if (ends(next.value.msg)) break;
      }
      // Then a call's line from 2: whatever 1 had to tell of the task came before it.
      await onTwo.request('tools/call', { name: 'notes.say', arguments: { line: 'after the task' } }, { accept: 'application/json' });
      for (;;) {
        const next = await events.next();
        assert.ok(!next.done);
        if (next.value.msg.method === 'notifications/message') break;
        seen.push(next.value.msg);
      }
      assert.deepEqual(seen.filter(ends), [], 'the end is told once');
      // The ended task leaves the session's record (its starter removes it).
      const c = new pg.Client(cluster.url());
      await c.connect();
      try {
        const tasks = async () => (JSON.parse((await c.query<{ record: string }>('SELECT record FROM fastsvc_sessions WHERE id = $1', [onOne.sessionId])).rows[0]!.record) as { tasks: string[] }).tasks;
        await waitFor(async () => (!(await tasks()).includes(taskId) || undefined), 'the ended task removed from the record');
      } finally {
        await c.end();
      }
    } finally {
      await events.return(undefined);
    }
  });

  it('DELETE on 2 ends the session: the GET stream on 1 ends, and 1 answers 404', async () => {
    const stream = await getStream(onOne);
    assert.equal(stream.status, 200);
    const del = await fetch(`${two.url}/mcp`, { method: 'DELETE', headers: onTwo.headers() });
    assert.equal(del.status, 204);
    assert.equal(await stream.text(), '', '1 ended its instance and the stream with it');
    assert.equal((await onOne.request('tools/list')).res.status, 404);
    assert.equal((await onTwo.request('tools/list')).res.status, 404);
  });
});
