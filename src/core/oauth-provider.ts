// The provider abstraction: where the authorization server keeps its state (clients,
// grants, codes, tokens, sessions, interactions) and its signing and cookie keys.
// Guarantees: every implementation passes test/contract/oauth-provider.test.ts; a
// write has happened when its promise resolves; ids are stored hashed (stored-id.ts);
// consume() succeeds once per entry — a second consume rejects with AlreadyConsumed,
// atomically even across processes sharing one store.

import type { Adapter } from 'oidc-provider';
import type { JWK } from 'jose';

export type { Adapter, AdapterPayload } from 'oidc-provider';

/** Private signing keys (JWKS) and the keys that sign the provider's cookies. */
export interface OAuthKeys {
  jwks: { keys: JWK[] };
  cookieKeys: string[];
}

/** A second consume() of the same entry (a replayed code or refresh token, or a lost race). */
export class AlreadyConsumed extends Error {
  constructor(readonly model: string) {
    super(`${model} already consumed`);
  }
}

/** What a store shared by several processes tells each of them (see watch()). */
export interface StoreEvents {
  /** A grant, or a token of it, was revoked or destroyed by some process: forget what is cached about it. */
  revoked(grantId: string): void;
  /**
   * The notification channel went down (listening false: cache nothing, since changes
   * may go unheard) or came back (listening true: changes made meanwhile were missed,
   * so forget everything cached).
   */
  listening(up: boolean): void;
}

export interface OAuthProvider {
  /**
   * oidc-provider storage for one model ("AccessToken", "RefreshToken", "AuthorizationCode",
   * "Client", "Grant", "Session", "Interaction", …): upsert/find/findByUid/findByUserCode/
   * consume/destroy/revokeByGrantId, expiry in seconds from upsert time.
   */
  adapter(model: string): Adapter;
  /** The keys saved by saveKeys, or undefined on a fresh store. */
  loadKeys(): Promise<OAuthKeys | undefined>;
  saveKeys(keys: OAuthKeys): Promise<void>;
  /** Save `keys` unless keys exist already; returns the stored ones (so processes starting together agree). */
  addKeysIfAbsent?(keys: OAuthKeys): Promise<OAuthKeys>;
  /** Delete expired entries now; returns how many went. Providers may also sweep on their own. */
  sweep?(): number | Promise<number>;
  /** Shared stores: subscribe to revocations made by any process (this one included). */
  watch?(events: StoreEvents): void;
  /** Shared stores: false while the store is unreachable (/readyz reports not-ready). */
  reachable?(): boolean;
  close(): Promise<void>;
}
