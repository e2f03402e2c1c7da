// What `svc explain` and `svc diff` can say of upstreams offline. Guarantees: pure, manifest only
// (the imported names are known only at run time); one rule per upstream — its expose filters
// and the scopes every capability it imports needs — plus one per override that sets scopes or a
// credential, each with whether the given scopes hold them all (the admission list's access step) and the kind of credential its
// calls send (the override's, else expose.auth's, else the connection's `auth`: as the runtime
// picks it) — a kind only, never a field of the credential; diffUpstreams() names the upstreams added, removed or whose
// expose changed, and each widening in diff's own terms: an upstream added, names its include or exclude lets through
// that it did not, a prefix changed (new names), fewer scopes required (for every import or one tool).

import type { SvcManifest, Upstream } from '../core/manifest-types.gen.js';
import { credentialKind, type CredentialKind } from '../core/credential-kind.js';
import { compileGuard } from '../core/guard.js';
import type { Principal } from '../core/types.js';
import { admitAccess } from './admission.js';
import type { ReachChange } from './reach.js';

export interface UpstreamRule {
  upstream: string;
  /** `*` for every capability it imports, else the upstream's tool name. */
  capability: string;
  filter: { prefix: string; include?: string[]; exclude: string[] };
  required: string[];
  allowed: boolean;
  /** The kind of credential its calls send the upstream; absent: none (only `headers`, if any). */
  credential?: CredentialKind;
  /** Every import's rule: the kind the connection's own requests (initialize, lists, pings) send. */
  connection_credential?: CredentialKind;
}

export function upstreamRules(m: SvcManifest, scopes: ReadonlySet<string>): UpstreamRule[] {
  const who: Principal = { sub: 'explain', kind: 'static', scopes };
  return (m.upstreams ?? []).flatMap((u) => {
    const e = u.expose ?? {};
    const filter = { prefix: e.prefix ?? '', ...(e.include && { include: [...e.include] }), exclude: [...(e.exclude ?? [])] };
    const rule = (capability: string, required: readonly string[], credential: CredentialKind | undefined): UpstreamRule => ({
      upstream: u.name, capability, filter, required: [...required], allowed: admitAccess(compileGuard(required), who).ok, ...(credential && { credential }),
    });
    const own = credentialKind(u.auth);
    const every = { ...rule('*', e.required_scopes ?? [], credentialKind(e.auth ?? u.auth)), ...(own && { connection_credential: own }) };
    return [every, ...Object.entries(e.overrides ?? {}).filter(([, o]) => o.required_scopes || o.auth)
      .map(([name, o]) => rule(name, o.required_scopes ?? e.required_scopes ?? [], credentialKind(o.auth ?? e.auth ?? u.auth)))];
  });
}

export function formatUpstreamRules(rules: readonly UpstreamRule[]): string[] {
  return rules.map((r) => {
    const sends = r.credential ? `; credential to the upstream: ${r.credential}` : '';
    const own = r.connection_credential && r.connection_credential !== r.credential ? ` (the connection's own requests: ${r.connection_credential})` : '';
    return `upstream ${r.upstream} ${r.capability === '*' ? `every import (prefix ${JSON.stringify(r.filter.prefix)}${r.filter.include ? `, include ${r.filter.include.join(' ')}` : ''}${r.filter.exclude.length ? `, exclude ${r.filter.exclude.join(' ')}` : ''})` : `tool ${r.capability}`}: ${r.allowed ? 'allowed' : 'refused'} — needs ${r.required.length ? r.required.join(' ') : 'no scope'} (names known at run time only)${sends}${own}`;
  });
}

/** What an edit of the upstreams changes: names added, removed or whose expose changed, and each way it lets more through (as diff's reach reports it). */
export interface UpstreamsDiff {
  added: string[];
  removed: string[];
  changed: string[];
  widened: boolean;
  widenings: ReachChange[];
}

export function diffUpstreams(a: SvcManifest, b: SvcManifest): UpstreamsDiff {
  const byName = (m: SvcManifest) => new Map((m.upstreams ?? []).map((u) => [u.name, u]));
  const x = byName(a);
  const y = byName(b);
  const text = (u: Upstream) => JSON.stringify(u.expose ?? {});
  const changed = [...y.keys()].filter((k) => x.has(k) && text(x.get(k)!) !== text(y.get(k)!)).sort();
  const added = [...y.keys()].filter((k) => !x.has(k)).sort();
  const widenings = [
    ...added.map((k) => widening(k, y.get(k)!.expose?.required_scopes ?? [], 'every capability it imports', 'upstream added')),
    ...changed.flatMap((k) => exposeWidenings(k, x.get(k)!.expose ?? {}, y.get(k)!.expose ?? {})),
  ];
  return { added, removed: [...x.keys()].filter((k) => !y.has(k)).sort(), changed, widened: widenings.length > 0, widenings };
}

type Expose = NonNullable<Upstream['expose']>;

/** Each way an upstream's new expose lets a caller reach more than its old one did. */
function exposeWidenings(name: string, before: Expose, after: Expose): ReachChange[] {
  const out: ReachChange[] = [];
  const scopes = after.required_scopes ?? [];
  const list = (v: readonly string[] | undefined) => (v === undefined ? 'everything' : v.length ? v.join(' ') : 'nothing');
  const gained = (s: readonly string[] | undefined, t: readonly string[] | undefined) => (t ?? []).filter((n) => !(s ?? []).includes(n));
  if (before.include !== undefined && (after.include === undefined || gained(before.include, after.include).length)) {
    const more = after.include === undefined ? 'every name' : gained(before.include, after.include).join(' ');
    out.push(widening(name, scopes, more, `expose.include ${list(before.include)} → ${list(after.include)}`));
  }
  const unexcluded = gained(after.exclude, before.exclude);
  if (unexcluded.length) out.push(widening(name, scopes, unexcluded.join(' '), `expose.exclude ${list(before.exclude ?? [])} → ${list(after.exclude ?? [])}`));
  if ((before.prefix ?? '') !== (after.prefix ?? '')) {
    out.push(widening(name, scopes, 'every imported tool and prompt, under new names', `expose.prefix ${JSON.stringify(before.prefix ?? '')} → ${JSON.stringify(after.prefix ?? '')}`));
  }
  const fewer = (s: readonly string[] = [], t: readonly string[] = []) => s.some((scope) => !t.includes(scope));
  if (fewer(before.required_scopes, after.required_scopes)) {
    out.push(widening(name, scopes, 'every capability it imports', `requires ${list(before.required_scopes ?? [])} → ${list(scopes)}`));
  }
  for (const [tool, o] of Object.entries(before.overrides ?? {})) {
    const now = after.overrides?.[tool]?.required_scopes ?? scopes;
    if (fewer(o.required_scopes ?? before.required_scopes, now)) out.push(widening(name, now, tool, `tool ${tool} requires ${list(o.required_scopes ?? before.required_scopes ?? [])} → ${list(now)}`));
  }
  return out;
}

function widening(upstream: string, scopes: readonly string[], what: string, why: string): ReachChange {
  return {
    capability: `upstream:${upstream}`, key: 'any', caller: scopes.length ? `any caller holding ${scopes.join(' ')}` : 'any authenticated caller',
    example: { scopes: [...scopes] }, why: `${why}: ${what} (names known at run time only)`, exact: true,
  };
}
