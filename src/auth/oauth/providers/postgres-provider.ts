// PostgresOAuthProvider: OAuth state and keys in PostgreSQL, shared by every replica
// that points at the same database. Guarantees: the schema is created and migrated on
// open by versioned migrations under a transaction-scoped advisory lock, so replicas
// starting together migrate once; one table keyed (model, id) with ids stored hashed
// (stored-id.ts), each write one autocommit statement (durable when its promise
// resolves); consume() is one conditional UPDATE, so of two replicas consuming the same
// code exactly one succeeds and the other gets AlreadyConsumed; keys are stored sealed
// under key_secret (key-seal.ts) and the first replica to save them wins; every
// destroy/revoke NOTIFYs the grant id in the same statement, and one LISTEN connection
// per process reports those to watch() (reconnecting every 500 ms while it is down,
// telling listening(false) then listening(true)); a query that fails for want of the
// database, or exceeds statement_timeout, rejects with STORE_UNAVAILABLE, never hangs.
// The same pool and LISTEN connection serve the PostgreSQL task store (query(),
// onTaskCancel(), onTaskChange()), shared quotas (transaction()) and MCP 2025 sessions
// (src/sessions/postgres-store.ts: onSessionSignal(), onListening()). openState() opens the same pool,
// migrations and LISTEN connection for the manifest's `state` (no OAuth server): it has no key_secret, so
// its key methods refuse and nothing is ever sealed or stored in fastsvc_oauth_keys; its failures name
// "the shared state store" instead of "the OAuth store".

import type pg from 'pg';
import { lazyRequire } from '../../../util/lazy-require.js';
import { SvcError } from '../../../errors.js';
import { open, seal } from '../key-seal.js';
import { AlreadyConsumed, type Adapter, type AdapterPayload, type OAuthKeys, type OAuthProvider, type StoreEvents } from '../../../core/oauth-provider.js';
import { decodePayload, encodePayload, expiryOf, storageKey } from './stored-id.js';

