// What one shared MCP 2025 session costs (issue 40's capacity plan; docs/performance.md "Sessions anywhere: what
// 100,000 sessions need"): two real `svc serve` replicas (from dist/) on a throwaway PostgreSQL (the tests' helper,
// through tsx), a static token, no affinity — the script picks the replica of every request. It opens K sessions of a
// realistic shape (initialize with typical client capabilities on one replica, notifications/initialized,
// logging/setLevel and two resources/subscribe alternating, a tools/call), so each replica caches a copy of each, and
// measures:
//  (a) each replica's V8 heap retained after two full GCs (through the inspector, as bench/scaling.mjs) and VmRSS,
//      before and after the K copies, and on one replica before and after M GET streams it holds;
//  (b) pg_total_relation_size of fastsvc_sessions, fastsvc_session_events and fastsvc_session_signals (indexes and
//      TOAST included) ÷ K, after the K sessions and again after N outbound messages were kept for each;
//  (c) the NOTIFYs (and their payload bytes) per request kind, counted by the script's own LISTEN connection: each
//      phase ends with a NOTIFY of the script's on a channel of its own, and PostgreSQL delivers a listener's
//      notifications in commit order, so when that marker arrives every NOTIFY of the phase has; the rows each kind
//      writes, counted by a trigger the script adds to the throwaway database (an INSERT into a table of its own);
//  (d) the store's writes per idle session per minute, with and without a GET stream, over --idle-seconds;
//  (e) how fast one replica's LISTEN connection drains a burst of F `events` signals (one transaction) for sessions it caches without
//      a stream: the burst is committed, then a call on the other replica logs a line to a GET stream the first
//      replica holds; that line reaches the stream only after the replica's listener has handled the whole burst.
//      The replicas' CPU time per signal, and the script's own listener's drain rate (a bare pg client), beside it.
// Run by hand, not in the suite, on a quiet machine:
//   npm run build && node bench/session-capacity.mjs [--sessions 4000] [--events 32] [--streams 500] [--sample 200]
//     [--burst 50000] [--idle-seconds 60] [--json out.json]
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { inspectorEnv, openInspector } from './lib/inspector.mjs';
import { cpuMs, installCleanup, rssMiB, startServer, stopServer } from './lib/proc.mjs';

const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: '4000' },
    events: { type: 'string', default: '32' },
    streams: { type: 'string', default: '500' },
    sample: { type: 'string', default: '200' },
    burst: { type: 'string', default: '50000' },
    'idle-seconds': { type: 'string', default: '60' },
    json: { type: 'string' },
  },
});
const K = Number(args.sessions);
const N = Number(args.events);
const M = Number(args.streams);
const S = Number(args.sample);
const F = Number(args.burst);
const IDLE_S = Number(args['idle-seconds']);
const CONCURRENCY = 16;
const TOKEN = `capacity-${randomBytes(12).toString('hex')}`;
const LINE = 'indexed 42 files in /workspace/project/src; 3 warnings (see the build log for details) — step 2 of 5 done';
const CLIENT_CAPS = { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } };
const MARK = 'bench_capacity_mark';
const log = (m) => console.error(`[capacity] ${m}`);

const MANIFEST = `
version: 1
name: session-capacity
server: { host: 127.0.0.1, mcp_max_sessions: ${K + 2 * S + 1000} }
auth:
  token: ${TOKEN}
  scopes: [notes.read]
oauth:
  enabled: true
  provider: { type: postgres, url: "\${DATABASE_URL}", key_secret: "\${SVC_OAUTH_KEY_SECRET}" }
  login: { mode: auto, subject: dev }
profile:
  scopes: [notes.read]
routes:
  public: [/healthz]
  protected: [/mcp, /metrics]
tools:
  - name: notes.list
    description: Lists notes.
    required_scopes: [notes.read]
    content:
      - { type: text, text: "1. buy milk" }
  - name: notes.say
    description: Logs lines to the caller, then answers.
    required_scopes: [notes.read]
    input_schema: { type: object, properties: { line: { type: string }, count: { type: integer } }, required: [line] }
    module: ./say.mjs#say
  - name: notes.ask
    description: Asks the caller to confirm, then answers.
    required_scopes: [notes.read]
    module: ./say.mjs#ask
resources:
  - uri_template: notes://{id}
    name: note
    description: A note by id.
    required_scopes: [notes.read]
    text: "Note {{id}}"
`;
const MODULE = `export async function say(input, context) {
  for (let i = 0; i < (input.count ?? 1); i++) await context.channel.log('info', input.line);
  return 'said';
}
export async function ask(input, context) {
  const a = await context.channel.request('elicitation/create', { mode: 'form', message: 'Go on?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } }, { key: 'ok' });
  return a.action;
}
`;

