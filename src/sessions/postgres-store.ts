// The PostgreSQL SessionStore: MCP 2025 sessions shared by every replica on the OAuth provider's
// database (oauth.provider.type postgres), on its pool and its one LISTEN connection. Guarantees:
// - every write is one autocommit statement (update: one transaction that reads the record under its
//   row lock, applies the change to it and writes it back, so concurrent changes are all kept; a stream
//   mark is its own two columns, set with the expiry in one UPDATE, without a signal), durable
//   when its promise resolves; its signal is a pg_notify in that statement, so it is delivered after
//   commit, in commit order, to every replica (this one included);
// - append() bumps the session's next_seq by the batch's size under its row lock, inserts its messages
//   with consecutive numbers, trims the session's messages to the newest `keepEvents` and NOTIFYs
//   once, in one statement: numbers are 1, 2, 3, … per session, gap-free, in commit order however
//   many replicas append at once; append() to an unknown, ended or expired session, or of no
//   message, stores nothing and resolves to 0;
// - end() deletes the record (its messages by ON DELETE CASCADE, its stored signals with it);
// - a NOTIFY payload is the signal as JSON when it fits in MAX_NOTIFY bytes; a bigger one (an
//   elicitation answer with a large form) is stored in fastsvc_session_signals and NOTIFYed as
//   {"ref": row id}; the receiver reads it back before delivering it and everything after it, so
//   signals reach listeners in the order they were committed; the signals one store sends
//   through signal() are committed one after another, in the order they were sent;
// - listening() / onListening() are the provider's LISTEN connection state.

import type { PostgresOAuthProvider } from '../auth/oauth/providers/postgres-provider.js';
import { SESSION_CHANNEL as CHANNEL } from '../auth/oauth/providers/postgres-provider.js';
import type { SessionChange, SessionEvent, SessionRecord, SessionSignal, SessionStore } from './session-store.js';
import { applyChange, decodeRecord, encodeRecord } from './stored-session.js';
import { principalKeyColumn } from '../core/principal-key.js';

/** What the store needs of the database (PostgresOAuthProvider gives it). */
export type SessionDb = Pick<PostgresOAuthProvider, 'query' | 'transaction' | 'onSessionSignal' | 'onListening' | 'reachable'>;

export interface PostgresSessionStoreOptions {
  /** How many of a session's newest messages are kept for since() (server.mcp_session_events). */
  readonly keepEvents: number;
  /** Told of a signal that could not be read back or parsed, and of a listener that threw. */
  readonly onError: (e: unknown) => void;
}

/** NOTIFY refuses payloads of 8000 bytes and more; a signal above this is stored and pointed to. */
const MAX_NOTIFY = 7900;
/** A stored signal is read by every replica within moments of its NOTIFY; sweep() drops those older than this. */
const STORED_SIGNAL_TTL_MS = 600_000;

