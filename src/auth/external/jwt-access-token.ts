// An external issuer's JWT access token (RFC 9068), checked. Guarantees: its header alg is in
// `algorithms` (never none nor an HMAC: the schema cannot list them, and jose's local key set
// refuses secret algorithms) and jku, x5u, jwk and x5c headers are never read — only the
// issuer's own key set, fresh (a stale set is fetched first: key-set.ts current()); its typ is
// at+jwt (or, unless strict_typ, JWT or absent); it is signed by one of the issuer's keys — a
// key id the held set lacks refetches the set once (key-set.ts: single-flight, rate-limited)
// and a still unknown one is token_kid, whose detail says whether the set was fetched again
// or jwks_refetch_interval kept it from being, or IDP_UNAVAILABLE when the issuer could not be
// asked (never a 401 a client would loop on);
// its iss is the issuer, its aud contains an `audience` or a named endpoint's resource (the token is then
// for that endpoint only: token-audience.ts), it carries exp, and exp/nbf/iat hold
// within clock_skew; its subject claim is a non-empty string. Every refusal names its check
// (reason) and says what failed (detail), for the log only.

import { errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type ProtectedHeaderParameters } from 'jose';
import type { ResolvedExternalIssuer } from '../../core/config.js';
import type { Principal } from '../../core/types.js';
import type { SvcError } from '../../errors.js';
import { credentialIdOf, principalOf } from './claims-map.js';
import type { KeySet } from './key-set.js';
import { rejected, unavailable, type TokenCheck } from './rejection.js';
import { acceptedAudiences, audienceReach, restricted } from './token-audience.js';
import type { EndpointResources } from '../resource-metadata.js';

export interface JwtContext {
  cfg: ResolvedExternalIssuer;
  audiences: readonly string[];
  /** profile.scopes names. */
  profile: readonly string[];
  keys: KeySet;
  endpoints?: EndpointResources;
}

export async function verifyAccessJwt(token: string, header: ProtectedHeaderParameters, c: JwtContext): Promise<Principal | SvcError> {
  const { cfg } = c;
  if (typeof header.alg !== 'string' || !(cfg.algorithms as string[]).includes(header.alg)) {
    return rejected('token_alg', `the token's algorithm ${String(header.alg)} is not one ${cfg.issuer} is trusted with`);
  }
  const typ = typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : undefined;
  if (cfg.strict_typ ? typ !== 'at+jwt' : typ !== undefined && typ !== 'at+jwt' && typ !== 'jwt') {
    return rejected('token_typ', `the token's typ ${String(header.typ)} is not an access token's (at+jwt)`);
  }
  const keys = await c.keys.current();
  if (!keys) return noKeys(c);
  let payload: JWTPayload;
  try {
    payload = await verifyWith(token, keys, c);
  } catch (e) {
    if (!(e instanceof joseErrors.JWKSNoMatchingKey)) return joseRejection(e);
    // A key id the held set lacks: the issuer may have rotated its keys. Fetch the set once.
    const outcome = await c.keys.refresh();
    const fresh = c.keys.held;
    if (fresh && fresh !== keys) {
      try {
        payload = await verifyWith(token, fresh, c);
      } catch (e2) {
        return joseRejection(e2);
      }
    } else if (outcome === 'failed' || (outcome === 'skipped' && c.keys.failure)) {
      return noKeys(c);
    } else if (outcome === 'fetched') {
      return rejected('token_kid', `no signing key of ${cfg.issuer} matches the token's key id, also after fetching its keys again`);
    } else {
      const age = Math.max(0, Math.round((Date.now() - c.keys.fetchedAt) / 1000));
      return rejected('token_kid', `no signing key of ${cfg.issuer} matches the token's key id; its keys, fetched ${age} s ago, are not fetched again within jwks_refetch_interval (${cfg.jwks_refetch_interval} s)`);
    }
  }
  if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + cfg.clock_skew) return rejected('token_iat', 'the token is issued in the future');
  const reach = audienceReach(payload.aud, c.audiences, c.endpoints);
  if (reach === null) return rejected('token_aud', CHECK_TEXT.token_aud!);
  const p = principalOf(cfg, payload, c.profile, credentialIdOf(token));
  return p ? restricted(p, reach) : rejected('token_sub', `the token has no subject (${cfg.subject_claim})`);
}

function noKeys(c: JwtContext): SvcError {
  const f = c.keys.failure;
  return unavailable(f?.reason ?? 'jwks_unavailable', `no signing key of ${c.cfg.issuer} is at hand to check the token${f ? `: ${f.message}` : ''}`);
}

/** jwtVerify with every claim check; a token without kid that several keys could have signed is tried with each. */
async function verifyWith(token: string, keys: JWTVerifyGetKey, c: JwtContext): Promise<JWTPayload> {
  const { cfg } = c;
  const options = { issuer: cfg.issuer, audience: acceptedAudiences(c.audiences, c.endpoints), algorithms: cfg.algorithms, clockTolerance: cfg.clock_skew, requiredClaims: ['exp'] };
  try {
    return (await jwtVerify(token, keys, options)).payload;
  } catch (e) {
    if (!(e instanceof joseErrors.JWKSMultipleMatchingKeys)) throw e;
    let last: unknown = e;
    for await (const key of e as unknown as AsyncIterable<CryptoKey>) {
      try {
        return (await jwtVerify(token, key, options)).payload;
      } catch (err) {
        last = err;
      }
    }
    throw last instanceof joseErrors.JWKSMultipleMatchingKeys ? new joseErrors.JWSSignatureVerificationFailed() : last;
  }
}

const CHECK_TEXT: Partial<Record<TokenCheck, string>> = {
  token_exp: 'the token has expired (or carries no exp)', token_nbf: 'the token is not valid yet', token_iat: 'the token is issued in the future',
  token_iss: 'the token is from another issuer', token_aud: 'the token is not for this server (aud)', token_typ: 'the token is not an access token (typ)',
  token_signature: 'the token\'s signature does not verify', token_alg: 'the token\'s algorithm is not accepted', token_kid: 'no signing key matches the token',
};

/** The check a jose error stands for. */
function joseRejection(e: unknown): SvcError {
  const check = ((): TokenCheck => {
    if (e instanceof joseErrors.JWTExpired) return e.claim === 'iat' ? 'token_iat' : 'token_exp';
    if (e instanceof joseErrors.JWTClaimValidationFailed) {
      const byClaim: Record<string, TokenCheck> = { iss: 'token_iss', aud: 'token_aud', nbf: 'token_nbf', iat: 'token_iat', exp: 'token_exp', typ: 'token_typ' };
      return byClaim[e.claim] ?? 'token_claims';
    }
    if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'token_signature';
    if (e instanceof joseErrors.JOSEAlgNotAllowed || e instanceof joseErrors.JOSENotSupported) return 'token_alg';
    if (e instanceof joseErrors.JWKSNoMatchingKey) return 'token_kid';
    return 'token_malformed';
  })();
  return rejected(check, CHECK_TEXT[check] ?? 'the token is malformed or its claims are unusable');
}
