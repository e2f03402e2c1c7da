// How providers store oidc-provider entries. Guarantees: an entry is keyed by the
// SHA-256 of its id and its stored payload never holds the id (`jti`) nor a session
// cookie value (an interaction's `session.cookie` is stored hashed; oidc-provider 9
// never reads it back), so a copy of the store yields no usable token, code,
// interaction or session cookie; find(id) puts the id back. Entries found by uid or
// user code come back without `jti`.

import { hash } from 'node:crypto';
import type { AdapterPayload } from '../../../core/oauth-provider.js';

export function storageKey(id: string): string {
  return hash('sha256', id, 'base64url');
}

/** The payload as stored: JSON without `jti`. */
export function encodePayload(payload: AdapterPayload): string {
  const { jti: _jti, ...rest } = payload;
  if (rest.session?.cookie) rest.session = { ...rest.session, cookie: storageKey(rest.session.cookie) };
  return JSON.stringify(rest);
}

export function decodePayload(json: string, id: string | undefined, consumedAt: number | null | undefined): AdapterPayload {
  const payload = JSON.parse(json) as AdapterPayload;
  if (id !== undefined) payload.jti = id;
  if (consumedAt) payload.consumed = consumedAt;
  return payload;
}

/** Epoch milliseconds at which an entry upserted now with `expiresIn` seconds expires. */
export function expiryOf(expiresIn: number | undefined): number | null {
  return typeof expiresIn === 'number' && expiresIn > 0 ? Date.now() + expiresIn * 1000 : null;
}
