// Per-principal quotas. Guarantees: a call is counted against the principal that makes it
// and never against another (its principalKey without the client — a person is counted across
// the OAuth clients it uses, which limits.oauth_client counts apart as client:ID — so the same
// subject at two issuers, or a static token and an external subject of the same name, never
// share a key; each with the capability for per-capability limits); an
// external issuer's `limits` is a class of its own, counted per subject of that issuer; acquire() checks every applicable limit and
// takes from all of them or from none, so a refusal consumes nothing; a request window
// opens at a key's first request (not on a clock boundary); a refusal says how long to
// wait (the rest of that window, or a short retry for concurrency);
// release() is idempotent. QuotaCounter is the seam a shared store (PostgreSQL) can back:
// this in-process implementation counts per process, so with N replicas a caller can get
// N times a limit.

import type { Principal, Limit } from '../core/types.js';
import { principalKey } from '../core/principal-key.js';
import type { ClassLimits } from '../core/fast-svc.js';

/** One limit to apply under one counter key. */
export interface QuotaItem { key: string; limit: Limit; label: string }

export type Admission = { ok: true; release(): void } | { ok: false; retryAfterMs: number; label: string };

export interface QuotaCounter {
  /** Take one request (and one concurrency slot) from every item, or none when one is exhausted. */
  acquire(items: readonly QuotaItem[], now: number): Admission | Promise<Admission>;
}

/** How long a caller refused for concurrency is told to wait. */
export const CONCURRENCY_RETRY_MS = 1000;
export const DEFAULT_WINDOW_MS = 60_000; // the schema's Limit.window_ms default, for code-API limits given without one

const NO_RELEASE: Admission = Object.freeze({ ok: true, release: () => {} });

/** The limits that apply to this principal calling this capability (empty when none is set). */
export function quotaItems(p: Principal, capability: string, own: Limit | undefined, classes: ClassLimits | undefined): QuotaItem[] {
  const items: QuotaItem[] = [];
  if (p.kind === 'anonymous') return items;
  const who = principalKey(p, { client: false });
  if (own) items.push({ key: `${who}|${capability}`, limit: own, label: `${capability} per principal` });
  if (p.kind === 'static' && classes?.token) items.push({ key: who, limit: classes.token, label: 'limits.token' });
  const issuerLimit = p.kind === 'external' && p.issuer && classes?.external && Object.hasOwn(classes.external, p.issuer) ? classes.external[p.issuer] : undefined;
  if (issuerLimit) items.push({ key: who, limit: issuerLimit, label: `limits of external issuer ${p.issuer}` });
  if (p.kind === 'oauth' && classes?.user) items.push({ key: who, limit: classes.user, label: 'limits.user' });
  if (p.kind === 'oauth' && p.clientId && classes?.oauth_client) items.push({ key: `client:${p.clientId}`, limit: classes.oauth_client, label: 'limits.oauth_client' });
  return items;
}

interface Counter { windowEnd: number; count: number; running: number }

export class InProcessQuotas implements QuotaCounter {
  readonly #counters = new Map<string, Counter>();

  acquire(items: readonly QuotaItem[], now: number): Admission {
    if (!items.length) return NO_RELEASE;
    for (const it of items) {
      const w = this.#wait(it, now);
      if (w > 0) return { ok: false, retryAfterMs: w, label: it.label };
    }
    const held: Counter[] = [];
    for (const it of items) {
      const c = this.#counter(it, now);
      c.count++;
      if (it.limit.concurrent !== undefined) {
        c.running++;
        held.push(c);
      }
    }
    let done = false;
    return {
      ok: true,
      release: () => {
        if (done) return;
        done = true;
        for (const c of held) c.running--;
      },
    };
  }

  #wait(it: QuotaItem, now: number): number {
    const c = this.#counter(it, now);
    if (it.limit.requests !== undefined && c.count >= it.limit.requests) return Math.max(1, c.windowEnd - now);
    if (it.limit.concurrent !== undefined && c.running >= it.limit.concurrent) return CONCURRENCY_RETRY_MS;
    return 0;
  }

  /** The key's counter; a request window opens at the first request after the previous window ended. */
  #counter(it: QuotaItem, now: number): Counter {
    const window = it.limit.window_ms ?? DEFAULT_WINDOW_MS;
    let c = this.#counters.get(it.key);
    if (!c) {
      if (this.#counters.size >= 10_000) this.#sweep(now);
      this.#counters.set(it.key, (c = { windowEnd: now + window, count: 0, running: 0 }));
    } else if (now >= c.windowEnd) {
      c.windowEnd = now + window;
      c.count = 0;
    }
    return c;
  }

  /** Forget counters with nothing running whose window is over (keeps memory bounded by active callers). */
  #sweep(now: number): void {
    for (const [k, c] of this.#counters) if (c.running === 0 && c.windowEnd <= now) this.#counters.delete(k);
  }
}
