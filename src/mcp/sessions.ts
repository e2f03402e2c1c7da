// The MCP session registry: every live McpSession of the server, whatever carries it
// (/mcp's Mcp-Session-Id sessions, /ws's one session per socket). Transports only
// decode and encode; the registry owns the sessions' lifetime.
// Guarantees: a session is found only by the principal that opened it (the same principalKey:
// kind, issuer, subject and client) — any other caller is told exactly what an unknown id gets, so
// its existence is not disclosed, and only on the endpoint it was opened on (/mcp/NAME: a session of
// another endpoint, or of the default one, is an unknown id there); the map's iteration order is recency order, so the
// least recently used session is the first one; `sweep()` ends idle /mcp sessions
// (not busy, no open stream) and runs by itself; at most `maxSessions` /mcp sessions
// exist: opening one more ends the least recently used idle one, and fails when every
// session is busy; ending a session closes it and whatever channel the transport
// attached (its GET stream, its socket) exactly once; credentialRevoked(id) ends the
// /mcp sessions opened with that credential (an OAuth grant) and asks /ws channels to
// re-check theirs (which closes them with 4401); refuseWhere(check) ends every session `check`
// refuses (a named endpoint's door that no longer admits its caller), its channel told why.
// With a SessionStore (several processes serve the /mcp sessions: shared-sessions.ts), an /mcp entry is
// this process's instance of a session whose record is in the store: it is found only while the store
// is listening(); a hit touches the record at most once per idleMs / 4 (no await: the write runs
// behind); evicting, sweeping or closing an instance drops it here without ending the session, and
// one that holds the session's GET stream is never evicted, and only it watches the session's subscribed sources
// (attach starts, detach stops: McpSession.holdStream); a revoked credential, a door's refusal
// and endEverywhere() end the record too, so every process ends its instance.

import { randomUUID } from 'node:crypto';
import type { Principal } from '../core/types.js';
import type { SvcError } from '../errors.js';
import { principalKey } from '../core/principal-key.js';
import type { Logger } from '../log.js';
import type { SessionRecord, SessionStore } from '../sessions/session-store.js';
import type { McpSession, Sink } from './protocol.js';

export type SessionTransport = 'mcp' | 'ws';

/** Something the transport keeps open for a session (an SSE stream, a socket): messages with no request to ride on go there. */
export interface SessionChannel {
  send: Sink;
  end(): void;
  /** The session's credential was revoked somewhere: re-check it now (a socket closes itself). */
  recheck?(): void;
  /** The session is ended because its caller is refused (`err`): closes the channel saying so (a socket: 4403); absent, end() is used. */
  refuse?(err: SvcError): void;
  /** A shared session's GET stream: the store has new messages for it. */
  wake?(): void;
}

export interface SessionEntry {
  readonly id: string;
  readonly transport: SessionTransport;
  /** Who opened it (principalKey), and its subject for the log. */
  readonly owner: string;
  readonly sub: string;
  /** The caller that last reached the session (it opened it, or a later request of the same owner): what a door re-check decides on. */
  principal: Principal;
  /** The principal's credential (an OAuth grant id), if it has one. */
  readonly credentialId?: string;
  /** The named endpoint it was opened on; absent: the default endpoint. */
  readonly endpoint?: string;
  readonly session: McpSession;
  lastSeen: number;
  /** Requests being handled right now; a busy session is never swept or evicted. */
  busy: number;
  /** The transport's standing channel for this session, if one is open. */
  channel?: SessionChannel;
  /** A shared session (its record is in the store): adds a message to its outbound stream, in order. */
  append?: Sink;
  /** A shared session: when this process last moved the record's expiry. */
  touchedAt?: number;
  /** A shared session: re-reads the record and applies it (one read at a time). */
  refresh?: () => void;
}

export interface SessionRegistryOptions {
  logger: Logger;
  /** An /mcp session unused this long is ended. */
  idleMs: number;
  /** At most this many /mcp sessions (with a store: instances of sessions). */
  maxSessions: number;
  /** Where /mcp sessions live when several processes serve them. */
  store?: SessionStore;
  /** How long a shared session's messages are tried again while the store is unavailable (server.drain_timeout_ms); default 0: tried once. */
  retryMs?: number;
}

export class SessionRegistry {
  readonly #entries = new Map<string, SessionEntry>();
  /** The last entry in #entries (the most recently used), when known. */
  #newest: SessionEntry | undefined;
  readonly #counts: Record<SessionTransport, number> = { mcp: 0, ws: 0 };
  readonly #log: Logger;
  readonly #idleMs: number;
  readonly #max: number;
  readonly #sweeper: NodeJS.Timeout;
  readonly #store: SessionStore | undefined;
  readonly #retryMs: number;
  /** Shared sessions' batches of messages not yet stored or given up. */
  readonly #writes = new Set<Promise<void>>();

