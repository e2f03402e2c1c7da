// Who can be approved: the auto-mode subject, or the manifest's users (the people who sign in
// through an identity provider are not accounts here: auth/signin/grants.ts knows them by their grant). Guarantees: a
// subject's grantable scopes are a subset of profile.scopes; password checks take the
// same scrypt work whether or not the username exists; in upstream mode no subject is known.

import type { ResolvedOAuth } from '../../core/config.js';
import { verifyPassword } from './password.js';

export interface Accounts {
  has(sub: string): boolean;
  /** The scopes this subject may grant (always within profile.scopes). */
  scopes(sub: string): ReadonlySet<string>;
  /** The subject's claims (oauth.users[].claims), for tools that bind arguments to them. */
  claims(sub: string): Readonly<Record<string, string>> | undefined;
  /** The subject for these credentials, or undefined. */
  verify(username: string, password: string): Promise<string | undefined>;
}

// A well-formed hash of nothing anyone knows, checked when the username is unknown.
const DECOY = 'scrypt$32768$8$1$QnVyblRoZURlY295U2FsdA$ZGVjb3ktaGFzaC1uZXZlci1tYXRjaGVzLWFueXRoaW5nISE';

export function createAccounts(oauth: ResolvedOAuth, profileScopes: readonly string[]): Accounts {
  const all = new Set(profileScopes);
  if (oauth.login.mode === 'auto') {
    const subject = oauth.login.subject;
    return {
      has: (sub) => sub === subject,
      scopes: () => all,
      claims: () => undefined,
      verify: async () => undefined,
    };
  }
  if (oauth.login.mode === 'upstream') {
    return { has: () => false, scopes: () => new Set(), claims: () => undefined, verify: async () => undefined };
  }
  const users = new Map((oauth.users ?? []).map((u) => [u.username, {
    hash: u.password_hash,
    scopes: new Set((u.scopes ?? profileScopes).filter((s) => all.has(s))),
    claims: u.claims && Object.freeze({ ...u.claims }),
  }]));
  return {
    has: (sub) => users.has(sub),
    scopes: (sub) => users.get(sub)?.scopes ?? new Set(),
    claims: (sub) => users.get(sub)?.claims,
    async verify(username, password) {
      const u = users.get(username);
      const ok = await verifyPassword(password, u?.hash ?? DECOY);
      return u && ok ? username : undefined;
    },
  };
}