// ---------------------------------------------------------------------------------------------------------------
// Clients.

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const base = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json' };

function post(url, sid, body) {
  return new Promise((resolve, reject) => {
    const headers = { ...base, ...(sid && { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }) };
    const req = http.request(`${url}/mcp`, { method: 'POST', headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, sid: res.headers['mcp-session-id'], body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
let rpcId = 0;
async function call(url, sid, method, params) {
  const r = await post(url, sid, { jsonrpc: '2.0', id: ++rpcId, method, params });
  if (r.status !== 200 || !r.body.includes('"result"')) throw new Error(`${method}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
  return JSON.parse(r.body).result;
}
async function notify(url, sid, method) {
  const r = await post(url, sid, { jsonrpc: '2.0', method });
  if (r.status !== 202) throw new Error(`${method}: HTTP ${r.status}`);
}
async function del(url, sid) {
  const r = await new Promise((resolve, reject) => {
    http.request(`${url}/mcp`, { method: 'DELETE', headers: { ...base, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, agent }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode));
    }).on('error', reject).end();
  });
  if (r !== 204) throw new Error(`DELETE: HTTP ${r}`);
}

/** A session of the realistic shape, its requests alternating between the replicas `a` and `b`. */
async function openSession(a, b, i) {
  const init = await post(a, undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: CLIENT_CAPS, clientInfo: { name: 'claude-code', version: '2.1.14' } } });
  if (init.status !== 200 || !init.sid) throw new Error(`initialize: HTTP ${init.status} ${init.body.slice(0, 200)}`);
  const sid = init.sid;
  await notify(b, sid, 'notifications/initialized');
  await call(a, sid, 'logging/setLevel', { level: 'info' });
  await call(b, sid, 'resources/subscribe', { uri: `notes://${i}-a` });
  await call(a, sid, 'resources/subscribe', { uri: `notes://${i}-b` });
  await call(b, sid, 'tools/call', { name: 'notes.list', arguments: {} });
  return sid;
}

/** A session's GET stream on `url`: next(match) resolves with the next message matching. */
function openStream(url, sid) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/mcp`, { headers: { ...base, accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET stream: HTTP ${res.statusCode}`));
      const queue = [];
      let waiter;
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const data = buf.slice(0, i).split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
          buf = buf.slice(i + 2);
          if (!data) continue;
          queue.push(JSON.parse(data));
          if (waiter) waiter();
        }
      });
      const next = async (match) => {
        for (;;) {
          const k = queue.findIndex(match);
          if (k >= 0) return queue.splice(0, k + 1).at(-1);
          if (res.readableEnded || res.destroyed) throw new Error('the GET stream ended');
          await new Promise((r) => (waiter = r));
          waiter = undefined;
        }
      };
      res.on('end', () => waiter?.());
      resolve({ next, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

/** fn(i) for i in [0, n), CONCURRENCY at a time. */
async function each(n, fn, width = CONCURRENCY) {
  const out = new Array(n);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, n) }, async () => {
    while (next < n) {
      const i = next++;
      out[i] = await fn(i);
    }
  }));
  return out;
}

async function mcpCount(url) {
  const r = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return Number(/^fastsvc_open_sessions\{transport="mcp"\} (\S+)/m.exec(await r.text())?.[1] ?? NaN);
}

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL's side: a LISTEN connection counting what arrives, sizes, rows written.

