// How the SQL session stores (postgres-store.ts, sqlite-store.ts) lay a record and a signal out.
// Guarantees: a record round-trips through encode/decode as JSON, its expiry read from its own
// column (touch() moves only that); the owner key (NUL separators, which PostgreSQL TEXT refuses)
// is stored as base64url.

import type { SessionChange, SessionRecord } from './session-store.js';

export function ownerColumn(owner: string): string {
  return Buffer.from(owner, 'utf8').toString('base64url');
}

export function encodeRecord(r: SessionRecord): string {
  return JSON.stringify(r);
}

export function decodeRecord(text: string, expiresAt: number | string): SessionRecord {
  return { ...(JSON.parse(text) as SessionRecord), expiresAt: Number(expiresAt) };
}

/** The record with `change` applied (only the fields a SessionChange may carry). */
export function applyChange(text: string, change: SessionChange): string {
  const r = JSON.parse(text) as Record<string, unknown>;
  for (const k of ['logLevel', 'subscriptions', 'loadedTools', 'tasks'] as const) if (change[k] !== undefined) r[k] = change[k];
  return JSON.stringify(r);
}
