// In-memory token buckets keyed by a string (client IP, username). Guarantees: at most
// `burst` takes at once per key, refilled at `perMinute`; a refused take says how many
// whole seconds until the next one succeeds; idle full buckets are forgotten.

export interface BucketLimits {
  burst: number;
  perMinute: number;
}

export class RateLimiter {
  readonly #limits: BucketLimits;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(limits: BucketLimits) {
    this.#limits = limits;
  }

  /** Take one token: 0 when allowed, else the seconds to wait (Retry-After). */
  take(key: string): number {
    const { burst, perMinute } = this.#limits;
    const now = Date.now();
    const perMs = perMinute / 60_000;
    const b = this.#buckets.get(key) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + (now - b.at) * perMs);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      this.#set(key, b);
      return 0;
    }
    this.#set(key, b);
    return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
  }

  #set(key: string, b: { tokens: number; at: number }): void {
    this.#buckets.set(key, b);
    if (this.#buckets.size > 10_000) {
      const now = Date.now();
      const perMs = this.#limits.perMinute / 60_000;
      for (const [k, v] of this.#buckets) if (v.tokens + (now - v.at) * perMs >= this.#limits.burst) this.#buckets.delete(k);
    }
  }
}
