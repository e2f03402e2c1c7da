// One contract suite over every SessionStore (src/sessions/session-store.ts), each as two
// processes sharing it: MemorySessionStore (one store, two endpoints of one process), SqliteSessionStore
// (two stores on one real temporary file, two Database handles, one LoopbackRelay between them) and
// PostgresSessionStore (two PostgresOAuthProviders — two pools, two LISTEN connections — on a
// throwaway cluster from test/helpers/postgres.ts). Then two OS processes appending to one SQLite
// file at once, and what only PostgreSQL has: listening() follows its LISTEN connection through an outage. Tests wait for signals, never for time; expiry is tested by
// moving Date.now() (every store reads expiry against it).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { PostgresOAuthProvider } from '../../src/auth/oauth/providers/postgres-provider.js';
import { LoopbackRelay } from '../../src/sessions/loopback-relay.js';
import { MemorySessionStore } from '../../src/sessions/memory-store.js';
import { PostgresSessionStore } from '../../src/sessions/postgres-store.js';
import type { SessionRecord, SessionSignal, SessionStore } from '../../src/sessions/session-store.js';
import { SqliteSessionStore } from '../../src/sessions/sqlite-store.js';
import { startPostgres, type PgCluster } from '../helpers/postgres.js';

/** run() with Date.now() `ms` ahead. */
async function later<T>(ms: number, run: () => Promise<T>): Promise<T> {
  const now = Date.now;
  Date.now = () => now() + ms;
  try {
    return await run();
  } finally {
    Date.now = now;
  }
}

