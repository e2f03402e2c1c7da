// MCP 2025 sessions served by several processes sharing a SessionStore (replicas on PostgreSQL, workers
// on SQLite; sessions/session-store.ts): what ties this process's instances of them to the store.
// Guarantees: a shared instance appends the messages it sends to the session's outbound stream in the
// order it sends them: one append at a time per instance, and what it sent while one was in flight (or in
// the same event-loop turn) goes in the next one, as one batch (one store write however long the burst);
// a batch that fails with STORE_UNAVAILABLE is tried again (appendRetry()) and, when it still fails, given
// up with one warning saying how many messages were lost, and the next batches go on — except a
// server→client request while no process holds the session's GET stream (its record's stream
// mark is absent or older than two keep-alives), which fails at once instead; the registry is told of every
// batch until it is stored or given up (SessionRegistry.writing: a drain waits for them);
// its state changes are persisted with update() before the request that made them is answered;
// an answer or cancellation it has nothing waiting for is signalled to the other processes; on the
// store's signals every instance here re-reads and applies its record (`changed`, one read at a time,
// a change arriving meanwhile read again after it), ends (`ended`), wakes its GET stream (`events`),
// completes its server→client request (`answer`) or aborts its running call (`cancel`); while the
// store is not listening, instances that neither run a request nor hold a GET stream are dropped
// (their sessions go on), and when it listens again every remaining one re-reads its record and its
// stream drains what it missed.

