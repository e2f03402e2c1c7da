// Verified access tokens, remembered so the hot path skips the store. Guarantees:
// a cached principal is never served after its token expires, and never after its
// token or its grant is revoked or destroyed — every such change in this process
// passes through the provider adapters this module wraps, which drop the affected
// entries before and after the change, and a shared store reports other processes'
// revocations to revoked(); while a shared store's notifications cannot be heard
// (trust(false)) nothing is served from or kept in the cache; a verification that
// overlapped any revocation is not cached (epoch check), so a lookup racing a
// revocation cannot leave a stale entry; at most MAX entries. Each revoked grant is
// told to onRevoked (Grant destroyed, or its access tokens revoked).

import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Principal } from '../../core/types.js';

const MAX = 10_000;

export class VerifiedTokens {
  readonly #byToken = new Map<string, Principal>();
  readonly #byGrant = new Map<string, Set<string>>();
  #epoch = 0;
  #trusted = true;

  constructor(readonly onRevoked: (grantId: string) => void = () => undefined) {}

  /** A revocation made elsewhere (another replica): forget the grant's tokens, tell the listener. */
  revoked(grantId: string): void {
    this.#epoch++;
    this.dropGrant(grantId);
    this.onRevoked(grantId);
  }

  /** Whether revocations made elsewhere are heard; either way the cache starts empty. */
  trust(up: boolean): void {
    this.#epoch++;
    this.#trusted = up;
    this.#byToken.clear();
    this.#byGrant.clear();
  }

  /** Call before verifying in the store; pass the value to set(). */
  begin(): number {
    return this.#epoch;
  }

  get(token: string): Principal | undefined {
    if (!this.#trusted) return undefined;
    const p = this.#byToken.get(token);
    if (!p) return undefined;
    if (p.expiresAt !== undefined && p.expiresAt * 1000 <= Date.now()) {
      this.#drop(token);
      return undefined;
    }
    return p;
  }

  set(token: string, p: Principal, epoch: number): void {
    if (epoch !== this.#epoch || !this.#trusted) return; // a revocation happened meanwhile: do not trust this result for later
    if (this.#byToken.size >= MAX) this.#drop(this.#byToken.keys().next().value!);
    this.#byToken.set(token, p);
    const grant = p.credentialId!;
    let tokens = this.#byGrant.get(grant);
    if (!tokens) this.#byGrant.set(grant, (tokens = new Set()));
    tokens.add(token);
  }

  /** True while a grant has a live cached token (so it was found and not revoked since). */
  knowsGrant(grantId: string): boolean {
    return this.#trusted && this.#byGrant.has(grantId);
  }

  dropGrant(grantId: string): void {
    for (const token of this.#byGrant.get(grantId) ?? []) this.#byToken.delete(token);
    this.#byGrant.delete(grantId);
  }

  /** The adapter for `model`, whose revoking operations drop what they invalidate. */
  wrap(model: string, inner: Adapter): Adapter {
    const revoking = async (drop: () => void, op: () => Promise<unknown>) => {
      this.#epoch++;
      drop();
      try {
        await op();
      } finally {
        this.#epoch++;
        drop();
      }
    };
    const dropId = (id: string) => () => {
      if (model === 'AccessToken') this.#drop(id);
      else if (model === 'Grant') this.dropGrant(id);
    };
    return {
      upsert: (id: string, payload: AdapterPayload, expiresIn: number) => inner.upsert(id, payload, expiresIn),
      find: (id: string) => inner.find(id),
      findByUid: (uid: string) => inner.findByUid(uid),
      findByUserCode: (code: string) => inner.findByUserCode(code),
      consume: (id: string) => inner.consume(id),
      destroy: (id: string) => revoking(dropId(id), () => inner.destroy(id)).then(() => {
        if (model === 'Grant') this.onRevoked(id);
      }),
      revokeByGrantId: (grantId: string) => revoking(() => this.dropGrant(grantId), () => inner.revokeByGrantId(grantId)).then(() => {
        if (model === 'AccessToken') this.onRevoked(grantId);
      }),
    };
  }

  #drop(token: string): void {
    const p = this.#byToken.get(token);
    if (!p) return;
    this.#byToken.delete(token);
    const tokens = this.#byGrant.get(p.credentialId!);
    tokens?.delete(token);
    if (tokens?.size === 0) this.#byGrant.delete(p.credentialId!);
  }
}
