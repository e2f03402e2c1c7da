// Pinning: which of an upstream's listed definitions may be served, given the lock. Pure: no
// I/O, no clock. Guarantees: a definition is served only when the lock holds one under the same
// kind and key whose digest equals its own — exactly what the operator accepted, member for
// member of what is pinned (pinned-definitions.ts); everything else listed is withheld with
// one reason: `changed` (the lock holds another digest: a rug pull until accepted), `new`
// (not in the lock: a new tool's description reaches the model the moment it is listed, so it
// is as much a vector as a changed one), `unpinned` (the lock has no entry for this upstream
// at all: nothing was ever accepted, so nothing is trusted), `duplicate` (one key listed twice:
// which one a call reaches is the upstream's choice) or `invalid` (no usable key, or content
// that cannot be put in canonical form). A pinned definition the upstream no longer lists
// simply goes (`removed`, for reports). Served definitions keep the upstream's order and
// objects; withheld ones come in list order, kind by kind, one entry per kind and key.

import type { Lock, UpstreamLock } from './lock-file.js';
import { KINDS, keyOf, pinDefinition, type KindRule, type ListName, type Listing, type PinKind, type Pinned, type WireDefinition } from './pinned-definitions.js';

export type WithheldReason = 'changed' | 'new' | 'unpinned' | 'duplicate' | 'invalid';

export interface Withheld {
  readonly kind: PinKind;
  readonly name: string;
  readonly reason: WithheldReason;
  /** The digest of what the upstream lists now (absent when it cannot be computed). */
  readonly digest?: string;
  /** The digest the lock holds (reason `changed`). */
  readonly pinned_digest?: string;
}

export interface PinResult<L extends Listing = Listing> {
  /** The listing with only what may be served (lists the input had, in its order, its objects). */
  readonly served: L;
  readonly withheld: readonly Withheld[];
  /** Accepted definitions the upstream no longer lists: not an error, they are simply not served. */
  readonly removed: readonly { readonly kind: PinKind; readonly name: string }[];
}

type Classified = { ok: true; key: string; def: WireDefinition; pinned: Pinned } | { ok: false; problem: Withheld };

/** Each listed definition of one kind, pinned, or the reason it cannot be (one problem per key). */
function classify(rule: KindRule, defs: readonly WireDefinition[]): Classified[] {
  const seen = new Map<string, number>();
  for (const d of defs) {
    const k = keyOf(rule, d);
    if (k !== undefined) seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  const reported = new Set<string>();
  const out: Classified[] = [];
  for (const def of defs) {
    const key = keyOf(rule, def);
    if (key === undefined) {
      out.push({ ok: false, problem: { kind: rule.kind, name: String(def[rule.key] ?? ''), reason: 'invalid' } });
    } else if (seen.get(key)! > 1) {
      if (!reported.has(key)) out.push({ ok: false, problem: { kind: rule.kind, name: key, reason: 'duplicate' } });
      reported.add(key);
    } else {
      try {
        out.push({ ok: true, key, def, pinned: pinDefinition(rule, def) });
      } catch {
        out.push({ ok: false, problem: { kind: rule.kind, name: key, reason: 'invalid' } });
      }
    }
  }
  return out;
}

export function pin<L extends Listing>(upstream: string, listed: L, lock: Lock | undefined): PinResult<L> {
  const accepted = lock && Object.hasOwn(lock.upstreams, upstream) ? lock.upstreams[upstream] : undefined;
  const served: { -readonly [L in ListName]?: WireDefinition[] } = {};
  const withheld: Withheld[] = [];
  const removed: { kind: PinKind; name: string }[] = [];
  for (const rule of KINDS) {
    const defs = listed[rule.list];
    const pinnedList = accepted?.[rule.list] ?? {};
    const listedKeys = new Set<string>();
    if (defs) {
      const ok: WireDefinition[] = (served[rule.list] = []);
      for (const c of classify(rule, defs)) {
        if (!c.ok) {
          withheld.push(c.problem);
          if (c.problem.reason === 'duplicate') listedKeys.add(c.problem.name);
          continue;
        }
        listedKeys.add(c.key);
        const prev = Object.hasOwn(pinnedList, c.key) ? pinnedList[c.key] : undefined;
        const base = { kind: rule.kind, name: c.key, digest: c.pinned.digest };
        if (!accepted) withheld.push({ ...base, reason: 'unpinned' });
        else if (!prev) withheld.push({ ...base, reason: 'new' });
        else if (prev.digest !== c.pinned.digest) withheld.push({ ...base, reason: 'changed', pinned_digest: prev.digest });
        else ok.push(c.def);
      }
    }
    for (const key of Object.keys(pinnedList)) if (!listedKeys.has(key)) removed.push({ kind: rule.kind, name: key });
  }
  return { served: { ...listed, ...served }, withheld, removed };
}

/** What `upstreams accept` records of a listing: every definition that can be pinned, and what cannot (duplicates, invalid). */
export function lockEntryFor(listed: Listing): { entry: UpstreamLock; skipped: Withheld[] } {
  const entry: { -readonly [L in ListName]?: Record<string, Pinned> } = {};
  const skipped: Withheld[] = [];
  for (const rule of KINDS) {
    const defs = listed[rule.list];
    if (!defs) continue;
    const pinned: [string, Pinned][] = [];
    for (const c of classify(rule, defs)) {
      if (c.ok) pinned.push([c.key, c.pinned]);
      else skipped.push(c.problem);
    }
    entry[rule.list] = Object.fromEntries(pinned);
  }
  return { entry, skipped };
}