export class PostgresSessionStore implements SessionStore {
  readonly #db: SessionDb;
  readonly #keep: number;
  readonly #onError: (e: unknown) => void;
  readonly #listeners: ((s: SessionSignal) => void)[] = [];
  /** Received signals, delivered one after another (a stored one is read back first). */
  #inbox: Promise<void> = Promise.resolve();
  /** Signals this store sends, committed one after another. */
  #outbox: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(db: SessionDb, opts: PostgresSessionStoreOptions) {
    if (!Number.isInteger(opts.keepEvents) || opts.keepEvents < 1) throw new RangeError(`keepEvents must be a positive integer, got ${opts.keepEvents}`);
    this.#db = db;
    this.#keep = opts.keepEvents;
    this.#onError = opts.onError;
    db.onSessionSignal((payload) => {
      this.#inbox = this.#inbox.then(() => this.#receive(payload)).catch(this.#onError);
    });
  }

  async create(r: SessionRecord): Promise<void> {
    await this.#db.query('INSERT INTO fastsvc_sessions (id, owner, record, expires_at) VALUES ($1, $2, $3, $4)',
      [r.id, principalKeyColumn(r.owner), encodeRecord(r), r.expiresAt]);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const r = await this.#db.query<{ record: string; expires_at: string; stream_by: string | null; stream_at: string | null }>(
      'SELECT record, expires_at, stream_by, stream_at FROM fastsvc_sessions WHERE id = $1 AND expires_at >= $2', [id, Date.now()]);
    const row = r.rows[0];
    if (!row) return undefined;
    const record = decodeRecord(row.record, row.expires_at);
    return row.stream_by === null ? record : { ...record, stream: { by: row.stream_by, at: Number(row.stream_at) } };
  }

  async update(id: string, change: SessionChange): Promise<boolean> {
    return this.#db.transaction(async (q) => {
      const r = await q<{ record: string }>('SELECT record FROM fastsvc_sessions WHERE id = $1 AND expires_at >= $2 FOR UPDATE', [id, Date.now()]);
      if (!r.rows[0]) return false;
      await q(`UPDATE fastsvc_sessions SET record = $2 WHERE id = $1`, [id, applyChange(r.rows[0].record, change)]);
      await q('SELECT pg_notify($1, $2)', [CHANNEL, payload({ kind: 'changed', id })]);
      return true;
    });
  }

  async touch(id: string, expiresAt: number): Promise<void> {
    await this.#db.query('UPDATE fastsvc_sessions SET expires_at = $2 WHERE id = $1 AND expires_at >= $3', [id, expiresAt, Date.now()]);
  }

  async streamMark(id: string, by: string, at: number, expiresAt?: number): Promise<void> {
    if (at) {
      await this.#db.query('UPDATE fastsvc_sessions SET stream_by = $2, stream_at = $3, expires_at = GREATEST(expires_at, $4) WHERE id = $1 AND expires_at >= $5',
        [id, by, at, expiresAt ?? 0, Date.now()]);
    } else {
      await this.#db.query('UPDATE fastsvc_sessions SET stream_by = NULL, stream_at = NULL WHERE id = $1 AND stream_by = $2', [id, by]);
    }
  }

  async end(id: string, why: string): Promise<boolean> {
    const r = await this.#db.query(`WITH d AS (DELETE FROM fastsvc_sessions WHERE id = $1 RETURNING id),
        s AS (DELETE FROM fastsvc_session_signals WHERE session_id = $1)
      SELECT pg_notify($2, $3) FROM d`, [id, CHANNEL, payload({ kind: 'ended', id, why })]);
    return r.rows.length > 0;
  }

  async append(id: string, msgs: readonly unknown[]): Promise<number> {
    if (!msgs.length) return 0;
    // The UPDATE takes the session's row lock and holds it to commit: the next append waits for it,
    // then reads the bumped next_seq. Of a batch bigger than keepEvents only its newest are inserted.
    // The trim's snapshot may miss messages committed meanwhile, which the next append trims; since()
    // never returns more than keepEvents.
    const r = await this.#db.query<{ seq: string }>(`WITH s AS (
        UPDATE fastsvc_sessions SET next_seq = next_seq + $3::bigint WHERE id = $1 AND expires_at >= $4 RETURNING next_seq - 1 AS last),
      i AS (INSERT INTO fastsvc_session_events (session_id, seq, payload)
        SELECT $1, s.last - $3 + m.n, m.payload FROM s, unnest($2::text[]) WITH ORDINALITY AS m(payload, n) WHERE m.n > $3 - $5::bigint),
      t AS (DELETE FROM fastsvc_session_events WHERE session_id = $1 AND seq <= (SELECT last FROM s) - $5)
      SELECT last AS seq, pg_notify($6, $7) FROM s`,
    [id, msgs.map((m) => JSON.stringify(m ?? null)), msgs.length, Date.now(), this.#keep, CHANNEL, payload({ kind: 'events', id })]);
    return r.rows[0] ? Number(r.rows[0].seq) : 0;
  }

  async since(id: string, after: number): Promise<SessionEvent[]> {
    const r = await this.#db.query<{ seq: string; payload: string }>(`SELECT e.seq, e.payload
      FROM fastsvc_sessions s JOIN fastsvc_session_events e ON e.session_id = s.id
      WHERE s.id = $1 AND s.expires_at >= $3 AND e.seq > $2 AND e.seq >= s.next_seq - $4
      ORDER BY e.seq`, [id, after, Date.now(), this.#keep]);
    return r.rows.map((x) => ({ seq: Number(x.seq), msg: JSON.parse(x.payload) as unknown }));
  }

  async head(id: string): Promise<number> {
    const r = await this.#db.query<{ head: string }>('SELECT next_seq - 1 AS head FROM fastsvc_sessions WHERE id = $1 AND expires_at >= $2', [id, Date.now()]);
    return r.rows[0] ? Number(r.rows[0].head) : 0;
  }

  signal(s: SessionSignal): Promise<void> {
    const text = payload(s);
    const send = () => Buffer.byteLength(text) <= MAX_NOTIFY
      ? this.#db.query('SELECT pg_notify($1, $2)', [CHANNEL, text])
      : this.#db.query(`WITH i AS (INSERT INTO fastsvc_session_signals (session_id, payload, created_at) VALUES ($1, $2, $3) RETURNING id)
          SELECT pg_notify($4, json_build_object('ref', id)::text) FROM i`, [s.id, text, Date.now(), CHANNEL]);
    const sent = this.#outbox.then(send, send);
    this.#outbox = sent;
    return sent.then(() => undefined);
  }

  onSignal(fn: (s: SessionSignal) => void): void {
    this.#listeners.push(fn);
  }

  listening(): boolean {
    return this.#db.reachable();
  }

  onListening(fn: (up: boolean) => void): void {
    this.#db.onListening(fn);
  }

  async sweep(now: number): Promise<number> {
    const r = await this.#db.query(`WITH d AS (DELETE FROM fastsvc_sessions WHERE expires_at < $1 RETURNING id),
        s AS (DELETE FROM fastsvc_session_signals WHERE session_id IN (SELECT id FROM d) OR created_at < $2)
      SELECT pg_notify($3, json_build_object('kind', 'ended', 'id', id, 'why', 'expired')::text) FROM d`, [now, now - STORED_SIGNAL_TTL_MS, CHANNEL]);
    return r.rows.length;
  }

  async count(): Promise<number> {
    const r = await this.#db.query<{ n: string }>('SELECT count(*) AS n FROM fastsvc_sessions');
    return Number(r.rows[0]!.n);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#outbox.catch(() => undefined);
  }

  async #receive(text: string): Promise<void> {
    if (this.#closed) return;
    let s = JSON.parse(text) as SessionSignal | { ref: number };
    if ('ref' in s) {
      const r = await this.#db.query<{ payload: string }>('SELECT payload FROM fastsvc_session_signals WHERE id = $1', [s.ref]);
      if (!r.rows[0]) return; // its session ended (or it outlived STORED_SIGNAL_TTL_MS) before this replica read it
      s = JSON.parse(r.rows[0].payload) as SessionSignal;
    }
    for (const fn of this.#listeners) {
      try {
        fn(s);
      } catch (e) {
        this.#onError(e);
      }
    }
  }
}

function payload(s: SessionSignal): string {
  return JSON.stringify(s);
}
