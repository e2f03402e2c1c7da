// The kind of a backend's outbound credential (an http backend's or an upstream's `auth`): the one
// thing of a credential that explain and /svc/explain show. Guarantees: a name only — static,
// client_credentials, token_exchange or upstream_login — never a field of the credential itself
// (no header name, token URL, client id or secret).

import type { OutboundAuth } from './manifest-types.gen.js';

export type CredentialKind = keyof OutboundAuth;

const KINDS: readonly CredentialKind[] = ['static', 'client_credentials', 'token_exchange', 'upstream_login'];

/** The kind `auth` declares (the schema allows exactly one), or undefined when there is no `auth`. */
export function credentialKind(auth: OutboundAuth | undefined): CredentialKind | undefined {
  return auth && KINDS.find((k) => auth[k] !== undefined);
}
