// What a backend called on the caller's behalf may use of the caller's own credential
// (this folder's token_exchange and upstream_login kinds): the token an external issuer vouched
// for (the subject_token of an RFC 8693 exchange) and, for a person who signed in through an
// identity provider, the way to that provider's access token. It sits here, beside its readers,
// and not in auth/: the auth layer (auth/external/issuers.ts, auth/oauth/server.ts) stands above
// outbound/ and writes it, outbound/ reads it, so both import it downward.
// Guarantees: it is kept beside the Principal object in a WeakMap —
// never a property of it — so it is never serialized (task records, audit events, log lines,
// JSON answers), never copied by a spread, and goes when the principal goes; the principal is
// the one the token caches (auth/external/issuers.ts, auth/oauth/verified-tokens.ts) hold with the token
// itself, so nothing here lives longer than the verified token already does; only the issuer
// that verified the token records it, at the moment it builds the principal.

import type { Principal } from '../core/types.js';

export interface CallerCredential {
  /** kind external: the access token the caller presented, exactly as it was verified. */
  readonly subjectToken?: string;
  /** kind oauth, signed in through an identity provider (oauth.login.mode upstream): the provider the person signed in at and their access token there, refreshed when due (rejects UPSTREAM_TOKEN_UNAVAILABLE). */
  readonly signIn?: { readonly name: string; accessToken(): Promise<string> };
}

const credentials = new WeakMap<Principal, CallerCredential>();

/** Record what the verifier of `p`'s token knows of it (call once, when building `p`). */
export function keepCallerCredential(p: Principal, c: CallerCredential): void {
  credentials.set(p, c);
}

/** The credential recorded for this principal object, if any. */
export function callerCredential(p: Principal): CallerCredential | undefined {
  return credentials.get(p);
}
