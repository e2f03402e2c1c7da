// Who can reach what after an edit that they could not reach before: the verdict of `svc diff`
// and of the reloader's log line. Guarantees: every verdict comes from decideCall() of
// scopes.ts, the decision the runtime enforces; a caller is a class of credentials on the
// routes that admit it — the anonymous caller of each public route, every credential at all
// ("any caller holding S", for every set S of declared scopes and any subject, client and
// claims: it catches every edit of a capability's required scopes, patterns and bind), and
// each class the manifest names (callers.ts: tokens, OAuth accounts by client, ID-JAG
// providers, external issuers: it catches an edit of who holds what); a change is reported when some caller
// could make some call after the edit that it could not make before — a call being what
// runs, the arguments after the bind filled them in — so a removed capability, an added
// required scope, pattern or bind, a removed token is never a widening, and an argument a
// pattern stops checking is one. Exact over every string (reach-search.ts), conservative
// and saying so past MAX_COMBINATIONS. An authenticated caller could also call a public
// route without its credential, so what the anonymous caller reached before is no gain for it.

import { ANONYMOUS } from './principals.js';
import { describeClass, routesOf, type AccessPolicy } from './callers.js';
import {
  argVariable, asIs, capability, concrete, constantsOf, credentials, freeSources, holder, search, sameSet, sourceVariable,
  type Args, type Cap, type Credential, type Found,
} from './reach-search.js';
import type { Guard } from '../core/guard.js';
import { decideCall, render } from './scopes.js';

export { MAX_COMBINATIONS } from './reach-search.js';

export interface ReachChange {
  /** tool:NAME, resource:URI, prompt:NAME, route:PATH, svc:explain-as */
  capability: string;
  /** The caller class: `anonymous:/mcp`, `any` (every credential), or a class key of callers.ts (`token:ci`). */
  key: string;
  /** In words: `anonymous callers on /mcp`, `any caller holding notes.write`, `token ci`. */
  caller: string;
  /** One call that shows it: the scopes held (for `any`), its arguments (bound ones filled in), the credential values it depends on. */
  example: { scopes?: string[]; args?: Record<string, string>; credential?: Record<string, string> };
  /** Why, in words: the capability's required scopes before → after (or new, or unchanged). */
  why: string;
  /** What changed about this caller, in words, when something did: its route, its scopes or claims, that it is new, a credential it keeps. */
  detail?: string;
  /** false: too many combinations to decide exactly; reported to be safe. */
  exact: boolean;
}

export interface ReachDiff {
  widened: boolean;
  /** Calls some caller can make after the edit and could not before. */
  widenings: ReachChange[];
  /** Calls some caller could make before and cannot after (information; never fails a gate). */
  narrowings: ReachChange[];
}

export function diffReach(before: AccessPolicy, after: AccessPolicy): ReachDiff {
  const old: Side = { policy: before, creds: (k) => credentials(before.callers.get(k)) };
  // OAuth credentials issued under the old manifest stay valid with their scopes while their class exists.
  const now: Side = {
    policy: after,
    creds: (k) => {
      const c = after.callers.get(k);
      const was = before.callers.get(k);
      const kept = c?.persists && was && !sameSet(was.scopes, c.scopes) ? [{ scopes: new Set(was.scopes), cls: c, persisted: true }] : [];
      return [...credentials(c), ...kept];
    },
  };
  const widenings = changes(old, now, { old, now });
  const narrowings = changes(now, old, { old, now });
  return { widened: widenings.length > 0, widenings, narrowings };
}

/** One line per capability and why: `widened: tool:x: any caller holding a; token ci (scopes b → a b) — requires a b → a`. */
export function formatReach(d: ReachDiff): string[] {
  const lines = (verb: string, list: ReachChange[]) => {
    const groups = new Map<string, string[]>();
    for (const c of list) {
      const head = `${verb}: ${c.capability}`;
      const tail = ` — ${c.why}${c.exact ? '' : ' (not decided exactly: too many combinations to enumerate; reported to be safe)'}`;
      const k = head + '\u0000' + tail;
      const notes = [c.detail, ...exampleText(c)].filter(Boolean);
      groups.set(k, [...(groups.get(k) ?? []), c.caller + (notes.length ? ` (${notes.join('; ')})` : '')]);
    }
    return [...groups].map(([k, callers]) => {
      const [head, tail] = k.split('\u0000');
      return `${head}: ${callers.join('; ')}${tail}`;
    });
  };
  return [...lines('widened', d.widenings), ...lines('narrowed', d.narrowings)];
}

interface Side {
  policy: AccessPolicy;
  /** The credentials of a class: any subset of each one's scopes may be held. */
  creds(key: string): Credential[];
}


