// A capability's guard, compiled from its declared required_scopes and bind: what the
// catalog holds and the decision (policy/scopes.ts) reads. Guarantees: a required scope with
// {{placeholders}} becomes a pattern whose regex matches exactly the concrete scopes it can
// become (each placeholder one scope segment: letters, digits, _ and -, at most 64); the
// compiled guard and its parts are frozen.

/** A required scope with {{placeholders}}, compiled. */
export interface ScopePattern {
  readonly source: string;
  /** Literal text and argument names, alternating: [lit, arg, lit, arg, lit]. */
  readonly parts: readonly string[];
  readonly args: readonly string[];
  /** Matches the concrete scopes this pattern can become. */
  readonly regex: RegExp;
}

/** What a capability asks of a caller. */
export interface Guard {
  /** Fixed scopes (no placeholder). */
  readonly required: readonly string[];
  readonly patterns?: readonly ScopePattern[];
  /** [argument, principal.sub | principal.client_id | principal.claims.NAME] */
  readonly bind?: readonly (readonly [string, string])[];
}

/** What a placeholder value must look like: one scope segment. */
export const SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

export const isPattern = (scope: string) => scope.includes('{{');

export function compilePattern(source: string): ScopePattern {
  const parts: string[] = [];
  const args: string[] = [];
  let re = '^';
  let last = 0;
  for (const m of source.matchAll(PLACEHOLDER)) {
    const lit = source.slice(last, m.index);
    parts.push(lit, m[1]!);
    args.push(m[1]!);
    re += escapeRe(lit) + '[A-Za-z0-9_-]{1,64}';
    last = m.index! + m[0].length;
  }
  parts.push(source.slice(last));
  re += escapeRe(source.slice(last)) + '$';
  return Object.freeze({ source, parts: Object.freeze(parts), args: Object.freeze(args), regex: new RegExp(re) });
}

/** The guard of a capability's declared required_scopes and bind. */
export function compileGuard(requiredScopes: readonly string[] = [], bind?: Readonly<Record<string, string>>): Guard {
  const patterns = requiredScopes.filter(isPattern).map(compilePattern);
  const b = Object.entries(bind ?? {}).map(([arg, from]) => Object.freeze([arg, from] as const));
  return {
    required: Object.freeze(requiredScopes.filter((s) => !isPattern(s))),
    ...(patterns.length && { patterns: Object.freeze(patterns) }),
    ...(b.length && { bind: Object.freeze(b) }),
  };
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
