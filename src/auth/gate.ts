// The auth gate in front of protected routes. Guarantees: a bearer is checked
// against the static tokens of the policy snapshot it is given (else the store's
// current one) first, then as an access token of the built-in OAuth server or an
// external issuer (access-verifier.ts says in which order); a verifier's refusal keeps
// its code and its audit reason (an external token's failed check, an issuer that
// cannot be asked: 503 IDP_UNAVAILABLE); tokens are
// read only from the Authorization header; every 401/403 carries a
// WWW-Authenticate challenge that starts with exactly "Bearer " (RFC 6750), with
// resource_metadata when the OAuth server publishes protected-resource metadata, and
// a 401's `scope` names what a client should ask for (MCP 2025-11-25 scope selection):
// with OAuth (the built-in server or external issuers), exactly the scopes_supported the
// protected-resource metadata advertises (restart-only: the declared scopes some issuer can
// grant, never one none can), else the live profile's declared scopes, so a reload that
// changes profile.scopes changes the next 401 — worked out once per profile, not per
// challenge (a 403 names the scopes its operation needs instead); an
// OAuth store that is down answers STORE_UNAVAILABLE (503), and stillValid keeps what
// it cannot re-check (an open socket stays open until the store, or the external
// issuer, answers again).
// With oauth.dpop on, an access token bound to a DPoP key (Principal.jkt) is accepted
// only as `Authorization: DPoP <token>` with a proof for this request signed by that
// key (dpop.ts checks method, URL, ath, iat or nonce, replay); a stolen bound token
// is useless without the key; with oauth.dpop required an unbound OAuth token is
// refused (static bearer tokens stay bearer); challenges then also carry
// `DPoP algs="..."`, with the error there when the proof was the problem.

import { isSvcError, SvcError } from '../errors.js';
import type { Principal } from '../core/types.js';
import type { PolicySnapshot } from '../policy/store.js';
import { profileScopes } from '../core/config.js';
import { DPOP_ALGS, type DpopVerifier } from './dpop.js';

export interface AccessTokenVerifier {
  /** The token's principal; null: no one knows it; a SvcError: refused (UNAUTHENTICATED with its reason) or not decidable now (503). */
  verifyAccessToken(token: string): Promise<Principal | SvcError | null>;
  /** verifyAccessToken's answer without waiting when it is already known (cached), else undefined. */
  cachedAccessToken?(token: string): Principal | undefined;
  isActive(p: Principal): Promise<boolean>;
  prmUrl(route?: string): string;
  /** The scopes its protected-resource metadata advertises (scopes_supported). */
  readonly scopesSupported: readonly string[];
  dpop?: DpopVerifier;
}

/** What the gate needs of the request for a DPoP proof. */
export interface GateRequest {
  method?: string;
  /** Path as the client sent it (Express: originalUrl). */
  url?: string;
  headers: { dpop?: string | string[]; [name: string]: unknown };
}

export type ChallengeError = 'invalid_token' | 'insufficient_scope' | 'invalid_dpop_proof' | 'use_dpop_nonce';

export interface AuthGate {
  /** snapshot: the policy this request runs under (default: the current one). */
  authenticate(authorization: string | undefined, snapshot?: PolicySnapshot, req?: GateRequest): Promise<Principal | SvcError>;
  /** The token of an `Authorization: Bearer <token>` header, or undefined (absent, malformed, or another scheme). */
  bearerOf(authorization: string): string | undefined;
  /**
   * authenticate()'s answer without waiting when it is a principal (the direct paths' common
   * case), for the token bearerOf() read: a static token of `snapshot` or a cached access token
   * (built-in or external) needing no DPoP proof; undefined: ask authenticate() (which also
   * produces every refusal).
   */
  principalNow(bearer: string, snapshot: PolicySnapshot): Principal | undefined;
  stillValid(p: Principal): Promise<boolean>;
  /** scopes: what the refused operation needs (403); without them the challenge names the scopes a first authorization should ask for. */
  challenge(o: { error?: ChallengeError; scopes?: readonly string[]; description?: string; route?: string }): string;
}

/** The message of a 401 for a token that is not accepted, whatever the reason (an external issuer's refusals too: the check is logged, not answered). */
export const TOKEN_REFUSED = 'the token is unknown, expired, revoked or for another resource';

const CREDENTIAL = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*) *$/i;

