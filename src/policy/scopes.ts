// The one access decision. Guarantees: every access decision in fastsvc — the runtime's
// decision per call (decision.ts), a task's re-authorisation, list filtering, `svc explain`,
// GET /svc/explain and `svc diff`'s reach — goes through decide(), canSee() or
// decideCall() here, and a denial carries its own reason,
// so an explanation cannot drift from enforcement; a capability with no required scopes
// is open to any authenticated caller; the allowed path of a capability without
// tenant-bound scopes allocates nothing.
// Tenant-bound scopes: a required scope `tenant:{{tenant}}.read` is filled from the
// call's argument `tenant` (a scope segment: letters, digits, _ and -); `bind` ties an
// argument to the caller's credential (principal.sub, principal.client_id,
// principal.claims.NAME): a missing value is filled in, a different one refused.

import type { Principal } from '../core/types.js';
import { SEGMENT, type Guard, type ScopePattern } from '../core/guard.js';

export type DenyReason = 'missing_scope' | 'bound_argument';

export type Decision =
  | { ok: true }
  | { ok: false; required: readonly string[]; missing: string[]; reason?: DenyReason; detail?: string };
export type Denial = Extract<Decision, { ok: false }>;
/** A call's decision: allowed (with the arguments after binding, when a binding changed them) or denied. */
export type CallDecision = { ok: true; args?: Record<string, unknown> } | Denial;

const ALLOW: Decision = Object.freeze({ ok: true });

/** The fixed-scope decision: every scope in `required` must be held. */
export function decide(required: readonly string[], held: ReadonlySet<string>): Decision {
  for (let i = 0; i < required.length; i++) {
    if (!held.has(required[i]!)) {
      return { ok: false, required, missing: required.filter((s) => !held.has(s)), reason: 'missing_scope' };
    }
  }
  return ALLOW;
}

/** The value a binding source takes for this caller, or undefined. */
export function principalValue(p: Principal, from: string): string | undefined {
  if (from === 'principal.sub') return p.sub;
  if (from === 'principal.client_id') return p.clientId;
  if (from.startsWith('principal.claims.')) {
    const v = p.claims?.[from.slice('principal.claims.'.length)];
    return typeof v === 'string' ? v : undefined; // only a string claim can bind an argument
  }
  return undefined;
}

/** Fill a pattern from values; undefined when a value is missing or not one scope segment. */
export function render(pat: ScopePattern, value: (arg: string) => unknown): string | undefined {
  let out = '';
  for (let i = 0; i < pat.parts.length; i++) {
    if (i % 2 === 0) out += pat.parts[i];
    else {
      const v = value(pat.parts[i]!);
      if (typeof v !== 'string' || !SEGMENT.test(v)) return undefined;
      out += v;
    }
  }
  return out;
}

/**
 * Whether the capability is shown to this caller (lists): the fixed scopes are held and,
 * for each pattern, the caller holds it for at least one value — for the bound value when
 * every argument of the pattern is bound.
 */
export function canSee(g: Guard, p: Principal): Decision {
  const fixed = decide(g.required, p.scopes);
  if (!g.patterns || !fixed.ok) return fixed;
  const missing: string[] = [];
  for (const pat of g.patterns) {
    const bound = pat.args.every((a) => g.bind?.some(([arg]) => arg === a));
    if (bound) {
      const scope = render(pat, (a) => principalValue(p, g.bind!.find(([arg]) => arg === a)![1]));
      if (scope === undefined) {
        const from = g.bind!.filter(([arg]) => pat.args.includes(arg)).map(([, f]) => f);
        return { ok: false, required: [pat.source], missing: [pat.source], reason: 'bound_argument', detail: `the credential carries no ${from.join(', ')}` };
      }
      if (!p.scopes.has(scope)) missing.push(scope);
    } else if (![...p.scopes].some((s) => pat.regex.test(s))) {
      missing.push(pat.source);
    }
  }
  return missing.length ? { ok: false, required: [...g.required, ...g.patterns.map((x) => x.source)], missing, reason: 'missing_scope' } : ALLOW;
}

/**
 * The decision for one call with these arguments: bound arguments are filled from the
 * credential (a different given value is refused), then every fixed scope and every
 * pattern filled from the arguments must be held. A pattern whose argument is missing or
 * not a scope segment cannot be held, so the call is refused naming the pattern.
 */
export function decideCall(g: Guard, p: Principal, args: unknown): CallDecision {
  const fixed = decide(g.required, p.scopes);
  if (!fixed.ok || (!g.patterns && !g.bind)) return fixed;
  const given = args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  let out = given;
  for (const [arg, from] of g.bind ?? []) {
    const v = principalValue(p, from);
    if (v === undefined) {
      return { ok: false, required: [], missing: [], reason: 'bound_argument', detail: `argument ${arg} is bound to ${from}, which this credential does not carry` };
    }
    if (given[arg] !== undefined && given[arg] !== v) {
      return { ok: false, required: [], missing: [], reason: 'bound_argument', detail: `argument ${arg} is bound to ${from} (${v}); the request gave ${JSON.stringify(given[arg]).slice(0, 80)}` };
    }
    if (given[arg] === undefined) out = { ...out, [arg]: v };
  }
  const required = [...g.required];
  const missing: string[] = [];
  for (const pat of g.patterns ?? []) {
    const scope = render(pat, (a) => out[a]) ?? pat.source;
    required.push(scope);
    if (!p.scopes.has(scope)) missing.push(scope);
  }
  if (missing.length) return { ok: false, required, missing, reason: 'missing_scope' };
  return out === given ? ALLOW : { ok: true, args: out };
}