/** Applied in order, each once; append only — never edit a shipped migration. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE fastsvc_oauth_state (
     model       TEXT NOT NULL,
     id          TEXT NOT NULL,
     payload     TEXT NOT NULL,
     grant_id    TEXT,
     uid         TEXT,
     user_code   TEXT,
     expires_at  BIGINT,
     consumed_at BIGINT,
     PRIMARY KEY (model, id)
   );
   CREATE INDEX fastsvc_oauth_state_grant ON fastsvc_oauth_state (model, grant_id) WHERE grant_id IS NOT NULL;
   CREATE INDEX fastsvc_oauth_state_uid ON fastsvc_oauth_state (model, uid) WHERE uid IS NOT NULL;
   CREATE INDEX fastsvc_oauth_state_user_code ON fastsvc_oauth_state (model, user_code) WHERE user_code IS NOT NULL;
   CREATE INDEX fastsvc_oauth_state_expiry ON fastsvc_oauth_state (expires_at) WHERE expires_at IS NOT NULL;
   CREATE TABLE fastsvc_oauth_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  // Tasks (src/tasks/postgres-store.ts): one row per task, the record as JSON.
  `CREATE TABLE fastsvc_tasks (
     id         TEXT PRIMARY KEY,
     owner      TEXT NOT NULL,
     status     TEXT NOT NULL,
     record     TEXT NOT NULL,
     expires_at BIGINT
   );
   CREATE INDEX fastsvc_tasks_owner ON fastsvc_tasks (owner);`,
  // Shared request quotas (src/policy/shared-quotas.ts): one row per counter key.
  `CREATE TABLE fastsvc_quotas (
     key        TEXT PRIMARY KEY,
     window_end BIGINT NOT NULL,
     count      INTEGER NOT NULL
   );`,
  // MCP 2025 sessions (src/sessions/postgres-store.ts): one row per session (the record as JSON, the number
  // its next outbound message gets), its kept outbound messages, and signals too big for a NOTIFY payload.
  `CREATE TABLE fastsvc_sessions (
     id         TEXT PRIMARY KEY,
     owner      TEXT NOT NULL,
     record     TEXT NOT NULL,
     expires_at BIGINT NOT NULL,
     next_seq   BIGINT NOT NULL DEFAULT 1,
     stream_by  TEXT,
     stream_at  BIGINT
   );
   CREATE INDEX fastsvc_sessions_expiry ON fastsvc_sessions (expires_at);
   CREATE TABLE fastsvc_session_events (
     session_id TEXT NOT NULL REFERENCES fastsvc_sessions (id) ON DELETE CASCADE,
     seq        BIGINT NOT NULL,
     payload    TEXT NOT NULL,
     PRIMARY KEY (session_id, seq)
   );
   CREATE TABLE fastsvc_session_signals (
     id         BIGSERIAL PRIMARY KEY,
     session_id TEXT NOT NULL,
     payload    TEXT NOT NULL,
     created_at BIGINT NOT NULL
   );
   CREATE INDEX fastsvc_session_signals_session ON fastsvc_session_signals (session_id);`,
];

/** pg_advisory_xact_lock key for migrations ("fastsvc1" as an int8). */
const MIGRATION_LOCK = '7376410729497506097';
export const REVOKED_CHANNEL = 'fastsvc_oauth_revoked';
/** Payload: `TASK_ID CANCELLED_BY`; the replica running the task aborts it. */
export const TASK_CANCEL_CHANNEL = 'fastsvc_task_cancel';
/** Payload: `TASK_ID` of a task whose stored record changed; replicas following it read it again. */
export const TASK_CHANGE_CHANNEL = 'fastsvc_task_change';
/** Payload: a session signal as JSON (src/sessions/postgres-store.ts). */
export const SESSION_CHANNEL = 'fastsvc_session';
const RECONNECT_MS = 500;

export interface PostgresOAuthProviderOptions {
  /** Connection string, from the environment (${DATABASE_URL}). */
  url: string;
  poolSize: number;
  /** Server-side statement_timeout for every query, in ms; also bounds connecting. */
  statementTimeoutMs: number;
  /** Secret the stored keys are sealed under; the same on every replica. */
  keySecret: string;
  /** How often expired rows are deleted, in ms. Default 10 minutes. */
  sweepIntervalMs?: number;
  /** Told about connection problems (never the connection string). */
  onError?(err: Error, what: string): void;
}

/** pg is loaded when the first provider is opened, not when this module is imported. */
const loadPg = lazyRequire<typeof pg>('pg');

type Row = { payload: string; consumed_at: string | null };

/** A store opened by openState(): everything but the keys. */
type StateOptions = Omit<PostgresOAuthProviderOptions, 'keySecret'>;

export class PostgresOAuthProvider implements OAuthProvider {
  readonly #pool: pg.Pool;
  readonly #opts: StateOptions & { keySecret?: string };
  /** Names the store in STORE_UNAVAILABLE messages. */
  readonly #label: string;
  readonly #watchers: StoreEvents[] = [];
  readonly #taskCancels: ((id: string, by: string) => void)[] = [];
  readonly #taskChanges: ((id: string) => void)[] = [];
  readonly #sessionSignals: ((payload: string) => void)[] = [];
  readonly #listeningFns: ((up: boolean) => void)[] = [];
  #listener: pg.Client | undefined;
  #listening = false;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  #sweeper: NodeJS.Timeout | undefined;

