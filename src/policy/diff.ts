// What a reload changes, computed from two immutable snapshots (no I/O). Guarantees:
// capability changes are by name (tools, prompts) or URI / URI template (resources),
// and "changed" means any part of the declaration changed (scopes, schema, backend);
// who gains or loses access is reach.ts's (the reloader and `svc diff` both call it);
// restartRequired() lists every changed config field that the
// running server cannot apply live, so nothing in an edit is silently ignored.

import { isDeepStrictEqual } from 'node:util';
import type { Catalog, PromptEntry, ResourceEntry, ToolEntry } from '../core/catalog.js';
import type { ResolvedConfig } from '../core/config.js';
import type { SvcManifest } from '../core/manifest-types.gen.js';

export interface NameDiff { added: string[]; removed: string[]; changed: string[] }
export interface CapabilityChanges { tools: NameDiff; resources: NameDiff; prompts: NameDiff }

export function diffCapabilities(a: SvcManifest, b: SvcManifest): CapabilityChanges {
  const byName = <T>(list: readonly T[] | undefined, key: (t: T) => string) => new Map((list ?? []).map((t) => [key(t), t as unknown]));
  const resKey = (r: { uri?: string; uri_template?: string }) => r.uri ?? r.uri_template ?? '';
  return {
    tools: diffItems(byName(a.tools, (t) => t.name), byName(b.tools, (t) => t.name)),
    resources: diffItems(byName(a.resources, resKey), byName(b.resources, resKey)),
    prompts: diffItems(byName(a.prompts, (p) => p.name), byName(b.prompts, (p) => p.name)),
  };
}

/**
 * Items by key compared by value, key order ignored. isDeepStrictEqual stops at the first difference and builds no
 * text: with 10,000 tools all edited (a reload of the large-manifest bench), serialising each twice cost ~0.7 s.
 */
function diffItems(a: ReadonlyMap<string, unknown>, b: ReadonlyMap<string, unknown>): NameDiff {
  const added = [...b.keys()].filter((k) => !a.has(k)).sort();
  const removed = [...a.keys()].filter((k) => !b.has(k)).sort();
  const changed = [...b.keys()].filter((k) => a.has(k) && !isDeepStrictEqual(a.get(k), b.get(k))).sort();
  return { added, removed, changed };
}

export function isEmptyChange(c: CapabilityChanges): boolean {
  return [c.tools, c.resources, c.prompts].every((d) => !d.added.length && !d.removed.length && !d.changed.length);
}

/** Every capability of a catalog by id (`tool:NAME`, `resource:URI`, `prompt:NAME`), sorted. */
export function entries(c: Catalog): [string, ToolEntry | ResourceEntry | PromptEntry][] {
  const out: [string, ToolEntry | ResourceEntry | PromptEntry][] = [];
  for (const [name, t] of c.tools) out.push([`tool:${name}`, t]);
  for (const [uri, r] of c.resources) out.push([`resource:${uri}`, r]);
  for (const r of c.templates) out.push([`resource:${r.def.uri_template}`, r]);
  for (const [name, p] of c.prompts) out.push([`prompt:${name}`, p]);
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Config fields that differ between the configuration the process started with and
 * the edited one, and that only a restart applies: auth mode on/off, base_url, state,
 * every server.* and routes.* field, every oauth.* field, external_issuers (anything
 * but an issuer's `limits`: its discovery, keys and caches are set up at start-up),
 * every profile.* field while the OAuth server or an external issuer runs (the
 * protected-resource metadata and the scopes tokens get are fixed at start-up), and
 * every upstreams[] field but `expose` and `pin` (the upstream's own `auth` included) of an upstream the
 * process started with, and an upstream it did not start with (added).
 * Live (never listed): the auth section's tokens and scopes while the mode stays, upstreams' expose
 * (the calls' credentials, expose.auth and the overrides' auth, included) and pin, an upstream removed
 * (its connection ends; put back as it was, it connects again) and the upstreams' order,
 * external issuers' limits, and profile without OAuth or external issuers.
 */
export function restartRequired(running: ResolvedConfig, next: ResolvedConfig): string[] {
  const out: string[] = [];
  if (!!running.auth !== !!next.auth) out.push('auth');
  if (stable(running.base_url) !== stable(next.base_url)) out.push('base_url');
  if (stable(running.audit) !== stable(next.audit)) out.push('audit');
  if (stable(running.state) !== stable(next.state)) out.push('state');
  const connections = (c: ResolvedConfig) => c.external_issuers.map(({ limits: _, ...e }) => e);
  if (stable(connections(running)) !== stable(connections(next))) out.push('external_issuers');
  // An upstream's connection is the start-up one, its own `auth` included (the upstream's session was opened
  // with it); its expose rules — expose.auth and the overrides' auth among them, per call like an http tool's
  // auth — and pin apply live, and so does removing it (its connection ends) or putting it back as it was.
  const links = (c: ResolvedConfig) => new Map((c.upstreams ?? []).map(({ expose: _e, pin: _p, ...u }) => [u.name, stable(u)]));
  const startLinks = links(running);
  if ([...links(next)].some(([name, link]) => startLinks.get(name) !== link)) out.push('upstreams');
  const tokensFixed = (running.oauth?.enabled && next.oauth?.enabled) || (running.external_issuers.length > 0 && next.external_issuers.length > 0);
  const sections = tokensFixed ? ['server', 'routes', 'oauth', 'profile'] as const : ['server', 'routes', 'oauth'] as const;
  for (const section of sections) {
    const x = running[section] as Record<string, unknown> | undefined;
    const y = next[section] as Record<string, unknown> | undefined;
    if (!x || !y) {
      if (!!x !== !!y) out.push(section);
      continue;
    }
    for (const key of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) {
      if (stable(x[key]) !== stable(y[key])) out.push(`${section}.${key}`);
    }
  }
  return out;
}

/** JSON with object keys sorted, so key order in the YAML never counts as a change. */
export function stable(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) => (val && typeof val === 'object' && !Array.isArray(val)
    ? Object.fromEntries(Object.entries(val as Record<string, unknown>).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0)))
    : val)) ?? 'undefined';
}