function changes(from: Side, to: Side, sides: { old: Side; now: Side }): ReachChange[] {
  const out: ReachChange[] = [];
  const universe = new Set([...from.policy.scopes, ...to.policy.scopes]);
  // What the classes name, and which classes the edit changed: the same for every capability.
  const named = new Set<string>(['anonymous']);
  for (const c of [...from.policy.callers.values(), ...to.policy.callers.values()]) {
    for (const v of [c.sub, c.clientId, ...Object.values(c.claims)]) if (typeof v === 'string') named.add(v);
  }
  const classes = [...new Set([...from.policy.callers.keys(), ...to.policy.callers.keys()])].sort().map((key) => {
    const credsTo = to.creds(key);
    const credsFrom = from.creds(key);
    return { key, credsTo, credsFrom, unchanged: credsFrom.length === credsTo.length && credsFrom.every((c, i) => sameCredential(c, credsTo[i]!)) };
  });
  const allUnchanged = classes.every((c) => c.unchanged);
  for (const id of [...to.policy.capabilities.keys()].sort()) {
    const g = from.policy.capabilities.get(id);
    const routes = routesOf(id);
    const same = !!g && sameGuard(g, to.policy.capabilities.get(id)!);
    const pubFrom = !!g && routes.some((r) => from.policy.publicRoutes.has(r));
    const protFrom = !!g && routes.some((r) => from.policy.protectedRoutes.has(r));
    const protTo = routes.some((r) => to.policy.protectedRoutes.has(r));
    // Nothing about this capability changed for anyone: the common case of a reload.
    if (same && allUnchanged && (protFrom || !protTo) && routes.every((r) => !to.policy.publicRoutes.has(r) || from.policy.publicRoutes.has(r))) continue;
    const cap = capability(id, g, to.policy.capabilities.get(id)!, universe, named);
    // A call is what runs: the arguments after the bind filled them in. Before, the same call was
    // made by giving those arguments as they are (a bound one given equal to its value).
    const anonFrom = (call: Args) => pubFrom && asIs(cap.from!, ANONYMOUS, call);
    const why = reason(id, sides);

    // The anonymous caller of each public route.
    for (const r of routes) {
      if (!to.policy.publicRoutes.has(r)) continue;
      const was = !!cap.from && from.policy.publicRoutes.has(r);
      if (was && same) continue;
      const found = search(cap.args.map((a) => argVariable(cap, a, [])), (_v, given) => {
        const d = decideCall(cap.to!, ANONYMOUS, given);
        if (!d.ok) return false;
        const call = d.args ?? given;
        return was && asIs(cap.from!, ANONYMOUS, call) ? false : { call };
      });
      if (!found) continue;
      const route = routeState(sides.old.policy, r) === routeState(sides.now.policy, r) ? [] : [`route ${r}: ${routeState(sides.old.policy, r)} → ${routeState(sides.now.policy, r)}`];
      out.push(change(cap, `anonymous:${r}`, `anonymous callers on ${r}`, found, why, route));
    }
    if (!protTo) continue;
    const [servedOld, servedNow] = [protectedList(sides.old.policy, id), protectedList(sides.now.policy, id)];
    const admission = protFrom || servedOld === servedNow ? [] : [`protected routes serving it: ${servedOld} → ${servedNow}`];

    // Every credential at all: for each call, the least set of scopes the new guard admits it with.
    if (!(same && protFrom)) {
      const vars = [...cap.args.map((a) => argVariable(cap, a, [])), ...[...cap.sources.keys()].map((s) => sourceVariable(cap, s, true))];
      const found = search(vars, (val, given) => {
        const full = decideCall(cap.to!, holder(val, universe, cap), given);
        if (!full.ok) return false;
        const call = full.args ?? given;
        const least = new Set([...cap.to!.required, ...(cap.to!.patterns ?? []).map((p) => render(p, (a) => call[a])!)]);
        const p = holder(val, least, cap);
        if (!decideCall(cap.to!, p, given).ok) return false; // the decision only tests membership: cannot happen
        if ((protFrom && asIs(cap.from!, p, call)) || anonFrom(call)) return false;
        return { call, scopes: [...least].sort() };
      });
      if (found) {
        const held = found.scopes ?? [];
        out.push(change(cap, 'any', held.length ? `any caller holding ${held.join(' ')}` : 'any authenticated caller', found, why, admission));
      }
    }

    // Each class the manifest names.
    for (const { key, credsTo, credsFrom, unchanged } of classes) {
      if (!credsTo.length || (same && protFrom && unchanged)) continue;
      const cls = credsTo[0]!.cls;
      const constants = constantsOf([...credsFrom, ...credsTo]);
      const vars = [...cap.args.map((a) => argVariable(cap, a, constants)), ...freeSources(cap, [...credsFrom, ...credsTo])];
      let kept: Credential | undefined;
      const found = search(vars, (val, given) => {
        const decided = credsTo.map((c) => [c, decideCall(cap.to!, concrete(c, val, cap), given)] as const).filter(([, d]) => d.ok);
        if (!decided.length) return false;
        const d = decided[0]![1] as { ok: true; args?: Args };
        const call = d.args ?? given;
        if (protFrom && credsFrom.some((c) => asIs(cap.from!, concrete(c, val, cap), call))) return false;
        if (anonFrom(call)) return false;
        kept = decided.every(([c]) => c.persisted) ? decided[0]![0] : undefined;
        return { call };
      });
      if (!found) continue;
      const facts = [...admission, ...classChange(key, sides)];
      if (kept) facts.push(`a credential issued before the edit keeps scopes ${[...kept.scopes].join(' ')}`);
      out.push(change(cap, key, cls.label, found, why, facts));
    }
  }
  return out;
}

