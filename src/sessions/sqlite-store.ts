// The SQLite SessionStore: MCP 2025 sessions shared by the worker processes of one box
// (server.workers) through the SQLite file they share, their signals through a SignalRelay
// (node:cluster IPC via the primary; loopback-relay.ts for one process). Guarantees:
// - its tables live in that file beside the OAuth state; a path given is opened in WAL with a
//   busy_timeout, so a write waits for another process's instead of failing;
// - every write is one transaction, committed when its promise resolves; its signal is sent
//   through the relay after the commit; update() reads the record, applies the change and writes it
//   in one IMMEDIATE transaction (concurrent changes from several processes are all kept); a stream
//   mark is one statement on the record's JSON (json_set / json_remove), without a signal;
// - append() bumps the session's next_seq by the batch's size, inserts its messages with consecutive
//   numbers and trims the session's messages to the newest `keepEvents` in one IMMEDIATE transaction
//   (the file's write lock taken first), signalled once: numbers are 1, 2, 3, … per session,
//   gap-free, in commit order however many processes append; append() to an unknown, ended or
//   expired session, or of no message, stores nothing and resolves to 0;
// - signals carry any size (the relay has no payload bound); listening() is always true (the
//   relay is the processes' own channel: a worker that loses it is gone);
// - close() closes the file only when the store opened it.

import type Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { lazyRequire } from '../util/lazy-require.js';
import type { SessionChange, SessionEvent, SessionRecord, SessionSignal, SessionStore, SignalRelay } from './session-store.js';
import { applyChange, decodeRecord, encodeRecord } from './stored-session.js';
import { principalKeyColumn } from '../core/principal-key.js';

const loadSqlite = lazyRequire<typeof Database>('better-sqlite3');

const SCHEMA = `
CREATE TABLE IF NOT EXISTS fastsvc_sessions (
  id         TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  record     TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  next_seq   INTEGER NOT NULL DEFAULT 1
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fastsvc_sessions_expiry ON fastsvc_sessions (expires_at);
CREATE TABLE IF NOT EXISTS fastsvc_session_events (
  session_id TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  payload    TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
`;

export interface SqliteSessionStoreOptions {
  /** How many of a session's newest messages are kept for since() (server.mcp_session_events). */
  readonly keepEvents: number;
  /** Told of an error thrown by an onSignal listener; absent: it is rethrown asynchronously. */
  readonly onError?: (e: unknown) => void;
}

export class SqliteSessionStore implements SessionStore {
  readonly #db: Database.Database;
  readonly #owned: boolean;
  readonly #relay: SignalRelay;
  readonly #keep: number;
  readonly #onError: (e: unknown) => void;
  readonly #listeners: ((s: SessionSignal) => void)[] = [];
  readonly #stmt;
  readonly #append;
  readonly #update;
  readonly #end;
  readonly #sweep;
  #closed = false;

