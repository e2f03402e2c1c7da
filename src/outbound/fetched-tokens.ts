// Tokens fastsvc fetched for its backends, kept until shortly before they expire. Guarantees:
// a token is handed out only while it has more than its margin left (EXPIRY_MARGIN_MS, or half
// its life when that is shorter), so a backend never gets one that runs out on the way; any
// number of concurrent asks for a key without a usable token make one fetch, whose token (or
// failure) they all get; a failure is not remembered (the next ask fetches again); at most
// `max` tokens are kept, the oldest dropped first; a caller whose signal aborts stops waiting
// at once, without cancelling the fetch the others wait on (that fetch has its own timeout);
// forget(key, token) drops that token only (a backend refused it), never a newer one.

/** A token and when it expires (epoch milliseconds). */
export interface Fetched {
  token: string;
  expiresAt: number;
}

/** How long before its expiry a token stops being handed out (at most half its life). */
export const EXPIRY_MARGIN_MS = 30_000;

interface Entry {
  token: string;
  /** Handed out until then (epoch ms). */
  until: number;
}

export class FetchedTokens<K> {
  readonly #max: number;
  readonly #now: () => number;
  readonly #tokens = new Map<K, Entry>();
  readonly #inFlight = new Map<K, Promise<string>>();

  /** now: the clock (tests give their own). */
  constructor(max: number, now: () => number = Date.now) {
    this.#max = max;
    this.#now = now;
  }

  /** How many tokens are kept. */
  get size(): number {
    return this.#tokens.size;
  }

  /** The token for `key`: the kept one while usable, else the one `fetch` gets (one fetch per key at a time). */
  get(key: K, fetch: () => Promise<Fetched>, signal?: AbortSignal): Promise<string> {
    const kept = this.#tokens.get(key);
    if (kept) {
      if (kept.until > this.#now()) return Promise.resolve(kept.token);
      this.#tokens.delete(key);
    }
    let p = this.#inFlight.get(key);
    if (!p) {
      p = this.#fetch(key, fetch).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, p);
    }
    return signal ? untilAborted(p, signal) : p;
  }

  /** A backend refused `token`: the next ask for `key` fetches another, unless one newer than it is kept already. */
  forget(key: K, token: string): void {
    if (this.#tokens.get(key)?.token === token) this.#tokens.delete(key);
  }

  async #fetch(key: K, fetch: () => Promise<Fetched>): Promise<string> {
    const fetchedAt = this.#now();
    const f = await fetch();
    const until = f.expiresAt - Math.min(EXPIRY_MARGIN_MS, (f.expiresAt - fetchedAt) / 2);
    if (until > this.#now()) {
      if (this.#tokens.size >= this.#max) this.#tokens.delete(this.#tokens.keys().next().value!);
      this.#tokens.set(key, { token: f.token, until });
    }
    return f.token;
  }
}

/** `p`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
