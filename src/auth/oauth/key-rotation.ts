// Key rotation for a durable OAuth store (`fastsvc keys rotate`). Guarantees: a new ES256
// signing key and a new cookie key are put first (so they sign), the previous ones stay
// after them for verification (KEEP_PREVIOUS of each; older ones are dropped), and the
// result is saved through the provider in one write; nothing is rotated on a store that
// has no keys yet (the first start creates them). Replicas read the keys when they start:
// oidc-provider takes its JWKS and cookie keys at construction, so a replica signs with
// the new key after its restart.

import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { SvcError } from '../../errors.js';
import type { OAuthKeys, OAuthProvider } from '../../core/oauth-provider.js';

/** How many earlier signing keys and cookie keys a rotation keeps for verification. */
export const KEEP_PREVIOUS = 2;

export interface Rotation { kid: string; kept: string[]; dropped: string[] }

export async function rotateKeys(provider: OAuthProvider): Promise<Rotation> {
  const old = await provider.loadKeys();
  if (!old) throw new SvcError('OAUTH_CONFIG', 'the OAuth store has no keys yet: start fastsvc once (it creates them), then rotate');
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = randomBytes(8).toString('base64url');
  const kept = old.jwks.keys.slice(0, KEEP_PREVIOUS);
  const keys: OAuthKeys = {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' }, ...kept] },
    cookieKeys: [randomBytes(32).toString('base64url'), ...old.cookieKeys.slice(0, KEEP_PREVIOUS)],
  };
  await provider.saveKeys(keys);
  return { kid, kept: kept.map((k) => String(k.kid)), dropped: old.jwks.keys.slice(KEEP_PREVIOUS).map((k) => String(k.kid)) };
}
