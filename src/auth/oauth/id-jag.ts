// Enterprise-managed authorization (MCP ext-auth): the RFC 7523 jwt-bearer grant with
// an Identity Assertion JWT Authorization Grant (ID-JAG) from a trusted enterprise
// identity provider. Guarantees: an ID-JAG is accepted only when its `iss` is one of
// oauth.enterprise_issuers, its signature verifies with that provider's keys under an
// allowed algorithm (never `none`), its header says typ oauth-id-jag+jwt, its `aud` is
// this authorization server's issuer, it is within exp/iat (30 s skew) and no longer
// lived than max_lifetime, its `client_id` is the authenticated client and that client
// is allowed for the provider, its `resource` (when present) is a resource of this
// server, its `scope` names only declared scopes, and its `jti` was not seen before
// (per replica, until exp). Any of those failing is invalid_grant; a `resource`
// parameter that is not this server's or differs from the ID-JAG's is invalid_target;
// a `scope` parameter beyond the ID-JAG's or the provider's allowance is
// invalid_scope. The granted scopes are requested ∩ ID-JAG ∩ provider ∩ profile.
// Assertions are never logged.

import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { errors } from 'oidc-provider';
import { SvcError } from '../../errors.js';
import { enterpriseIssuerProblems, type IssuerConfig } from './oauth-checks.js';
import { ReplayCache } from '../replay.js';

export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const ID_JAG_PROFILE = 'urn:ietf:params:oauth:grant-profile:id-jag';
const ID_JAG_TYP = 'oauth-id-jag+jwt';
const SKEW = 30;
const MAX_ASSERTION = 16 * 1024;

/** What a valid ID-JAG grants. */
export interface EnterpriseIdentity {
  /** The identity provider (its issuer). */
  idp: string;
  sub: string;
  claims: Record<string, unknown>;
  scopes: string[];
}

export interface IdJagRequest {
  assertion: string;
  /** The client the token endpoint authenticated. */
  clientId: string;
  scope?: string;
  resource?: string | string[];
}

interface Trusted {
  cfg: IssuerConfig;
  keys: JWTVerifyGetKey;
  clients: ReadonlySet<string>;
  scopes: ReadonlySet<string>;
}

export interface IdJagVerifier {
  /** The client_ids some provider allows (they get the jwt-bearer grant type). */
  readonly clientIds: ReadonlySet<string>;
  /** Whether tokens issued for this provider are still honoured (it is still configured). */
  trusts(idp: unknown): boolean;
  /** The identity and scopes for a token request, or throws the OAuth error to answer. */
  verify(r: IdJagRequest): Promise<EnterpriseIdentity>;
}

const fail = (error: 'invalid_grant' | 'invalid_target' | 'invalid_scope' | 'invalid_request', description: string) =>
  new errors.CustomOIDCProviderError(error, description);

