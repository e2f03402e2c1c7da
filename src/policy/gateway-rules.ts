// What `svc explain` and `svc diff` can say of upstreams offline. Guarantees: pure, manifest only
// (the imported names are known only at run time); one rule per upstream — its expose filters
// and the scopes every capability it imports needs — plus one per override that sets scopes, a
// credential or `asks` (what the tool asks its caller: not offered on /svc), each with whether the given scopes hold them all (the admission list's access step) and the kind of credential its
// calls send (the override's, else expose.auth's, else the connection's `auth`: as the runtime
// picks it) — a kind only, never a field of the credential; diffUpstreams() names the upstreams added, removed or whose
// expose changed, and says whether a change needs fewer scopes anywhere (a widening).

import type { SvcManifest, Upstream } from '../core/manifest-types.gen.js';
import { credentialKind, type CredentialKind } from '../core/credential-kind.js';
import { compileGuard } from '../core/guard.js';
import type { Principal } from '../core/types.js';
import { admitAccess } from './admission.js';

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
  /** An override's `asks`: what the tool asks its caller (not offered on /svc). */
  asks?: string[];
}

export function upstreamRules(m: SvcManifest, scopes: ReadonlySet<string>): UpstreamRule[] {
  const who: Principal = { sub: 'explain', kind: 'static', scopes };
  return (m.upstreams ?? []).flatMap((u) => {
    const e = u.expose ?? {};
    const filter = { prefix: e.prefix ?? '', ...(e.include && { include: [...e.include] }), exclude: [...(e.exclude ?? [])] };
    const rule = (capability: string, required: readonly string[], credential: CredentialKind | undefined, asks?: readonly string[]): UpstreamRule => ({
      upstream: u.name, capability, filter, required: [...required], allowed: admitAccess(compileGuard(required), who).ok, ...(credential && { credential }), ...(asks && { asks: [...asks] }),
    });
    const own = credentialKind(u.auth);
    const every = { ...rule('*', e.required_scopes ?? [], credentialKind(e.auth ?? u.auth)), ...(own && { connection_credential: own }) };
    return [every, ...Object.entries(e.overrides ?? {}).filter(([, o]) => o.required_scopes || o.auth || o.asks)
      .map(([name, o]) => rule(name, o.required_scopes ?? e.required_scopes ?? [], credentialKind(o.auth ?? e.auth ?? u.auth), o.asks))];
  });
}

export function formatUpstreamRules(rules: readonly UpstreamRule[]): string[] {
  return rules.map((r) => {
    const sends = r.credential ? `; credential to the upstream: ${r.credential}` : '';
    const own = r.connection_credential && r.connection_credential !== r.credential ? ` (the connection's own requests: ${r.connection_credential})` : '';
    const asks = r.asks ? `; asks its caller for ${r.asks.join(', ')}: not offered on /svc` : '';
    return `upstream ${r.upstream} ${r.capability === '*' ? `every import (prefix ${JSON.stringify(r.filter.prefix)}${r.filter.include ? `, include ${r.filter.include.join(' ')}` : ''}${r.filter.exclude.length ? `, exclude ${r.filter.exclude.join(' ')}` : ''})` : `tool ${r.capability}`}: ${r.allowed ? 'allowed' : 'refused'} — needs ${r.required.length ? r.required.join(' ') : 'no scope'} (names known at run time only)${sends}${own}${asks}`;
  });
}

export function diffUpstreams(a: SvcManifest, b: SvcManifest): { added: string[]; removed: string[]; changed: string[]; widened: boolean } {
  const byName = (m: SvcManifest) => new Map((m.upstreams ?? []).map((u) => [u.name, u]));
  const x = byName(a);
  const y = byName(b);
  const text = (u: Upstream) => JSON.stringify(u.expose ?? {});
  const changed = [...y.keys()].filter((k) => x.has(k) && text(x.get(k)!) !== text(y.get(k)!)).sort();
  const fewer = (k: string) => {
    const before = x.get(k)!.expose ?? {};
    const after = y.get(k)!.expose ?? {};
    const less = (s: readonly string[] = [], t: readonly string[] = []) => s.some((scope) => !t.includes(scope));
    return less(before.required_scopes, after.required_scopes) || Object.entries(before.overrides ?? {}).some(([n, o]) => less(o.required_scopes, after.overrides?.[n]?.required_scopes ?? after.required_scopes))
      || JSON.stringify(before.include) !== JSON.stringify(after.include) || JSON.stringify(before.exclude) !== JSON.stringify(after.exclude) || before.prefix !== after.prefix;
  };
  const added = [...y.keys()].filter((k) => !x.has(k)).sort();
  return { added, removed: [...x.keys()].filter((k) => !y.has(k)).sort(), changed, widened: added.length > 0 || changed.some(fewer) };
}
