// An external issuer's verified claims (a JWT's payload, an introspection answer) as the
// Principal every transport, the runtime, tasks, quotas and the audit log see. Guarantees:
// kind 'external' with the issuer set, so the same `sub` at two issuers is two principals;
// the subject is subject_claim's value (a non-empty string of at most 1024 characters, else
// the token is refused); the client id is the first string among client_claims; the scopes are
// policy/issuer-scopes.ts's grantedScopes of the scopes_from claims' values (a string is split
// on spaces, an array's strings taken); `claims` keeps only the mapped claims whose value is a
// string of at most 256 characters; a `cnf.jkt` binds the principal to a DPoP key (the gate
// then asks for a proof); the principal is frozen; its credentialId is a digest of the token
// (what the audit log's token_id is made from), never the token. A claim path is first looked up as one
// name (Auth0's namespaced https://… claims), then as a dotted path into nested objects.

import { createHash } from 'node:crypto';
import type { Principal } from '../../core/types.js';
import type { ResolvedExternalIssuer } from '../../core/config.js';
import { grantedScopes } from '../../policy/issuer-scopes.js';

const MAX_SUB = 1024;
const MAX_CLAIM = 256;

/** The credential's id in logs and the audit log (hashed again there): a digest of the token, never the token. */
export function credentialIdOf(token: string): string {
  return `ext:${createHash('sha256').update(token).digest('base64url').slice(0, 32)}`;
}

/** The value at `path` in `claims`: the claim named so, else the dotted path through objects. */
export function claimAt(claims: Readonly<Record<string, unknown>>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let v: unknown = claims;
  for (const part of path.split('.')) {
    if (!v || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** The scope claims' values: every word of a string, every string of an array. */
export function scopeValues(claims: Readonly<Record<string, unknown>>, from: readonly string[]): string[] {
  const out: string[] = [];
  for (const path of from) {
    const v = claimAt(claims, path);
    if (typeof v === 'string') out.push(...v.split(/\s+/).filter(Boolean));
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') out.push(x);
  }
  return out;
}

/** The principal for verified `claims`, or undefined when they name no usable subject. */
export function principalOf(cfg: ResolvedExternalIssuer, claims: Readonly<Record<string, unknown>>, profile: readonly string[], credentialId: string): Principal | undefined {
  const sub = claimAt(claims, cfg.subject_claim);
  if (typeof sub !== 'string' || !sub || sub.length > MAX_SUB) return undefined;
  const client = cfg.client_claims.map((c) => claimAt(claims, c)).find((v): v is string => typeof v === 'string' && !!v);
  const kept: Record<string, string> = {};
  for (const [name, path] of Object.entries(cfg.claims)) {
    const v = claimAt(claims, path);
    if (typeof v === 'string' && v.length <= MAX_CLAIM) kept[name] = v;
  }
  const cnf = claims.cnf as { jkt?: unknown } | undefined;
  const exp = claims.exp;
  return Object.freeze({
    sub,
    kind: 'external' as const,
    issuer: cfg.issuer,
    scopes: new Set(grantedScopes(scopeValues(claims, cfg.scopes_from), cfg, profile)),
    credentialId,
    ...(client && { clientId: client }),
    ...(typeof exp === 'number' && { expiresAt: exp }),
    ...(typeof cnf?.jkt === 'string' && cnf.jkt && { jkt: cnf.jkt }),
    ...(Object.keys(kept).length && { claims: Object.freeze(kept) }),
  });
}
