// The corporate IdP's signing keys. Guarantees: keys[0] is the current key (it signs every new
// ID token and JWT access token); rotate() puts a freshly generated key in front and keeps every
// earlier one published, so tokens signed before a rotation still verify against the JWKS;
// retire() drops every key but the current one, so tokens signed by a dropped key no longer
// verify; kids are unique within a run (`<alg>-<n>-<random>`). The private keys go to
// oidc-provider only, which publishes their public parts at the jwks_uri.

import { generateKeyPairSync, randomBytes } from 'node:crypto';

const GEN = {
  RS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
  PS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
  ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
};

export const SUPPORTED_ALGS = Object.keys(GEN);

export function createKeys(alg = 'RS256') {
  if (!GEN[alg]) throw new Error(`signing_alg must be one of ${SUPPORTED_ALGS.join(', ')}`);
  let n = 0;
  const make = () => {
    const { privateKey } = GEN[alg]();
    return { ...privateKey.export({ format: 'jwk' }), kid: `${alg.toLowerCase()}-${++n}-${randomBytes(3).toString('hex')}`, alg, use: 'sig' };
  };
  let keys = [make()];
  return {
    alg,
    /** The private JWKs, current first (oidc-provider's `jwks` option). */
    privateJwks: () => ({ keys: keys.map((k) => ({ ...k })) }),
    current: () => keys[0].kid,
    kids: () => keys.map((k) => k.kid),
    rotate() {
      keys = [make(), ...keys];
      return keys[0].kid;
    },
    retire() {
      const dropped = keys.slice(1).map((k) => k.kid);
      keys = keys.slice(0, 1);
      return dropped;
    },
  };
}
