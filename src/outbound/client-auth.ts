// How fastsvc authenticates as an OAuth client at another server's token endpoint (sign-in
// through an identity provider, a backend's client credentials and token exchange) or
// introspection endpoint: the one place each method is written. Guarantees:
// - client_secret_basic sends `Authorization: Basic base64(id:secret)` with the id and secret
//   form-encoded exactly as RFC 6749 §2.3.1 and Appendix B say — every octet but the unreserved
//   `*-._`, digits and letters percent-encoded, a space as `+` — so an id or secret made of those
//   characters reaches a server that does not decode them (glewlwyd 2.7.5) as it is, while one that
//   does decode gets the same value back (encoders that also escape `-` as %2D break the former);
// - client_secret_post puts client_id and client_secret in the form;
// - private_key_jwt (RFC 7523, OpenID Connect Core §9) puts client_id, the jwt-bearer assertion
//   type and a fresh assertion in the form: iss and sub the client id, aud the token endpoint URL
//   (what Okta, Entra ID, Keycloak, glewlwyd and node-oidc-provider all accept), a random jti,
//   iat/nbf now and exp a minute later, signed with the configured private key (RS256 for RSA,
//   PS256 for RSA-PSS, ES256/384/512 by curve, EdDSA for Ed25519, or the JWK's own alg) and its kid
//   when the key is a JWK that has one;
// - none (a public client) puts only client_id in the form;
// readPrivateKey() accepts a PEM (PKCS#8, or PKCS#1/SEC 1) or a JWK private key and refuses a public
// or symmetric one; no secret or key is ever logged or put in an error message.

import { randomBytes, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignJWT } from 'jose';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';

/** A private key to sign client assertions with. */
export interface AssertionKey {
  key: KeyObject;
  alg: string;
  kid?: string;
}

/** What a client authenticates with: a secret (basic or post), a private key (private_key_jwt), or nothing (a public client). */
export type ClientCredential =
  | { method: 'client_secret_basic' | 'client_secret_post'; clientId: string; secret: string }
  | { method: 'private_key_jwt'; clientId: string; key: AssertionKey }
  | { method: 'none'; clientId: string };

/** oauth4webapi's ClientAuth shape: what a request to `tokenEndpoint` carries besides its own parameters. */
export type ClientAuthFn = (as: unknown, client: unknown, body: URLSearchParams, headers: Headers) => Promise<void>;

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** Seconds a client assertion is good for. */
const ASSERTION_LIFETIME_S = 60;

/** application/x-www-form-urlencoded as RFC 6749 Appendix B defines it. */
export function formEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, '+');
}

/** The Authorization header value of client_secret_basic. */
export function basicAuthorization(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(secret)}`).toString('base64')}`;
}

/** Sets `c`'s credentials on a request to `tokenEndpoint` (the aud of a private_key_jwt assertion). */
export function clientAuth(c: ClientCredential, tokenEndpoint: string): ClientAuthFn {
  return async (_as, _client, body, headers) => {
    switch (c.method) {
      case 'client_secret_basic':
        headers.set('authorization', basicAuthorization(c.clientId, c.secret));
        return;
      case 'client_secret_post':
        body.set('client_id', c.clientId);
        body.set('client_secret', c.secret);
        return;
      case 'private_key_jwt': {
        const now = Math.floor(Date.now() / 1000);
        const assertion = await new SignJWT({ jti: randomBytes(16).toString('base64url') })
          .setProtectedHeader({ alg: c.key.alg, ...(c.key.kid !== undefined && { kid: c.key.kid }) })
          .setIssuer(c.clientId).setSubject(c.clientId).setAudience(tokenEndpoint)
          .setIssuedAt(now).setNotBefore(now).setExpirationTime(now + ASSERTION_LIFETIME_S)
          .sign(c.key.key);
        body.set('client_id', c.clientId);
        body.set('client_assertion_type', JWT_BEARER);
        body.set('client_assertion', assertion);
        return;
      }
      default:
        body.set('client_id', c.clientId);
    }
  };
}

/** Why a key file cannot sign client assertions. */
export class KeyFileError extends Error {}

/** The private key in `path` (PEM or JWK), with the algorithm it signs with and its kid (a JWK's). */
export function readPrivateKey(path: string): AssertionKey {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new KeyFileError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  let jwk: Record<string, unknown> | undefined;
  if (text.trimStart().startsWith('{')) {
    try {
      jwk = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new KeyFileError(`${path} is neither a PEM nor a JSON Web Key`);
    }
  }
  let key: KeyObject;
  try {
    key = jwk ? createPrivateKey({ key: jwk as never, format: 'jwk' }) : createPrivateKey(text);
  } catch {
    throw new KeyFileError(`${path} holds no private key (a PEM private key or a JWK with its private part)`);
  }
  const alg = typeof jwk?.alg === 'string' ? jwk.alg : algOf(key);
  if (!alg) throw new KeyFileError(`${path}: a ${key.asymmetricKeyType ?? 'symmetric'} key cannot sign a client assertion (RSA, EC P-256/384/521 or Ed25519)`);
  return { key, alg, ...(typeof jwk?.kid === 'string' && { kid: jwk.kid }) };
}

function algOf(key: KeyObject): string | undefined {
  switch (key.asymmetricKeyType) {
    case 'rsa': return 'RS256';
    case 'rsa-pss': return 'PS256';
    case 'ed25519': return 'EdDSA';
    case 'ec': return ({ prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' } as Record<string, string>)[key.asymmetricKeyDetails?.namedCurve ?? ''];
    default: return undefined;
  }
}
