// The auth gate in front of protected routes. Guarantees: a bearer is checked
// against the static tokens of the policy snapshot it is given (else the store's
// current one) first, then as an OAuth access token; tokens are
// read only from the Authorization header; every 401/403 carries a
// WWW-Authenticate challenge that starts with exactly "Bearer " (RFC 6750), with
// resource_metadata when the OAuth server publishes protected-resource metadata; an
// OAuth store that is down answers STORE_UNAVAILABLE (503), and stillValid keeps what
// it cannot re-check (an open socket stays open until the store answers again).

import { isSvcError, SvcError } from '../errors.js';
import type { Principal } from '../core/types.js';
import type { PolicySnapshot } from '../policy/store.js';

export interface AccessTokenVerifier {
  verifyAccessToken(token: string): Promise<Principal | null>;
  isActive(p: Principal): Promise<boolean>;
  prmUrl(route?: string): string;
}

export interface AuthGate {
  /** snapshot: the policy this request runs under (default: the current one). */
  authenticate(authorization: string | undefined, snapshot?: PolicySnapshot): Promise<Principal | SvcError>;
  stillValid(p: Principal): Promise<boolean>;
  challenge(o: { error?: 'invalid_token' | 'insufficient_scope'; scopes?: readonly string[]; description?: string; route?: string }): string;
}

/** The caller on a public route: authenticated by nothing, holding no scope. */
export const ANONYMOUS: Principal = Object.freeze({ sub: 'anonymous', scopes: new Set<string>(), kind: 'anonymous' });

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export function createGate(opts: { policy?: () => PolicySnapshot; oauth?: AccessTokenVerifier; realm: string; defaultScopes: () => readonly string[] }): AuthGate {
  const { policy, oauth } = opts;
  return {
    async authenticate(authorization, snapshot = policy?.()) {
      if (!authorization) return new SvcError('UNAUTHENTICATED', 'a bearer token is required (Authorization: Bearer <token>)');
      const m = BEARER.exec(authorization);
      if (!m) return new SvcError('UNAUTHENTICATED', 'malformed Authorization header: expected "Bearer <token>"', { data: { error: 'invalid_token' } });
      const token = m[1]!;
      let p: Principal | null;
      try {
        p = snapshot?.tokens?.match(token) ?? (oauth ? await oauth.verifyAccessToken(token) : null);
      } catch (e) {
        if (isSvcError(e) && e.code === 'STORE_UNAVAILABLE') return e;
        throw e;
      }
      return p ?? new SvcError('UNAUTHENTICATED', 'the token is unknown, expired, revoked or for another resource', { data: { error: 'invalid_token' } });
    },
    async stillValid(p) {
      if (p.kind === 'static') return policy?.().tokens?.stillValid(p) ?? false;
      if (p.expiresAt !== undefined && p.expiresAt * 1000 <= Date.now()) return false;
      if (!oauth) return false;
      try {
        return await oauth.isActive(p);
      } catch (e) {
        if (isSvcError(e) && e.code === 'STORE_UNAVAILABLE') return true;
        throw e;
      }
    },
    challenge(o) {
      const parts = [`realm="${opts.realm.replace(/["\\]/g, '')}"`];
      if (o.error) parts.push(`error="${o.error}"`);
      const scopes = o.scopes ?? opts.defaultScopes();
      if (scopes.length) parts.push(`scope="${scopes.join(' ')}"`);
      if (oauth) parts.push(`resource_metadata="${oauth.prmUrl(o.route)}"`);
      if (o.description) parts.push(`error_description="${o.description.replace(/["\\]/g, '')}"`);
      return `Bearer ${parts.join(', ')}`;
    },
  };
}