export function createGate(opts: { policy?: () => PolicySnapshot; oauth?: AccessTokenVerifier; realm: string }): AuthGate {
  const { policy, oauth } = opts;
  const dpop = oauth?.dpop;
  // A 401's scope: the OAuth server's (fixed), else the current profile's, recomputed only when a reload swaps the profile.
  const fixed = oauth && oauth.scopesSupported.join(' ');
  let asked: { profile?: PolicySnapshot['profile']; scope: string } = { scope: '' };
  const firstScope = (): string => {
    if (fixed !== undefined) return fixed;
    const profile = policy?.().profile;
    if (profile !== asked.profile) asked = { profile, scope: profileScopes(profile).join(' ') };
    return asked.scope;
  };
  return {
    async authenticate(authorization, snapshot = policy?.(), req) {
      if (!authorization) return new SvcError('UNAUTHENTICATED', 'a bearer token is required (Authorization: Bearer <token>)');
      const m = CREDENTIAL.exec(authorization);
      if (!m || (!dpop && m[1]!.toLowerCase() === 'dpop')) return new SvcError('UNAUTHENTICATED', 'malformed Authorization header: expected "Bearer <token>"', { data: { error: 'invalid_token' } });
      const token = m[2]!;
      let p: Principal | SvcError | null;
      try {
        p = snapshot?.tokens?.match(token) ?? (oauth ? await oauth.verifyAccessToken(token) : null);
      } catch (e) {
        if (isSvcError(e) && e.code === 'STORE_UNAVAILABLE') return e;
        throw e;
      }
      if (p instanceof SvcError) return p;
      if (!p) return new SvcError('UNAUTHENTICATED', TOKEN_REFUSED, { data: { error: 'invalid_token' } });
      if (!dpop) return p;
      const invalid = (message: string) => new SvcError('UNAUTHENTICATED', message, { data: { error: 'invalid_token' } });
      if (m[1]!.toLowerCase() === 'bearer') {
        if (p.jkt) return invalid('this token is DPoP-bound: send it as "Authorization: DPoP <token>" with a DPoP proof');
        if (dpop.mode === 'required' && p.kind === 'oauth') return invalid('this server accepts only DPoP-bound access tokens');
        return p;
      }
      if (!p.jkt) return invalid('the token is not DPoP-bound: send it as "Authorization: Bearer <token>"');
      try {
        await dpop.verify(req?.headers.dpop, { method: req?.method ?? '', path: req?.url ?? '', accessToken: token, boundTo: p.jkt });
      } catch (e) {
        if (e instanceof SvcError) return e;
        throw e;
      }
      return p;
    },
    bearerOf(authorization) {
      const m = CREDENTIAL.exec(authorization);
      return m && m[1]!.toLowerCase() === 'bearer' ? m[2] : undefined;
    },
    principalNow(bearer, snapshot) {
      // A static token never carries a DPoP key, so with DPoP on a Bearer match is still the answer.
      const p = snapshot.tokens?.match(bearer) ?? oauth?.cachedAccessToken?.(bearer);
      // authenticate() refuses a DPoP-bound token sent as Bearer, and any OAuth Bearer when DPoP is required.
      return p && dpop && (p.jkt || (dpop.mode === 'required' && p.kind === 'oauth')) ? undefined : p;
    },
    async stillValid(p) {
      if (p.kind === 'static') return policy?.().tokens?.stillValid(p) ?? false;
      if (p.expiresAt !== undefined && p.expiresAt * 1000 <= Date.now()) return false;
      if (!oauth) return false;
      try {
        return await oauth.isActive(p);
      } catch (e) {
        if (isSvcError(e) && (e.code === 'STORE_UNAVAILABLE' || e.code === 'IDP_UNAVAILABLE')) return true;
        throw e;
      }
    },
    challenge(o) {
      const quote = (v: string) => v.replace(/["\\]/g, '');
      const parts = [`realm="${quote(opts.realm)}"`];
      const dpopError = o.error === 'invalid_dpop_proof' || o.error === 'use_dpop_nonce';
      if (o.error && !dpopError) parts.push(`error="${o.error}"`);
      const scope = o.scopes ? o.scopes.join(' ') : firstScope();
      if (scope) parts.push(`scope="${scope}"`);
      if (oauth) parts.push(`resource_metadata="${oauth.prmUrl(o.route)}"`);
      if (o.description && !dpopError) parts.push(`error_description="${quote(o.description)}"`);
      const bearer = `Bearer ${parts.join(', ')}`;
      if (!dpop) return bearer;
      const d = [`algs="${DPOP_ALGS.join(' ')}"`];
      if (dpopError) d.push(`error="${o.error}"`, ...(o.description ? [`error_description="${quote(o.description)}"`] : []));
      return `${bearer}, DPoP ${d.join(', ')}`;
    },
  };
}
