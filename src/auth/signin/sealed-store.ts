// What a sign-in through an identity provider keeps in the OAuth provider (memory, SQLite or
// PostgreSQL: the same adapter interface as oidc-provider's models). Guarantees: the provider's
// tokens and the person's claims are stored only sealed (auth/oauth/key-seal.ts: AES-256-GCM
// under a key derived from the server's cookie key, bound to the record's id as associated data,
// so a sealed value cannot be opened elsewhere or moved to another grant), and a PKCE verifier
// and nonce likewise; a record the current keys cannot open (keys rotated past it) reads as
// absent; ids are stored hashed by every provider (auth/oauth/providers/stored-id.ts). Two models,
// whose stored names stay as they were:
// - UpstreamLogin (LOGIN_MODEL), one per redirect to a provider, keyed by its `state`: which
//   interaction and provider it belongs to, the hash of the browser-binding cookie, the sealed
//   verifier and nonce; found at most once as unconsumed (consume() is atomic across replicas).
// - UpstreamGrant (GRANT_MODEL; SignInGrant in the code), one per grant such a sign-in produced,
//   keyed by the grant id: provider name, subject and mapped claims in the clear (they are on the
//   access tokens anyway), the sealed claims and tokens; it lives exactly as long as the grant
//   (created with the grant's lifetime; destroyed with it by the server's Grant adapter,
//   auth/oauth/oidc-engine.ts).

import type { Adapter } from '../../core/oauth-provider.js';
import { deriveKey, openWith, sealWith } from '../oauth/key-seal.js';
import type { ProviderTokens } from './provider-client.js';
import type { ProviderClaims } from './rules.js';

export const LOGIN_MODEL = 'UpstreamLogin';
export const GRANT_MODEL = 'UpstreamGrant';
const INFO = 'fastsvc upstream tokens v1';

/** The sealing keys: the first seals, any opens (cookie keys rotate: `fastsvc keys rotate`). */
export function sealingKeys(cookieKeys: readonly string[]): Buffer[] {
  return cookieKeys.map((k) => deriveKey(Buffer.from(k, 'base64url'), INFO));
}

export class Sealer {
  constructor(private readonly keys: readonly Buffer[]) {}

  seal(value: unknown, place: string): string {
    return sealWith(JSON.stringify(value), this.keys[0]!, place);
  }

  open<T>(sealed: unknown, place: string): T | undefined {
    if (typeof sealed !== 'string') return undefined;
    for (const k of this.keys) {
      const plain = openWith(sealed, k, place);
      if (plain !== undefined) return JSON.parse(plain) as T;
    }
    return undefined;
  }
}

export interface PendingLogin {
  /** The oidc-provider interaction the person is signing in for. */
  uid: string;
  upstream: string;
  /** sha256 (base64url) of the browser-binding cookie's value. */
  binding: string;
  verifier: string;
  nonce?: string;
}

export class PendingLogins {
  constructor(private readonly adapter: Adapter, private readonly sealer: Sealer) {}

  async save(state: string, p: PendingLogin, ttl: number): Promise<void> {
    const { verifier, nonce, ...plain } = p;
    await this.adapter.upsert(state, { ...plain, sealed: this.sealer.seal({ verifier, nonce }, `login:${state}`) }, ttl);
  }

  /** The pending login of `state`, with whether it was already used; undefined when unknown or expired. */
  async find(state: string): Promise<(PendingLogin & { consumed: boolean }) | undefined> {
    const rec = await this.adapter.find(state);
    if (!rec) return undefined;
    const secret = this.sealer.open<{ verifier: string; nonce?: string }>(rec.sealed, `login:${state}`);
    if (!secret) return undefined;
    return { uid: String(rec.uid), upstream: String(rec.upstream), binding: String(rec.binding), ...secret, consumed: !!rec.consumed };
  }

  /** Use it up: false when another request did first (the store's consume() is atomic). */
  async consume(state: string): Promise<boolean> {
    try {
      await this.adapter.consume(state);
      return true;
    } catch (e) {
      if ((await this.adapter.find(state))?.consumed) return false;
      throw e;
    }
  }
}

/** What an upstream login left on a grant. */
export interface SignInGrant {
  upstream: string;
  sub: string;
  claims: Record<string, string>;
  /** The claims the provider vouched for at sign-in (rules are applied to them again on every refresh). */
  identity: ProviderClaims;
  tokens: ProviderTokens;
}

/** The part read on every token issuance: no decryption. */
export type SignInGrantSummary = Pick<SignInGrant, 'upstream' | 'sub' | 'claims'>;

export class SignInGrants {
  constructor(private readonly adapter: Adapter, private readonly sealer: Sealer) {}

  /** Save for a grant living `ttl` more seconds. */
  async save(grantId: string, g: SignInGrant, ttl: number): Promise<void> {
    const exp = Math.floor(Date.now() / 1000) + ttl;
    await this.adapter.upsert(grantId, {
      grantId, upstream: g.upstream, sub: g.sub, claims: g.claims, exp,
      sealed: this.sealer.seal({ identity: g.identity, tokens: g.tokens }, `grant:${grantId}`),
    }, ttl);
  }

  async summary(grantId: string): Promise<SignInGrantSummary | undefined> {
    const rec = await this.adapter.find(grantId);
    return rec ? { upstream: String(rec.upstream), sub: String(rec.sub), claims: { ...(rec.claims as Record<string, string>) } } : undefined;
  }

  /** Everything, opened; undefined when absent or sealed under keys no longer held. */
  async open(grantId: string): Promise<(SignInGrant & { exp: number }) | undefined> {
    const rec = await this.adapter.find(grantId);
    if (!rec) return undefined;
    const inside = this.sealer.open<Pick<SignInGrant, 'identity' | 'tokens'>>(rec.sealed, `grant:${grantId}`);
    if (!inside) return undefined;
    return { upstream: String(rec.upstream), sub: String(rec.sub), claims: { ...(rec.claims as Record<string, string>) }, exp: Number(rec.exp), ...inside };
  }

  /** Keep refreshed tokens, within the grant's remaining lifetime. */
  async replaceTokens(grantId: string, g: SignInGrant & { exp: number }, tokens: ProviderTokens): Promise<void> {
    const ttl = g.exp - Math.floor(Date.now() / 1000);
    if (ttl > 0) await this.save(grantId, { ...g, tokens }, ttl);
  }

  destroy(grantId: string): Promise<void> {
    return this.adapter.destroy(grantId);
  }
}
