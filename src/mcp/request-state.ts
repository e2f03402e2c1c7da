// The MCP 2026-07-28 `requestState` of multi-round-trip requests, sealed by this server.
// Guarantees: a state is `v1.<payload>.<mac>` (base64url), the mac an HMAC-SHA256 under the
// server key, compared in constant time; it opens only for the same principal (principalKey:
// kind, issuer, subject, client), method, name and params (minus inputResponses, requestState and _meta), before its
// expiry, and once (its nonce is remembered until it expires; the memory is bounded and per
// process). Anything else is REQUEST_STATE_INVALID (-32602). The payload is signed, not
// encrypted: it holds the client's own earlier answers and a digest of the binding, no secrets.

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../core/types.js';
import { principalKey } from '../core/principal-key.js';
import { SvcError } from '../errors.js';

/** What a state is bound to: who asked for which call. */
export interface StateBinding {
  principal: Principal;
  method: string;
  name: string;
  params: Record<string, unknown>;
}

export interface RequestStateOptions {
  /** HMAC key; absent: 32 random bytes for this process. */
  key?: Buffer;
  ttlMs: number;
  /** Most nonces remembered at once against replay (the oldest is forgotten first). */
  maxNonces?: number;
  now?: () => number;
}

/** Fewest characters of a configured key (server.request_state_key). */
export const MIN_STATE_KEY = 32;

const VERSION = 'v1';
const MAC_LEN = 32;
const PART = /^[A-Za-z0-9_-]+$/;
/** Params that change between rounds of one call and so are not part of the binding. */
const ROUND_PARAMS = new Set(['inputResponses', 'requestState', '_meta']);

export class RequestStateSealer {
  readonly #key: Buffer;
  readonly #ttlMs: number;
  readonly #maxNonces: number;
  readonly #now: () => number;
  /** nonce → expiry (ms); insertion order is about expiry order (fixed TTL), enough for the sweep. */
  readonly #used = new Map<string, number>();

  constructor(opts: RequestStateOptions) {
    this.#key = opts.key ?? randomBytes(32);
    this.#ttlMs = opts.ttlMs;
    this.#maxNonces = opts.maxNonces ?? 100_000;
    this.#now = opts.now ?? Date.now;
  }

  /** A new state carrying `answers`, valid for one use within the TTL. */
  seal(binding: StateBinding, answers: Record<string, unknown>): string {
    const payload = { b: bindingDigest(binding), a: answers, e: this.#now() + this.#ttlMs, n: randomBytes(16).toString('base64url') };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${VERSION}.${body}.${this.#mac(body).toString('base64url')}`;
  }

  /** The answers a state carries, after every check; consumes the state. */
  open(state: string, binding: StateBinding): Record<string, unknown> {
    const parts = state.split('.');
    if (parts.length !== 3 || parts[0] !== VERSION || !PART.test(parts[1]!) || !PART.test(parts[2]!)) throw invalid('is not a state this server issued');
    const [, body, macText] = parts as [string, string, string];
    const mac = Buffer.from(macText, 'base64url');
    if (mac.length !== MAC_LEN || mac.toString('base64url') !== macText || !timingSafeEqual(mac, this.#mac(body))) throw invalid('failed verification');
    let payload: { b?: unknown; a?: unknown; e?: unknown; n?: unknown };
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof payload;
    } catch {
      throw invalid('failed verification');
    }
    const { b, a, e, n } = payload;
    if (typeof b !== 'string' || typeof e !== 'number' || typeof n !== 'string' || a === null || typeof a !== 'object' || Array.isArray(a)) throw invalid('failed verification');
    const expected = Buffer.from(bindingDigest(binding));
    const given = Buffer.from(b);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid('belongs to another caller, method, name or arguments');
    const now = this.#now();
    if (e <= now) throw invalid('has expired; call again without it');
    this.#forgetExpired(now);
    if (this.#used.has(n)) throw invalid('was already used; each state is good for one retry');
    this.#used.set(n, e);
    while (this.#used.size > this.#maxNonces) this.#used.delete(this.#used.keys().next().value!);
    return a as Record<string, unknown>;
  }

  #mac(body: string): Buffer {
    return createHmac('sha256', this.#key).update(`fastsvc-request-state.${VERSION}.${body}`).digest();
  }

  #forgetExpired(now: number): void {
    for (const [nonce, exp] of this.#used) {
      if (exp > now) break;
      this.#used.delete(nonce);
    }
  }
}

function invalid(why: string): SvcError {
  return new SvcError('REQUEST_STATE_INVALID', `requestState ${why}`);
}

/** SHA-256 over the canonical JSON of what the state is bound to. */
function bindingDigest(b: StateBinding): string {
  const params = Object.fromEntries(Object.entries(b.params).filter(([k]) => !ROUND_PARAMS.has(k)));
  const who = principalKey(b.principal);
  return createHash('sha256').update(canonical({ who, method: b.method, name: b.name, params })).digest('base64url');
}

/** JSON with object keys sorted at every depth, so equal values give equal text. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