  private constructor(opts: StateOptions & { keySecret?: string }) {
    this.#opts = opts;
    this.#label = opts.keySecret === undefined ? 'the shared state store (PostgreSQL)' : 'the OAuth store (PostgreSQL)';
    this.#pool = new (loadPg().Pool)({
      connectionString: opts.url,
      max: opts.poolSize,
      statement_timeout: opts.statementTimeoutMs,
      query_timeout: opts.statementTimeoutMs + 1000,
      connectionTimeoutMillis: opts.statementTimeoutMs,
      idleTimeoutMillis: 30_000,
      application_name: 'fastsvc',
    });
    // An idle client's connection dropped (database restart): the pool replaces it on next use.
    this.#pool.on('error', (err) => opts.onError?.(err, 'idle connection lost'));
  }

  /** Connects, migrates, starts listening; rejects (STORE_UNAVAILABLE) if the database cannot be reached. */
  static async open(opts: PostgresOAuthProviderOptions): Promise<PostgresOAuthProvider> {
    return PostgresOAuthProvider.#open(opts);
  }

  /**
   * The manifest's `state`: the same tables, pool and LISTEN connection for sessions, tasks and quotas, without
   * key_secret (no OAuth server uses it: loadKeys, saveKeys and addKeysIfAbsent reject). Rejects as open() does.
   */
  static async openState(opts: StateOptions): Promise<PostgresOAuthProvider> {
    return PostgresOAuthProvider.#open({ ...opts, keySecret: undefined });
  }

  static async #open(opts: StateOptions & { keySecret?: string }): Promise<PostgresOAuthProvider> {
    const p = new PostgresOAuthProvider(opts);
    try {
      await p.#migrate();
      await p.#listen();
    } catch (e) {
      await p.close();
      throw e;
    }
    p.#sweeper = setInterval(() => void p.sweep().catch(() => undefined), opts.sweepIntervalMs ?? 600_000).unref();
    return p;
  }

  /** Applied migration versions, for tests and `svc explain`. */
  async migrations(): Promise<number[]> {
    const r = await this.#q<{ version: number }>('SELECT version FROM fastsvc_schema_migrations ORDER BY version');
    return r.rows.map((x) => Number(x.version));
  }

  adapter(model: string): Adapter {
    const q = this.#q.bind(this);
    const one = (rows: Row[], id: string | undefined) => (rows[0] ? decodePayload(rows[0].payload, id, rows[0].consumed_at === null ? null : Number(rows[0].consumed_at)) : undefined);
    const liveBy = (column: string) => `SELECT payload, consumed_at FROM fastsvc_oauth_state
      WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > $3) LIMIT 1`;
    return {
      async upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
        await q(`INSERT INTO fastsvc_oauth_state (model, id, payload, grant_id, uid, user_code, expires_at, consumed_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
          ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
            user_code = excluded.user_code, expires_at = excluded.expires_at, consumed_at = NULL`,
        [model, storageKey(id), encodePayload(payload), payload.grantId ?? null, payload.uid ?? null, payload.userCode ?? null, expiryOf(expiresIn)]);
      },
      async find(id: string) {
        return one((await q<Row>(liveBy('id'), [model, storageKey(id), Date.now()])).rows, id);
      },
      async findByUid(uid: string) {
        return one((await q<Row>(liveBy('uid'), [model, uid, Date.now()])).rows, undefined);
      },
      async findByUserCode(userCode: string) {
        return one((await q<Row>(liveBy('user_code'), [model, userCode, Date.now()])).rows, undefined);
      },
      async consume(id: string) {
        // One statement: mark it unless marked; report whether the row exists at all.
        const r = await q<{ marked: boolean }>(`WITH m AS (
            UPDATE fastsvc_oauth_state SET consumed_at = $3 WHERE model = $1 AND id = $2 AND consumed_at IS NULL RETURNING 1)
          SELECT EXISTS (SELECT 1 FROM m) AS marked FROM fastsvc_oauth_state WHERE model = $1 AND id = $2`,
        [model, storageKey(id), Math.floor(Date.now() / 1000)]);
        if (r.rows[0] && !r.rows[0].marked) throw new AlreadyConsumed(model);
      },
      async destroy(id: string) {
        await q(`WITH d AS (DELETE FROM fastsvc_oauth_state WHERE model = $1 AND id = $2 RETURNING grant_id)
          SELECT pg_notify('${REVOKED_CHANNEL}', g) FROM (
            SELECT CASE WHEN $1 = 'Grant' THEN $3 ELSE grant_id END AS g FROM d) n WHERE g IS NOT NULL`,
        [model, storageKey(id), id]);
      },
      async revokeByGrantId(grantId: string) {
        await q(`WITH d AS (DELETE FROM fastsvc_oauth_state WHERE model = $1 AND grant_id = $2 RETURNING 1)
          SELECT pg_notify('${REVOKED_CHANNEL}', $2) WHERE EXISTS (SELECT 1 FROM d)`, [model, grantId]);
      },
    };
  }

  async loadKeys(): Promise<OAuthKeys | undefined> {
    const secret = this.#keySecret();
    const r = await this.#q<{ value: string }>(`SELECT value FROM fastsvc_oauth_keys WHERE name = 'keys'`);
    return r.rows[0] ? (JSON.parse(open(r.rows[0].value, secret)) as OAuthKeys) : undefined;
  }

  async saveKeys(keys: OAuthKeys): Promise<void> {
    await this.#q(`INSERT INTO fastsvc_oauth_keys (name, value) VALUES ('keys', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      [seal(JSON.stringify(keys), this.#keySecret())]);
  }

  async addKeysIfAbsent(keys: OAuthKeys): Promise<OAuthKeys> {
    await this.#q(`INSERT INTO fastsvc_oauth_keys (name, value) VALUES ('keys', $1) ON CONFLICT (name) DO NOTHING`,
      [seal(JSON.stringify(keys), this.#keySecret())]);
    return (await this.loadKeys())!;
  }

  async sweep(): Promise<number> {
    const r = await this.#q('DELETE FROM fastsvc_oauth_state WHERE expires_at IS NOT NULL AND expires_at <= $1', [Date.now()]);
    await this.#q('DELETE FROM fastsvc_quotas WHERE window_end <= $1', [Date.now()]);
    return r.rowCount ?? 0;
  }

  /** key_secret; a store opened by openState() has none and never seals or opens keys. */
  #keySecret(): string {
    if (this.#opts.keySecret === undefined) throw new Error('a PostgreSQL store opened for state holds no OAuth keys');
    return this.#opts.keySecret;
  }

  /** One statement on the pool, for stores kept beside the OAuth state (tasks); errors as for the provider's own. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return this.#q<R>(text, values);
  }

  /** Runs fn in one transaction on one pooled connection (committed when fn resolves, rolled back when it throws). */
  async transaction<T>(fn: (q: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>) => Promise<T>): Promise<T> {
    const c = await this.#pool.connect().catch((e) => {
      throw unavailable(e, this.#label);
    });
    try {
      await c.query('BEGIN');
      const out = await fn((text, values) => c.query(text, values));
      await c.query('COMMIT');
      return out;
    } catch (e) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw unavailable(e, this.#label);
    } finally {
      c.release();
    }
  }

  /** Called with each task cancellation NOTIFYed on TASK_CANCEL_CHANNEL by any replica. */
  onTaskCancel(fn: (id: string, by: string) => void): void {
    this.#taskCancels.push(fn);
  }

  /** Called with the id of each task whose record any replica changed (NOTIFYed on TASK_CHANGE_CHANNEL). */
  onTaskChange(fn: (id: string) => void): void {
    this.#taskChanges.push(fn);
  }

  /** Called with the payload of each notification on SESSION_CHANNEL, in the order they were committed. */
  onSessionSignal(fn: (payload: string) => void): void {
    this.#sessionSignals.push(fn);
  }

  /** Called when the LISTEN connection goes down (false) or is back (true), as watch()'s listening. */
  onListening(fn: (up: boolean) => void): void {
    this.#listeningFns.push(fn);
  }

  watch(events: StoreEvents): void {
    this.#watchers.push(events);
  }

  reachable(): boolean {
    return this.#listening;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    clearTimeout(this.#retry);
    const l = this.#listener;
    this.#listener = undefined;
    await l?.end().catch(() => undefined);
    await this.#pool.end().catch(() => undefined);
  }

  async #q<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.#pool.query<R>(text, values);
    } catch (e) {
      throw unavailable(e, this.#label);
    }
  }

  async #migrate(): Promise<void> {
    const c = await this.#pool.connect().catch((e) => {
      throw unavailable(e, this.#label);
    });
    try {
      await c.query('BEGIN');
      await c.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await c.query(`CREATE TABLE IF NOT EXISTS fastsvc_schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
      const done = new Set((await c.query<{ version: number }>('SELECT version FROM fastsvc_schema_migrations')).rows.map((r) => Number(r.version)));
      for (const [i, sql] of MIGRATIONS.entries()) {
        if (done.has(i + 1)) continue;
        await c.query(sql);
        await c.query('INSERT INTO fastsvc_schema_migrations (version) VALUES ($1)', [i + 1]);
      }
      await c.query('COMMIT');
    } catch (e) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw unavailable(e, this.#label);
    } finally {
      c.release();
    }
  }

  async #listen(): Promise<void> {
    const c = new (loadPg().Client)({ connectionString: this.#opts.url, connectionTimeoutMillis: this.#opts.statementTimeoutMs, keepAlive: true, application_name: 'fastsvc-listen' });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (err) this.#opts.onError?.(err, 'notification connection lost');
      c.end().catch(() => undefined);
      if (this.#listener === c) this.#listener = undefined;
      this.#setListening(false);
      this.#scheduleReconnect();
    };
    c.on('error', onLost);
    c.on('end', () => onLost());
    c.on('notification', (n) => {
      if (n.channel === REVOKED_CHANNEL && n.payload) for (const w of this.#watchers) w.revoked(n.payload);
      if (n.channel === TASK_CANCEL_CHANNEL && n.payload) {
        const cut = n.payload.indexOf(' ');
        for (const fn of this.#taskCancels) fn(n.payload.slice(0, cut), n.payload.slice(cut + 1));
      }
      if (n.channel === TASK_CHANGE_CHANNEL && n.payload) for (const fn of this.#taskChanges) fn(n.payload);
      if (n.channel === SESSION_CHANNEL && n.payload) for (const fn of this.#sessionSignals) fn(n.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${REVOKED_CHANNEL}; LISTEN ${TASK_CANCEL_CHANNEL}; LISTEN ${TASK_CHANGE_CHANNEL}; LISTEN ${SESSION_CHANNEL}`);
    } catch (e) {
      lost = true;
      await c.end().catch(() => undefined);
      throw unavailable(e, this.#label);
    }
    if (this.#closed) return void (await c.end());
    this.#listener = c;
    this.#setListening(true);
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#listen().catch(() => this.#scheduleReconnect());
    }, RECONNECT_MS);
    this.#retry.unref();
  }

  #setListening(up: boolean): void {
    if (this.#listening === up) return;
    this.#listening = up;
    for (const w of this.#watchers) w.listening(up);
    for (const fn of this.#listeningFns) fn(up);
  }
}

/** Integrity and syntax errors are bugs and pass through; everything else means the database is not there for us. */
function unavailable(e: unknown, store: string): Error {
  if (e instanceof SvcError) return e;
  const code = (e as { code?: string }).code ?? '';
  if (/^(22|23|42)/.test(code)) return e as Error;
  const why = code === '57014' ? 'did not answer within its statement timeout' : 'is unreachable';
  return new SvcError('STORE_UNAVAILABLE', `${store} ${why}: ${(e as Error).message}`, { cause: e });
}