/** Every signal a store delivers, and a wait for the ones a test expects. */
class Heard {
  readonly got: SessionSignal[] = [];
  #waits: { until: (got: SessionSignal[]) => boolean; done: () => void }[] = [];
  constructor(s: SessionStore) {
    s.onSignal((x) => {
      this.got.push(x);
      this.#waits = this.#waits.filter((w) => !(w.until(this.got) && (w.done(), true)));
    });
  }
  /** The signals about session `id`, in arrival order. */
  of(id: string): SessionSignal[] {
    return this.got.filter((x) => x.id === id);
  }
  /** Resolves once `n` signals about `id` have arrived; to those. */
  async count(id: string, n: number): Promise<SessionSignal[]> {
    const enough = () => this.of(id).length >= n;
    if (!enough()) await new Promise<void>((done) => this.#waits.push({ until: enough, done }));
    return this.of(id).slice(0, n);
  }
}

let cluster: PgCluster | undefined;
const dirs: string[] = [];
before(async function () {
  this.timeout(120_000);
  cluster = await startPostgres();
});
after(() => {
  cluster?.destroy();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});
const pgOpen = () => PostgresOAuthProvider.open({ url: cluster!.url(), poolSize: 4, statementTimeoutMs: 2000, keySecret: 'session-store-contract-key-0123456789' });
const sql = async (text: string) => {
  const c = new pg.Client(cluster!.url());
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
};
const failOnError = (e: unknown) => {
  throw e;
};

/** Two processes sharing one store: a and b (the same object for the in-process store). */
interface Shared {
  a: SessionStore;
  b: SessionStore;
  close(): Promise<void>;
}

const stores: { name: string; make: (keepEvents: number) => Promise<Shared> }[] = [
  {
    name: 'MemorySessionStore',
    make: async (keepEvents) => {
      const s = new MemorySessionStore({ keepEvents, onError: failOnError });
      return { a: s, b: s, close: () => s.close() };
    },
  },
  {
    name: 'SqliteSessionStore',
    make: async (keepEvents) => {
      const dir = mkdtempSync(join(tmpdir(), 'fastsvc-sessions-'));
      dirs.push(dir);
      const path = join(dir, 'shared.db');
      const relay = new LoopbackRelay();
      const a = new SqliteSessionStore(path, relay, { keepEvents, onError: failOnError });
      const handle = new Database(path);
      handle.pragma('journal_mode = WAL');
      handle.pragma('busy_timeout = 5000');
      const b = new SqliteSessionStore(handle, relay, { keepEvents, onError: failOnError });
      return {
        a,
        b,
        close: async () => {
          await a.close();
          await b.close();
          handle.close();
        },
      };
    },
  },
  {
    name: 'PostgresSessionStore',
    make: async (keepEvents) => {
      const [pa, pb] = await Promise.all([pgOpen(), pgOpen()]);
      await sql('TRUNCATE fastsvc_sessions, fastsvc_session_events, fastsvc_session_signals');
      const a = new PostgresSessionStore(pa, { keepEvents, onError: failOnError });
      const b = new PostgresSessionStore(pb, { keepEvents, onError: failOnError });
      return {
        a,
        b,
        close: async () => {
          await a.close();
          await b.close();
          await pa.close();
          await pb.close();
        },
      };
    },
  },
];

const newId = () => randomBytes(16).toString('base64url');
function record(over: Partial<SessionRecord> = {}): SessionRecord {
  const now = Date.now();
  return {
    id: newId(),
    owner: 'oauth\0https://issuer.example\0alice\0client-1',
    sub: 'alice',
    credentialId: 'grant-1',
    endpoint: 'notes',
    version: '2025-11-25',
    clientCaps: { elicitation: {}, roots: { listChanged: true }, extensions: { 'io.example/ü': { on: true } } },
    logLevel: 'info',
    subscriptions: [],
    loadedTools: [],
    tasks: [],
    createdAt: now,
    expiresAt: now + 60_000,
    ...over,
  };
}

for (const { name, make } of stores) {
  describe(`SessionStore contract: ${name}`, () => {
    let s: Shared;
    let heardA: Heard;
    let heardB: Heard;
    const open = async (keepEvents = 256) => {
      s = await make(keepEvents);
      heardA = new Heard(s.a);
      heardB = new Heard(s.b);
    };
    afterEach(() => s?.close());

    it('keeps a record as created, owner included, readable by the other process; an unknown id is not there', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      assert.deepEqual(await s.b.get(r.id), r);
      assert.equal((await s.b.get(r.id))?.owner, 'oauth\0https://issuer.example\0alice\0client-1');
      assert.equal(await s.b.get(newId()), undefined);
      const got = (await s.a.get(r.id))!;
      got.subscriptions.push('mutated://by-caller');
      assert.deepEqual((await s.a.get(r.id))?.subscriptions, []);
    });

    it('updates the fields a change names, keeps the others, and tells both processes after the change is readable', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      const readOnB = new Promise<SessionRecord | undefined>((resolve) => s.b.onSignal((x) => x.kind === 'changed' && x.id === r.id && resolve(s.b.get(r.id))));
      assert.equal(await s.a.update(r.id, { logLevel: 'debug', add: { subscriptions: ['notes://1'] } }), true);
      assert.deepEqual(await readOnB, { ...r, logLevel: 'debug', subscriptions: ['notes://1'] });
      assert.equal(await s.b.update(r.id, { add: { tasks: ['t1', 't2'], loadedTools: ['notes.search'], subscriptions: ['notes://1'] } }), true);
      assert.deepEqual(await s.a.get(r.id), { ...r, logLevel: 'debug', subscriptions: ['notes://1'], tasks: ['t1', 't2'], loadedTools: ['notes.search'] }, 'an item added twice is kept once');
      assert.deepEqual(await heardA.count(r.id, 2), [{ kind: 'changed', id: r.id }, { kind: 'changed', id: r.id }]);
      assert.deepEqual(await heardB.count(r.id, 2), [{ kind: 'changed', id: r.id }, { kind: 'changed', id: r.id }]);
      assert.equal(await s.a.update(r.id, { remove: { tasks: ['t1', 'never-added'] } }), true);
      assert.deepEqual((await s.b.get(r.id))?.tasks, ['t2']);
      assert.equal(await s.a.update(newId(), { logLevel: 'debug' }), false);
    });

    it('keeps every item two processes add to (and remove from) one record\'s lists at the same moment', async () => {
      await open();
      const r = record({ tasks: ['old-a', 'old-b'] });
      await s.a.create(r);
      const uris = (side: string) => Array.from({ length: 12 }, (_, i) => `notes://${side}/${i}`);
      await Promise.all([
        ...uris('a').map((u, i) => s.a.update(r.id, { add: { subscriptions: [u], ...(i === 0 && { tasks: ['new-a'] }) }, ...(i === 0 && { remove: { tasks: ['old-a'] } }) })),
        ...uris('b').map((u, i) => s.b.update(r.id, { add: { subscriptions: [u], ...(i === 0 && { tasks: ['new-b'] }) }, ...(i === 0 && { remove: { tasks: ['old-b'] } }) })),
      ]);
      const got = (await s.b.get(r.id))!;
      assert.deepEqual([...got.subscriptions].sort(), [...uris('a'), ...uris('b')].sort());
      assert.deepEqual([...got.tasks].sort(), ['new-a', 'new-b']);
    });

    it('streamMark() marks the GET stream\'s holder in the record without a signal, and clears only its own mark', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      await s.a.streamMark(r.id, 'stream-1', r.createdAt + 5);
      assert.deepEqual((await s.b.get(r.id))?.stream, { by: 'stream-1', at: r.createdAt + 5 });
      await s.b.streamMark(r.id, 'stream-2', r.createdAt + 9); // a new GET stream, on the other process
      await s.a.streamMark(r.id, 'stream-1', 0); // the old one closes after: the new one's mark stays
      assert.deepEqual((await s.a.get(r.id))?.stream, { by: 'stream-2', at: r.createdAt + 9 });
      await s.a.update(r.id, { add: { subscriptions: ['notes://1'] } });
      assert.deepEqual((await s.b.get(r.id))?.stream, { by: 'stream-2', at: r.createdAt + 9 }, 'a change keeps the mark');
      await s.b.streamMark(r.id, 'stream-2', 0);
      assert.deepEqual(await s.a.get(r.id), { ...r, subscriptions: ['notes://1'] });
      assert.deepEqual(await heardB.count(r.id, 1), [{ kind: 'changed', id: r.id }], 'only the change was signalled');
      await s.a.streamMark(newId(), 'stream-3', Date.now()); // an unknown session: nothing happens
    });

