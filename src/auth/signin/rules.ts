// Who may sign in through another identity provider, and as what: oauth.login.upstreams[].rules
// applied to the claims the provider vouched for (a verified ID token, or its userinfo answer).
// Guarantees: pure (no I/O, no clock); rules are tried in order and the first whose every
// condition holds decides, and when none does the answer is a refusal (default deny); an
// email address counts — for when.email_domain and for subject: email — only when the provider
// says it is verified (email_verified true), unless the provider's require_verified_email is
// off; domains compare without case and exactly (a subdomain is another domain); a rule that
// matches but yields no subject refuses rather than falling through; the scopes are the rule's,
// within profile.scopes; mapped claims keep only string values (a number as its decimal form),
// at most MAX_VALUE characters each, so a provider cannot hand a caller an object or a huge value.

import type { ResolvedSignInProvider, ResolvedSignInRule } from '../../core/config.js';

/** The longest subject or claim value kept from a provider. */
export const MAX_VALUE = 256;

/** The claims a provider vouched for (ID token, merged with userinfo when read). */
export type ProviderClaims = Readonly<Record<string, unknown>>;

export interface Admitted {
  ok: true;
  /** 1-based, as the messages and the audit log name it. */
  rule: number;
  subject: string;
  /** The most this person may grant a client. */
  scopes: string[];
  claims: Record<string, string>;
}

export interface Refused {
  ok: false;
  /** upstream_not_allowed: no rule matched; upstream_no_subject: the matching rule's subject claim is absent or unusable. */
  reason: 'upstream_not_allowed' | 'upstream_no_subject';
  rule?: number;
  /** In words, for the log (never shown to the person beyond the refusal itself). */
  detail: string;
}

const scalar = (v: unknown): string | undefined => {
  const s = typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'boolean' ? String(v) : undefined;
  return s !== undefined && s.length > 0 && s.length <= MAX_VALUE ? s : undefined;
};

const list = (v: string | string[] | undefined): string[] | undefined => (v === undefined ? undefined : [v].flat());

/** The person's email address when it may be relied on. */
export function verifiedEmail(up: Pick<ResolvedSignInProvider, 'require_verified_email'>, claims: ProviderClaims): string | undefined {
  const email = typeof claims.email === 'string' && claims.email.includes('@') ? claims.email : undefined;
  if (!email) return undefined;
  const verified = claims.email_verified === true || claims.email_verified === 'true';
  return verified || !up.require_verified_email ? email : undefined;
}

/** The value a claim has for matching and mapping: strings, numbers and booleans as strings; a list as its scalar elements. */
function values(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(scalar).filter((x): x is string => x !== undefined);
  const s = scalar(v);
  return s === undefined ? [] : [s];
}

function holds(up: ResolvedSignInProvider, rule: ResolvedSignInRule, claims: ProviderClaims): boolean {
  const w = rule.when;
  const domains = list(w.email_domain);
  if (domains) {
    const email = verifiedEmail(up, claims);
    const domain = email?.slice(email.lastIndexOf('@') + 1).toLowerCase();
    if (!domain || !domains.some((d) => d.toLowerCase() === domain)) return false;
  }
  const groups = list(w.group);
  if (groups) {
    const member = new Set(values(claims[up.groups_claim]));
    if (!groups.some((g) => member.has(g))) return false;
  }
  for (const [name, want] of Object.entries(w.claim ?? {})) {
    const has = new Set(values(claims[name]));
    if (!list(want)!.some((x) => has.has(x))) return false;
  }
  return true;
}

/** The subject a rule names, from the claims. */
function subjectOf(up: ResolvedSignInProvider, rule: ResolvedSignInRule, claims: ProviderClaims): string | undefined {
  if (rule.subject === 'email') return verifiedEmail(up, claims);
  const v = claims[rule.subject];
  return typeof v === 'string' || typeof v === 'number' ? scalar(v) : undefined;
}

/** Apply an upstream's rules to the claims of the person it signed in. */
export function admit(up: ResolvedSignInProvider, claims: ProviderClaims, profileScopes: readonly string[]): Admitted | Refused {
  const profile = new Set(profileScopes);
  for (let i = 0; i < up.rules.length; i++) {
    const rule = up.rules[i]!;
    if (!holds(up, rule, claims)) continue;
    const subject = subjectOf(up, rule, claims);
    if (subject === undefined) {
      return { ok: false, reason: 'upstream_no_subject', rule: i + 1, detail: `rule ${i + 1} matched but the ${rule.subject} claim is absent, unverified or unusable as a subject` };
    }
    const mapped: Record<string, string> = {};
    for (const [name, claim] of Object.entries(rule.claims)) {
      const v = claim === 'email' ? verifiedEmail(up, claims) : typeof claims[claim] === 'string' || typeof claims[claim] === 'number' ? scalar(claims[claim]) : undefined;
      if (v !== undefined) mapped[name] = v;
    }
    return { ok: true, rule: i + 1, subject, scopes: rule.scopes.filter((s) => profile.has(s)), claims: mapped };
  }
  return { ok: false, reason: 'upstream_not_allowed', detail: `none of the ${up.rules.length} rule(s) matched` };
}
