// A burst of messages for a shared MCP 2025 session's GET stream while its appends wait longer than
// statement_timeout_ms: two `svc serve` replicas on one throwaway PostgreSQL (test/helpers/postgres.ts),
// each with a pool of one connection. The GET stream is held by 1; a call on 2 logs 30 lines its
// JSON-only POST cannot carry, while the test holds the session's row lock (what a pool busy beyond
// statement_timeout_ms does to an append): 2's first try times out, and the test lets go once 2 tries
// again. Every line reaches the stream, in order, numbered without gaps, and nothing is logged as lost
// (before batches were tried again, the lines whose appends timed out were only logged, never stored).
import assert from 'node:assert/strict';
import pg from 'pg';
import { serveManifest, type Served } from '../helpers/serve.js';
import { startPostgres, type PgCluster } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';
import { RawMcp } from '../helpers/mcp-app.js';
import { sseEvents } from '../helpers/sse.js';

const TOKEN = 'session-messages-e2e-token-0123456789abcdef';
const LINES = 30;
const MANIFEST = `
version: 1
name: burst
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
    pool_size: 1
    statement_timeout_ms: 500
  login: { mode: auto, subject: dev }
profile:
  scopes: [notes.read]
routes:
  public: [/healthz]
  protected: [/mcp]
tools:
  - name: notes.burst
    description: Logs n numbered lines to the caller, then answers.
    required_scopes: [notes.read]
    input_schema: { type: object, properties: { n: { type: integer } }, required: [n] }
    module: ./burst.mjs#burst
`;
const BURST = `export async function burst(input, context) {
  for (let k = 1; k <= input.n; k++) await context.channel.log('info', 'line ' + k);
  return 'sent';
}
`;

type Msg = Record<string, unknown>;

describe('a burst of messages for a GET stream on another replica, appends waiting beyond statement_timeout_ms', function () {
  this.timeout(60_000);
  let cluster: PgCluster;
  let one: Served;
  let two: Served;
  /** One client per replica, both on the session `onOne` opens. */
  let onOne: RawMcp;
  let onTwo: RawMcp;

  before(async function () {
    this.timeout(120_000);
    cluster = await startPostgres();
    const env = { DATABASE_URL: cluster.url(), SVC_OAUTH_KEY_SECRET: 'session-messages-key-secret-0123456789abcdef' };
    one = await serveManifest(MANIFEST, { files: { 'burst.mjs': BURST }, env });
    two = await one.again();
    onOne = new RawMcp(one.url, TOKEN);
    onTwo = new RawMcp(two.url, TOKEN);
  });
  after(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    cluster?.destroy();
  });

  it('every line reaches the stream, in order and numbered without gaps, though the first tries timed out', async () => {
    await onOne.initialize(onTwo); // notifications/initialized through 2
    const session = onOne.sessionId;
    assert.ok(session, 'an Mcp-Session-Id');
    // Two connections: one holds the row lock (in a transaction, which would see one snapshot of pg_stat_activity), one watches.
    const db = new pg.Client(cluster.url());
    const locker = new pg.Client(cluster.url());
    await Promise.all([db.connect(), locker.connect()]);
    const stream = await fetch(`${one.url}/mcp`, { headers: onOne.headers({ accept: 'text/event-stream' }) });
    assert.equal(stream.status, 200);
    const events = sseEvents(stream);
    try {
      // The stream is marked once it is attached: what is appended from then on reaches it.
      await waitFor(async () => ((await db.query('SELECT 1 FROM fastsvc_sessions WHERE id = $1 AND stream_by IS NOT NULL', [session])).rowCount ? true : undefined), 'the GET stream marked');
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM fastsvc_sessions WHERE id = $1 FOR UPDATE', [session]);
      const call = await onTwo.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'notes.burst', arguments: { n: LINES } } }, { accept: 'application/json' });
      assert.equal(call.status, 200, await call.clone().text());
      assert.deepEqual(((await call.json()) as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'sent' }]);
      // An append waiting for the row lock; a later one waiting started after it: the first timed out and was given up or tried again.
      const waiting = async () => (await db.query<{ started: Date }>(`SELECT query_start AS started FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO fastsvc_session_events%'`)).rows[0]?.started.getTime();
      const first = await waitFor(waiting, 'an append waiting for the row lock');
      await waitFor(async () => {
        const next = await waiting();
        return next !== undefined && next > first ? true : undefined;
      }, 'a later append waiting, after the first timed out', 10_000);
      await locker.query('COMMIT');
      const got: { id?: string; msg: Msg }[] = [];
      while (got.length < LINES) {
        const next = await events.next();
        assert.ok(!next.done, 'the stream ended early');
        if (next.value.msg.method === 'notifications/message') got.push(next.value);
        if ((next.value.msg.params as { data?: unknown } | undefined)?.data === `line ${LINES}`) break;
      }
      assert.deepEqual(got.map((e) => (e.msg.params as { data?: unknown }).data), Array.from({ length: LINES }, (_, k) => `line ${k + 1}`));
      const ids = got.map((e) => Number(e.id));
      assert.deepEqual(ids, Array.from({ length: LINES }, (_, k) => ids[0]! + k), 'numbered without gaps');
      assert.deepEqual(two.logs().filter((l) => l.msg === 'mcp session messages not stored'), [], 'nothing given up');
    } finally {
      await Promise.all([locker.end(), db.end()]); // a lock still held goes with its connection
      await events.return(undefined);
    }
  });
});