  constructor(opts: SessionRegistryOptions) {
    this.#log = opts.logger;
    this.#idleMs = opts.idleMs;
    this.#max = opts.maxSessions;
    this.#store = opts.store;
    this.#retryMs = opts.retryMs ?? 0;
    this.#sweeper = setInterval(() => this.sweep(), Math.min(60_000, opts.idleMs)).unref();
  }

  /** The store the /mcp sessions live in, when several processes serve them. */
  get store(): SessionStore | undefined {
    return this.#store;
  }

  get idleMs(): number {
    return this.#idleMs;
  }

  /** How long a shared session's messages are tried again while the store is unavailable. */
  get retryMs(): number {
    return this.#retryMs;
  }

  /** A shared session is storing messages until `w` resolves (it never rejects): settled() waits for it. */
  writing(w: Promise<void>): void {
    this.#writes.add(w);
    void w.then(() => this.#writes.delete(w));
  }

  /** Resolves once every batch of messages being stored now is stored or given up (before the store closes). */
  async settled(): Promise<void> {
    await Promise.all([...this.#writes]);
  }

  /**
   * A new entry for `p`, not yet registered (an /mcp session is registered once its
   * initialize succeeds; see add()). Undefined when the /mcp cap is reached and every
   * session is busy.
   */
  create(p: Principal, transport: SessionTransport, makeSession: (entry: SessionEntry) => McpSession, endpoint?: string): SessionEntry | undefined {
    if (transport === 'mcp' && !this.#room()) return undefined;
    const entry = { id: randomUUID(), transport, owner: principalKey(p), sub: p.sub, principal: p, credentialId: p.credentialId, ...(endpoint && { endpoint }), lastSeen: Date.now(), busy: 0 } as SessionEntry;
    (entry as { session: McpSession }).session = makeSession(entry);
    return entry;
  }

  /**
   * A new, unregistered entry for this process's instance of the shared session `r` (its owner already checked),
   * reached by `p`. `cached`: room is made for it under the cap (undefined when there is none); else it serves one request.
   */
  instance(r: SessionRecord, p: Principal, makeSession: (entry: SessionEntry) => McpSession, cached: boolean): SessionEntry | undefined {
    if (cached && !this.#room()) return undefined;
    const now = Date.now();
    const entry = { id: r.id, transport: 'mcp', owner: r.owner, sub: r.sub, principal: p, credentialId: r.credentialId, ...(r.endpoint && { endpoint: r.endpoint }), lastSeen: now, busy: 0, touchedAt: now } as SessionEntry;
    (entry as { session: McpSession }).session = makeSession(entry);
    return entry;
  }

  /** Room for one more /mcp entry: at the cap, the least recently used idle one goes (a shared one holding its GET stream stays). */
  #room(): boolean {
    if (this.#counts.mcp < this.#max) return true;
    const lru = this.#first((e) => e.transport === 'mcp' && !e.busy && !(e.append && e.channel));
    if (!lru) return false;
    this.end(lru, lru.append ? 'dropped: instance cap reached' : 'evicted: session cap reached');
    return true;
  }

  add(entry: SessionEntry): void {
    this.#entries.set(entry.id, entry);
    this.#newest = entry;
    this.#counts[entry.transport]++;
    this.#log.debug({ session: entry.id, sub: entry.sub, transport: entry.transport, version: entry.session.protocolVersion }, 'mcp session opened');
  }

  /** The session `id` names, if `p` opened it on `endpoint` (absent: the default endpoint); it becomes the most recently used. */
  find(id: string, p: Principal, endpoint?: string): SessionEntry | undefined {
    const e = this.#entries.get(id);
    if (!e || e.owner !== principalKey(p) || e.endpoint !== endpoint) return undefined;
    if (e.append) {
      // A shared session's cached instance serves only while the store is listening (else it may be stale).
      const store = this.#store!;
      if (!store.listening()) return undefined;
      const now = Date.now();
      if (now - e.touchedAt! >= this.#idleMs / 4) {
        e.touchedAt = now;
        store.touch(id, now + this.#idleMs).catch((err: unknown) => this.#log.warn({ session: id, err: (err as Error).message }, 'mcp session expiry not moved'));
      }
    }
    e.principal = p;
    this.touch(e);
    return e;
  }

  /** The entry registered under `id`, whoever opened it (for the store's signals). */
  peek(id: string): SessionEntry | undefined {
    return this.#entries.get(id);
  }

  /** Every registered entry, in recency order. */
  entries(): IterableIterator<SessionEntry> {
    return this.#entries.values();
  }

  touch(e: SessionEntry): void {
    e.lastSeen = Date.now();
    // Already the most recent: re-inserting it would only churn the map (a hot session is touched on every request).
    if (e === this.#newest) return;
    if (this.#entries.delete(e.id)) {
      this.#entries.set(e.id, e);
      this.#newest = e;
    }
  }

  /** Replace the session's standing channel (ending the previous one). */
  attach(e: SessionEntry, channel: SessionChannel): void {
    e.channel?.end();
    e.channel = channel;
    if (e.append) e.session.holdStream(true);
  }

  /** Forget the channel if it is still the one attached (the transport saw it close). */
  detach(e: SessionEntry, channel: SessionChannel): void {
    if (e.channel === channel) {
      e.channel = undefined;
      if (e.append) e.session.holdStream(false);
    }
    e.lastSeen = Date.now();
  }

  /** Deliver a message on the session's standing channel; false when none is open. */
  static send(e: SessionEntry, m: Parameters<Sink>[0]): boolean {
    return e.channel ? e.channel.send(m) : false;
  }

  /** A call's message its own stream cannot carry: a shared session's outbound stream (wherever its GET stream is), else the standing channel. */
  static relay(e: SessionEntry, m: Parameters<Sink>[0]): boolean {
    return e.append ? e.append(m) : SessionRegistry.send(e, m);
  }

  /** Ends the session `e` is an instance of: its record first (every process ends its instance), then here. */
  async endEverywhere(e: SessionEntry, why: string): Promise<void> {
    if (e.append) await this.#store!.end(e.id, why);
    this.end(e, why);
  }

  /** Ends what this process holds of the session (with a store, the record stays: see endEverywhere). */
  end(e: SessionEntry, why: string): void {
    if (e === this.#newest) this.#newest = undefined;
    if (this.#entries.delete(e.id)) this.#counts[e.transport]--;
    else if (e.session.closed) return;
    e.session.close();
    const channel = e.channel;
    e.channel = undefined;
    channel?.end();
    this.#log.debug({ session: e.id, sub: e.sub, transport: e.transport, why }, 'mcp session ended');
  }

  /** The credential `credentialId` was revoked: /ws channels re-check it, /mcp sessions end. */
  credentialRevoked(credentialId: string): void {
    for (const e of [...this.#entries.values()]) {
      if (e.credentialId !== credentialId) continue;
      if (e.channel?.recheck) e.channel.recheck();
      else this.#endShared(e, 'credential revoked');
    }
  }

  /** End every session `check` refuses; a channel that can say why (refuse) is told so instead of being ended plainly. */
  refuseWhere(check: (e: SessionEntry) => SvcError | undefined): void {
    for (const e of [...this.#entries.values()]) {
      const err = check(e);
      if (!err) continue;
      const channel = e.channel;
      if (channel?.refuse) {
        e.channel = undefined;
        channel.refuse(err);
      }
      this.#endShared(e, `refused: ${err.message}`);
    }
  }

  /** End /mcp sessions idle for longer than the limit (with a store: drop idle instances, and end expired records). */
  sweep(now = Date.now()): void {
    for (const e of [...this.#entries.values()]) {
      if (e.transport === 'mcp' && !e.busy && !e.channel && now - e.lastSeen > this.#idleMs) this.end(e, 'idle');
    }
    this.#store?.sweep(now).catch((err: unknown) => this.#log.warn({ err: (err as Error).message }, 'expired mcp sessions not swept'));
  }

  /** Ends `e` here and, for a shared session, its record (without waiting: every process then ends its instance). */
  #endShared(e: SessionEntry, why: string): void {
    this.end(e, why);
    if (e.append) this.#store!.end(e.id, why).catch((err: unknown) => this.#log.warn({ session: e.id, err: (err as Error).message }, 'mcp session record not ended'));
  }

  count(transport?: SessionTransport): number {
    return transport ? this.#counts[transport] : this.#entries.size;
  }

  /** End the standing channels of one transport's sessions (the sessions stay; clients may reconnect). */
  endChannels(transport: SessionTransport): void {
    for (const e of this.#entries.values()) {
      if (e.transport !== transport || !e.channel) continue;
      const channel = e.channel;
      e.channel = undefined;
      if (e.append) e.session.holdStream(false);
      channel.end();
    }
  }

  /** End every session of one transport, or of all. */
  close(transport?: SessionTransport): void {
    if (!transport) clearInterval(this.#sweeper);
    for (const e of [...this.#entries.values()]) if (!transport || e.transport === transport) this.end(e, 'server closing');
  }

  #first(match: (e: SessionEntry) => boolean): SessionEntry | undefined {
    for (const e of this.#entries.values()) if (match(e)) return e;
    return undefined;
  }
}
