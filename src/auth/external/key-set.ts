// One external issuer's signing keys (its JWKS), fetched and held. Guarantees: a set is fresh
// for its Cache-Control max-age, bounded by jwks_max_age and at least jwks_refetch_interval,
// from the moment it was fetched (freshUntil); current() answers with a fresh set at once, and
// once the set is stale it first waits for one fetch (joining the one under way), so no token
// is checked against keys older than their freshness while the issuer answers — when the fetch
// fails the keys held keep verifying (the issuer is unreachable, not compromised); refresh()
// is single-flight (callers join the fetch under way) and rate-limited (no fetch when the last
// attempt is more recent than jwks_refetch_interval), so tokens with made-up key ids cost the
// issuer at most one request per interval; a set that is not a JWKS is refused (jwks_invalid),
// and so is a set containing any private or secret key member (jwks_private_key) — then the
// keys held before are dropped too, as the issuer's keys can no longer be trusted; a failed
// fetch is logged once per attempt with its reason; only asymmetric public keys ever verify
// (jose's local set refuses secret algorithms and non-public keys); replacing the set with a
// different one calls onReplaced (the verified-token cache forgets that issuer's tokens).

import { createLocalJWKSet, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { fetchJson } from './fetch-json.js';
import { IssuerFailure } from './rejection.js';

const MAX_JWKS = 256 * 1024;
/** JWK members that only a private or secret key has (RFC 7518 §6.2.2, §6.3.2, §6.4.1; RFC 8037). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export type RefreshOutcome = 'fetched' | 'failed' | 'skipped';

export interface KeySetOptions {
  issuer: string;
  /** Where the keys are: jwks_uri, or its discovery document's (throws IssuerFailure when that cannot be had). */
  uri(): Promise<string>;
  /** jwks_max_age, seconds. */
  maxAge: number;
  /** jwks_refetch_interval, seconds. */
  refetchInterval: number;
  log: Logger;
  onReplaced(): void;
}

export class KeySet {
  readonly #o: KeySetOptions;
  #keys: JWTVerifyGetKey | undefined;
  #text: string | undefined;
  #algs: (string | undefined)[] = [];
  #staleAt = 0;
  #fetchedAt = -Infinity;
  #lastAttempt = -Infinity;
  #inflight: Promise<RefreshOutcome> | undefined;
  #failure: IssuerFailure | undefined;

  constructor(o: KeySetOptions) {
    this.#o = o;
  }

  /** The keys to check a token with: the held set while fresh, else after one fetch (the held set still, when it fails). */
  current(): JWTVerifyGetKey | undefined | Promise<JWTVerifyGetKey | undefined> {
    if (this.#keys && Date.now() < this.#staleAt) return this.#keys;
    return this.refresh().then(() => this.#keys);
  }

  /** The keys held now, fresh or not (no fetch). */
  get held(): JWTVerifyGetKey | undefined {
    return this.#keys;
  }

  /** Until when (epoch ms) the held set is fresh: a token checked against it may be trusted that long. */
  get freshUntil(): number {
    return this.#staleAt;
  }

  /** When (epoch ms) the held set was last fetched successfully. */
  get fetchedAt(): number {
    return this.#fetchedAt;
  }

  /** The `alg` each held key declares (undefined: it declares none). */
  get algs(): readonly (string | undefined)[] {
    return this.#algs;
  }

  /** Why the last fetch failed, while it is the last one. */
  get failure(): IssuerFailure | undefined {
    return this.#failure;
  }

  /** Fetch the set now: joins a fetch under way; 'skipped' when the last attempt is more recent than jwks_refetch_interval. */
  refresh(): Promise<RefreshOutcome> {
    if (this.#inflight) return this.#inflight;
    const now = Date.now();
    if (now - this.#lastAttempt < this.#o.refetchInterval * 1000) return Promise.resolve('skipped');
    this.#lastAttempt = now;
    this.#inflight = this.#fetch().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  async #fetch(): Promise<RefreshOutcome> {
    const o = this.#o;
    try {
      const uri = await o.uri();
      let answer;
      try {
        answer = await fetchJson(uri, { maxBytes: MAX_JWKS });
      } catch (e) {
        throw new IssuerFailure('jwks_unavailable', (e as Error).message);
      }
      const keys = answer.json.keys;
      if (!Array.isArray(keys) || !keys.every((k) => k && typeof k === 'object' && !Array.isArray(k))) throw new IssuerFailure('jwks_invalid', `${uri}: not a JWK set`);
      if (keys.some((k) => PRIVATE_MEMBERS.some((m) => Object.hasOwn(k, m)))) {
        this.#drop();
        throw new IssuerFailure('jwks_private_key', `${uri}: the key set publishes a private or secret key; none of the issuer's keys is trusted until it stops`);
      }
      let getKey: JWTVerifyGetKey;
      try {
        getKey = createLocalJWKSet({ keys });
      } catch {
        throw new IssuerFailure('jwks_invalid', `${uri}: not a JWK set`);
      }
      const ttl = Math.min(o.maxAge, Math.max(o.refetchInterval, answer.maxAge ?? o.maxAge));
      this.#fetchedAt = Date.now();
      this.#staleAt = this.#fetchedAt + ttl * 1000;
      this.#failure = undefined;
      const text = JSON.stringify(keys);
      if (text !== this.#text) {
        const first = this.#text === undefined;
        this.#text = text;
        this.#keys = getKey;
        this.#algs = keys.map((k) => (typeof (k as { alg?: unknown }).alg === 'string' ? (k as { alg: string }).alg : undefined));
        o.log.info({ event: 'external.keys_fetched', issuer: o.issuer, kids: keys.map((k) => (k as { kid?: unknown }).kid ?? null) }, `${first ? 'fetched' : 'replaced'} the signing keys of ${o.issuer}`);
        if (!first) o.onReplaced();
      }
      return 'fetched';
    } catch (e) {
      const f = e instanceof IssuerFailure ? e : new IssuerFailure('jwks_unavailable', (e as Error).message);
      this.#failure = f;
      o.log.warn({ event: 'external.keys_failed', issuer: o.issuer, reason: f.reason, err: f.message }, `cannot use the signing keys of ${o.issuer}: ${f.message}`);
      return 'failed';
    }
  }

  #drop(): void {
    if (this.#keys) this.#o.onReplaced();
    this.#keys = undefined;
    this.#staleAt = 0;
    this.#text = undefined;
    this.#algs = [];
  }
}