import { randomUUID } from 'node:crypto';
import { isSvcError, SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { SessionRecord } from '../sessions/session-store.js';
import { SSE_KEEPALIVE_MS } from './constants.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from './jsonrpc.js';
import type { SharedSessionHooks } from './protocol.js';
import type { SessionEntry, SessionRegistry } from './sessions.js';

/** The record that stores `e`'s session as it is now (after its initialize), expiring at `expiresAt`. */
export function recordOf(e: SessionEntry, expiresAt: number): SessionRecord {
  const s = e.session.state();
  return {
    id: e.id, owner: e.owner, sub: e.sub, ...(e.credentialId && { credentialId: e.credentialId }), ...(e.endpoint && { endpoint: e.endpoint }),
    version: s.version, clientCaps: s.clientCaps, logLevel: s.logLevel, subscriptions: s.subscriptions, loadedTools: s.loadedTools, tasks: s.tasks,
    createdAt: Date.now(), expiresAt,
  };
}

/** Makes `e` an instance of a shared session: its outbound stream, its record re-read, the hooks its McpSession gets. */
export function share(e: SessionEntry, sessions: SessionRegistry, log: Logger): SharedSessionHooks {
  const store = sessions.store!;
  const queued: JsonRpcMessage[] = [];
  let writing = false;
  /** Stores `batch` (its requests checked first), tried again within sessions.retryMs while the store is unavailable. */
  const write = async (batch: JsonRpcMessage[]): Promise<void> => {
    const until = Date.now() + sessions.retryMs;
    let msgs = batch;
    // A server→client request goes to the stream only while one is open somewhere: else it fails now, as with one process.
    if (!e.channel && msgs.some(isRequest) && !streamHeld(await appendRetry(() => store.get(e.id), until), sessions.idleMs)) {
      for (const m of msgs) if (isRequest(m)) e.session.undeliverable(m.id);
      msgs = msgs.filter((m) => !isRequest(m));
    }
    if (msgs.length) await appendRetry(() => store.append(e.id, msgs), until);
  };
  const flush = async (): Promise<void> => {
    while (queued.length) {
      const batch = queued.splice(0);
      await write(batch).catch((err: unknown) => {
        log.warn({ session: e.id, messages: batch.length, err: (err as Error).message }, 'mcp session messages not stored');
        for (const m of batch) if (isRequest(m)) e.session.undeliverable(m.id); // fails now rather than at its timeout
      });
    }
    writing = false;
  };
  e.append = (m) => {
    queued.push(m);
    if (!writing) {
      writing = true;
      // Started on the next turn: what the session sends in this one (a tool's burst of log lines) goes in the same batch.
      sessions.writing(new Promise<void>((done) => setImmediate(() => void flush().then(done))));
    }
    return true;
  };
  e.refresh = serial(async () => {
    const r = await store.get(e.id);
    if (r) e.session.apply(r, e.principal);
    else sessions.end(e, 'ended elsewhere');
  }, (err) => log.warn({ session: e.id, err: (err as Error).message }, 'mcp session record not re-read'));
  return {
    persist: async (change) => {
      if (!(await store.update(e.id, change))) throw new SvcError('NOT_FOUND', 'unknown or ended MCP session');
    },
    unclaimed: (u) => void store.signal({ ...u, id: e.id }).catch((err: unknown) => log.warn({ session: e.id, err: (err as Error).message }, `mcp ${u.kind} not relayed`)),
    askPrefix: `${randomUUID().slice(0, 8)}.`,
  };
}

/** From now on, the store's signals and listening changes reach this process's instances of shared sessions. */
export function followStore(sessions: SessionRegistry, log: Logger): void {
  const store = sessions.store!;
  store.onSignal((s) => {
    const e = sessions.peek(s.id);
    if (!e?.append) return;
    switch (s.kind) {
      case 'changed': return e.refresh!();
      case 'ended': return sessions.end(e, s.why);
      case 'events': return e.channel?.wake?.();
      case 'answer': return void e.session.settle(s.msg as JsonRpcResponse);
      case 'cancel': return void e.session.cancel(s.requestId);
    }
  });
  store.onListening((up) => {
    log.info({ listening: up }, up ? 'mcp session store listening again: cached sessions re-read' : 'mcp session store not listening: sessions read on every request');
    for (const e of [...sessions.entries()]) {
      if (!e.append) continue;
      if (up) {
        e.refresh!();
        e.channel?.wake?.();
      } else if (!e.busy && !e.channel) sessions.end(e, 'dropped: session store not listening');
    }
  });
}

/**
 * How often a held GET stream moves its mark and the session's expiry (one write): every keep-alive would be a write
 * per stream every 25 s (4,000 a second for 100,000 streams: docs/performance.md), so at most once a quarter of the
 * idle time — the expiry's own pace — and never more often than the keep-alive.
 */
export function streamMarkEvery(idleMs: number): number {
  return Math.max(SSE_KEEPALIVE_MS, Math.floor(idleMs / 4));
}

/**
 * Some process holds the session's GET stream: its mark is there and was moved within two of its periods (a killed
 * holder's goes stale then: until it does, a server→client request asked elsewhere waits for its timeout, as it did
 * before marks).
 */
export function streamHeld(r: SessionRecord | undefined, idleMs: number, now = Date.now()): boolean {
  return r?.stream !== undefined && now - r.stream.at <= 2 * streamMarkEvery(idleMs);
}

/** Waits between the tries of appendRetry(): the first, doubled each time. */
const RETRY_FIRST_MS = 250;
/** At most this many tries of one store call in appendRetry() (so at most 250 + 500 + 1000 + 2000 ms of waiting). */
const RETRY_TRIES = 5;

/**
 * `run` (a store call of the outbound stream), tried again while it fails with STORE_UNAVAILABLE (its pool busy beyond
 * statement_timeout_ms, the database unreachable): after 250 ms, then twice as long each time, at most RETRY_TRIES
 * tries, and a try starts only before `until` (server.drain_timeout_ms after the batch's first). Any other failure, or
 * the last one, rejects. So a batch is given up at most drain_timeout_ms + statement_timeout_ms (a try's own bound)
 * after its first try.
 */
async function appendRetry<T>(run: () => Promise<T>, until: number): Promise<T> {
  for (let tried = 1, wait = RETRY_FIRST_MS; ; tried++, wait *= 2) {
    try {
      return await run();
    } catch (err) {
      if (!(isSvcError(err) && err.code === 'STORE_UNAVAILABLE') || tried >= RETRY_TRIES || Date.now() + wait > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

const isRequest = (m: JsonRpcMessage): m is JsonRpcRequest => 'method' in m && 'id' in m;

/** A store failure as the refusal a client gets (STORE_UNAVAILABLE unless it already is a SvcError). */
export function storeRefusal(e: unknown): SvcError {
  return isSvcError(e) ? e : new SvcError('STORE_UNAVAILABLE', 'the MCP session store did not answer; retry later');
}

/**
 * `run` one at a time: called while it runs, it runs once more after (however many calls came meanwhile).
 * A rejection goes to `onError`.
 */
export function serial(run: () => Promise<void>, onError: (e: unknown) => void): () => void {
  let running = false;
  let again = false;
  const go = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    again = false;
    run().catch(onError).finally(() => {
      running = false;
      if (again) go();
    });
  };
  return go;
}