    it('streamMark() with an expiry moves the mark and a later expiry in one write; an earlier one never shortens it', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      await s.a.streamMark(r.id, 'stream-1', r.createdAt + 5, r.expiresAt + 60_000);
      const moved = await s.b.get(r.id);
      assert.deepEqual([moved?.stream, moved?.expiresAt], [{ by: 'stream-1', at: r.createdAt + 5 }, r.expiresAt + 60_000]);
      await s.b.streamMark(r.id, 'stream-1', r.createdAt + 7, r.expiresAt + 1_000);
      const kept = await s.a.get(r.id);
      assert.deepEqual([kept?.stream, kept?.expiresAt], [{ by: 'stream-1', at: r.createdAt + 7 }, r.expiresAt + 60_000]);
    });

    it('touch() moves the expiry without a signal, and a record past its expiry is never returned, changed or appended to', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      await s.a.touch(r.id, r.expiresAt + 120_000);
      assert.equal((await s.b.get(r.id))?.expiresAt, r.expiresAt + 120_000);
      await s.a.update(r.id, { logLevel: 'error' });
      assert.deepEqual(await heardB.count(r.id, 1), [{ kind: 'changed', id: r.id }]); // touch sent nothing before it
      await s.a.append(r.id, [{ n: 1 }]);
      await later(90_000, async () => assert.equal((await s.b.get(r.id))?.logLevel, 'error'));
      await later(200_000, async () => {
        assert.equal(await s.b.get(r.id), undefined);
        assert.equal(await s.b.update(r.id, { logLevel: 'debug' }), false);
        assert.equal(await s.b.append(r.id, [{ n: 2 }]), 0);
        assert.deepEqual(await s.b.since(r.id, 0), []);
        assert.equal(await s.b.head(r.id), 0);
        await s.b.touch(r.id, Date.now() + 60_000);
        assert.equal(await s.b.get(r.id), undefined, 'an expired session is not revived by touch()');
      });
    });

    it('end() deletes the record and its messages and tells both processes why; a second end() is false', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      await s.a.append(r.id, [{ jsonrpc: '2.0', method: 'notifications/message' }]);
      assert.equal(await s.b.end(r.id, 'deleted by the client'), true);
      const ended = { kind: 'ended', id: r.id, why: 'deleted by the client' };
      assert.deepEqual((await heardA.count(r.id, 2))[1], ended);
      assert.deepEqual((await heardB.count(r.id, 2))[1], ended);
      assert.equal(await s.a.get(r.id), undefined);
      assert.deepEqual(await s.a.since(r.id, 0), []);
      assert.equal(await s.a.head(r.id), 0);
      assert.equal(await s.a.append(r.id, [{ late: true }]), 0);
      assert.equal(await s.a.end(r.id, 'again'), false);
    });

    it('sweep() ends exactly the expired records, signalling each, and count() follows', async () => {
      await open();
      const now = Date.now();
      const old = record({ expiresAt: now - 1 });
      const live = record();
      await s.a.create(old);
      await s.a.create(live);
      assert.equal(await s.b.count(), 2);
      assert.equal(await s.b.sweep(now), 1);
      assert.deepEqual(await heardA.count(old.id, 1), [{ kind: 'ended', id: old.id, why: 'expired' }]);
      assert.deepEqual(await heardB.count(old.id, 1), [{ kind: 'ended', id: old.id, why: 'expired' }]);
      assert.equal(await s.a.count(), 1);
      assert.deepEqual(await s.a.get(live.id), live);
      assert.equal(await s.a.sweep(now), 0);
    });

    it('numbers appends 1, 2, 3, … without gaps when both processes append at once, and since()/head() read them in order', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      const [fromA, fromB] = await Promise.all([
        Promise.all(Array.from({ length: 40 }, (_, i) => s.a.append(r.id, [{ from: 'a', i }]))),
        Promise.all(Array.from({ length: 40 }, (_, i) => s.b.append(r.id, [{ from: 'b', i }]))),
      ]);
      assert.deepEqual([...fromA, ...fromB].sort((x, y) => x - y), Array.from({ length: 80 }, (_, i) => i + 1));
      assert.equal(await s.b.head(r.id), 80);
      const all = await s.b.since(r.id, 0);
      assert.deepEqual(all.map((e) => e.seq), Array.from({ length: 80 }, (_, i) => i + 1));
      for (const [i, seq] of fromA.entries()) assert.deepEqual(all[seq - 1]!.msg, { from: 'a', i });
      for (const [i, seq] of fromB.entries()) assert.deepEqual(all[seq - 1]!.msg, { from: 'b', i });
      assert.deepEqual((await s.a.since(r.id, 77)).map((e) => e.seq), [78, 79, 80]);
      assert.deepEqual(await s.a.since(r.id, 80), []);
      assert.deepEqual(new Set((await heardA.count(r.id, 80)).map((x) => x.kind)), new Set(['events']));
      assert.deepEqual(new Set((await heardB.count(r.id, 80)).map((x) => x.kind)), new Set(['events']));
    });

    it('appends a batch as one write: consecutive numbers in its order, one signal; an empty batch is nothing', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      assert.equal(await s.a.append(r.id, [{ i: 1 }]), 1);
      assert.equal(await s.b.append(r.id, [{ i: 2 }, { i: 3 }, { i: 4 }]), 4, 'resolves to the last number');
      assert.equal(await s.a.append(r.id, []), 0);
      assert.equal(await s.b.append(newId(), [{ i: 9 }, { i: 10 }]), 0, 'an unknown session stores nothing');
      assert.equal(await s.a.head(r.id), 4);
      assert.deepEqual(await s.a.since(r.id, 0), [1, 2, 3, 4].map((i) => ({ seq: i, msg: { i } })));
      assert.deepEqual(await s.b.since(r.id, 1), [2, 3, 4].map((i) => ({ seq: i, msg: { i } })));
      // A marker sent after both appends: whatever they signalled arrives before it.
      await s.b.signal({ kind: 'cancel', id: r.id, requestId: 'marker' });
      const events = { kind: 'events', id: r.id };
      assert.deepEqual(await heardA.count(r.id, 3), [events, events, { kind: 'cancel', id: r.id, requestId: 'marker' }]);
      assert.deepEqual(await heardB.count(r.id, 3), [events, events, { kind: 'cancel', id: r.id, requestId: 'marker' }]);
    });

    it('keeps each batch whole and in order when both processes append batches at once', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      const batch = (from: string, k: number) => Array.from({ length: 5 }, (_, i) => ({ from, k, i }));
      const [lastsA, lastsB] = await Promise.all([
        Promise.all(Array.from({ length: 20 }, (_, k) => s.a.append(r.id, batch('a', k)))),
        Promise.all(Array.from({ length: 20 }, (_, k) => s.b.append(r.id, batch('b', k)))),
      ]);
      // Each batch takes a block of five numbers of its own: the last numbers are 5, 10, …, 200.
      assert.deepEqual([...lastsA, ...lastsB].sort((x, y) => x - y), Array.from({ length: 40 }, (_, j) => 5 * (j + 1)));
      const all = await s.b.since(r.id, 0);
      assert.deepEqual(all.map((e) => e.seq), Array.from({ length: 200 }, (_, i) => i + 1));
      for (const [from, lasts] of [['a', lastsA], ['b', lastsB]] as const) {
        for (const [k, last] of lasts.entries()) assert.deepEqual(all.slice(last - 5, last).map((e) => e.msg), batch(from, k));
      }
      assert.equal(await s.a.head(r.id), 200);
    });

    it('keeps the newest keep_events messages of a session', async () => {
      await open(5);
      const r = record();
      const other = record();
      await s.a.create(r);
      await s.a.create(other);
      for (let i = 1; i <= 12; i++) assert.equal(await (i % 2 ? s.a : s.b).append(r.id, [{ i }]), i);
      await s.a.append(other.id, [{ i: 1 }]);
      assert.deepEqual(await s.b.since(r.id, 0), [8, 9, 10, 11, 12].map((i) => ({ seq: i, msg: { i } })));
      assert.deepEqual(await s.b.since(r.id, 10), [11, 12].map((i) => ({ seq: i, msg: { i } })));
      assert.equal(await s.b.head(r.id), 12);
      assert.deepEqual(await s.b.since(other.id, 0), [{ seq: 1, msg: { i: 1 } }]);
      // A batch bigger than keep_events: its newest are kept, numbered after the others.
      assert.equal(await s.b.append(r.id, Array.from({ length: 8 }, (_, j) => ({ i: 13 + j }))), 20);
      assert.deepEqual(await s.a.since(r.id, 0), [16, 17, 18, 19, 20].map((i) => ({ seq: i, msg: { i } })));
      assert.equal(await s.a.head(r.id), 20);
    });

    it('delivers signals to both processes in the order one process sent them, an answer bigger than 8000 bytes included', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      const big = { jsonrpc: '2.0', id: 7, result: { action: 'accept', content: { essay: 'ж'.repeat(6000) } } };
      const sent: SessionSignal[] = [
        { kind: 'cancel', id: r.id, requestId: 3 },
        { kind: 'answer', id: r.id, msg: big },
        { kind: 'answer', id: r.id, msg: { jsonrpc: '2.0', id: 'x-1', result: { roots: [] } } },
        { kind: 'cancel', id: r.id, requestId: 'call-9' },
      ];
      assert.ok(Buffer.byteLength(JSON.stringify(big)) > 8000);
      await Promise.all(sent.map((x) => s.a.signal(x))); // sent one after another, none awaited before the next
      const all: SessionSignal[] = [...sent, { kind: 'cancel', id: r.id, requestId: 'last' }];
      await s.a.signal(all[4]!);
      assert.deepEqual(await heardB.count(r.id, all.length), all);
      assert.deepEqual(await heardA.count(r.id, all.length), all);
    });

    it('tells every process of an append after it is readable', async () => {
      await open();
      const r = record();
      await s.a.create(r);
      const readOnB = new Promise((resolve) => s.b.onSignal((x) => x.kind === 'events' && x.id === r.id && resolve(s.b.since(r.id, 0))));
      const seq = await s.a.append(r.id, [{ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'notes://1' } }]);
      assert.deepEqual(await readOnB, [{ seq, msg: { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'notes://1' } } }]);
    });

    it('is listening while its channel is up', async () => {
      await open();
      assert.equal(s.a.listening(), true);
      assert.equal(s.b.listening(), true);
    });
  });
}

