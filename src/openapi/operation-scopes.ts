// An operation's OAuth2 scopes, mapped to profile scopes by a source's `scope_map`.
// Guarantees: the operation's `security` (else the document's) is read; every scope any of
// its requirement alternatives names that the map knows contributes all its profile scopes
// (so the tool is never more open than the strictest alternative); scopes the map does not
// know contribute nothing; undefined when nothing was mapped (the caller then uses the
// source's `required_scopes`). The result has each scope once, in first-seen order; a security
// list is read once per scope_map however many operations share it (the caller must not mutate
// the result).

import type { Located } from './refs.js';

export function operationScopes(op: Located, root: Located, map: Record<string, string[]>): string[] | undefined {
  const own = (op.value as { security?: unknown }).security;
  const security = own ?? (root.value as { security?: unknown }).security;
  if (!Array.isArray(security)) return undefined;
  // The document's security (or one list every operation shares) is read once per scope_map, not once per operation.
  let byMap = known.get(security);
  if (!byMap) known.set(security, (byMap = new WeakMap()));
  if (byMap.has(map)) return byMap.get(map);
  const out = mapped(security, map);
  byMap.set(map, out);
  return out;
}

const known = new WeakMap<unknown[], WeakMap<Record<string, string[]>, string[] | undefined>>();

function mapped(security: unknown[], map: Record<string, string[]>): string[] | undefined {
  const out = new Set<string>();
  for (const requirement of security) {
    if (!requirement || typeof requirement !== 'object') continue;
    for (const scopes of Object.values(requirement as Record<string, unknown>)) {
      if (!Array.isArray(scopes)) continue;
      for (const s of scopes) if (typeof s === 'string' && Object.hasOwn(map, s)) for (const p of map[s]!) out.add(p);
    }
  }
  return out.size ? [...out] : undefined;
}
