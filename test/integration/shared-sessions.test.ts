// Two "replicas" in one process: two servers (serve()) on one MemorySessionStore, the way replicas share
// PostgreSQL and workers SQLite. A 2025 session opened on A is served by B request by request: a call,
// a log level set on A that B's call obeys, a subscription taken on A whose update (every replica reloads
// the same catalog) the client hears exactly once on its GET stream held by B, a server→client request
// asked on A answered through B, one asked while no GET stream is open anywhere failing at once, a cancellation through B that aborts A's call, DELETE on B that ends A's
// instance, a GET stream resumed on B from the Last-Event-ID of A's stream, and a burst of messages for B's
// stream stored in batches, tried again while the store is unavailable, and, given up, logged once with its count.
// In one process on purpose: the store's timing and failures (writes held until two replicas' changes meet,
// appends refused) are injected into the MemorySessionStore, which a `svc serve` process cannot be handed; the
// same flows on real `svc serve` replicas: test/e2e/shared-sessions-postgres.test.ts, sessions-anywhere.test.ts.

import assert from 'node:assert/strict';
import { pino } from 'pino';
import { buildCatalog } from '../../src/core/catalog.js';
import type { SvcServerConfig } from '../../src/core/config.js';
import { serve, type Served } from '../../src/server/listen.js';
import { SvcError } from '../../src/errors.js';
import { MemorySessionStore } from '../../src/sessions/memory-store.js';
import { JSON_AND_SSE, notesApp, RawMcp, readMessages, SCOPES } from '../helpers/mcp-app.js';
import { waitFor } from '../helpers/wait.js';
import { sseEvents } from '../helpers/sse.js';
import { streamMarkEvery } from '../../src/mcp/shared-sessions.js';

/** The sessions' idle time: a held stream's mark goes stale after two of streamMarkEvery(IDLE_MS). */
const IDLE_MS = 600_000;

type Msg = Record<string, unknown>;