  /** `db`: the shared file's path, or an open handle (in WAL, with a busy_timeout) the caller closes. */
  constructor(db: string | Database.Database, relay: SignalRelay, opts: SqliteSessionStoreOptions) {
    if (!Number.isInteger(opts.keepEvents) || opts.keepEvents < 1) throw new RangeError(`keepEvents must be a positive integer, got ${opts.keepEvents}`);
    this.#owned = typeof db === 'string';
    this.#db = typeof db === 'string' ? open(db) : db;
    this.#relay = relay;
    this.#keep = opts.keepEvents;
    this.#onError = opts.onError ?? ((e) => queueMicrotask(() => { throw e; }));
    this.#db.exec(SCHEMA);
    const d = this.#db;
    const s = (this.#stmt = {
      create: d.prepare('INSERT INTO fastsvc_sessions (id, owner, record, expires_at) VALUES (?, ?, ?, ?)'),
      get: d.prepare<[string, number], { record: string; expires_at: number }>('SELECT record, expires_at FROM fastsvc_sessions WHERE id = ? AND expires_at >= ?'),
      set: d.prepare('UPDATE fastsvc_sessions SET record = ? WHERE id = ?'),
      touch: d.prepare('UPDATE fastsvc_sessions SET expires_at = ? WHERE id = ? AND expires_at >= ?'),
      mark: d.prepare(`UPDATE fastsvc_sessions SET record = json_set(record, '$.stream', json(?)), expires_at = max(expires_at, ?) WHERE id = ? AND expires_at >= ?`),
      unmark: d.prepare(`UPDATE fastsvc_sessions SET record = json_remove(record, '$.stream') WHERE id = ? AND json_extract(record, '$.stream.by') = ?`),
      drop: d.prepare('DELETE FROM fastsvc_sessions WHERE id = ?'),
      dropEvents: d.prepare('DELETE FROM fastsvc_session_events WHERE session_id = ?'),
      bump: d.prepare<[number, string, number], { last: number }>('UPDATE fastsvc_sessions SET next_seq = next_seq + ? WHERE id = ? AND expires_at >= ? RETURNING next_seq - 1 AS last'),
      insert: d.prepare('INSERT INTO fastsvc_session_events (session_id, seq, payload) VALUES (?, ?, ?)'),
      trim: d.prepare('DELETE FROM fastsvc_session_events WHERE session_id = ? AND seq <= ?'),
      since: d.prepare<[string, number, number, number], { seq: number; payload: string }>(`SELECT e.seq, e.payload
        FROM fastsvc_sessions s JOIN fastsvc_session_events e ON e.session_id = s.id
        WHERE s.id = ? AND s.expires_at >= ? AND e.seq > ? AND e.seq >= s.next_seq - ? ORDER BY e.seq`),
      head: d.prepare<[string, number], { head: number }>('SELECT next_seq - 1 AS head FROM fastsvc_sessions WHERE id = ? AND expires_at >= ?'),
      expired: d.prepare<[number], { id: string }>('SELECT id FROM fastsvc_sessions WHERE expires_at < ?'),
      count: d.prepare<[], { n: number }>('SELECT count(*) AS n FROM fastsvc_sessions'),
    });
    this.#append = d.transaction((id: string, payloads: string[]): number => {
      const row = s.bump.get(payloads.length, id, Date.now());
      if (!row) return 0;
      const first = row.last - payloads.length + 1;
      // Of a batch bigger than keepEvents only its newest are inserted.
      for (let i = Math.max(0, payloads.length - this.#keep); i < payloads.length; i++) s.insert.run(id, first + i, payloads[i]);
      s.trim.run(id, row.last - this.#keep);
      return row.last;
    });
    this.#update = d.transaction((id: string, change: SessionChange): boolean => {
      const row = s.get.get(id, Date.now());
      if (row) s.set.run(applyChange(row.record, change), id);
      return row !== undefined;
    });
    this.#end = d.transaction((id: string): boolean => {
      const n = s.drop.run(id).changes;
      s.dropEvents.run(id);
      return n > 0;
    });
    this.#sweep = d.transaction((now: number): string[] => {
      const ids = s.expired.all(now).map((r) => r.id);
      for (const id of ids) {
        s.drop.run(id);
        s.dropEvents.run(id);
      }
      return ids;
    });
    relay.onSignal((sig) => {
      if (this.#closed) return;
      for (const fn of this.#listeners) {
        try {
          fn(sig);
        } catch (e) {
          this.#onError(e);
        }
      }
    });
  }

  async create(r: SessionRecord): Promise<void> {
    this.#stmt.create.run(r.id, principalKeyColumn(r.owner), encodeRecord(r), r.expiresAt);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const row = this.#stmt.get.get(id, Date.now());
    return row && decodeRecord(row.record, row.expires_at);
  }

  async update(id: string, change: SessionChange): Promise<boolean> {
    if (!this.#update.immediate(id, change)) return false;
    this.#relay.send({ kind: 'changed', id });
    return true;
  }

  async touch(id: string, expiresAt: number): Promise<void> {
    this.#stmt.touch.run(expiresAt, id, Date.now());
  }

  async streamMark(id: string, by: string, at: number, expiresAt?: number): Promise<void> {
    if (at) this.#stmt.mark.run(JSON.stringify({ by, at }), expiresAt ?? 0, id, Date.now());
    else this.#stmt.unmark.run(id, by);
  }

  async end(id: string, why: string): Promise<boolean> {
    const gone = this.#end.immediate(id);
    if (gone) this.#relay.send({ kind: 'ended', id, why });
    return gone;
  }

  async append(id: string, msgs: readonly unknown[]): Promise<number> {
    if (!msgs.length) return 0;
    const seq = this.#append.immediate(id, msgs.map((m) => JSON.stringify(m ?? null)));
    if (seq) this.#relay.send({ kind: 'events', id });
    return seq;
  }

  async since(id: string, after: number): Promise<SessionEvent[]> {
    return this.#stmt.since.all(id, Date.now(), after, this.#keep).map((r) => ({ seq: r.seq, msg: JSON.parse(r.payload) as unknown }));
  }

  async head(id: string): Promise<number> {
    return this.#stmt.head.get(id, Date.now())?.head ?? 0;
  }

  async signal(s: SessionSignal): Promise<void> {
    this.#relay.send(s);
  }

  onSignal(fn: (s: SessionSignal) => void): void {
    this.#listeners.push(fn);
  }

  listening(): boolean {
    return true;
  }

  onListening(_fn: (up: boolean) => void): void {
    // Never called: the relay is the processes' own IPC channel (see the header).
  }

  async sweep(now: number): Promise<number> {
    const ids = this.#sweep.immediate(now);
    for (const id of ids) this.#relay.send({ kind: 'ended', id, why: 'expired' });
    return ids.length;
  }

  async count(): Promise<number> {
    return this.#stmt.count.get()!.n;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#owned) this.#db.close();
  }
}

function open(path: string): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  closeSync(openSync(path, 'a', 0o600)); // created owner-only, as the OAuth provider's file
  const db = new (loadSqlite())(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  return db;
}
