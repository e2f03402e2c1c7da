// MCP 2025 sessions served by several processes sharing a SessionStore (replicas on PostgreSQL, workers
// on SQLite; sessions/session-store.ts): what ties this process's instances of them to the store.
// Guarantees: a shared instance appends the messages it sends to the session's outbound stream in the
// order it sends them (one append at a time per instance; a failed append is logged, the next ones go
// on), except a server→client request while no process holds the session's GET stream (its record's stream
// mark is absent or older than two keep-alives), which fails at once instead; its state changes are persisted with update() before the request that made them is answered;
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
import type { JsonRpcResponse } from './jsonrpc.js';
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
  let tail: Promise<unknown> = Promise.resolve();
  e.append = (m) => {
    tail = tail.then(async () => {
      // A server→client request goes to the stream only while one is open somewhere: else it fails now, as with one process.
      if ('method' in m && 'id' in m && !e.channel && !streamHeld(await store.get(e.id), sessions.idleMs)) return void e.session.undeliverable(m.id);
      await store.append(e.id, [m]);
    }).catch((err: unknown) => log.warn({ session: e.id, err: (err as Error).message }, 'mcp session message not stored'));
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