export function createIdJagVerifier(o: {
  issuers: readonly IssuerConfig[];
  /** This authorization server's issuer: the required `aud`. */
  issuer: string;
  acceptResource(indicator: string): boolean;
  /** profile.scopes names. */
  scopes: readonly string[];
  /** The static clients' ids. */
  knownClients: ReadonlySet<string>;
  replay?: ReplayCache;
}): IdJagVerifier {
  const profile = new Set(o.scopes);
  const replay = o.replay ?? new ReplayCache();
  const trusted = new Map<string, Trusted>();
  const problem = enterpriseIssuerProblems(o.issuers, o.knownClients, o.scopes)[0];
  if (problem) throw new SvcError(problem.code, problem.message, { path: `/${problem.path.join('/')}` });
  o.issuers.forEach((cfg) => {
    const keys: JWTVerifyGetKey = cfg.jwks_uri
      ? createRemoteJWKSet(new URL(cfg.jwks_uri), { timeoutDuration: 5000, cooldownDuration: 30_000 })
      : createLocalJWKSet(cfg.jwks as unknown as Parameters<typeof createLocalJWKSet>[0]);
    trusted.set(cfg.issuer, { cfg, keys, clients: new Set(cfg.allowed_clients), scopes: new Set(cfg.scopes ?? o.scopes) });
  });
  const audiences = [o.issuer, `${o.issuer}/`];

  return {
    clientIds: new Set([...trusted.values()].flatMap((t) => [...t.clients])),
    trusts: (idp) => typeof idp === 'string' && trusted.has(idp),

    async verify(r) {
      if (!r.assertion || r.assertion.length > MAX_ASSERTION) throw fail('invalid_request', 'assertion is missing or too large');
      let unverified: JWTPayload;
      try {
        unverified = decodeJwt(r.assertion);
      } catch {
        throw fail('invalid_grant', 'the assertion is not a JWT');
      }
      const t = typeof unverified.iss === 'string' ? trusted.get(unverified.iss) : undefined;
      if (!t) throw fail('invalid_grant', 'the ID-JAG issuer is not a trusted enterprise identity provider');
      const { cfg } = t;
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(r.assertion, t.keys, {
          issuer: cfg.issuer,
          audience: audiences,
          algorithms: cfg.algorithms ?? ['RS256', 'ES256'],
          typ: ID_JAG_TYP,
          clockTolerance: SKEW,
          requiredClaims: ['exp', 'iat', 'jti', 'sub', 'client_id'],
        }));
      } catch (e) {
        throw fail('invalid_grant', `the ID-JAG is not valid: ${joseReason(e)}`);
      }
      const exp = claims.exp!;
      const iat = claims.iat!;
      if (iat > Date.now() / 1000 + SKEW) throw fail('invalid_grant', 'the ID-JAG is issued in the future');
      if (exp - iat > (cfg.max_lifetime ?? 300)) throw fail('invalid_grant', 'the ID-JAG lives longer than this server accepts');
      if (claims.client_id !== r.clientId) throw fail('invalid_grant', 'the ID-JAG was issued to another client');
      if (!t.clients.has(r.clientId)) throw fail('invalid_grant', 'this client may not use ID-JAGs from this identity provider');
      if (claims.resource !== undefined && (typeof claims.resource !== 'string' || !o.acceptResource(claims.resource))) {
        throw fail('invalid_grant', 'the ID-JAG resource is not a resource of this server');
      }
      const subject = claims[cfg.subject_claim ?? 'sub'];
      if (typeof subject !== 'string' || !subject) throw fail('invalid_grant', `the ID-JAG has no string ${cfg.subject_claim ?? 'sub'} claim`);
      if (claims.scope !== undefined && typeof claims.scope !== 'string') throw fail('invalid_grant', 'the ID-JAG scope is not a string');
      const jagScopes = claims.scope === undefined ? undefined : new Set(claims.scope.split(' ').filter(Boolean));
      const unknown = [...(jagScopes ?? [])].filter((s) => !profile.has(s));
      if (unknown.length) throw fail('invalid_grant', `the ID-JAG names scopes this server does not have: ${unknown.join(' ')}`);

      for (const res of [r.resource ?? []].flat()) {
        if (!o.acceptResource(res)) throw fail('invalid_target', `${res} is not a resource of this server`);
        if (typeof claims.resource === 'string' && res !== claims.resource) throw fail('invalid_target', 'resource differs from the ID-JAG resource');
      }
      const allowed = (s: string) => t.scopes.has(s) && (!jagScopes || jagScopes.has(s));
      let scopes: string[];
      if (r.scope !== undefined) {
        const requested = [...new Set(r.scope.split(' ').filter(Boolean))];
        const refused = requested.filter((s) => !allowed(s));
        if (refused.length) throw fail('invalid_scope', `not granted for this identity: ${refused.join(' ')}`);
        scopes = requested;
      } else {
        scopes = [...(jagScopes ?? t.scopes)].filter(allowed);
      }
      if (!scopes.length) throw fail('invalid_scope', 'no scope this identity may be granted was requested');

      // Last, so a request refused for another reason does not use the assertion up.
      if (!replay.unique(`${cfg.issuer}\n${claims.jti}`, exp + SKEW)) throw fail('invalid_grant', 'the ID-JAG was already used (jti replay)');

      const mapped: Record<string, unknown> = {};
      for (const [name, claim] of Object.entries(cfg.claims ?? {})) if (claims[claim] !== undefined) mapped[name] = claims[claim];
      return { idp: cfg.issuer, sub: subject, claims: mapped, scopes };
    },
  };
}

function joseReason(e: unknown): string {
  if (e instanceof joseErrors.JWTExpired) return 'expired';
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (e instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the identity provider matches';
  if (e instanceof joseErrors.JWTClaimValidationFailed) return `${e.claim} claim check failed (${e.reason})`;
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return 'signature algorithm not allowed';
  if (e instanceof joseErrors.JWKSTimeout) return 'the identity provider keys could not be fetched in time';
  return (e as Error)?.message?.slice(0, 200) ?? 'unverifiable';
}