/** The notes app, with a tool that runs until its call is aborted and a second readable resource. */
function app() {
  const svc = notesApp();
  svc.resource({ uri: 'notes://other', name: 'other', read: (uri) => [{ uri, text: 'other' }] });
  svc.tool({
    name: 'burst', description: 'Logs n numbered lines.',
    input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    handler: async (i, ctx) => {
      for (let k = 1; k <= Number(i.n); k++) await ctx.channel.log('info', `line ${k}`);
      return 'sent';
    },
  });
  svc.tool({
    name: 'hold', description: 'Runs until the call is cancelled.',
    handler: (_i, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
  });
  return svc;
}

/** The next event of `events` whose message matches `pred`, and every event read before it. */
async function until(events: AsyncGenerator<{ id?: string; msg: Msg }>, pred: (m: Msg) => boolean): Promise<{ id?: string; msg: Msg; before: Msg[] }> {
  const before: Msg[] = [];
  for (;;) {
    const n = await events.next();
    assert.ok(!n.done, `the stream ended before the message came (read: ${JSON.stringify(before)})`);
    if (pred(n.value.msg)) return { ...n.value, before };
    before.push(n.value.msg);
  }
}

describe('a 2025 session served by two replicas on one session store', () => {
  const token = 'shared-sessions-test-token-0123456789';
  const config: SvcServerConfig = {
    // A GET stream this test's fetch cancelled keeps its socket until the drain's limit (with or without a store): 1 s, not 10.
    server: { host: '127.0.0.1', port: 0, drain_timeout_ms: 1000, mcp_session_idle_ms: IDLE_MS },
    routes: { public: ['/healthz'], protected: ['/mcp'] },
    auth: { token, subject: 'operator' },
    profile: { scopes: SCOPES },
  };
  const store = new MemorySessionStore({ keepEvents: 100 });
  /** What the replicas logged at warn and above (LOG_LEVEL set: also printed). */
  const logged: Record<string, unknown>[] = [];
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' }, {
    write: (line: string) => {
      logged.push(JSON.parse(line) as Record<string, unknown>);
      if (process.env.LOG_LEVEL) process.stderr.write(line);
    },
  });
  let a: Served;
  let b: Served;

  before(async () => {
    a = await serve(app(), config, {}, { logger, sessionStore: store });
    b = await serve(app(), config, {}, { logger, sessionStore: store });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await store.close();
  });

  /** A session opened on A, and a client of the same session talking to B. */
  async function opened(): Promise<{ onA: RawMcp; onB: RawMcp }> {
    const onA = new RawMcp(a.url, token);
    await onA.initialize();
    const onB = new RawMcp(b.url, token);
    onB.sessionId = onA.sessionId;
    return { onA, onB };
  }

  const getStream = (c: RawMcp, extra: Record<string, string> = {}) => fetch(`${c.url}/mcp`, { headers: c.headers({ accept: 'text/event-stream', ...extra }) });

  it('initializes on A and calls on B; another caller gets what an unknown id gets on B', async () => {
    const { onA, onB } = await opened();
    const call = await onB.request('tools/call', { name: 'echo', arguments: { text: 'from B' } });
    assert.equal(call.res.status, 200);
    assert.deepEqual((call.answer?.result as { content: unknown }).content, [{ type: 'text', text: 'from B' }]);
    assert.ok(b.handle.sessions.peek(onA.sessionId!), 'B now holds an instance of the session');
    const other = await serve(notesApp(), { ...config, auth: { token: 'another-callers-token-0123456789abcd', subject: 'mallory' } }, {}, { logger, sessionStore: store });
    try {
      const stranger = new RawMcp(other.url, 'another-callers-token-0123456789abcd');
      stranger.sessionId = onA.sessionId;
      const r = await stranger.request('tools/list');
      assert.equal(r.res.status, 404);
      const unknown = new RawMcp(other.url, 'another-callers-token-0123456789abcd');
      unknown.sessionId = '00000000-0000-4000-8000-000000000000';
      const u = await unknown.request('tools/list');
      assert.equal(u.res.status, 404);
      assert.deepEqual(r.answer ?? r.messages[0], u.answer ?? u.messages[0], 'the same answer as an unknown id');
    } finally {
      await other.close();
    }
  });

  it('subscriptions taken on A and B at the same moment are both kept in the record', async () => {
    const { onA, onB } = await opened();
    assert.equal((await onB.request('ping')).res.status, 200); // B holds an instance too
    // Both changes reach the store only once both were made: neither replica has seen the other's.
    const update = store.update.bind(store);
    const held: (() => void)[] = [];
    store.update = (id, change) => new Promise((resolve) => {
      held.push(() => resolve(update(id, change)));
      if (held.length === 2) held.forEach((go) => go());
    });
    let fromA, fromB;
    try {
      [fromA, fromB] = await Promise.all([
        onA.request('resources/subscribe', { uri: 'notes://readme' }),
        onB.request('resources/subscribe', { uri: 'notes://other' }),
      ]);
    } finally {
      store.update = update;
    }
    assert.deepEqual([fromA.answer?.result, fromB.answer?.result], [{}, {}]);
    assert.deepEqual((await store.get(onA.sessionId!))?.subscriptions.sort(), ['notes://other', 'notes://readme']);
  });

  it('a log level set on A is obeyed by a call on B', async () => {
    const { onA, onB } = await opened();
    const chatty = () => onB.request('tools/call', { name: 'chatty', arguments: {} }, { accept: 'text/event-stream' });
    const before = await chatty();
    assert.equal(before.messages.filter((m) => m.method === 'notifications/message').length, 2, 'info logs heard at the default level');
    assert.deepEqual((await onA.request('logging/setLevel', { level: 'error' })).answer?.result, {});
    const after = await chatty();
    assert.ok(after.answer?.result, JSON.stringify(after.messages));
    assert.deepEqual(after.messages.filter((m) => m.method === 'notifications/message'), [], 'no info log after setLevel error on A');
  });

  it('a subscription taken on A: its update is heard exactly once on the GET stream B holds, though both replicas reload', async () => {
    const { onA, onB } = await opened();
    assert.deepEqual((await onA.request('resources/subscribe', { uri: 'notes://readme' })).answer?.result, {});
    const stream = await getStream(onB);
    assert.equal(stream.status, 200);
    const events = sseEvents(stream);
    const beforeA = a.handle.runtime.current();
    const beforeB = b.handle.runtime.current();
    const next = app();
    next.resource({ uri: 'notes://added', name: 'added', read: (uri) => [{ uri, text: 'new' }] });
    try {
      // B is told of the stream only once it attached it: wait for the holder's instance to have a channel.
      while (!b.handle.sessions.peek(onA.sessionId!)?.channel) await new Promise((r) => setImmediate(r));
      a.handle.runtime.swap(buildCatalog(next));
      b.handle.runtime.swap(buildCatalog(next));
      // A call on A whose messages its JSON-only POST cannot carry: they follow on the session's stream, after the reload's.
      const marker = await onA.request('tools/call', { name: 'chatty', arguments: {} }, { accept: 'application/json' });
      assert.equal(marker.res.status, 200);
      const got = await until(events, (m) => m.method === 'notifications/message' && (m.params as { data?: unknown }).data === 'finishing');
      assert.equal(got.before.filter((m) => m.method === 'notifications/resources/updated').length, 1, JSON.stringify(got.before));
      assert.equal(got.before.filter((m) => m.method === 'notifications/resources/list_changed').length, 1, JSON.stringify(got.before));
      assert.match(got.id ?? '', /^\d+$/, 'each event carries its number as its id');
    } finally {
      a.handle.runtime.swap(beforeA);
      b.handle.runtime.swap(beforeB);
      await events.return(undefined);
    }
  });

  it('a server→client request asked on A is answered through B', async () => {
    const { onA, onB } = await opened();
    const res = await onA.post({ jsonrpc: '2.0', id: 'ask-1', method: 'tools/call', params: { name: 'ask', arguments: {} } }, { accept: 'text/event-stream' });
    const events = sseEvents(res);
    const asked = await until(events, (m) => m.method === 'elicitation/create');
    const answered = await onB.post({ jsonrpc: '2.0', id: asked.msg.id, result: { action: 'accept', content: { name: 'Bea' } } });
    assert.equal(answered.status, 202);
    const result = await until(events, (m) => m.id === 'ask-1');
    assert.deepEqual((result.msg.result as { content: unknown }).content, [{ type: 'text', text: 'hello Bea' }]);
  });

  it('a server→client request fails at once while no GET stream is open anywhere (a killed holder\'s stale mark counts as none), and reaches the stream once one is', async () => {
    const { onA, onB } = await opened();
    // A JSON-only POST cannot carry the call's elicitation: it is for the session's GET stream, which nobody holds.
    const ask = () => onB.request('tools/call', { name: 'ask', arguments: {} }, { accept: 'application/json' });
    const alone = await ask();
    assert.equal(alone.res.status, 200);
    assert.match(JSON.stringify(alone.answer), /no open stream to the client can carry elicitation\/create/);
    // A holder killed with its stream marked: its mark, older than two keep-alives, is no stream.
    await store.streamMark(onA.sessionId!, 'killed-holder', Date.now() - 2 * streamMarkEvery(IDLE_MS) - 1000);
    assert.match(JSON.stringify((await ask()).answer), /no open stream to the client can carry elicitation\/create/);
    const stream = await getStream(onA);
    assert.equal(stream.status, 200);
    const events = sseEvents(stream);
    try {
      assert.equal((await store.get(onA.sessionId!))?.stream?.by !== 'killed-holder', true, 'the new stream marked the record');
      const asked = onB.request('tools/call', { name: 'ask', arguments: {} }, { accept: 'application/json' });
      const question = await until(events, (m) => m.method === 'elicitation/create');
      assert.equal((await onA.post({ jsonrpc: '2.0', id: question.msg.id, result: { action: 'accept', content: { name: 'Ann' } } })).status, 202);
      assert.deepEqual(((await asked).answer?.result as { content: unknown }).content, [{ type: 'text', text: 'hello Ann' }]);
    } finally {
      await events.return(undefined);
    }
    // The stream closed: its mark goes with it.
    await waitFor(async () => ((await store.get(onA.sessionId!))?.stream === undefined ? true : undefined), 'the stream mark cleared');
  });

  it('a cancellation sent to B aborts the call running on A', async () => {
    const { onA, onB } = await opened();
    const running = onA.post({ jsonrpc: '2.0', id: 'long-1', method: 'tools/call', params: { name: 'hold', arguments: {} } }, { accept: JSON_AND_SSE });
    // The call is running on A once A's instance has it in flight.
    while (!a.handle.sessions.peek(onA.sessionId!)?.session.inflight) await new Promise((r) => setImmediate(r));
    const cancel = await onB.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long-1', reason: 'changed my mind' } });
    assert.equal(cancel.status, 202);
    const res = await running;
    assert.equal(res.status, 202, 'a cancelled call gets no answer');
    assert.deepEqual(await readMessages(res), []);
  });

  it('DELETE on B ends the instance A holds, and A then answers 404', async () => {
    const { onA, onB } = await opened();
    const onAEntry = a.handle.sessions.peek(onA.sessionId!)!;
    assert.ok(onAEntry && !onAEntry.session.closed);
    const stream = await getStream(onA);
    assert.equal(stream.status, 200);
    const del = await fetch(`${b.url}/mcp`, { method: 'DELETE', headers: onB.headers() });
    assert.equal(del.status, 204);
    await stream.text(); // A's GET stream ends with the session
    assert.ok(onAEntry.session.closed, 'A ended its instance');
    assert.equal((await onA.request('tools/list')).res.status, 404);
    assert.equal((await onB.request('tools/list')).res.status, 404);
  });

  it('a GET stream resumed on B from the Last-Event-ID of A\'s stream replays what it missed, in order', async () => {
    const { onA, onB } = await opened();
    const first = await getStream(onA);
    const events = sseEvents(first);
    while (!a.handle.sessions.peek(onA.sessionId!)?.channel) await new Promise((r) => setImmediate(r));
    const chatty = () => onB.request('tools/call', { name: 'chatty', arguments: {} }, { accept: 'application/json' });
    await chatty();
    const seen = await until(events, (m) => m.method === 'notifications/message' && (m.params as { data?: unknown }).data === 'finishing');
    const lastId = seen.id!;
    await events.return(undefined);
    // Missed while no stream was open: B's call, carried by nothing but the session's outbound stream.
    await chatty();
    const resumed = sseEvents(await getStream(onB, { 'last-event-id': lastId }));
    try {
      const got = await until(resumed, (m) => m.method === 'notifications/message' && (m.params as { data?: unknown }).data === 'finishing');
      assert.deepEqual([...got.before, got.msg].map((m) => (m.params as { data?: unknown }).data), ['starting', 'finishing']);
      assert.equal(Number(got.id), Number(lastId) + 2, 'numbered on from where A\'s stream stopped');
    } finally {
      await resumed.return(undefined);
    }
  });

  it('a burst of messages for B\'s GET stream is stored in fewer writes than messages, tried again while the store is unavailable, and arrives whole and in order', async () => {
    const { onA, onB } = await opened();
    const id = onA.sessionId!;
    const events = sseEvents(await getStream(onB));
    while (!b.handle.sessions.peek(id)?.channel) await new Promise((r) => setImmediate(r));
    const append = store.append.bind(store);
    const batches: number[] = [];
    let failed = 0;
    store.append = (sid, msgs) => {
      if (sid !== id) return append(sid, msgs);
      if (failed < 2) {
        failed++;
        return Promise.reject(new SvcError('STORE_UNAVAILABLE', 'the pool is busy'));
      }
      batches.push(msgs.length);
      return append(sid, msgs);
    };
    try {
      // A JSON-only POST on A cannot carry the call's lines: they go to the session's stream, which B holds.
      const call = await onA.request('tools/call', { name: 'burst', arguments: { n: 40 } }, { accept: 'application/json' });
      assert.equal(call.res.status, 200);
      const data = (m: Msg) => (m.params as { data?: unknown } | undefined)?.data;
      const got = await until(events, (m) => data(m) === 'line 40');
      assert.deepEqual([...got.before, got.msg].map(data), Array.from({ length: 40 }, (_, k) => `line ${k + 1}`));
      assert.equal(failed, 2, 'two tries failed');
      assert.equal(batches.reduce((x, y) => x + y, 0), 40);
      assert.ok(batches.length < 40, `fewer writes than messages: ${JSON.stringify(batches)}`);
      assert.deepEqual(logged.filter((l) => l.session === id), [], 'nothing given up');
    } finally {
      store.append = append;
      await events.return(undefined);
    }
  });

  it('messages the store still refuses after the tries are given up and logged once, with how many', async () => {
    const { onA } = await opened();
    const id = onA.sessionId!;
    const append = store.append.bind(store);
    let tries = 0;
    store.append = (sid, msgs) => {
      if (sid !== id) return append(sid, msgs);
      tries++;
      return Promise.reject(new SvcError('STORE_UNAVAILABLE', 'the pool is busy'));
    };
    try {
      const call = await onA.request('tools/call', { name: 'burst', arguments: { n: 5 } }, { accept: 'application/json' });
      assert.equal(call.res.status, 200);
      await a.handle.sessions.settled(); // tried within drain_timeout_ms (1 s here), then given up
      const lost = logged.filter((l) => l.session === id && l.msg === 'mcp session messages not stored');
      assert.equal(lost.reduce((n, l) => n + (l.messages as number), 0), 5, JSON.stringify(lost));
      assert.ok(lost.length < 5, 'one line per batch, not per message');
      assert.ok(tries >= 2 && tries <= 5, `tried again, a bounded number of times: ${tries}`);
      assert.equal(await append(id, [{ jsonrpc: '2.0', method: 'notifications/message' }]), 1, 'nothing of the burst was stored');
    } finally {
      store.append = append;
    }
  });
});
