// Who a caller is, as one key. Guarantees: two principals get the same key exactly when they are
// the same caller — the same kind of credential (static token, the built-in OAuth server, an external
// issuer, anonymous), vouched for by the same issuer (an external issuer's URL; for the built-in server,
// the identity provider a person signed in through or the enterprise IdP of an ID-JAG, else the server
// itself), with the same subject, and — with `client` (the default) — through the same OAuth client;
// a static token named `ci` and an external issuer's subject `ci` never share a key. Everything that
// owns state for a caller keys it by this: tasks, 2025 sessions, server→client request state, stored
// results, quotas (which count a person across its clients: `client: false`). The key is computed once
// per principal object (principals are immutable; the token caches hand out the same object).

import type { Principal } from './types.js';

const withClient = new WeakMap<Principal, string>();
const withoutClient = new WeakMap<Principal, string>();

/** The caller's key: JSON of [kind, issuer, subject(, client)] (unambiguous whatever the values hold). */
export function principalKey(p: Principal, opts?: { client: boolean }): string {
  const client = opts?.client ?? true;
  const cache = client ? withClient : withoutClient;
  let key = cache.get(p);
  if (key === undefined) {
    const parts: (string | null)[] = [p.kind, issuerOf(p), p.sub];
    if (client) parts.push(p.clientId ?? null);
    key = JSON.stringify(parts);
    cache.set(p, key);
  }
  return key;
}

/** The issuer that vouched for the subject, qualified by how (null: the server itself — a static token, a local user). */
function issuerOf(p: Principal): string | null {
  if (p.kind === 'external') return p.issuer ?? null;
  if (p.signedInAt !== undefined) return `signin:${p.signedInAt}`;
  if (p.idp !== undefined) return `idp:${p.idp}`;
  return null;
}

/** A principal key as a TEXT column takes it (PostgreSQL refuses its NUL separators): base64url, one per key. */
export function principalKeyColumn(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}
