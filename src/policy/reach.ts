// Who can reach what after an edit that they could not reach before: the verdict of `svc diff`
// and of the reloader's log line. Guarantees: every verdict comes from decideCall() of
// scopes.ts, the decision the runtime enforces; a caller is a class of credentials
// (callers.ts) on the routes that admit it — the anonymous caller of each public route,
// every credential at all ("any caller holding S", for every set S of declared scopes and
// any subject, client and claims: it catches every edit of a capability's required scopes,
// patterns and bind), and each class the manifest names (tokens, OAuth accounts by client,
// ID-JAG providers: it catches an edit of who holds what); a change is reported when some
// caller could make some call after the edit that it could not make before — a call being
// what runs, the arguments after the bind filled them in (a removed capability, an added
// required scope, pattern or bind, a removed token is never a widening; an argument a
// pattern stops checking is one: its other values become callable).
// Exact: the arguments and the values a caller chooses are enumerated over a finite set that
// stands for every string — the values the patterns take on the declared scopes, the
// class's own values and two values equal to none of them — which is enough because the
// decision only renders patterns, tests scope membership and compares a bound argument with
// one credential value; when that set is too large to enumerate, a changed capability is
// reported as widened, saying so. An authenticated caller could also call a public route
// without its credential, so what the anonymous caller reached before is not a gain for it.

import { ANONYMOUS } from '../auth/gate.js';
import type { Principal } from '../core/types.js';
import { ANY, describeClass, routesOf, type AccessPolicy, type CallerClass } from './callers.js';
import { decideCall, render, SEGMENT, type Guard, type ScopePattern } from './scopes.js';

export interface ReachChange {
  /** tool:NAME, resource:URI, prompt:NAME, route:PATH, svc:explain-as */
  capability: string;
  /** The caller class: `anonymous:/mcp`, `any` (every credential), or a class key of callers.ts (`token:ci`). */
  key: string;
  /** In words: `anonymous callers on /mcp`, `any caller holding notes.write`, `token ci`. */
  caller: string;
  /** One call that shows it: the scopes held (for `any`), its arguments (bound ones filled in), the credential values it depends on. */
  example: { scopes?: string[]; args?: Record<string, string>; credential?: Record<string, string> };
  /** Why, in words: the required scopes before → after, the route, what changed about the caller. */
  why: string;
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

/** Beyond this many combinations of arguments and credential values per capability and caller, judge conservatively. */
export const MAX_COMBINATIONS = 100_000;

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

/** The changes, one line each: `widened: tool:x: any caller holding a — requires a b → a`. */
export function formatReach(d: ReachDiff): string[] {
  const lines = (verb: string, list: ReachChange[]) => {
    const groups = new Map<string, string[]>();
    for (const c of list) {
      const head = `${verb}: ${c.capability}`;
      const tail = ` — ${c.why}${c.exact ? '' : ' (not decided exactly: too many combinations to enumerate; reported to be safe)'}`;
      const k = head + '\u0000' + tail;
      groups.set(k, [...(groups.get(k) ?? []), c.caller + exampleText(c)]);
    }
    return [...groups].map(([k, callers]) => {
      const [head, tail] = k.split('\u0000');
      return `${head}: ${callers.join('; ')}${tail}`;
    });
  };
  return [...lines('widened', d.widenings), ...lines('narrowed', d.narrowings)];
}

interface Credential {
  scopes: ReadonlySet<string>;
  cls: CallerClass;
  persisted?: boolean;
}

interface Side {
  policy: AccessPolicy;
  /** The credentials of a class: any subset of each one's scopes may be held. */
  creds(key: string): Credential[];
}

const credentials = (c: CallerClass | undefined): Credential[] => (c ? [{ scopes: new Set(c.scopes), cls: c }] : []);

type Value = string | undefined;
interface Variable {
  /** `arg:NAME` or a bind source (principal.sub, principal.client_id, principal.claims.NAME). */
  name: string;
  values: readonly Value[];
}
type Valuation = ReadonlyMap<string, Value>;

/** One capability's two guards, and what both sides admit on its routes. */
interface Cap {
  id: string;
  from?: Guard;
  to?: Guard;
  /** Candidate values of each argument: what it takes in the guards' patterns on the declared scopes. */
  candidates: ReadonlyMap<string, ReadonlySet<string>>;
  args: readonly string[];
  /** Bind sources either guard reads, each with the arguments bound to it. */
  sources: ReadonlyMap<string, readonly string[]>;
  fresh: readonly [string, string];
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
    const why = (extra: string[]) => reason(id, sides, extra);

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
      out.push(change(cap, `anonymous:${r}`, `anonymous callers on ${r}`, found, why(route)));
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
        out.push(change(cap, 'any', held.length ? `any caller holding ${held.join(' ')}` : 'any authenticated caller', found, why(admission)));
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
      out.push(change(cap, key, cls.label, found, why(facts)));
    }
  }
  return out;
}

type Args = Record<string, unknown>;

interface Found {
  val: Valuation;
  /** The call that runs (bound arguments filled in). */
  call: Args;
  scopes?: string[];
  exact: boolean;
}

