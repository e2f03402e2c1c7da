// Which scopes an external issuer's token holds, from the values of its scope claims
// (external_issuers[].scopes_from), and which it could ever hold. Guarantees: one rule for
// both — a value that is a declared scope counts as itself when direct_scopes is on (the
// schema's default), a value scope_map names grants what it maps to, everything else is
// ignored, and the result never leaves the issuer's `scopes` (default: profile.scopes) nor
// profile.scopes — so grantedScopes(any values) ⊆ reachableScopes(), which is what `svc
// diff` (callers.ts) judges an issuer by and what the server (auth/external) grants.

import type { ExternalIssuer } from '../core/manifest-types.gen.js';

/** The parts of an issuer entry the scope rule reads. */
export type IssuerScopeRule = Pick<ExternalIssuer, 'direct_scopes' | 'scope_map' | 'scopes'>;

/** The scopes a token whose scope claims carry `values` holds, in profile order. */
export function grantedScopes(values: Iterable<string>, rule: IssuerScopeRule, profile: readonly string[]): string[] {
  const direct = rule.direct_scopes !== false;
  const got = new Set<string>();
  for (const v of values) {
    if (direct) got.add(v);
    const mapped = rule.scope_map && Object.hasOwn(rule.scope_map, v) ? rule.scope_map[v] : undefined;
    for (const s of mapped ?? []) got.add(s);
  }
  const cap = rule.scopes ? new Set(rule.scopes) : undefined;
  return profile.filter((s) => got.has(s) && (!cap || cap.has(s)));
}

/** Every scope some token of this issuer can hold: what grantedScopes() gives for every value at once. */
export function reachableScopes(rule: IssuerScopeRule, profile: readonly string[]): string[] {
  const values = [...(rule.direct_scopes !== false ? profile : []), ...Object.keys(rule.scope_map ?? {})];
  return grantedScopes(values, rule, profile);
}
