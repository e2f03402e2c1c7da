// SQLiteOAuthProvider: OAuth state and keys in one SQLite file. Guarantees: WAL, and the
// adapters' writes group-committed (sqlite-batch.ts: the writes of one event-loop turn
// share one transaction), so when a write's promise resolves it is committed to the WAL
// file and survives a crash or kill -9 of the process; with durability 'power'
// (synchronous=FULL, an fsync per commit) it also survives an OS crash or power loss,
// with 'process' (synchronous=NORMAL, fsync only at checkpoints) the last commits before
// an OS crash may be lost but the file stays consistent; WAL checkpoints (and their
// fsyncs) run on a worker thread (sqlite-checkpointer.ts), not on the event loop; one table
// keyed (model, id) with the id stored hashed (stored-id.ts), lookups by grant, uid and
// user code through their indexes; expired rows swept at open and every sweep interval.
// Several processes may share the file (the workers of `server.workers`): each waits up to 5 s
// for another's lock (busy_timeout, set before anything else), writes are IMMEDIATE
// transactions, consume() is one conditional UPDATE, and the first keys saved win
// (addKeysIfAbsent). Revocations are not told to other processes here: workers relay them.

import type Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { AlreadyConsumed, type Adapter, type AdapterPayload, type OAuthKeys, type OAuthProvider } from '../../../core/oauth-provider.js';
import { decodePayload, encodePayload, expiryOf, storageKey } from './stored-id.js';
import { WriteBatch } from './sqlite-batch.js';
import { WalCheckpointer } from './sqlite-checkpointer.js';
import { lazyRequire } from '../../../util/lazy-require.js';

/** better-sqlite3 is loaded when the first provider is opened, not when this module is imported. */
const loadSqlite = lazyRequire<typeof Database>('better-sqlite3');

