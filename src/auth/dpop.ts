// DPoP (RFC 9449) proof checks for the protected routes (/svc, /mcp, /ws) and for
// the jwt-bearer grant. One verifier: a proof is accepted only when it is a JWT with
// typ dpop+jwt, an allowed algorithm and an embedded public JWK; its htm is the
// request's method and its htu the request's public URL (this server's origin + path,
// query and fragment ignored; ws/wss count as http/https for the /ws handshake); it
// carries `ath` = SHA-256 of the access token when one is presented; its iat is
// within ±5 minutes, or — when nonces are on — it carries a nonce this server issued
// in the last few minutes; it is signed by the key the token is bound to; its jti was
// not seen before (per replica, see replay.ts).
// Failures are SvcErrors with data.error invalid_dpop_proof or use_dpop_nonce (then
// data.dpopNonce holds a fresh nonce for the DPoP-Nonce header). Nonces are computed
// exactly as oidc-provider computes its DPoP nonces from the same secret, so one
// nonce serves both the token endpoint and the protected routes of this origin.

import { createHash, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { SvcError } from '../errors.js';
import { ReplayCache } from './replay.js';

export const DPOP_ALGS = ['ES256', 'EdDSA', 'Ed25519'] as const;
const WINDOW = 300;
const STEP = 60;
const MAX_PROOF = 8 * 1024;

export type DpopMode = 'off' | 'allowed' | 'required';

/** jose is loaded when the first verifier is built (OAuth with DPoP), not when this module is imported (the auth gate imports it). */
let jose: Promise<typeof import('jose')> | undefined;
const loadJose = () => (jose ??= import('jose'));

export interface DpopRequest {
  method: string;
  /** The request path (a query string, if any, is ignored). */
  path: string;
  /** The access token the request presents, if any (then `ath` must match it). */
  accessToken?: string;
  /** The thumbprint the access token is bound to: the proof must be signed by that key. */
  boundTo?: string;
}

export class DpopVerifier {
  readonly mode: Exclude<DpopMode, 'off'>;
  readonly nonces: boolean;
  readonly #origin: string;
  readonly #secret: Buffer;
  readonly #replay: ReplayCache;
  readonly #jose = loadJose();

  /** secret: 32 bytes, the same one oidc-provider gets as features.dPoP.nonceSecret. */
  constructor(o: { mode: Exclude<DpopMode, 'off'>; nonces: boolean; origin: string; secret: Buffer; replay?: ReplayCache }) {
    this.mode = o.mode;
    this.nonces = o.nonces;
    this.#origin = o.origin;
    this.#secret = o.secret;
    this.#replay = o.replay ?? new ReplayCache();
  }

  /** The nonce to hand out now. */
  nonce(): string {
    return this.#compute(Math.floor(Date.now() / 1000 / STEP) + 1);
  }

  /** The thumbprint (jkt) of the key that signed a valid proof for this request; throws otherwise. */
  async verify(proof: string | string[] | undefined, r: DpopRequest): Promise<string> {
    if (typeof proof !== 'string' || !proof || proof.length > MAX_PROOF) throw this.#invalid('a DPoP header with one proof is required');
    let payload: JWTPayload;
    let jwk: Record<string, unknown>;
    const { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } = await this.#jose;
    try {
      const v = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...DPOP_ALGS] });
      payload = v.payload;
      jwk = v.protectedHeader.jwk as Record<string, unknown>;
    } catch {
      throw this.#invalid('the DPoP proof is not a valid dpop+jwt signed by its embedded key');
    }
    if ('d' in jwk) throw this.#invalid('the DPoP proof embeds a private key');
    if (typeof payload.jti !== 'string' || !payload.jti || payload.jti.length > 256) throw this.#invalid('the DPoP proof has no jti');
    if (typeof payload.iat !== 'number') throw this.#invalid('the DPoP proof has no iat');
    if (payload.htm !== r.method) throw this.#invalid('the DPoP proof htm is not this request method');
    if (!this.#sameUrl(payload.htu, r.path)) throw this.#invalid('the DPoP proof htu is not this request URL');
    if (r.accessToken !== undefined && payload.ath !== createHash('sha256').update(r.accessToken).digest('base64url')) {
      throw this.#invalid('the DPoP proof ath does not match the access token');
    }
    const now = Date.now() / 1000;
    if (this.nonces) {
      if (typeof payload.nonce !== 'string' || !this.#nonceValid(payload.nonce)) {
        throw new SvcError('UNAUTHENTICATED', 'a fresh DPoP nonce is required in the proof', { data: { error: 'use_dpop_nonce', dpopNonce: this.nonce() } });
      }
    } else if (Math.abs(now - payload.iat) > WINDOW) {
      throw this.#invalid('the DPoP proof iat is not recent');
    }
    const jkt = await calculateJwkThumbprint(jwk as Parameters<typeof calculateJwkThumbprint>[0]);
    if (r.boundTo !== undefined && jkt !== r.boundTo) throw this.#invalid('the DPoP proof is signed by another key than the one the token is bound to');
    // Only a proof that passed every other check uses its jti up (a refused request can be re-checked, e.g. by the Express path after the direct path).
    if (!this.#replay.unique(`${jkt}\n${payload.jti}`, Math.max(payload.iat, now) + WINDOW)) throw this.#invalid('the DPoP proof was already used (jti replay)');
    return jkt;
  }

  #invalid(message: string): SvcError {
    return new SvcError('UNAUTHENTICATED', message, { data: { error: 'invalid_dpop_proof' } });
  }

  #sameUrl(htu: unknown, path: string): boolean {
    const u = typeof htu === 'string' ? URL.parse(htu) : null;
    if (!u) return false;
    if (u.protocol === 'ws:' || u.protocol === 'wss:') u.protocol = u.protocol === 'ws:' ? 'http:' : 'https:';
    const expected = new URL(path.split('?')[0]!, this.#origin);
    return u.origin === expected.origin && u.pathname === expected.pathname;
  }

  #nonceValid(n: string): boolean {
    const step = Math.floor(Date.now() / 1000 / STEP);
    const given = Buffer.from(n);
    let ok = false;
    for (let s = step - 2; s <= step + 2; s++) {
      const mine = Buffer.from(this.#compute(s));
      ok = (mine.length === given.length && timingSafeEqual(mine, given)) || ok;
    }
    return ok;
  }

  /** oidc-provider's ServerChallenge: HKDF-SHA256(secret, salt = 8-byte big-endian step, info "DPoP"), base64url. */
  #compute(step: number): string {
    const salt = Buffer.alloc(8);
    salt.writeBigUInt64BE(BigInt(step));
    return Buffer.from(hkdfSync('sha256', this.#secret, salt, 'DPoP', 32)).toString('base64url');
  }
}
