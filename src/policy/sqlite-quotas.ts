// Request quotas counted in the SQLite file the workers of one box share (`server.workers`), so a
// limit is not N× per caller. Guarantees: acquire() checks and takes every item's request count in
// one IMMEDIATE transaction (SQLite's write lock: two workers never both take the last request),
// all or none, as InProcessQuotas and the PostgreSQL SharedQuotas do, with the same rules (a window
// opens at a key's first request anywhere; shared-quotas.ts's helpers); concurrency limits are
// counted in this process (a worker that dies cannot leave a shared slot held), taken first and
// given back when the shared count refuses, so a refusal consumes nothing; a database error
// rejects acquire() (a call is refused, never let through uncounted); expired windows are deleted
// by sweep().

import type Database from 'better-sqlite3';
import { InProcessQuotas, type Admission, type QuotaCounter, type QuotaItem } from './quotas.js';
import { concurrency, requestItems, waitFor, type Counted, type Row } from './shared-quotas.js';

const SCHEMA = `CREATE TABLE IF NOT EXISTS fastsvc_quotas (key TEXT PRIMARY KEY, window_end INTEGER NOT NULL, count INTEGER NOT NULL) WITHOUT ROWID;`;

export class SqliteQuotas implements QuotaCounter {
  readonly #local = new InProcessQuotas();
  readonly #take: (counted: Counted[], now: number) => Admission | undefined;
  readonly #sweep: Database.Statement<[number]>;

  constructor(db: Database.Database) {
    db.exec(SCHEMA);
    const get = db.prepare<[string], Row>('SELECT key, window_end, count FROM fastsvc_quotas WHERE key = ?');
    const set = db.prepare('INSERT INTO fastsvc_quotas (key, window_end, count) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET window_end = excluded.window_end, count = excluded.count');
    this.#sweep = db.prepare('DELETE FROM fastsvc_quotas WHERE window_end <= ?');
    const take = db.transaction((counted: Counted[], now: number): Admission | undefined => {
      const next: [string, number, number][] = [];
      for (const c of counted) {
        const r = get.get(c.key);
        const w = waitFor(c, r, now);
        if (w > 0) return { ok: false, retryAfterMs: w, label: c.label };
        const open = r !== undefined && Number(r.window_end) > now;
        next.push([c.key, open ? Number(r.window_end) : now + c.window, open ? r.count + 1 : 1]);
      }
      for (const n of next) set.run(...n);
      return undefined;
    });
    this.#take = (counted, now) => take.immediate(counted, now);
  }

  async acquire(items: readonly QuotaItem[], now: number): Promise<Admission> {
    const local = this.#local.acquire(concurrency(items), now);
    if (!local.ok) return local;
    const counted = requestItems(items);
    if (!counted.length) return local;
    let refusal: Admission | undefined;
    try {
      refusal = this.#take(counted, now);
    } catch (e) {
      local.release();
      throw e;
    }
    if (refusal) local.release();
    return refusal ?? local;
  }

  /** Deletes the windows that ended before `now`; returns how many. */
  sweep(now: number): number {
    return this.#sweep.run(now).changes;
  }
}