/** This guard allows this call with these arguments as they are (no bound argument left to fill in). */
function asIs(g: Guard, p: Principal, call: Args): boolean {
  const d = decideCall(g, p, call);
  return d.ok && !d.args;
}

/**
 * The first valuation of the variables (arguments `arg:NAME` as given, bind sources) for which `gain`
 * finds a call (and the scopes a witness holds), or undefined; over MAX_COMBINATIONS, a conservative answer (exact: false).
 */
function search(vars: readonly Variable[], gain: (val: Valuation, given: Record<string, string>) => false | { call: Args; scopes?: string[] }): Found | undefined {
  const total = vars.reduce((n, v) => n * v.values.length, 1);
  if (total > MAX_COMBINATIONS) return { val: new Map(), call: {}, exact: false };
  const at = vars.map(() => 0);
  for (let n = 0; n < total; n++) {
    const val = new Map<string, Value>();
    const args: Record<string, string> = {};
    vars.forEach((v, i) => {
      const x = v.values[at[i]!];
      val.set(v.name, x);
      if (v.name.startsWith('arg:') && x !== undefined) args[v.name.slice(4)] = x;
    });
    const g = gain(val, args);
    if (g) return { val, call: g.call, exact: true, ...(g.scopes && { scopes: g.scopes }) };
    for (let i = 0; i < at.length; i++) {
      if (++at[i]! < vars[i]!.values.length) break;
      at[i] = 0;
    }
  }
  return undefined;
}