function change(cap: Cap, key: string, caller: string, f: Found, why: string, facts: string[]): ReachChange {
  const credential: Record<string, string> = {};
  for (const [name, v] of f.val) if (!name.startsWith('arg:') && v !== undefined) credential[name] = v;
  const args = Object.fromEntries(Object.entries(f.call).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
  const example = {
    ...(f.scopes && { scopes: f.scopes }),
    ...(Object.keys(args).length && { args }),
    ...(Object.keys(credential).length && { credential }),
  };
  return { capability: cap.id, key, caller, example, why, ...(facts.length && { detail: facts.join('; ') }), exact: f.exact };
}

function exampleText(c: ReachChange): string[] {
  const out: string[] = [];
  if (c.example.credential) out.push(`whose credential carries ${Object.entries(c.example.credential).map(([k, v]) => `${k.slice('principal.'.length)}=${v}`).join(' ')}`);
  if (c.example.args) out.push(`calling with ${Object.entries(c.example.args).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  return out;
}

// ——— sameness and words ———

function sameGuard(a: Guard, b: Guard): boolean {
  if (a === b) return true;
  const sources = (g: Guard) => (g.patterns ?? []).map((p) => p.source);
  const binds = (g: Guard) => (g.bind ?? []).map(([x, s]) => `${x}=${s}`);
  return sameSet(a.required, b.required) && (a.patterns === b.patterns || sameSet(sources(a), sources(b))) && (a.bind === b.bind || sameSet(binds(a), binds(b)));
}

function sameCredential(a: Credential, b: Credential): boolean {
  return !!a.persisted === !!b.persisted && sameSet([...a.scopes], [...b.scopes]) && a.cls.sub === b.cls.sub && a.cls.clientId === b.cls.clientId
    && sameSet(Object.entries(a.cls.claims).map(([k, v]) => `${k}=${v}`), Object.entries(b.cls.claims).map(([k, v]) => `${k}=${v}`)) && sameSet(a.cls.anyClaims, b.cls.anyClaims);
}

/** A guard in words: `notes.read notes.write`, `tenant:{{tenant}}.read, tenant bound to principal.claims.tenant`, `no scope`. */
function describeGuard(g: Guard): string {
  const scopes = [...g.required, ...(g.patterns ?? []).map((p) => p.source)].sort();
  const bind = (g.bind ?? []).map(([a, s]) => `${a} bound to ${s}`).sort();
  return [scopes.length ? scopes.join(' ') : 'no scope', ...bind].join(', ');
}

function reason(id: string, sides: { old: Side; now: Side }): string {
  const a = sides.old.policy.capabilities.get(id);
  const b = sides.now.policy.capabilities.get(id);
  const guard = !a ? `new; requires ${describeGuard(b!)}` : !b ? `removed; required ${describeGuard(a)}`
    : sameGuard(a, b) ? `requires ${describeGuard(b)}` : `requires ${describeGuard(a)} → ${describeGuard(b)}`;
  return guard;
}

function classChange(key: string, sides: { old: Side; now: Side }): string[] {
  const a = sides.old.policy.callers.get(key);
  const b = sides.now.policy.callers.get(key);
  if (!a && b) return [`new: ${describeClass(b)}`];
  if (a && !b) return ['gone'];
  const x = describeClass(a!).split('; ');
  const y = describeClass(b!).split('; ');
  const field = (list: string[], name: string) => list.find((f) => f.startsWith(name))?.replace(/^(scopes up to|scopes|claims) /, '') ?? '(none)';
  return ['scopes', 'claims'].flatMap((name) => {
    const [before, after] = [field(x, name), field(y, name)];
    return before === after ? [] : [`${name} ${before} → ${after}`];
  });
}

function routeState(p: AccessPolicy, r: string): string {
  return p.publicRoutes.has(r) ? 'public' : p.protectedRoutes.has(r) ? 'protected' : 'not served';
}

function protectedList(p: AccessPolicy, id: string): string {
  return routesOf(id).filter((r) => p.protectedRoutes.has(r)).join(' ') || 'none';
}