describe('SqliteSessionStore: two processes on one file', () => {
  it('numbers the appends of two processes appending at once 1, 2, 3, … without gaps', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'fastsvc-sessions-'));
    dirs.push(dir);
    const file = join(dir, 'shared.db');
    const store = new SqliteSessionStore(file, new LoopbackRelay(), { keepEvents: 10_000, onError: failOnError });
    const r = record();
    await store.create(r);
    const fixture = fileURLToPath(new URL('./fixtures/session-appender.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, file, r.id, '400'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    const theirs = new Promise<number[]>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.split('\n')[1]!) as number[]) : reject(new Error(`appender exited ${code}`))));
    });
    await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('ready\n')) resolve();
    }));
    child.stdin.end('go\n');
    const ours: number[] = [];
    try {
      // Yield between appends so the child's land in between ours.
      for (let i = 0; i < 400; i++) {
        ours.push(await store.append(r.id, [{ from: 'parent', i }]));
        await new Promise((resolve) => setImmediate(resolve));
      }
      const child400 = await theirs;
            assert.deepEqual([...ours, ...child400].sort((x, y) => x - y), Array.from({ length: 800 }, (_, i) => i + 1));
      const all = await store.since(r.id, 0);
      for (const [i, seq] of child400.entries()) assert.deepEqual(all[seq - 1]!.msg, { from: 'child', i });
      for (const [i, seq] of ours.entries()) assert.deepEqual(all[seq - 1]!.msg, { from: 'parent', i });
    } finally {
      await store.close();
    }
  });
});

describe('PostgresSessionStore: listening follows the LISTEN connection', () => {
  it('goes false when PostgreSQL stops and true when it is back, and then signals flow again', async function () {
    this.timeout(90_000);
    const p = await pgOpen();
    const store = new PostgresSessionStore(p, { keepEvents: 16, onError: () => undefined });
    const seen: boolean[] = [];
    let changed: (up: boolean) => void = () => undefined;
    store.onListening((up) => {
      seen.push(up);
      changed(up);
    });
    const next = (want: boolean) => new Promise<void>((resolve) => (changed = (up) => up === want && resolve()));
    try {
      assert.equal(store.listening(), true);
      const down = next(false);
      cluster!.stop();
      await down;
      assert.equal(store.listening(), false);
      const up = next(true);
      cluster!.start();
      await up;
      assert.equal(store.listening(), true);
      assert.deepEqual(seen, [false, true]);
      const heard = new Heard(store);
      const r = record();
      await store.create(r);
      await store.update(r.id, { logLevel: 'warning' });
      assert.deepEqual(await heard.count(r.id, 1), [{ kind: 'changed', id: r.id }]);
    } finally {
      await store.close();
      await p.close();
    }
  });
});
