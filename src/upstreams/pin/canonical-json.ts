// Canonical JSON and its digest, for pinning upstream definitions. Guarantees: two values
// that are equal as JSON (same members, any key order) have the same canonical text and
// digest, and values that differ anywhere have different texts; the text is RFC 8785's
// (JCS) for what JSON.parse produces — object keys sorted by UTF-16 code units, no
// whitespace, numbers and strings as JSON.stringify writes them (which JCS adopts);
// `undefined` members are left out as JSON.stringify leaves them. A value nested deeper
// than MAX_DEPTH, a non-finite number or a non-JSON value (function, bigint, symbol)
// throws a TypeError instead of overflowing the stack or hashing something lossy.

import { createHash } from 'node:crypto';

/** Deeper than any JSON Schema written by hand; bounds the recursion an upstream can ask for. */
export const MAX_DEPTH = 64;

export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

/** `sha256:` and the hex sha256 of the value's canonical JSON. */
export function digest(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}

function write(v: unknown, depth: number): string {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError('canonical JSON: a number that is not finite');
    return JSON.stringify(v);
  }
  if (typeof v !== 'object') throw new TypeError(`canonical JSON: a ${typeof v} is not JSON`);
  if (depth >= MAX_DEPTH) throw new TypeError(`canonical JSON: nested deeper than ${MAX_DEPTH}`);
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : write(x, depth + 1))).join(',')}]`;
  const o = v as Record<string, unknown>;
  // Default sort compares UTF-16 code units, as JCS asks.
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${write(o[k], depth + 1)}`).join(',')}}`;
}

/** The value with every object's keys in canonical order (for a file that diffs well when pretty-printed). */
export function sortedKeys<T>(v: T): T {
  if (Array.isArray(v)) return v.map((x) => sortedKeys(x)) as T;
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  return Object.fromEntries(Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => [k, sortedKeys(o[k])])) as T;
}
