// Shared quotas (limits.shared): request counts kept in the OAuth provider's PostgreSQL
// database, so every replica on it counts one window per key. Guarantees: acquire()
// checks and takes every item's request count in one transaction (rows locked in key
// order, so two replicas never both take the last request, and never deadlock), all or
// none, as InProcessQuotas does; a window opens at a key's first request anywhere;
// concurrency limits are counted in this process (a replica that dies cannot leave a
// shared slot held), taken first and given back when the shared count refuses, so a
// refusal consumes nothing; when the database cannot answer, acquire() rejects with
// STORE_UNAVAILABLE (a call is refused, never let through uncounted).

import { DEFAULT_WINDOW_MS, InProcessQuotas, type Admission, type QuotaCounter, type QuotaItem } from './quotas.js';

/** What the counter needs of the database (PostgresOAuthProvider gives it). */
export interface QuotaDb {
  query<R extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  transaction<T>(fn: (q: <R extends Record<string, unknown>>(text: string, values?: unknown[]) => Promise<{ rows: R[] }>) => Promise<T>): Promise<T>;
}

export type Row = { key: string; window_end: string | number; count: number };
export type Counted = { key: string; requests: number; window: number; label: string };

export class SharedQuotas implements QuotaCounter {
  readonly #db: QuotaDb;
  readonly #local = new InProcessQuotas();

  constructor(db: QuotaDb) {
    this.#db = db;
  }

  async acquire(items: readonly QuotaItem[], now: number): Promise<Admission> {
    const local = this.#local.acquire(concurrency(items), now);
    if (!local.ok) return local;
    const counted = requestItems(items);
    if (!counted.length) return local;
    let refusal: Admission | undefined;
    try {
      refusal = await this.#db.transaction(async (q) => {
        const keys = counted.map((c) => c.key);
        await q('INSERT INTO fastsvc_quotas (key, window_end, count) SELECT k, 0, 0 FROM unnest($1::text[]) AS k ORDER BY k ON CONFLICT (key) DO NOTHING', [keys]);
        const rows = (await q<Row>('SELECT key, window_end, count FROM fastsvc_quotas WHERE key = ANY($1) ORDER BY key FOR UPDATE', [keys])).rows;
        const next: { key: string; end: number; count: number }[] = [];
        for (const c of counted) {
          const r = rows.find((x) => x.key === c.key);
          const w = waitFor(c, r, now);
          if (w > 0) return { ok: false, retryAfterMs: w, label: c.label } as const;
          const open = r && Number(r.window_end) > now;
          next.push({ key: c.key, end: open ? Number(r.window_end) : now + c.window, count: open ? r.count + 1 : 1 });
        }
        await q(`UPDATE fastsvc_quotas q SET window_end = v.e, count = v.c
          FROM unnest($1::text[], $2::bigint[], $3::int[]) AS v(k, e, c) WHERE q.key = v.k`,
        [next.map((n) => n.key), next.map((n) => n.end), next.map((n) => n.count)]);
        return undefined;
      });
    } catch (e) {
      local.release();
      throw e;
    }
    if (refusal) local.release();
    return refusal ?? local;
  }
}

/** Only the concurrency part of each limit (counted here). */
export function concurrency(items: readonly QuotaItem[]): QuotaItem[] {
  return items.filter((i) => i.limit.concurrent !== undefined).map((i) => ({ ...i, limit: { concurrent: i.limit.concurrent } }));
}

/** Only the request part of each limit (counted in the database), one per key, in key order. */
export function requestItems(items: readonly QuotaItem[]): Counted[] {
  const out = items.filter((i) => i.limit.requests !== undefined)
    .map((i) => ({ key: i.key, requests: i.limit.requests!, window: i.limit.window_ms ?? DEFAULT_WINDOW_MS, label: i.label }));
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** How long `c` must wait given its row (0: it may take one request now). */
export function waitFor(c: Counted, r: Row | undefined, now: number): number {
  if (!r || Number(r.window_end) <= now) return 0;
  return r.count >= c.requests ? Math.max(1, Number(r.window_end) - now) : 0;
}
