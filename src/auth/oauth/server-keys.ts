// Signing and cookie keys of the authorization server. Guarantees: keys are created
// once per store (ES256 signing key, two 256-bit cookie keys) and saved through the
// provider before first use, so sessions and signed artifacts survive a restart on a
// durable provider; processes starting together on one shared store end up with the
// same keys (addKeysIfAbsent: the first one saved wins).

import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import type { OAuthKeys, OAuthProvider } from '../../core/oauth-provider.js';

export async function loadOrCreateKeys(provider: OAuthProvider): Promise<OAuthKeys> {
  const existing = await provider.loadKeys();
  if (existing) return existing;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const keys: OAuthKeys = {
    jwks: { keys: [{ ...jwk, kid: randomBytes(8).toString('base64url'), alg: 'ES256', use: 'sig' }] },
    cookieKeys: [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')],
  };
  if (provider.addKeysIfAbsent) return provider.addKeysIfAbsent(keys);
  await provider.saveKeys(keys);
  return keys;
}