class Counter {
  constructor(client) {
    this.client = client;
    this.reset();
    this.marks = new Map();
    client.on('notification', (n) => {
      if (n.channel === MARK) return this.marks.get(n.payload)?.();
      this.count++;
      this.bytes += Buffer.byteLength(n.payload ?? '');
      const kind = /"kind":"(\w+)"/.exec(n.payload)?.[1] ?? (n.payload?.startsWith('{"ref"') ? 'ref' : 'other');
      this.kinds[kind] = (this.kinds[kind] ?? 0) + 1;
      this.onEach?.(this.count);
    });
  }
  reset() {
    this.count = 0;
    this.bytes = 0;
    this.kinds = {};
  }
  /** Resolves once every NOTIFY committed before now has arrived here. */
  async settle(db) {
    const tag = randomBytes(6).toString('hex');
    const seen = new Promise((r) => this.marks.set(tag, r));
    await db.query(`SELECT pg_notify($1, $2)`, [MARK, tag]);
    await seen;
    this.marks.delete(tag);
  }
}

const TABLES = ['fastsvc_sessions', 'fastsvc_session_events', 'fastsvc_session_signals'];
async function sizes(db) {
  const r = await db.query(`SELECT c.relname, pg_total_relation_size(c.oid) AS total, pg_relation_size(c.oid) AS heap,
      (SELECT count(*) FROM pg_index i WHERE i.indrelid = c.oid) AS indexes
    FROM pg_class c WHERE c.relname = ANY($1)`, [TABLES]);
  const rows = await db.query(`SELECT (SELECT count(*) FROM fastsvc_sessions) AS sessions, (SELECT count(*) FROM fastsvc_session_events) AS events,
      (SELECT count(*) FROM fastsvc_session_signals) AS signals,
      (SELECT coalesce(avg(pg_column_size(s.*)), 0) FROM fastsvc_sessions s) AS session_row, (SELECT coalesce(avg(length(record)), 0) FROM fastsvc_sessions) AS record_chars,
      (SELECT coalesce(avg(pg_column_size(e.*)), 0) FROM fastsvc_session_events e) AS event_row`);
  const by = Object.fromEntries(r.rows.map((x) => [x.relname, { total: Number(x.total), heap: Number(x.heap) }]));
  const x = rows.rows[0];
  return {
    tables: by, total: TABLES.reduce((s, t) => s + (by[t]?.total ?? 0), 0),
    sessions: Number(x.sessions), events: Number(x.events), signals: Number(x.signals),
    sessionRow: Number(x.session_row), recordChars: Number(x.record_chars), eventRow: Number(x.event_row),
  };
}