function change(cap: Cap, key: string, caller: string, f: Found, why: string): ReachChange {
  const credential: Record<string, string> = {};
  for (const [name, v] of f.val) if (!name.startsWith('arg:') && v !== undefined) credential[name] = v;
  const args = Object.fromEntries(Object.entries(f.call).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
  const example = {
    ...(f.scopes && { scopes: f.scopes }),
    ...(Object.keys(args).length && { args }),
    ...(Object.keys(credential).length && { credential }),
  };
  return { capability: cap.id, key, caller, example, why, exact: f.exact };
}

function exampleText(c: ReachChange): string {
  const parts: string[] = [];
  if (c.example.credential) parts.push(`whose credential carries ${Object.entries(c.example.credential).map(([k, v]) => `${k.slice('principal.'.length)}=${v}`).join(' ')}`);
  if (c.example.args) parts.push(`calling with ${Object.entries(c.example.args).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

// ——— the capability's variables and their values ———

function capability(id: string, from: Guard | undefined, to: Guard, universe: ReadonlySet<string>, named: ReadonlySet<string>): Cap {
  const guards = [from, to].filter((g): g is Guard => !!g);
  const candidates = new Map<string, Set<string>>();
  const args = new Set<string>();
  const sources = new Map<string, string[]>();
  for (const g of guards) {
    for (const p of g.patterns ?? []) {
      for (const a of p.args) {
        args.add(a);
        if (!candidates.has(a)) candidates.set(a, new Set());
      }
      for (const s of universe) for (const [a, v] of matches(p, s)) candidates.get(a)!.add(v);
    }
    for (const [a, src] of g.bind ?? []) {
      args.add(a);
      const bound = sources.get(src) ?? [];
      if (!bound.includes(a)) bound.push(a);
      sources.set(src, bound);
    }
  }
  // Two values equal to nothing a guard or a class names: they stand for every other string.
  const taken = new Set<string>([...named, ...[...candidates.values()].flatMap((s) => [...s])]);
  const fresh = (n: number) => {
    let v = `(other value ${n})`;
    while (taken.has(v)) v += '*';
    return v;
  };
  return { id, from, to, candidates, args: [...args].sort(), sources, fresh: [fresh(1), fresh(2)] };
}

/** An argument's values: what it takes in the patterns, the class's own values, two other values, and none. */
function argVariable(cap: Cap, arg: string, constants: readonly string[]): Variable {
  return { name: `arg:${arg}`, values: unique([...(cap.candidates.get(arg) ?? []), ...constants, 'anonymous', ...cap.fresh, undefined]) };
}

/** A bind source's values: what the arguments bound to it take in the patterns, two other values, and (claims, client_id) none. */
function sourceVariable(cap: Cap, source: string, mayBeAbsent: boolean): Variable {
  const cands = (cap.sources.get(source) ?? []).flatMap((a) => [...(cap.candidates.get(a) ?? [])]);
  const absent = mayBeAbsent && source !== 'principal.sub';
  return { name: source, values: unique([...cands, ...cap.fresh, ...(absent ? [undefined] : [])]) };
}

/** The bind sources a named class leaves to the caller (an ID-JAG subject and claims, a self-registered client's id). */
function freeSources(cap: Cap, creds: readonly Credential[]): Variable[] {
  const out: Variable[] = [];
  for (const source of cap.sources.keys()) {
    const free = creds.some(({ cls }) => (source === 'principal.sub' ? cls.sub === ANY
      : source === 'principal.client_id' ? cls.clientId === ANY
        : source.startsWith('principal.claims.') && cls.anyClaims.includes(source.slice('principal.claims.'.length))));
    if (free) out.push(sourceVariable(cap, source, source !== 'principal.client_id'));
  }
  return out;
}

function constantsOf(creds: readonly Credential[]): string[] {
  return unique(creds.flatMap(({ cls }) => [cls.sub, cls.clientId, ...Object.values(cls.claims)].filter((v): v is string => typeof v === 'string'))) as string[];
}

/** Every way `pattern` renders `scope`: [argument, value] pairs (each value one scope segment). */
function matches(pattern: ScopePattern, scope: string): [string, string][] {
  if (!pattern.regex.test(scope)) return [];
  const out: [string, string][] = [];
  const walk = (part: number, pos: number, got: [string, string][]) => {
    if (part === pattern.parts.length) {
      if (pos === scope.length) out.push(...got);
      return;
    }
    const text = pattern.parts[part]!;
    if (part % 2 === 0) {
      if (scope.startsWith(text, pos)) walk(part + 1, pos + text.length, got);
      return;
    }
    for (let end = pos + 1; end <= Math.min(scope.length, pos + 64); end++) {
      const v = scope.slice(pos, end);
      if (!SEGMENT.test(v)) break;
      walk(part + 1, end, [...got, [text, v]]);
    }
  };
  walk(0, 0, []);
  return out;
}

// ——— principals ———

/** A credential of `any` holding `scopes`, its subject, client and claims from the valuation. */
function holder(val: Valuation, scopes: ReadonlySet<string>, cap: Cap): Principal {
  const claims: Record<string, string> = {};
  for (const [name, v] of val) if (name.startsWith('principal.claims.') && v !== undefined) claims[name.slice('principal.claims.'.length)] = v;
  const client = val.get('principal.client_id');
  return { sub: val.get('principal.sub') ?? cap.fresh[0], scopes, kind: 'oauth', ...(client !== undefined && { clientId: client }), claims };
}

/** A credential of a named class; what the class leaves to the caller comes from the valuation. */
function concrete(c: Credential, val: Valuation, cap: Cap): Principal {
  const cls = c.cls;
  const pick = (a: string | typeof ANY | undefined, source: string): string | undefined => (a === ANY ? (val.has(source) ? val.get(source) : cap.fresh[0]) : a);
  const claims: Record<string, string> = { ...cls.claims };
  for (const n of cls.anyClaims) {
    const v = val.get(`principal.claims.${n}`);
    if (v !== undefined) claims[n] = v;
  }
  const clientId = pick(cls.clientId, 'principal.client_id');
  return { sub: pick(cls.sub, 'principal.sub') ?? cap.fresh[0], scopes: c.scopes, kind: cls.kind === 'static' ? 'static' : 'oauth', ...(clientId !== undefined && { clientId }), claims };
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

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length === b.length && a.every((x, i) => x === b[i])) return true; // the usual case: the same list
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
}

/** A guard in words: `notes.read notes.write`, `tenant:{{tenant}}.read, tenant bound to principal.claims.tenant`, `no scope`. */
export function describeGuard(g: Guard): string {
  const scopes = [...g.required, ...(g.patterns ?? []).map((p) => p.source)].sort();
  const bind = (g.bind ?? []).map(([a, s]) => `${a} bound to ${s}`).sort();
  return [scopes.length ? scopes.join(' ') : 'no scope', ...bind].join(', ');
}

function reason(id: string, sides: { old: Side; now: Side }, facts: string[]): string {
  const a = sides.old.policy.capabilities.get(id);
  const b = sides.now.policy.capabilities.get(id);
  const guard = !a ? `new; requires ${describeGuard(b!)}` : !b ? `removed; required ${describeGuard(a)}`
    : sameGuard(a, b) ? `requires ${describeGuard(b)}` : `requires ${describeGuard(a)} → ${describeGuard(b)}`;
  return [guard, ...facts].join('; ');
}

function classChange(key: string, sides: { old: Side; now: Side }): string[] {
  const a = sides.old.policy.callers.get(key);
  const b = sides.now.policy.callers.get(key);
  if (!a && b) return [`${b.label} is new (${describeClass(b)})`];
  if (a && !b) return [`${a.label} is gone`];
  const x = describeClass(a!).split('; ');
  const y = describeClass(b!).split('; ');
  const field = (list: string[], name: string) => list.find((f) => f.startsWith(name))?.replace(/^(scopes up to|scopes|claims) /, '') ?? '(none)';
  return ['scopes', 'claims'].flatMap((name) => {
    const [before, after] = [field(x, name), field(y, name)];
    return before === after ? [] : [`${b!.label}: ${name} ${before} → ${after}`];
  });
}

function routeState(p: AccessPolicy, r: string): string {
  return p.publicRoutes.has(r) ? 'public' : p.protectedRoutes.has(r) ? 'protected' : 'not served';
}

function protectedList(p: AccessPolicy, id: string): string {
  return routesOf(id).filter((r) => p.protectedRoutes.has(r)).join(' ') || 'none';
}

function unique<T>(list: readonly T[]): T[] {
  return [...new Set(list)];
}

