// ReplayCache: remembers one-time identifiers (an ID-JAG's or a DPoP proof's jti) until
// they expire. Guarantees: unique(key, exp) is true exactly once per key while that key
// is remembered; a key is remembered until its own expiry unless more than `max`
// live keys arrive within one expiry window — then the soonest-expiring tenth is
// forgotten, so memory stays bounded (size `max` to the traffic of one window). The memory is this process's: with several replicas behind a load
// balancer, each replica detects replays only of what it saw itself.

export class ReplayCache {
  readonly #seen = new Map<string, number>();
  readonly #max: number;

  constructor(max = 100_000) {
    this.#max = max;
  }

  /** True the first time `key` is seen; `expiresAt` in epoch seconds. */
  unique(key: string, expiresAt: number): boolean {
    const now = Date.now() / 1000;
    const was = this.#seen.get(key);
    if (was !== undefined && was > now) return false;
    if (this.#seen.size >= this.#max) this.#sweep(now);
    this.#seen.set(key, expiresAt);
    return true;
  }

  get size(): number {
    return this.#seen.size;
  }

  #sweep(now: number): void {
    for (const [k, exp] of this.#seen) if (exp <= now) this.#seen.delete(k);
    if (this.#seen.size < this.#max) return;
    // Still full of live keys: drop the soonest-expiring tenth.
    const byExpiry = [...this.#seen].sort((a, b) => a[1] - b[1]);
    for (const [k] of byExpiry.slice(0, Math.ceil(this.#max / 10))) this.#seen.delete(k);
  }
}
