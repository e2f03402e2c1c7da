// The principals a manifest names, built from its text alone (no token value is read):
// the main bearer token (auth.subject) and each auth.tokens[] entry as static principals,
// each oauth.users[] entry as an OAuth user holding every scope it may grant. Guarantees:
// the scopes and claims are the ones the server gives the same credential (TokenTable,
// accounts.ts), so `svc diff` and `svc explain --token/--subject` judge what the server
// would judge.

import type { Principal } from '../core/types.js';
import type { SvcManifest } from '../core/manifest-types.gen.js';

/** The caller on a public route: authenticated by nothing, holding no scope. */
export const ANONYMOUS: Principal = Object.freeze({ sub: 'anonymous', scopes: new Set<string>(), kind: 'anonymous' });

/** Token name → principal (static tokens of auth). */
export function tokenPrincipals(m: SvcManifest): Map<string, Principal> {
  const out = new Map<string, Principal>();
  const all = profileScopeNames(m);
  const a = m.auth;
  if (!a) return out;
  if (a.token || a.token_file || a.generate_if_unset) out.set(a.subject ?? 'operator', staticPrincipal(a.subject ?? 'operator', a.scopes ?? all, a.claims));
  for (const t of a.tokens ?? []) out.set(t.name, staticPrincipal(t.name, t.scopes, t.claims));
  return out;
}

/** The OAuth user `username` with every scope it may grant (oauth.users[].scopes, default profile.scopes), or undefined. */
export function userPrincipal(m: SvcManifest, username: string): Principal | undefined {
  const all = profileScopeNames(m);
  const u = m.oauth?.users?.find((x) => x.username === username);
  if (!u) return undefined;
  const scopes = (u.scopes ?? all).filter((s) => all.includes(s));
  return Object.freeze({ sub: u.username, scopes: new Set(scopes), kind: 'oauth', ...(u.claims && { claims: Object.freeze({ ...u.claims }) }) });
}

export function staticPrincipal(sub: string, scopes: readonly string[], claims?: Readonly<Record<string, string>>): Principal {
  return Object.freeze({ sub, scopes: new Set(scopes), kind: 'static', credentialId: sub, ...(claims && { claims: Object.freeze({ ...claims }) }) });
}

function profileScopeNames(m: SvcManifest): string[] {
  return (m.profile?.scopes ?? []).map((s) => (typeof s === 'string' ? s : s.name));
}
