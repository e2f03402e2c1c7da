// The provider abstraction: where the authorization server keeps its state (clients,
// grants, codes, tokens, sessions, interactions) and its signing and cookie keys.
// Guarantees: every implementation passes test/contract/oauth-provider.test.ts; a
// write has happened when its promise resolves; ids are stored hashed (stored-id.ts).

import type { Adapter } from 'oidc-provider';
import type { JWK } from 'jose';

export type { Adapter, AdapterPayload } from 'oidc-provider';

/** Private signing keys (JWKS) and the keys that sign the provider's cookies. */
export interface OAuthKeys {
  jwks: { keys: JWK[] };
  cookieKeys: string[];
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
  /** Delete expired entries now; returns how many went. Providers may also sweep on their own. */
  sweep?(): number;
  close(): Promise<void>;
}