const SCHEMA = `
CREATE TABLE IF NOT EXISTS oauth_state (
  model       TEXT NOT NULL,
  id          TEXT NOT NULL,
  payload     TEXT NOT NULL,
  grant_id    TEXT,
  uid         TEXT,
  user_code   TEXT,
  expires_at  INTEGER,
  consumed_at INTEGER,
  PRIMARY KEY (model, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS oauth_state_grant ON oauth_state (model, grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS oauth_state_uid ON oauth_state (model, uid) WHERE uid IS NOT NULL;
CREATE INDEX IF NOT EXISTS oauth_state_user_code ON oauth_state (model, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX IF NOT EXISTS oauth_state_expiry ON oauth_state (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS oauth_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

type Row = { payload: string; consumed_at: number | null };

export interface SQLiteOAuthProviderOptions {
  /** How often expired rows are deleted, in ms. Default 10 minutes. */
  sweepIntervalMs?: number;
  /** What a committed write survives: the process dying (default) or also the OS / power. */
  durability?: 'process' | 'power';
}

export class SQLiteOAuthProvider implements OAuthProvider {
  readonly path: string;
  readonly #db: Database.Database;
  readonly #timer: NodeJS.Timeout;
  readonly #stmt;
  readonly #batch: WriteBatch;
  readonly #checkpointer: WalCheckpointer;
  #closed: Promise<void> | undefined;

  constructor(path: string, opts: SQLiteOAuthProviderOptions = {}) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true });
    closeSync(openSync(path, 'a', 0o600)); // created owner-only; -wal/-shm inherit the mode
    this.#db = new (loadSqlite())(path);
    // First: several processes (workers.ts) may open the file at once, and each waits for the others' locks.
    this.#db.pragma('busy_timeout = 5000');
    this.#db.pragma('journal_mode = WAL');
    const synchronous = opts.durability === 'power' ? 'FULL' : 'NORMAL';
    this.#db.pragma(`synchronous = ${synchronous}`);
    this.#db.exec(SCHEMA);
    const db = this.#db;
    this.#stmt = {
      upsert: db.prepare(`INSERT INTO oauth_state (model, id, payload, grant_id, uid, user_code, expires_at, consumed_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, NULL)
        ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
          user_code = excluded.user_code, expires_at = excluded.expires_at, consumed_at = NULL`),
      find: db.prepare<[string, string, number], Row>(`SELECT payload, consumed_at FROM oauth_state
        WHERE model = ? AND id = ? AND (expires_at IS NULL OR expires_at > ?)`),
      // INDEXED BY: without statistics SQLite prefers scanning the (model, …) primary-key range to these partial indexes.
      byUid: db.prepare<[string, string, number], Row>(`SELECT payload, consumed_at FROM oauth_state INDEXED BY oauth_state_uid
        WHERE model = ? AND uid = ? AND (expires_at IS NULL OR expires_at > ?) LIMIT 1`),
      byUserCode: db.prepare<[string, string, number], Row>(`SELECT payload, consumed_at FROM oauth_state INDEXED BY oauth_state_user_code
        WHERE model = ? AND user_code = ? AND (expires_at IS NULL OR expires_at > ?) LIMIT 1`),
      consume: db.prepare(`UPDATE oauth_state SET consumed_at = ? WHERE model = ? AND id = ? AND consumed_at IS NULL`),
      exists: db.prepare<[string, string], { one: number }>(`SELECT 1 AS one FROM oauth_state WHERE model = ? AND id = ?`),
      destroy: db.prepare(`DELETE FROM oauth_state WHERE model = ? AND id = ?`),
      revoke: db.prepare(`DELETE FROM oauth_state INDEXED BY oauth_state_grant WHERE model = ? AND grant_id = ?`),
      sweep: db.prepare(`DELETE FROM oauth_state WHERE expires_at IS NOT NULL AND expires_at <= ?`),
      loadKeys: db.prepare<[], { value: string }>(`SELECT value FROM oauth_keys WHERE name = 'keys'`),
      saveKeys: db.prepare(`INSERT INTO oauth_keys (name, value) VALUES ('keys', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`),
      addKeys: db.prepare(`INSERT INTO oauth_keys (name, value) VALUES ('keys', ?) ON CONFLICT (name) DO NOTHING`),
    };
    this.#checkpointer = new WalCheckpointer(db, path, synchronous);
    this.#batch = new WriteBatch(db, (n) => this.#checkpointer.wrote(n));
    this.sweep();
    this.#timer = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? 600_000);
    this.#timer.unref();
  }

  adapter(model: string): Adapter {
    const s = this.#stmt;
    const batch = this.#batch;
    const one = (row: Row | undefined, id: string | undefined) => (row ? decodePayload(row.payload, id, row.consumed_at) : undefined);
    return {
      async upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
        const row = [model, storageKey(id), encodePayload(payload), payload.grantId ?? null, payload.uid ?? null,
          payload.userCode ?? null, expiryOf(expiresIn)];
        await batch.write(() => s.upsert.run(row));
      },
      async find(id: string) {
        return one(s.find.get(model, storageKey(id), Date.now()), id);
      },
      async findByUid(uid: string) {
        return one(s.byUid.get(model, uid, Date.now()), undefined);
      },
      async findByUserCode(userCode: string) {
        return one(s.byUserCode.get(model, userCode, Date.now()), undefined);
      },
      async consume(id: string) {
        const key = storageKey(id);
        const now = Math.floor(Date.now() / 1000);
        if (await batch.write(() => s.consume.run(now, model, key).changes === 0 && s.exists.get(model, key) !== undefined)) {
          throw new AlreadyConsumed(model);
        }
      },
      async destroy(id: string) {
        const key = storageKey(id);
        await batch.write(() => s.destroy.run(model, key));
      },
      async revokeByGrantId(grantId: string) {
        await batch.write(() => s.revoke.run(model, grantId));
      },
    };
  }

  async loadKeys(): Promise<OAuthKeys | undefined> {
    const row = this.#stmt.loadKeys.get();
    return row ? (JSON.parse(row.value) as OAuthKeys) : undefined;
  }

  async saveKeys(keys: OAuthKeys): Promise<void> {
    this.#stmt.saveKeys.run(JSON.stringify(keys));
  }

  /** Saves `keys` unless keys are stored; the stored ones either way (several processes starting on one file agree). */
  async addKeysIfAbsent(keys: OAuthKeys): Promise<OAuthKeys> {
    this.#stmt.addKeys.run(JSON.stringify(keys));
    return (await this.loadKeys())!;
  }

  /** The connection's synchronous level as SQLite reports it: 'normal' (process) or 'full' (power). */
  get synchronous(): 'normal' | 'full' {
    return this.#db.pragma('synchronous', { simple: true }) === 2 ? 'full' : 'normal';
  }

  sweep(): number {
    return this.#stmt.sweep.run(Date.now()).changes;
  }

  close(): Promise<void> {
    return (this.#closed ??= (async () => {
      clearInterval(this.#timer);
      this.#batch.flush();
      await this.#checkpointer.close();
      this.#db.close();
    })());
  }
}
