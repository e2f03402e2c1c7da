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

import { randomUUID } from 'node:crypto';
import type { Principal } from '../core/types.js';
import type { SvcError } from '../errors.js';
import { principalKey } from '../core/principal-key.js';
import type { Logger } from '../log.js';
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
}

export interface SessionRegistryOptions {
  logger: Logger;
  /** An /mcp session unused this long is ended. */
  idleMs: number;
  /** At most this many /mcp sessions. */
  maxSessions: number;
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

  constructor(opts: SessionRegistryOptions) {
    this.#log = opts.logger;
    this.#idleMs = opts.idleMs;
    this.#max = opts.maxSessions;
    this.#sweeper = setInterval(() => this.sweep(), Math.min(60_000, opts.idleMs)).unref();
  }

  /**
   * A new entry for `p`, not yet registered (an /mcp session is registered once its
   * initialize succeeds; see add()). Undefined when the /mcp cap is reached and every
   * session is busy.
   */
  create(p: Principal, transport: SessionTransport, makeSession: (entry: SessionEntry) => McpSession, endpoint?: string): SessionEntry | undefined {
    if (transport === 'mcp' && this.#counts.mcp >= this.#max) {
      const lru = this.#first((e) => e.transport === 'mcp' && !e.busy);
      if (!lru) return undefined;
      this.end(lru, 'evicted: session cap reached');
    }
    const entry = { id: randomUUID(), transport, owner: principalKey(p), sub: p.sub, principal: p, credentialId: p.credentialId, ...(endpoint && { endpoint }), lastSeen: Date.now(), busy: 0 } as SessionEntry;
    (entry as { session: McpSession }).session = makeSession(entry);
    return entry;
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
    e.principal = p;
    this.touch(e);
    return e;
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
  }

  /** Forget the channel if it is still the one attached (the transport saw it close). */
  detach(e: SessionEntry, channel: SessionChannel): void {
    if (e.channel === channel) e.channel = undefined;
    e.lastSeen = Date.now();
  }

  /** Deliver a message on the session's standing channel; false when none is open. */
  static send(e: SessionEntry, m: Parameters<Sink>[0]): boolean {
    return e.channel ? e.channel.send(m) : false;
  }

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
      else this.end(e, 'credential revoked');
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
      this.end(e, `refused: ${err.message}`);
    }
  }

  /** End /mcp sessions idle for longer than the limit. */
  sweep(now = Date.now()): void {
    for (const e of [...this.#entries.values()]) {
      if (e.transport === 'mcp' && !e.busy && !e.channel && now - e.lastSeen > this.#idleMs) this.end(e, 'idle');
    }
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