/** Every row written to the session tables, counted by a trigger into a table of the script's own. */
async function countWrites(db) {
  await db.query(`CREATE TABLE bench_writes (tbl TEXT, op TEXT);
    CREATE FUNCTION bench_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO bench_writes VALUES (TG_TABLE_NAME, TG_OP); RETURN NULL; END $$;
    ${TABLES.map((t) => `CREATE TRIGGER bench_count AFTER INSERT OR UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION bench_count();`).join('\n')}`);
}
async function writes(db) {
  const r = await db.query(`DELETE FROM bench_writes RETURNING tbl, op`);
  const out = {};
  for (const { tbl, op } of r.rows) {
    const k = `${tbl.replace('fastsvc_', '')} ${op.toLowerCase()}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

installCleanup();
const cleanup = [];
const result = { at: new Date().toISOString(), node: process.version, K, N, M, S, F, idleSeconds: IDLE_S };
try {
  const { tsImport } = await import('tsx/esm/api');
  const { startPostgres } = await tsImport('../test/helpers/postgres.ts', import.meta.url);
  const cluster = await startPostgres();
  cleanup.unshift(() => cluster.destroy());
  const dir = mkdtempSync(join(tmpdir(), 'fastsvc-capacity-'));
  cleanup.unshift(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'svc.yaml'), MANIFEST);
  writeFileSync(join(dir, 'say.mjs'), MODULE);
  const env = { DATABASE_URL: cluster.url(), SVC_OAUTH_KEY_SECRET: randomBytes(32).toString('base64url'), SVC_LOG_LEVEL: 'warn' };
  const replicas = [];
  for (let r = 0; r < 2; r++) {
    const insp = await inspectorEnv();
    const s = await startServer({ argv: ['dist/cli.js', 'serve', join(dir, 'svc.yaml'), '--port', '0', '--no-watch'] }, { ...env, ...insp.env }, 30_000);
    s.inspector = await openInspector(insp.port, 60_000);
    cleanup.unshift(async () => {
      s.inspector.close();
      await stopServer(s);
    });
    replicas.push(s);
  }
  const [A, B] = replicas.map((s) => s.url);
  const db = new pg.Client({ connectionString: cluster.url() });
  await db.connect();
  cleanup.unshift(() => db.end());
  const listener = new pg.Client({ connectionString: cluster.url() });
  await listener.connect();
  cleanup.unshift(() => listener.end());
  const counter = new Counter(listener);
  await listener.query(`LISTEN fastsvc_session; LISTEN ${MARK}`);
  result.postgres = (await db.query('SHOW server_version')).rows[0].server_version;
  log(`2 replicas ${A} ${B}, PostgreSQL ${result.postgres} on ${cluster.port}`);

  // Warm-up: both replicas run every request kind, then those sessions end.
  const warm = await each(100, (i) => openSession(i % 2 ? A : B, i % 2 ? B : A, `w${i}`));
  await each(warm.length, (i) => del(A, warm[i]));
  await counter.settle(db);
  await countWrites(db);

  // (a), (b) without messages: K sessions, each cached on both replicas.
  const mem = async () => Promise.all(replicas.map(async (s) => ({ heap: await s.inspector.heapAfterGcMiB(), rss: rssMiB(s.pid) })));
  const mem0 = await mem();
  const size0 = await sizes(db);
  counter.reset();
  await writes(db);
  let t0 = performance.now();
  const sids = await each(K, (i) => openSession(i % 2 ? A : B, i % 2 ? B : A, i));
  const openSec = (performance.now() - t0) / 1000;
  await counter.settle(db);
  const openWrites = await writes(db);
  const openNotifies = { count: counter.count, bytes: counter.bytes, kinds: counter.kinds };
  const cached = await Promise.all([A, B].map(mcpCount));
  if (cached.some((c) => c < K)) throw new Error(`the replicas cache ${cached.join(' and ')} sessions; expected ${K} each`);
  const mem1 = await mem();
  const size1 = await sizes(db);
  const mib = (x) => x * 2 ** 20;
  result.open = { seconds: +openSec.toFixed(1), requestsPerSecond: Math.round((K * 6) / openSec), cached, writesPerSession: perEach(openWrites, K), notifiesPerSession: +(openNotifies.count / K).toFixed(2), notifyKinds: openNotifies.kinds };
  result.memory = replicas.map((_, r) => ({
    heapMiB: [+mem0[r].heap.toFixed(1), +mem1[r].heap.toFixed(1)], rssMiB: [+mem0[r].rss.toFixed(1), +mem1[r].rss.toFixed(1)],
    heapKiBPerCopy: +((mib(mem1[r].heap - mem0[r].heap) / K) / 1024).toFixed(2), rssKiBPerCopy: +((mib(mem1[r].rss - mem0[r].rss) / K) / 1024).toFixed(2),
  }));
  result.store = { before: size0, after: size1, bytesPerSession: Math.round((size1.total - size0.total) / K) };
  log(`opened ${K} sessions in ${openSec.toFixed(1)} s; cached ${cached.join('/')}; heap KiB/copy ${result.memory.map((m) => m.heapKiBPerCopy).join('/')}; PostgreSQL ${result.store.bytesPerSession} B/session`);

  // (c) NOTIFYs and rows written per request kind, each on S sessions (a sample of the K), alternating replicas.
  const kinds = {};
  const phase = async (name, n, fn) => {
    await counter.settle(db);
    counter.reset();
    await writes(db);
    await each(n, fn);
    await counter.settle(db);
    kinds[name] = { n, notifies: +(counter.count / n).toFixed(2), payloadBytes: counter.count ? Math.round(counter.bytes / counter.count) : 0, byKind: counter.kinds, rowsWritten: perEach(await writes(db), n) };
    log(`${name}: ${JSON.stringify(kinds[name])}`);
  };
  const fresh = [];
  await phase('initialize + notifications/initialized', S, async (i) => {
    const init = await post(A, undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: CLIENT_CAPS, clientInfo: { name: 'claude-code', version: '2.1.14' } } });
    fresh[i] = init.sid;
    await notify(B, init.sid, 'notifications/initialized');
  });
  await phase('tools/list', S, (i) => call(i % 2 ? A : B, sids[i], 'tools/list', {}));
  await phase('tools/call (answer only)', S, (i) => call(i % 2 ? A : B, sids[i], 'tools/call', { name: 'notes.list', arguments: {} }));
  await phase('logging/setLevel', S, (i) => call(i % 2 ? A : B, sids[i], 'logging/setLevel', { level: 'warning' }));
  await phase('resources/subscribe', S, (i) => call(i % 2 ? A : B, sids[i], 'resources/subscribe', { uri: `notes://${i}-c` }));
  // A notification to a GET stream: the stream on A, the call on B (a JSON-only POST cannot carry its log line).
  const streamSids = sids.slice(0, Math.max(M, S));
  for (const sid of streamSids.slice(0, S)) await call(A, sid, 'logging/setLevel', { level: 'info' });
  const memS0 = await mem();
  const streams = await each(M, (i) => openStream(A, streamSids[i]));
  const memS1 = await mem();
  result.streamMemoryKiB = { heap: +((mib(memS1[0].heap - memS0[0].heap) / M) / 1024).toFixed(2), rss: +((mib(memS1[0].rss - memS0[0].rss) / M) / 1024).toFixed(2) };
  log(`${M} GET streams on one replica: heap KiB/stream ${result.streamMemoryKiB.heap}, RSS KiB/stream ${result.streamMemoryKiB.rss}`);
  await phase('a notification to a GET stream on another replica (tools/call logging one line)', S, async (i) => {
    const said = `${LINE} #${i}`;
    await call(B, streamSids[i], 'tools/call', { name: 'notes.say', arguments: { line: said } });
    await streams[i].next((m) => m.method === 'notifications/message' && m.params?.data === said);
  });
  await phase('an elicitation asked on B, its answer posted to A (question on the GET stream + answer)', S, async (i) => {
    const asked = call(B, streamSids[i], 'tools/call', { name: 'notes.ask', arguments: {} });
    const q = await streams[i].next((m) => m.method === 'elicitation/create');
    const r = await post(A, streamSids[i], { jsonrpc: '2.0', id: q.id, result: { action: 'accept', content: { ok: true } } });
    if (r.status !== 202) throw new Error(`answer: HTTP ${r.status}`);
    const res = await asked;
    if (res.content?.[0]?.text !== 'accept') throw new Error(`ask answered ${JSON.stringify(res)}`);
  });
  await phase('DELETE', S, (i) => del(i % 2 ? A : B, fresh[i]));
  result.kinds = kinds;

  // (e) One replica's listener against a burst of F `events` signals for sessions it caches without a stream
  // (A holds the first M streams; the burst names the others), committed in one transaction: from its commit on,
  // how fast the listeners take them in is theirs alone (the script's own, a bare pg client, beside the replica's).
  const quiet = sids.slice(Math.max(M, S));
  await counter.settle(db);
  counter.reset();
  const cpu0 = replicas.map((s) => cpuMs(s.pid));
  const mine = new Promise((r) => (counter.onEach = (c) => c >= F && r(performance.now())));
  t0 = performance.now();
  await db.query(`SELECT count(pg_notify('fastsvc_session', json_build_object('kind', 'events', 'id', ($1::text[])[1 + g % $2], 'n', g)::text))
    FROM generate_series(0, $3::int - 1) g`, [quiet, quiet.length, F]);
  const committed = performance.now() - t0;
  const said = `${LINE} after the burst`;
  await call(B, streamSids[0], 'tools/call', { name: 'notes.say', arguments: { line: said } });
  await streams[0].next((m) => m.method === 'notifications/message' && m.params?.data === said);
  const drainedA = performance.now() - t0;
  const drainedMine = (await mine) - t0;
  counter.onEach = undefined;
  const cpu1 = replicas.map((s) => cpuMs(s.pid));
  // Delivery starts at commit, before the committing statement's answer reaches the script: a rate over the time from
  // the statement's start is a lower bound, one over the time after its answer an upper bound.
  result.listen = {
    burst: F, committedMs: Math.round(committed), replicaDrainedMs: Math.round(drainedA), replicaAfterCommitMs: Math.round(drainedA - committed),
    replicaPerSecondAtLeast: Math.round(F / (drainedA / 1000)), barePgClientDrainedMs: Math.round(drainedMine),
    cpuUsPerSignal: cpu0.map((c, r) => +(((cpu1[r] - c) * 1000) / F).toFixed(1)),
  };
  log(`burst of ${F}: committed in ${committed.toFixed(0)} ms; the replica's stream heard the line after it ${drainedA.toFixed(0)} ms from the start (≥ ${result.listen.replicaPerSecondAtLeast}/s), the bare client had all after ${drainedMine.toFixed(0)} ms; CPU µs/signal ${result.listen.cpuUsPerSignal.join('/')}`);

  // (d) Idle: the M sessions with a GET stream on A and the rest without, for IDLE_S seconds.
  await counter.settle(db);
  counter.reset();
  await writes(db);
  const idleFrom = performance.now();
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  await counter.settle(db);
  const idleMin = (performance.now() - idleFrom) / 60_000;
  const idleWrites = await writes(db);
  result.idle = {
    minutes: +idleMin.toFixed(2), withStream: M, withoutStream: sids.length - M, rowsWritten: idleWrites, notifies: counter.count,
    writesPerStreamSessionPerMinute: +((idleWrites['sessions update'] ?? 0) / M / idleMin).toFixed(2),
  };
  log(`idle ${idleMin.toFixed(2)} min: ${JSON.stringify(idleWrites)}, ${counter.count} NOTIFYs`);
  for (const s of streams) s.close();

  // (b) with N kept messages per session: one call per session logging N lines to its outbound stream (no stream
  // held). The call is answered before its messages are stored (they go behind it, in batches: one append, one
  // NOTIFY, per batch), so the calls go in groups, each waiting until its sessions' messages are numbered in the
  // store (the sum of their next_seq): a batch given up (logged by the replica) never is, and the group says so.
  await counter.settle(db);
  counter.reset();
  const before = await sizes(db);
  const BATCH = 32;
  t0 = performance.now();
  for (let from = 0; from < K; from += BATCH) {
    const n = Math.min(BATCH, K - from);
    const ids = sids.slice(from, from + n);
    const stored = async () => Number((await db.query('SELECT coalesce(sum(next_seq - 1), 0) AS n FROM fastsvc_sessions WHERE id = ANY($1)', [ids])).rows[0].n);
    const want = (await stored()) + n * N;
    await each(n, (i) => call((from + i) % 2 ? A : B, sids[from + i], 'tools/call', { name: 'notes.say', arguments: { line: LINE, count: N } }));
    const deadline = Date.now() + 60_000;
    for (let got = await stored(); got < want; got = await stored()) {
      if (Date.now() > deadline) throw new Error(`messages of sessions ${from}–${from + n - 1}: ${want - got} of ${n * N} never stored (given up?)`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const appendSec = (performance.now() - t0) / 1000;
  await counter.settle(db);
  const after = await sizes(db);
  await db.query('VACUUM fastsvc_sessions, fastsvc_session_events');
  const vacuumed = await sizes(db);
  result.kept = {
    messagesPerSecond: Math.round((K * N) / appendSec), before, after, vacuumed,
    bytesPerMessage: Math.round((after.total - before.total) / (after.events - before.events)),
    bytesPerSessionWithN: Math.round(after.total / after.sessions),
  };
  log(`${N} messages kept per session: ${result.kept.bytesPerMessage} B/message, ${result.kept.bytesPerSessionWithN} B/session (${result.kept.messagesPerSecond} messages stored/s)`);
  console.log(JSON.stringify(result, null, 2));
  if (args.json) writeFileSync(args.json, JSON.stringify(result, null, 2));
} finally {
  agent.destroy();
  for (const fn of cleanup) await fn();
}

function perEach(counts, n) {
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, +(v / n).toFixed(2)]));
}
