// The finite search behind reach.ts: for one capability, the values its arguments and the
// credential values its bind reads can take, and the enumeration over them. Guarantees: the
// values stand for every string exactly — an argument's candidates are every value it takes
// when a pattern of either guard renders a declared scope (all splits, each value one scope
// segment), then the named callers' own values, and two values equal to none of these; the
// decision only renders patterns, tests scope membership and compares a bound argument with
// one credential value, so any call with other strings behaves as one with these (two fresh
// values, so that "equal" and "different" are both there); a credential value read by a bind
// takes its arguments' candidates, the two fresh values and, for claims and a client_id, none;
// search() stops at the first witness and, past MAX_COMBINATIONS, answers conservatively
// (exact: false) without enumerating.

import type { Principal } from '../core/types.js';
import { ANY, type CallerClass } from './callers.js';
import { SEGMENT, type Guard, type ScopePattern } from '../core/guard.js';
import { decideCall } from './scopes.js';

/** Beyond this many combinations of arguments and credential values per capability and caller, judge conservatively. */
export const MAX_COMBINATIONS = 100_000;

/** A credential of a named class: it may hold any subset of `scopes`; `persisted`: issued under the old manifest. */
export interface Credential {
  scopes: ReadonlySet<string>;
  cls: CallerClass;
  persisted?: boolean;
}

export const credentials = (c: CallerClass | undefined): Credential[] => (c ? [{ scopes: new Set(c.scopes), cls: c }] : []);

export type Value = string | undefined;
export interface Variable {
  /** `arg:NAME` or a bind source (principal.sub, principal.client_id, principal.claims.NAME). */
  name: string;
  values: readonly Value[];
}
export type Valuation = ReadonlyMap<string, Value>;

/** One capability's two guards, and what both sides admit on its routes. */
export interface Cap {
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

export type Args = Record<string, unknown>;

export interface Found {
  val: Valuation;
  /** The call that runs (bound arguments filled in). */
  call: Args;
  scopes?: string[];
  exact: boolean;
}

/** This guard allows this call with these arguments as they are (no bound argument left to fill in). */
export function asIs(g: Guard, p: Principal, call: Args): boolean {
  const d = decideCall(g, p, call);
  return d.ok && !d.args;
}

/**
 * The first valuation of the variables (arguments `arg:NAME` as given, bind sources) for which `gain`
 * finds a call (and the scopes a witness holds), or undefined; over MAX_COMBINATIONS, a conservative answer (exact: false).
 */
export function search(vars: readonly Variable[], gain: (val: Valuation, given: Record<string, string>) => false | { call: Args; scopes?: string[] }): Found | undefined {
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

// ——— the capability's variables and their values ———

export function capability(id: string, from: Guard | undefined, to: Guard, universe: ReadonlySet<string>, named: ReadonlySet<string>): Cap {
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
export function argVariable(cap: Cap, arg: string, constants: readonly string[]): Variable {
  return { name: `arg:${arg}`, values: unique([...(cap.candidates.get(arg) ?? []), ...constants, 'anonymous', ...cap.fresh, undefined]) };
}

/** A bind source's values: what the arguments bound to it take in the patterns, two other values, and (claims, client_id) none. */
export function sourceVariable(cap: Cap, source: string, mayBeAbsent: boolean): Variable {
  const cands = (cap.sources.get(source) ?? []).flatMap((a) => [...(cap.candidates.get(a) ?? [])]);
  const absent = mayBeAbsent && source !== 'principal.sub';
  return { name: source, values: unique([...cands, ...cap.fresh, ...(absent ? [undefined] : [])]) };
}

/** The bind sources a named class leaves to the caller (an ID-JAG subject and claims, a self-registered client's id). */
export function freeSources(cap: Cap, creds: readonly Credential[]): Variable[] {
  const out: Variable[] = [];
  for (const source of cap.sources.keys()) {
    const free = creds.some(({ cls }) => (source === 'principal.sub' ? cls.sub === ANY
      : source === 'principal.client_id' ? cls.clientId === ANY
        : source.startsWith('principal.claims.') && cls.anyClaims.includes(source.slice('principal.claims.'.length))));
    if (free) out.push(sourceVariable(cap, source, source !== 'principal.client_id'));
  }
  return out;
}

export function constantsOf(creds: readonly Credential[]): string[] {
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
export function holder(val: Valuation, scopes: ReadonlySet<string>, cap: Cap): Principal {
  const claims: Record<string, string> = {};
  for (const [name, v] of val) if (name.startsWith('principal.claims.') && v !== undefined) claims[name.slice('principal.claims.'.length)] = v;
  const client = val.get('principal.client_id');
  return { sub: val.get('principal.sub') ?? cap.fresh[0], scopes, kind: 'oauth', ...(client !== undefined && { clientId: client }), claims };
}

/** A credential of a named class; what the class leaves to the caller comes from the valuation. */
export function concrete(c: Credential, val: Valuation, cap: Cap): Principal {
  const cls = c.cls;
  const pick = (a: string | typeof ANY | undefined, source: string): string | undefined => (a === ANY ? (val.has(source) ? val.get(source) : cap.fresh[0]) : a);
  const claims: Record<string, string> = { ...cls.claims };
  for (const n of cls.anyClaims) {
    const v = val.get(`principal.claims.${n}`);
    if (v !== undefined) claims[n] = v;
  }
  const clientId = pick(cls.clientId, 'principal.client_id');
  const kind = cls.kind === 'static' || cls.kind === 'external' ? cls.kind : 'oauth';
  return { sub: pick(cls.sub, 'principal.sub') ?? cap.fresh[0], scopes: c.scopes, kind, ...(cls.issuer && { issuer: cls.issuer }), ...(clientId !== undefined && { clientId }), claims };
}

export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length === b.length && a.every((x, i) => x === b[i])) return true; // the usual case: the same list
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
}

function unique<T>(list: readonly T[]): T[] {
  return [...new Set(list)];
}

