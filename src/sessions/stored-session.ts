// How the SQL session stores (postgres-store.ts, sqlite-store.ts) lay a record and a signal out.
// Guarantees: a record round-trips through encode/decode as JSON, its expiry read from its own
// column (touch() moves only that); a change is applied item by item (changed()); the owner key (NUL separators, which PostgreSQL TEXT refuses)
// is stored as base64url.

import type { SessionChange, SessionRecord } from './session-store.js';

export function encodeRecord(r: SessionRecord): string {
  return JSON.stringify(r);
}

export function decodeRecord(text: string, expiresAt: number | string): SessionRecord {
  return { ...(JSON.parse(text) as SessionRecord), expiresAt: Number(expiresAt) };
}

/** `r` with the GET stream `by` marked at `at`, or (`at` 0) its own mark cleared (SessionStore.streamMark()). */
export function marked(r: SessionRecord, by: string, at: number): SessionRecord {
  if (at) return { ...r, stream: { by, at } };
  if (r.stream?.by !== by) return r;
  const { stream: _gone, ...rest } = r;
  return rest;
}

/** The stored record `text` with `change` applied (see changed()). */
export function applyChange(text: string, change: SessionChange): string {
  return JSON.stringify(changed(JSON.parse(text) as SessionRecord, change));
}

/** `r` with `change` applied: its log level, then each list without what it removes and with what it adds (each item once, in order). */
export function changed(r: SessionRecord, change: SessionChange): SessionRecord {
  const next = { ...r, ...(change.logLevel !== undefined && { logLevel: change.logLevel }) };
  for (const k of ['subscriptions', 'loadedTools', 'tasks'] as const) {
    const add = change.add?.[k];
    const remove = change.remove?.[k];
    if (!add?.length && !remove?.length) continue;
    const gone = new Set(remove);
    const list = r[k].filter((x) => !gone.has(x));
    for (const x of add ?? []) if (!list.includes(x)) list.push(x);
    next[k] = list;
  }
  return next;
}
